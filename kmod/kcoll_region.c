// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: the pages an operation or a buffer moves data in and out of.
 *
 * A region is a run of pages (pinned user pages, or pages the module allocated) seen three
 * ways at once:
 *  - by the NIC for local access: a DMA address per page (@dma), from which RDMA WRITE
 *    scatter/gather lists are built (kcoll_region_sges());
 *  - by peers for remote writes: FRWR memory regions, one per chunk of up to 512 pages
 *    (@chunks), announced in CTS segments (kcoll_region_segs());
 *  - by the CPU (reductions, local copies): a vmap() of the pages (@vaddr).
 * Remote access to pinned user memory is byte-exact: its registrations cover [0, @len) and
 * nothing else of the first and last page, which may hold anything of the process.  Module
 * pages (buffers, scratch) are registered whole: they hold nothing but the region.
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

/* Pages per memory registration (also bounded by the device's fast-reg page list). */
#define KCOLL_REGION_MR_PAGES	511
/*
 * Allocation order tried first for module-owned pages: physically contiguous runs merge
 * into fewer scatter/gather entries.
 */
#define KCOLL_REGION_ORDER	4

/* Pages mapped per registration: one slot of the device's page list stays spare (below). */
static u32 kcoll_region_mr_pages(struct kcoll_comm *comm)
{
	return max_t(u32, min_t(u32, comm->dev->ibdev->attrs.max_fast_reg_page_list_len,
				KCOLL_REGION_MR_PAGES + 1) - 1, 1);
}

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
	r->pages = kvmalloc_array(npages, sizeof(*r->pages), GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!r->pages) {
		kcoll_region_uncharge(r);
		return -ENOMEM;
	}
	while (done < npages) {
		ret = pin_user_pages_fast((first + done) << PAGE_SHIFT, npages - done,
					  write ? FOLL_WRITE | FOLL_LONGTERM : FOLL_LONGTERM,
					  r->pages + done);
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
	r->pages = kvmalloc_array(npages, sizeof(*r->pages), gfp);
	if (!r->pages)
		return -ENOMEM;
	while (done < npages) {
		unsigned int order = min_t(unsigned int, KCOLL_REGION_ORDER,
					   ilog2(npages - done));
		struct page *page = NULL;

		for (; !page; order--) {
			/* Larger runs are a bonus: try them once, without reclaim. */
			page = alloc_pages(order ? (gfp & ~__GFP_RETRY_MAYFAIL) | __GFP_NORETRY :
					   gfp, order);
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

/*
 * Map chunk @ch (pages [@first, @first + @n) of @r, DMA mapped) into its MR.  Pinned user
 * memory is registered byte-exact: the MR starts at the caller's first byte and ends
 * after its last, so its iova and length are the caller's bytes.  The first DMA entry is
 * advanced by the in-page offset and the last one shortened for the call, then both are
 * restored for the unmap.  Not ib_map_mr_sg()'s sg_offset: siw in 6.1 builds its page
 * list from the entries and ignores it, so a write at the MR's iova landed at the start
 * of the page.  The chunk holds at least one byte of the region, and every mapped entry
 * whole pages, so the trimmed entries keep a positive length.
 */
static int kcoll_region_map_mr(struct kcoll_region *r, struct kcoll_region_chunk *ch,
			       unsigned int first, unsigned int n)
{
	u64 start = (u64)first << PAGE_SHIFT, end = (u64)(first + n) << PAGE_SHIFT;
	struct scatterlist *sg, *head = ch->sgt.sgl, *last = NULL;
	unsigned int off = 0, trim = 0, head_len, last_len, i;
	dma_addr_t head_addr;
	int ret;

	if (r->pinned) {
		if (start < r->first_off)
			off = r->first_off - start;
		trim = end - min_t(u64, end, r->first_off + r->len);
	}
	for_each_sgtable_dma_sg(&ch->sgt, sg, i)
		last = sg;
	head_addr = sg_dma_address(head);
	head_len = sg_dma_len(head);
	last_len = sg_dma_len(last);
	sg_dma_len(last) = last_len - trim;
	sg_dma_address(head) = head_addr + off;
	sg_dma_len(head) -= off;
	ret = ib_map_mr_sg(ch->mr, ch->sgt.sgl, ch->sgt.nents, NULL, PAGE_SIZE);
	sg_dma_address(head) = head_addr;
	sg_dma_len(head) = head_len;
	sg_dma_len(last) = last_len;
	if (ret != ch->sgt.nents)
		return ret < 0 ? ret : -EINVAL;
	return 0;
}

/**
 * kcoll_region_map - DMA-map a region on its communicator's device
 * @comm:	communicator (its device and PD; a one-rank communicator has neither, and its
 *		regions get only the CPU mapping)
 * @r:		region with pages
 * @remote:	peers write into it: allocate and map the FRWR registrations
 * @cpu:	the CPU reads or writes it: vmap() it
 *
 * The registrations still have to be posted (kcoll_region_post_reg()) before their keys
 * are announced.
 */
int kcoll_region_map(struct kcoll_comm *comm, struct kcoll_region *r, bool remote, bool cpu)
{
	struct ib_device *ibdev;
	unsigned int i, nchunks;
	u32 per;
	int ret;

	if (!r->npages)
		return 0;
	if (comm->nranks == 1 && !remote)
		goto map_cpu;	/* no peers, no device: the CPU does everything */
	if (!comm->dev)
		return kcoll_comm_unready(comm);	/* shut down (callers check first) */
	ibdev = comm->dev->ibdev;
	per = kcoll_region_mr_pages(comm);
	nchunks = DIV_ROUND_UP(r->npages, per);
	r->chunks = kvcalloc(nchunks, sizeof(*r->chunks), GFP_KERNEL | __GFP_NOWARN);
	r->dma = kvmalloc_array(r->npages, sizeof(*r->dma), GFP_KERNEL | __GFP_NOWARN);
	if (!r->chunks || !r->dma)
		return -ENOMEM;
	r->ibdev = ibdev;
	r->chunk_pages = per;
	for (i = 0; i < nchunks; i++) {
		struct kcoll_region_chunk *ch = &r->chunks[i];
		unsigned int first = i * per, n = min(per, r->npages - first), p = first;
		struct sg_dma_page_iter it;

		ret = sg_alloc_table_from_pages(&ch->sgt, r->pages + first, n, 0,
						(unsigned long)n << PAGE_SHIFT, GFP_KERNEL);
		if (ret)
			return ret;
		r->nchunks++;
		ret = ib_dma_map_sgtable_attrs(ibdev, &ch->sgt, DMA_BIDIRECTIONAL, 0);
		if (ret) {
			sg_free_table(&ch->sgt);
			r->nchunks--;
			return ret;
		}
		for_each_sgtable_dma_page(&ch->sgt, &it, 0)
			r->dma[p++] = sg_page_iter_dma_address(&it);
		if (!remote)
			continue;
		/*
		 * One page slot more than mapped: rxe in 6.1 (rxe_mr_copy()) reads the map
		 * pointer after the last one when a write ends on the last page of a full map
		 * (a multiple of 256 pages); KASAN reports it.  The spare slot keeps that read
		 * inside the array.
		 */
		ch->mr = ib_alloc_mr(comm->pd, IB_MR_TYPE_MEM_REG, n + 1);
		if (IS_ERR(ch->mr)) {
			ret = PTR_ERR(ch->mr);
			ch->mr = NULL;
			return ret;
		}
		ret = kcoll_region_map_mr(r, ch, first, n);
		if (ret)
			return ret;
	}
map_cpu:
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
 * Deregisters its MRs: once ib_dereg_mr() has returned, their rkeys are invalid and a
 * peer's write with one fails (a remote access error, which breaks that connection).
 * The DMA mappings, the vmap and the pages stay for local use.  Called before an operation
 * is reported complete, so no key of the caller's memory outlives the call.
 *
 * Context: process; no REG_MR of @r in flight (kcoll_region_register() waited for them).
 */
void kcoll_region_revoke(struct kcoll_region *r)
{
	unsigned int i;

	for (i = 0; i < r->nchunks; i++) {
		struct kcoll_region_chunk *ch = &r->chunks[i];

		if (ch->mr) {
			ib_dereg_mr(ch->mr);
			ch->mr = NULL;
		}
	}
	r->remote = false;
	r->registered = false;
}

/* Undo kcoll_region_map(): registrations, DMA mappings, vmap.  The pages stay. */
void kcoll_region_unmap(struct kcoll_region *r)
{
	unsigned int i;

	if (r->vaddr) {
		vunmap(r->vaddr);
		r->vaddr = NULL;
	}
	kcoll_region_revoke(r);
	for (i = 0; i < r->nchunks; i++) {
		struct kcoll_region_chunk *ch = &r->chunks[i];

		ib_dma_unmap_sgtable_attrs(r->ibdev, &ch->sgt, DMA_BIDIRECTIONAL, 0);
		sg_free_table(&ch->sgt);
	}
	kvfree(r->chunks);
	r->chunks = NULL;
	r->nchunks = 0;
	kvfree(r->dma);
	r->dma = NULL;
	r->remote = false;
	r->registered = false;
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
 * kcoll_region_post_reg - post the REG_MR work requests of a region on a connection
 * @conn:	an established connection of the region's communicator
 * @r:		mapped region with registrations
 * @cqe:	completion for each work request
 *
 * Work requests on one send queue execute in order, so a CTS posted after these on the
 * same connection only reaches the peer once the keys are valid.
 *
 * Context: comm->lock held; the caller checked that @conn has r->nchunks free send slots.
 * Return: work requests posted (r->nchunks), or a negative errno.
 */
int kcoll_region_post_reg(struct kcoll_conn *conn, struct kcoll_region *r, struct ib_cqe *cqe)
{
	unsigned int i;

	lockdep_assert_held(&conn->comm->lock);
	for (i = 0; i < r->nchunks; i++) {
		struct ib_mr *mr = r->chunks[i].mr;
		struct ib_reg_wr reg = {
			.wr = {
				.opcode = IB_WR_REG_MR,
				.wr_cqe = cqe,
				.send_flags = IB_SEND_SIGNALED,
			},
			.mr = mr,
			.key = mr->rkey,
			.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
		};

		if (ib_post_send(conn->qp, &reg.wr, NULL))
			return -EIO;
		kcoll_conn_sq_take(conn);
	}
	r->registered = true;
	return i;
}

struct kcoll_regwait {
	struct ib_cqe cqe;
	struct kcoll_conn *conn;
	atomic_t pending;
	int status;
	struct completion done;
};

static void kcoll_regwait_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kcoll_regwait *w = container_of(wc->wr_cqe, struct kcoll_regwait, cqe);
	struct kcoll_comm *comm = w->conn->comm;

	spin_lock_bh(&comm->lock);
	kcoll_conn_sq_give(w->conn, wc->status == IB_WC_SUCCESS);
	if (wc->status != IB_WC_SUCCESS)
		w->status = -EIO;
	spin_unlock_bh(&comm->lock);
	if (atomic_dec_and_test(&w->pending))
		complete(&w->done);
}

/* Wait for the REG_MRs of @w: bounded and killable (see kcoll_region_register()). */
static int kcoll_region_reg_wait(struct kcoll_comm *comm, struct kcoll_regwait *w)
{
	unsigned long timeout = msecs_to_jiffies(max(READ_ONCE(kcoll_op_timeout_ms), 100U));
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	long left;
	int ret;

	left = wait_for_completion_killable_timeout(&w->done, timeout);
	if (left > 0)
		return 0;
	ret = left ? -EINTR : -ETIMEDOUT;
	spin_lock_bh(&comm->lock);
	kcoll_comm_set_error_locked(comm, ret, w->conn->peer);
	spin_unlock_bh(&comm->lock);
	if (ib_modify_qp(w->conn->qp, &attr, IB_QP_STATE))
		pr_warn_ratelimited("comm %016llx: cannot flush rank %u's queue pair\n",
				    comm->comm_id, w->conn->peer);
	/* Flushed work requests complete promptly; @w lives on our stack until they have. */
	wait_for_completion(&w->done);
	return ret;
}

/**
 * kcoll_region_register - make a region's keys valid before announcing them anywhere
 * @comm:	its communicator
 * @r:		the mapped region
 *
 * Posts its REG_MRs on one established connection and waits for them, at most the
 * operation timeout: work requests on a send queue run in order, so a peer that stops
 * acknowledging stalls the registration behind its writes.  Then the connection's QP is
 * moved to the error state, which flushes every work request at once (a local event, so
 * the last wait is short), and the communicator fails.  A fatal signal does the same.
 *
 * Context: comm->teardown_mutex held (shutdown cannot free the QP under the wait).
 * Return: 0, the communicator's error, -ETIMEDOUT, -EINTR or -EIO.
 */
int kcoll_region_register(struct kcoll_comm *comm, struct kcoll_region *r)
{
	struct kcoll_regwait w = { .cqe.done = kcoll_regwait_done };
	struct kcoll_conn *conn = NULL;
	int ret = 0;
	u32 i;

	lockdep_assert_held(&comm->teardown_mutex);
	if (!r->remote || r->registered || !r->nchunks)
		return 0;
	init_completion(&w.done);
	atomic_set(&w.pending, 1);
	spin_lock_bh(&comm->lock);
	for (i = 0; i < comm->nranks && !conn; i++)
		if (i != comm->rank && comm->conns[i].state == KCOLL_CONN_UP)
			conn = &comm->conns[i];
	if (comm->state != KCOLL_COMM_READY || !conn) {
		ret = comm->error ? comm->error : -ENOTCONN;
	} else if (conn->sq_free < (int)r->nchunks + 8) {
		ret = -ENOBUFS;
	} else {
		w.conn = conn;
		atomic_add(r->nchunks, &w.pending);
		ret = kcoll_region_post_reg(conn, r, &w.cqe);
		if (ret >= 0) {
			ret = 0;
		} else {
			/* Nothing or part posted: the posted ones complete (or flush) anyway. */
			kcoll_comm_set_error_locked(comm, ret, conn->peer);
		}
	}
	spin_unlock_bh(&comm->lock);
	if (ret == -ENOBUFS)
		return -ENOBUFS;
	if (w.conn) {
		/* Our own initial count; then every posted WR's completion (success or flush). */
		if (!atomic_dec_and_test(&w.pending))
			ret = kcoll_region_reg_wait(comm, &w);
		if (!ret && w.status)
			ret = w.status;
	}
	return ret;
}

/**
 * kcoll_region_segs - the remote segments covering a range of a region
 * @r:		registered region
 * @off:	first byte
 * @len:	bytes
 * @max:	room in @segs
 * @segs:	output, big endian, at most @max entries
 *
 * Return: the number of segments, or -E2BIG when more than @max would be needed.
 */
int kcoll_region_segs(struct kcoll_region *r, u64 off, u64 len, struct kcoll_wire_seg *segs,
		      unsigned int max)
{
	u64 pos = off + r->first_off, end = pos + len;
	unsigned int n = 0;

	while (pos < end) {
		unsigned int c = pos >> PAGE_SHIFT;
		struct kcoll_region_chunk *ch;
		u64 base, chunk_end;

		/*
		 * Chunks cover equal page counts except the last; an MR's iova is its chunk's
		 * first byte of the region (the first chunk's starts at first_off).
		 */
		c /= r->chunk_pages;
		ch = &r->chunks[c];
		base = max_t(u64, (u64)c * r->chunk_pages << PAGE_SHIFT, r->first_off);
		chunk_end = min_t(u64, end, base + ch->mr->length);
		if (n == max)
			return -E2BIG;
		segs[n].addr = cpu_to_be64(ch->mr->iova + (pos - base));
		segs[n].rkey = cpu_to_be32(ch->mr->rkey);
		segs[n].len = cpu_to_be32(chunk_end - pos);
		n++;
		pos = chunk_end;
	}
	return n;
}

/**
 * kcoll_region_sges - local scatter/gather entries for a range of a region
 * @r:		the region
 * @off:	first byte
 * @max:	room in @sges
 * @bytes:	at most this many bytes
 * @sges:	output, at most @max entries
 * @lkey:	the PD's local DMA key
 * @taken:	bytes covered by the entries written
 *
 * Return: the number of entries.  Contiguous pages merge into one entry.
 */
unsigned int kcoll_region_sges(struct kcoll_region *r, u64 off, u64 bytes, struct ib_sge *sges,
			       unsigned int max, u32 lkey, u64 *taken)
{
	u64 pos = off + r->first_off, end = pos + bytes;
	unsigned int n = 0;

	while (pos < end) {
		unsigned long pg = pos >> PAGE_SHIFT;
		u64 in_page = pos & ~PAGE_MASK;
		u64 take = min_t(u64, PAGE_SIZE - in_page, end - pos);
		u64 addr = r->dma[pg] + in_page;

		if (n && sges[n - 1].addr + sges[n - 1].length == addr &&
		    sges[n - 1].length + take <= U32_MAX) {
			sges[n - 1].length += take;
		} else {
			if (n == max)
				break;
			sges[n].addr = addr;
			sges[n].length = take;
			sges[n].lkey = lkey;
			n++;
		}
		pos += take;
	}
	*taken = pos - off - r->first_off;
	return n;
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
