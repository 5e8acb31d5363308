// SPDX-License-Identifier: GPL-2.0
/*
 * Point-to-point protocol on a communicator (kcoll_wire.h): how requests move.
 *
 * The receiver registers its memory and announces it in a CTS; the sender writes straight
 * into it through the peer's transport (RDMA WRITE) and sends a DONE.  Everything after the
 * ioctl that submits an operation (kcoll_req.c) is driven from the transport's completions
 * (kcoll_p2p_progress()), so a non-blocking operation moves while its caller computes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kcoll.h"
#include "kcoll_p2p.h"
#include "kcoll_trace.h"

/* Transport work slots (tx_room) kept for control messages. */
#define KCOLL_SQ_RESERVE	8

/* Progress ---------------------------------------------------------------------------- */

/* The receive of @conn with sequence number @seq, once announced; NULL if none. */
static struct kcoll_req *kcoll_recv_find(struct kcoll_conn *conn, u32 seq)
{
	struct kcoll_req *req;

	lockdep_assert_held(&conn->comm->lock);
	list_for_each_entry(req, &conn->recvq, qlist) {
		if (req->seq == seq)
			return req->state == KCOLL_REQ_ACTIVE && !req->eager ? req : NULL;
	}
	return NULL;
}

/*
 * Does the peer's message (a CTS or an EAGER) carry the tag of our request?  If not, the
 * ranks' calls differ: the comm fails with EPROTO.  Context: comm->lock.
 */
static bool kcoll_p2p_tag_ok(struct kcoll_conn *conn, struct kcoll_req *req, __be64 wire_tag)
{
	struct kcoll_comm *comm = conn->comm;
	u64 tag = be64_to_cpu(wire_tag);

	lockdep_assert_held(&comm->lock);
	if (tag == req->tag)
		return true;
	pr_err_ratelimited("comm %llx rank %u: rank %u posted another operation (%llx, here %llx): the ranks' calls differ\n",
			   comm->comm_id, comm->rank, conn->peer, tag, req->tag);
	kcoll_comm_up->fail_locked(comm, -EPROTO, conn->peer);
	return false;
}

/*
 * An EAGER message for @req arrived: its data goes into the receive's memory.  A receive
 * that announced registered memory completes when its CTS is acknowledged as well.
 *
 * Context: comm->lock.
 */
static void kcoll_p2p_eager_deliver(struct kcoll_conn *conn, struct kcoll_req *req,
				    const struct kcoll_wire_eager *msg)
{
	struct kcoll_comm *comm = conn->comm;
	u64 len = be64_to_cpu(msg->len);

	lockdep_assert_held(&comm->lock);
	if (!kcoll_p2p_tag_ok(conn, req, msg->tag))
		return;
	req->eager = true;
	if (len > req->mem.len) {
		req->status = -EMSGSIZE;
	} else {
		if (len)
			kcoll_region_copy(req->mem.r, req->mem.offset, (void *)msg->data, len,
					  true);
		req->sent = len;
	}
	if (req->mem.len <= KCOLL_WIRE_EAGER_MAX || req->acked)
		kcoll_req_complete(req, req->status, req->status ? 0 : req->sent);
}

/* The EAGER with sequence number @seq kept until its receive is posted, or NULL. */
struct kcoll_cts *kcoll_p2p_eager_find(struct kcoll_conn *conn, u32 seq)
{
	struct kcoll_cts *e;

	lockdep_assert_held(&conn->comm->lock);
	list_for_each_entry(e, &conn->eager_early, list) {
		if (be32_to_cpu(e->eager.seq) == seq)
			return e;
	}
	return NULL;
}

/*
 * @req was just announced: an EAGER for it that came first is delivered now.  Return: true
 * if one was (the receive may have completed and left conn->recvq, and a failure may have
 * emptied it).
 */
bool kcoll_p2p_eager_claim(struct kcoll_conn *conn, struct kcoll_req *req)
{
	struct kcoll_cts *e = kcoll_p2p_eager_find(conn, req->seq);

	if (!e)
		return false;
	list_del(&e->list);
	conn->neager_early--;
	kcoll_p2p_eager_deliver(conn, req, &e->eager);
	kfree(e);
	return true;
}

/**
 * kcoll_proto_error_locked - a peer broke the protocol: count it, say so, fail the comm
 * @conn:	the connection the message came on
 * @what:	what was wrong, for the log
 *
 * The communicator fails with EPROTO, a code of ours: whatever the peer sent never
 * becomes an errno.  Context: comm->lock held.
 */
void kcoll_proto_error_locked(struct kcoll_conn *conn, const char *what)
{
	struct kcoll_comm *comm = conn->comm;

	lockdep_assert_held(&comm->lock);
	atomic64_inc(&comm->proto_errors);
	pr_err_ratelimited("comm %llx rank %u: %s from rank %u\n", comm->comm_id, comm->rank,
			   what, conn->peer);
	kcoll_comm_up->fail_locked(comm, -EPROTO, conn->peer);
}

/* kcoll_proto_error_locked() for callers without comm->lock. */
void kcoll_proto_error(struct kcoll_conn *conn, const char *what)
{
	spin_lock_bh(&conn->comm->lock);
	kcoll_proto_error_locked(conn, what);
	spin_unlock_bh(&conn->comm->lock);
}

/**
 * kcoll_p2p_acked - a control message that carried @req was acknowledged
 * @req:	a send's EAGER or DONE, or the CTS of a receive into registered memory
 *
 * Context: comm->lock.
 */
static void kcoll_p2p_acked(struct kcoll_req *req)
{
	lockdep_assert_held(&req->comm->lock);
	req->acked = true;
	if (!req->send) {
		if (req->eager)		/* its data arrived first */
			kcoll_req_complete(req, req->status, req->status ? 0 : req->sent);
		return;
	}
	if (req->eager && !req->cts)	/* the receiver's CTS is still to come */
		return;
	kcoll_req_complete(req, req->status, req->status ? 0 : req->sent);
}

/* Announce queued receives: register their memory (REG_MR) and send a CTS each. */
static void kcoll_p2p_announce(struct kcoll_conn *conn)
{
	const struct kcoll_transport *tp = conn->tp;
	unsigned int active;
	struct kcoll_req *req;

again:
	active = 0;
	list_for_each_entry(req, &conn->recvq, qlist) {
		struct kcoll_wire_cts *m;
		struct kcoll_region *r;
		struct kcoll_ctrl *c;
		bool eager_only;
		int nsegs;

		if (req->state == KCOLL_REQ_ACTIVE) {
			active++;
			continue;
		}
		if (active >= KCOLL_P2P_WINDOW ||
		    !tp->tx_room(conn, req->mem.r->nchunks + 1 + KCOLL_SQ_RESERVE / 2))
			return;
		c = tp->ctrl_get(conn);
		if (!c)
			return;
		r = req->mem.r;
		/*
		 * A receive of at most KCOLL_WIRE_EAGER_MAX bytes is only ever sent to eagerly
		 * (a larger send does not fit: EMSGSIZE, nothing written), so it announces no
		 * memory and needs no registration.
		 */
		eager_only = req->mem.len <= KCOLL_WIRE_EAGER_MAX;
		if (!eager_only && r->remote && !r->registered &&
		    tp->mem->post_reg(conn, r) < 0) {
			tp->ctrl_put(conn, c);
			kcoll_req_complete(req, -EIO, 0);
			return;
		}
		m = c->msg;
		m->hdr.type = KCOLL_MSG_CTS;
		m->seq = cpu_to_be32(req->seq);
		m->capacity = cpu_to_be64(req->mem.len);
		m->tag = cpu_to_be64(req->tag);
		nsegs = eager_only ? 0 : kcoll_region_segs(r, req->mem.offset, req->mem.len,
							   m->segs, KCOLL_WIRE_MAX_SEGS);
		if (nsegs < 0) {
			tp->ctrl_put(conn, c);
			kcoll_req_complete(req, -EMSGSIZE, 0);
			return;
		}
		m->hdr.nsegs = cpu_to_be16(nsegs);
		/*
		 * An EAGER into registered memory completes the receive only once this CTS is
		 * acknowledged: the REG_MR queued before it is done then, and releasing the
		 * memory cannot race with it.
		 */
		if (!eager_only) {
			kref_get(&req->ref);	/* put by upcalls put */
			c->req = req;
			req->keyed = r == &req->mem.own;
		}
		if (tp->ctrl_post(conn, c, struct_size(m, segs, nsegs))) {
			if (!eager_only) {
				c->req = NULL;
				kref_put(&req->ref, kcoll_req_release);	/* not the last */
			}
			kcoll_req_complete(req, -EIO, 0);
			return;
		}
		kcoll_req_change_state(req, KCOLL_REQ_ACTIVE);
		active++;
		if (kcoll_p2p_eager_claim(conn, req)) {
			/* The list changed under the walk: start again, if still worth it. */
			if (conn->comm->state != KCOLL_COMM_READY)
				return;
			goto again;
		}
	}
}

/*
 * The head send takes the receiver's CTS for it if it arrived; false if not yet (or the
 * peer is out of step: the comm fails).  Context: comm->lock.
 */
static bool kcoll_p2p_take_cts(struct kcoll_conn *conn, struct kcoll_req *req)
{
	struct kcoll_cts *cts;

	if (list_empty(&conn->cts_early))
		return false;
	cts = list_first_entry(&conn->cts_early, struct kcoll_cts, list);
	if (be32_to_cpu(cts->cts.seq) != req->seq) {
		kcoll_proto_error_locked(conn, "CTS out of step");
		return false;
	}
	if (!kcoll_p2p_tag_ok(conn, req, cts->cts.tag))
		return false;
	list_del(&cts->list);
	conn->ncts_early--;
	req->cts = cts;		/* freed with the request */
	return true;
}

/*
 * Send a send's data inline in an EAGER message, without waiting for the CTS: one one-way
 * trip instead of two for small messages.  Return: nonzero if it could not go
 * out now (no control buffer; or the comm failed).  Context: comm->lock.
 */
static int kcoll_p2p_eager_send(struct kcoll_conn *conn, struct kcoll_req *req)
{
	struct kcoll_ctrl *c = conn->tp->ctrl_get(conn);
	struct kcoll_wire_eager *m;

	if (!c)
		return -ENOBUFS;
	m = c->msg;
	m->hdr.type = KCOLL_MSG_EAGER;
	m->seq = cpu_to_be32(req->seq);
	m->len = cpu_to_be64(req->mem.len);
	m->tag = cpu_to_be64(req->tag);
	if (req->mem.len)
		kcoll_region_copy(req->mem.r, req->mem.offset, m->data, req->mem.len,
				  false);
	kref_get(&req->ref);	/* put by upcalls put */
	c->req = req;
	if (conn->tp->ctrl_post(conn, c, sizeof(*m) + req->mem.len)) {
		c->req = NULL;
		kref_put(&req->ref, kcoll_req_release);	/* not the last: reqs hold one */
		kcoll_comm_up->fail_locked(conn->comm, -EIO, conn->peer);
		return -EIO;
	}
	kcoll_req_change_state(req, KCOLL_REQ_ACTIVE);
	req->eager = true;
	req->done_sent = true;
	req->sent = req->mem.len;
	/*
	 * A collective's step has nothing more to do with its memory: the data is in the
	 * control message.  The operation goes on without waiting for the acknowledgment and
	 * the CTS (a round trip); the request stays queued for them, keeping the order of the
	 * sends.  A failure after this point fails the communicator, so later calls see it.
	 */
	if (req->ops) {
		req->ops->done(req);
		req->step_noted = true;
	}
	return 0;
}

/*
 * Eager sends go out as soon as only eager sends are ahead of them (up to a window): their
 * data travels in the message and the receiver matches them by sequence number, so one
 * waiting for its CTS does not hold back the next.  A rendezvous send waits for its turn
 * at the head, and so does every send behind it.  Context: comm->lock.
 */
static void kcoll_p2p_eager_ahead(struct kcoll_conn *conn)
{
	unsigned int inflight = 0;
	struct kcoll_req *req;

	list_for_each_entry(req, &conn->sendq, qlist) {
		if (req->eager) {
			inflight++;
			continue;
		}
		if (req->state != KCOLL_REQ_QUEUED || req->mem.len > KCOLL_WIRE_EAGER_MAX ||
		    inflight >= KCOLL_P2P_WINDOW)
			return;
		/* A failure fails the comm, which empties the queue: stop walking it. */
		if (kcoll_p2p_eager_send(conn, req))
			return;
		inflight++;
	}
}

/*
 * An EAGER send (the oldest without one) takes its CTS if it came, which checks the size.
 * Return: true if it has its CTS.  Context: comm->lock.
 */
static bool kcoll_p2p_eager_cts(struct kcoll_conn *conn, struct kcoll_req *req)
{
	if (req->cts)
		return true;
	if (!kcoll_p2p_take_cts(conn, req))
		return false;
	if (req->mem.len > be64_to_cpu(req->cts->cts.capacity))
		req->status = -EMSGSIZE;
	return true;
}

/*
 * An EAGER send (the head send) completes once acknowledged and once its CTS checked the
 * size.  Return: true if it completed.  Context: comm->lock.
 */
static bool kcoll_p2p_eager_finish(struct kcoll_conn *conn, struct kcoll_req *req)
{
	if (!kcoll_p2p_eager_cts(conn, req) || !req->acked)
		return false;
	kcoll_req_complete(req, req->status, req->status ? 0 : req->sent);
	return true;
}

/* Write as much of the head send as the send queue takes; then its DONE. */
static void kcoll_p2p_push(struct kcoll_conn *conn)
{
	const struct kcoll_transport *tp = conn->tp;
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_req *req;

again:
	if (list_empty(&conn->sendq))
		return;
	kcoll_p2p_eager_ahead(conn);
	req = list_first_entry(&conn->sendq, struct kcoll_req, qlist);
	if (req->state == KCOLL_REQ_QUEUED && req->mem.len <= KCOLL_WIRE_EAGER_MAX)
		return;		/* no control buffer for it now */
	if (req->eager) {
		if (!kcoll_p2p_eager_finish(conn, req))
			return;
		goto again;
	}
	if (req->state == KCOLL_REQ_QUEUED) {
		if (!kcoll_p2p_take_cts(conn, req))
			return;
		kcoll_req_change_state(req, KCOLL_REQ_ACTIVE);
		if (req->mem.len > be64_to_cpu(req->cts->cts.capacity))
			req->sent = req->mem.len;	/* nothing to write: DONE says EMSGSIZE */
	}
	while (req->sent < req->mem.len && tp->tx_room(conn, KCOLL_SQ_RESERVE + 1)) {
		struct kcoll_wire_seg *seg = &req->cts->cts.segs[req->seg];
		u64 seg_len = be32_to_cpu(seg->len);
		u64 want = min(seg_len - req->seg_off, req->mem.len - req->sent);
		u64 bytes;

		if (tp->write(conn, req->mem.r, req->mem.offset + req->sent, want, seg,
			      req->seg_off, &bytes)) {
			kcoll_comm_up->fail_locked(comm, -EIO, conn->peer);
			return;
		}
		req->sent += bytes;
		req->seg_off += bytes;
		if (req->seg_off == seg_len) {
			req->seg++;
			req->seg_off = 0;
		}
		conn->last_tx = jiffies;
	}
	if (req->sent == req->mem.len && !req->done_sent) {
		bool too_big = req->mem.len > be64_to_cpu(req->cts->cts.capacity);
		struct kcoll_ctrl *c = tp->ctrl_get(conn);
		struct kcoll_wire_done *m;

		if (!c)
			return;
		m = c->msg;
		m->hdr.type = KCOLL_MSG_DONE;
		m->seq = cpu_to_be32(req->seq);
		m->len = cpu_to_be64(too_big ? 0 : req->mem.len);
		m->status = cpu_to_be32(too_big ? KCOLL_WIRE_STATUS_MSGSIZE : 0);
		kref_get(&req->ref);	/* put by upcalls put */
		c->req = req;
		if (too_big)
			req->status = -EMSGSIZE;
		if (tp->ctrl_post(conn, c, sizeof(*m))) {
			c->req = NULL;
			kref_put(&req->ref, kcoll_req_release);	/* not the last: reqs hold one */
			kcoll_comm_up->fail_locked(comm, -EIO, conn->peer);
			return;
		}
		req->done_sent = true;
	}
}

/**
 * kcoll_p2p_progress - move a connection's operations on: announce, write, finish
 * @conn:	the connection
 *
 * Context: process context, comm->lock not held.
 */
void kcoll_p2p_progress(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	if (conn->state == KCOLL_CONN_UP && comm->state == KCOLL_COMM_READY && !comm->leaving) {
		kcoll_p2p_announce(conn);
		kcoll_p2p_push(conn);
	}
	spin_unlock_bh(&comm->lock);
}

/* The peer counted @req among the sends it took (its BYE's @taken), and we had its CTS. */
static bool kcoll_p2p_taken(const struct kcoll_req *req, u32 taken)
{
	return req->done_sent && req->cts && (s32)(req->seq - taken) < 0;
}

/*
 * The next request queued on @conn that can be settled now, with its outcome in *@status,
 * or NULL.  Before the drain (!@gone), a rendezvous send the peer took waits for its
 * DONE's acknowledgment and a receive whose EAGER came for its CTS's: a work request may
 * still use their memory.  Context: comm->lock.
 */
static struct kcoll_req *kcoll_p2p_settle_next(struct kcoll_conn *conn, u32 taken, bool gone,
					       int *status)
{
	struct kcoll_req *req;

	list_for_each_entry(req, &conn->sendq, qlist) {
		if (!gone && !kcoll_p2p_taken(req, taken)) {
			*status = -ECONNRESET;
			return req;
		}
		if (gone || req->eager || req->acked) {
			*status = req->status;
			return req;
		}
	}
	list_for_each_entry(req, &conn->recvq, qlist) {
		if (!req->eager) {
			*status = -ECONNRESET;
			return req;
		}
		if (gone) {
			*status = req->status;
			return req;
		}
	}
	return NULL;
}

/*
 * Settle what is queued on @conn after its peer's BYE.  Completing one can fail the comm
 * (a collective step that went on), which empties every queue: look again each time.
 * Context: comm->lock.
 */
static void kcoll_p2p_settle(struct kcoll_conn *conn, u32 taken, bool gone)
{
	struct kcoll_req *req;
	int status;

	while ((req = kcoll_p2p_settle_next(conn, taken, gone, &status)))
		kcoll_req_complete(req, status, status ? 0 : req->sent);
}

/**
 * kcoll_p2p_peer_left - the peer said BYE: settle what is queued with it
 * @conn:	the connection the BYE came on
 * @taken:	the peer's count of our sends whose EAGER or DONE it received
 *
 * Everything the peer sent before its BYE was processed before it.  A send the peer took
 * (counted in @taken, its CTS here) completes with its own status, a receive whose EAGER
 * came with its data; everything else fails with ECONNRESET.  So a peer that leaves right
 * after its last receive (a barrier's last rank out) does not fail the ranks still
 * finishing theirs.  The acknowledgments are not awaited: the peer disconnects once its
 * BYE is acknowledged, and the drain that follows can flush a message the peer did
 * receive.  Only where a work request may still use the memory (a rendezvous send's
 * writes, a receive's registration) does the request wait for its acknowledgment or
 * the drain (kcoll_p2p_peer_gone()).  A peer that overstates @taken gets only sends that
 * have its CTS reported as taken: no more than a receiver that drops what it got can do.
 *
 * Context: comm->lock.
 */
static void kcoll_p2p_peer_left(struct kcoll_conn *conn, u32 taken)
{
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_req *req;

	lockdep_assert_held(&comm->lock);
	/* The CTSs that came before the BYE go to their EAGER sends, in order. */
	list_for_each_entry(req, &conn->sendq, qlist) {
		if (req->cts)
			continue;
		if (!req->eager || !kcoll_p2p_eager_cts(conn, req))
			break;
	}
	if (comm->state != KCOLL_COMM_READY)
		return;		/* a CTS out of step failed the comm and all of this */
	kcoll_p2p_settle(conn, taken, false);
}

/*
 * upcalls peer_gone: the link of a peer that left was drained, no work request uses the
 * memory of a request any more: what waited for an acknowledgment completes (it was
 * taken), with its status.  Context: comm->lock.
 */
static void kcoll_p2p_peer_gone(struct kcoll_conn *conn)
{
	lockdep_assert_held(&conn->comm->lock);
	kcoll_p2p_settle(conn, 0, true);
}

/*
 * upcalls fail: the transport lost @conn.  After the peer's BYE that is the link of an
 * orderly departure going away, not a loss: a flushed NOP, or the acknowledgment of a
 * message the peer took.  The link is dead (an RDMA QP in the error state moves no data
 * either way), so what waited for an acknowledgment settles now, as after the drain: a
 * peer that vanished after its BYE without a disconnect must not leave it waiting.
 * Otherwise the comm fails.  Context: comm->lock.
 */
static void kcoll_p2p_link_fail(struct kcoll_conn *conn, int err)
{
	lockdep_assert_held(&conn->comm->lock);
	if (conn->peer_left)
		kcoll_p2p_peer_gone(conn);
	else
		kcoll_p2p_fail(conn, err);
}

/*
 * The segments of a CTS cover exactly its capacity, none empty: push relies on it.  A
 * capacity of at most KCOLL_WIRE_EAGER_MAX bytes comes without segments (eager only).
 */
static bool kcoll_cts_valid(const struct kcoll_wire_cts *msg, u16 nsegs)
{
	u64 sum = 0;
	u16 i;

	if (be64_to_cpu(msg->capacity) <= KCOLL_WIRE_EAGER_MAX)
		return nsegs == 0;

	for (i = 0; i < nsegs; i++) {
		if (!msg->segs[i].len)
			return false;
		sum += be32_to_cpu(msg->segs[i].len);
	}
	return sum == be64_to_cpu(msg->capacity);
}

/*
 * Why an EAGER for @seq that found no announced receive may not be kept, or NULL: one is
 * kept for it already, its receive took one or completed (the peer repeats itself), or
 * KCOLL_EARLY_MAX are kept.  Context: comm->lock.
 */
static const char *kcoll_p2p_eager_refuse(struct kcoll_conn *conn, u32 seq)
{
	struct kcoll_req *req;

	lockdep_assert_held(&conn->comm->lock);
	if (kcoll_p2p_eager_find(conn, seq))
		return "EAGER repeated";
	if ((s32)(seq - conn->recv_seq) < 0) {
		/* Its receive was posted: only one not announced yet may still want it. */
		list_for_each_entry(req, &conn->recvq, qlist) {
			if (req->seq == seq && req->state == KCOLL_REQ_QUEUED)
				goto keep;
		}
		return "EAGER repeated";
	}
keep:
	if (conn->neager_early >= KCOLL_EARLY_MAX)
		return "too many EAGER messages ahead";
	return NULL;
}

/* The data of the peer's send @seq came: our BYE will count it (struct kcoll_wire_bye). */
static void kcoll_p2p_took(struct kcoll_conn *conn, u32 seq)
{
	lockdep_assert_held(&conn->comm->lock);
	if ((s32)(seq + 1 - conn->rx_taken) > 0)
		conn->rx_taken = seq + 1;
}

/*
 * An EAGER arrived: to its receive if that is announced, else kept until it is (the sender
 * did not wait for our CTS).
 */
static void kcoll_p2p_eager_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr,
			       u32 bytes)
{
	const struct kcoll_wire_eager *msg = (const void *)hdr;
	struct kcoll_comm *comm = conn->comm;
	u64 len = be64_to_cpu(msg->len);
	u32 seq = be32_to_cpu(msg->seq);
	struct kcoll_cts *e = NULL;
	struct kcoll_req *req;
	const char *why;

	if (len > KCOLL_WIRE_EAGER_MAX || bytes < sizeof(*msg) + len) {
		kcoll_proto_error(conn, "malformed message");
		return;
	}
	for (;;) {
		spin_lock_bh(&comm->lock);
		req = kcoll_recv_find(conn, seq);
		if (req) {
			kcoll_p2p_took(conn, seq);
			kcoll_p2p_eager_deliver(conn, req, msg);
			spin_unlock_bh(&comm->lock);
			kfree(e);
			return;
		}
		why = kcoll_p2p_eager_refuse(conn, seq);
		if (why) {
			kcoll_proto_error_locked(conn, why);
			spin_unlock_bh(&comm->lock);
			kfree(e);
			return;
		}
		if (e)
			break;
		spin_unlock_bh(&comm->lock);
		/* Allocated unlocked, so the receive may be announced meanwhile: look again. */
		e = kcoll_fi(ALLOC, NULL, kmalloc(sizeof(*e) + len, GFP_KERNEL));
		if (!e) {
			kcoll_comm_up->fail(comm, -ENOMEM, conn->peer);
			return;
		}
		e->len = sizeof(*msg) + len;
		e->eager = *msg;
		memcpy(e->eager.data, msg->data, len);
	}
	list_add_tail(&e->list, &conn->eager_early);
	conn->neager_early++;
	kcoll_p2p_took(conn, seq);
	spin_unlock_bh(&comm->lock);
}

/*
 * A CTS arrived: kept, once its segments are checked, until its send takes it.  CTSs come
 * in the order of their receives, so a repeated or older one is refused, and so are more
 * than KCOLL_EARLY_MAX ahead of our sends.
 */
static void kcoll_p2p_cts_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len)
{
	const struct kcoll_wire_cts *msg = (const void *)hdr;
	u16 nsegs = be16_to_cpu(hdr->nsegs);
	struct kcoll_comm *comm = conn->comm;
	u32 seq = be32_to_cpu(msg->seq);
	struct kcoll_cts *cts;
	const char *why = NULL;

	if (nsegs > KCOLL_WIRE_MAX_SEGS || len < struct_size(msg, segs, nsegs) ||
	    !kcoll_cts_valid(msg, nsegs)) {
		kcoll_proto_error(conn, "malformed message");
		return;
	}
	spin_lock_bh(&comm->lock);
	if ((s32)(seq - conn->cts_next) < 0)
		why = "CTS repeated or out of order";
	else if (conn->ncts_early >= KCOLL_EARLY_MAX)
		why = "too many CTS messages ahead";
	if (why) {
		kcoll_proto_error_locked(conn, why);
		spin_unlock_bh(&comm->lock);
		return;
	}
	spin_unlock_bh(&comm->lock);
	cts = kcoll_fi(ALLOC, NULL, kmalloc(struct_size(cts, cts.segs, nsegs), GFP_KERNEL));
	if (!cts) {
		kcoll_comm_up->fail(comm, -ENOMEM, conn->peer);
		return;
	}
	cts->len = len;
	cts->cts = *msg;
	memcpy(cts->cts.segs, msg->segs, flex_array_size(msg, segs, nsegs));
	/* Only this receive path adds: the checks above still hold. */
	spin_lock_bh(&comm->lock);
	list_add_tail(&cts->list, &conn->cts_early);
	conn->ncts_early++;
	conn->cts_next = seq + 1;
	spin_unlock_bh(&comm->lock);
}

/*
 * A DONE arrived: the peer wrote the message of receive @seq, or found it too big.  Its
 * status is one of the wire's codes, never an errno of the peer's: 0 with the bytes
 * written (a rendezvous message, so more than KCOLL_WIRE_EAGER_MAX, at most the capacity),
 * or KCOLL_WIRE_STATUS_MSGSIZE with nothing written.  Anything else is the peer's fault.
 */
static void kcoll_p2p_done_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr,
			      u32 bytes)
{
	const struct kcoll_wire_done *msg = (const void *)hdr;
	struct kcoll_comm *comm = conn->comm;
	u32 status = be32_to_cpu(msg->status);
	u64 len = be64_to_cpu(msg->len);
	struct kcoll_req *req;

	spin_lock_bh(&comm->lock);
	req = kcoll_recv_find(conn, be32_to_cpu(msg->seq));
	if (!req) {
		kcoll_proto_error_locked(conn, "DONE without its receive");
	} else if (status == KCOLL_WIRE_STATUS_MSGSIZE && !len) {
		kcoll_p2p_took(conn, req->seq);
		kcoll_req_complete(req, -EMSGSIZE, 0);
	} else if (!status && len > KCOLL_WIRE_EAGER_MAX && len <= req->mem.len) {
		kcoll_p2p_took(conn, req->seq);
		kcoll_req_complete(req, 0, len);
	} else {
		kcoll_proto_error_locked(conn, "malformed DONE");
	}
	spin_unlock_bh(&comm->lock);
}

/* NOP: its acknowledgment was the point; that it arrived proved the peer alive. */
static void kcoll_p2p_nop_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len)
{
}

static const struct kcoll_rx_handler kcoll_p2p_rx_handlers[] = {
	{ .type = KCOLL_MSG_CTS, .handler = kcoll_p2p_cts_rx },
	{ .type = KCOLL_MSG_EAGER, .handler = kcoll_p2p_eager_rx },
	{ .type = KCOLL_MSG_DONE, .handler = kcoll_p2p_done_rx },
	{ .type = KCOLL_MSG_NOP, .handler = kcoll_p2p_nop_rx },
};

/*
 * Fail the comm with @err (a code of ours) on @conn's peer: the transports' fail upcall,
 * and the requests' failures.  Context: comm->lock.
 */
void kcoll_p2p_fail(struct kcoll_conn *conn, int err)
{
	kcoll_comm_up->fail_locked(conn->comm, err, conn->peer);
}

/* Whatever the dispatch refused breaks the protocol. */
static void kcoll_p2p_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len)
{
	if (kcoll_rx_dispatch(conn, hdr, len))
		kcoll_proto_error(conn, "malformed message");
}

static const struct kcoll_conn_upcalls kcoll_p2p_upcalls = {
	.rx = kcoll_p2p_rx,
	.acked = kcoll_p2p_acked,
	.put = kcoll_req_put,
	.progress = kcoll_p2p_progress,
	.peer_left = kcoll_p2p_peer_left,
	.peer_gone = kcoll_p2p_peer_gone,
	.fail = kcoll_p2p_link_fail,
};

/* At load: point-to-point's message types, and what connections tell it. */
int kcoll_p2p_init(void)
{
	kcoll_transport_set_upcalls(&kcoll_p2p_upcalls);
	return kcoll_rx_register_handlers(kcoll_p2p_rx_handlers,
					  ARRAY_SIZE(kcoll_p2p_rx_handlers));
}
