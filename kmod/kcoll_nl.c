// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "kcoll": its policies and value checks, the family, and the
 * "events" multicast group; the commands of each object are in kcoll_nl_dev.c,
 * kcoll_nl_comm.c, kcoll_nl_config.c and kcoll_nl_engine.c.
 * Documentation/netlink/specs/kcoll.yaml is the reference; the numbers are in
 * include/uapi/linux/kcoll_netlink.h.
 *
 * Validation is strict: unknown attributes, wrong types and lengths are refused by the core
 * (new family, strict parsing), values out of range by the validators below, missing ones
 * by the commands; every refusal is -EINVAL with an extended ACK message.
 *
 * Privileges (Documentation/security.rst, "Privileges and visibility"): the settings that
 * commands change (configuration, devices, engines) are the node's, not a namespace's, so
 * changing them needs CAP_NET_ADMIN in the initial user namespace: a process that made its
 * own user and network namespaces has CAP_NET_ADMIN there, and must not get them (checked in
 * pre_doit, so the refusal carries a message too).  A communicator is its owner's: only the
 * owner (the uid that created it) sees it and may abort it, or a caller with CAP_NET_ADMIN in
 * the initial user namespace (struct kcoll_nl_who); others get -ENOENT for reads, -EPERM
 * for an abort.  The
 * events group needs CAP_NET_ADMIN in the user namespace owning the listener's network
 * namespace: communicator events go to a communicator's own namespace.
 *
 * The family is not parallel: the genetlink mutex serialises its commands.  Events are sent
 * from any context, with GFP_ATOMIC, and never take a lock (some are sent under comm->lock).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <linux/kcoll_netlink.h>

#include "kcoll.h"
#include "kcoll_nl.h"
#include "kcoll_nl_int.h"

/* genl_ops.internal_flags: changes a node-wide setting (CAP_NET_ADMIN, initial userns) */
#define KCOLL_NL_ADMIN		BIT(0)

static bool kcoll_nl_registered;

/* ---- validators: a value out of range is -EINVAL with a message naming it ------------- */

/*
 * Check an integer attribute against its bound; the policy has checked its length (1, 2 or
 * 4 bytes).  The core would answer ERANGE for a policy range: kcoll answers EINVAL, as for
 * every other bad attribute, with a message naming the limits.
 */
static int kcoll_nl_check(const struct nlattr *nla, struct netlink_ext_ack *extack,
			  const struct kcoll_nl_bound *b)
{
	s64 v;

	switch (nla_len(nla)) {
	case 1:
		v = nla_get_u8(nla);
		break;
	case 2:
		v = nla_get_u16(nla);
		break;
	default:
		v = b->is_signed ? (s64)nla_get_s32(nla) : (s64)nla_get_u32(nla);
		break;
	}
	if (v >= b->lo && v <= b->hi)
		return 0;
	/* NL_SET_ERR_MSG_ATTR() wants a literal; the messages here are static strings. */
	if (extack) {
		NL_SET_BAD_ATTR(extack, nla);
		extack->_msg = b->msg;
	}
	return -EINVAL;
}

/*
 * The bounds of every attribute of @tb that has one.  The policies below only give types:
 * 6.1's policy dump in an extended ACK (NLMSGERR_ATTR_POLICY) WARNs on integer attributes
 * with a validation function, and its ranges answer ERANGE, where kcoll answers EINVAL.
 */
int kcoll_nl_check_bounds(struct nlattr **tb, const struct kcoll_nl_bound *b, int max,
			  struct netlink_ext_ack *extack)
{
	int i;

	for (i = 1; i <= max; i++) {
		if (tb[i] && b[i].msg && kcoll_nl_check(tb[i], extack, &b[i]))
			return -EINVAL;
	}
	return 0;
}

/* ---- policies ---------------------------------------------------------------------------- */

static const struct nla_policy kcoll_nl_dev_get_policy[KCOLL_A_DEV_MAX + 1] = {
	[KCOLL_A_DEV_NAME]	= { .type = NLA_NUL_STRING, .len = IB_DEVICE_NAME_MAX - 1 },
};

static const struct nla_policy kcoll_nl_dev_set_policy[KCOLL_A_DEV_MAX + 1] = {
	[KCOLL_A_DEV_NAME]	= { .type = NLA_NUL_STRING, .len = IB_DEVICE_NAME_MAX - 1 },
	[KCOLL_A_DEV_ALLOWED]	= { .type = NLA_U8 },
	[KCOLL_A_DEV_TOS]	= { .type = NLA_S32 },
	[KCOLL_A_DEV_GID_INDEX]	= { .type = NLA_S32 },
};

static const struct nla_policy kcoll_nl_comm_policy[KCOLL_A_COMM_MAX + 1] = {
	[KCOLL_A_COMM_ID]	= { .type = NLA_U64 },
	[KCOLL_A_COMM_RANK]	= { .type = NLA_U32 },
};

/* Only attributes of the set, none accepted: config-get takes none. */
static const struct nla_policy kcoll_nl_config_get_policy[KCOLL_A_CONFIG_MAX + 1] = {
};

const struct nla_policy kcoll_nl_algo_policy[KCOLL_A_ALGO_MAX + 1] = {
	[KCOLL_A_ALGO_COLL]	 = { .type = NLA_U32 },
	[KCOLL_A_ALGO_ALGORITHM] = { .type = NLA_U32 },
};

static const struct nla_policy kcoll_nl_config_set_policy[KCOLL_A_CONFIG_MAX + 1] = {
	[KCOLL_A_CONFIG_LISTEN_PORT]	    = { .type = NLA_U16 },
	[KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS] = { .type = NLA_U32 },
	[KCOLL_A_CONFIG_OP_TIMEOUT_MS]	    = { .type = NLA_U32 },
	[KCOLL_A_CONFIG_TOS]		    = { .type = NLA_S32 },
	[KCOLL_A_CONFIG_CHUNK_BYTES]	    = { .type = NLA_U32 },
	[KCOLL_A_CONFIG_SMALL_BYTES]	    = { .type = NLA_U32 },
	[KCOLL_A_CONFIG_MEDIUM_BYTES]	    = { .type = NLA_U32 },
	[KCOLL_A_CONFIG_TREE_RANKS]	    = { .type = NLA_U32 },
	[KCOLL_A_CONFIG_TRANSPORT]	    = { .type = NLA_U8 },
	[KCOLL_A_CONFIG_TCP_PORT]	    = { .type = NLA_U16 },
	[KCOLL_A_CONFIG_ALGO]		    = NLA_POLICY_NESTED(kcoll_nl_algo_policy),
};

static const struct nla_policy kcoll_nl_engine_set_policy[KCOLL_A_ENGINE_MAX + 1] = {
	[KCOLL_A_ENGINE_NAME]	= { .type = NLA_NUL_STRING, .len = 31 },
	[KCOLL_A_ENGINE_DTYPE]	= { .type = NLA_U32 },
	[KCOLL_A_ENGINE_OP]	= { .type = NLA_U32 },
};

/* A missing attribute: -EINVAL, with the attribute's type and a message. */
bool kcoll_nl_missing(struct genl_info *info, int type, const char *msg)
{
	if (info->attrs[type])
		return false;
	NL_SET_ERR_ATTR_MISS(info->extack, NULL, type);
	info->extack->_msg = msg;	/* a static string, as NL_SET_ERR_MSG() would set */
	return true;
}

/*
 * 6.1 has one policy per command for its do and its dump: on their first call, dumps
 * (which take no attribute) refuse those the do accepts.  Not in a start callback: only
 * dumpit has an extended ACK to explain the refusal.  cb->args[1] marks the check done.
 */
int kcoll_nl_dump_check(struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	unsigned int i;

	if (cb->args[1])
		return 0;
	for (i = 1; info->attrs && i <= info->op.maxattr; i++) {
		if (info->attrs[i]) {
			NL_SET_ERR_MSG_ATTR(cb->extack, info->attrs[i],
					    "a dump takes no attribute");
			return -EINVAL;
		}
	}
	cb->args[1] = 1;
	return 0;
}

/* ---- the family -------------------------------------------------------------------------- */

static int kcoll_nl_pre_doit(const struct genl_ops *ops, struct sk_buff *skb,
			     struct genl_info *info)
{
	/* Not the namespace's owner: these settings are the whole node's. */
	if ((ops->internal_flags & KCOLL_NL_ADMIN) && !netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "changing node-wide settings needs CAP_NET_ADMIN in the initial user namespace");
		return -EPERM;
	}
	return 0;
}

/* In 6.1 a command is one entry with its doit and dumpit (no split ops before 6.2). */
static const struct genl_ops kcoll_nl_ops[] = {
	{
		.cmd		= KCOLL_CMD_DEV_GET,
		.doit		= kcoll_nl_dev_get_doit,
		.dumpit		= kcoll_nl_dev_get_dumpit,
		.policy		= kcoll_nl_dev_get_policy,
		.maxattr	= KCOLL_A_DEV_MAX,
	},
	{
		.cmd		= KCOLL_CMD_DEV_SET,
		.doit		= kcoll_nl_dev_set_doit,
		.policy		= kcoll_nl_dev_set_policy,
		.maxattr	= KCOLL_A_DEV_MAX,
		.internal_flags	= KCOLL_NL_ADMIN,
	},
	{
		.cmd		= KCOLL_CMD_COMM_GET,
		.doit		= kcoll_nl_comm_get_doit,
		.dumpit		= kcoll_nl_comm_get_dumpit,
		.policy		= kcoll_nl_comm_policy,
		.maxattr	= KCOLL_A_COMM_MAX,
	},
	{
		.cmd		= KCOLL_CMD_COMM_ABORT,
		.doit		= kcoll_nl_comm_abort_doit,
		.policy		= kcoll_nl_comm_policy,
		.maxattr	= KCOLL_A_COMM_MAX,
		/* the owner or an administrator: checked by the command */
	},
	{
		.cmd		= KCOLL_CMD_CONFIG_GET,
		.doit		= kcoll_nl_config_get_doit,
		.policy		= kcoll_nl_config_get_policy,
		.maxattr	= KCOLL_A_CONFIG_MAX,
	},
	{
		.cmd		= KCOLL_CMD_CONFIG_SET,
		.doit		= kcoll_nl_config_set_doit,
		.policy		= kcoll_nl_config_set_policy,
		.maxattr	= KCOLL_A_CONFIG_MAX,
		.internal_flags	= KCOLL_NL_ADMIN,
	},
	{
		.cmd		= KCOLL_CMD_ENGINE_GET,
		.dumpit		= kcoll_nl_engine_get_dumpit,
		.policy		= kcoll_nl_engine_set_policy,
		.maxattr	= KCOLL_A_ENGINE_MAX,
	},
	{
		.cmd		= KCOLL_CMD_ENGINE_SET,
		.doit		= kcoll_nl_engine_set_doit,
		.policy		= kcoll_nl_engine_set_policy,
		.maxattr	= KCOLL_A_ENGINE_MAX,
		.internal_flags	= KCOLL_NL_ADMIN,
	},
};

static const struct genl_multicast_group kcoll_nl_mcgrps[] = {
	[KCOLL_NL_MCGRP_EVENTS] = { .name = KCOLL_MCGRP_EVENTS, .flags = KCOLL_NL_EVENTS_FLAGS },
};

struct genl_family kcoll_nl_family = {
	.name		= KCOLL_FAMILY_NAME,
	.version	= KCOLL_FAMILY_VERSION,
	.netnsok	= true,
	.pre_doit	= kcoll_nl_pre_doit,
	.ops		= kcoll_nl_ops,
	.n_ops		= ARRAY_SIZE(kcoll_nl_ops),
	.mcgrps		= kcoll_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(kcoll_nl_mcgrps),
	.module		= THIS_MODULE,
};

/* ---- events ------------------------------------------------------------------------------ */

/* A new event message for @net, or NULL when nobody listens there (or no memory). */
struct sk_buff *kcoll_nl_event_new(struct net *net, u8 cmd, void **hdr)
{
	struct sk_buff *skb;

	if (!READ_ONCE(kcoll_nl_registered) ||
	    !genl_has_listeners(&kcoll_nl_family, net, KCOLL_NL_MCGRP_EVENTS))
		return NULL;
	skb = kcoll_fi(ALLOC, NULL, genlmsg_new(NLMSG_GOODSIZE, GFP_ATOMIC));
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &kcoll_nl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

void kcoll_nl_event_send(struct net *net, struct sk_buff *skb, void *hdr)
{
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&kcoll_nl_family, net, skb, 0, KCOLL_NL_MCGRP_EVENTS,
				GFP_ATOMIC);
}

int kcoll_nl_init(void)
{
	int ret = genl_register_family(&kcoll_nl_family);

	if (ret) {
		pr_err("cannot register generic netlink family %s: %d\n", KCOLL_FAMILY_NAME, ret);
		return ret;
	}
	WRITE_ONCE(kcoll_nl_registered, true);
	return 0;
}

void kcoll_nl_exit(void)
{
	WRITE_ONCE(kcoll_nl_registered, false);
	genl_unregister_family(&kcoll_nl_family);
}
