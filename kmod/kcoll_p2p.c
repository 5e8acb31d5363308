// SPDX-License-Identifier: GPL-2.0
/*
 * Point-to-point send and receive on a communicator (protocol in kcoll_wire.h).
 *
 * The receiver pins and registers its memory and announces it in a CTS; the sender RDMA
 * WRITEs straight into it and SENDs a DONE.  Everything after the ioctl that submits an
 * operation is driven from completions (kcoll_p2p_progress()), so a non-blocking operation
 * moves while its caller computes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kcoll.h"
#include "kcoll_trace.h"

/* Transport work slots (tx_room) kept for control messages. */
#define KCOLL_SQ_RESERVE	8
/* Largest point-to-point message; larger sizes fail with -EINVAL. */
#define KCOLL_P2P_MAX_LEN	BIT_ULL(31)
#define KCOLL_WATCHDOG_MS	250

/* Memory ------------------------------------------------------------------------------ */

/* Release a transfer's memory: its own pinned pages, or its hold on a buffer. */
static void kcoll_mem_release(struct kcoll_mem *mem)
{
	if (mem->r == &mem->own)
		kcoll_region_release(&mem->own);
	mem->r = NULL;
	if (mem->buf) {
		kcoll_buf_unuse(mem->buf);
		mem->buf = NULL;
	}
}

/* Pin and map user memory for a transfer; a receive's is also made remotely writable. */
static int kcoll_mem_pin(struct kcoll_comm *comm, struct kcoll_mem *mem, u64 uaddr, u64 len,
			 bool write)
{
	int ret;

	mem->r = &mem->own;
	mem->offset = 0;
	mem->len = len;
	ret = kcoll_region_pin(&mem->own, uaddr, len, write);
	if (!ret)
		ret = kcoll_region_map(comm, &mem->own, write, false);
	/* Every segment of a CTS must fit in one message. */
	if (!ret && mem->own.nchunks > KCOLL_WIRE_MAX_SEGS)
		ret = -EINVAL;
	return ret;
}

/* Requests ---------------------------------------------------------------------------- */

static void kcoll_req_release(struct kref *ref)
{
	struct kcoll_req *req = container_of(ref, struct kcoll_req, ref);

	kcoll_comm_put(req->comm);
	kfree(req->cts);
	kfree(req);
}

void kcoll_req_put(struct kcoll_req *req)
{
	kref_put(&req->ref, kcoll_req_release);
}

/* Release what the hardware might touch; queued once the hardware is done with it. */
static void kcoll_req_hw_work(struct work_struct *work)
{
	struct kcoll_req *req = container_of(work, struct kcoll_req, hw_work);
	struct kcoll_comm *comm = req->comm;

	kcoll_mem_release(&req->mem);
	/*
	 * Under the lock, so that shutdown, which takes the lock once after seeing nhw reach
	 * zero, knows this worker no longer touches the comm.
	 */
	spin_lock_bh(&comm->lock);
	list_del_init(&req->all);
	if (atomic_dec_and_test(&comm->nhw))
		wake_up_all(&comm->wq);
	spin_unlock_bh(&comm->lock);
	if (req->ops)
		req->ops->released(req);
	kcoll_req_put(req);	/* comm->reqs' reference */
}

/**
 * kcoll_req_complete - finish a request (first outcome wins)
 * @req:	the request
 * @status:	0 or a negative errno
 * @result:	bytes moved
 *
 * A successful request's memory is released at once: its DONE has completed (send) or
 * arrived (receive), so no WR uses it.  A failed one keeps its memory until shutdown has
 * drained the QP.
 *
 * Context: comm->lock held.
 */
void kcoll_req_complete(struct kcoll_req *req, int status, u64 result)
{
	struct kcoll_comm *comm = req->comm;

	lockdep_assert_held(&comm->lock);
	if (req->state == KCOLL_REQ_DONE)
		return;
	req->state = KCOLL_REQ_DONE;
	req->status = status;
	req->result = result;
	trace_kcoll_p2p_finish(comm->comm_id, comm->rank, req->conn->peer, req->send, req->seq,
			       result, status);
	list_del_init(&req->qlist);
	if (!status) {
		if (req->send) {
			atomic64_add(result, &comm->tx_bytes);
			atomic64_inc(&comm->tx_ops);
		} else {
			atomic64_add(result, &comm->rx_bytes);
			atomic64_inc(&comm->rx_ops);
		}
	}
	if (req->id) {
		atomic_inc(&comm->ctx->ndone);
		wake_up_all(&comm->ctx->poll_wq);
	}
	if (req->ops && !req->step_noted)
		req->ops->done(req);
	else if (req->ops && status)	/* its owner went on: fail the comm instead */
		kcoll_comm_set_error_locked(comm, status == -EMSGSIZE ? -EPROTO : status,
					    req->conn->peer);
	wake_up_all(&comm->wq);
	/* EMSGSIZE travels in the DONE: no write happened, nothing is in flight either. */
	if ((!status || status == -EMSGSIZE) && !req->hw_queued) {
		req->hw_queued = true;
		queue_work(kcoll_wq, &req->hw_work);
	}
}

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
	kcoll_comm_set_error_locked(comm, -EPROTO, conn->peer);
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
static struct kcoll_cts *kcoll_p2p_eager_find(struct kcoll_conn *conn, u32 seq)
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
static bool kcoll_p2p_eager_claim(struct kcoll_conn *conn, struct kcoll_req *req)
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
	kcoll_comm_set_error_locked(comm, -EPROTO, conn->peer);
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
		    tp->mem_post_reg(conn, r) < 0) {
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
		req->state = KCOLL_REQ_ACTIVE;
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
		kcoll_comm_set_error_locked(conn->comm, -EIO, conn->peer);
		return -EIO;
	}
	req->state = KCOLL_REQ_ACTIVE;
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
		req->state = KCOLL_REQ_ACTIVE;
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
			kcoll_comm_set_error_locked(comm, -EIO, conn->peer);
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
			kcoll_comm_set_error_locked(comm, -EIO, conn->peer);
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
static void kcoll_p2p_progress(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	if (conn->state == KCOLL_CONN_UP && comm->state == KCOLL_COMM_READY && !comm->leaving) {
		kcoll_p2p_announce(conn);
		kcoll_p2p_push(conn);
	}
	spin_unlock_bh(&comm->lock);
}

/**
 * kcoll_p2p_peer_left - the peer said BYE: settle what it took, fail what it never will
 * @conn:	the connection the BYE came on
 *
 * Everything the peer sent before its BYE was processed before it.  A send the peer has
 * taken -- an EAGER whose CTS came, or a rendezvous send whose DONE went out -- completes
 * with its acknowledgment as usual: a peer that leaves right after its last receive (a
 * barrier's last rank out) must not fail the ranks still finishing theirs.  Every other
 * send and receive fails with ECONNRESET.
 *
 * Context: comm->lock.
 */
static void kcoll_p2p_peer_left(struct kcoll_conn *conn)
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
	/*
	 * The sends the peer took are a prefix of the queue.  Fail the rest from the tail:
	 * completing one can fail the comm (a collective step that went on), which empties
	 * every queue, so no saved pointer survives a completion.
	 */
	while (!list_empty(&conn->sendq)) {
		req = list_last_entry(&conn->sendq, struct kcoll_req, qlist);
		if (req->done_sent && req->cts)
			break;
		kcoll_req_complete(req, -ECONNRESET, 0);
	}
	/* Those taken and already acknowledged complete now; the others with their ack. */
	while ((req = list_first_entry_or_null(&conn->sendq, struct kcoll_req, qlist)) &&
	       req->acked)
		kcoll_req_complete(req, req->status, req->status ? 0 : req->sent);
	/*
	 * A receive whose EAGER came waits for its CTS's acknowledgment (kcoll_p2p_acked());
	 * the others will never be sent to.
	 */
	for (;;) {
		struct kcoll_req *r;

		req = NULL;
		list_for_each_entry(r, &conn->recvq, qlist) {
			if (!r->eager) {
				req = r;
				break;
			}
		}
		if (!req)
			break;
		kcoll_req_complete(req, -ECONNRESET, 0);
	}
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
			kcoll_comm_fail(comm, -ENOMEM, conn->peer);
			return;
		}
		e->len = sizeof(*msg) + len;
		e->eager = *msg;
		memcpy(e->eager.data, msg->data, len);
	}
	list_add_tail(&e->list, &conn->eager_early);
	conn->neager_early++;
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
		kcoll_comm_fail(comm, -ENOMEM, conn->peer);
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
	if (!req)
		kcoll_proto_error_locked(conn, "DONE without its receive");
	else if (status == KCOLL_WIRE_STATUS_MSGSIZE && !len)
		kcoll_req_complete(req, -EMSGSIZE, 0);
	else if (!status && len > KCOLL_WIRE_EAGER_MAX && len <= req->mem.len)
		kcoll_req_complete(req, 0, len);
	else
		kcoll_proto_error_locked(conn, "malformed DONE");
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

/* A transport failed the comm (its error, on @conn's peer).  Context: comm->lock. */
static void kcoll_p2p_fail(struct kcoll_conn *conn, int err)
{
	kcoll_comm_set_error_locked(conn->comm, err, conn->peer);
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
	.fail = kcoll_p2p_fail,
};

/* At load: point-to-point's message types, and what connections tell it. */
int kcoll_p2p_init(void)
{
	kcoll_transport_set_upcalls(&kcoll_p2p_upcalls);
	return kcoll_rx_register_handlers(kcoll_p2p_rx_handlers,
					  ARRAY_SIZE(kcoll_p2p_rx_handlers));
}

static bool kcoll_p2p_busy(struct kcoll_conn *conn)
{
	return !list_empty(&conn->sendq) || !list_empty(&conn->recvq);
}

/*
 * While requests are pending: keep every busy connection's peer talking (NOP after a
 * quiet quarter of op_timeout_ms) and fail the comm when a peer shows no sign of life for
 * op_timeout_ms.  A slow transfer is not a failure; a silent peer is.
 */
void kcoll_comm_watchdog(struct work_struct *work)
{
	struct kcoll_comm *comm = container_of(to_delayed_work(work), struct kcoll_comm,
					       watchdog);
	unsigned long timeout = msecs_to_jiffies(kcoll_op_timeout_ms);
	bool pending = false;
	u32 i;

	spin_lock_bh(&comm->lock);
	if (comm->state != KCOLL_COMM_READY || comm->leaving)
		goto out_unlock;
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];
		struct kcoll_ctrl *c;

		if (i == comm->rank || conn->state != KCOLL_CONN_UP || !kcoll_p2p_busy(conn))
			continue;
		pending = true;
		if (time_after(jiffies, conn->last_ok + timeout)) {
			pr_info("comm %llx rank %u: no sign of life from rank %u for %u ms\n",
				comm->comm_id, comm->rank, i, kcoll_op_timeout_ms);
			kcoll_comm_set_error_locked(comm, -ETIMEDOUT, i);
			goto out_unlock;
		}
		/*
		 * Alive but deaf: it talks, yet our send queue has not moved for as long
		 * (it posts no receive, so our SEND meets RNR NAKs that some drivers retry
		 * for ever, and everything behind it waits).
		 */
		if (conn->tp->tx_stalled(conn, timeout)) {
			pr_info("comm %llx rank %u: rank %u took none of our messages for %u ms\n",
				comm->comm_id, comm->rank, i, kcoll_op_timeout_ms);
			kcoll_comm_set_error_locked(comm, -ETIMEDOUT, i);
			goto out_unlock;
		}
		if (time_after(jiffies, conn->last_tx + timeout / 4)) {
			c = conn->tp->ctrl_get(conn);
			if (c) {
				if (conn->tp->ctrl_signal(conn, c, KCOLL_MSG_NOP)) {
					kcoll_comm_set_error_locked(comm, -EIO, i);
					goto out_unlock;
				}
			}
		}
	}
	if (pending)
		queue_delayed_work(kcoll_wq, &comm->watchdog,
				   msecs_to_jiffies(KCOLL_WATCHDOG_MS));
out_unlock:
	spin_unlock_bh(&comm->lock);
}

/* Submit ------------------------------------------------------------------------------ */

static int kcoll_p2p_check(const struct kcoll_p2p *arg, struct kcoll_comm *comm)
{
	u32 dir = arg->flags & (KCOLL_P2P_SEND | KCOLL_P2P_RECV);

	if (arg->flags & ~KCOLL_P2P_FLAGS || hweight32(dir) != 1 || arg->req || arg->result ||
	    arg->reserved[0] || arg->reserved[1])
		return -EINVAL;
	if ((!(arg->flags & KCOLL_P2P_BUF) && arg->buf) || arg->len > KCOLL_P2P_MAX_LEN)
		return -EINVAL;
	if (arg->peer >= comm->nranks || arg->peer == comm->rank)
		return -EINVAL;
	return 0;
}

/**
 * kcoll_req_new - a request to or from a peer
 * @comm:	communicator (the request holds a reference: WAIT works after a destroy)
 * @peer:	the other rank
 * @send:	direction
 */
struct kcoll_req *kcoll_req_new(struct kcoll_comm *comm, u32 peer, bool send)
{
	struct kcoll_req *req = kcoll_fi(ALLOC, NULL, kzalloc(sizeof(*req), GFP_KERNEL_ACCOUNT));

	if (!req)
		return NULL;
	kref_init(&req->ref);
	kcoll_comm_get(comm);
	req->comm = comm;
	req->conn = &comm->conns[peer];
	req->send = send;
	req->state = KCOLL_REQ_QUEUED;
	INIT_LIST_HEAD(&req->qlist);
	INIT_LIST_HEAD(&req->all);
	INIT_WORK(&req->hw_work, kcoll_req_hw_work);
	return req;
}

/* Queue @req on its connection; Return: 0 or the comm's sticky error. */
int kcoll_req_queue(struct kcoll_req *req)
{
	struct kcoll_comm *comm = req->comm;
	struct kcoll_conn *conn = req->conn;
	bool left;

	spin_lock_bh(&comm->lock);
	left = conn->peer_left;
	if (comm->state != KCOLL_COMM_READY ||
	    (left && (req->send || !kcoll_p2p_eager_find(conn, conn->recv_seq)))) {
		int err = comm->error ? comm->error : left ? -ECONNRESET : -ENOTCONN;

		spin_unlock_bh(&comm->lock);
		return err;
	}
	if (!kcoll_p2p_busy(conn))
		conn->last_ok = jiffies;	/* idle until now: nothing was expected of it */
	if (req->send) {
		req->seq = conn->send_seq++;
		list_add_tail(&req->qlist, &conn->sendq);
	} else {
		req->seq = conn->recv_seq++;
		list_add_tail(&req->qlist, &conn->recvq);
	}
	trace_kcoll_p2p_start(comm->comm_id, comm->rank, conn->peer, req->send, req->seq,
			      req->mem.len, 0);
	kref_get(&req->ref);	/* comm->reqs' reference, put by kcoll_req_hw_work() */
	list_add_tail(&req->all, &comm->reqs);
	atomic_inc(&comm->nhw);
	queue_delayed_work(kcoll_wq, &comm->watchdog, msecs_to_jiffies(KCOLL_WATCHDOG_MS));
	if (left) {
		/*
		 * The peer sent this EAGER and then left: the data is here.  No CTS goes out,
		 * so nothing is in flight to wait for.
		 */
		req->state = KCOLL_REQ_ACTIVE;
		req->acked = true;
		kcoll_p2p_eager_claim(conn, req);
	}
	spin_unlock_bh(&comm->lock);
	kcoll_p2p_progress(conn);
	return 0;
}

/**
 * kcoll_req_settle - kill the keys of a receive's own memory before reporting it
 * @req:	a request that is done (or whose comm was just failed by its waiter)
 *
 * A receive into the caller's memory announced rkeys in its CTS (req->keyed).  The call
 * must not return while a peer could still write there with them: its MRs are
 * deregistered (kcoll_mem_release(), in hw_work) before the caller hears the outcome.
 * A completed request's hw_work is already queued: wait for it.  A failed one keeps its
 * memory until shutdown has drained the QPs (a work request may still use it): when the
 * comm failed, wait for that shutdown, which queues the hw_work.  Eager receives and
 * zero-copy buffers announce no keys of the caller's memory and do not wait.
 *
 * Not covered: a receive that failed with ECONNRESET on a comm that goes on (its peer said
 * BYE and destroyed its end of the only connection its keys were announced on) is
 * reported before the disconnect that follows has drained that QP and released it (the
 * transport's teardown).
 *
 * Context: process, no kcoll lock and no hardware hold (shutdown waits for those).
 */
static void kcoll_req_settle(struct kcoll_req *req)
{
	struct kcoll_comm *comm = req->comm;
	bool queued, failed;

	if (!READ_ONCE(req->keyed))
		return;
	spin_lock_bh(&comm->lock);
	queued = req->hw_queued;
	failed = comm->state != KCOLL_COMM_READY;
	spin_unlock_bh(&comm->lock);
	if (!queued && failed)
		flush_work(&comm->shutdown_work);
	flush_work(&req->hw_work);
}

/*
 * Wait for a blocking request (@timeout_ms 0: as long as the peer is alive); a timeout or a
 * fatal signal poisons the comm, since the request cannot be taken back from the wire.
 */
static int kcoll_req_wait(struct kcoll_req *req, u32 timeout_ms)
{
	struct kcoll_comm *comm = req->comm;
	long ret;

	ret = wait_event_killable_timeout(comm->wq, READ_ONCE(req->state) == KCOLL_REQ_DONE,
					  timeout_ms ? msecs_to_jiffies(timeout_ms) :
						       MAX_SCHEDULE_TIMEOUT);
	if (ret <= 0) {
		kcoll_comm_fail(comm, ret ? -EINTR : -ETIMEDOUT, req->conn->peer);
		kcoll_req_settle(req);
		return ret ? -EINTR : -ETIMEDOUT;
	}
	kcoll_req_settle(req);
	return req->status;
}

long kcoll_ioctl_p2p(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_comm *comm;
	struct kcoll_req *req;
	struct kcoll_p2p arg;
	u32 usize, id;
	bool held = false, slot = false;
	int ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_P2P_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	comm = kcoll_comm_lookup(ctx, arg.comm);
	if (!comm)
		return -ENOENT;
	ret = kcoll_p2p_check(&arg, comm);
	if (ret)
		goto out_put_comm;
	spin_lock_bh(&comm->lock);
	ret = comm->state == KCOLL_COMM_READY ? 0 : (comm->error ? comm->error : -ENOTCONN);
	spin_unlock_bh(&comm->lock);
	if (ret)
		goto out_put_comm;
	/* Before pinning anything: a slot of the file's, owned by the ctx->reqs entry. */
	if (arg.flags & KCOLL_P2P_NONBLOCK) {
		ret = kcoll_ctx_take(&ctx->nreqs, kcoll_max_reqs_per_file);
		if (ret)
			goto out_put_comm;
		slot = true;
	}

	req = kcoll_req_new(comm, arg.peer, arg.flags & KCOLL_P2P_SEND);
	if (!req) {
		ret = -ENOMEM;
		goto out_put_comm;
	}
	if (arg.flags & KCOLL_P2P_BUF) {
		req->mem.buf = kcoll_buf_use(comm, arg.buf, arg.addr, arg.len);
		if (IS_ERR(req->mem.buf)) {
			ret = PTR_ERR(req->mem.buf);
			req->mem.buf = NULL;
			goto out_put_req;
		}
		req->mem.r = &req->mem.buf->region;
		req->mem.offset = arg.addr;
		req->mem.len = arg.len;
	} else {
		/*
		 * Shutdown releases the device and PD under teardown_mutex once nhw is zero:
		 * map against it, and count in nhw from there until queued (or released).
		 */
		mutex_lock(&comm->teardown_mutex);
		held = !comm->shut;
		if (held)
			kcoll_comm_hw_hold(comm);
		ret = held ? kcoll_mem_pin(comm, &req->mem, arg.addr, arg.len, !req->send) :
			     kcoll_comm_unready(comm);
		kcoll_teardown_unlock(comm);
		if (ret) {
			kcoll_mem_release(&req->mem);
			goto out_put_req;
		}
	}

	if (arg.flags & KCOLL_P2P_NONBLOCK) {
		ret = kcoll_fi(ALLOC, -ENOMEM, xa_alloc_cyclic(&ctx->reqs, &id, req, xa_limit_31b,
							       &ctx->next_req, GFP_KERNEL));
		if (ret < 0) {
			kcoll_mem_release(&req->mem);
			goto out_put_req;
		}
		req->id = id;
		kref_get(&req->ref);	/* the request table's reference */
		slot = false;		/* and the file's slot */
	}
	ret = kcoll_req_queue(req);
	if (ret) {
		if (req->id && xa_erase(&ctx->reqs, req->id)) {
			kcoll_ctx_give(&ctx->nreqs);
			kcoll_req_put(req);
		}
		kcoll_mem_release(&req->mem);
		goto out_put_req;
	}
	if (held) {		/* queued: the request counts itself now */
		kcoll_comm_hw_unhold(comm);
		held = false;
	}
	if (req->id) {
		arg.req = req->id;
		ret = kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
	} else {
		ret = kcoll_req_wait(req, arg.timeout_ms);
		if (!ret && !req->send) {
			arg.result = req->result;
			ret = kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
		}
	}
out_put_req:
	if (held)		/* after kcoll_mem_release(): the hardware is not touched again */
		kcoll_comm_hw_unhold(comm);
	kcoll_req_put(req);
out_put_comm:
	if (slot)
		kcoll_ctx_give(&ctx->nreqs);
	kcoll_comm_put(comm);
	return ret;
}

long kcoll_ioctl_wait(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_req *req;
	struct kcoll_wait arg;
	u32 usize;
	long ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_WAIT_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved0 || arg.reserved[0] || arg.reserved[1] || !arg.req)
		return -EINVAL;
	if (arg.req > U32_MAX) {
		/* A collective's request. */
		ret = kcoll_coll_wait_ctx(ctx, &arg);
		if (ret)
			return ret;
		arg.reserved0 = 0;
		return kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
	}
	xa_lock(&ctx->reqs);
	req = xa_load(&ctx->reqs, arg.req);
	if (req && req->comm->handle == arg.comm)
		kref_get(&req->ref);
	else
		req = NULL;
	xa_unlock(&ctx->reqs);
	if (!req)
		return -ENOENT;

	if (arg.timeout_ms) {
		unsigned long t = arg.timeout_ms == U32_MAX ? MAX_SCHEDULE_TIMEOUT :
				  msecs_to_jiffies(arg.timeout_ms);

		ret = wait_event_killable_timeout(req->comm->wq,
						  READ_ONCE(req->state) == KCOLL_REQ_DONE, t);
		if (ret < 0) {
			kcoll_req_put(req);
			return -EINTR;
		}
	}
	if (READ_ONCE(req->state) != KCOLL_REQ_DONE) {
		kcoll_req_put(req);
		return -EAGAIN;
	}
	kcoll_req_settle(req);
	/* Consume it: whoever erases it owns the table's reference. */
	if (xa_erase(&ctx->reqs, arg.req) == req) {
		atomic_dec(&ctx->ndone);
		kcoll_ctx_give(&ctx->nreqs);
		kcoll_req_put(req);
	}
	arg.status = req->status;
	arg.reserved0 = 0;
	arg.result = req->result;
	kcoll_req_put(req);
	return kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
}

/* File release: drop the references of requests nobody waited for. */
void kcoll_ctx_drop_reqs(struct kcoll_ctx *ctx)
{
	struct kcoll_req *req;
	unsigned long id;

	xa_for_each(&ctx->reqs, id, req) {
		if (xa_erase(&ctx->reqs, id) == req) {
			kcoll_ctx_give(&ctx->nreqs);
			kcoll_req_put(req);
		}
	}
}
