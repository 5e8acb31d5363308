// SPDX-License-Identifier: GPL-2.0
/*
 * A file's table of non-blocking requests (ctx->reqs): point-to-point transfers and
 * collectives get their ids from one allocator, one WAIT consumes either, one counter
 * drives poll().  What differs between the two kinds is behind struct kcoll_pending_ops.
 *
 * An entry holds a reference on its request and one of the file's request slots
 * (ctx->nreqs); whoever erases it from the table owns both.
 */
#include <linux/kcoll.h>
#include <linux/sched/signal.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "kcoll.h"

static bool kcoll_pending_done(const struct kcoll_pending *p)
{
	return READ_ONCE(*p->state) == p->ops->done_state;
}

static void kcoll_pending_put(struct kcoll_pending *p)
{
	kref_put(p->ref, p->ops->release);
}

/**
 * kcoll_pending_add - give a request an id in the file's table
 * @ctx:	the file
 * @p:		the request, not submitted yet; the caller holds one of @ctx's request
 *		slots, which the entry owns from here on success
 * Return: 0 (@p->id set, the table holds a reference), or -ENOMEM / -EBUSY.
 */
int kcoll_pending_add(struct kcoll_ctx *ctx, struct kcoll_pending *p)
{
	u32 id;
	int ret;

	ret = kcoll_fi(ALLOC, -ENOMEM, xa_alloc_cyclic(&ctx->reqs, &id, p, xa_limit_31b,
						       &ctx->next_req, GFP_KERNEL));
	if (ret < 0)
		return ret;
	p->id = id;
	kref_get(p->ref);
	return 0;
}

/**
 * kcoll_pending_cancel - take back the entry of a request whose submission failed
 * @ctx:	the file
 * @p:		the request (its id may be 0: not in the table)
 */
void kcoll_pending_cancel(struct kcoll_ctx *ctx, struct kcoll_pending *p)
{
	if (p->id && xa_erase(&ctx->reqs, p->id) == p) {
		kcoll_ctx_give(&ctx->nreqs);
		kcoll_pending_put(p);
	}
}

/*
 * The request's outcome is known: poll() reports it until a WAIT consumes it.  A WAIT
 * that sees the request done before this ran lowers the count first; it is right again
 * once both ran, and this wake-up comes last.
 * Context: comm->lock held.
 */
void kcoll_pending_complete(struct kcoll_pending *p)
{
	struct kcoll_ctx *ctx = p->comm->ctx;

	lockdep_assert_held(&p->comm->lock);
	if (!p->id)
		return;
	atomic_inc(&ctx->ndone);
	wake_up_all(&ctx->poll_wq);
}

long kcoll_ioctl_wait(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_pending *p;
	struct kcoll_wait arg;
	u32 usize;
	long ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_WAIT_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.reserved0 || arg.reserved[0] || arg.reserved[1] || !arg.req ||
	    arg.req > U32_MAX)
		return -EINVAL;
	xa_lock(&ctx->reqs);
	p = xa_load(&ctx->reqs, arg.req);
	if (p && p->comm->handle == arg.comm)
		kref_get(p->ref);
	else
		p = NULL;
	xa_unlock(&ctx->reqs);
	if (!p)
		return -ENOENT;

	if (arg.timeout_ms) {
		unsigned long t = arg.timeout_ms == U32_MAX ? MAX_SCHEDULE_TIMEOUT :
				  msecs_to_jiffies(arg.timeout_ms);

		ret = wait_event_killable_timeout(p->comm->wq, kcoll_pending_done(p), t);
		if (ret < 0) {
			kcoll_pending_put(p);
			return -EINTR;
		}
	}
	if (!kcoll_pending_done(p)) {
		kcoll_pending_put(p);
		return -EAGAIN;
	}
	if (p->ops->settle)
		p->ops->settle(p);
	/* Consume it: whoever erases it owns the table's reference and the slot. */
	if (xa_erase(&ctx->reqs, arg.req) == p) {
		atomic_dec(&ctx->ndone);
		kcoll_ctx_give(&ctx->nreqs);
		kcoll_pending_put(p);
	}
	p->ops->report(p, &arg);
	arg.reserved0 = 0;
	kcoll_pending_put(p);
	return kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
}

/* File release: drop the references of requests nobody waited for. */
void kcoll_ctx_drop_pending(struct kcoll_ctx *ctx)
{
	struct kcoll_pending *p;
	unsigned long id;

	xa_for_each(&ctx->reqs, id, p) {
		if (xa_erase(&ctx->reqs, id) == p) {
			kcoll_ctx_give(&ctx->nreqs);
			kcoll_pending_put(p);
		}
	}
}
