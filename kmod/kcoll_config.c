// SPDX-License-Identifier: GPL-2.0
/*
 * The run-time configuration store (struct kcoll_config): read by kcoll_config_get(),
 * changed by the netlink CONFIG_SET command (kcoll_nl.c) after kcoll_config_check().
 *
 * listen_port, connect_timeout_ms, op_timeout_ms and tos are stored in their module
 * parameters (kcoll_main.c), whose readers use READ_ONCE(): a write through
 * /sys/module/kcoll/parameters/ and a CONFIG_SET change the same value.  The collective
 * tunables exist only here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/netlink.h>

#include "kcoll.h"
#include "kcoll_nl.h"

/* Guards kcoll_cfg and the writes (not the reads) of the four module parameters. */
static DEFINE_MUTEX(kcoll_config_mutex);
static struct kcoll_config kcoll_cfg;

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
	out->listen_port = READ_ONCE(kcoll_listen_port);
	out->connect_timeout_ms = READ_ONCE(kcoll_connect_timeout_ms);
	out->op_timeout_ms = READ_ONCE(kcoll_op_timeout_ms);
	out->tos = READ_ONCE(kcoll_tos);
	if (out->tos > 255)		/* as connections use it (see the tos parameter) */
		out->tos = 255;
	else if (out->tos < 0)
		out->tos = -1;
	mutex_unlock(&kcoll_config_mutex);
}

/**
 * kcoll_config_check - check a whole configuration
 * @c:		the configuration
 * @extack:	where to say what is wrong, or NULL
 *
 * Ranges of single values are checked by the netlink policy; this checks the rules that
 * involve several values, or that a policy cannot express.  Return: 0 or -EINVAL.
 */
int kcoll_config_check(const struct kcoll_config *c, struct netlink_ext_ack *extack)
{
	unsigned int i;

	if (!c->listen_port) {
		NL_SET_ERR_MSG(extack, "listen-port must not be 0");
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
	for (i = 0; i < ARRAY_SIZE(c->algo); i++) {
		if (c->algo[i] >= KCOLL_NUM_ALGORITHMS) {
			NL_SET_ERR_MSG(extack, "unknown algorithm");
			return -EINVAL;
		}
	}
	return 0;
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
	int ret = kcoll_config_check(c, extack);
	bool new_port;

	if (ret)
		return ret;
	mutex_lock(&kcoll_config_mutex);
	new_port = c->listen_port != READ_ONCE(kcoll_listen_port);
	kcoll_cfg = *c;
	WRITE_ONCE(kcoll_listen_port, c->listen_port);
	WRITE_ONCE(kcoll_connect_timeout_ms, c->connect_timeout_ms);
	WRITE_ONCE(kcoll_op_timeout_ms, c->op_timeout_ms);
	WRITE_ONCE(kcoll_tos, c->tos);
	mutex_unlock(&kcoll_config_mutex);
	/* The node listens on the new port from now on (and lets the old one go). */
	if (new_port)
		kcoll_listen_keep(c->listen_port);
	return 0;
}

/* The initial configuration: module parameters and the collective defaults. */
int kcoll_config_init(void)
{
	mutex_lock(&kcoll_config_mutex);
	memset(&kcoll_cfg, 0, sizeof(kcoll_cfg));
	kcoll_cfg.chunk_bytes = KCOLL_CONFIG_CHUNK_BYTES;
	kcoll_cfg.small_bytes = KCOLL_CONFIG_SMALL_BYTES;
	kcoll_cfg.medium_bytes = KCOLL_CONFIG_MEDIUM_BYTES;
	kcoll_cfg.tree_ranks = KCOLL_CONFIG_TREE_RANKS;
	mutex_unlock(&kcoll_config_mutex);
	return 0;
}

void kcoll_config_exit(void)
{
}
