// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family's devices: dev-get (one or a dump, with ports and GIDs),
 * dev-set (allowed, tos, GID selection) and the dev-added/dev-removed events.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <rdma/ib_cache.h>

#include "kcoll.h"
#include "kcoll_nl.h"
#include "kcoll_nl_int.h"

static const struct kcoll_nl_bound kcoll_nl_dev_bounds[KCOLL_A_DEV_MAX + 1] = {
	[KCOLL_A_DEV_ALLOWED]	= { 0, 1, false, "allowed must be 0 or 1" },
	[KCOLL_A_DEV_TOS]	= { -1, 255, true, "tos must be -1 to 255" },
	[KCOLL_A_DEV_GID_INDEX]	= { -1, S32_MAX, true,
				    "gid-index must be -1 (no selection) or a GID table index" },
};

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

int kcoll_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
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

int kcoll_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
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

int kcoll_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
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

/* ---- events ------------------------------------------------------------------------------ */

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
