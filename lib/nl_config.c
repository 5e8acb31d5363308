// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane (nl_core.c): the configuration: get and set.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/kcoll_netlink.h>

#include "libkcoll_internal.h"
#include "nl_internal.h"

/* ---- configuration ----------------------------------------------------------------------- */

static int kcoll_nl_config_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl_config *c = data;
	const struct nlattr *a, *b;
	uint32_t coll, algo;
	bool has_coll, has_algo;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_CONFIG_LISTEN_PORT:
			c->listen_port = mnl_attr_get_u16(a);
			c->mask |= KCOLL_NL_CFG_LISTEN_PORT;
			break;
		case KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS:
			c->connect_timeout_ms = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_CONNECT_TIMEOUT;
			break;
		case KCOLL_A_CONFIG_OP_TIMEOUT_MS:
			c->op_timeout_ms = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_OP_TIMEOUT;
			break;
		case KCOLL_A_CONFIG_TOS:
			c->tos = (int32_t)mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_TOS;
			break;
		case KCOLL_A_CONFIG_CHUNK_BYTES:
			c->chunk_bytes = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_CHUNK_BYTES;
			break;
		case KCOLL_A_CONFIG_SMALL_BYTES:
			c->small_bytes = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_SMALL_BYTES;
			break;
		case KCOLL_A_CONFIG_MEDIUM_BYTES:
			c->medium_bytes = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_MEDIUM_BYTES;
			break;
		case KCOLL_A_CONFIG_TREE_RANKS:
			c->tree_ranks = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_TREE_RANKS;
			break;
		case KCOLL_A_CONFIG_ALGO:
			has_coll = has_algo = false;
			coll = algo = 0;
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == KCOLL_A_ALGO_COLL) {
					coll = mnl_attr_get_u32(b);
					has_coll = true;
				} else if (mnl_attr_get_type(b) == KCOLL_A_ALGO_ALGORITHM) {
					algo = mnl_attr_get_u32(b);
					has_algo = true;
				}
			}
			if (has_coll && has_algo && coll < KCOLL_NL_MAX_COLLECTIVES) {
				c->algo[coll] = algo;
				c->algo_mask |= 1u << coll;
				c->mask |= KCOLL_NL_CFG_ALGO;
			}
			break;
		}
	}
	return MNL_CB_OK;
}

int kcoll_nl_config_get(struct kcoll_nl *nl, struct kcoll_nl_config *cfg)
{
	struct nlmsghdr *nlh;

	if (!nl || !cfg)
		return kcoll_fail(-EINVAL, "kcoll_nl_config_get: missing argument");
	memset(cfg, 0, sizeof(*cfg));
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_CONFIG_GET, KCOLL_FAMILY_VERSION);
	return kcoll_nl_talk(nl, nlh, kcoll_nl_config_cb, cfg);
}

int kcoll_nl_config_set(struct kcoll_nl *nl, const struct kcoll_nl_config *c)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	uint32_t i;

	if (!nl || !c)
		return kcoll_fail(-EINVAL, "kcoll_nl_config_set: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_CONFIG_SET, KCOLL_FAMILY_VERSION);
	if (c->mask & KCOLL_NL_CFG_LISTEN_PORT)
		mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_LISTEN_PORT, c->listen_port);
	if (c->mask & KCOLL_NL_CFG_CONNECT_TIMEOUT)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS, c->connect_timeout_ms);
	if (c->mask & KCOLL_NL_CFG_OP_TIMEOUT)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_OP_TIMEOUT_MS, c->op_timeout_ms);
	if (c->mask & KCOLL_NL_CFG_TOS)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_TOS, (uint32_t)c->tos);
	if (c->mask & KCOLL_NL_CFG_CHUNK_BYTES)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_CHUNK_BYTES, c->chunk_bytes);
	if (c->mask & KCOLL_NL_CFG_SMALL_BYTES)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_SMALL_BYTES, c->small_bytes);
	if (c->mask & KCOLL_NL_CFG_MEDIUM_BYTES)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_MEDIUM_BYTES, c->medium_bytes);
	if (c->mask & KCOLL_NL_CFG_TREE_RANKS)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_TREE_RANKS, c->tree_ranks);
	for (i = 0; (c->mask & KCOLL_NL_CFG_ALGO) && i < KCOLL_NL_MAX_COLLECTIVES; i++) {
		if (!(c->algo_mask & (1u << i)))
			continue;
		nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
		mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, i);
		mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, c->algo[i]);
		mnl_attr_nest_end(nlh, nest);
	}
	return kcoll_nl_talk(nl, nlh, NULL, NULL);
}
