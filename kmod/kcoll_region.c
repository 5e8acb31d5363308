// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: the pages an operation or a buffer moves data in and out of.
 *
 * A region is a run of pages (pinned user pages, or pages the module allocated), charged
 * to the caller's RLIMIT_MEMLOCK, seen by the CPU (reductions, local copies: a vmap() of
 * the pages, @vaddr) and by the communicator's transport, which maps them for its own
 * access and for the peers' writes (struct kcoll_transport's mem_* operations; RDMA:
 * transport/rdma_mr.c).  This file is transport-neutral: it holds the pages and calls the
 * transport through the region's @tp.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kcoll.h"

/*
 * Allocation order tried first for module-owned pages: physically contiguous runs merge
 * into fewer scatter/gather entries.
 */
#define KCOLL_REGION_ORDER	4

/**
 * kcoll_region_charge - charge a region's pages to the caller's mm
 * @r:		region, not charged yet
 * @npages:	pages it holds or will hold
 *
 * As ib_umem and io_uring do for pinned user memory: current->mm's pinned_vm grows by
 * @npages, against the caller's RLIMIT_MEMLOCK (CAP_IPC_LOCK bypasses it).  The mm is
 * grabbed so that kcoll_region_release() uncharges the same mm from whatever context frees
 * the region; lock-free, so that can be a mapping's close() under mmap_lock.
 * Return: 0, or -ENOMEM over the limit.
 */
int kcoll_region_charge(struct kcoll_region *r, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;

	if (WARN_ON_ONCE(!mm || r->mm))
		return -EINVAL;
	if (atomic64_add_return(npages, &mm->pinned_vm) > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	r->mm = mm;
	r->charged = npages;
	return 0;
}

static void kcoll_region_uncharge(struct kcoll_region *r)
{
	if (!r->mm)
		return;
	atomic64_sub(r->charged, &r->mm->pinned_vm);
	mmdrop(r->mm);
	r->mm = NULL;
	r->charged = 0;
}

/**
 * kcoll_region_pin - pin user memory for an operation
 * @r:		zeroed region
 * @uaddr:	user address
 * @len:	bytes (0: an empty region)
 * @write:	the operation writes into it
 *
 * The pages are charged to the caller's mm (kcoll_region_charge()) while pinned.
 * Return: 0, -EFAULT (bad range) or -ENOMEM (also over RLIMIT_MEMLOCK).
 */
int kcoll_region_pin(struct kcoll_region *r, u64 uaddr, u64 len, bool write)
{
	unsigned long first = uaddr >> PAGE_SHIFT;
	unsigned int npages, done = 0;
	int ret;

	r->len = len;
	r->write = write;
	if (!len)
		return 0;
	if (uaddr + len < uaddr || ((uaddr + len - 1) >> PAGE_SHIFT) - first >= INT_MAX)
		return -EFAULT;
	npages = ((uaddr + len - 1) >> PAGE_SHIFT) - first + 1;
	ret = kcoll_region_charge(r, npages);
	if (ret)
		return ret;
	/* The caller chose the size: no allocator warning for an absurd one, just -ENOMEM. */
	r->pages = kcoll_fi(ALLOC, NULL, kvmalloc_array(npages, sizeof(*r->pages),
							GFP_KERNEL_ACCOUNT | __GFP_NOWARN));
	if (!r->pages) {
		kcoll_region_uncharge(r);
		return -ENOMEM;
	}
	while (done < npages) {
		ret = kcoll_fi(PIN, -ENOMEM,
			       pin_user_pages_fast((first + done) << PAGE_SHIFT, npages - done,
						   write ? FOLL_WRITE | FOLL_LONGTERM :
							   FOLL_LONGTERM,
						   r->pages + done));
		if (ret <= 0) {
			unpin_user_pages(r->pages, done);
			kvfree(r->pages);
			r->pages = NULL;
			kcoll_region_uncharge(r);
			return ret == -ENOMEM ? -ENOMEM : -EFAULT;
		}
		done += ret;
	}
	r->npages = npages;
	r->first_off = uaddr & ~PAGE_MASK;
	r->pinned = true;
	return 0;
}

/**
 * kcoll_region_alloc - module-owned pages for a buffer or scratch memory
 * @r:		zeroed region
 * @len:	bytes (rounded up to pages)
 * @gfp:	extra allocation flags (__GFP_ZERO for memory that reaches userspace)
 *
 * The pages are order-0 (split_page()), so they can be inserted into a user mapping; they
 * and their array are charged to the caller's memory cgroup (GFP_KERNEL_ACCOUNT).
 * Return: 0, or -ENOMEM (also for more than INT_MAX pages).
 */
int kcoll_region_alloc(struct kcoll_region *r, u64 len, gfp_t gfp)
{
	unsigned int npages, done = 0, i;

	r->len = len;
	r->write = true;
	if (!len)
		return 0;
	/* Page counts are unsigned int: no len may round to more (nor wrap), as for pins. */
	if (len > (u64)INT_MAX << PAGE_SHIFT)
		return -ENOMEM;
	npages = DIV_ROUND_UP_ULL(len, PAGE_SIZE);
	/*
	 * The caller chose the size: over its memory cgroup's limit (or out of memory) the
	 * call fails with -ENOMEM, quietly, rather than waking the OOM killer.
	 */
	gfp |= GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	r->pages = kcoll_fi(ALLOC, NULL, kvmalloc_array(npages, sizeof(*r->pages), gfp));
	if (!r->pages)
		return -ENOMEM;
	while (done < npages) {
		unsigned int order = min_t(unsigned int, KCOLL_REGION_ORDER,
					   ilog2(npages - done));
		struct page *page = NULL;

		for (; !page; order--) {
			/* Larger runs are a bonus: try them once, without reclaim. */
			page = kcoll_fi(ALLOC, NULL,
					alloc_pages(order ? (gfp & ~__GFP_RETRY_MAYFAIL) |
						    __GFP_NORETRY : gfp, order));
			if (page || !order)
				break;
		}
		if (!page) {
			for (i = 0; i < done; i++)
				__free_page(r->pages[i]);
			kvfree(r->pages);
			r->pages = NULL;
			return -ENOMEM;
		}
		if (order)
			split_page(page, order);
		for (i = 0; i < (1U << order); i++)
			r->pages[done++] = page + i;
	}
	r->npages = npages;
	return 0;
}

/**
 * kcoll_region_map - map a region for its communicator's transport and the CPU
 * @comm:	communicator (its transport maps the pages; a one-rank communicator has no
 *		peers, and its regions get only the CPU mapping)
 * @r:		region with pages
 * @remote:	peers write into it: the transport prepares registrations
 * @cpu:	the CPU reads or writes it: vmap() it
 *
 * The registrations still have to be made valid (kcoll_region_register(), or the
 * transport's mem->post_reg) before their segments are announced.
 */
int kcoll_region_map(struct kcoll_comm *comm, struct kcoll_region *r, bool remote, bool cpu)
{
	const struct kcoll_transport *tp = kcoll_comm_mem_tp(comm);
	int ret;

	if (!r->npages)
		return 0;
	if (comm->nranks > 1 || remote) {
		/* Set first: a partial mapping is undone by kcoll_region_unmap(). */
		r->tp = tp;
		ret = tp->mem->map(comm, r, remote);
		if (ret)
			return ret;
	}
	if (cpu) {
		r->vaddr = vmap(r->pages, r->npages, VM_MAP, PAGE_KERNEL);
		if (!r->vaddr)
			return -ENOMEM;
	}
	r->remote = remote;
	return 0;
}

/**
 * kcoll_region_revoke - end the peers' access to a region now
 * @r:		the region
 *
 * Once it returns, the segments announced for @r are invalid and a peer's write into them
 * fails.  The local mappings and the pages stay.  Called before an operation is reported
 * complete, so no key of the caller's memory outlives the call.
 *
 * Context: process; no registration of @r in flight (kcoll_region_register() waited).
 */
void kcoll_region_revoke(struct kcoll_region *r)
{
	if (r->tp)
		r->tp->mem->revoke(r);
	r->remote = false;
	r->registered = false;
}

/* Undo kcoll_region_map(): registrations, the transport's mappings, vmap.  The pages stay. */
void kcoll_region_unmap(struct kcoll_region *r)
{
	if (r->vaddr) {
		vunmap(r->vaddr);
		r->vaddr = NULL;
	}
	if (r->tp) {
		r->tp->mem->unmap(r);
		r->tp = NULL;
	}
	r->remote = false;
	r->registered = false;
}

/**
 * kcoll_region_register - make a region's keys valid before announcing them anywhere
 * @comm:	its communicator
 * @r:		the mapped region
 *
 * Context: comm->teardown_mutex held.  Return: 0 or a negative errno (the transport's
 * mem->reg).
 */
int kcoll_region_register(struct kcoll_comm *comm, struct kcoll_region *r)
{
	lockdep_assert_held(&comm->teardown_mutex);
	if (!r->tp || !r->remote || r->registered)
		return 0;
	return r->tp->mem->reg(comm, r);
}

/**
 * kcoll_region_segs - the remote segments covering a range of a registered region
 * @r:		registered region
 * @off:	first byte
 * @len:	bytes
 * @segs:	output, big endian, at most @max entries
 * @max:	room in @segs
 *
 * Return: the number of segments, or -E2BIG when more than @max would be needed.
 */
int kcoll_region_segs(struct kcoll_region *r, u64 off, u64 len, struct kcoll_wire_seg *segs,
		      unsigned int max)
{
	if (!r->tp || !len)
		return 0;
	return r->tp->mem->segs(r, off, len, segs, max);
}

/*
 * Undo everything: unmap, then unpin (marking written pages dirty) or free the pages, and
 * uncharge them.
 */
void kcoll_region_release(struct kcoll_region *r)
{
	unsigned int i;

	kcoll_region_unmap(r);
	if (!r->pages) {
		kcoll_region_uncharge(r);
		return;
	}
	if (r->pinned) {
		unpin_user_pages_dirty_lock(r->pages, r->npages, r->write);
	} else {
		for (i = 0; i < r->npages; i++)
			__free_page(r->pages[i]);
	}
	kvfree(r->pages);
	r->pages = NULL;
	r->npages = 0;
	kcoll_region_uncharge(r);
}

/**
 * kcoll_region_copy - copy between a region's pages and kernel memory with the CPU
 * @r:		the region (pinned or module pages; no vmap needed)
 * @off:	byte offset in @r
 * @buf:	kernel memory
 * @len:	bytes; @off + @len within @r
 * @to_region:	direction
 *
 * For eager messages (a few KiB at most): page by page through kmap_local_page(), so it
 * works under comm->lock and on regions the CPU does not otherwise touch.
 */
void kcoll_region_copy(struct kcoll_region *r, u64 off, void *buf, u64 len, bool to_region)
{
	u64 pos = off + r->first_off;

	while (len) {
		unsigned int in_page = pos & ~PAGE_MASK;
		unsigned int n = min_t(u64, PAGE_SIZE - in_page, len);
		void *p = kmap_local_page(r->pages[pos >> PAGE_SHIFT]);

		if (to_region)
			memcpy(p + in_page, buf, n);
		else
			memcpy(buf, p + in_page, n);
		kunmap_local(p);
		buf += n;
		pos += n;
		len -= n;
	}
}

/* The CPU's view of byte @off of a region mapped with @cpu. */
void *kcoll_region_ptr(struct kcoll_region *r, u64 off)
{
	return r->vaddr + r->first_off + off;
}
