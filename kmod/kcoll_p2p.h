/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Point-to-point's private interface between its request objects (kcoll_req.c) and its
 * protocol (kcoll_p2p.c).  Nothing else includes it.
 */
#ifndef _KCOLL_P2P_H
#define _KCOLL_P2P_H

#include "kcoll.h"

/* kcoll_req.c */
void kcoll_req_release(struct kref *ref);

/* kcoll_p2p.c */
struct kcoll_cts *kcoll_p2p_eager_find(struct kcoll_conn *conn, u32 seq);
bool kcoll_p2p_eager_claim(struct kcoll_conn *conn, struct kcoll_req *req);
void kcoll_p2p_progress(struct kcoll_conn *conn);
void kcoll_p2p_fail(struct kcoll_conn *conn, int err);

#endif /* _KCOLL_P2P_H */
