/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the comm's lifetime (kcoll_comm.c) and its uAPI (kcoll_comm_ioctl.c); nothing
 * else includes this.
 */
#ifndef _KCOLL_COMM_H
#define _KCOLL_COMM_H

#include "kcoll.h"

struct kcoll_comm *kcoll_comm_alloc(const struct kcoll_comm_create *arg);
int kcoll_comm_publish(struct kcoll_comm *comm);
int kcoll_comm_connect_error(struct kcoll_comm *comm, u32 *failed_rank);
void kcoll_comm_abort(struct kcoll_comm *comm);
void kcoll_comm_shutdown(struct kcoll_comm *comm);
void kcoll_comm_destroy(struct kcoll_comm *comm);

#endif /* _KCOLL_COMM_H */
