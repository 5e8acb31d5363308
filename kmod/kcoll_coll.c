// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives: a KCOLL_IOC_COLL call becomes a struct kcoll_op that executes the calling
 * rank's core/ schedule (core/kcoll_sched.h) stage by stage.
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

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kcoll.h"
#include "kcoll_nl.h"
#include "kcoll_trace.h"

/* Largest single message of a schedule (a CTS must describe it in one message). */
#define KCOLL_COLL_MAX_MSG	SZ_256M
/* Request ids of collectives have this bit set; point-to-point ids do not. */
#define KCOLL_OP_ID_BIT		BIT_ULL(32)

static_assert(KCOLL_BROADCAST == (int)KCOLL_COLL_BROADCAST);
static_assert(KCOLL_REDUCE_SCATTERV == (int)KCOLL_COLL_REDUCE_SCATTERV);
static_assert(KCOLL_NUM_COLLECTIVES == (int)KCOLL_COLL_COUNT);
static_assert(KCOLL_FP64 == (int)KCOLL_DTYPE_FP64);
static_assert(KCOLL_NUM_DATATYPES == (int)KCOLL_DTYPE_COUNT);
static_assert(KCOLL_AVG == (int)KCOLL_REDOP_AVG);
static_assert(KCOLL_NUM_RED_OPS == (int)KCOLL_REDOP_COUNT);
static_assert(KCOLL_ALG_BRUCK == (int)KCOLL_ALGO_BRUCK);
static_assert(KCOLL_NUM_ALGORITHMS == (int)KCOLL_ALGO_COUNT);

static void kcoll_op_work(struct work_struct *work);

static bool kcoll_coll_reduces(u32 coll)
{
	return coll == KCOLL_REDUCE || coll == KCOLL_ALLREDUCE || coll == KCOLL_REDUCE_SCATTER ||
	       coll == KCOLL_REDUCE_SCATTERV;
}

static bool kcoll_coll_rooted(u32 coll)
{
	return coll == KCOLL_BROADCAST || coll == KCOLL_SCATTER || coll == KCOLL_GATHER ||
	       coll == KCOLL_REDUCE;
}

static bool kcoll_coll_vector(u32 coll)
{
	return coll == KCOLL_ALLGATHERV || coll == KCOLL_ALLTOALLV ||
	       coll == KCOLL_REDUCE_SCATTERV;
}

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

/* Setup ------------------------------------------------------------------------------- */

/* Copy the v-collectives' arrays in; @args points at them. */
static int kcoll_op_copy_counts(struct kcoll_op *op, const struct kcoll_coll *arg)
{
	u32 n = op->comm->nranks, narrays = arg->coll == KCOLL_ALLTOALLV ? 4 : 2;
	const u64 __user *src[4] = {
		u64_to_user_ptr(arg->counts), u64_to_user_ptr(arg->displs),
		u64_to_user_ptr(arg->send_counts), u64_to_user_ptr(arg->send_displs),
	};
	u32 i;

	op->counts = kcoll_fi(ALLOC, NULL,
			      kmalloc_array(narrays * n, sizeof(u64), GFP_KERNEL_ACCOUNT));
	if (!op->counts)
		return -ENOMEM;
	for (i = 0; i < narrays; i++) {
		if (!src[i])
			return -EINVAL;
		if (copy_from_user(op->counts + i * n, src[i], n * sizeof(u64)))
			return -EFAULT;
	}
	op->args.counts = op->counts;
	op->args.displs = op->counts + n;
	if (narrays == 4) {
		op->args.send_counts = op->counts + 2 * n;
		op->args.send_displs = op->counts + 3 * n;
	}
	return 0;
}

static int kcoll_op_check(const struct kcoll_coll *arg, struct kcoll_comm *comm)
{
	if (arg->flags & ~KCOLL_COLL_FLAGS || arg->req || arg->algo_used || arg->reserved0 ||
	    arg->reserved[0] || arg->reserved[1])
		return -EINVAL;
	if (arg->coll >= KCOLL_NUM_COLLECTIVES || arg->dtype >= KCOLL_NUM_DATATYPES ||
	    arg->algo >= KCOLL_NUM_ALGORITHMS)
		return -EINVAL;
	if (kcoll_coll_reduces(arg->coll) ? kcoll_reduce_check(arg->dtype, arg->op) : arg->op)
		return -EINVAL;
	if (kcoll_coll_rooted(arg->coll) ? arg->root >= comm->nranks : arg->root)
		return -EINVAL;
	if ((kcoll_coll_vector(arg->coll) || arg->coll == KCOLL_BARRIER) && arg->count)
		return -EINVAL;
	if (!kcoll_coll_vector(arg->coll) && (arg->counts || arg->displs))
		return -EINVAL;
	if (arg->coll != KCOLL_ALLTOALLV && (arg->send_counts || arg->send_displs))
		return -EINVAL;
	if ((!(arg->flags & KCOLL_COLL_SEND_BUF) && arg->send_handle) ||
	    (!(arg->flags & KCOLL_COLL_RECV_BUF) && arg->recv_handle))
		return -EINVAL;
	return 0;
}

/* Payload bytes per rank: what selection and the statistics go by. */
static u64 kcoll_op_payload(const struct kcoll_op *op)
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

/* The largest RECV step into @side: peers write into that side only if it is not eager. */
static u64 kcoll_op_max_recv(const struct kcoll_op *op, int side)
{
	u64 max = 0;
	u32 i;

	for (i = 0; i < op->nsteps; i++) {
		if (op->steps[i].op == KCOLL_STEP_RECV && op->steps[i].dst_buf == side)
			max = max_t(u64, max, op->steps[i].bytes);
	}
	return max;
}

/*
 * The region of one side of the call: [addr, addr + bytes) of the caller's memory (pinned
 * now, in the caller's context) or of a zero-copy buffer.  Caller memory that only eager
 * messages arrive in is not registered: a registration waits for a REG_MR's completion,
 * which a send queue reports only after the acknowledgments of the sends before it.
 */
static int kcoll_op_region(struct kcoll_op *op, int side, bool is_buf, u32 handle, u64 addr,
			   u64 bytes)
{
	struct kcoll_comm *comm = op->comm;
	bool write = side == KCOLL_BUF_RECV, remote;
	int ret;

	if (!bytes) {			/* nothing of this side is touched */
		op->regions[side] = &op->own[side];
		op->base[side] = 0;
		return 0;
	}
	if (is_buf) {
		struct kcoll_buf *buf = kcoll_buf_use(comm, handle, addr, bytes);

		if (IS_ERR(buf))
			return PTR_ERR(buf);
		op->bufs[side] = buf;
		op->regions[side] = &buf->region;
		op->base[side] = addr;
		return 0;
	}
	op->regions[side] = &op->own[side];
	op->base[side] = 0;
	if (!addr)
		return -EFAULT;
	remote = write && comm->nranks > 1 && kcoll_op_max_recv(op, side) > KCOLL_WIRE_EAGER_MAX;
	ret = kcoll_region_pin(&op->own[side], addr, bytes, write);
	if (!ret)
		ret = kcoll_region_map(comm, &op->own[side], remote, true);
	if (!ret && remote)
		ret = kcoll_region_register(comm, &op->own[side]);
	return ret;
}

static struct kcoll_op *kcoll_op_create(struct kcoll_comm *comm, const struct kcoll_coll *arg)
{
	struct kcoll_sched_tuning tuning;
	struct kcoll_coll_args fp_args;
	struct kcoll_config cfg;
	struct kcoll_sched_info info;
	u64 send_bytes, recv_bytes;
	struct kcoll_op *op;
	int ret, algo;
	u32 i;

	op = kcoll_fi(ALLOC, NULL, kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT));
	if (!op)
		return ERR_PTR(-ENOMEM);
	kref_init(&op->ref);
	kcoll_comm_get(comm);
	op->comm = comm;
	kcoll_comm_hw_hold(comm);	/* dropped by kcoll_op_release_hw() */
	op->counted = true;
	op->state = KCOLL_OP_QUEUED;	/* initial: nobody else sees it yet */
	INIT_WORK(&op->work, kcoll_op_work);
	atomic_set(&op->nreqs, 0);
	op->dtype = arg->dtype;
	op->redop = arg->op;
	op->args.coll = arg->coll;
	op->args.nranks = comm->nranks;
	op->args.rank = comm->rank;
	op->args.root = arg->root;
	op->args.count = arg->count;
	op->args.elem_size = kcoll_dtype_size(arg->dtype);
	op->args.in_place = arg->flags & KCOLL_COLL_IN_PLACE;
	if (kcoll_coll_vector(arg->coll)) {
		ret = kcoll_op_copy_counts(op, arg);
		if (ret)
			goto out_free;
	}
	ret = kcoll_sched_check_args(&op->args);
	if (!ret)
		ret = kcoll_sched_buf_bytes(&op->args, &send_bytes, &recv_bytes);
	if (ret)
		goto out_free;

	/* The node's configuration (netlink config-set), the same on every node of a job. */
	kcoll_sched_tuning_default(&tuning);
	kcoll_config_get(&cfg);
	tuning.chunk_bytes = cfg.chunk_bytes;
	tuning.small_bytes = cfg.small_bytes;
	tuning.medium_bytes = cfg.medium_bytes;
	tuning.tree_ranks = cfg.tree_ranks;
	for (i = 0; i < KCOLL_NUM_COLLECTIVES; i++)
		tuning.algo[i] = cfg.algo[i];
	algo = kcoll_sched_choose(arg->coll, comm->nranks, kcoll_op_payload(op),
				  op->args.in_place, arg->algo, &tuning);
	if (algo < 0) {
		ret = algo;
		goto out_free;
	}
	op->algo = algo;
	op->chunk = tuning.chunk_bytes;
	ret = kcoll_sched_build(&op->args, algo, op->chunk, NULL, 0, &info);
	if (ret)
		goto out_free;
	op->nsteps = info.nsteps;
	op->steps = kcoll_fi(ALLOC, NULL, kvmalloc_array(max(info.nsteps, 1U), sizeof(*op->steps),
							 GFP_KERNEL_ACCOUNT));
	op->sstate = kcoll_fi(ALLOC, NULL, kvzalloc(max(info.nsteps, 1U), GFP_KERNEL_ACCOUNT));
	op->sstatus = kcoll_fi(ALLOC, NULL, kvcalloc(max(info.nsteps, 1U), sizeof(int),
						     GFP_KERNEL_ACCOUNT));
	if (!op->steps || !op->sstate || !op->sstatus) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = kcoll_sched_build(&op->args, algo, op->chunk, op->steps, info.nsteps, &info);
	if (ret)
		goto out_free;
	for (i = 0; i < op->nsteps; i++) {
		if (op->steps[i].bytes > KCOLL_COLL_MAX_MSG) {
			ret = -EINVAL;
			goto out_free;
		}
	}
	/* In place concerns the root only in rooted collectives: not part of the agreement. */
	fp_args = op->args;
	if (kcoll_coll_rooted(arg->coll))
		fp_args.in_place = false;
	op->tag = kcoll_sched_fingerprint(&fp_args, algo, op->chunk);

	/* Scratch is the communicator's, sized by the op when it starts running. */
	op->base[KCOLL_BUF_SCRATCH] = info.scratch_bytes;
	ret = kcoll_op_region(op, KCOLL_BUF_SEND, arg->flags & KCOLL_COLL_SEND_BUF,
			      arg->send_handle, arg->sendbuf, send_bytes);
	if (!ret)
		ret = kcoll_op_region(op, KCOLL_BUF_RECV, arg->flags & KCOLL_COLL_RECV_BUF,
				      arg->recv_handle, arg->recvbuf, recv_bytes);
	if (ret)
		goto out_free;
	return op;

out_free:
	kcoll_op_put(op);
	return ERR_PTR(ret);
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

	if (!status && op->redop == KCOLL_REDOP_AVG && kcoll_coll_reduces(op->args.coll) &&
	    kcoll_op_result(op, &off, &count) && count)
		kcoll_engine_finalize(kcoll_op_ptr(op, KCOLL_BUF_RECV, off * op->args.elem_size),
				      count, op->dtype, op->redop, op->args.nranks);
	/*
	 * The caller's receive memory must not stay writable after the call returns, even
	 * while step requests still hold the regions (an eager send waiting for its
	 * acknowledgment): its keys die now, before the outcome is reported.
	 */
	kcoll_region_revoke(&op->own[KCOLL_BUF_RECV]);
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
	if (op->id) {
		atomic_inc(&comm->ctx->ndone);
		wake_up_all(&comm->ctx->poll_wq);
	}
	wake_up_all(&comm->wq);
	spin_unlock_bh(&comm->lock);
	kcoll_op_put(op);	/* comm->ops' reference */
}

/* The progress engine of one operation; see the file comment. */
static void kcoll_op_work(struct work_struct *work)
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
	kcoll_comm_fail(comm, err, U32_MAX);
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
static int kcoll_op_submit(struct kcoll_op *op)
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

long kcoll_ioctl_coll(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_comm *comm;
	struct kcoll_coll arg;
	struct kcoll_op *op;
	bool slot = false;
	u32 usize, id;
	long ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_COLL_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	comm = kcoll_comm_lookup(ctx, arg.comm);
	if (!comm)
		return -ENOENT;
	ret = kcoll_op_check(&arg, comm);
	if (!ret) {
		spin_lock_bh(&comm->lock);
		ret = comm->state == KCOLL_COMM_READY ? 0 :
		      (comm->error ? comm->error : -ENOTCONN);
		spin_unlock_bh(&comm->lock);
	}
	/* Before pinning anything: a slot of the file's, owned by the ctx->ops entry. */
	if (!ret && (arg.flags & KCOLL_COLL_NONBLOCK)) {
		ret = kcoll_ctx_take(&ctx->nreqs, kcoll_max_reqs_per_file);
		slot = !ret;
	}
	if (ret)
		goto out_put_comm;
	/*
	 * Pinning and registering use the device and PD, which shutdown releases under it
	 * once nhw is zero: the op counts in nhw from here until kcoll_op_release_hw().
	 */
	mutex_lock(&comm->teardown_mutex);
	op = comm->shut ? ERR_PTR(kcoll_comm_unready(comm)) : kcoll_op_create(comm, &arg);
	kcoll_teardown_unlock(comm);
	if (IS_ERR(op)) {
		ret = PTR_ERR(op);
		goto out_put_comm;
	}
	if (arg.flags & KCOLL_COLL_NONBLOCK) {
		ret = kcoll_fi(ALLOC, -ENOMEM, xa_alloc_cyclic(&ctx->ops, &id, op, xa_limit_31b,
							       &ctx->next_op, GFP_KERNEL));
		if (ret < 0)
			goto out_put_op;
		op->id = id;
		kref_get(&op->ref);	/* the request table's */
		slot = false;		/* and the file's slot */
	}
	ret = kcoll_op_submit(op);
	if (ret) {
		if (op->id && xa_erase(&ctx->ops, op->id)) {
			kcoll_ctx_give(&ctx->nreqs);
			kcoll_op_put(op);
		}
		goto out_put_op;
	}
	arg.algo_used = op->algo;
	if (op->id) {
		arg.req = op->id | KCOLL_OP_ID_BIT;
		ret = kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
		goto out_put_op;
	}
	ret = wait_event_killable_timeout(comm->wq, READ_ONCE(op->state) == KCOLL_OP_DONE,
					  arg.timeout_ms ? msecs_to_jiffies(arg.timeout_ms) :
							   MAX_SCHEDULE_TIMEOUT);
	if (ret <= 0) {
		ret = ret ? -EINTR : -ETIMEDOUT;
		kcoll_comm_fail(comm, ret, U32_MAX);
		goto out_put_op;
	}
	ret = op->status;
	if (!ret)
		ret = kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
out_put_op:
	kcoll_op_put(op);
out_put_comm:
	if (slot)
		kcoll_ctx_give(&ctx->nreqs);
	kcoll_comm_put(comm);
	return ret;
}

/**
 * kcoll_coll_wait_ctx - KCOLL_IOC_WAIT for a collective's request id
 * @ctx:	the file
 * @arg:	the WAIT argument, copied in
 * Return: as KCOLL_IOC_WAIT; @arg filled on 0.
 */
int kcoll_coll_wait_ctx(struct kcoll_ctx *ctx, struct kcoll_wait *arg)
{
	u32 id = (u32)arg->req;
	struct kcoll_op *op;
	long ret;

	if (!(arg->req & KCOLL_OP_ID_BIT) || arg->req >> 33 || !id)
		return -EINVAL;
	xa_lock(&ctx->ops);
	op = xa_load(&ctx->ops, id);
	if (op && op->comm->handle == arg->comm)
		kref_get(&op->ref);
	else
		op = NULL;
	xa_unlock(&ctx->ops);
	if (!op)
		return -ENOENT;
	if (arg->timeout_ms) {
		unsigned long t = arg->timeout_ms == U32_MAX ? MAX_SCHEDULE_TIMEOUT :
				  msecs_to_jiffies(arg->timeout_ms);

		ret = wait_event_killable_timeout(op->comm->wq,
						  READ_ONCE(op->state) == KCOLL_OP_DONE, t);
		if (ret < 0) {
			kcoll_op_put(op);
			return -EINTR;
		}
	}
	if (READ_ONCE(op->state) != KCOLL_OP_DONE) {
		kcoll_op_put(op);
		return -EAGAIN;
	}
	if (xa_erase(&ctx->ops, id) == op) {
		atomic_dec(&ctx->ndone);
		kcoll_ctx_give(&ctx->nreqs);
		kcoll_op_put(op);
	}
	arg->status = op->status;
	arg->result = kcoll_op_payload(op);
	kcoll_op_put(op);
	return 0;
}

/* File release: drop the references of collectives nobody waited for. */
void kcoll_ctx_drop_ops(struct kcoll_ctx *ctx)
{
	struct kcoll_op *op;
	unsigned long id;

	xa_for_each(&ctx->ops, id, op) {
		if (xa_erase(&ctx->ops, id) == op) {
			kcoll_ctx_give(&ctx->nreqs);
			kcoll_op_put(op);
		}
	}
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
