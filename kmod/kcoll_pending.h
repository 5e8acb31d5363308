/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file's table of non-blocking requests: what KCOLL_IOC_WAIT and poll() see of
 * point-to-point transfers and collectives alike (kcoll_pending.c).
 */
#ifndef _KCOLL_PENDING_H
#define _KCOLL_PENDING_H

#include <linux/kref.h>
#include <linux/types.h>

struct kcoll_ctx;
struct kcoll_comm;
struct kcoll_pending;
struct kcoll_wait;

/**
 * struct kcoll_pending_ops - how the request table handles one kind of request
 * @release:	the embedding object's kref release function
 * @done_state:	the value of its state once the outcome is known
 * @settle:	optional: wait until what must end before the outcome is reported has ended
 * @report:	fill @arg's status and result; called once the request is done
 */
struct kcoll_pending_ops {
	void (*release)(struct kref *ref);
	int done_state;
	void (*settle)(struct kcoll_pending *p);
	void (*report)(const struct kcoll_pending *p, struct kcoll_wait *arg);
};

/**
 * struct kcoll_pending - a request as the file's table sees it, embedded in a
 * kcoll_req (a transfer) or a kcoll_op (a collective)
 * @ops:	its kind (constant)
 * @comm:	its communicator (constant; the embedding object holds the reference)
 * @ref:	the embedding object's references
 * @state:	the embedding object's state (changed under comm->lock, read here with
 *		READ_ONCE)
 * @id:		its id in ctx->reqs, 0 while it is not in the table (set before the
 *		request is submitted, constant after)
 *
 * Owned by the embedding object; the table's entry holds one of its references.
 */
struct kcoll_pending {
	const struct kcoll_pending_ops *ops;
	struct kcoll_comm *comm;
	struct kref *ref;
	const int *state;
	u32 id;
};

static inline void kcoll_pending_init(struct kcoll_pending *p, const struct kcoll_pending_ops *ops,
				      struct kcoll_comm *comm, struct kref *ref,
				      const int *state)
{
	p->ops = ops;
	p->comm = comm;
	p->ref = ref;
	p->state = state;
	p->id = 0;
}

int kcoll_pending_add(struct kcoll_ctx *ctx, struct kcoll_pending *p);
void kcoll_pending_cancel(struct kcoll_ctx *ctx, struct kcoll_pending *p);
void kcoll_pending_complete(struct kcoll_pending *p);
long kcoll_ioctl_wait(struct kcoll_ctx *ctx, void __user *uarg);
void kcoll_ctx_drop_pending(struct kcoll_ctx *ctx);

#endif
