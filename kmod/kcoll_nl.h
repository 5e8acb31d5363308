/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll control plane: the run-time configuration store, the generic netlink family "kcoll"
 * (Documentation/netlink/specs/kcoll.yaml) and its events.
 */
#ifndef _KCOLL_NL_H
#define _KCOLL_NL_H

#include <linux/types.h>
#include <linux/kcoll.h>

struct kcoll_comm;
struct kcoll_conn;
struct kcoll_dev;
struct netlink_ext_ack;

/* Defaults of the collective tunables (the same as core/kcoll_sched.h's). */
#define KCOLL_CONFIG_CHUNK_BYTES	(256U * 1024)
/* the selection thresholds: core/'s, derived from kcoll-sim (Documentation/scale.rst) */
#define KCOLL_CONFIG_SMALL_BYTES	(2048U * 1024)
#define KCOLL_CONFIG_MEDIUM_BYTES	(8192U * 1024)
#define KCOLL_CONFIG_TREE_RANKS		384

/**
 * struct kcoll_config - the module's run-time configuration (a snapshot of it)
 * @listen_port:	rdma_cm port for peer table entries with port 0
 * @connect_timeout_ms:	COMM_CREATE's wait when the caller gives no timeout
 * @op_timeout_ms:	a peer silent this long while operations wait on it fails the comm
 * @tos:		IP type of service of new connections, -1: device default
 * @chunk_bytes:	pipelining unit of collectives (power of two)
 * @small_bytes:	up to this size, latency algorithms
 * @medium_bytes:	up to this size, medium algorithms (@small_bytes <= @medium_bytes)
 * @tree_ranks:		from this many ranks on, trees for medium messages
 * @algo:		per enum kcoll_collective: forced enum kcoll_algorithm, 0 = auto
 *
 * The store is private to kcoll_config.c and guarded by its mutex; readers take a copy
 * with kcoll_config_get().  The first four fields live in the module parameters of the same
 * name (so /sys/module/kcoll/parameters/ and CONFIG_SET act on the same values), which
 * their existing readers read with READ_ONCE().
 */
struct kcoll_config {
	u16 listen_port;
	u32 connect_timeout_ms;
	u32 op_timeout_ms;
	int tos;
	u32 chunk_bytes;
	u32 small_bytes;
	u32 medium_bytes;
	u32 tree_ranks;
	u8 algo[KCOLL_NUM_COLLECTIVES];
};

/* kcoll_config.c */
void kcoll_config_get(struct kcoll_config *out);
int kcoll_config_check(const struct kcoll_config *c, struct netlink_ext_ack *extack);
int kcoll_config_set(const struct kcoll_config *c, struct netlink_ext_ack *extack);
int kcoll_config_init(void);
void kcoll_config_exit(void);

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
void kcoll_nl_event_peer_lost(struct kcoll_comm *comm, u32 peer, int err);
void kcoll_nl_event_dev(struct kcoll_dev *dev, bool added);
void kcoll_nl_event_engine(const char *name, u32 priority);

/* kcoll_trace.c: the kcoll:* tracepoints' users outside kcoll_trace.h */
void kcoll_conn_set_state(struct kcoll_conn *conn, int state);
void kcoll_trace_comm_state(struct kcoll_comm *comm, int old_state, int new_state, int err);

#endif /* _KCOLL_NL_H */
