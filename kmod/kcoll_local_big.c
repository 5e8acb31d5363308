// SPDX-License-Identifier: GPL-2.0
/*
 * The same-host path of blocking all-reduces above KCOLL_LOCAL_MAX_BYTES a rank: one copy
 * of every byte, by the kernel, from the ranks' own pages.  Each rank pins its input and
 * output (or holds its zero-copy buffers) and publishes them in the group (@mem), then the
 * ranks meet twice:
 *
 *   1. all published: rank r reduces elements [r*count/n, (r+1)*count/n) of every rank's
 *      input, in rank order as the small path does, into a kernel buffer a chunk at a
 *      time, and copies the chunk into every rank's output (so an in-place call reads a
 *      chunk of every input before it overwrites it).  Every side's pages are vmap()ed
 *      by their owner for the call: the reductions read the peers' pages in place, with
 *      no copy in;
 *   2. all written: every output is whole; each rank returns.
 *
 * The ranks work on their shares at once, on as many CPUs as they run on.  The schedule of
 * the normal path moves every byte 2(n-1)/n times through the loop transport's copies and
 * a dozen work items a stage; Open MPI's shared memory copies it in and out of a shared
 * segment.
 *
 * Lifetime: a struct kcoll_local_mem is its caller's (the first reference), the group's
 * while published (a reference, dropped when the second rendezvous completes or the group
 * is freed), and each peer's while it copies (a reference).  So a rank killed in the
 * middle leaves its pages pinned for the peers still copying, and the last of them unpins.
 * The peers then fail with ECONNRESET (the dead rank's share is missing); writing into a
 * dead rank's pinned pages is harmless.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kcoll.h"
#include "kcoll_coll.h"
#include "kcoll_local_int.h"

/* The kernel buffer a rank reduces its share in, a chunk at a time: sized for the caches. */
#define KCOLL_LOCAL_CHUNK	SZ_64K

/**
 * struct kcoll_local_side - where one side of a rank's call lives
 * @own:	pinned user memory (the call's; empty for a buffer or the in-place input)
 * @buf:	or a zero-copy buffer (a use: kcoll_buf_use()), or NULL
 * @map:	the call's own vmap() of the range's pages, or NULL (the in-place input:
 *		the output's).  Not the buffer's own mapping: a peer's shutdown removes that
 *		one, while this one lives as long as the pages it maps (this struct).
 * @p:		the range's first byte in the CPU's view
 */
struct kcoll_local_side {
	struct kcoll_region own;
	struct kcoll_buf *buf;
	void *map;
	u8 *p;
};

/**
 * struct kcoll_local_mem - one rank's memory of a single-copy call
 * @ref:	the caller's, the group's while published, each copying peer's; the last put
 *		unpins and frees (file comment)
 * @send:	its input (an in-place call: @recv's region)
 * @recv:	its output
 */
struct kcoll_local_mem {
	struct kref ref;
	struct kcoll_local_side send;
	struct kcoll_local_side recv;
};

static void kcoll_local_mem_free(struct kref *ref)
{
	struct kcoll_local_mem *mem = container_of(ref, struct kcoll_local_mem, ref);
	struct kcoll_local_side *sides[] = { &mem->send, &mem->recv };
	int i;

	for (i = 0; i < ARRAY_SIZE(sides); i++) {
		if (sides[i]->map)
			vunmap(sides[i]->map);
		kcoll_region_release(&sides[i]->own);
		if (sides[i]->buf)
			kcoll_buf_unuse(sides[i]->buf);
	}
	kfree(mem);
}

void kcoll_local_mem_get(struct kcoll_local_mem *mem)
{
	kref_get(&mem->ref);
}

void kcoll_local_mem_put(struct kcoll_local_mem *mem)
{
	kref_put(&mem->ref, kcoll_local_mem_free);
}

/* Map @bytes (> 0) at byte @off of @r, whose pages stay while @side lives. */
static int kcoll_local_side_map(struct kcoll_local_side *side, struct kcoll_region *r,
				u64 off, u64 bytes)
{
	u64 start = r->first_off + off;
	unsigned long first = start >> PAGE_SHIFT;
	unsigned int n = ((start + bytes - 1) >> PAGE_SHIFT) - first + 1;

	side->map = vmap(r->pages + first, n, VM_MAP, PAGE_KERNEL);
	if (!side->map)
		return -ENOMEM;
	side->p = side->map + offset_in_page(start);
	return 0;
}

/* Pin or hold one side.  Return: 0, -EFAULT, -ENOMEM, or kcoll_buf_use()'s error. */
static int kcoll_local_side_get(struct kcoll_comm *comm, struct kcoll_local_side *side,
				bool is_buf, u32 handle, u64 addr, u64 bytes, bool write)
{
	int err;

	if (is_buf) {
		side->buf = kcoll_buf_use(comm, handle, addr, bytes);
		if (IS_ERR(side->buf)) {
			err = PTR_ERR(side->buf);
			side->buf = NULL;
			return err;
		}
		return kcoll_local_side_map(side, &side->buf->region, addr, bytes);
	}
	if (!addr)
		return -EFAULT;
	err = kcoll_region_pin(&side->own, addr, bytes, write);
	return err ?: kcoll_local_side_map(side, &side->own, 0, bytes);
}

/* This rank's memory of the call, or ERR_PTR: the normal path's errors for its buffers. */
static struct kcoll_local_mem *kcoll_local_mem_pin(struct kcoll_comm *comm,
						   const struct kcoll_coll *arg, u64 bytes)
{
	struct kcoll_local_mem *mem;
	int err;

	mem = kcoll_fi(ALLOC, NULL, kzalloc(sizeof(*mem), GFP_KERNEL_ACCOUNT));
	if (!mem)
		return ERR_PTR(-ENOMEM);
	kref_init(&mem->ref);
	/* The output first, as the normal path pins it first. */
	err = kcoll_local_side_get(comm, &mem->recv, arg->flags & KCOLL_COLL_RECV_BUF,
				   arg->recv_handle, arg->recvbuf, bytes, true);
	if (!err && (arg->flags & KCOLL_COLL_IN_PLACE)) {
		mem->send.p = mem->recv.p;
	} else if (!err) {
		err = kcoll_local_side_get(comm, &mem->send, arg->flags & KCOLL_COLL_SEND_BUF,
					   arg->send_handle, arg->sendbuf, bytes, false);
	}
	if (err) {
		kcoll_local_mem_put(mem);
		return ERR_PTR(err);
	}
	return mem;
}

/* The second rendezvous completed: the group lets go of every rank's memory. */
static void kcoll_local_last_big(struct kcoll_local_group *g)
{
	u32 r;

	lockdep_assert_held(&g->lock);
	for (r = 0; r < g->nranks; r++) {
		if (g->mem[r]) {
			kcoll_local_mem_put(g->mem[r]);
			g->mem[r] = NULL;
		}
	}
}

/* The CPU's view of byte @off of the call's range on @side. */
static void *kcoll_local_ptr(const struct kcoll_local_side *side, u64 off)
{
	return side->p + off;
}

/*
 * A failed call takes its memory back from the group: no peer reads it any more (the
 * group is dead, or the peers that copy hold their own references), and its pins must
 * not outlive the call until the communicator goes.
 */
static void kcoll_local_unpublish(struct kcoll_local_group *g, u32 me,
				  struct kcoll_local_mem *mem)
{
	mutex_lock(&g->lock);
	if (g->mem[me] == mem) {
		g->mem[me] = NULL;
		kcoll_local_mem_put(mem);
	}
	mutex_unlock(&g->lock);
}

/*
 * Rank @me's share of the reduction, from every rank's input into every rank's output.
 * Return: 0, -ENOMEM, -EINTR (killed), or the group's error (a peer failed meanwhile).
 */
static int kcoll_local_share(struct kcoll_local_group *g, struct kcoll_local_mem **mems,
			     u32 me, const struct kcoll_local_sig *sig)
{
	size_t esize = kcoll_dtype_size(sig->dtype), per = KCOLL_LOCAL_CHUNK / esize;
	u64 lo = div_u64(sig->count * me, g->nranks);
	u64 hi = div_u64(sig->count * (me + 1), g->nranks);
	int err = 0;
	u8 *acc;
	u32 r;

	acc = kcoll_fi(ALLOC, NULL, kvmalloc(KCOLL_LOCAL_CHUNK, GFP_KERNEL_ACCOUNT));
	if (!acc)
		return -ENOMEM;
	while (lo < hi) {
		size_t n = min_t(u64, per, hi - lo), bytes = n * esize;
		u64 off = lo * esize;

		/* nranks >= 2: the first reduction reads two inputs. */
		kcoll_engine_reduce3(acc, kcoll_local_ptr(&mems[0]->send, off),
				     kcoll_local_ptr(&mems[1]->send, off), n, sig->dtype, sig->op);
		for (r = 2; r < g->nranks; r++)
			kcoll_engine_reduce3(acc, acc, kcoll_local_ptr(&mems[r]->send, off), n,
					     sig->dtype, sig->op);
		kcoll_engine_finalize(acc, n, sig->dtype, sig->op, g->nranks);
		for (r = 0; r < g->nranks; r++)
			memcpy(kcoll_local_ptr(&mems[r]->recv, off), acc, bytes);
		lo += n;
		/* A peer that failed meanwhile makes the rest pointless. */
		err = READ_ONCE(g->error);
		if (!err && fatal_signal_pending(current))
			err = -EINTR;
		if (err)
			break;
		cond_resched();
	}
	kvfree(acc);
	return err;
}

/**
 * kcoll_local_run_big - a call of kcoll_local_run() above KCOLL_LOCAL_MAX_BYTES a rank
 * @comm:	the communicator
 * @arg:	the call
 * @sig:	what every rank's call must agree on
 * @fatal:	as for kcoll_local_run()
 *
 * Return: as kcoll_local_run().
 */
int kcoll_local_run_big(struct kcoll_comm *comm, const struct kcoll_coll *arg,
			const struct kcoll_local_sig *sig, bool *fatal)
{
	u64 bytes = arg->count * kcoll_dtype_size(arg->dtype);
	struct kcoll_local_mem **mems, *mem;
	struct kcoll_local_group *g;
	u32 r, n = comm->nranks;
	u64 gen;
	int err;

	mems = kcoll_fi(ALLOC, NULL, kcalloc(n, sizeof(*mems), GFP_KERNEL_ACCOUNT));
	if (!mems)
		return -ENOMEM;
	mem = kcoll_local_mem_pin(comm, arg, bytes);
	if (IS_ERR(mem)) {
		kfree(mems);
		return PTR_ERR(mem);
	}
	g = kcoll_local_get(comm);
	if (IS_ERR(g)) {
		err = PTR_ERR(g);
		goto out_mem;
	}

	*fatal = true;
	err = kcoll_local_arrive(comm, g, sig, mem, NULL, &gen);
	if (!err)
		err = kcoll_local_wait(comm, g, gen, arg->timeout_ms);
	if (err)
		goto out_put;
	/* Every rank published; the group holds them until the second rendezvous. */
	mutex_lock(&g->lock);
	for (r = 0; r < n; r++) {
		mems[r] = g->mem[r];
		if (mems[r])
			kcoll_local_mem_get(mems[r]);
		else
			err = g->error ?: -ECONNRESET;
	}
	mutex_unlock(&g->lock);
	if (!err)
		err = kcoll_local_share(g, mems, comm->rank, sig);
	for (r = 0; r < n; r++)
		if (mems[r])
			kcoll_local_mem_put(mems[r]);
	if (err) {
		kcoll_local_poison(g, -ECONNRESET);
		goto out_put;
	}
	err = kcoll_local_arrive(comm, g, sig, NULL, kcoll_local_last_big, &gen);
	if (!err)
		err = kcoll_local_wait(comm, g, gen, arg->timeout_ms);
	if (!err)
		*fatal = false;
out_put:
	if (err)
		kcoll_local_unpublish(g, comm->rank, mem);
	kcoll_local_put(g);
out_mem:
	kcoll_local_mem_put(mem);
	kfree(mems);
	return err;
}
