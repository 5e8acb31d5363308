// SPDX-License-Identifier: GPL-2.0
/*
 * The run-time configuration store (struct kcoll_config, kcoll_config.h): the one copy of
 * every setting.  It is read by kcoll_config_get() (or one field with READ_ONCE()) and
 * changed in two ways, both under the same checks (kcoll_config_check()): the netlink
 * CONFIG_SET command (kcoll_config_set()), and a write of one of the module parameters
 * listen_port, tcp_port, connect_timeout_ms, op_timeout_ms, tos and transport, which are
 * views of the store's fields (kernel_param_ops below) rather than variables of their own.
 * The collective tunables have no module parameter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/netlink.h>

#include "kcoll.h"
#include "kcoll_nl.h"
#include "../include/kcoll_names.h"

/*
 * Guards the writes of kcoll_cfg (readers of one field use READ_ONCE()).  Statically
 * initialised, as is the store: parameters given at load are set before the module's init runs.
 */
static DEFINE_MUTEX(kcoll_config_mutex);
struct kcoll_config kcoll_cfg __read_mostly = {
	.listen_port		= KCOLL_CONFIG_LISTEN_PORT,
	.connect_timeout_ms	= KCOLL_CONFIG_CONNECT_TIMEOUT_MS,
	.op_timeout_ms		= KCOLL_CONFIG_OP_TIMEOUT_MS,
	.tos			= -1,
	.chunk_bytes		= KCOLL_CONFIG_CHUNK_BYTES,
	.small_bytes		= KCOLL_CONFIG_SMALL_BYTES,
	.medium_bytes		= KCOLL_CONFIG_MEDIUM_BYTES,
	.tree_ranks		= KCOLL_CONFIG_TREE_RANKS,
	.tcp_port		= KCOLL_WIRE_TCP_PORT,
};

/**
 * kcoll_config_get - a consistent snapshot of the configuration
 * @out: filled in
 *
 * Context: process context (takes a mutex).
 */
void kcoll_config_get(struct kcoll_config *out)
{
	mutex_lock(&kcoll_config_mutex);
	*out = kcoll_cfg;
	mutex_unlock(&kcoll_config_mutex);
}

/**
 * kcoll_config_check - check a whole configuration
 * @c:		the configuration
 * @extack:	where to say what is wrong, or NULL
 *
 * The rules of every value, whichever way it comes: netlink's validators refuse a value out
 * of its range first, with a message naming the attribute; this also checks the rules that
 * involve several values.  Return: 0 or -EINVAL.
 */
int kcoll_config_check(const struct kcoll_config *c, struct netlink_ext_ack *extack)
{
	unsigned int i;

	if (!c->listen_port) {
		NL_SET_ERR_MSG(extack, "listen-port must not be 0");
		return -EINVAL;
	}
	if (!c->tcp_port) {
		NL_SET_ERR_MSG(extack, "tcp-port must not be 0");
		return -EINVAL;
	}
	if (c->connect_timeout_ms < KCOLL_CONFIG_TIMEOUT_MIN_MS ||
	    c->connect_timeout_ms > KCOLL_CONFIG_TIMEOUT_MAX_MS) {
		NL_SET_ERR_MSG(extack, "connect-timeout-ms must be 100 to 3600000");
		return -EINVAL;
	}
	if (c->op_timeout_ms < KCOLL_CONFIG_TIMEOUT_MIN_MS ||
	    c->op_timeout_ms > KCOLL_CONFIG_TIMEOUT_MAX_MS) {
		NL_SET_ERR_MSG(extack, "op-timeout-ms must be 100 to 3600000");
		return -EINVAL;
	}
	if (c->tos < -1 || c->tos > 255) {
		NL_SET_ERR_MSG(extack, "tos must be -1 to 255");
		return -EINVAL;
	}
	if (!is_power_of_2(c->chunk_bytes)) {
		NL_SET_ERR_MSG(extack, "chunk-bytes must be a power of two");
		return -EINVAL;
	}
	if (c->small_bytes > c->medium_bytes) {
		NL_SET_ERR_MSG(extack, "small-bytes must not exceed medium-bytes");
		return -EINVAL;
	}
	if (c->tree_ranks < 2 || c->tree_ranks > KCOLL_MAX_RANKS) {
		NL_SET_ERR_MSG(extack, "tree-ranks must be 2 to 4096");
		return -EINVAL;
	}
	if (c->transport >= KCOLL_CONFIG_TRANSPORT_COUNT) {
		NL_SET_ERR_MSG(extack, "transport must be auto, rdma or tcp");
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(c->algo); i++) {
		if (c->algo[i] >= KCOLL_NUM_ALGORITHMS) {
			NL_SET_ERR_MSG(extack, "unknown algorithm");
			return -EINVAL;
		}
	}
	return 0;
}

/* Store @c if it passes the checks.  Return: whether the listen port changed, or -EINVAL. */
static int kcoll_config_store(const struct kcoll_config *c, struct netlink_ext_ack *extack)
{
	int ret = kcoll_config_check(c, extack);

	lockdep_assert_held(&kcoll_config_mutex);
	if (ret)
		return ret;
	ret = c->listen_port != kcoll_cfg.listen_port;
	/* Field by field: the hot paths read single fields without the mutex. */
	WRITE_ONCE(kcoll_cfg.listen_port, c->listen_port);
	WRITE_ONCE(kcoll_cfg.connect_timeout_ms, c->connect_timeout_ms);
	WRITE_ONCE(kcoll_cfg.op_timeout_ms, c->op_timeout_ms);
	WRITE_ONCE(kcoll_cfg.tos, c->tos);
	WRITE_ONCE(kcoll_cfg.chunk_bytes, c->chunk_bytes);
	WRITE_ONCE(kcoll_cfg.small_bytes, c->small_bytes);
	WRITE_ONCE(kcoll_cfg.medium_bytes, c->medium_bytes);
	WRITE_ONCE(kcoll_cfg.tree_ranks, c->tree_ranks);
	memcpy(kcoll_cfg.algo, c->algo, sizeof(kcoll_cfg.algo));
	WRITE_ONCE(kcoll_cfg.transport, c->transport);
	/* No listener moves: the TCP listeners opened from now on bind this (tcp_listen.c). */
	WRITE_ONCE(kcoll_cfg.tcp_port, c->tcp_port);
	return ret;
}

/**
 * kcoll_config_set - replace the whole configuration
 * @c:		the new configuration
 * @extack:	where to say what is wrong, or NULL
 *
 * Return: 0, or -EINVAL (nothing changed) when kcoll_config_check() refuses it.
 */
int kcoll_config_set(const struct kcoll_config *c, struct netlink_ext_ack *extack)
{
	int ret;

	mutex_lock(&kcoll_config_mutex);
	ret = kcoll_config_store(c, extack);
	mutex_unlock(&kcoll_config_mutex);
	if (ret < 0)
		return ret;
	/* The node listens on the new port from now on (and lets the old one go). */
	if (ret)
		kcoll_listen_keep(c->listen_port);
	return 0;
}

/* ---- the module parameters that are settings of the store ------------------------------ */

enum kcoll_config_param {
	KCOLL_CONFIG_P_LISTEN_PORT,
	KCOLL_CONFIG_P_CONNECT_TIMEOUT_MS,
	KCOLL_CONFIG_P_OP_TIMEOUT_MS,
	KCOLL_CONFIG_P_TOS,
	KCOLL_CONFIG_P_TRANSPORT,
	KCOLL_CONFIG_P_TCP_PORT,
};

const char *const kcoll_config_transport_names[KCOLL_CONFIG_TRANSPORT_COUNT] = {
	KCOLL_TRANSPORT_NAMES
};

/*
 * A write of a parameter (at load, or under /sys/module/kcoll/parameters/): one field
 * changed through the store's checks.  tos is clamped to -1..255 as it always was (any
 * negative value is the device default).  listen_port and tcp_port are read-only after
 * load (listen_port: the module's init starts the listener on it); no listener is moved
 * here.
 */
static int kcoll_config_param_set(const char *val, const struct kernel_param *kp)
{
	struct netlink_ext_ack extack = {};
	struct kcoll_config c;
	int ret;
	s64 v;

	if ((uintptr_t)kp->arg == KCOLL_CONFIG_P_TRANSPORT) {
		/* A name; anything else is refused by the store's check below. */
		ret = sysfs_match_string(kcoll_config_transport_names, val);
		v = ret < 0 ? KCOLL_CONFIG_TRANSPORT_COUNT : ret;
	} else {
		ret = kstrtos64(val, 0, &v);
		if (ret)
			return ret;
	}
	mutex_lock(&kcoll_config_mutex);
	c = kcoll_cfg;
	switch ((uintptr_t)kp->arg) {
	case KCOLL_CONFIG_P_LISTEN_PORT:
		c.listen_port = v < 0 || v > U16_MAX ? 0 : v;
		break;
	case KCOLL_CONFIG_P_TCP_PORT:
		c.tcp_port = v < 0 || v > U16_MAX ? 0 : v;
		break;
	case KCOLL_CONFIG_P_CONNECT_TIMEOUT_MS:
		c.connect_timeout_ms = v < 0 || v > U32_MAX ? 0 : v;
		break;
	case KCOLL_CONFIG_P_OP_TIMEOUT_MS:
		c.op_timeout_ms = v < 0 || v > U32_MAX ? 0 : v;
		break;
	case KCOLL_CONFIG_P_TOS:
		c.tos = clamp_t(s64, v, -1, 255);
		break;
	case KCOLL_CONFIG_P_TRANSPORT:
		c.transport = v;
		break;
	}
	ret = kcoll_config_store(&c, &extack);
	mutex_unlock(&kcoll_config_mutex);
	if (ret < 0) {
		pr_warn("%s=%s refused: %s\n", kp->name, val, extack._msg);
		return ret;
	}
	return 0;
}

static int kcoll_config_param_get(char *buf, const struct kernel_param *kp)
{
	switch ((uintptr_t)kp->arg) {
	case KCOLL_CONFIG_P_LISTEN_PORT:
		return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(kcoll_cfg.listen_port));
	case KCOLL_CONFIG_P_TCP_PORT:
		return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(kcoll_cfg.tcp_port));
	case KCOLL_CONFIG_P_CONNECT_TIMEOUT_MS:
		return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(kcoll_cfg.connect_timeout_ms));
	case KCOLL_CONFIG_P_OP_TIMEOUT_MS:
		return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(kcoll_cfg.op_timeout_ms));
	case KCOLL_CONFIG_P_TOS:
		return scnprintf(buf, PAGE_SIZE, "%d\n", READ_ONCE(kcoll_cfg.tos));
	case KCOLL_CONFIG_P_TRANSPORT:
		return scnprintf(buf, PAGE_SIZE, "%s\n",
				 kcoll_config_transport_names[READ_ONCE(kcoll_cfg.transport)]);
	}
	return -EINVAL;
}

static const struct kernel_param_ops kcoll_config_param_ops = {
	.set	= kcoll_config_param_set,
	.get	= kcoll_config_param_get,
};

#define KCOLL_CONFIG_PARAM(name, which, perm) \
	module_param_cb(name, &kcoll_config_param_ops, (void *)KCOLL_CONFIG_P_##which, perm)

KCOLL_CONFIG_PARAM(listen_port, LISTEN_PORT, 0444);
MODULE_PARM_DESC(listen_port,
		 "rdma_cm port kcoll listens on in every network namespace (default 18600)");
KCOLL_CONFIG_PARAM(tcp_port, TCP_PORT, 0444);
MODULE_PARM_DESC(tcp_port, "TCP port of the TCP transport's listeners (default 18601)");
KCOLL_CONFIG_PARAM(tos, TOS, 0644);
MODULE_PARM_DESC(tos,
		 "IP type of service (RoCE traffic class) of new connections, 0-255; -1: device default");
KCOLL_CONFIG_PARAM(connect_timeout_ms, CONNECT_TIMEOUT_MS, 0644);
MODULE_PARM_DESC(connect_timeout_ms,
		 "How long COMM_CREATE waits for every peer when the caller gives no timeout, 100-3600000 (default 30000)");
KCOLL_CONFIG_PARAM(op_timeout_ms, OP_TIMEOUT_MS, 0644);
MODULE_PARM_DESC(op_timeout_ms,
		 "A peer silent this long while operations wait on it fails the communicator with ETIMEDOUT, 100-3600000 (default 10000)");
KCOLL_CONFIG_PARAM(transport, TRANSPORT, 0644);
MODULE_PARM_DESC(transport,
		 "Transport of new communicators across hosts: auto (RDMA where the rank's address has an RDMA device, else TCP), rdma or tcp");
