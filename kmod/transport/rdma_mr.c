// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll RDMA transport: memory for remote access (struct kcoll_transport's mem_*).
 *
 * A region's pages are seen by the NIC for local access (a DMA address per page, @dma,
 * from which RDMA WRITE scatter/gather lists are built: kcoll_rdma_mr_sges()) and by peers
 * for remote writes: FRWR memory regions, one per chunk of up to 511 pages (@chunks),
 * announced in CTS and BUF segments (kcoll_rdma_mr_segs()).  Remote access to pinned user
 * memory is byte-exact: its registrations cover [0, @len) and nothing else of the first
 * and last page, which may hold anything of the process.  Module pages (buffers, scratch)
 * are registered whole: they hold nothing but the region.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>

#include "../kcoll.h"
#include "rdma.h"

/* Pages per memory registration (also bounded by the device's fast-reg page list). */
#define KCOLL_REGION_MR_PAGES	511

/* Pages mapped per registration: one slot of the device's page list stays spare (below). */
static u32 kcoll_rdma_mr_pages(struct kcoll_comm *comm)
{
	return max_t(u32, min_t(u32, comm->dev->ibdev->attrs.max_fast_reg_page_list_len,
				KCOLL_REGION_MR_PAGES + 1) - 1, 1);
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
static int kcoll_rdma_mr_map_chunk(struct kcoll_region *r, struct kcoll_region_chunk *ch,
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
	ret = kcoll_fi(REG, -ENOMEM,
		       ib_map_mr_sg(ch->mr, ch->sgt.sgl, ch->sgt.nents, NULL, PAGE_SIZE));
	sg_dma_address(head) = head_addr;
	sg_dma_len(head) = head_len;
	sg_dma_len(last) = last_len;
	if (ret != ch->sgt.nents)
		return ret < 0 ? ret : -EINVAL;
	return 0;
}

/*
 * map: DMA-map @r on the communicator's device and, if @remote, allocate and map its
 * FRWR registrations, one per chunk.  They still have to be posted (mem_post_reg or
 * mem_register) before their keys are announced.  A partial mapping is undone by
 * kcoll_rdma_mr_unmap().
 */
static int kcoll_rdma_mr_map(struct kcoll_comm *comm, struct kcoll_region *r, bool remote)
{
	struct ib_device *ibdev;
	unsigned int i, nchunks;
	u32 per;
	int ret;

	if (!comm->dev)
		return kcoll_comm_unready(comm);	/* shut down (callers check first) */
	ibdev = comm->dev->ibdev;
	per = kcoll_rdma_mr_pages(comm);
	nchunks = DIV_ROUND_UP(r->npages, per);
	r->chunks = kcoll_fi(ALLOC, NULL, kvcalloc(nchunks, sizeof(*r->chunks),
						   GFP_KERNEL | __GFP_NOWARN));
	r->dma = kcoll_fi(ALLOC, NULL, kvmalloc_array(r->npages, sizeof(*r->dma),
						      GFP_KERNEL | __GFP_NOWARN));
	if (!r->chunks || !r->dma)
		return -ENOMEM;
	r->ibdev = ibdev;
	r->chunk_pages = per;
	for (i = 0; i < nchunks; i++) {
		struct kcoll_region_chunk *ch = &r->chunks[i];
		unsigned int first = i * per, n = min(per, r->npages - first), p = first;
		struct sg_dma_page_iter it;

		ret = kcoll_fi(REG, -ENOMEM,
			       sg_alloc_table_from_pages(&ch->sgt, r->pages + first, n, 0,
							 (unsigned long)n << PAGE_SHIFT,
							 GFP_KERNEL));
		if (ret)
			return ret;
		r->nchunks++;
		ret = kcoll_fi(REG, -ENOMEM,
			       ib_dma_map_sgtable_attrs(ibdev, &ch->sgt, DMA_BIDIRECTIONAL, 0));
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
		ch->mr = kcoll_fi(REG, ERR_PTR(-ENOMEM),
				  ib_alloc_mr(comm->pd, IB_MR_TYPE_MEM_REG, n + 1));
		if (IS_ERR(ch->mr)) {
			ret = PTR_ERR(ch->mr);
			ch->mr = NULL;
			return ret;
		}
		ret = kcoll_rdma_mr_map_chunk(r, ch, first, n);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * revoke: deregisters its MRs: once ib_dereg_mr() has returned, their rkeys are invalid and a
 * peer's write with one fails (a remote access error, which breaks that connection).
 * The DMA mappings, the vmap and the pages stay for local use.  Called before an operation
 * is reported complete, so no key of the caller's memory outlives the call.
 *
 */
static void kcoll_rdma_mr_revoke(struct kcoll_region *r)
{
	unsigned int i;

	for (i = 0; i < r->nchunks; i++) {
		struct kcoll_region_chunk *ch = &r->chunks[i];

		if (ch->mr) {
			ib_dereg_mr(ch->mr);
			ch->mr = NULL;
		}
	}
}

/* unmap: undo kcoll_rdma_mr_map(), registrations first.  The pages stay. */
static void kcoll_rdma_mr_unmap(struct kcoll_region *r)
{
	unsigned int i;

	kcoll_rdma_mr_revoke(r);
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
}

/* kcoll_rdma_mr_post_reg(), which also says in @posted how many it posted before failing. */
static int __kcoll_rdma_mr_post_reg(struct kcoll_conn *conn, struct kcoll_region *r,
				    struct ib_cqe *cqe, unsigned int *posted)
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

		*posted = i;
		if (kcoll_fi(POST, -ENOMEM, ib_post_send(kcoll_rdma(conn)->qp, &reg.wr, NULL)))
			return -EIO;
		kcoll_conn_sq_take(conn);
	}
	*posted = i;
	r->registered = true;
	return i;
}

/*
 * mem_post_reg: post the REG_MR work requests of @r on @conn, completing on the
 * connection's data completion.
 * Work requests on one send queue execute in order, so a CTS posted after these on the
 * same connection only reaches the peer once the keys are valid.
 *
 * Context: comm->lock held; the caller checked that @conn has r->nchunks free send slots.
 * Return: 0, or -EIO.
 */
static int kcoll_rdma_mr_post_reg(struct kcoll_conn *conn, struct kcoll_region *r)
{
	unsigned int posted;
	int ret = __kcoll_rdma_mr_post_reg(conn, r, &kcoll_rdma(conn)->wr_cqe, &posted);

	return ret < 0 ? ret : 0;
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

/* Wait for the REG_MRs of @w: bounded and killable (see kcoll_rdma_mr_register()). */
static int kcoll_rdma_mr_reg_wait(struct kcoll_comm *comm, struct kcoll_regwait *w)
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
	kcoll_transport_up->fail(w->conn, ret);
	spin_unlock_bh(&comm->lock);
	if (ib_modify_qp(kcoll_rdma(w->conn)->qp, &attr, IB_QP_STATE))
		pr_warn_ratelimited("comm %016llx: cannot flush rank %u's queue pair\n",
				    comm->comm_id, w->conn->peer);
	/* Flushed work requests complete promptly; @w lives on our stack until they have. */
	wait_for_completion(&w->done);
	return ret;
}

/*
 * reg: make @r's keys valid before announcing them anywhere.  Posts its REG_MRs
 * on one established connection and waits for them, at most the operation timeout: work
 * requests on a send queue run in order, so a peer that stops acknowledging stalls the
 * registration behind its writes.  Then the connection's QP is moved to the error state,
 * which flushes every work request at once (a local event, so the last wait is short), and
 * the communicator fails.  A fatal signal does the same.
 *
 * Context: comm->teardown_mutex held (shutdown cannot free the QP under the wait).
 * Return: 0, the communicator's error, -ETIMEDOUT, -EINTR or -EIO.
 */
static int kcoll_rdma_mr_register(struct kcoll_comm *comm, struct kcoll_region *r)
{
	struct kcoll_regwait w = { .cqe.done = kcoll_regwait_done };
	struct kcoll_conn *conn = NULL;
	unsigned int posted;
	int ret = 0, wret = 0;
	u32 i;

	lockdep_assert_held(&comm->teardown_mutex);
	if (!r->nchunks)
		return 0;
	init_completion(&w.done);
	atomic_set(&w.pending, 1);
	spin_lock_bh(&comm->lock);
	for (i = 0; i < comm->nranks && !conn; i++)
		if (i != comm->rank && comm->conns[i].state == KCOLL_CONN_UP)
			conn = &comm->conns[i];
	if (comm->state != KCOLL_COMM_READY || !conn) {
		ret = comm->error ? comm->error : -ENOTCONN;
	} else if (kcoll_rdma(conn)->sq_free < (int)r->nchunks + 8) {
		ret = -ENOBUFS;
	} else {
		w.conn = conn;
		atomic_add(r->nchunks, &w.pending);
		ret = __kcoll_rdma_mr_post_reg(conn, r, &w.cqe, &posted);
		if (ret >= 0) {
			ret = 0;
		} else {
			/*
			 * Nothing or part posted: the posted ones complete (or flush) anyway;
			 * the others never will, so they are no longer waited for (our own
			 * count keeps w.pending above zero meanwhile).
			 */
			atomic_sub(r->nchunks - posted, &w.pending);
			kcoll_transport_up->fail(conn, ret);
		}
	}
	spin_unlock_bh(&comm->lock);
	if (ret == -ENOBUFS)
		return -ENOBUFS;
	if (w.conn) {
		/* Our own initial count; then every posted WR's completion (success or flush). */
		if (!atomic_dec_and_test(&w.pending))
			wret = kcoll_rdma_mr_reg_wait(comm, &w);
		/* A failed post stays the result, even when the posted ones completed. */
		ret = ret ?: wret ?: w.status;
	}
	return ret;
}

/* segs: one segment per MR the range touches (addr = the MR's iova + offset). */
static int kcoll_rdma_mr_segs(struct kcoll_region *r, u64 off, u64 len,
			      struct kcoll_wire_seg *segs, unsigned int max)
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
 * kcoll_rdma_mr_sges - local scatter/gather entries for a range of a region
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
unsigned int kcoll_rdma_mr_sges(struct kcoll_region *r, u64 off, u64 bytes, struct ib_sge *sges,
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

const struct kcoll_mem_ops kcoll_rdma_mem_ops = {
	.map		= kcoll_rdma_mr_map,
	.unmap		= kcoll_rdma_mr_unmap,
	.revoke		= kcoll_rdma_mr_revoke,
	.reg		= kcoll_rdma_mr_register,
	.post_reg	= kcoll_rdma_mr_post_reg,
	.segs		= kcoll_rdma_mr_segs,
};
