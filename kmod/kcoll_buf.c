// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy collective buffers: pages the module owns, mapped into the creator's address
 * space, DMA mapped and registered on the communicator's device, and announced to every
 * peer (KCOLL_MSG_BUF) so that transfers and collectives move data in and out of them
 * without pinning or registering anything per call.
 *
 * Creation is collective: every rank creates its buffers in the same order with the same
 * length; a rank's create returns once every peer's announcement of the same buffer has
 * arrived.  The pages are charged to the creator's mm (pinned_vm, like RDMA memory
 * registrations) against RLIMIT_MEMLOCK (CAP_IPC_LOCK bypasses the limit), and the charge
 * goes with the pages.
 *
 * Lifetime: destroy (or the communicator's shutdown) removes the device mappings, so the
 * NIC never touches the pages again; the pages themselves are freed with the last
 * reference, which a user mapping holds until munmap() or exit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "kcoll.h"

static void kcoll_buf_release(struct kref *ref)
{
	struct kcoll_buf *buf = container_of(ref, struct kcoll_buf, ref);
	u32 i;

	/* Every device mapping went with destroy or shutdown; only the pages are left. */
	kcoll_region_release(&buf->region);	/* and its RLIMIT_MEMLOCK charge */
	if (buf->remote) {
		for (i = 0; i < buf->comm->nranks; i++)
			kfree(buf->remote[i]);
		kfree(buf->remote);
	}
	kcoll_comm_put(buf->comm);
	kfree(buf);
}

static void kcoll_buf_put(struct kcoll_buf *buf)
{
	kref_put(&buf->ref, kcoll_buf_release);
}

/* Mappings --------------------------------------------------------------------------- */

static void kcoll_buf_vm_open(struct vm_area_struct *vma)
{
	struct kcoll_buf *buf = vma->vm_private_data;

	kref_get(&buf->ref);
}

static void kcoll_buf_vm_close(struct vm_area_struct *vma)
{
	kcoll_buf_put(vma->vm_private_data);
}

/*
 * The pages are inserted at mmap() time; this serves a page again after its PTE was zapped
 * (MADV_DONTNEED, MADV_PAGEOUT), which would otherwise be SIGBUS.  The mapping holds the
 * buffer, so the page is there; VM_DONTEXPAND keeps the mapping within the buffer.
 */
static vm_fault_t kcoll_buf_vm_fault(struct vm_fault *vmf)
{
	struct kcoll_buf *buf = vmf->vma->vm_private_data;
	pgoff_t i = vmf->pgoff - vmf->vma->vm_pgoff;

	if (i >= buf->region.npages)
		return VM_FAULT_SIGBUS;
	vmf->page = buf->region.pages[i];
	get_page(vmf->page);
	return 0;
}

static const struct vm_operations_struct kcoll_buf_vm_ops = {
	.open	= kcoll_buf_vm_open,
	.close	= kcoll_buf_vm_close,
	.fault	= kcoll_buf_vm_fault,
};

/**
 * kcoll_buf_mmap - map a buffer: the offset is the mmap_offset BUF_CREATE returned
 * @ctx:	the file
 * @vma:	the new mapping
 *
 * Shared mappings only (a private one would copy on write, away from the buffer), of at
 * most the buffer's pages; a child of fork() does not inherit them.  Context: mmap_lock
 * held for writing.
 */
int kcoll_buf_mmap(struct kcoll_ctx *ctx, struct vm_area_struct *vma)
{
	unsigned long npages = vma_pages(vma);
	struct kcoll_buf *buf;
	int ret;

	/*
	 * VM_MAYSHARE, not VM_SHARED: mmap() clears VM_SHARED from a MAP_SHARED mapping of a
	 * file opened read-only (it can never be written), yet such a mapping is shared.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_pgoff > U32_MAX)	/* cookies are 31 bits: the offset names no buffer */
		return -ENOENT;
	xa_lock(&ctx->maps);
	buf = xa_load(&ctx->maps, vma->vm_pgoff);
	if (buf)
		kref_get(&buf->ref);
	xa_unlock(&ctx->maps);
	if (!buf)
		return -ENOENT;
	if (npages > buf->region.npages) {
		kcoll_buf_put(buf);
		return -EINVAL;
	}
	/*
	 * Not inherited by fork(): the pages are charged to, and the DMA target of, the
	 * creator's communicator only (as MADV_DONTFORK for user registrations).
	 */
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY;
	vma->vm_private_data = buf;
	vma->vm_ops = &kcoll_buf_vm_ops;
	ret = vm_insert_pages(vma, vma->vm_start, buf->region.pages, &npages);
	if (ret) {
		/* close() is not called for a failed mmap: drop the reference here. */
		vma->vm_private_data = NULL;
		vma->vm_ops = NULL;
		kcoll_buf_put(buf);
	}
	return ret;
}

/* Peers' announcements ---------------------------------------------------------------- */

/*
 * A peer's announcement of one of its buffers (KCOLL_MSG_BUF), on conn->buf_early: @nsegs
 * announced, @have arrived, room for @cap (grown as they arrive, not sized by the peer).
 * On the list (comm->lock) until the buffer's use takes it or kcoll_buf_shutdown() frees it.
 */
struct kcoll_peer_segs {
	struct list_head list;
	u32 seq;
	u64 len;
	u16 nsegs;
	u16 have;
	u16 cap;
	struct kcoll_wire_seg segs[];
};

/* The announcement of buffer @seq collected from @conn so far, or NULL.  comm->lock. */
static struct kcoll_peer_segs *kcoll_buf_early_find(struct kcoll_conn *conn, u32 seq)
{
	struct kcoll_peer_segs *ps;

	lockdep_assert_held(&conn->comm->lock);
	list_for_each_entry(ps, &conn->buf_early, list)
		if (ps->seq == seq)
			return ps;
	return NULL;
}

/**
 * kcoll_buf_rx - a peer announced (part of) one of its buffers
 * @conn:	connection it arrived on
 * @hdr:	the message, a struct kcoll_wire_buf
 * @len:	its bytes
 *
 * An announcement may span several messages: @first_seg is the index of the first segment
 * carried, @total_segs the total.  The sender sends the parts in order, so each must start
 * where the previous ended.  What is kept grows with what arrived (never with the total the
 * peer claims), and at most KCOLL_BUF_EARLY_MAX announcements wait for their BUF_CREATE.
 *
 * Context: the connection's receive completion.  Only this path changes an incomplete
 * announcement (BUF_CREATE takes complete ones), so it may grow one outside the lock.
 */
static void kcoll_buf_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len)
{
	const struct kcoll_wire_buf *msg = (const void *)hdr;
	struct kcoll_comm *comm = conn->comm;
	u16 nsegs = be16_to_cpu(msg->hdr.nsegs);
	u32 seq = be32_to_cpu(msg->buf_seq), first = be32_to_cpu(msg->first_seg);
	u64 total = be64_to_cpu(msg->total_segs), blen = be64_to_cpu(msg->len);
	struct kcoll_peer_segs *ps, *grown = NULL, *old = NULL;
	u32 have = 0, cap = 0;
	const char *what;

	what = "malformed buffer announcement";
	if (!nsegs || nsegs > KCOLL_WIRE_MAX_SEGS || len < struct_size(msg, segs, nsegs) ||
	    !total || total > U16_MAX || (u64)first + nsegs > total)
		goto bad;
	spin_lock_bh(&comm->lock);
	ps = kcoll_buf_early_find(conn, seq);
	if (ps) {
		have = ps->have;
		cap = ps->cap;
		if (ps->nsegs != total || ps->len != blen)
			ps = ERR_PTR(-EPROTO);
	} else if (conn->nbuf_early >= KCOLL_BUF_EARLY_MAX) {
		what = "too many buffer announcements ahead";
		ps = ERR_PTR(-EPROTO);
	}
	spin_unlock_bh(&comm->lock);
	if (IS_ERR(ps) || first != have)
		goto bad;
	if (have + nsegs > cap) {
		cap = min_t(u32, total, max_t(u32, have + nsegs, 2 * cap));
		grown = kcoll_fi(ALLOC, NULL, kmalloc(struct_size(grown, segs, cap), GFP_KERNEL));
		if (!grown) {
			kcoll_comm_up->fail(comm, -ENOMEM, conn->peer);
			return;
		}
	}
	spin_lock_bh(&comm->lock);
	if (grown) {
		if (ps) {
			memcpy(grown, ps, struct_size(ps, segs, have));
			list_replace(&ps->list, &grown->list);
			old = ps;
		} else {
			grown->seq = seq;
			grown->len = blen;
			grown->nsegs = total;
			grown->have = 0;
			list_add_tail(&grown->list, &conn->buf_early);
			conn->nbuf_early++;
		}
		grown->cap = cap;
		ps = grown;
	}
	memcpy(ps->segs + first, msg->segs, flex_array_size(msg, segs, nsegs));
	ps->have += nsegs;
	wake_up_all(&comm->wq);
	spin_unlock_bh(&comm->lock);
	kfree(old);
	return;
bad:
	kcoll_proto_error(conn, what);
}

static const struct kcoll_rx_handler kcoll_buf_rx_handler = {
	.type = KCOLL_MSG_BUF, .handler = kcoll_buf_rx,
};

int kcoll_buf_rx_init(void)
{
	return kcoll_rx_register_handler(&kcoll_buf_rx_handler);
}

/* A control slot of @conn is free now, or the comm is not ready.  Context: comm->lock. */
static bool kcoll_buf_ctrl_ready(struct kcoll_conn *conn)
{
	lockdep_assert_held(&conn->comm->lock);
	return conn->comm->state != KCOLL_COMM_READY || conn->tp->ctrl_free(conn);
}

/*
 * Wait until a control slot of @conn may be free: its send completions wake us (while
 * ctrl_waiters counts us); a send queue slot freed by a data completion does not, so the
 * wait also ends every 100 ms.  Return: 0 (try again), -ETIMEDOUT at @deadline, -EINTR.
 */
static int kcoll_buf_wait_ctrl(struct kcoll_conn *conn, unsigned long deadline)
{
	struct kcoll_comm *comm = conn->comm;
	long left = (long)(deadline - jiffies), ret;

	if (left <= 0)
		return -ETIMEDOUT;
	atomic_inc(&comm->ctrl_waiters);
	ret = wait_event_killable_timeout(comm->wq, ({
		bool ready;

		spin_lock_bh(&comm->lock);
		ready = kcoll_buf_ctrl_ready(conn);
		spin_unlock_bh(&comm->lock);
		ready; }), min_t(long, left, HZ / 10));
	atomic_dec(&comm->ctrl_waiters);
	return ret < 0 ? -EINTR : 0;
}

/* Post the announcement of @buf on @conn, in as many messages as its segments need. */
static int kcoll_buf_announce(struct kcoll_buf *buf, struct kcoll_conn *conn,
			      struct kcoll_wire_seg *segs, u32 nsegs, unsigned long deadline)
{
	struct kcoll_comm *comm = buf->comm;
	u32 first = 0;

	while (first < nsegs || !nsegs) {
		u32 n = min_t(u32, nsegs - first, KCOLL_WIRE_MAX_SEGS);
		struct kcoll_wire_buf *m;
		struct kcoll_ctrl *c;
		int ret;

		spin_lock_bh(&comm->lock);
		if (comm->state != KCOLL_COMM_READY) {
			ret = comm->error ? comm->error : -ENOTCONN;
			spin_unlock_bh(&comm->lock);
			return ret;
		}
		c = conn->tp->ctrl_get(conn);
		if (!c) {
			/* Every control slot in flight: they come back within a round trip. */
			spin_unlock_bh(&comm->lock);
			ret = kcoll_buf_wait_ctrl(conn, deadline);
			if (ret)
				return ret;
			continue;
		}
		m = c->msg;
		m->hdr.type = KCOLL_MSG_BUF;
		m->hdr.nsegs = cpu_to_be16(n);
		m->buf_seq = cpu_to_be32(buf->seq);
		m->len = cpu_to_be64(buf->len);
		m->first_seg = cpu_to_be32(first);
		m->total_segs = cpu_to_be64(nsegs);
		memcpy(m->segs, segs + first, n * sizeof(*segs));
		ret = conn->tp->ctrl_post(conn, c, struct_size(m, segs, n));
		spin_unlock_bh(&comm->lock);
		if (ret)
			return ret;
		first += n;
		if (!nsegs)
			break;
	}
	return 0;
}

/* Whether every peer's announcement of buffer @seq is complete.  Context: comm->lock. */
static bool kcoll_buf_all_announced(struct kcoll_comm *comm, u32 seq)
{
	struct kcoll_peer_segs *ps;
	u32 i;

	lockdep_assert_held(&comm->lock);
	if (comm->state != KCOLL_COMM_READY)
		return true;	/* no point waiting */
	for (i = 0; i < comm->nranks; i++) {
		bool found = false;

		if (i == comm->rank)
			continue;
		list_for_each_entry(ps, &comm->conns[i].buf_early, list) {
			if (ps->seq == seq && ps->have == ps->nsegs) {
				found = true;
				break;
			}
		}
		if (!found)
			return false;
	}
	return true;
}

/*
 * Announce @buf to every peer and collect theirs.  A peer's buffer of another length is
 * -EINVAL on both sides; a peer that does not create its buffer within op_timeout_ms fails
 * the communicator (its buffer sequence would no longer match ours).
 */
static int kcoll_buf_exchange(struct kcoll_buf *buf)
{
	struct kcoll_comm *comm = buf->comm;
	unsigned long deadline = jiffies + msecs_to_jiffies(kcoll_op_timeout_ms);
	struct kcoll_region *r = &buf->region;
	struct kcoll_wire_seg *segs;
	int nsegs, ret = 0;
	long left;
	u32 i;

	segs = kcoll_fi(ALLOC, NULL, kvmalloc_array(r->nchunks, sizeof(*segs), GFP_KERNEL));
	buf->remote = kcoll_fi(ALLOC, NULL, kcalloc(comm->nranks, sizeof(*buf->remote),
						    GFP_KERNEL_ACCOUNT));
	if (!segs || !buf->remote) {
		kvfree(segs);
		return -ENOMEM;
	}
	nsegs = kcoll_region_segs(r, 0, (u64)r->npages << PAGE_SHIFT, segs, r->nchunks);
	for (i = 0; i < comm->nranks && nsegs >= 0 && !ret; i++)
		if (i != comm->rank)
			ret = kcoll_buf_announce(buf, &comm->conns[i], segs, nsegs, deadline);
	kvfree(segs);
	if (nsegs < 0)
		ret = nsegs;
	if (ret)
		goto out_fail;

	left = wait_event_killable_timeout(comm->wq, ({
		bool done;

		spin_lock_bh(&comm->lock);
		done = kcoll_buf_all_announced(comm, buf->seq);
		spin_unlock_bh(&comm->lock);
		done; }), max_t(long, deadline - jiffies, 1));
	if (left <= 0) {
		ret = left ? -EINTR : -ETIMEDOUT;
		goto out_fail;
	}
	spin_lock_bh(&comm->lock);
	if (comm->state != KCOLL_COMM_READY)
		ret = comm->error ? comm->error : -ENOTCONN;
	for (i = 0; i < comm->nranks && !ret; i++) {
		struct kcoll_peer_segs *ps;

		if (i == comm->rank)
			continue;
		list_for_each_entry(ps, &comm->conns[i].buf_early, list) {
			if (ps->seq == buf->seq) {
				list_del(&ps->list);
				comm->conns[i].nbuf_early--;
				buf->remote[i] = ps;
				if (ps->len != buf->len)
					ret = -EINVAL;
				break;
			}
		}
	}
	spin_unlock_bh(&comm->lock);
	if (ret == -EINVAL)
		pr_info_ratelimited("comm %llx rank %u: buffer %u: the ranks' lengths differ\n",
				    comm->comm_id, comm->rank, buf->seq);
	return ret;

out_fail:
	if (ret == -ETIMEDOUT || ret == -EINTR)
		kcoll_comm_up->fail(comm, ret, U32_MAX);
	return ret;
}

/* Create and destroy ------------------------------------------------------------------ */

/*
 * The pages are charged to the creator's mm (the caller's: not that of whichever process
 * opened the file, so passing the file on does not multiply anyone's RLIMIT_MEMLOCK), and
 * with the rest of the buffer to the caller's memory cgroup.
 */
static struct kcoll_buf *kcoll_buf_alloc(struct kcoll_comm *comm, u64 len)
{
	struct kcoll_buf *buf = kcoll_fi(ALLOC, NULL, kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT));
	unsigned long npages = DIV_ROUND_UP_ULL(len, PAGE_SIZE);
	int ret;

	if (!buf)
		return ERR_PTR(-ENOMEM);
	kref_init(&buf->ref);
	kcoll_comm_get(comm);
	buf->comm = comm;
	buf->len = len;
	atomic_set(&buf->busy, 0);
	ret = kcoll_region_charge(&buf->region, npages);
	if (!ret)
		ret = kcoll_region_alloc(&buf->region, len, __GFP_ZERO);
	if (ret) {
		kcoll_buf_put(buf);
		return ERR_PTR(ret);
	}
	return buf;
}

/* Remove @buf's device mappings: no transfer uses it (busy is 0) or can start. */
static void kcoll_buf_unmap(struct kcoll_buf *buf)
{
	if (!buf->unmapped) {
		kcoll_region_unmap(&buf->region);
		buf->unmapped = true;
	}
}

long kcoll_ioctl_buf_create(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_buf_create arg;
	struct kcoll_comm *comm;
	struct kcoll_buf *buf;
	u32 usize, handle;
	bool listed = false;
	int ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_BUF_CREATE_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.handle || arg.mmap_offset || arg.reserved[0] || arg.reserved[1] ||
	    !arg.length || arg.length > (u64)kcoll_max_buf_mb << 20)
		return -EINVAL;
	comm = kcoll_comm_lookup(ctx, arg.comm);
	if (!comm)
		return -ENOENT;
	/* A slot of the file's: the ctx->maps entry owns it (kcoll_buf_forget()). */
	ret = kcoll_ctx_take(&ctx->nbufs, kcoll_max_bufs_per_file);
	if (ret) {
		kcoll_comm_put(comm);
		return ret;
	}
	buf = kcoll_buf_alloc(comm, arg.length);
	if (IS_ERR(buf)) {
		ret = PTR_ERR(buf);
		goto out_put_comm;
	}

	mutex_lock(&comm->teardown_mutex);
	ret = kcoll_comm_usable(comm);
	if (!ret && comm->shut)
		ret = kcoll_comm_unready(comm);
	if (ret)
		goto out_unlock;
	ret = kcoll_region_map(comm, &buf->region, comm->nranks > 1, true);
	if (!ret)
		ret = kcoll_region_register(comm, &buf->region);
	if (ret)
		goto out_unmap;
	buf->seq = comm->nbufs++;
	if (comm->nranks > 1) {
		ret = kcoll_buf_exchange(buf);
		if (ret)
			goto out_unmap;
	}
	ret = kcoll_fi(ALLOC, -ENOMEM,
		       xa_alloc(&comm->bufs, &handle, buf, xa_limit_31b, GFP_KERNEL));
	if (ret)
		goto out_unmap;
	buf->handle = handle;
	kref_get(&buf->ref);	/* the mmap table's */
	ret = kcoll_fi(ALLOC, -ENOMEM, xa_alloc_cyclic(&ctx->maps, &buf->cookie, buf, xa_limit_31b,
						       &ctx->next_map, GFP_KERNEL));
	if (ret < 0) {
		kcoll_buf_put(buf);
		xa_erase(&comm->bufs, handle);
		goto out_unmap;
	}
	listed = true;
	kcoll_comm_up->teardown_unlock(comm);

	arg.handle = handle;
	arg.mmap_offset = (u64)buf->cookie << PAGE_SHIFT;
	ret = kcoll_uarg_copy_out(uarg, usize, &arg, sizeof(arg));
	/* On -EFAULT the buffer stays until its communicator is destroyed. */
	goto out_put_comm;

out_unmap:
	kcoll_buf_unmap(buf);
out_unlock:
	kcoll_comm_up->teardown_unlock(comm);
	kcoll_buf_put(buf);
out_put_comm:
	if (!listed)
		kcoll_ctx_give(&ctx->nbufs);
	kcoll_comm_put(comm);
	return ret;
}

/* Take @buf out of its comm's table; its mmap cookie out of the ctx's.  teardown_mutex. */
static void kcoll_buf_forget(struct kcoll_ctx *ctx, struct kcoll_buf *buf)
{
	lockdep_assert_held(&buf->comm->teardown_mutex);
	kcoll_buf_unmap(buf);
	if (xa_erase(&ctx->maps, buf->cookie) == buf) {
		kcoll_ctx_give(&ctx->nbufs);
		kcoll_buf_put(buf);
	}
	kcoll_buf_put(buf);	/* the comm table's */
}

long kcoll_ioctl_buf_destroy(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_comm *comm;
	struct kcoll_buf_arg arg;
	struct kcoll_buf *buf;
	u32 usize;
	int ret;

	ret = kcoll_uarg_copy_in(&arg, sizeof(arg), KCOLL_BUF_ARG_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags)
		return -EINVAL;
	comm = kcoll_comm_lookup(ctx, arg.comm);
	if (!comm)
		return -ENOENT;
	mutex_lock(&comm->teardown_mutex);
	xa_lock(&comm->bufs);
	buf = xa_load(&comm->bufs, arg.handle);
	if (!buf)
		ret = -ENOENT;
	else if (atomic_read(&buf->busy))
		ret = -EBUSY;
	else
		__xa_erase(&comm->bufs, arg.handle);
	xa_unlock(&comm->bufs);
	if (!ret)
		kcoll_buf_forget(ctx, buf);
	kcoll_comm_up->teardown_unlock(comm);
	kcoll_comm_put(comm);
	return ret;
}

/**
 * kcoll_buf_use - hold a buffer for a transfer
 * @comm:	communicator
 * @handle:	buffer handle
 * @off:	first byte of the transfer in the buffer
 * @len:	its bytes
 *
 * Return: the buffer (a reference and a busy count: kcoll_buf_unuse()), or ERR_PTR of
 * -ENOENT (no such buffer), -ERANGE (the range leaves the buffer), -ENOTCONN (the
 * communicator shut down).
 */
struct kcoll_buf *kcoll_buf_use(struct kcoll_comm *comm, u32 handle, u64 off, u64 len)
{
	struct kcoll_buf *buf;
	int ret = 0;

	xa_lock(&comm->bufs);
	buf = xa_load(&comm->bufs, handle);
	if (!buf)
		ret = -ENOENT;
	else if (off > buf->len || len > buf->len - off)
		ret = -ERANGE;
	else if (READ_ONCE(buf->unmapped))
		ret = -ENOTCONN;
	if (!ret) {
		atomic_inc(&buf->busy);
		kref_get(&buf->ref);
	}
	xa_unlock(&comm->bufs);
	return ret ? ERR_PTR(ret) : buf;
}

void kcoll_buf_unuse(struct kcoll_buf *buf)
{
	atomic_dec(&buf->busy);
	kcoll_buf_put(buf);
}

/**
 * kcoll_buf_shutdown - communicator shutdown: remove every buffer's device mappings
 * @comm:	the communicator
 *
 * Nothing uses them any more (shutdown waited for every request).  The buffers stay in
 * the tables until destroy.  Context: teardown_mutex held.
 */
void kcoll_buf_shutdown(struct kcoll_comm *comm)
{
	struct kcoll_buf *buf;
	unsigned long h;
	u32 i;

	lockdep_assert_held(&comm->teardown_mutex);
	xa_for_each(&comm->bufs, h, buf)
		kcoll_buf_unmap(buf);
	spin_lock_bh(&comm->lock);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_peer_segs *ps, *tmp;

		list_for_each_entry_safe(ps, tmp, &comm->conns[i].buf_early, list) {
			list_del(&ps->list);
			kfree(ps);
		}
	}
	spin_unlock_bh(&comm->lock);
}

/* Communicator destroy: drop every buffer of it (mappings keep their pages). */
void kcoll_buf_drop_all(struct kcoll_comm *comm)
{
	struct kcoll_buf *buf;
	unsigned long h;

	mutex_lock(&comm->teardown_mutex);
	xa_for_each(&comm->bufs, h, buf) {
		xa_erase(&comm->bufs, h);
		kcoll_buf_forget(comm->ctx, buf);
	}
	kcoll_comm_up->teardown_unlock(comm);
}

/* File release: drop the mmap table's references (after every comm is destroyed). */
void kcoll_ctx_drop_maps(struct kcoll_ctx *ctx)
{
	struct kcoll_buf *buf;
	unsigned long id;

	xa_for_each(&ctx->maps, id, buf) {
		if (xa_erase(&ctx->maps, id) == buf)
			kcoll_buf_put(buf);
	}
}
