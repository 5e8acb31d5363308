/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll control plane: the generic netlink family "kcoll"
 * (Documentation/netlink/specs/kcoll.yaml) and its events.  The configuration store it
 * serves is kcoll_config.h's.
 */
#ifndef _KCOLL_NL_H
#define _KCOLL_NL_H

#include <linux/types.h>
#include <linux/kcoll.h>

#include "kcoll_config.h"

struct kcoll_comm;
struct kcoll_conn;
struct kcoll_dev;

/* Kinds of communicator events (the *-ntf commands of the family). */
enum kcoll_nl_comm_event {
	KCOLL_NL_COMM_CREATED,
	KCOLL_NL_COMM_DESTROYED,
	KCOLL_NL_COMM_FAILED,
};

/* kcoll_nl.c */
int kcoll_nl_init(void);
void kcoll_nl_exit(void);
void kcoll_nl_event_comm(struct kcoll_comm *comm, enum kcoll_nl_comm_event ev);
void kcoll_nl_event_comm_locked(struct kcoll_comm *comm, enum kcoll_nl_comm_event ev);
void kcoll_nl_event_peer_lost(struct kcoll_comm *comm, u32 peer, int err);
void kcoll_nl_event_dev(struct kcoll_dev *dev, bool added);
void kcoll_nl_event_engine(const char *name, u32 priority);

#endif /* _KCOLL_NL_H */
