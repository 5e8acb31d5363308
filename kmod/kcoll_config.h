/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run-time configuration store (kcoll_config.c): one copy of every setting, which the
 * module parameters, netlink CONFIG_GET/CONFIG_SET and the code that uses a setting all
 * read and write.
 */
#ifndef _KCOLL_CONFIG_H
#define _KCOLL_CONFIG_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/kcoll.h>
#include <linux/kcoll_netlink.h>

struct netlink_ext_ack;

/* Defaults of the module parameters that are settings of the store. */
#define KCOLL_CONFIG_LISTEN_PORT	18600
#define KCOLL_CONFIG_CONNECT_TIMEOUT_MS	30000
#define KCOLL_CONFIG_OP_TIMEOUT_MS	10000
/* the range of both timeouts, for CONFIG_SET and the module parameters alike */
#define KCOLL_CONFIG_TIMEOUT_MIN_MS	100
#define KCOLL_CONFIG_TIMEOUT_MAX_MS	3600000

/* Defaults of the collective tunables (the same as core/kcoll_sched.h's). */
#define KCOLL_CONFIG_CHUNK_BYTES	(256U * 1024)
/*
 * small_bytes 0: AUTO picks from the table kcoll-sim derives (core/kcoll_sched_table.h);
 * an admin who sets it gets the threshold rules with medium_bytes and tree_ranks, core/'s
 * defaults (Documentation/scale.rst).
 */
#define KCOLL_CONFIG_SMALL_BYTES	0U
#define KCOLL_CONFIG_MEDIUM_BYTES	(8192U * 1024)
#define KCOLL_CONFIG_TREE_RANKS		384

/* transport: KCOLL_CONFIG_TRANSPORT_* (uAPI kcoll_netlink.h), below this */
#define KCOLL_CONFIG_TRANSPORT_COUNT	3

/**
 * struct kcoll_config - the module's run-time configuration (a snapshot of it)
 * @listen_port:	rdma_cm port for peer table entries with port 0
 * @connect_timeout_ms:	COMM_CREATE's wait when the caller gives no timeout
 * @op_timeout_ms:	a peer silent this long while operations wait on it fails the comm
 * @tos:		IP type of service of new connections, -1: device default
 * @chunk_bytes:	pipelining unit of collectives (power of two)
 * @small_bytes:	0: the derived table selects; else the rules: up to this size,
 *			latency algorithms
 * @medium_bytes:	rules: up to this size, medium algorithms (@small_bytes <= @medium_bytes)
 * @tree_ranks:		rules: from this many ranks on, trees for medium messages
 * @algo:		per enum kcoll_collective: forced enum kcoll_algorithm, 0 = auto
 * @transport:		KCOLL_CONFIG_TRANSPORT_AUTO, _RDMA or _TCP
 * @tcp_port:		port of the TCP transport's listeners (and of the peers it dials):
 *			a listener opened later binds the new value, an open one keeps its own
 *
 * The store (kcoll_cfg) is written only by kcoll_config.c, under its mutex, after
 * kcoll_config_check(); the module parameters listen_port, tcp_port, connect_timeout_ms,
 * op_timeout_ms, tos and transport are views of its fields, not values of their own.  A consistent
 * copy of several fields: kcoll_config_get(); one field: READ_ONCE(kcoll_cfg.field).
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
	u8 transport;
	u16 tcp_port;
};

extern struct kcoll_config kcoll_cfg;

/*
 * The names the connection, point-to-point and memory code read single settings by (with
 * READ_ONCE() or not): fields of the store, not variables of their own.
 */
#define kcoll_listen_port		(kcoll_cfg.listen_port)
#define kcoll_connect_timeout_ms	(kcoll_cfg.connect_timeout_ms)
#define kcoll_op_timeout_ms		(kcoll_cfg.op_timeout_ms)
#define kcoll_tos			(kcoll_cfg.tos)
#define kcoll_transport_cfg		(kcoll_cfg.transport)
#define kcoll_tcp_port_cfg		(kcoll_cfg.tcp_port)

extern const char *const kcoll_config_transport_names[KCOLL_CONFIG_TRANSPORT_COUNT];

void kcoll_config_get(struct kcoll_config *out);
int kcoll_config_check(const struct kcoll_config *c, struct netlink_ext_ack *extack);
int kcoll_config_set(const struct kcoll_config *c, struct netlink_ext_ack *extack);

#endif /* _KCOLL_CONFIG_H */
