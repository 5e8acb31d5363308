// SPDX-License-Identifier: GPL-2.0
/*
 * Point-to-point requests (struct kcoll_req): their memory, life and completion, the P2P and
 * WAIT ioctls, and the watchdog that keeps busy peers talking.  How a queued request moves
 * on the wire is kcoll_p2p.c's business.
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

void kcoll_req_release(struct kref *ref)
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
	if (!kcoll_req_change_state(req, KCOLL_REQ_DONE))
		return;		/* done already */
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
	kcoll_pending_complete(&req->pending);
	if (req->ops && !req->step_noted)
		req->ops->done(req);
	else if (req->ops && status)	/* its owner went on: fail the comm instead */
		kcoll_p2p_fail(req->conn, status == -EMSGSIZE ? -EPROTO : status);
	wake_up_all(&comm->wq);
	/* EMSGSIZE travels in the DONE: no write happened, nothing is in flight either. */
	if ((!status || status == -EMSGSIZE) && !req->hw_queued) {
		req->hw_queued = true;
		queue_work(kcoll_wq, &req->hw_work);
	}
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
			kcoll_p2p_fail(conn, -ETIMEDOUT);
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
			kcoll_p2p_fail(conn, -ETIMEDOUT);
			goto out_unlock;
		}
		if (time_after(jiffies, conn->last_tx + timeout / 4)) {
			c = conn->tp->ctrl_get(conn);
			if (c) {
				if (kcoll_tp_signal(conn, c, KCOLL_MSG_NOP)) {
					kcoll_p2p_fail(conn, -EIO);
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

static const struct kcoll_pending_ops kcoll_req_pending_ops;

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
	kcoll_pending_init(&req->pending, &kcoll_req_pending_ops, comm, &req->ref, &req->state);
	req->conn = &comm->conns[peer];
	req->send = send;
	req->state = KCOLL_REQ_QUEUED;	/* initial: nobody else sees it yet */
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
		kcoll_req_change_state(req, KCOLL_REQ_ACTIVE);
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
 * comm failed, wait for that shutdown, which queues the hw_work.  A transfer on a
 * zero-copy buffer (req->on_buf) waits for its hw_work too, which drops its hold on the
 * buffer: BUF_DESTROY right after the call returned found it still busy (EBUSY) when
 * the work had not run yet.  Other eager receives announce no keys and do not wait.
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

	if (!READ_ONCE(req->keyed) && !req->on_buf)
		return;
	spin_lock_bh(&comm->lock);
	queued = req->hw_queued;
	failed = comm->state != KCOLL_COMM_READY;
	spin_unlock_bh(&comm->lock);
	if (!queued && failed)
		flush_work(&comm->shutdown_work);
	flush_work(&req->hw_work);
}

/* What the file's request table does with a transfer (kcoll_pending.c). */
static void kcoll_req_pending_settle(struct kcoll_pending *p)
{
	kcoll_req_settle(container_of(p, struct kcoll_req, pending));
}

static void kcoll_req_pending_report(const struct kcoll_pending *p, struct kcoll_wait *arg)
{
	const struct kcoll_req *req = container_of(p, struct kcoll_req, pending);

	arg->status = req->status;
	arg->result = req->result;
}

static const struct kcoll_pending_ops kcoll_req_pending_ops = {
	.release	= kcoll_req_release,
	.done_state	= KCOLL_REQ_DONE,
	.settle		= kcoll_req_pending_settle,
	.report		= kcoll_req_pending_report,
};

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
		spin_lock_bh(&comm->lock);
		kcoll_p2p_fail(req->conn, ret ? -EINTR : -ETIMEDOUT);
		spin_unlock_bh(&comm->lock);
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
	u32 usize;
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
	ret = kcoll_comm_usable(comm);
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
		req->on_buf = true;
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
		kcoll_comm_up->teardown_unlock(comm);
		if (ret) {
			kcoll_mem_release(&req->mem);
			goto out_put_req;
		}
	}

	if (arg.flags & KCOLL_P2P_NONBLOCK) {
		ret = kcoll_pending_add(ctx, &req->pending);
		if (ret) {
			kcoll_mem_release(&req->mem);
			goto out_put_req;
		}
		slot = false;		/* the table's entry owns it */
	}
	ret = kcoll_req_queue(req);
	if (ret) {
		kcoll_pending_cancel(ctx, &req->pending);
		kcoll_mem_release(&req->mem);
		goto out_put_req;
	}
	if (held) {		/* queued: the request counts itself now */
		kcoll_comm_hw_unhold(comm);
		held = false;
	}
	if (req->pending.id) {
		arg.req = req->pending.id;
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
