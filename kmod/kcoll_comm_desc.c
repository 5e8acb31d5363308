// SPDX-License-Identifier: GPL-2.0
/*
 * What a communicator shows: one snapshot (struct kcoll_comm_desc) prepared under the
 * comm's lock by kcoll_comm_describe(), and its renderings that need no lock: the sysfs
 * directory /sys/kernel/kcoll/comms/<comm_id>-<rank>/ and the COMM_QUERY ioctl here, the
 * netlink reply and events in kcoll_nl_comm.c.  A field added to the snapshot is seen the
 * same way by all of them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/kobject.h>
#include <linux/string.h>
#include <net/net_namespace.h>
#include <linux/kcoll_netlink.h>

#include "kcoll.h"
#include "kcoll_comm_desc.h"

static u32 kcoll_comm_desc_count(struct list_head *head)
{
	struct list_head *p;
	u32 n = 0;

	list_for_each(p, head)
		n++;
	return n;
}

/* Context: comm->lock held. */
static void kcoll_comm_desc_peer(struct kcoll_peer_desc *p, struct kcoll_conn *conn)
{
	p->rank = conn->peer;
	p->state = conn->state;
	p->ready = conn->peer_ready;
	p->left = conn->peer_left;
	p->last_err = conn->last_err;
	p->pending_sends = kcoll_comm_desc_count(&conn->sendq);
	p->pending_recvs = kcoll_comm_desc_count(&conn->recvq);
	p->idle_ms = conn->last_ok ? jiffies_to_msecs(jiffies - conn->last_ok) : 0;
	p->sgid_index = conn->sgid_index;
	p->gid_type = conn->gid_type;
	p->transport = conn->tp->name;
	/* Locality: constant since creation; U32_MAX when the comm was given none. */
	p->host = U32_MAX;
	p->nic = U32_MAX;
	p->leaf = U32_MAX;
	if (conn->comm->loc.host) {
		p->host = conn->comm->loc.host[conn->peer];
		p->nic = conn->comm->loc.nic[conn->peer];
		p->leaf = conn->comm->loc.leaf[conn->peer];
	}
}

/* The oldest operation not complete.  Context: comm->lock held. */
static void kcoll_comm_desc_op(struct kcoll_op_desc *o, struct kcoll_comm *comm)
{
	struct kcoll_op *op;
	struct kcoll_req *req;
	u32 i;

	o->type = KCOLL_OP_TYPE_NONE;
	o->wait_peer = U32_MAX;
	/* A running collective: its stage, and the first peer of it not heard from yet. */
	op = list_first_entry_or_null(&comm->ops, struct kcoll_op, list);
	if (op && op->state == KCOLL_OP_RUNNING) {
		for (i = op->stage_begin; i < op->stage_end; i++) {
			if (op->sstate[i] == KCOLL_OP_STEP_POSTED) {
				o->wait_peer = op->steps[i].peer;
				break;
			}
		}
		o->type = KCOLL_OP_TYPE_COLL;
		o->id = op->tag >> 32;
		o->coll = op->args.coll;
		o->bytes = op->args.count * op->args.elem_size;
		o->step = op->stage_begin;
		o->nsteps = op->nsteps;
		return;
	}
	list_for_each_entry(req, &comm->reqs, all) {
		if (req->op || req->state == KCOLL_REQ_DONE)
			continue;
		o->type = req->send ? KCOLL_OP_TYPE_P2P_SEND : KCOLL_OP_TYPE_P2P_RECV;
		o->id = req->seq;
		o->bytes = req->mem.len;
		o->wait_peer = req->conn->peer;
		return;
	}
}

/* Locality: constant since creation, read without a lock. */
static void kcoll_comm_desc_loc(struct kcoll_comm_desc *d, const struct kcoll_comm *comm)
{
	const struct kcoll_loc_groups *g = &comm->loc;

	d->loc_known = g->host;
	d->local_rank = g->host ? g->local_rank : 0;
	d->local_size = g->host ? g->local_size : 1;
	d->nhosts = g->host ? g->nhosts : comm->nranks;
	d->nnics = g->nnics;
	d->nleaves = g->nleaves;
	if (g->host) {
		d->host = g->host[comm->rank];
		d->nic = g->nic[comm->rank];
		d->leaf = g->leaf[comm->rank];
	}
}

/**
 * kcoll_comm_describe_ident - prepare: a communicator's identity only
 * @comm:	the communicator (referenced)
 * @d:		filled in: the identity; every other field 0
 *
 * The identity is fixed at creation: no lock.  For the netlink events, with
 * kcoll_comm_describe_status_locked() when they report the state.
 */
void kcoll_comm_describe_ident(struct kcoll_comm *comm, struct kcoll_comm_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->comm_id = comm->comm_id;
	d->rank = comm->rank;
	d->nranks = comm->nranks;
	d->owner_pid = comm->owner_pid;
	d->owner_uid = comm->owner_uid;
	d->netns = comm->net ? comm->net->ns.inum : 0;
}

/**
 * kcoll_comm_describe_status_locked - prepare: a communicator's state, error, failed rank
 * @comm:	the communicator
 * @d:		its state, error and failed_rank filled in, read together
 *
 * Context: comm->lock held.
 */
void kcoll_comm_describe_status_locked(struct kcoll_comm *comm, struct kcoll_comm_desc *d)
{
	lockdep_assert_held(&comm->lock);
	d->state = comm->state;
	d->error = comm->error;
	d->failed_rank = comm->failed_rank < comm->nranks ? comm->failed_rank : U32_MAX;
}

/**
 * kcoll_comm_describe - prepare: a snapshot of everything shown about a communicator
 * @comm:	the communicator (referenced, or listed under kcoll_comm_walk())
 * @d:		filled in
 * @peers:	NULL, or room for comm->nranks entries: every peer but this rank, in rank order
 *		(@d->npeers says how many)
 * @listed:	the caller runs under kcoll_comm_walk(), which keeps comm->dev valid: the
 *		device's name is included (else @d->dev_name is "")
 *
 * The state, error, connections and operations are read in one critical section of
 * comm->lock, so they agree with each other; the counters are read as they are.
 *
 * Context: process context; takes comm->lock.
 */
void kcoll_comm_describe(struct kcoll_comm *comm, struct kcoll_comm_desc *d,
			 struct kcoll_peer_desc *peers, bool listed)
{
	struct kcoll_dev *dev;
	u32 i;

	kcoll_comm_describe_ident(comm, d);
	if (listed) {
		kcoll_comm_walk_assert_held();
		dev = READ_ONCE(comm->dev);
		if (dev)
			strscpy(d->dev_name, dev_name(&dev->ibdev->dev), sizeof(d->dev_name));
	}
	d->tx_bytes = atomic64_read(&comm->tx_bytes);
	d->rx_bytes = atomic64_read(&comm->rx_bytes);
	d->tx_ops = atomic64_read(&comm->tx_ops);
	d->rx_ops = atomic64_read(&comm->rx_ops);
	d->coll_ops = atomic64_read(&comm->coll_ops);
	d->coll_bytes = atomic64_read(&comm->coll_bytes);
	d->proto_errors = atomic64_read(&comm->proto_errors);
	kcoll_comm_desc_loc(d, comm);

	spin_lock_bh(&comm->lock);
	kcoll_comm_describe_status_locked(comm, d);
	for (i = 0; i < comm->nranks; i++) {
		d->peers_up += comm->conns[i].state == KCOLL_CONN_UP;
		if (peers && i != comm->rank)
			kcoll_comm_desc_peer(&peers[d->npeers++], &comm->conns[i]);
	}
	kcoll_comm_desc_op(&d->op, comm);
	spin_unlock_bh(&comm->lock);
}

/* ---- sysfs: /sys/kernel/kcoll/comms/<comm_id>-<rank>/ ------------------------------------ */

static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct kcoll_comm_desc d;

	kcoll_comm_describe(container_of(kobj, struct kcoll_comm, kobj), &d, NULL, false);
	return sysfs_emit(buf, "%s\n", kcoll_comm_state_names[d.state]);
}

/* A file showing a number of the description @d. */
#define KCOLL_COMM_ATTR_NUM(name, fmt, expr)						\
static ssize_t name##_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)	\
{											\
	struct kcoll_comm_desc d;							\
											\
	kcoll_comm_describe(container_of(kobj, struct kcoll_comm, kobj), &d, NULL, false); \
	return sysfs_emit(buf, fmt "\n", (expr));					\
}											\
static struct kobj_attribute kcoll_comm_attr_##name = __ATTR_RO(name)

#define KCOLL_COMM_ATTR_U64(name, expr) \
	KCOLL_COMM_ATTR_NUM(name, "%llu", (unsigned long long)(expr))

KCOLL_COMM_ATTR_NUM(error, "%d", d.error);
KCOLL_COMM_ATTR_U64(rank, d.rank);
KCOLL_COMM_ATTR_U64(nranks, d.nranks);
KCOLL_COMM_ATTR_U64(owner_pid, d.owner_pid);
KCOLL_COMM_ATTR_U64(peers_connected, d.peers_up);
KCOLL_COMM_ATTR_U64(tx_bytes, d.tx_bytes);
KCOLL_COMM_ATTR_U64(rx_bytes, d.rx_bytes);
KCOLL_COMM_ATTR_U64(tx_ops, d.tx_ops);
KCOLL_COMM_ATTR_U64(rx_ops, d.rx_ops);
KCOLL_COMM_ATTR_U64(coll_ops, d.coll_ops);
KCOLL_COMM_ATTR_U64(coll_bytes, d.coll_bytes);
KCOLL_COMM_ATTR_U64(proto_errors, d.proto_errors);
KCOLL_COMM_ATTR_U64(local_rank, d.local_rank);
KCOLL_COMM_ATTR_U64(local_size, d.local_size);
KCOLL_COMM_ATTR_U64(hosts, d.nhosts);

static struct kobj_attribute kcoll_comm_attr_state = __ATTR_RO(state);

/* The transport of the comm's peers (chosen per comm: kcoll_comm_attach()); none for one rank. */
static ssize_t transport_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct kcoll_comm *comm = container_of(kobj, struct kcoll_comm, kobj);

	return sysfs_emit(buf, "%s\n", comm->nranks > 1 ? kcoll_comm_mem_tp(comm)->name : "none");
}

static struct kobj_attribute kcoll_comm_attr_transport = __ATTR_RO(transport);

static struct attribute *kcoll_comm_attrs[] = {
	&kcoll_comm_attr_state.attr,
	&kcoll_comm_attr_error.attr,
	&kcoll_comm_attr_rank.attr,
	&kcoll_comm_attr_nranks.attr,
	&kcoll_comm_attr_owner_pid.attr,
	&kcoll_comm_attr_peers_connected.attr,
	&kcoll_comm_attr_tx_bytes.attr,
	&kcoll_comm_attr_rx_bytes.attr,
	&kcoll_comm_attr_tx_ops.attr,
	&kcoll_comm_attr_rx_ops.attr,
	&kcoll_comm_attr_coll_ops.attr,
	&kcoll_comm_attr_coll_bytes.attr,
	&kcoll_comm_attr_proto_errors.attr,
	&kcoll_comm_attr_local_rank.attr,
	&kcoll_comm_attr_local_size.attr,
	&kcoll_comm_attr_hosts.attr,
	&kcoll_comm_attr_transport.attr,
	NULL,
};

static const struct attribute_group kcoll_comm_group = {
	.attrs = kcoll_comm_attrs,
};

const struct attribute_group *kcoll_comm_groups[] = {
	&kcoll_comm_group,
	NULL,
};

/* ---- the COMM_QUERY ioctl ----------------------------------------------------------------- */

long kcoll_ioctl_comm_query(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_comm_query q;
	struct kcoll_comm_desc d;
	struct kcoll_comm *comm;
	u32 usize, handle;
	int ret;

	ret = kcoll_uarg_copy_in(&q, sizeof(q), KCOLL_COMM_QUERY_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (q.flags || q.reserved0 || q.reserved[0] || q.reserved[1])
		return -EINVAL;
	handle = q.handle;
	comm = kcoll_comm_lookup(ctx, handle);
	if (!comm)
		return -ENOENT;
	kcoll_comm_describe(comm, &d, NULL, false);
	kcoll_comm_put(comm);
	memset(&q, 0, sizeof(q));
	q.size = usize;
	q.handle = handle;
	q.state = d.state;
	q.error = d.error;
	q.rank = d.rank;
	q.nranks = d.nranks;
	q.comm_id = d.comm_id;
	q.tx_bytes = d.tx_bytes;
	q.rx_bytes = d.rx_bytes;
	q.tx_ops = d.tx_ops;
	q.rx_ops = d.rx_ops;
	return kcoll_uarg_copy_out(uarg, usize, &q, sizeof(q));
}
