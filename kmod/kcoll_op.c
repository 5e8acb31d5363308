// SPDX-License-Identifier: GPL-2.0
/*
 * A collective's execution: the struct kcoll_op object (its references and hardware),
 * and the progress engine that runs the calling rank's core/ schedule (core/kcoll_sched.h)
 * stage by stage.  The KCOLL_IOC_COLL call that creates an op is in kcoll_coll.c.
 *
 * Data path: every SEND/RECV step is a point-to-point request (kcoll_p2p.c) on a range of
 * one of the operation's regions, so data moves by RDMA WRITE from the sender's memory
 * straight into the receiver's final or scratch memory; the only CPU pass over received
 * data is the reduction (RECV_REDUCE, REDUCE).  Every CTS carries the operation's tag
 * (sequence number and schedule fingerprint): a peer running another call fails the
 * communicator with -EPROTO instead of waiting forever.
 *
 * Progress: kernel-driven.  Request completions (CQ work, comm->lock held) record the
 * step's outcome and kick op->work; the work (process context, kcoll_wq) reduces what
 * arrived, runs local steps and posts the next stage.  A rank that submitted a
 * non-blocking collective and computes makes progress without calling into kcoll.
 * Collectives of one communicator run one at a time, in call order (comm->ops).
 *
 * Memory: user buffers are pinned, DMA mapped, registered (receive side) and vmapped in
 * the ioctl, in the caller's context; zero-copy buffers are used as they are; scratch
 * memory belongs to the communicator and is reused from call to call.  The regions live
 * until the operation is done and every step request has released the hardware
 * (op->nreqs); the operation counts in comm->nhw from its creation (under teardown_mutex)
 * until then, so shutdown waits for it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "kcoll.h"
#include "kcoll_coll.h"
#include "kcoll_trace.h"

/* Object ------------------------------------------------------------------------------ */

/* Give back the regions and buffers; the op no longer counts as a hardware user. */
static void kcoll_op_release_hw(struct kcoll_op *op)
{
	struct kcoll_comm *comm = op->comm;
	bool counted;
	int i;

	spin_lock_bh(&comm->lock);
	counted = op->counted;
	if (op->released) {
		spin_unlock_bh(&comm->lock);
		return;
	}
	op->released = true;
	spin_unlock_bh(&comm->lock);
	for (i = 0; i < 2; i++) {
		kcoll_region_release(&op->own[i]);
		if (op->bufs[i]) {
			kcoll_buf_unuse(op->bufs[i]);
			op->bufs[i] = NULL;
		}
	}
	if (counted)		/* created: counted in comm->nhw */
		kcoll_comm_hw_unhold(comm);
}

static void kcoll_op_free(struct kref *ref)
{
	struct kcoll_op *op = container_of(ref, struct kcoll_op, ref);

	kcoll_op_release_hw(op);
	kvfree(op->steps);
	kvfree(op->sstate);
	kvfree(op->sstatus);
	kfree(op->counts);
	kcoll_comm_put(op->comm);
	kfree(op);
}

void kcoll_op_put(struct kcoll_op *op)
{
	kref_put(&op->ref, kcoll_op_free);
}

/* What the file's request table does with a collective (kcoll_pending.c). */
static void kcoll_op_pending_report(const struct kcoll_pending *p, struct kcoll_wait *arg)
{
	const struct kcoll_op *op = container_of(p, struct kcoll_op, pending);

	arg->status = op->status;
	arg->result = kcoll_op_payload(op);
}

const struct kcoll_pending_ops kcoll_op_pending_ops = {
	.release	= kcoll_op_free,
	.done_state	= KCOLL_OP_DONE,
	.report		= kcoll_op_pending_report,
};

/* Queue the op's work with a reference for it. */
static void kcoll_op_kick(struct kcoll_op *op)
{
	kref_get(&op->ref);
	if (!queue_work(kcoll_wq, &op->work))
		kcoll_op_put(op);
}

/**
 * kcoll_coll_kick - the communicator failed: let its running collective notice
 * @comm:	the communicator
 * Context: comm->lock held.
 */
void kcoll_coll_kick(struct kcoll_comm *comm)
{
	struct kcoll_op *op;

	lockdep_assert_held(&comm->lock);
	op = list_first_entry_or_null(&comm->ops, struct kcoll_op, list);
	if (op)
		kcoll_op_kick(op);
}

/**
 * kcoll_op_step_done - a step request of an operation completed (its kcoll_req_ops.done)
 * @req:	the step's request (req->op, req->step)
 * Context: comm->lock held (from kcoll_req_complete()).
 */
static void kcoll_op_step_done(struct kcoll_req *req)
{
	struct kcoll_op *op = req->op;
	u32 i = req->step;

	lockdep_assert_held(&op->comm->lock);
	op->sstatus[i] = req->status;
	/*
	 * A step receives exactly its bytes: a peer that sent fewer (a short DONE or EAGER)
	 * would leave stale bytes in the result.  Its fault: the comm fails.
	 */
	if (!req->status && !req->send && req->result != op->steps[i].bytes) {
		op->sstatus[i] = -EPROTO;
		kcoll_proto_error_locked(req->conn, "short message in a collective");
	}
	if (!op->sstatus[i] && op->steps[i].op == KCOLL_STEP_RECV_REDUCE) {
		op->sstate[i] = KCOLL_OP_STEP_ARRIVED;
	} else {
		op->sstate[i] = KCOLL_OP_STEP_DONE;
		op->left--;
	}
	kcoll_op_kick(op);
}

/* A step request gave the hardware back (kcoll_req_hw_work()); drops its op reference. */
static void kcoll_op_req_released(struct kcoll_req *req)
{
	struct kcoll_op *op = req->op;

	if (atomic_dec_and_test(&op->nreqs))
		kcoll_op_kick(op);
	kcoll_op_put(op);
}

static const struct kcoll_req_ops kcoll_op_req_ops = {
	.done = kcoll_op_step_done,
	.released = kcoll_op_req_released,
};

/* Payload bytes per rank: what selection and the statistics go by. */
u64 kcoll_op_payload(const struct kcoll_op *op)
{
	const struct kcoll_coll_args *a = &op->args;
	u64 sum = 0;
	u32 i;

	if (!a->counts)
		return a->count * a->elem_size;
	for (i = 0; i < a->nranks; i++)
		sum += a->counts[i];
	return sum * a->elem_size;
}

/* Scratch of at least @bytes, mapped and registered: the comm's, grown when too small. */
static int kcoll_op_scratch(struct kcoll_op *op, u64 bytes)
{
	struct kcoll_comm *comm = op->comm;
	struct kcoll_region *s = &comm->scratch;
	int ret;

	op->regions[KCOLL_BUF_SCRATCH] = s;
	op->base[KCOLL_BUF_SCRATCH] = 0;
	if (s->len >= bytes)
		return 0;
	kcoll_region_release(s);
	memset(s, 0, sizeof(*s));
	/* Zeroed: no stale kernel data may reach a peer, whatever a schedule sends. */
	ret = kcoll_region_alloc(s, bytes, __GFP_ZERO);
	if (!ret)
		ret = kcoll_region_map(comm, s, comm->nranks > 1, true);
	if (!ret)
		ret = kcoll_region_register(comm, s);
	if (ret) {
		kcoll_region_release(s);
		memset(s, 0, sizeof(*s));
	}
	return ret;
}

/*
 * kcoll_op_scratch() under teardown_mutex, which shutdown holds while it releases the device
 * and PD, and while it waits for this very operation: so only try it.  Busy (a buffer being
 * created, an operation being pinned): -EAGAIN, and whoever holds it kicks the operation
 * again when unlocking (kcoll_teardown_unlock()); a failing comm kicks it too.
 */
static int kcoll_op_scratch_locked(struct kcoll_op *op)
{
	struct kcoll_comm *comm = op->comm;
	int err;

	WRITE_ONCE(comm->scratch_wait, true);
	smp_mb();	/* flag before trylock; pairs with kcoll_teardown_unlock() */
	if (!mutex_trylock(&comm->teardown_mutex))
		return -EAGAIN;
	WRITE_ONCE(comm->scratch_wait, false);
	err = comm->shut ? kcoll_comm_unready(comm) :
			    kcoll_op_scratch(op, op->base[KCOLL_BUF_SCRATCH]);
	mutex_unlock(&comm->teardown_mutex);
	return err;
}

/**
 * kcoll_teardown_unlock - unlock a comm's teardown_mutex, held by a caller in process context
 * @comm:	the communicator
 *
 * The first collective may have found the mutex taken (kcoll_op_scratch_locked()): kick
 * it, so that it never waits for more than the holder's section.
 */
void kcoll_teardown_unlock(struct kcoll_comm *comm)
{
	mutex_unlock(&comm->teardown_mutex);
	smp_mb();	/* unlock before reading the flag; pairs with kcoll_op_scratch_locked() */
	if (!READ_ONCE(comm->scratch_wait))
		return;
	spin_lock_bh(&comm->lock);
	if (comm->scratch_wait) {
		comm->scratch_wait = false;
		kcoll_coll_kick(comm);
	}
	spin_unlock_bh(&comm->lock);
}

/* Execution --------------------------------------------------------------------------- */

static void *kcoll_op_ptr(struct kcoll_op *op, int side, u64 off)
{
	return kcoll_region_ptr(op->regions[side], op->base[side] + off);
}

/* Run a local step (COPY, REDUCE) or the reduction of an arrived RECV_REDUCE. */
static void kcoll_op_local(struct kcoll_op *op, const struct kcoll_step *st)
{
	size_t count = div_u64(st->bytes, op->args.elem_size);

	if (!st->bytes)
		return;
	if (st->op == KCOLL_STEP_COPY) {
		memcpy(kcoll_op_ptr(op, st->dst_buf, st->dst_off),
		       kcoll_op_ptr(op, st->src_buf, st->src_off), st->bytes);
		return;
	}
	kcoll_engine_reduce3(kcoll_op_ptr(op, st->dst_buf, st->dst_off),
			     kcoll_op_ptr(op, st->src_buf, st->src_off),
			     kcoll_op_ptr(op, KCOLL_BUF_SCRATCH, st->tmp_off), count,
			     op->dtype, op->redop);
}

/* Post the request of a SEND, RECV or RECV_REDUCE step. */
static int kcoll_op_post(struct kcoll_op *op, u32 i)
{
	const struct kcoll_step *st = &op->steps[i];
	bool send = st->op == KCOLL_STEP_SEND;
	int side = send ? st->src_buf : st->op == KCOLL_STEP_RECV ? st->dst_buf :
		   KCOLL_BUF_SCRATCH;
	u64 off = send ? st->src_off : st->op == KCOLL_STEP_RECV ? st->dst_off : st->tmp_off;
	struct kcoll_req *req;
	int ret;

	req = kcoll_req_new(op->comm, st->peer, send);
	if (!req)
		return -ENOMEM;
	kref_get(&op->ref);	/* put by kcoll_op_req_released() or below */
	req->op = op;
	req->ops = &kcoll_op_req_ops;
	req->step = i;
	req->tag = kcoll_sched_step_tag(&op->args, op->tag, st);
	if (st->bytes) {
		req->mem.r = op->regions[side];
		req->mem.offset = op->base[side] + off;
	} else {
		req->mem.r = &req->mem.own;	/* empty */
	}
	req->mem.len = st->bytes;
	atomic_inc(&op->nreqs);
	trace_kcoll_step(op->comm->comm_id, op->comm->rank, op->tag >> 32, op->args.coll, i,
			 st->peer, st->bytes);
	spin_lock_bh(&op->comm->lock);
	op->sstate[i] = KCOLL_OP_STEP_POSTED;
	spin_unlock_bh(&op->comm->lock);
	ret = kcoll_req_queue(req);
	if (ret) {
		/* Never queued: no completion, no hardware release will come for it. */
		spin_lock_bh(&op->comm->lock);
		op->sstate[i] = KCOLL_OP_STEP_DONE;
		op->sstatus[i] = ret;
		op->left--;
		spin_unlock_bh(&op->comm->lock);
		atomic_dec(&op->nreqs);
		kcoll_op_put(op);
	}
	kcoll_req_put(req);
	return ret;
}

/* Start the next stage: local steps run now, transfers are posted.  Return: error. */
static int kcoll_op_stage(struct kcoll_op *op)
{
	struct kcoll_comm *comm = op->comm;
	u32 begin = op->next, end = begin, i, nlocal = 0;
	int ret = 0;

	while (end < op->nsteps && op->steps[end].stage == op->steps[begin].stage)
		end++;
	spin_lock_bh(&comm->lock);
	op->stage_begin = begin;
	op->stage_end = end;
	op->left = end - begin;
	spin_unlock_bh(&comm->lock);
	op->next = end;
	for (i = begin; i < end && !ret; i++) {
		const struct kcoll_step *st = &op->steps[i];

		if (st->op == KCOLL_STEP_COPY || st->op == KCOLL_STEP_REDUCE) {
			kcoll_op_local(op, st);
			op->sstate[i] = KCOLL_OP_STEP_DONE;
			nlocal++;
		} else {
			ret = kcoll_op_post(op, i);
		}
	}
	spin_lock_bh(&comm->lock);
	op->left -= nlocal;
	spin_unlock_bh(&comm->lock);
	return ret;
}

/* The result range for AVG's final division, or false when this rank has no result. */
static bool kcoll_op_result(struct kcoll_op *op, u64 *off, u64 *count)
{
	const struct kcoll_coll_args *a = &op->args;

	switch (a->coll) {
	case KCOLL_REDUCE:
		if (a->rank != a->root)
			return false;
		fallthrough;
	case KCOLL_ALLREDUCE:
		*off = 0;
		*count = a->count;
		return true;
	case KCOLL_REDUCE_SCATTER:
		*off = a->in_place ? a->rank * a->count : 0;
		*count = a->count;
		return true;
	case KCOLL_REDUCE_SCATTERV:
		*off = a->in_place ? a->displs[a->rank] : 0;
		*count = a->counts[a->rank];
		return true;
	default:
		return false;
	}
}

static void kcoll_op_finish(struct kcoll_op *op, int status)
{
	struct kcoll_comm *comm = op->comm;
	struct kcoll_op *next;
	u64 off, count;

	if (!status && op->redop == KCOLL_AVG && kcoll_coll_reduces(op->args.coll) &&
	    kcoll_op_result(op, &off, &count) && count)
		kcoll_engine_finalize(kcoll_op_ptr(op, KCOLL_BUF_RECV, off * op->args.elem_size),
				      count, op->dtype, op->redop, op->args.nranks);
	/*
	 * The caller's receive memory must not stay writable after the call returns, even
	 * while step requests still hold the regions (an eager send waiting for its
	 * acknowledgment): its keys die now, before the outcome is reported.
	 */
	kcoll_region_revoke(&op->own[KCOLL_BUF_RECV]);
	/*
	 * With no request in flight, the hardware goes back before the caller learns the
	 * outcome: a blocking call's zero-copy buffers are free when it returns (BUF_DESTROY
	 * right after it: not EBUSY).  Else the last request's completion gives it back.
	 */
	if (!atomic_read(&op->nreqs))
		kcoll_op_release_hw(op);
	trace_kcoll_op_finish(comm->comm_id, comm->rank, op->tag >> 32, op->args.coll,
			      kcoll_op_payload(op), status);
	if (!status) {
		atomic64_inc(&comm->coll_ops);
		atomic64_add(kcoll_op_payload(op), &comm->coll_bytes);
	}
	spin_lock_bh(&comm->lock);
	kcoll_op_change_state(op, KCOLL_OP_DONE);
	op->status = status;
	list_del_init(&op->list);
	next = list_first_entry_or_null(&comm->ops, struct kcoll_op, list);
	if (next)
		kcoll_op_kick(next);
	kcoll_pending_complete(&op->pending);
	wake_up_all(&comm->wq);
	spin_unlock_bh(&comm->lock);
	kcoll_op_put(op);	/* comm->ops' reference */
}

/* The progress engine of one operation; see the file comment. */
void kcoll_op_work(struct work_struct *work)
{
	struct kcoll_op *op = container_of(work, struct kcoll_op, work);
	struct kcoll_comm *comm = op->comm;
	int err = 0;
	u32 i;

	spin_lock_bh(&comm->lock);
	if (op->state == KCOLL_OP_DONE) {
		spin_unlock_bh(&comm->lock);
		goto out_release;
	}
	if (list_first_entry(&comm->ops, struct kcoll_op, list) != op) {
		spin_unlock_bh(&comm->lock);
		goto out_put;	/* not its turn: the one ahead kicks it when done */
	}
	if (comm->state != KCOLL_COMM_READY)
		err = comm->error ? comm->error : -ENOTCONN;
	if (op->state == KCOLL_OP_QUEUED && !err) {
		kcoll_op_change_state(op, KCOLL_OP_STARTING);
		spin_unlock_bh(&comm->lock);
		trace_kcoll_op_start(comm->comm_id, comm->rank, op->tag >> 32, op->args.coll,
				     op->algo, kcoll_op_payload(op), op->nsteps);
		spin_lock_bh(&comm->lock);
	}
	if (op->state == KCOLL_OP_STARTING && !err) {
		spin_unlock_bh(&comm->lock);
		err = kcoll_op_scratch_locked(op);
		if (err == -EAGAIN)
			goto out_put;	/* kicked again once teardown_mutex is free */
		if (!err) {
			spin_lock_bh(&comm->lock);
			kcoll_op_change_state(op, KCOLL_OP_RUNNING);
			spin_unlock_bh(&comm->lock);
		}
		if (!err && !op->nsteps)
			goto out_finish;
		if (!err)
			err = kcoll_op_stage(op);
		spin_lock_bh(&comm->lock);
	}
	while (!err) {
		u32 arrived = U32_MAX;

		/* In the current stage: an error, or a receive to reduce. */
		for (i = op->stage_begin; i < op->stage_end; i++) {
			if (op->sstatus[i]) {
				err = op->sstatus[i];
				break;
			}
			if (op->sstate[i] == KCOLL_OP_STEP_ARRIVED && arrived == U32_MAX)
				arrived = i;
		}
		if (err)
			break;
		if (arrived != U32_MAX) {
			spin_unlock_bh(&comm->lock);
			kcoll_op_local(op, &op->steps[arrived]);
			spin_lock_bh(&comm->lock);
			op->sstate[arrived] = KCOLL_OP_STEP_DONE;
			op->left--;
			continue;
		}
		if (op->left)
			break;		/* the next completion kicks us again */
		spin_unlock_bh(&comm->lock);
		if (op->next == op->nsteps)
			goto out_finish;
		err = kcoll_op_stage(op);
		spin_lock_bh(&comm->lock);
	}
	spin_unlock_bh(&comm->lock);
	if (!err)
		goto out_put;
	if (err == -EMSGSIZE)
		err = -EPROTO;	/* a size mismatch: the ranks' calls differ */
	/* Fail the comm: peers may be blocked in this call on us; they must not hang. */
	kcoll_comm_up->fail(comm, err, U32_MAX);
	kcoll_op_finish(op, err);
	goto out_release;

out_finish:
	kcoll_op_finish(op, 0);
out_release:
	if (!atomic_read(&op->nreqs))
		kcoll_op_release_hw(op);
out_put:
	kcoll_op_put(op);	/* the work's reference */
}

/* Submit and wait ------------------------------------------------------------------------ */

/* Queue @op behind the comm's running collective.  Return: 0 or the comm's error. */
int kcoll_op_submit(struct kcoll_op *op)
{
	struct kcoll_comm *comm = op->comm;
	bool first;

	spin_lock_bh(&comm->lock);
	if (comm->state != KCOLL_COMM_READY) {
		int err = comm->error ? comm->error : -ENOTCONN;

		spin_unlock_bh(&comm->lock);
		return err;
	}
	op->tag = (u64)comm->nops++ << 32 | (u32)op->tag;
	first = list_empty(&comm->ops);
	kref_get(&op->ref);	/* comm->ops' reference, put by kcoll_op_finish() */
	list_add_tail(&op->list, &comm->ops);
	if (first)
		kcoll_op_kick(op);
	spin_unlock_bh(&comm->lock);
	return 0;
}

/**
 * kcoll_coll_shutdown - release the communicator's scratch memory
 * @comm:	the communicator
 * Context: shutdown, after every operation released the hardware (comm->nhw is 0).
 */
void kcoll_coll_shutdown(struct kcoll_comm *comm)
{
	kcoll_region_release(&comm->scratch);
	memset(&comm->scratch, 0, sizeof(comm->scratch));
}
