// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "kcoll": devices, communicators, engines, configuration and
 * the "events" multicast group.  Documentation/netlink/specs/kcoll.yaml is the reference;
 * the numbers are in include/uapi/linux/kcoll_netlink.h.
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
#include <linux/jiffies.h>
#include <linux/netdevice.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <rdma/ib_cache.h>
#include <linux/kcoll_netlink.h>

#include "kcoll.h"
#include "kcoll_comm_desc.h"
#include "kcoll_nl.h"

/* genl_ops.internal_flags: changes a node-wide setting (CAP_NET_ADMIN, initial userns) */
#define KCOLL_NL_ADMIN		BIT(0)

/*
 * The events group name other users' communicators: only administrators of the namespace
 * may join it.  A kernel without GENL_MCAST_CAP_NET_ADMIN (6.1 before its stable backport)
 * cannot check that at join time, so there kcoll sends no communicator events at all.
 */
#ifdef GENL_MCAST_CAP_NET_ADMIN
#define KCOLL_NL_EVENTS_FLAGS	GENL_MCAST_CAP_NET_ADMIN
#define KCOLL_NL_COMM_EVENTS	true
#else
#define KCOLL_NL_EVENTS_FLAGS	0
#define KCOLL_NL_COMM_EVENTS	false
#endif

/* Index of the "events" group in kcoll_nl_mcgrps. */
#define KCOLL_NL_MCGRP_EVENTS	0

static struct genl_family kcoll_nl_family;
static bool kcoll_nl_registered;

/* ---- validators: a value out of range is -EINVAL with a message naming it ------------- */

/**
 * struct kcoll_nl_bound - the range of one integer attribute
 * @lo:		lowest value allowed
 * @hi:		highest value allowed
 * @is_signed:	the attribute is signed (s32)
 * @msg:	extended ACK message when the value is out of range
 */
struct kcoll_nl_bound {
	s64 lo;
	s64 hi;
	bool is_signed;
	const char *msg;
};

static const struct kcoll_nl_bound kcoll_nl_dev_bounds[KCOLL_A_DEV_MAX + 1] = {
	[KCOLL_A_DEV_ALLOWED]	= { 0, 1, false, "allowed must be 0 or 1" },
	[KCOLL_A_DEV_TOS]	= { -1, 255, true, "tos must be -1 to 255" },
	[KCOLL_A_DEV_GID_INDEX]	= { -1, S32_MAX, true,
				    "gid-index must be -1 (no selection) or a GID table index" },
};

static const struct kcoll_nl_bound kcoll_nl_comm_bounds[KCOLL_A_COMM_MAX + 1] = {
	[KCOLL_A_COMM_RANK]	= { 0, KCOLL_MAX_RANKS - 1, false, "rank must be 0 to 4095" },
};

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
	[KCOLL_A_CONFIG_TREE_RANKS]	    = { 2, KCOLL_MAX_RANKS, false,
						"tree-ranks must be 2 to 4096" },
};

static const struct kcoll_nl_bound kcoll_nl_algo_bounds[KCOLL_A_ALGO_MAX + 1] = {
	[KCOLL_A_ALGO_COLL]	 = { 0, KCOLL_NUM_COLLECTIVES - 1, false, "unknown collective" },
	[KCOLL_A_ALGO_ALGORITHM] = { 0, KCOLL_NUM_ALGORITHMS - 1, false, "unknown algorithm" },
};

static const struct kcoll_nl_bound kcoll_nl_engine_bounds[KCOLL_A_ENGINE_MAX + 1] = {
	[KCOLL_A_ENGINE_DTYPE]	= { 0, KCOLL_NUM_DATATYPES - 1, false, "unknown datatype" },
	[KCOLL_A_ENGINE_OP]	= { 0, KCOLL_NUM_RED_OPS - 1, false,
				    "unknown reduction operation" },
};

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
static int kcoll_nl_check_bounds(struct nlattr **tb, const struct kcoll_nl_bound *b,
				 int max, struct netlink_ext_ack *extack)
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

static const struct nla_policy kcoll_nl_algo_policy[KCOLL_A_ALGO_MAX + 1] = {
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
	[KCOLL_A_CONFIG_ALGO]		    = NLA_POLICY_NESTED(kcoll_nl_algo_policy),
};

static const struct nla_policy kcoll_nl_engine_set_policy[KCOLL_A_ENGINE_MAX + 1] = {
	[KCOLL_A_ENGINE_NAME]	= { .type = NLA_NUL_STRING, .len = 31 },
	[KCOLL_A_ENGINE_DTYPE]	= { .type = NLA_U32 },
	[KCOLL_A_ENGINE_OP]	= { .type = NLA_U32 },
};

/* A missing attribute: -EINVAL, with the attribute's type and a message. */
static bool kcoll_nl_missing(struct genl_info *info, int type, const char *msg)
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
static int kcoll_nl_dump_check(struct netlink_callback *cb)
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

/**
 * struct kcoll_nl_who - who sent a request about communicators
 * @req:	the request
 * @admin:	CAP_NET_ADMIN in the initial user namespace: 1, 0, or -1 not asked yet (asked
 *		once per request: a denied capability may be audited, so not once per comm)
 */
struct kcoll_nl_who {
	const struct sk_buff *req;
	int admin;
};

#define KCOLL_NL_WHO(skb)	((struct kcoll_nl_who){ .req = (skb), .admin = -1 })

/* For the socket's opener and for the caller, as netlink_capable() checks. */
static bool kcoll_nl_who_admin(struct kcoll_nl_who *w)
{
	if (w->admin < 0)
		w->admin = netlink_capable(w->req, CAP_NET_ADMIN);
	return w->admin;
}

/*
 * May the requester act on @comm as its owner would: its uid created the comm, or it is an
 * administrator.  The uid is the one the kernel stamped on the request (SCM credentials: a
 * process can only claim its own uids).
 */
static bool kcoll_nl_who_owns(struct kcoll_nl_who *w, struct kcoll_comm *comm)
{
	return uid_eq(comm->owner_uid, NETLINK_CB(w->req).creds.uid) || kcoll_nl_who_admin(w);
}

/*
 * The requester sees a comm of its own namespace, or every namespace's from the initial
 * one; and only its own unless it is an administrator (kcoll_nl_who_owns()).
 */
static bool kcoll_nl_comm_visible(struct kcoll_comm *comm, struct net *net,
				  struct kcoll_nl_who *w)
{
	return (net_eq(net, &init_net) || net_eq(comm->net, net)) && kcoll_nl_who_owns(w, comm);
}

/* ---- devices ----------------------------------------------------------------------------- */

static u8 kcoll_nl_node_type(struct kcoll_dev *dev)
{
	u32 port = rdma_start_port(dev->ibdev);

	if (rdma_protocol_roce(dev->ibdev, port))
		return KCOLL_NODE_TYPE_ROCE;
	if (rdma_protocol_iwarp(dev->ibdev, port))
		return KCOLL_NODE_TYPE_IWARP;
	if (rdma_protocol_ib(dev->ibdev, port))
		return KCOLL_NODE_TYPE_INFINIBAND;
	return KCOLL_NODE_TYPE_UNKNOWN;
}

struct kcoll_nl_count {
	struct kcoll_dev *dev;
	u32 n;
};

static int kcoll_nl_count_dev_comms(struct kcoll_comm *comm, void *arg)
{
	struct kcoll_nl_count *c = arg;

	c->n += READ_ONCE(comm->dev) == c->dev;
	return 0;
}

static u32 kcoll_nl_dev_ncomms(struct kcoll_dev *dev)
{
	struct kcoll_nl_count c = { .dev = dev };
	unsigned long pos = 0;

	kcoll_comm_walk(&pos, kcoll_nl_count_dev_comms, &c);
	return c.n;
}

static int kcoll_nl_put_gid(struct sk_buff *skb, struct ib_device *ibdev, u32 port, int i)
{
	const struct ib_gid_attr *ga;
	struct net_device *ndev;
	struct nlattr *nest;
	int ret = -EMSGSIZE;

	ga = rdma_get_gid_attr(ibdev, port, i);
	if (IS_ERR(ga))
		return 0;	/* an empty entry */
	nest = nla_nest_start(skb, KCOLL_A_PORT_GID);
	if (!nest)
		goto out;
	if (nla_put_u32(skb, KCOLL_A_GID_INDEX, i) ||
	    nla_put(skb, KCOLL_A_GID_GID, sizeof(ga->gid), &ga->gid) ||
	    nla_put_u8(skb, KCOLL_A_GID_TYPE, ga->gid_type))
		goto out_cancel;
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(ga);
	if (!IS_ERR_OR_NULL(ndev) && nla_put_string(skb, KCOLL_A_GID_NETDEV, ndev->name)) {
		rcu_read_unlock();
		goto out_cancel;
	}
	rcu_read_unlock();
	nla_nest_end(skb, nest);
	ret = 0;
	goto out;
out_cancel:
	nla_nest_cancel(skb, nest);
out:
	rdma_put_gid_attr(ga);
	return ret;
}

static int kcoll_nl_put_port(struct sk_buff *skb, struct ib_device *ibdev, u32 port)
{
	struct ib_port_attr attr;
	struct nlattr *nest;
	int i;

	if (ib_query_port(ibdev, port, &attr))
		return 0;	/* nothing to say about it */
	nest = nla_nest_start(skb, KCOLL_A_DEV_PORT);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, KCOLL_A_PORT_INDEX, port) ||
	    nla_put_u8(skb, KCOLL_A_PORT_STATE, attr.state) ||
	    nla_put_u32(skb, KCOLL_A_PORT_ACTIVE_MTU, ib_mtu_enum_to_int(attr.active_mtu)))
		goto out_cancel;
	for (i = 0; i < attr.gid_tbl_len; i++) {
		if (kcoll_nl_put_gid(skb, ibdev, port, i))
			goto out_cancel;
	}
	nla_nest_end(skb, nest);
	return 0;
out_cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* Context: the caller holds a user reference on @dev, so dev->ibdev stays. */
static int kcoll_nl_dev_fill(struct sk_buff *skb, struct kcoll_dev *dev, u8 cmd, u32 portid,
			     u32 seq, int flags)
{
	struct ib_device *ibdev = dev->ibdev;
	void *hdr;
	u32 port;

	hdr = genlmsg_put(skb, portid, seq, &kcoll_nl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, KCOLL_A_DEV_NAME, dev_name(&ibdev->dev)) ||
	    nla_put_u8(skb, KCOLL_A_DEV_NODE_TYPE, kcoll_nl_node_type(dev)) ||
	    nla_put_u64_64bit(skb, KCOLL_A_DEV_NODE_GUID, be64_to_cpu(ibdev->node_guid),
			      KCOLL_A_DEV_PAD) ||
	    nla_put_u8(skb, KCOLL_A_DEV_ALLOWED, READ_ONCE(dev->allowed)) ||
	    nla_put_s32(skb, KCOLL_A_DEV_TOS, READ_ONCE(dev->tos)) ||
	    nla_put_s32(skb, KCOLL_A_DEV_GID_INDEX, READ_ONCE(dev->gid_index)) ||
	    nla_put_u32(skb, KCOLL_A_DEV_NCOMMS, kcoll_nl_dev_ncomms(dev)))
		goto out_cancel;
	rdma_for_each_port(ibdev, port) {
		if (kcoll_nl_put_port(skb, ibdev, port))
			goto out_cancel;
	}
	genlmsg_end(skb, hdr);
	return 0;
out_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static struct kcoll_dev *kcoll_nl_dev_from_attr(struct genl_info *info)
{
	struct nlattr *nla = info->attrs[KCOLL_A_DEV_NAME];
	struct kcoll_dev *dev = kcoll_dev_get_by_name(nla_data(nla));

	if (!dev)
		NL_SET_ERR_MSG_ATTR(info->extack, nla, "kcoll tracks no RDMA device of that name");
	return dev;
}

static int kcoll_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kcoll_dev *dev;
	struct sk_buff *msg;
	int ret;

	if (kcoll_nl_missing(info, KCOLL_A_DEV_NAME, "missing device name (name)"))
		return -EINVAL;
	dev = kcoll_nl_dev_from_attr(info);
	if (!dev)
		return -ENODEV;
	msg = kcoll_fi(ALLOC, NULL, genlmsg_new(4 * NLMSG_GOODSIZE, GFP_KERNEL));
	if (!msg) {
		ret = -ENOMEM;
		goto out_put;
	}
	ret = kcoll_nl_dev_fill(msg, dev, KCOLL_CMD_DEV_GET, info->snd_portid, info->snd_seq, 0);
	if (ret) {
		nlmsg_free(msg);
		NL_SET_ERR_MSG(info->extack, "device description too large");
		goto out_put;
	}
	ret = genlmsg_reply(msg, info);
out_put:
	kcoll_dev_put(dev);
	return ret;
}

static int kcoll_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long pos = cb->args[0];
	struct kcoll_dev *dev;
	int ret;

	ret = kcoll_nl_dump_check(cb);
	if (ret)
		return ret;

	while ((dev = kcoll_dev_get_nth(pos))) {
		ret = kcoll_nl_dev_fill(skb, dev, KCOLL_CMD_DEV_GET, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI);
		kcoll_dev_put(dev);
		if (ret)
			break;
		pos++;
	}
	cb->args[0] = pos;
	if (ret && !skb->len) {
		NL_SET_ERR_MSG(cb->extack, "device description too large");
		return ret;
	}
	return skb->len;
}

/*
 * A GID selection must name a valid entry.  The device is checked, not one port: a comm's
 * port is the one rdma_cm finds for the rank's address, unknown here, so the index must be
 * inside the GID table of, and valid on, at least one port (on the single-port devices kcoll
 * is tested with, port 1).  The table can change afterwards (an address goes away): the
 * check at connection time (kcoll_conn_established()) is the one that counts.
 *
 * Context: process (ib_query_port() may sleep); the caller holds a user reference on @dev.
 */
static int kcoll_nl_check_gid_index(struct kcoll_dev *dev, struct nlattr *nla,
				    struct netlink_ext_ack *extack)
{
	struct ib_device *ibdev = dev->ibdev;
	int index = nla_get_s32(nla);
	const struct ib_gid_attr *ga;
	struct ib_port_attr attr;
	bool in_range = false;
	u32 port;

	if (index < 0)
		return 0;	/* -1: no selection, valid on every device */
	if (rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev))) {
		NL_SET_ERR_MSG_ATTR(extack, nla,
				    "iWARP devices have no GID to select: the address picks the connection");
		return -EOPNOTSUPP;
	}
	rdma_for_each_port(ibdev, port) {
		if (ib_query_port(ibdev, port, &attr) || index >= attr.gid_tbl_len)
			continue;
		in_range = true;
		ga = rdma_get_gid_attr(ibdev, port, index);
		if (!IS_ERR(ga)) {
			rdma_put_gid_attr(ga);
			return 0;
		}
	}
	if (!in_range)
		NL_SET_ERR_MSG_ATTR(extack, nla, "gid-index is beyond the device's GID table");
	else
		NL_SET_ERR_MSG_ATTR(extack, nla, "gid-index names an empty GID table entry");
	return -EINVAL;
}

static int kcoll_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *allowed = info->attrs[KCOLL_A_DEV_ALLOWED];
	struct nlattr *gid = info->attrs[KCOLL_A_DEV_GID_INDEX];
	struct nlattr *tos = info->attrs[KCOLL_A_DEV_TOS];
	struct kcoll_dev *dev;
	int ret;

	if (kcoll_nl_check_bounds(info->attrs, kcoll_nl_dev_bounds, KCOLL_A_DEV_MAX,
				  info->extack) ||
	    kcoll_nl_missing(info, KCOLL_A_DEV_NAME, "missing device name (name)"))
		return -EINVAL;
	if (!allowed && !tos && !gid) {
		NL_SET_ERR_MSG(info->extack, "nothing to change: give allowed, tos or gid-index");
		return -EINVAL;
	}
	dev = kcoll_nl_dev_from_attr(info);
	if (!dev)
		return -ENODEV;
	/* Checked before anything changes: a refused request applies nothing. */
	if (gid) {
		ret = kcoll_nl_check_gid_index(dev, gid, info->extack);
		if (ret) {
			kcoll_dev_put(dev);
			return ret;
		}
	}
	if (allowed && READ_ONCE(dev->allowed) != !!nla_get_u8(allowed)) {
		WRITE_ONCE(dev->allowed, !!nla_get_u8(allowed));
		dev_info(&dev->ibdev->dev, "kcoll: device %s by an administrator\n",
			 dev->allowed ? "allowed" : "forbidden");
	}
	if (tos)
		WRITE_ONCE(dev->tos, nla_get_s32(tos));
	if (gid && READ_ONCE(dev->gid_index) != nla_get_s32(gid)) {
		WRITE_ONCE(dev->gid_index, nla_get_s32(gid));
		if (dev->gid_index < 0)
			dev_info(&dev->ibdev->dev,
				 "kcoll: GID selection cleared by an administrator\n");
		else
			dev_info(&dev->ibdev->dev,
				 "kcoll: GID index %d selected by an administrator\n",
				 dev->gid_index);
	}
	kcoll_dev_put(dev);
	return 0;
}

/* ---- communicators ----------------------------------------------------------------------- */

/* Fill: one peer of a description.  No lock: the description is a copy. */
static int kcoll_nl_put_peer(struct sk_buff *skb, const struct kcoll_peer_desc *p)
{
	struct nlattr *nest = nla_nest_start(skb, KCOLL_A_COMM_PEER);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, KCOLL_A_PEER_RANK, p->rank) ||
	    nla_put_u8(skb, KCOLL_A_PEER_STATE, p->state) ||
	    nla_put_u8(skb, KCOLL_A_PEER_READY, p->ready) ||
	    nla_put_u8(skb, KCOLL_A_PEER_LEFT, p->left) ||
	    nla_put_s32(skb, KCOLL_A_PEER_LAST_ERR, p->last_err) ||
	    nla_put_u32(skb, KCOLL_A_PEER_PENDING_SENDS, p->pending_sends) ||
	    nla_put_u32(skb, KCOLL_A_PEER_PENDING_RECVS, p->pending_recvs) ||
	    nla_put_u32(skb, KCOLL_A_PEER_IDLE_MS, p->idle_ms) ||
	    (p->sgid_index >= 0 && nla_put_u32(skb, KCOLL_A_PEER_SGID_INDEX, p->sgid_index)) ||
	    (p->gid_type >= 0 && nla_put_u8(skb, KCOLL_A_PEER_GID_TYPE, p->gid_type))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Fill: the oldest operation not complete, if any. */
static int kcoll_nl_put_op(struct sk_buff *skb, const struct kcoll_op_desc *o)
{
	bool coll = o->type == KCOLL_OP_TYPE_COLL;
	struct nlattr *nest;

	if (o->type == KCOLL_OP_TYPE_NONE)
		return 0;
	nest = nla_nest_start(skb, KCOLL_A_COMM_OP);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u8(skb, KCOLL_A_OP_TYPE, o->type) ||
	    nla_put_u64_64bit(skb, KCOLL_A_OP_ID, o->id, KCOLL_A_OP_PAD) ||
	    (coll && nla_put_u8(skb, KCOLL_A_OP_COLL, o->coll)) ||
	    nla_put_u64_64bit(skb, KCOLL_A_OP_BYTES, o->bytes, KCOLL_A_OP_PAD) ||
	    (coll && (nla_put_u32(skb, KCOLL_A_OP_STEP, o->step) ||
		      nla_put_u32(skb, KCOLL_A_OP_NSTEPS, o->nsteps))) ||
	    (o->wait_peer != U32_MAX && nla_put_u32(skb, KCOLL_A_OP_WAIT_PEER, o->wait_peer))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * Fill: one communicator's description (kcoll_comm_describe()), without any lock.  Peers
 * that do not fit are left out (with the peers-truncated flag) when @may_truncate, so a
 * dump goes on.
 */
static int kcoll_nl_comm_fill(struct sk_buff *skb, const struct kcoll_comm_desc *d,
			      const struct kcoll_peer_desc *peers, struct user_namespace *uns,
			      u32 portid, u32 seq, int flags, bool may_truncate)
{
	struct nlattr *peers_start;
	void *hdr;
	u32 i;

	hdr = genlmsg_put(skb, portid, seq, &kcoll_nl_family, flags, KCOLL_CMD_COMM_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, KCOLL_A_COMM_ID, d->comm_id, KCOLL_A_COMM_PAD) ||
	    nla_put_u32(skb, KCOLL_A_COMM_RANK, d->rank) ||
	    nla_put_u32(skb, KCOLL_A_COMM_NRANKS, d->nranks) ||
	    nla_put_u32(skb, KCOLL_A_COMM_OWNER_PID, d->owner_pid) ||
	    nla_put_u32(skb, KCOLL_A_COMM_OWNER_UID, from_kuid_munged(uns, d->owner_uid)) ||
	    nla_put_u32(skb, KCOLL_A_COMM_NETNS, d->netns) ||
	    (d->dev_name[0] && nla_put_string(skb, KCOLL_A_COMM_DEV_NAME, d->dev_name)) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_TX_BYTES, d->tx_bytes, KCOLL_A_COMM_PAD) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_RX_BYTES, d->rx_bytes, KCOLL_A_COMM_PAD) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_TX_OPS, d->tx_ops, KCOLL_A_COMM_PAD) ||
	    nla_put_u64_64bit(skb, KCOLL_A_COMM_RX_OPS, d->rx_ops, KCOLL_A_COMM_PAD) ||
	    nla_put_u8(skb, KCOLL_A_COMM_STATE, d->state) ||
	    nla_put_s32(skb, KCOLL_A_COMM_ERROR, d->error) ||
	    (d->failed_rank != U32_MAX &&
	     nla_put_u32(skb, KCOLL_A_COMM_FAILED_RANK, d->failed_rank)) ||
	    nla_put_u32(skb, KCOLL_A_COMM_PEERS_UP, d->peers_up) ||
	    kcoll_nl_put_op(skb, &d->op))
		goto out_cancel;
	peers_start = (struct nlattr *)skb_tail_pointer(skb);
	for (i = 0; i < d->npeers; i++) {
		if (kcoll_nl_put_peer(skb, &peers[i]))
			break;
	}
	if (i < d->npeers) {
		nlmsg_trim(skb, peers_start);
		if (!may_truncate || nla_put_flag(skb, KCOLL_A_COMM_PEERS_TRUNCATED))
			goto out_cancel;
	}
	genlmsg_end(skb, hdr);
	return 0;

out_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/**
 * struct kcoll_nl_comm_snap - a prepared communicator: its description and its peers'
 * @d:		the description
 * @peers:	room for @cap peers (kvmalloc'ed, grown as needed), @d.npeers of them filled
 * @cap:	entries @peers has room for
 */
struct kcoll_nl_comm_snap {
	struct kcoll_comm_desc d;
	struct kcoll_peer_desc *peers;
	u32 cap;
};

/*
 * Prepare: describe @comm, peers included.  Context: under kcoll_comm_walk() (so the
 * device's name is included); allocates.
 */
static int kcoll_nl_comm_prepare(struct kcoll_nl_comm_snap *s, struct kcoll_comm *comm)
{
	struct kcoll_peer_desc *peers;

	if (s->cap < comm->nranks) {
		peers = kcoll_fi(ALLOC, NULL, kvmalloc_array(comm->nranks, sizeof(*peers),
							     GFP_KERNEL));
		if (!peers)
			return -ENOMEM;
		kvfree(s->peers);
		s->peers = peers;
		s->cap = comm->nranks;
	}
	kcoll_comm_describe(comm, &s->d, s->peers, true);
	return 0;
}

struct kcoll_nl_comm_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	struct net *net;
	struct kcoll_nl_who who;
	struct kcoll_nl_comm_snap snap;
};

static int kcoll_nl_comm_dump_one(struct kcoll_comm *comm, void *arg)
{
	struct kcoll_nl_comm_dump *d = arg;
	int ret;

	if (!kcoll_nl_comm_visible(comm, d->net, &d->who))
		return 0;
	ret = kcoll_nl_comm_prepare(&d->snap, comm);
	if (ret)
		return ret;
	return kcoll_nl_comm_fill(d->skb, &d->snap.d, d->snap.peers,
				  sk_user_ns(NETLINK_CB(d->cb->skb).sk),
				  NETLINK_CB(d->cb->skb).portid, d->cb->nlh->nlmsg_seq,
				  NLM_F_MULTI, true);
}

static int kcoll_nl_comm_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct kcoll_nl_comm_dump d = { .skb = skb, .cb = cb, .net = sock_net(skb->sk),
					.who = KCOLL_NL_WHO(cb->skb) };
	unsigned long pos = cb->args[0];
	int ret;

	ret = kcoll_nl_dump_check(cb);
	if (ret)
		return ret;
	ret = kcoll_comm_walk(&pos, kcoll_nl_comm_dump_one, &d);
	kvfree(d.snap.peers);
	cb->args[0] = pos;
	if (ret && !skb->len) {
		if (ret == -EMSGSIZE)
			NL_SET_ERR_MSG(cb->extack, "communicator description too large");
		return ret;
	}
	return skb->len;
}

/* Find and prepare one comm by namespace, id and rank. */
struct kcoll_nl_comm_find {
	struct net *net;
	u64 comm_id;
	u32 rank;
	struct kcoll_nl_who who;
	struct kcoll_nl_comm_snap snap;
};

static int kcoll_nl_comm_find_one(struct kcoll_comm *comm, void *arg)
{
	struct kcoll_nl_comm_find *f = arg;

	if (comm->comm_id != f->comm_id || comm->rank != f->rank || !net_eq(comm->net, f->net) ||
	    !kcoll_nl_who_owns(&f->who, comm))
		return 0;
	return kcoll_nl_comm_prepare(&f->snap, comm) ?: 1;
}

static bool kcoll_nl_comm_key(struct genl_info *info, u64 *comm_id, u32 *rank)
{
	struct nlattr *id = info->attrs[KCOLL_A_COMM_ID];

	if (kcoll_nl_check_bounds(info->attrs, kcoll_nl_comm_bounds, KCOLL_A_COMM_MAX,
				  info->extack))
		return false;
	if (id && !nla_get_u64(id)) {
		NL_SET_ERR_MSG_ATTR(info->extack, id, "communicator id must not be 0");
		return false;
	}
	if (kcoll_nl_missing(info, KCOLL_A_COMM_ID, "missing communicator id (id)") ||
	    kcoll_nl_missing(info, KCOLL_A_COMM_RANK, "missing rank (rank)"))
		return false;
	*comm_id = nla_get_u64(info->attrs[KCOLL_A_COMM_ID]);
	*rank = nla_get_u32(info->attrs[KCOLL_A_COMM_RANK]);
	return true;
}

static int kcoll_nl_comm_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kcoll_nl_comm_find f = { .net = genl_info_net(info), .who = KCOLL_NL_WHO(skb) };
	struct sk_buff *msg = NULL;
	unsigned long pos = 0;
	int ret;

	if (!kcoll_nl_comm_key(info, &f.comm_id, &f.rank))
		return -EINVAL;
	ret = kcoll_comm_walk(&pos, kcoll_nl_comm_find_one, &f);
	if (ret != 1) {
		if (!ret) {
			NL_SET_ERR_MSG(info->extack,
				       "no communicator with this id and rank in this namespace");
			ret = -ENOENT;
		}
		goto out;
	}
	msg = kcoll_fi(ALLOC, NULL, genlmsg_new(NLMSG_GOODSIZE + (size_t)f.snap.d.npeers * 96,
						GFP_KERNEL));
	if (!msg) {
		ret = -ENOMEM;
		goto out;
	}
	ret = kcoll_nl_comm_fill(msg, &f.snap.d, f.snap.peers, sk_user_ns(NETLINK_CB(skb).sk),
				 info->snd_portid, info->snd_seq, 0, false);
	if (ret) {
		nlmsg_free(msg);
		NL_SET_ERR_MSG(info->extack, "communicator description too large");
		goto out;
	}
	ret = genlmsg_reply(msg, info);
out:
	kvfree(f.snap.peers);
	return ret;
}

/*
 * Its owner or an administrator may abort a comm.  A caller who is neither learns nothing of
 * the comms it does not own: EPERM whether the comm exists or not.
 */
static int kcoll_nl_comm_abort_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kcoll_nl_who who = KCOLL_NL_WHO(skb);
	struct kcoll_comm *comm;
	u64 comm_id;
	u32 rank;

	if (!kcoll_nl_comm_key(info, &comm_id, &rank))
		return -EINVAL;
	comm = kcoll_comm_find_get(genl_info_net(info), comm_id, rank);
	if (!(comm ? kcoll_nl_who_owns(&who, comm) : kcoll_nl_who_admin(&who))) {
		if (comm)
			kcoll_comm_put(comm);
		NL_SET_ERR_MSG(info->extack,
			       "you own no communicator with this id and rank; aborting another user's needs CAP_NET_ADMIN in the initial user namespace");
		return -EPERM;
	}
	if (!comm) {
		NL_SET_ERR_MSG(info->extack,
			       "no communicator with this id and rank in this namespace");
		return -ENOENT;
	}
	kcoll_comm_admin_abort(comm);
	kcoll_comm_put(comm);
	return 0;
}

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
	    nla_put_u32(skb, KCOLL_A_CONFIG_TREE_RANKS, c->tree_ranks))
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

static int kcoll_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info)
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

static int kcoll_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info)
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
static int kcoll_nl_engine_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
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

static int kcoll_nl_engine_set_doit(struct sk_buff *skb, struct genl_info *info)
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

static struct genl_family kcoll_nl_family = {
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
static struct sk_buff *kcoll_nl_event_new(struct net *net, u8 cmd, void **hdr)
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

static void kcoll_nl_event_send(struct net *net, struct sk_buff *skb, void *hdr)
{
	genlmsg_end(skb, hdr);
	genlmsg_multicast_netns(&kcoll_nl_family, net, skb, 0, KCOLL_NL_MCGRP_EVENTS,
				GFP_ATOMIC);
}

static int kcoll_nl_comm_key_put(struct sk_buff *skb, struct kcoll_comm *comm)
{
	return nla_put_u64_64bit(skb, KCOLL_A_COMM_ID, comm->comm_id, KCOLL_A_COMM_PAD) ||
	       nla_put_u32(skb, KCOLL_A_COMM_RANK, comm->rank) ||
	       nla_put_u32(skb, KCOLL_A_COMM_NRANKS, comm->nranks) ||
	       nla_put_u32(skb, KCOLL_A_COMM_NETNS, comm->net->ns.inum) ? -EMSGSIZE : 0;
}

/**
 * kcoll_nl_event_comm - tell the events group about a communicator
 * @comm:	the communicator (its state and error are read as they are now)
 * @ev:		created, destroyed, failed
 *
 * Context: any; takes no lock (callers may hold comm->lock).
 */
void kcoll_nl_event_comm(struct kcoll_comm *comm, enum kcoll_nl_comm_event ev)
{
	static const u8 cmds[] = {
		[KCOLL_NL_COMM_CREATED]		= KCOLL_CMD_COMM_CREATED_NTF,
		[KCOLL_NL_COMM_DESTROYED]	= KCOLL_CMD_COMM_DESTROYED_NTF,
		[KCOLL_NL_COMM_FAILED]		= KCOLL_CMD_COMM_FAILED_NTF,
	};
	struct sk_buff *skb;
	u32 failed;
	void *hdr;

	if (!KCOLL_NL_COMM_EVENTS)
		return;
	skb = kcoll_nl_event_new(comm->net, cmds[ev], &hdr);
	if (!skb)
		return;
	failed = READ_ONCE(comm->failed_rank);
	if (kcoll_nl_comm_key_put(skb, comm) ||
	    nla_put_u32(skb, KCOLL_A_COMM_OWNER_PID, comm->owner_pid) ||
	    nla_put_u8(skb, KCOLL_A_COMM_STATE, READ_ONCE(comm->state)) ||
	    nla_put_s32(skb, KCOLL_A_COMM_ERROR, READ_ONCE(comm->error)) ||
	    (failed < comm->nranks && nla_put_u32(skb, KCOLL_A_COMM_FAILED_RANK, failed))) {
		nlmsg_free(skb);
		return;
	}
	kcoll_nl_event_send(comm->net, skb, hdr);
}

/**
 * kcoll_nl_event_peer_lost - tell the events group a communicator lost a peer
 * @comm:	the communicator
 * @peer:	the peer's rank
 * @err:	why: -ECONNRESET for a departure (BYE) or a lost connection, ...
 *
 * Context: any; takes no lock.
 */
void kcoll_nl_event_peer_lost(struct kcoll_comm *comm, u32 peer, int err)
{
	struct sk_buff *skb;
	void *hdr;

	if (!KCOLL_NL_COMM_EVENTS)
		return;
	skb = kcoll_nl_event_new(comm->net, KCOLL_CMD_PEER_LOST_NTF, &hdr);
	if (!skb)
		return;
	if (kcoll_nl_comm_key_put(skb, comm) ||
	    nla_put_u32(skb, KCOLL_A_COMM_PEER_RANK, peer) ||
	    nla_put_s32(skb, KCOLL_A_COMM_ERROR, err)) {
		nlmsg_free(skb);
		return;
	}
	kcoll_nl_event_send(comm->net, skb, hdr);
}

/**
 * kcoll_nl_event_dev - tell the events group (initial namespace) about a device
 * @dev:	the device (dev->ibdev valid)
 * @added:	added, or being removed
 *
 * Context: process context (the ib_client callbacks).
 */
void kcoll_nl_event_dev(struct kcoll_dev *dev, bool added)
{
	struct sk_buff *skb;
	void *hdr;

	skb = kcoll_nl_event_new(&init_net, added ? KCOLL_CMD_DEV_ADDED_NTF :
						    KCOLL_CMD_DEV_REMOVED_NTF, &hdr);
	if (!skb)
		return;
	if (nla_put_string(skb, KCOLL_A_DEV_NAME, dev_name(&dev->ibdev->dev)) ||
	    (added && (nla_put_u8(skb, KCOLL_A_DEV_NODE_TYPE, kcoll_nl_node_type(dev)) ||
		       nla_put_u8(skb, KCOLL_A_DEV_ALLOWED, READ_ONCE(dev->allowed))))) {
		nlmsg_free(skb);
		return;
	}
	kcoll_nl_event_send(&init_net, skb, hdr);
}

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
