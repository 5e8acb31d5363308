// SPDX-License-Identifier: GPL-2.0
/*
 * Collectives: a KCOLL_IOC_COLL call becomes a struct kcoll_op that executes the calling
 * rank's core/ schedule (core/kcoll_sched.h) stage by stage.
 *
 * The call (this file): the argument's checks, the memory of both sides, the schedule
 * and the op built from them, then submission and WAIT.  The op's execution is kcoll_op.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kcoll.h"
#include "kcoll_coll.h"

/* Largest single message of a schedule (a CTS must describe it in one message). */
#define KCOLL_COLL_MAX_MSG	SZ_256M
/* Request ids of collectives have this bit set; point-to-point ids do not. */

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
	kcoll_pending_init(&op->pending, &kcoll_op_pending_ops, comm, &op->ref, &op->state);
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
	op->args.local_size = kcoll_comm_sched_local_size(comm);
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
	tuning.local_size = op->args.local_size;
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

/*
 * A call of the same-host path (kcoll_local.c).  Its failures once the rank arrived fail
 * the comm, as the normal path's do once its messages went out.
 */
static long kcoll_local_coll(struct kcoll_comm *comm, struct kcoll_coll *arg,
			     void __user *uarg, u32 usize)
{
	bool fatal;
	int ret;

	ret = kcoll_local_run(comm, arg, &fatal);
	if (ret) {
		if (fatal)
			kcoll_comm_up->fail(comm, ret, U32_MAX);
		return ret;
	}
	arg->algo_used = KCOLL_ALG_USED_LOCAL;
	return kcoll_uarg_copy_out(uarg, usize, arg, sizeof(*arg));
}

long kcoll_ioctl_coll(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_comm *comm;
	struct kcoll_coll arg;
	struct kcoll_op *op;
	bool slot = false;
	u32 usize;
	long ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_COLL_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	comm = kcoll_comm_lookup(ctx, arg.comm);
	if (!comm)
		return -ENOENT;
	ret = kcoll_op_check(&arg, comm);
	if (!ret)
		ret = kcoll_comm_usable(comm);
	if (!ret && kcoll_local_wanted(comm, &arg, READ_ONCE(kcoll_cfg.algo[arg.coll]))) {
		ret = kcoll_local_coll(comm, &arg, uarg, usize);
		goto out_put_comm;
	}
	/* Before pinning anything: a slot of the file's, owned by the ctx->reqs entry. */
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
	kcoll_comm_up->teardown_unlock(comm);
	if (IS_ERR(op)) {
		ret = PTR_ERR(op);
		goto out_put_comm;
	}
	if (arg.flags & KCOLL_COLL_NONBLOCK) {
		ret = kcoll_pending_add(ctx, &op->pending);
		if (ret)
			goto out_put_op;
		slot = false;		/* the table's entry owns it */
	}
	ret = kcoll_op_submit(op);
	if (ret) {
		kcoll_pending_cancel(ctx, &op->pending);
		goto out_put_op;
	}
	arg.algo_used = op->algo;
	if (op->pending.id) {
		arg.req = op->pending.id;
		ret = kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
		goto out_put_op;
	}
	ret = wait_event_killable_timeout(comm->wq, READ_ONCE(op->state) == KCOLL_OP_DONE,
					  arg.timeout_ms ? msecs_to_jiffies(arg.timeout_ms) :
							   MAX_SCHEDULE_TIMEOUT);
	if (ret <= 0) {
		ret = ret ? -EINTR : -ETIMEDOUT;
		kcoll_comm_up->fail(comm, ret, U32_MAX);
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
