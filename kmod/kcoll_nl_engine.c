// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family's reduction engines: engine-get (a dump), engine-set (which
 * engine serves a (datatype, operation) pair) and the engine-registered event.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>

#include "kcoll.h"
#include "kcoll_nl.h"
#include "kcoll_nl_int.h"

static const struct kcoll_nl_bound kcoll_nl_engine_bounds[KCOLL_A_ENGINE_MAX + 1] = {
	[KCOLL_A_ENGINE_DTYPE]	= { 0, KCOLL_NUM_DATATYPES - 1, false, "unknown datatype" },
	[KCOLL_A_ENGINE_OP]	= { 0, KCOLL_NUM_RED_OPS - 1, false,
				    "unknown reduction operation" },
};

/* ---- engines ------------------------------------------------------------------------------ */

static int kcoll_nl_engine_fill(struct sk_buff *skb, const struct kcoll_engine_info *e,
				u32 portid, u32 seq, int flags)
{
	struct nlattr *nest;
	void *hdr;
	int dt, op;

	hdr = genlmsg_put(skb, portid, seq, &kcoll_nl_family, flags, KCOLL_CMD_ENGINE_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, KCOLL_A_ENGINE_NAME, e->name) ||
	    nla_put_u32(skb, KCOLL_A_ENGINE_PRIORITY, e->priority))
		goto out_cancel;
	for (dt = 0; dt < KCOLL_NUM_DATATYPES; dt++) {
		for (op = 0; op < KCOLL_NUM_RED_OPS; op++) {
			if (!e->serves[dt][op])
				continue;
			nest = nla_nest_start(skb, KCOLL_A_ENGINE_SERVES);
			if (!nest || nla_put_u32(skb, KCOLL_A_ENGINE_PAIR_DTYPE, dt) ||
			    nla_put_u32(skb, KCOLL_A_ENGINE_PAIR_OP, op) ||
			    nla_put_u8(skb, KCOLL_A_ENGINE_PAIR_ACTIVE, e->serves[dt][op] == 2))
				goto out_cancel;
			nla_nest_end(skb, nest);
		}
	}
	genlmsg_end(skb, hdr);
	return 0;

out_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* Every engine: the built-in one first, then the registered ones in the order tried. */
int kcoll_nl_engine_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct kcoll_engine_info info;
	int ret = kcoll_nl_dump_check(cb);

	if (ret)
		return ret;
	for (;; cb->args[0]++) {
		if (kcoll_engine_info_get(cb->args[0], &info))
			break;
		if (kcoll_nl_engine_fill(skb, &info, NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI))
			break;
	}
	return skb->len;
}

int kcoll_nl_engine_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	int ret;

	if (kcoll_nl_check_bounds(info->attrs, kcoll_nl_engine_bounds, KCOLL_A_ENGINE_MAX,
				  info->extack) ||
	    kcoll_nl_missing(info, KCOLL_A_ENGINE_NAME, "missing engine name (name)") ||
	    kcoll_nl_missing(info, KCOLL_A_ENGINE_DTYPE, "missing datatype (dtype)") ||
	    kcoll_nl_missing(info, KCOLL_A_ENGINE_OP, "missing reduction operation (op)"))
		return -EINVAL;
	ret = kcoll_engine_choose(nla_data(info->attrs[KCOLL_A_ENGINE_NAME]),
				  nla_get_u32(info->attrs[KCOLL_A_ENGINE_DTYPE]),
				  nla_get_u32(info->attrs[KCOLL_A_ENGINE_OP]));
	switch (ret) {
	case -ENOENT:
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KCOLL_A_ENGINE_NAME],
				    "no reduction engine of that name");
		break;
	case -EOPNOTSUPP:
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KCOLL_A_ENGINE_OP],
				    "that engine does not declare this (dtype, op) pair");
		ret = -EINVAL;
		break;
	case -EINVAL:
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KCOLL_A_ENGINE_OP],
				    "kcoll does not reduce this (dtype, op) pair");
		break;
	}
	return ret;
}

/* ---- events ------------------------------------------------------------------------------ */

/**
 * kcoll_nl_event_engine - tell the events group (initial namespace) an engine registered
 * @name:	engine name
 * @priority:	its priority
 */
void kcoll_nl_event_engine(const char *name, u32 priority)
{
	struct sk_buff *skb;
	void *hdr;

	skb = kcoll_nl_event_new(&init_net, KCOLL_CMD_ENGINE_REGISTERED_NTF, &hdr);
	if (!skb)
		return;
	if (nla_put_string(skb, KCOLL_A_ENGINE_NAME, name) ||
	    nla_put_u32(skb, KCOLL_A_ENGINE_PRIORITY, priority)) {
		nlmsg_free(skb);
		return;
	}
	kcoll_nl_event_send(&init_net, skb, hdr);
}
