// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family's communicators: comm-get (one or a dump) renders the
 * description kcoll_comm_describe() prepares (kcoll_comm_desc.c), comm-abort, and the
 * communicator events.  Who may see and abort which communicator: kcoll_nl.c's header.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "kcoll.h"
#include "kcoll_comm_desc.h"
#include "kcoll_nl.h"
#include "kcoll_nl_int.h"

static const struct kcoll_nl_bound kcoll_nl_comm_bounds[KCOLL_A_COMM_MAX + 1] = {
	[KCOLL_A_COMM_RANK]	= { 0, KCOLL_MAX_RANKS - 1, false, "rank must be 0 to 4095" },
};

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
	    (p->gid_type >= 0 && nla_put_u8(skb, KCOLL_A_PEER_GID_TYPE, p->gid_type)) ||
	    nla_put_string(skb, KCOLL_A_PEER_TRANSPORT, p->transport) ||
	    (p->host != U32_MAX && (nla_put_u32(skb, KCOLL_A_PEER_HOST, p->host) ||
				    nla_put_u32(skb, KCOLL_A_PEER_NIC, p->nic) ||
				    nla_put_u32(skb, KCOLL_A_PEER_LEAF, p->leaf)))) {
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
	    nla_put_u32(skb, KCOLL_A_COMM_LOCAL_RANK, d->local_rank) ||
	    nla_put_u32(skb, KCOLL_A_COMM_LOCAL_SIZE, d->local_size) ||
	    nla_put_u32(skb, KCOLL_A_COMM_HOSTS, d->nhosts) ||
	    (d->loc_known && (nla_put_u32(skb, KCOLL_A_COMM_NICS, d->nnics) ||
			      nla_put_u32(skb, KCOLL_A_COMM_LEAVES, d->nleaves) ||
			      nla_put_u32(skb, KCOLL_A_COMM_HOST, d->host) ||
			      nla_put_u32(skb, KCOLL_A_COMM_NIC, d->nic) ||
			      nla_put_u32(skb, KCOLL_A_COMM_LEAF, d->leaf))) ||
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

int kcoll_nl_comm_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
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

int kcoll_nl_comm_get_doit(struct sk_buff *skb, struct genl_info *info)
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
int kcoll_nl_comm_abort_doit(struct sk_buff *skb, struct genl_info *info)
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

/* ---- events ------------------------------------------------------------------------------ */

/* The key of an event's communicator, from its description. */
static int kcoll_nl_comm_key_put(struct sk_buff *skb, const struct kcoll_comm_desc *d)
{
	return nla_put_u64_64bit(skb, KCOLL_A_COMM_ID, d->comm_id, KCOLL_A_COMM_PAD) ||
	       nla_put_u32(skb, KCOLL_A_COMM_RANK, d->rank) ||
	       nla_put_u32(skb, KCOLL_A_COMM_NRANKS, d->nranks) ||
	       nla_put_u32(skb, KCOLL_A_COMM_NETNS, d->netns) ? -EMSGSIZE : 0;
}

/* fill: a communicator event from its prepared description.  Context: any; no lock. */
static void kcoll_nl_event_comm_fill(struct net *net, const struct kcoll_comm_desc *d,
				     enum kcoll_nl_comm_event ev)
{
	static const u8 cmds[] = {
		[KCOLL_NL_COMM_CREATED]		= KCOLL_CMD_COMM_CREATED_NTF,
		[KCOLL_NL_COMM_DESTROYED]	= KCOLL_CMD_COMM_DESTROYED_NTF,
		[KCOLL_NL_COMM_FAILED]		= KCOLL_CMD_COMM_FAILED_NTF,
	};
	struct sk_buff *skb;
	void *hdr;

	skb = kcoll_nl_event_new(net, cmds[ev], &hdr);
	if (!skb)
		return;
	if (kcoll_nl_comm_key_put(skb, d) ||
	    nla_put_u32(skb, KCOLL_A_COMM_OWNER_PID, d->owner_pid) ||
	    nla_put_u8(skb, KCOLL_A_COMM_STATE, d->state) ||
	    nla_put_s32(skb, KCOLL_A_COMM_ERROR, d->error) ||
	    (d->failed_rank != U32_MAX &&
	     nla_put_u32(skb, KCOLL_A_COMM_FAILED_RANK, d->failed_rank))) {
		nlmsg_free(skb);
		return;
	}
	kcoll_nl_event_send(net, skb, hdr);
}

/**
 * kcoll_nl_event_comm - tell the events group about a communicator
 * @comm:	the communicator (its state, error and failed rank: as they are now, together)
 * @ev:		created, destroyed, failed
 *
 * Prepare (a snapshot under comm->lock, as the dumps take it), then fill without it.
 *
 * Context: process or softirq; comm->lock not held (else kcoll_nl_event_comm_locked()).
 */
void kcoll_nl_event_comm(struct kcoll_comm *comm, enum kcoll_nl_comm_event ev)
{
	struct kcoll_comm_desc d;

	if (!KCOLL_NL_COMM_EVENTS)
		return;
	kcoll_comm_describe_ident(comm, &d);
	spin_lock_bh(&comm->lock);
	kcoll_comm_describe_status_locked(comm, &d);
	spin_unlock_bh(&comm->lock);
	kcoll_nl_event_comm_fill(comm->net, &d, ev);
}

/**
 * kcoll_nl_event_comm_locked - kcoll_nl_event_comm() for a caller holding comm->lock
 * @comm:	the communicator
 * @ev:		created, destroyed, failed
 *
 * The event then reports the state the caller's critical section left.
 * Context: comm->lock held.
 */
void kcoll_nl_event_comm_locked(struct kcoll_comm *comm, enum kcoll_nl_comm_event ev)
{
	struct kcoll_comm_desc d;

	lockdep_assert_held(&comm->lock);
	if (!KCOLL_NL_COMM_EVENTS)
		return;
	kcoll_comm_describe_ident(comm, &d);
	kcoll_comm_describe_status_locked(comm, &d);
	kcoll_nl_event_comm_fill(comm->net, &d, ev);
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
	struct kcoll_comm_desc d;
	struct sk_buff *skb;
	void *hdr;

	if (!KCOLL_NL_COMM_EVENTS)
		return;
	kcoll_comm_describe_ident(comm, &d);
	skb = kcoll_nl_event_new(comm->net, KCOLL_CMD_PEER_LOST_NTF, &hdr);
	if (!skb)
		return;
	if (kcoll_nl_comm_key_put(skb, &d) ||
	    nla_put_u32(skb, KCOLL_A_COMM_PEER_RANK, peer) ||
	    nla_put_s32(skb, KCOLL_A_COMM_ERROR, err)) {
		nlmsg_free(skb);
		return;
	}
	kcoll_nl_event_send(comm->net, skb, hdr);
}
