/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/kcoll_sched_int.h - what the schedule generators share (not part of kcoll_sched.h's
 * interface): the step emitter, regions, small integer helpers, blocks, and the entry point
 * of each algorithm family.
 *
 *   kcoll_sched.c		arguments, sizes, the support matrix, kcoll_sched_build()
 *   kcoll_sched_select.c	the choice of an algorithm: tuning defaults and thresholds
 *   kcoll_sched_ring.c	ring, recursive doubling, Rabenseifner
 *   kcoll_sched_tree.c	binomial trees, double binary tree, pipelined chain
 *   kcoll_sched_a2a.c	all-to-all: pairwise exchange, Bruck
 */
#ifndef _KCOLL_SCHED_INT_H
#define _KCOLL_SCHED_INT_H

#include "kcoll_sched.h"

/* ---- emitter ------------------------------------------------------------------------------ */

/*
 * A sub-schedule's place in the whole (hierarchical algorithms run flat ones on a group of
 * ranks and a part of the buffers): its peer i is rank pbase + i * pstride, its buffer b is
 * buf[b] at offset off[b].
 */
struct ksmap {
	u32 pbase, pstride;
	u8 buf[3];
	u64 off[3];
};

struct ks {
	const struct kcoll_coll_args *a;
	struct kcoll_step *steps;	/* NULL: count only */
	u32 max;
	u64 n;			/* steps emitted (or counted) */
	u32 stage;		/* dense stage of the next step */
	u32 last_stage;		/* dense stage of the last step emitted */
	u64 cur;		/* sparse stage last selected */
	bool used;		/* a step was emitted in the dense stage */
	bool zero_ok;		/* BARRIER: zero-byte messages are the point */
	u64 scratch;		/* high-water mark of SCRATCH */
	int err;
	u32 p, r;
	u64 es;			/* element size */
	const struct ksmap *map;	/* NULL: the steps are the whole schedule's */
};

static inline void ks_map_reg(const struct ksmap *m, u8 *buf, u64 *off)
{
	if (*buf <= KCOLL_BUF_SCRATCH) {
		*off += m->off[*buf];
		*buf = m->buf[*buf];
	}
}

static inline void ks_at(struct ks *k, u64 s)
{
	if (s < k->cur) {
		k->err = k->err ? k->err : -EINVAL;	/* generator bug: stages go forward */
		return;
	}
	if (s != k->cur && k->used) {
		k->stage++;
		k->used = false;
	}
	k->cur = s;
}

static inline void ks_hw(struct ks *k, u8 buf, u64 off, u64 bytes)
{
	if (buf == KCOLL_BUF_SCRATCH && off + bytes > k->scratch)
		k->scratch = off + bytes;
}

static inline void ks_emit(struct ks *k, u8 op, u32 peer, u8 sbuf, u64 soff, u8 dbuf,
			   u64 doff, u64 toff, u64 bytes)
{
	struct kcoll_step *st;

	if (k->err || (bytes == 0 && !k->zero_ok))
		return;
	if (k->map) {
		peer = k->map->pbase + peer * k->map->pstride;
		ks_map_reg(k->map, &sbuf, &soff);
		ks_map_reg(k->map, &dbuf, &doff);
		toff += k->map->off[KCOLL_BUF_SCRATCH];
		if (op == KCOLL_STEP_COPY && sbuf == dbuf && soff == doff)
			return;		/* the sub-schedule's copy is a no-op here */
	}
	ks_hw(k, sbuf, soff, bytes);
	ks_hw(k, dbuf, doff, bytes);
	if (op == KCOLL_STEP_RECV_REDUCE || op == KCOLL_STEP_REDUCE)
		ks_hw(k, KCOLL_BUF_SCRATCH, toff, bytes);
	if (k->steps) {
		if (k->n >= k->max) {
			k->err = -ENOSPC;
			return;
		}
		st = &k->steps[k->n];
		memset(st, 0, sizeof(*st));
		st->op = op;
		st->src_buf = sbuf;
		st->dst_buf = dbuf;
		st->stage = k->stage;
		st->peer = peer;
		st->src_off = soff;
		st->dst_off = doff;
		st->tmp_off = toff;
		st->bytes = bytes;
	}
	k->n++;
	k->used = true;
	k->last_stage = k->stage;
}

/* A region: buffer and byte offset. */
struct kreg {
	u8 buf;
	u64 off;
};

static inline struct kreg KR(u8 buf, u64 off)
{
	struct kreg g = { buf, off };

	return g;
}

static inline struct kreg radd(struct kreg g, u64 off)
{
	g.off += off;
	return g;
}

#define NOREG KR(KCOLL_BUF_NONE, 0)

static inline void ks_send(struct ks *k, u32 peer, struct kreg s, u64 bytes)
{
	ks_emit(k, KCOLL_STEP_SEND, peer, s.buf, s.off, KCOLL_BUF_NONE, 0, 0, bytes);
}

static inline void ks_recv(struct ks *k, u32 peer, struct kreg d, u64 bytes)
{
	ks_emit(k, KCOLL_STEP_RECV, peer, KCOLL_BUF_NONE, 0, d.buf, d.off, 0, bytes);
}

/* receive into SCRATCH[tmp], then dst = src (+) tmp */
static inline void ks_recv_reduce(struct ks *k, u32 peer, struct kreg d, struct kreg s,
				  u64 tmp, u64 bytes)
{
	ks_emit(k, KCOLL_STEP_RECV_REDUCE, peer, s.buf, s.off, d.buf, d.off, tmp, bytes);
}

static inline void ks_reduce(struct ks *k, struct kreg d, struct kreg s, u64 tmp, u64 bytes)
{
	ks_emit(k, KCOLL_STEP_REDUCE, 0, s.buf, s.off, d.buf, d.off, tmp, bytes);
}

static inline void ks_copy(struct ks *k, struct kreg d, struct kreg s, u64 bytes)
{
	if (s.buf == d.buf && s.off == d.off)
		return;
	ks_emit(k, KCOLL_STEP_COPY, 0, s.buf, s.off, d.buf, d.off, 0, bytes);
}

/* ---- small helpers ---------------------------------------------------------------------- */

/* x mod p for the small |x| (a few p) the algorithms use; no 64-bit division */
static inline u32 rmod(s64 x, u32 p)
{
	while (x < 0)
		x += p;
	while (x >= (s64)p)
		x -= p;
	return (u32)x;
}

static inline u32 pow2_floor(u32 p)
{
	u32 q = 1;

	while (q <= p / 2)
		q <<= 1;
	return q;
}

static inline u32 log2_ceil(u32 p)
{
	u32 l = 0;

	while (((u64)1 << l) < p)
		l++;
	return l;
}

static inline u32 lowbit(u32 x)
{
	return x & (~x + 1);
}

static inline u32 ctz32(u32 x)
{
	u32 n = 0;

	while (!(x & 1)) {
		x >>= 1;
		n++;
	}
	return n;
}

static inline u32 nchunks(u64 bytes, u64 chunk_bytes)
{
	u64 c;

	if (!chunk_bytes || bytes <= chunk_bytes)
		return 1;
	c = kcoll_div_u64(bytes + chunk_bytes - 1, chunk_bytes);
	return c > KCOLL_SCHED_MAX_CHUNKS ? KCOLL_SCHED_MAX_CHUNKS : (u32)c;
}

/* Where the input of this rank is: SEND, or RECV at base when in place. */
static inline struct kreg in_reg(struct ks *k, u64 inplace_base)
{
	return k->a->in_place ? KR(KCOLL_BUF_RECV, inplace_base) : KR(KCOLL_BUF_SEND, 0);
}

/* ---- blocks: uniform, parts of a count, or v-arrays ------------------------------------- */

struct kblocks {
	u32 n;
	u64 count;		/* PARTS: split count in n parts; UNIFORM: count per block */
	u64 base, rem;		/* PARTS: count / n, count % n */
	const u64 *counts;	/* V: counts[b] at displs[b] */
	const u64 *displs;
	int kind;
};

enum { KB_PARTS, KB_UNIFORM, KB_V };

static inline void blk(const struct kblocks *b, u32 i, u64 *off, u64 *len)
{
	switch (b->kind) {
	case KB_PARTS:
		*off = i * b->base + (i < b->rem ? i : b->rem);
		*len = b->base + (i < b->rem ? 1 : 0);
		break;
	case KB_UNIFORM:
		*off = (u64)i * b->count;
		*len = b->count;
		break;
	default:
		*off = b->displs[i];
		*len = b->counts[i];
		break;
	}
}

static inline u64 blk_max(const struct kblocks *b)
{
	u64 m = 0, off, len;
	u32 i;

	if (b->kind == KB_UNIFORM)
		return b->count;
	if (b->kind == KB_PARTS)
		return kcoll_div_u64(b->count + b->n - 1, b->n);
	for (i = 0; i < b->n; i++) {
		blk(b, i, &off, &len);
		if (len > m)
			m = len;
	}
	return m;
}


/* ---- the algorithms (kcoll_sched_build() calls them) ----------------------------------- */

int kcoll_sched_alg_ring(struct ks *k, u64 chunk_bytes);
int kcoll_sched_alg_recdbl(struct ks *k);
int kcoll_sched_alg_rabenseifner(struct ks *k);
int kcoll_sched_alg_binomial(struct ks *k);
int kcoll_sched_alg_dbtree(struct ks *k, u64 chunk_bytes);
int kcoll_sched_alg_chain(struct ks *k, u64 chunk_bytes);
int kcoll_sched_alg_pairwise(struct ks *k);
int kcoll_sched_alg_bruck(struct ks *k);
int kcoll_sched_alg_hier(struct ks *k, u64 chunk_bytes);

/* One of the above (not HIER) by its enum; -EINVAL for an unknown one. */
int kcoll_sched_alg(struct ks *k, enum kcoll_algorithm algo, u64 chunk_bytes);

/*
 * The halves of the ring all-reduce of a->count elements split in nranks parts (hierarchical
 * schedules): reduce-scatter leaves part r reduced in RECV at its offset (the other parts
 * hold partial sums); all-gather fills RECV from part r in place.
 */
void kcoll_sched_ring_ar_rs(struct ks *k, u64 chunk_bytes);
void kcoll_sched_ring_ar_ag(struct ks *k, u64 chunk_bytes);

#endif /* _KCOLL_SCHED_INT_H */
