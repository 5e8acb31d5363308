// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family's configuration: config-get and config-set, on the store of
 * kcoll_config.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>

#include "kcoll.h"
#include "kcoll_nl.h"
#include "kcoll_nl_int.h"

static const struct kcoll_nl_bound kcoll_nl_config_bounds[KCOLL_A_CONFIG_MAX + 1] = {
	[KCOLL_A_CONFIG_LISTEN_PORT]	    = { 1, U16_MAX, false,
						"listen-port must be 1 to 65535" },
	[KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS] = { KCOLL_CONFIG_TIMEOUT_MIN_MS,
						KCOLL_CONFIG_TIMEOUT_MAX_MS, false,
						"connect-timeout-ms must be 100 to 3600000" },
	[KCOLL_A_CONFIG_OP_TIMEOUT_MS]	    = { KCOLL_CONFIG_TIMEOUT_MIN_MS,
						KCOLL_CONFIG_TIMEOUT_MAX_MS, false,
						"op-timeout-ms must be 100 to 3600000" },
	[KCOLL_A_CONFIG_TOS]		    = { -1, 255, true, "tos must be -1 to 255" },
	[KCOLL_A_CONFIG_CHUNK_BYTES]	    = { 4096, 64 << 20, false,
						"chunk-bytes must be 4096 to 67108864" },
	[KCOLL_A_CONFIG_SMALL_BYTES]	    = { 0, 1 << 30, false,
						"small-bytes must be at most 1073741824" },
	[KCOLL_A_CONFIG_MEDIUM_BYTES]	    = { 0, 1 << 30, false,
						"medium-bytes must be at most 1073741824" },
	[KCOLL_A_CONFIG_TRANSPORT]	    = { 0, KCOLL_CONFIG_TRANSPORT_COUNT - 1, false,
						"transport must be 0 (auto), 1 (rdma) or 2 (tcp)" },
	[KCOLL_A_CONFIG_TREE_RANKS]	    = { 2, KCOLL_MAX_RANKS, false,
						"tree-ranks must be 2 to 4096" },
	[KCOLL_A_CONFIG_TCP_PORT]	    = { 1, U16_MAX, false,
						"tcp-port must be 1 to 65535" },
};

static const struct kcoll_nl_bound kcoll_nl_algo_bounds[KCOLL_A_ALGO_MAX + 1] = {
	[KCOLL_A_ALGO_COLL]	 = { 0, KCOLL_NUM_COLLECTIVES - 1, false, "unknown collective" },
	[KCOLL_A_ALGO_ALGORITHM] = { 0, KCOLL_NUM_ALGORITHMS - 1, false, "unknown algorithm" },
};

/* ---- configuration ----------------------------------------------------------------------- */

static int kcoll_nl_config_fill(struct sk_buff *skb, const struct kcoll_config *c)
{
	struct nlattr *nest;
	u32 i;

	if (nla_put_u16(skb, KCOLL_A_CONFIG_LISTEN_PORT, c->listen_port) ||
	    nla_put_u32(skb, KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS, c->connect_timeout_ms) ||
	    nla_put_u32(skb, KCOLL_A_CONFIG_OP_TIMEOUT_MS, c->op_timeout_ms) ||
	    nla_put_s32(skb, KCOLL_A_CONFIG_TOS, c->tos) ||
	    nla_put_u32(skb, KCOLL_A_CONFIG_CHUNK_BYTES, c->chunk_bytes) ||
	    nla_put_u32(skb, KCOLL_A_CONFIG_SMALL_BYTES, c->small_bytes) ||
	    nla_put_u32(skb, KCOLL_A_CONFIG_MEDIUM_BYTES, c->medium_bytes) ||
	    nla_put_u32(skb, KCOLL_A_CONFIG_TREE_RANKS, c->tree_ranks) ||
	    nla_put_u8(skb, KCOLL_A_CONFIG_TRANSPORT, c->transport) ||
	    nla_put_u16(skb, KCOLL_A_CONFIG_TCP_PORT, c->tcp_port))
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(c->algo); i++) {
		nest = nla_nest_start(skb, KCOLL_A_CONFIG_ALGO);
		if (!nest)
			return -EMSGSIZE;
		if (nla_put_u32(skb, KCOLL_A_ALGO_COLL, i) ||
		    nla_put_u32(skb, KCOLL_A_ALGO_ALGORITHM, c->algo[i]))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	return 0;
}

int kcoll_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kcoll_config c;
	struct sk_buff *msg;
	void *hdr;

	kcoll_config_get(&c);
	msg = kcoll_fi(ALLOC, NULL, genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL));
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &kcoll_nl_family, 0, KCOLL_CMD_CONFIG_GET);
	if (!hdr || kcoll_nl_config_fill(msg, &c)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/* One algo nest of config-set: both members, checked by the policy already. */
static int kcoll_nl_config_algo(struct kcoll_config *c, const struct nlattr *nla,
				struct netlink_ext_ack *extack)
{
	struct nlattr *tb[KCOLL_A_ALGO_MAX + 1];
	int ret;

	ret = nla_parse_nested(tb, KCOLL_A_ALGO_MAX, nla, kcoll_nl_algo_policy, extack);
	if (ret)
		return ret;
	if (kcoll_nl_check_bounds(tb, kcoll_nl_algo_bounds, KCOLL_A_ALGO_MAX, extack))
		return -EINVAL;
	if (!tb[KCOLL_A_ALGO_COLL] || !tb[KCOLL_A_ALGO_ALGORITHM]) {
		NL_SET_ERR_ATTR_MISS(extack, nla, tb[KCOLL_A_ALGO_COLL] ?
				     KCOLL_A_ALGO_ALGORITHM : KCOLL_A_ALGO_COLL);
		NL_SET_ERR_MSG_ATTR(extack, nla, "algo needs both coll and algorithm");
		return -EINVAL;
	}
	c->algo[nla_get_u32(tb[KCOLL_A_ALGO_COLL])] = nla_get_u32(tb[KCOLL_A_ALGO_ALGORITHM]);
	return 0;
}

int kcoll_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct kcoll_config c;
	struct nlattr *nla;
	bool any = false;
	int rem, ret, i;

	if (kcoll_nl_check_bounds(tb, kcoll_nl_config_bounds, KCOLL_A_CONFIG_MAX, info->extack))
		return -EINVAL;
	kcoll_config_get(&c);
	for (i = 1; i <= KCOLL_A_CONFIG_MAX; i++)
		any |= !!tb[i];
	if (!any) {
		NL_SET_ERR_MSG(info->extack, "nothing to change: no configuration attribute");
		return -EINVAL;
	}
	if (tb[KCOLL_A_CONFIG_LISTEN_PORT])
		c.listen_port = nla_get_u16(tb[KCOLL_A_CONFIG_LISTEN_PORT]);
	if (tb[KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS])
		c.connect_timeout_ms = nla_get_u32(tb[KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS]);
	if (tb[KCOLL_A_CONFIG_OP_TIMEOUT_MS])
		c.op_timeout_ms = nla_get_u32(tb[KCOLL_A_CONFIG_OP_TIMEOUT_MS]);
	if (tb[KCOLL_A_CONFIG_TOS])
		c.tos = nla_get_s32(tb[KCOLL_A_CONFIG_TOS]);
	if (tb[KCOLL_A_CONFIG_CHUNK_BYTES])
		c.chunk_bytes = nla_get_u32(tb[KCOLL_A_CONFIG_CHUNK_BYTES]);
	if (tb[KCOLL_A_CONFIG_SMALL_BYTES])
		c.small_bytes = nla_get_u32(tb[KCOLL_A_CONFIG_SMALL_BYTES]);
	if (tb[KCOLL_A_CONFIG_MEDIUM_BYTES])
		c.medium_bytes = nla_get_u32(tb[KCOLL_A_CONFIG_MEDIUM_BYTES]);
	if (tb[KCOLL_A_CONFIG_TREE_RANKS])
		c.tree_ranks = nla_get_u32(tb[KCOLL_A_CONFIG_TREE_RANKS]);
	if (tb[KCOLL_A_CONFIG_TRANSPORT])
		c.transport = nla_get_u8(tb[KCOLL_A_CONFIG_TRANSPORT]);
	if (tb[KCOLL_A_CONFIG_TCP_PORT])
		c.tcp_port = nla_get_u16(tb[KCOLL_A_CONFIG_TCP_PORT]);
	/* Every algo attribute, not only the last one the parser kept. */
	nlmsg_for_each_attr(nla, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(nla) != KCOLL_A_CONFIG_ALGO)
			continue;
		ret = kcoll_nl_config_algo(&c, nla, info->extack);
		if (ret)
			return ret;
	}
	return kcoll_config_set(&c, info->extack);
}
