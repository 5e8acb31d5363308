// SPDX-License-Identifier: GPL-2.0
/*
 * The communicator's uAPI: COMM_CREATE (the peer table, the transport choice, the wait for
 * every peer), COMM_DESTROY, COMM_ABORT, and the file's comms at release.  The comm's
 * lifetime and state machine are kcoll_comm.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/ipv6.h>

#include "kcoll.h"
#include "kcoll_comm.h"
#include "kcoll_nl.h"

/* While COMM_CREATE waits: how often a READY that went unanswered is followed by a NOP. */
#define KCOLL_NUDGE_MS		500

static int kcoll_sockaddr_from_uapi(const struct kcoll_sockaddr *u, struct sockaddr_storage *ss)
{
	u16 port = u->port ? u->port : kcoll_listen_port;

	memset(ss, 0, sizeof(*ss));
	switch (u->family) {
	case AF_INET: {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (u->scope_id || memchr_inv(u->addr + 4, 0, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, u->addr, 4);
		return sin->sin_addr.s_addr == htonl(INADDR_ANY) ? -EINVAL : 0;
	}
	case AF_INET6: {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_scope_id = u->scope_id;
		memcpy(&sin6->sin6_addr, u->addr, 16);
		return ipv6_addr_any(&sin6->sin6_addr) ? -EINVAL : 0;
	}
	default:
		return -EINVAL;
	}
}

/*
 * Read and check the peer table.  Equal entries are legal: ranks on one node share its
 * address and listener, which tells them apart by the rank in the hello.
 */
static int kcoll_comm_read_peers(struct kcoll_comm *comm, const struct kcoll_comm_create *arg)
{
	struct kcoll_sockaddr u;
	u32 i;
	int ret;

	comm->addrs = kcoll_fi(ALLOC, NULL, kvcalloc(arg->nranks, sizeof(*comm->addrs),
						     GFP_KERNEL_ACCOUNT));
	if (!comm->addrs)
		return -ENOMEM;
	for (i = 0; i < arg->nranks; i++) {
		ret = copy_struct_from_user(&u, sizeof(u),
					    u64_to_user_ptr(arg->peers + (u64)i * arg->peer_size),
					    arg->peer_size);
		if (ret)
			return ret;
		ret = kcoll_sockaddr_from_uapi(&u, &comm->addrs[i]);
		if (ret)
			return ret;
		cond_resched();		/* up to KCOLL_MAX_RANKS entries */
	}
	return 0;
}

static int kcoll_comm_check_arg(const struct kcoll_comm_create *arg)
{
	if (arg->flags & ~KCOLL_COMM_TRANSPORT_MASK ||
	    hweight32(arg->flags & KCOLL_COMM_TRANSPORT_MASK) > 1 ||
	    arg->reserved[0] || arg->reserved[1] || arg->failed_rank || arg->handle)
		return -EINVAL;
	if (!arg->comm_id || !arg->nranks || arg->nranks > KCOLL_MAX_RANKS ||
	    arg->rank >= arg->nranks || arg->peer_size < sizeof(struct kcoll_sockaddr))
		return -EINVAL;
	/* Bounds the table's tails that copy_struct_from_user() checks for zeroes. */
	if (arg->peer_size > KCOLL_PEER_SIZE_MAX)
		return -E2BIG;
	return kcoll_comm_check_locality(arg);
}

static void kcoll_comm_set_tp(struct kcoll_comm *comm, const struct kcoll_transport *tp)
{
	u32 i;

	for (i = 0; i < comm->nranks; i++)
		comm->conns[i].tp = tp;
}

/*
 * Choose the transport of a comm of several ranks and attach it.  Every rank on this node's
 * loopback: no device reaches them, the loop does.  Otherwise the comm's flags, else the
 * transport setting; auto is RDMA when the rank's address has an RDMA device, else TCP.
 * Per comm: the memory operations are per comm (kcoll_comm_mem_tp()).
 */
static int kcoll_comm_attach(struct kcoll_comm *comm, u32 flags)
{
	u8 want = READ_ONCE(kcoll_transport_cfg);
	int ret;

	if (flags & KCOLL_COMM_TRANSPORT_RDMA)
		want = KCOLL_CONFIG_TRANSPORT_RDMA;
	else if (flags & KCOLL_COMM_TRANSPORT_TCP)
		want = KCOLL_CONFIG_TRANSPORT_TCP;
	if (kcoll_loop_wants(comm))
		kcoll_comm_set_tp(comm, &kcoll_loop_transport);
	else if (want == KCOLL_CONFIG_TRANSPORT_TCP)
		kcoll_comm_set_tp(comm, &kcoll_tcp_transport);
	ret = kcoll_comm_mem_tp(comm)->attach(comm);
	if (ret == -EADDRNOTAVAIL && kcoll_comm_mem_tp(comm) == &kcoll_rdma_transport &&
	    want == KCOLL_CONFIG_TRANSPORT_AUTO) {
		kcoll_comm_set_tp(comm, &kcoll_tcp_transport);
		ret = kcoll_tcp_transport.attach(comm);
	}
	return ret;
}

long kcoll_ioctl_comm_create(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_comm_create arg;
	struct kcoll_comm *comm;
	unsigned long deadline;
	long timeout, wret;
	u32 usize, i, handle;
	int ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_COMM_CREATE_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	ret = kcoll_comm_check_arg(&arg);
	if (!ret && kcoll_require_secret && !memchr_inv(arg.secret, 0, sizeof(arg.secret)))
		ret = -EACCES;
	comm = ret ? NULL : kcoll_comm_alloc(&arg);
	/* The comm holds the key now; no other copy stays in the kernel (nor is copied out). */
	memzero_explicit(arg.secret, sizeof(arg.secret));
	if (ret)
		return ret;
	if (!comm)
		return -ENOMEM;
	if (!comm->authenticated && comm->nranks > 1)
		pr_notice_ratelimited("comm %llx rank %u: created without a secret: its connections are authenticated by address only\n",
				      comm->comm_id, comm->rank);
	comm->net = get_net(current->nsproxy->net_ns);
	ret = kcoll_comm_read_peers(comm, &arg);
	if (!ret)
		ret = kcoll_comm_read_locality(comm, &arg);
	if (ret)
		goto out_put;

	/* One rank needs no peer: its comm works without any transport resource. */
	if (comm->nranks > 1) {
		ret = kcoll_comm_attach(comm, arg.flags);
		if (ret)
			goto out_put;
	}

	/*
	 * Reserve the handle (a NULL entry): lookups and COMM_DESTROY see no communicator
	 * there until it is published, with the table's reference, once creation succeeded.
	 */
	mutex_lock(&ctx->lock);
	ret = kcoll_fi(ALLOC, -ENOMEM, xa_alloc_cyclic(&ctx->comms, &handle, NULL, xa_limit_31b,
						       &ctx->next_comm, GFP_KERNEL));
	mutex_unlock(&ctx->lock);
	if (ret < 0)
		goto out_shutdown;
	comm->ctx = ctx;
	comm->handle = handle;

	spin_lock_bh(&comm->lock);
	kcoll_comm_change_state(comm, comm->nranks > 1 ? KCOLL_COMM_CONNECTING : KCOLL_COMM_READY,
				0);
	comm->was_ready = comm->nranks == 1;
	spin_unlock_bh(&comm->lock);
	ret = kcoll_comm_publish(comm);
	if (ret)
		goto out_unhandle;

	mutex_lock(&comm->teardown_mutex);
	for (i = 0; i < comm->rank; i++) {
		ret = comm->conns[i].tp->connect(&comm->conns[i]);
		if (ret) {
			kcoll_comm_fail(comm, ret, i);
			break;
		}
	}
	mutex_unlock(&comm->teardown_mutex);
	deadline = jiffies +
		   msecs_to_jiffies(arg.timeout_ms ? arg.timeout_ms : kcoll_connect_timeout_ms);
	for (;;) {
		timeout = min_t(long, (long)(deadline - jiffies),
				msecs_to_jiffies(KCOLL_NUDGE_MS));
		wret = wait_event_killable_timeout(comm->wq,
						   READ_ONCE(comm->state) != KCOLL_COMM_CONNECTING,
						   max(timeout, 1L));
		if (wret || time_after_eq(jiffies, deadline))
			break;
		kcoll_comm_nudge(comm);	/* see there why */
	}
	ret = wret < 0 ? -EINTR : 0;
	if (ret < 0) {
		kcoll_comm_fail(comm, -EINTR, U32_MAX);
		ret = -EINTR;
		arg.failed_rank = U32_MAX;
		goto out_destroy;
	}
	/*
	 * A comm that became ready is created, even if a peer already left again (a fast
	 * peer may destroy its end before this thread wakes up): the sticky error shows on
	 * the first operation.
	 */
	if (!READ_ONCE(comm->was_ready)) {
		ret = kcoll_comm_connect_error(comm, &arg.failed_rank);
		goto out_destroy;
	}
	arg.handle = handle;
	arg.failed_rank = U32_MAX;
	ret = kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
	if (ret)
		goto out_destroy;
	/* Publish: the table's reference (our own passes to it) before anyone can see it. */
	mutex_lock(&ctx->lock);
	xa_store(&ctx->comms, handle, comm, GFP_KERNEL);	/* reserved: cannot fail */
	mutex_unlock(&ctx->lock);
	kcoll_nl_event_comm(comm, KCOLL_NL_COMM_CREATED);
	return 0;

out_destroy:
	/* Tell the caller which peer failed; the error itself is the return value. */
	if (usize >= offsetofend(struct kcoll_comm_create, failed_rank))
		put_user(arg.failed_rank,
			 (u32 __user *)(uarg + offsetof(struct kcoll_comm_create, failed_rank)));
out_unhandle:
	mutex_lock(&ctx->lock);
	xa_erase(&ctx->comms, handle);		/* the reservation */
	mutex_unlock(&ctx->lock);
	kcoll_comm_destroy(comm);	/* drops our reference */
	return ret;

out_shutdown:
	kcoll_comm_shutdown(comm);
out_put:
	kcoll_comm_put(comm);
	return ret;
}

/*
 * Remove a handle from the table; the caller owns the table's reference after.  A handle
 * still reserved by a COMM_CREATE in progress is not there yet (NULL) and stays reserved.
 */
static struct kcoll_comm *kcoll_comm_unhandle(struct kcoll_ctx *ctx, u32 handle)
{
	struct kcoll_comm *comm;

	mutex_lock(&ctx->lock);
	comm = xa_load(&ctx->comms, handle);
	if (comm) {
		xa_erase(&ctx->comms, handle);
		kcoll_ctx_give(&ctx->ncomms);	/* the slot COMM_CREATE took */
	}
	mutex_unlock(&ctx->lock);
	return comm;
}

/*
 * The communicator a COMM_DESTROY or COMM_ABORT argument names, with a reference: taken
 * out of the file's table (@unhandle, the table's reference) or looked up in it.
 */
static struct kcoll_comm *kcoll_comm_arg_in(struct kcoll_ctx *ctx, void __user *uarg,
					    bool unhandle)
{
	struct kcoll_comm_arg arg;
	struct kcoll_comm *comm;
	u32 usize;
	int ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_COMM_ARG_SIZE_VER0, uarg, &usize);
	if (ret)
		return ERR_PTR(ret);
	if (arg.flags || arg.reserved0)
		return ERR_PTR(-EINVAL);
	comm = unhandle ? kcoll_comm_unhandle(ctx, arg.handle) : kcoll_comm_lookup(ctx, arg.handle);
	return comm ? comm : ERR_PTR(-ENOENT);
}

long kcoll_ioctl_comm_destroy(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_comm *comm = kcoll_comm_arg_in(ctx, uarg, true);

	if (IS_ERR(comm))
		return PTR_ERR(comm);
	kcoll_comm_destroy(comm);
	return 0;
}

long kcoll_ioctl_comm_abort(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_comm *comm = kcoll_comm_arg_in(ctx, uarg, false);

	if (IS_ERR(comm))
		return PTR_ERR(comm);
	kcoll_comm_abort(comm);
	kcoll_nl_event_comm(comm, KCOLL_NL_COMM_FAILED);
	kcoll_comm_put(comm);
	return 0;
}

/* File release: every comm of the file goes, connections first. */
void kcoll_ctx_destroy_comms(struct kcoll_ctx *ctx)
{
	struct kcoll_comm *comm;
	unsigned long handle;

	kcoll_ctx_drop_pending(ctx);
	xa_for_each(&ctx->comms, handle, comm) {
		comm = kcoll_comm_unhandle(ctx, handle);
		if (comm)
			kcoll_comm_destroy(comm);
	}
}
