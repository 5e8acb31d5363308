// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: regions named by a key of the module's own, for the loop and TCP transports
 * (keyed_mem.h).  A key is an id in one module-wide table; its entry remembers the owning
 * communicator, so a key a peer of one comm sends never reaches another comm's memory.
 * kcoll_kmem_mutex guards the table: revoke removes an id under it, and a copy into a
 * region holds it from the lookup to the last byte.
 */
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "../kcoll.h"
#include "keyed_mem.h"

/* A region peers may write into: its owner, for the check that a write targets its peer. */
struct kcoll_kmem {
	struct kcoll_region *r;
	const struct kcoll_comm *comm;
};

static DEFINE_MUTEX(kcoll_kmem_mutex);
static DEFINE_XARRAY_ALLOC1(kcoll_kmems);

/* Bytes of @r's pages from its first byte on: what a peer may write (a buffer's mmap). */
u64 kcoll_kmem_span(const struct kcoll_region *r)
{
	return ((u64)r->npages << PAGE_SHIFT) - r->first_off;
}

void kcoll_kmem_lock(void)
{
	mutex_lock(&kcoll_kmem_mutex);
}

void kcoll_kmem_unlock(void)
{
	mutex_unlock(&kcoll_kmem_mutex);
}

/**
 * kcoll_kmem_find - the region of @comm that @key names, if [@off, @off + @len) is in it
 * @key:	from the peer
 * @comm:	the comm the peer belongs to
 * @off:	where in it the peer writes (from the peer too)
 * @len:	how many bytes
 *
 * Return: the region, valid until kcoll_kmem_unlock(), or NULL.
 * Context: kcoll_kmem_lock() held.
 */
struct kcoll_region *kcoll_kmem_find(u32 key, const struct kcoll_comm *comm, u64 off, u64 len)
{
	struct kcoll_kmem *m;
	u64 end;

	lockdep_assert_held(&kcoll_kmem_mutex);
	m = key ? xa_load(&kcoll_kmems, key) : NULL;
	if (!m || m->comm != comm)
		return NULL;
	if (check_add_overflow(off, len, &end) || end > kcoll_kmem_span(m->r))
		return NULL;
	return m->r;
}

/* map: a region peers write into gets an id (its key).  Context: process. */
static int kcoll_kmem_map(struct kcoll_comm *comm, struct kcoll_region *r, bool remote)
{
	struct kcoll_kmem *m;
	int ret;

	if (!remote)
		return 0;
	m = kcoll_fi(ALLOC, NULL, kmalloc(sizeof(*m), GFP_KERNEL_ACCOUNT));
	if (!m)
		return -ENOMEM;
	m->r = r;
	m->comm = comm;
	mutex_lock(&kcoll_kmem_mutex);
	ret = xa_alloc(&kcoll_kmems, &r->tp_key, m, xa_limit_32b, GFP_KERNEL_ACCOUNT);
	mutex_unlock(&kcoll_kmem_mutex);
	if (ret < 0) {
		kfree(m);
		return ret;
	}
	/* What the layers above size segment tables by: one segment per GiB. */
	r->nchunks = DIV_ROUND_UP(kcoll_kmem_span(r), KCOLL_KMEM_SEG_MAX);
	return 0;
}

/* revoke (and unmap): no copy lands in @r once this returns.  Context: process. */
static void kcoll_kmem_revoke(struct kcoll_region *r)
{
	if (!r->tp_key)
		return;
	mutex_lock(&kcoll_kmem_mutex);
	kfree(xa_erase(&kcoll_kmems, r->tp_key));
	mutex_unlock(&kcoll_kmem_mutex);
	r->tp_key = 0;
	r->nchunks = 0;
}

/* reg, post_reg: an id is valid from map on. */
static int kcoll_kmem_register(struct kcoll_comm *comm, struct kcoll_region *r)
{
	r->registered = true;
	return 0;
}

static int kcoll_kmem_post_reg(struct kcoll_conn *conn, struct kcoll_region *r)
{
	r->registered = true;
	return 0;
}

/* segs: byte offsets into the region named by its id, a segment per GiB. */
static int kcoll_kmem_segs(struct kcoll_region *r, u64 off, u64 len,
			   struct kcoll_wire_seg *segs, unsigned int max)
{
	unsigned int n = 0;

	if (!r->tp_key || off > kcoll_kmem_span(r) || len > kcoll_kmem_span(r) - off)
		return -E2BIG;
	while (len) {
		u64 l = min_t(u64, len, KCOLL_KMEM_SEG_MAX);

		if (n == max)
			return -E2BIG;
		segs[n].addr = cpu_to_be64(off);
		segs[n].rkey = cpu_to_be32(r->tp_key);
		segs[n].len = cpu_to_be32(l);
		n++;
		off += l;
		len -= l;
	}
	return n;
}

/* The memory scheme of the transports that copy on the receiving side (loop, TCP). */
const struct kcoll_mem_ops kcoll_kmem_ops = {
	.map		= kcoll_kmem_map,
	.unmap		= kcoll_kmem_revoke,
	.revoke		= kcoll_kmem_revoke,
	.reg		= kcoll_kmem_register,
	.post_reg	= kcoll_kmem_post_reg,
	.segs		= kcoll_kmem_segs,
};
