// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched.c - collective algorithms as schedules (see kcoll_sched.h).
 *
 * Every algorithm here is written "synchronously": a message is sent and received in the
 * same (sparse) stage number on both ranks, and when one stage holds several messages between
 * the same two ranks both emit them in the same order.  FIFO matching per pair is then
 * consistent by construction, and the schedules cannot deadlock: once every rank has finished
 * stage s-1, every message of stage s has both ends posted.  The stage numbers written out
 * are made dense per rank (empty stages dropped), which keeps that order.
 *
 * No allocation, no recursion, no floating point; u64 division via kcoll_div_u64().
 */
#include "kcoll_sched.h"

/* ---- emitter ------------------------------------------------------------------------------ */

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
};

static void ks_at(struct ks *k, u64 s)
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

static void ks_hw(struct ks *k, u8 buf, u64 off, u64 bytes)
{
	if (buf == KCOLL_BUF_SCRATCH && off + bytes > k->scratch)
		k->scratch = off + bytes;
}

static void ks_emit(struct ks *k, u8 op, u32 peer, u8 sbuf, u64 soff, u8 dbuf, u64 doff,
		    u64 toff, u64 bytes)
{
	struct kcoll_step *st;

	if (k->err || (bytes == 0 && !k->zero_ok))
		return;
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

static void ks_send(struct ks *k, u32 peer, struct kreg s, u64 bytes)
{
	ks_emit(k, KCOLL_STEP_SEND, peer, s.buf, s.off, KCOLL_BUF_NONE, 0, 0, bytes);
}

static void ks_recv(struct ks *k, u32 peer, struct kreg d, u64 bytes)
{
	ks_emit(k, KCOLL_STEP_RECV, peer, KCOLL_BUF_NONE, 0, d.buf, d.off, 0, bytes);
}

/* receive into SCRATCH[tmp], then dst = src (+) tmp */
static void ks_recv_reduce(struct ks *k, u32 peer, struct kreg d, struct kreg s, u64 tmp,
			   u64 bytes)
{
	ks_emit(k, KCOLL_STEP_RECV_REDUCE, peer, s.buf, s.off, d.buf, d.off, tmp, bytes);
}

static void ks_reduce(struct ks *k, struct kreg d, struct kreg s, u64 tmp, u64 bytes)
{
	ks_emit(k, KCOLL_STEP_REDUCE, 0, s.buf, s.off, d.buf, d.off, tmp, bytes);
}

static void ks_copy(struct ks *k, struct kreg d, struct kreg s, u64 bytes)
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

static u32 nchunks(u64 bytes, u64 chunk_bytes)
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

static void blk(const struct kblocks *b, u32 i, u64 *off, u64 *len)
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

static u64 blk_max(const struct kblocks *b)
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

/* ---- ring: reduce-scatter and all-gather phases ------------------------------------------ */

/*
 * Ring state.  Scratch layout: two receive slots of one chunk, then (out-of-place
 * reduce-scatter only) two accumulation areas of one block.
 */
struct kring {
	struct kblocks b;
	u32 C;			/* chunks per block */
	u64 chunk_max;		/* bytes */
	u64 blk_maxb;		/* bytes */
	struct kreg in;		/* base of the input blocks (block offsets added) */
	int acc_mode;		/* where partial sums live */
	u64 out_off;		/* RS output offset in RECV */
};

enum { ACC_RECV_BLOCKS, ACC_SCRATCH_AREAS };

static void ring_chunk(struct ks *k, struct kring *g, u32 b, u32 c, u64 *boff, u64 *coff,
		       u64 *clen)
{
	u64 off, len;

	blk(&g->b, b, &off, &len);
	if (g->C == 1) {
		*coff = 0;
		*clen = len;
	} else {
		kcoll_sched_part(len, g->C, c, coff, clen);
	}
	*boff = off * k->es;
	*coff *= k->es;
	*clen *= k->es;
}

/* Partial sum of block b, chunk at coff, after ring round kr. */
static struct kreg ring_acc(struct ks *k, struct kring *g, u32 kr, u64 boff, u64 coff)
{
	if (g->acc_mode == ACC_RECV_BLOCKS)
		return KR(KCOLL_BUF_RECV, boff + coff);
	if (kr == k->p - 2)
		return KR(KCOLL_BUF_RECV, g->out_off + coff);
	return KR(KCOLL_BUF_SCRATCH, 2 * g->chunk_max + (kr & 1) * g->blk_maxb + coff);
}

/*
 * Reduce-scatter ring from stage s0; rank r ends with block r complete.  Round kr (0..p-2)
 * sends block r-kr-1 (its input for kr = 0, else the partial from round kr-1) and reduces
 * block r-kr-2 into its partial.  With C >= 2 chunks the receive goes to a scratch slot and
 * is reduced in the next stage, so the link is busy while a chunk is being reduced.
 * Returns the first free stage.
 */
static u64 ring_rs(struct ks *k, struct kring *g, u64 s0)
{
	u32 p = k->p, r = k->r, next = (r + 1) % p, prev = (r + p - 1) % p;
	u64 Q = (u64)(p - 1) * g->C, q;
	bool split = g->C >= 2;
	u64 boff, coff, clen;

	u32 kr = 0, c = 0, pkr = 0, pc = 0;	/* piece q and piece q-1 */

	for (q = 0; q <= Q; q++) {
		ks_at(k, s0 + q);
		if (q < Q) {
			u32 sb = rmod((s64)r - kr - 1, p), rb = rmod((s64)r - kr - 2, p);
			struct kreg src;

			ring_chunk(k, g, sb, c, &boff, &coff, &clen);
			src = kr == 0 ? radd(g->in, boff + coff) : ring_acc(k, g, kr - 1, boff, coff);
			ks_send(k, next, src, clen);
			ring_chunk(k, g, rb, c, &boff, &coff, &clen);
			if (split)
				ks_recv(k, prev, KR(KCOLL_BUF_SCRATCH, (q & 1) * g->chunk_max), clen);
			else
				ks_recv_reduce(k, prev, ring_acc(k, g, kr, boff, coff),
					       radd(g->in, boff + coff), 0, clen);
		}
		if (split && q >= 1) {
			u64 pq = q - 1;
			u32 rb = rmod((s64)r - pkr - 2, p);

			ring_chunk(k, g, rb, pc, &boff, &coff, &clen);
			ks_reduce(k, ring_acc(k, g, pkr, boff, coff), radd(g->in, boff + coff),
				  (pq & 1) * g->chunk_max, clen);
		}
		pkr = kr;
		pc = c;
		if (++c == g->C) {
			c = 0;
			kr++;
		}
	}
	return s0 + Q + 1;
}

/*
 * All-gather ring from stage s0 into RECV at the block offsets.  own: where this rank's block
 * is (chunk offsets added).  Round kr sends block r-kr, receives block r-kr-1.
 */
static u64 ring_ag(struct ks *k, struct kring *g, struct kreg own, u64 s0)
{
	u32 p = k->p, r = k->r, next = (r + 1) % p, prev = (r + p - 1) % p;
	u64 Q = (u64)(p - 1) * g->C, q;
	u64 boff, coff, clen;

	u32 kr = 0, c = 0;

	for (q = 0; q < Q; q++, c = c + 1 == g->C ? 0 : c + 1, kr += c == 0) {
		u32 sb = rmod((s64)r - kr, p), rb = rmod((s64)r - kr - 1, p);

		ks_at(k, s0 + q);
		ring_chunk(k, g, sb, c, &boff, &coff, &clen);
		ks_send(k, next, kr == 0 ? radd(own, coff) : KR(KCOLL_BUF_RECV, boff + coff), clen);
		ring_chunk(k, g, rb, c, &boff, &coff, &clen);
		ks_recv(k, prev, KR(KCOLL_BUF_RECV, boff + coff), clen);
	}
	return s0 + Q;
}

static void ring_setup(struct ks *k, struct kring *g, u64 chunk_bytes)
{
	u64 m = blk_max(&g->b);

	g->blk_maxb = m * k->es;
	g->C = nchunks(g->blk_maxb, chunk_bytes);
	g->chunk_max = (m ? kcoll_div_u64(m + g->C - 1, g->C) : 0) * k->es;
}

static int sched_ring(struct ks *k, u64 chunk_bytes)
{
	const struct kcoll_coll_args *a = k->a;
	struct kring g;
	u64 off, len, s;
	u32 r = k->r;

	memset(&g, 0, sizeof(g));
	g.b.n = k->p;
	switch (a->coll) {
	case KCOLL_COLL_ALLREDUCE:
		g.b.kind = KB_PARTS;
		g.b.count = a->count;
		g.b.base = kcoll_div_u64(a->count, k->p);
		g.b.rem = a->count - g.b.base * k->p;
		break;
	case KCOLL_COLL_ALLGATHER:
	case KCOLL_COLL_REDUCE_SCATTER:
		g.b.kind = KB_UNIFORM;
		g.b.count = a->count;
		break;
	default:
		g.b.kind = KB_V;
		g.b.counts = a->counts;
		g.b.displs = a->displs;
		break;
	}
	ring_setup(k, &g, chunk_bytes);
	blk(&g.b, r, &off, &len);

	switch (a->coll) {
	case KCOLL_COLL_ALLREDUCE:
		g.in = in_reg(k, 0);
		if (k->p == 1) {
			ks_copy(k, KR(KCOLL_BUF_RECV, 0), g.in, a->count * k->es);
			return 0;
		}
		g.acc_mode = ACC_RECV_BLOCKS;
		s = ring_rs(k, &g, 0);
		ring_ag(k, &g, KR(KCOLL_BUF_RECV, off * k->es), s);
		return 0;
	case KCOLL_COLL_REDUCE_SCATTER:
	case KCOLL_COLL_REDUCE_SCATTERV:
		g.in = in_reg(k, 0);
		g.out_off = a->in_place ? off * k->es : 0;
		if (k->p == 1) {
			ks_copy(k, KR(KCOLL_BUF_RECV, g.out_off), radd(g.in, off * k->es),
				len * k->es);
			return 0;
		}
		g.acc_mode = a->in_place ? ACC_RECV_BLOCKS : ACC_SCRATCH_AREAS;
		ring_rs(k, &g, 0);
		return 0;
	default: {	/* ALLGATHER(V) */
		struct kreg own = in_reg(k, off * k->es);

		ks_at(k, 0);
		ks_copy(k, KR(KCOLL_BUF_RECV, off * k->es), own, len * k->es);
		if (k->p > 1)
			ring_ag(k, &g, own, 0);
		return 0;
	}
	}
}

/* ---- recursive doubling / halving (non-powers of two folded) ---------------------------- */

/*
 * q = largest power of two <= p, m = p - q.  Ranks below 2m pair up: the even one hands its
 * data to the odd one (r+1) and sits out; the odd one is virtual rank r/2.  Ranks from 2m up
 * are virtual rank r - m.
 */
struct kfold {
	u32 q, m;
	s32 v;		/* virtual rank, -1 for a rank that sits out */
};

static void fold_init(struct ks *k, struct kfold *f)
{
	f->q = pow2_floor(k->p);
	f->m = k->p - f->q;
	if (k->r < 2 * f->m)
		f->v = (k->r & 1) ? (s32)(k->r / 2) : -1;
	else
		f->v = (s32)(k->r - f->m);
}

static inline u32 fold_real(const struct kfold *f, u32 v)
{
	return v < f->m ? 2 * v + 1 : v + f->m;
}

/* First real rank (block) of virtual rank v; fold_lo(q) = p. */
static inline u32 fold_lo(const struct kfold *f, u32 v)
{
	return v < f->m ? 2 * v : v + f->m;
}

static int sched_recdbl(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 r = k->r, p = k->p, mask, i;
	u64 B = a->count * k->es, s;
	struct kfold f;

	fold_init(k, &f);

	if (a->coll == KCOLL_COLL_BARRIER) {
		k->zero_ok = true;
		ks_at(k, 0);
		if (f.v < 0) {
			ks_send(k, r + 1, NOREG, 0);
			ks_at(k, 1);
			ks_recv(k, r + 1, NOREG, 0);
			return 0;
		}
		if (r < 2 * f.m)
			ks_recv(k, r - 1, NOREG, 0);
		for (mask = 1, s = 1; mask < f.q; mask <<= 1, s++) {
			u32 w = fold_real(&f, (u32)f.v ^ mask);

			ks_at(k, s);
			ks_send(k, w, NOREG, 0);
			ks_recv(k, w, NOREG, 0);
		}
		/* every rank uses the same final stage number for the fold-back */
		ks_at(k, 1 + log2_ceil(f.q));
		if (r < 2 * f.m)
			ks_send(k, r - 1, NOREG, 0);
		return 0;
	}

	if (a->coll == KCOLL_COLL_ALLREDUCE) {
		struct kreg in = in_reg(k, 0), acc = KR(KCOLL_BUF_RECV, 0);
		u32 L = log2_ceil(f.q);
		bool first = true;

		if (p == 1) {
			ks_copy(k, acc, in, B);
			return 0;
		}
		ks_at(k, 0);
		if (f.v < 0) {
			ks_send(k, r + 1, in, B);
			ks_at(k, 1 + 2 * (u64)L);
			ks_recv(k, r + 1, acc, B);
			return 0;
		}
		if (r < 2 * f.m) {
			ks_recv_reduce(k, r - 1, acc, in, 0, B);
			first = false;
		}
		for (mask = 1, i = 0; mask < f.q; mask <<= 1, i++) {
			u32 w = fold_real(&f, (u32)f.v ^ mask);

			ks_at(k, 1 + 2 * (u64)i);
			ks_send(k, w, first ? in : acc, B);
			ks_recv(k, w, KR(KCOLL_BUF_SCRATCH, 0), B);
			ks_at(k, 2 + 2 * (u64)i);
			ks_reduce(k, acc, first ? in : acc, 0, B);
			first = false;
		}
		ks_at(k, 1 + 2 * (u64)L);
		if (r < 2 * f.m)
			ks_send(k, r - 1, acc, B);
		return 0;
	}

	/* ALLGATHER: virtual rank v owns real blocks [fold_lo(v), fold_lo(v+1)) */
	{
		u64 own = (u64)r * B;

		ks_at(k, 0);
		ks_copy(k, KR(KCOLL_BUF_RECV, own), in_reg(k, own), B);
		if (p == 1)
			return 0;
		if (f.v < 0) {
			u32 L = log2_ceil(f.q);

			ks_send(k, r + 1, in_reg(k, own), B);
			ks_at(k, 1 + (u64)L);
			/* everything but its own block, in two pieces */
			ks_recv(k, r + 1, KR(KCOLL_BUF_RECV, 0), own);
			ks_recv(k, r + 1, KR(KCOLL_BUF_RECV, own + B), (u64)(p - r - 1) * B);
			return 0;
		}
		if (r < 2 * f.m)
			ks_recv(k, r - 1, KR(KCOLL_BUF_RECV, own - B), B);
		for (mask = 1, s = 1; mask < f.q; mask <<= 1, s++) {
			u32 g0 = (u32)f.v & ~(mask - 1), pg = g0 ^ mask;
			u32 w = fold_real(&f, (u32)f.v ^ mask);
			u64 lo = fold_lo(&f, g0), hi = fold_lo(&f, g0 + mask);
			u64 plo = fold_lo(&f, pg), phi = fold_lo(&f, pg + mask);

			ks_at(k, s);
			ks_send(k, w, KR(KCOLL_BUF_RECV, lo * B), (hi - lo) * B);
			ks_recv(k, w, KR(KCOLL_BUF_RECV, plo * B), (phi - plo) * B);
		}
		ks_at(k, 1 + (u64)log2_ceil(f.q));
		if (r < 2 * f.m) {
			ks_send(k, r - 1, KR(KCOLL_BUF_RECV, 0), own - B);
			ks_send(k, r - 1, KR(KCOLL_BUF_RECV, own), (u64)(p - r) * B);
		}
		return 0;
	}
}

/*
 * Rabenseifner: fold as above, recursive halving reduce-scatter over the q virtual ranks
 * (distance q/2 first), then (ALLREDUCE) recursive doubling all-gather, then unfold.
 * ALLREDUCE splits count into q segments; REDUCE_SCATTER uses the real blocks, virtual rank
 * v owning blocks [fold_lo(v), fold_lo(v+1)).
 */
static int sched_rabenseifner(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	bool rs = a->coll == KCOLL_COLL_REDUCE_SCATTER;
	u32 r = k->r, p = k->p, mask, L, i, v, lo, hi;
	u64 es = k->es, B, s;
	struct kreg in = in_reg(k, 0), acc;
	struct kfold f;
	bool first = true;

	fold_init(k, &f);
	L = log2_ceil(f.q);
	/* total bytes of the vector being reduced */
	B = (rs ? (u64)p * a->count : a->count) * es;
	if (rs) {
		/* partial sums: in place the buffer itself, else a full-size scratch vector */
		acc = a->in_place ? KR(KCOLL_BUF_RECV, 0) : KR(KCOLL_BUF_SCRATCH, 0);
	} else {
		acc = KR(KCOLL_BUF_RECV, 0);
	}
	/* segment s of the vector: [seg(s), seg(s+1)) in bytes */
#define SEG(x) (rs ? (u64)fold_lo(&f, (x)) * a->count * es :				\
		({ u64 o_, l_; kcoll_sched_part(a->count, f.q, (x), &o_, &l_);		\
		   (x) == f.q ? a->count * es : o_ * es; }))
	if (p == 1) {
		ks_copy(k, KR(KCOLL_BUF_RECV, 0), in, rs ? a->count * es : B);
		return 0;
	}
	/* the tmp region follows the accumulation vector when that is in scratch */
	{
		u64 tmp = (rs && !a->in_place) ? B : 0;

		ks_at(k, 0);
		if (f.v < 0) {
			ks_send(k, r + 1, in, B);
			ks_at(k, 1 + 2 * (u64)L + (rs ? 0 : L));
			if (rs)
				ks_recv(k, r + 1, KR(KCOLL_BUF_RECV, a->in_place ?
						     (u64)r * a->count * es : 0), a->count * es);
			else
				ks_recv(k, r + 1, acc, B);
			return 0;
		}
		if (r < 2 * f.m) {
			ks_recv_reduce(k, r - 1, acc, in, tmp, B);
			first = false;
		}
		v = (u32)f.v;
		lo = 0;
		hi = f.q;
		for (mask = f.q / 2, i = 0; mask >= 1; mask >>= 1, i++) {
			u32 w = fold_real(&f, v ^ mask), mid = lo + mask;
			u32 klo = (v & mask) ? mid : lo, khi = (v & mask) ? hi : mid;
			u32 slo = (v & mask) ? lo : mid, shi = (v & mask) ? mid : hi;
			struct kreg src = first ? in : acc;
			bool last = mask == 1;

			ks_at(k, 1 + 2 * (u64)i);
			ks_send(k, w, radd(src, SEG(slo)), SEG(shi) - SEG(slo));
			ks_recv(k, w, KR(KCOLL_BUF_SCRATCH, tmp), SEG(khi) - SEG(klo));
			ks_at(k, 2 + 2 * (u64)i);
			if (rs && last) {
				/* the kept segment is this virtual rank's blocks: finish them */
				u64 cb = a->count * es, out = a->in_place ? (u64)r * cb : 0;
				u32 b;

				for (b = fold_lo(&f, klo); b < fold_lo(&f, khi); b++) {
					u64 bo = (u64)b * cb;
					struct kreg d = b == r ? KR(KCOLL_BUF_RECV, out) :
						radd(acc, bo);

					ks_reduce(k, d, radd(src, bo), tmp + bo - SEG(klo), cb);
				}
			} else {
				ks_reduce(k, radd(acc, SEG(klo)), radd(src, SEG(klo)), tmp,
					  SEG(khi) - SEG(klo));
			}
			first = false;
			lo = klo;
			hi = khi;
		}
		s = 1 + 2 * (u64)L;
		if (rs) {
			ks_at(k, s);
			if (r < 2 * f.m)
				ks_send(k, r - 1, radd(acc, (u64)(r - 1) * a->count * es),
					a->count * es);
			return 0;
		}
		/* all-gather by recursive doubling: segments [v & ~(mask-1), +mask) */
		for (mask = 1; mask < f.q; mask <<= 1, s++) {
			u32 g0 = v & ~(mask - 1), pg = g0 ^ mask;
			u32 w = fold_real(&f, v ^ mask);

			ks_at(k, s);
			ks_send(k, w, radd(acc, SEG(g0)), SEG(g0 + mask) - SEG(g0));
			ks_recv(k, w, radd(acc, SEG(pg)), SEG(pg + mask) - SEG(pg));
		}
		ks_at(k, s);
		if (r < 2 * f.m)
			ks_send(k, r - 1, acc, B);
	}
#undef SEG
	return 0;
}

/* ---- binomial trees --------------------------------------------------------------------- */

/*
 * Relative rank v = (r - root) mod p.  L = ceil(log2 p).  Broadcast-like trees send in
 * round j (0..L-1) along distance 2^(L-1-j) (largest subtree first); reduce-like trees
 * receive in round j along distance 2^j (smallest first).  A node v > 0 hangs below v -
 * lowbit(v); its subtree is [v, min(p, v + lowbit(v))).
 */
static inline u32 bt_real(struct ks *k, u32 root, u32 v)
{
	u32 x = v + root;	/* both < p <= 2^30 */

	return x >= k->p ? x - k->p : x;
}

/* round in which v receives (broadcast-like): distance lowbit(v) = 2^(L-1-round) */
static inline u32 bt_down_round(u32 L, u32 v)
{
	return L - 1 - ctz32(v);
}

static void bt_bcast(struct ks *k, u32 root, struct kreg src, struct kreg dst, u64 B, u64 s0)
{
	u32 p = k->p, v = rmod((s64)k->r - root, p), L = log2_ceil(p), j, top;

	if (v == 0) {
		top = L;
	} else {
		j = bt_down_round(L, v);
		ks_at(k, s0 + j);
		ks_recv(k, bt_real(k, root, v - lowbit(v)), dst, B);
		src = dst;
		top = ctz32(v);
	}
	for (j = L - top; j < L; j++) {
		u32 d = 1U << (L - 1 - j);

		if (v + d < p) {
			ks_at(k, s0 + j);
			ks_send(k, bt_real(k, root, v + d), src, B);
		}
	}
}

/*
 * Reduce to root over the binomial tree; acc: where this rank accumulates (and, at the root,
 * the result).  Round j: receive-reduce from v + 2^j, or send to v - 2^j.
 */
static void bt_reduce(struct ks *k, u32 root, struct kreg in, struct kreg acc, u64 tmp, u64 B,
		      u64 s0)
{
	u32 p = k->p, v = rmod((s64)k->r - root, p), L = log2_ceil(p), j;
	bool first = true;

	for (j = 0; j < L; j++) {
		u32 d = 1U << j;

		if (v & d) {
			ks_at(k, s0 + j);
			ks_send(k, bt_real(k, root, v - d), first ? in : acc, B);
			return;
		}
		if (v + d < p) {
			ks_at(k, s0 + j);
			ks_recv_reduce(k, bt_real(k, root, v + d), acc, first ? in : acc, tmp, B);
			first = false;
		}
	}
	if (first)	/* p == 1 */
		ks_copy(k, acc, in, B);
}

/*
 * Scatter/gather piece lists.  The root's buffer is in real rank order, so a range of
 * relative ranks [x, y) may wrap: at most two contiguous pieces.  Elsewhere data is kept in
 * scratch in relative order.
 */
static u32 bt_pieces(struct ks *k, u32 root, u32 x, u32 y, u32 pv[2][2])
{
	u32 p = k->p, n = 0;

	if (x >= y)
		return 0;
	if ((u64)x + root < p && (u64)y - 1 + root >= p) {
		pv[0][0] = x;
		pv[0][1] = p - root;
		pv[1][0] = p - root;
		pv[1][1] = y;
		return 2;
	}
	pv[n][0] = x;
	pv[n][1] = y;
	return 1;
}

static void bt_scatter(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, root = a->root, v = rmod((s64)k->r - root, p), L = log2_ceil(p), j, top;
	u64 cb = a->count * k->es;
	u32 end, pv[2][2], n, i;

	if (v == 0) {
		struct kreg sb = in_reg(k, 0);

		ks_at(k, 0);
		ks_copy(k, KR(KCOLL_BUF_RECV, a->in_place ? (u64)root * cb : 0),
			radd(sb, (u64)root * cb), cb);
		for (j = 0; j < L; j++) {
			u32 d = 1U << (L - 1 - j), c = d, cend;

			if (c >= p)
				continue;
			cend = c + d < p ? c + d : p;
			ks_at(k, j);
			/* child's own block, then the rest of its subtree */
			ks_send(k, bt_real(k, root, c), radd(sb, (u64)bt_real(k, root, c) * cb), cb);
			n = bt_pieces(k, root, c + 1, cend, pv);
			for (i = 0; i < n; i++)
				ks_send(k, bt_real(k, root, c), radd(sb, (u64)bt_real(k, root,
					pv[i][0]) * cb), (u64)(pv[i][1] - pv[i][0]) * cb);
		}
		return;
	}
	top = ctz32(v);
	end = v + lowbit(v) < p ? v + lowbit(v) : p;
	j = bt_down_round(L, v);
	ks_at(k, j);
	{
		u32 par = v - lowbit(v);

		ks_recv(k, bt_real(k, root, par), KR(KCOLL_BUF_RECV, 0), cb);
		if (par == 0) {
			n = bt_pieces(k, root, v + 1, end, pv);
			for (i = 0; i < n; i++)
				ks_recv(k, bt_real(k, root, par), KR(KCOLL_BUF_SCRATCH,
					(u64)(pv[i][0] - v - 1) * cb), (u64)(pv[i][1] - pv[i][0]) * cb);
		} else {
			ks_recv(k, bt_real(k, root, par), KR(KCOLL_BUF_SCRATCH, 0),
				(u64)(end - v - 1) * cb);
		}
	}
	for (j = L - top; j < L; j++) {
		u32 d = 1U << (L - 1 - j), c = v + d, cend;

		if (c >= p)
			continue;
		cend = c + d < p ? c + d : p;
		ks_at(k, j);
		ks_send(k, bt_real(k, root, c), KR(KCOLL_BUF_SCRATCH, (u64)(c - v - 1) * cb), cb);
		ks_send(k, bt_real(k, root, c), KR(KCOLL_BUF_SCRATCH, (u64)(c - v) * cb),
			(u64)(cend - c - 1) * cb);
	}
}

static void bt_gather(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, root = a->root, v = rmod((s64)k->r - root, p), L = log2_ceil(p), j;
	u64 cb = a->count * k->es;
	u32 end, pv[2][2], n, i;

	end = v == 0 ? p : (v + lowbit(v) < p ? v + lowbit(v) : p);
	if (v == 0) {
		ks_at(k, 0);
		ks_copy(k, KR(KCOLL_BUF_RECV, (u64)root * cb), in_reg(k, (u64)root * cb), cb);
	}
	for (j = 0; j < L; j++) {
		u32 d = 1U << j, c = v + d, cend;

		if (v & d)
			break;
		if (c >= p)
			continue;
		cend = c + d < p ? c + d : p;
		ks_at(k, j);
		if (v == 0) {
			ks_recv(k, bt_real(k, root, c), KR(KCOLL_BUF_RECV,
				(u64)bt_real(k, root, c) * cb), cb);
			n = bt_pieces(k, root, c + 1, cend, pv);
			for (i = 0; i < n; i++)
				ks_recv(k, bt_real(k, root, c), KR(KCOLL_BUF_RECV, (u64)bt_real(k,
					root, pv[i][0]) * cb), (u64)(pv[i][1] - pv[i][0]) * cb);
		} else {
			ks_recv(k, bt_real(k, root, c), KR(KCOLL_BUF_SCRATCH,
				(u64)(c - v - 1) * cb), cb);
			ks_recv(k, bt_real(k, root, c), KR(KCOLL_BUF_SCRATCH,
				(u64)(c - v) * cb), (u64)(cend - c - 1) * cb);
		}
	}
	if (v == 0)
		return;
	{
		u32 par = v - lowbit(v);

		ks_at(k, ctz32(v));
		ks_send(k, bt_real(k, root, par), KR(KCOLL_BUF_SEND, 0), cb);
		if (par == 0) {
			n = bt_pieces(k, root, v + 1, end, pv);
			for (i = 0; i < n; i++)
				ks_send(k, bt_real(k, root, par), KR(KCOLL_BUF_SCRATCH,
					(u64)(pv[i][0] - v - 1) * cb), (u64)(pv[i][1] - pv[i][0]) * cb);
		} else {
			ks_send(k, bt_real(k, root, par), KR(KCOLL_BUF_SCRATCH, 0),
				(u64)(end - v - 1) * cb);
		}
	}
}

static int sched_binomial(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 L = log2_ceil(k->p);
	u64 B = a->count * k->es;
	bool root = k->r == a->root;

	switch (a->coll) {
	case KCOLL_COLL_BROADCAST:
		if (root && !a->in_place) {
			ks_at(k, 0);
			ks_copy(k, KR(KCOLL_BUF_RECV, 0), KR(KCOLL_BUF_SEND, 0), B);
		}
		bt_bcast(k, a->root, root ? in_reg(k, 0) : KR(KCOLL_BUF_RECV, 0),
			 KR(KCOLL_BUF_RECV, 0), B, 0);
		return 0;
	case KCOLL_COLL_REDUCE:
		/* non-roots accumulate in scratch after the tmp area */
		bt_reduce(k, a->root, root ? in_reg(k, 0) : KR(KCOLL_BUF_SEND, 0),
			  root ? KR(KCOLL_BUF_RECV, 0) : KR(KCOLL_BUF_SCRATCH, B), 0, B, 0);
		return 0;
	case KCOLL_COLL_ALLREDUCE:
		bt_reduce(k, 0, in_reg(k, 0), KR(KCOLL_BUF_RECV, 0), 0, B, 0);
		bt_bcast(k, 0, KR(KCOLL_BUF_RECV, 0), KR(KCOLL_BUF_RECV, 0), B, L);
		return 0;
	case KCOLL_COLL_SCATTER:
		bt_scatter(k);
		return 0;
	case KCOLL_COLL_GATHER:
		bt_gather(k);
		return 0;
	default:	/* BARRIER: zero-byte reduce to 0, then broadcast */
		k->zero_ok = true;
		{
			u32 p = k->p, v = k->r, j;

			for (j = 0; j < L; j++) {
				u32 d = 1U << j;

				if (v & d) {
					ks_at(k, j);
					ks_send(k, v - d, NOREG, 0);
					break;
				}
				if (v + d < p) {
					ks_at(k, j);
					ks_recv(k, v + d, NOREG, 0);
				}
			}
		}
		bt_bcast(k, 0, NOREG, NOREG, 0, L);
		return 0;
	}
}

/* ---- double binary tree ----------------------------------------------------------------- */

/* Position of rank r in tree t, and back. */
static inline u32 dbt_pos(u32 p, u32 r, int t)
{
	if (!t)
		return r;
	return (p & 1) ? (r + p - 1) % p : p - 1 - r;
}

static inline u32 dbt_rank(u32 p, u32 x, int t)
{
	if (!t)
		return x;
	return (p & 1) ? (x + 1) % p : p - 1 - x;
}

/* Children and parent of position x in the in-order tree on p positions (see header). */
static void dbt_node(u32 p, u32 x, s64 *parent, s64 child[2])
{
	u32 b, d;

	child[0] = child[1] = -1;
	if (x == 0) {
		*parent = -1;
		if (p > 1)
			child[1] = pow2_floor(p - 1);	/* the only child: "right" */
		return;
	}
	b = lowbit(x);
	if ((x & (b << 1)) || (u64)x + b >= p)
		*parent = x - b;
	else
		*parent = x + b;
	if (b >= 2) {
		child[0] = x - b / 2;
		for (d = b / 2; d >= 1; d >>= 1) {
			if ((u64)x + d < p) {
				child[1] = x + d;
				break;
			}
		}
	}
}

void kcoll_sched_dbtree(u32 p, u32 r, int t, s32 *parent, s32 child[2])
{
	s64 par, ch[2];
	int i;

	dbt_node(p, dbt_pos(p, r, t), &par, ch);
	*parent = par < 0 ? -1 : (s32)dbt_rank(p, (u32)par, t);
	for (i = 0; i < 2; i++)
		child[i] = ch[i] < 0 ? -1 : (s32)dbt_rank(p, (u32)ch[i], t);
}

/*
 * Stage (chunk 0) at which position x sends its partial result up.  Leaves: 0.  A node
 * receives its right child's partial at base(right) and its left child's at base(left) (the
 * left subtree is complete: base 3*(h-1) for height h = ctz(x)), reduces the right one at
 * base(right)+1 and the left one one stage after both that and its arrival, then sends.
 * Computed along the right spine, no recursion.
 */
static u64 dbt_base(u32 p, u32 x)
{
	u32 spine[33];
	u32 n = 0, i;
	u64 base = 0;
	s64 par, ch[2];

	for (;;) {
		spine[n++] = x;
		dbt_node(p, x, &par, ch);
		if (ch[1] < 0 || n == 33)
			break;
		x = (u32)ch[1];
	}
	for (i = n; i-- > 0;) {
		u64 rr, rl;

		x = spine[i];
		dbt_node(p, x, &par, ch);
		if (ch[0] < 0 && ch[1] < 0) {
			base = 0;
			continue;
		}
		/* ch[1] >= 0 here unless it is the bottom of the spine */
		rr = ch[1] >= 0 && i + 1 < n ? base + 1 : 0;
		if (ch[0] >= 0) {
			u64 bl = 3 * (u64)(ctz32(x) - 1);

			rl = bl + 1 > rr + 1 ? bl + 1 : rr + 1;
			if (ch[1] < 0)
				rl = bl + 1;
		} else {
			rl = rr;
		}
		base = rl + 1;
	}
	return base;
}

struct kdbt_op {
	u64 off;	/* stage of chunk 0 */
	u8 kind;
	s64 peer;	/* position */
};

enum { DB_RECV_R, DB_RECV_L, DB_RED_R, DB_RED_L, DB_SEND_UP, DB_RECV_DN, DB_SEND_DN_L,
       DB_SEND_DN_R, DB_NOPS };

static int sched_dbtree(struct ks *k, u64 chunk_bytes)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, C, t, i, c;
	u64 es = k->es, half[2][2], chunk_max, maxoff = 0, s, T;
	struct kdbt_op ops[2][DB_NOPS];
	u32 nops[2];
	bool leaf[2], have_r[2];
	struct kreg in = in_reg(k, 0);

	if (p == 1) {
		ks_copy(k, KR(KCOLL_BUF_RECV, 0), in, a->count * es);
		return 0;
	}
	for (t = 0; t < 2; t++) {
		kcoll_sched_part(a->count, 2, t, &half[t][0], &half[t][1]);
		half[t][0] *= es;
		half[t][1] *= es;
	}
	C = nchunks(half[0][1], chunk_bytes);
	chunk_max = (kcoll_div_u64(kcoll_div_u64(half[0][1], es) + C - 1, C)) * es;

	/* each rank's per-chunk operations in both trees, as stage offsets */
	for (t = 0; t < 2; t++) {
		u32 x = dbt_pos(p, k->r, (int)t), rootchild = pow2_floor(p - 1);
		s64 par, ch[2];
		u64 dn_root, depth = 0, y;
		struct kdbt_op *o = ops[t];
		u32 n = 0;

		dbt_node(p, x, &par, ch);
		leaf[t] = ch[0] < 0 && ch[1] < 0;
		have_r[t] = ch[1] >= 0;
		/* the root sends down one stage after its last reduction */
		dn_root = dbt_base(p, rootchild) + 2;
		for (y = x; y != 0;) {
			s64 pp, cc[2];

			dbt_node(p, (u32)y, &pp, cc);
			y = (u64)pp;
			depth++;
		}
		if (ch[1] >= 0) {
			u64 br = dbt_base(p, (u32)ch[1]);

			o[n++] = (struct kdbt_op){ br, DB_RECV_R, ch[1] };
			o[n++] = (struct kdbt_op){ br + 1, DB_RED_R, ch[1] };
		}
		if (ch[0] >= 0) {
			u64 bl = dbt_base(p, (u32)ch[0]);
			u64 rl = bl + 1;

			if (ch[1] >= 0 && dbt_base(p, (u32)ch[1]) + 2 > rl)
				rl = dbt_base(p, (u32)ch[1]) + 2;
			o[n++] = (struct kdbt_op){ bl, DB_RECV_L, ch[0] };
			o[n++] = (struct kdbt_op){ rl, DB_RED_L, ch[0] };
		}
		if (par >= 0) {
			o[n++] = (struct kdbt_op){ dbt_base(p, x), DB_SEND_UP, par };
			o[n++] = (struct kdbt_op){ dn_root + depth - 1, DB_RECV_DN, par };
		}
		if (ch[0] >= 0)
			o[n++] = (struct kdbt_op){ dn_root + depth, DB_SEND_DN_L, ch[0] };
		if (ch[1] >= 0)
			o[n++] = (struct kdbt_op){ dn_root + depth, DB_SEND_DN_R, ch[1] };
		nops[t] = n;
		for (i = 0; i < n; i++)
			if (o[i].off > maxoff)
				maxoff = o[i].off;
	}

	/*
	 * Scratch: per tree, 2 slots for the right child's chunk, 3 for the left one's.
	 * acc is RECV (the final result lands where it was accumulated).
	 */
	T = maxoff + C;
	for (s = 0; s < T; s++) {
		for (t = 0; t < 2; t++) {
			for (i = 0; i < nops[t]; i++) {
				struct kdbt_op *o = &ops[t][i];
				u64 coff, clen, tb = (u64)t * 5 * chunk_max;
				struct kreg acc, inr;
				u32 peer;

				if (s < o->off || s - o->off >= C)
					continue;
				c = (u32)(s - o->off);
				kcoll_sched_part(kcoll_div_u64(half[t][1], es), C, c, &coff, &clen);
				coff = coff * es + half[t][0];
				clen *= es;
				acc = KR(KCOLL_BUF_RECV, coff);
				inr = radd(in, coff);
				peer = o->peer >= 0 ? dbt_rank(p, (u32)o->peer, (int)t) : 0;
				ks_at(k, s);
				switch (o->kind) {
				case DB_RECV_R:
					ks_recv(k, peer, KR(KCOLL_BUF_SCRATCH, tb + (c % 2) * chunk_max),
						clen);
					break;
				case DB_RED_R:
					ks_reduce(k, acc, inr, tb + (c % 2) * chunk_max, clen);
					break;
				case DB_RECV_L:
					ks_recv(k, peer, KR(KCOLL_BUF_SCRATCH,
							   tb + (2 + c % 3) * chunk_max), clen);
					break;
				case DB_RED_L:
					ks_reduce(k, acc, have_r[t] ? acc : inr,
						  tb + (2 + c % 3) * chunk_max, clen);
					break;
				case DB_SEND_UP:
					ks_send(k, peer, leaf[t] ? inr : acc, clen);
					break;
				case DB_RECV_DN:
					ks_recv(k, peer, acc, clen);
					break;
				default:
					ks_send(k, peer, acc, clen);
					break;
				}
			}
		}
	}
	return 0;
}

/* ---- pipelined chain -------------------------------------------------------------------- */

static int sched_chain(struct ks *k, u64 chunk_bytes)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, v = rmod((s64)k->r - a->root, p), C, c;
	u64 es = k->es, B = a->count * es, chunk_max, s, coff, clen;
	bool root = v == 0;

	C = nchunks(B, chunk_bytes);
	chunk_max = kcoll_div_u64(a->count + C - 1, C) * es;

	if (a->coll == KCOLL_COLL_BROADCAST) {
		/* chunk c goes from v to v+1 in stage c + v */
		struct kreg src = root ? in_reg(k, 0) : KR(KCOLL_BUF_RECV, 0);
		u32 next = (k->r + 1) % p, prev = (k->r + p - 1) % p;

		if (root && !a->in_place) {
			ks_at(k, 0);
			ks_copy(k, KR(KCOLL_BUF_RECV, 0), KR(KCOLL_BUF_SEND, 0), B);
		}
		for (s = v ? v - 1 : 0; s < (u64)C + v; s++) {
			ks_at(k, s);
			if (v > 0 && s - (v - 1) < C) {
				c = (u32)(s - (v - 1));
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				ks_recv(k, prev, KR(KCOLL_BUF_RECV, coff * es), clen * es);
			}
			if (v + 1 < p && s >= v && s - v < C) {
				c = (u32)(s - v);
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				ks_send(k, next, radd(src, coff * es), clen * es);
			}
		}
		return 0;
	}
	/*
	 * REDUCE towards the root, d = p-1-v hops from the far end.  One chunk: receive and
	 * reduce in one step, chunk c moves from distance d to d+1 in stage c + d.  Several
	 * chunks: the receive lands in a scratch slot and is reduced in the next stage while the
	 * next chunk arrives (chunk c moves in stage c + 2d).  Scratch: two receive slots, then
	 * (non-roots) two accumulation slots.
	 */
	{
		struct kreg in = root ? in_reg(k, 0) : KR(KCOLL_BUF_SEND, 0);
		u32 next = (k->r + p - 1) % p, prev = (k->r + 1) % p;	/* towards the root */
		u64 d = p - 1 - v, h = C >= 2 ? 2 : 1, first, last;

		if (p == 1) {
			ks_copy(k, KR(KCOLL_BUF_RECV, 0), in, B);
			return 0;
		}
		first = d ? h * d - h : 0;
		last = h * d + C;
		for (s = first; s < last; s++) {
			ks_at(k, s);
			/* receive chunk s - h(d-1) */
			if (d > 0 && s >= h * (d - 1) && s - h * (d - 1) < C) {
				c = (u32)(s - h * (d - 1));
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				if (h == 1)
					ks_recv_reduce(k, prev, root ? KR(KCOLL_BUF_RECV, coff * es) :
						       KR(KCOLL_BUF_SCRATCH, (2 + c % 2) * chunk_max),
						       radd(in, coff * es), 0, clen * es);
				else
					ks_recv(k, prev, KR(KCOLL_BUF_SCRATCH, (c % 2) * chunk_max),
						clen * es);
			}
			/* split form: reduce chunk s - h(d-1) - 1 */
			if (h == 2 && d > 0 && s >= 2 * d - 1 && s - (2 * d - 1) < C) {
				c = (u32)(s - (2 * d - 1));
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				ks_reduce(k, root ? KR(KCOLL_BUF_RECV, coff * es) :
					  KR(KCOLL_BUF_SCRATCH, (2 + c % 2) * chunk_max),
					  radd(in, coff * es), (c % 2) * chunk_max, clen * es);
			}
			/* send chunk s - hd */
			if (!root && s >= h * d && s - h * d < C) {
				c = (u32)(s - h * d);
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				ks_send(k, next, d == 0 ? radd(in, coff * es) :
					KR(KCOLL_BUF_SCRATCH, (2 + c % 2) * chunk_max), clen * es);
			}
		}
		return 0;
	}
}

/* ---- all-to-all ------------------------------------------------------------------------- */

static void a2a_block(struct ks *k, bool send_side, u32 j, u64 *off, u64 *len)
{
	const struct kcoll_coll_args *a = k->a;

	if (a->coll == KCOLL_COLL_ALLTOALLV) {
		if (send_side && !a->in_place) {
			*off = a->send_displs[j] * k->es;
			*len = a->send_counts[j] * k->es;
		} else {
			*off = a->displs[j] * k->es;
			*len = a->counts[j] * k->es;
		}
		return;
	}
	*off = (u64)j * a->count * k->es;
	*len = a->count * k->es;
}

static int sched_pairwise(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, r = k->r, st;
	u64 so, sl, ro, rl, slot = 0;

	if (!a->in_place) {
		/* step st: to r+st, from r-st; own block copied first */
		ks_at(k, 0);
		a2a_block(k, true, r, &so, &sl);
		a2a_block(k, false, r, &ro, &rl);
		ks_copy(k, KR(KCOLL_BUF_RECV, ro), KR(KCOLL_BUF_SEND, so), sl < rl ? sl : rl);
		for (st = 1; st < p; st++) {
			u32 to = (r + st) % p, from = (r + p - st) % p;

			ks_at(k, st);
			a2a_block(k, true, to, &so, &sl);
			ks_send(k, to, KR(KCOLL_BUF_SEND, so), sl);
			a2a_block(k, false, from, &ro, &rl);
			ks_recv(k, from, KR(KCOLL_BUF_RECV, ro), rl);
		}
		return 0;
	}
	/*
	 * In place: step st pairs r with (st - r) mod p (an involution), exchanging block j
	 * through a scratch slot; the slot is copied home in the next step.  Two slots.
	 */
	{
		u64 mx = 0, o, l;
		u32 j;
		s64 prevj = -1;

		for (j = 0; j < p; j++) {
			a2a_block(k, false, j, &o, &l);
			if (l > mx)
				mx = l;
		}
		for (st = 0; st <= p; st++) {
			ks_at(k, st);
			if (prevj >= 0) {
				a2a_block(k, false, (u32)prevj, &o, &l);
				ks_copy(k, KR(KCOLL_BUF_RECV, o), KR(KCOLL_BUF_SCRATCH,
					((st - 1) & 1) * mx), l);
				prevj = -1;
			}
			if (st == p)
				break;
			j = rmod((s64)st - r, p);
			if (j == r)
				continue;
			a2a_block(k, false, j, &o, &l);
			slot = (st & 1) * mx;
			ks_send(k, j, KR(KCOLL_BUF_RECV, o), l);
			ks_recv(k, j, KR(KCOLL_BUF_SCRATCH, slot), l);
			prevj = j;
		}
		return 0;
	}
}

/*
 * Bruck all-to-all.  Working area W (p blocks, scratch) holds at index i the block for rank
 * r+i; round k sends every index with bit k set to r + 2^k and receives the same indices
 * from r - 2^k.  Those indices form runs of 2^k blocks every 2^(k+1): packed into a send
 * area with COPY steps, unpacked from a receive area (a single run is sent directly).
 * Afterwards W[i] holds the block from rank r-i.  Scratch: W, send area, receive area.
 */
static int sched_bruck_a2a(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, r = k->r, L = log2_ceil(p), kk, i;
	u64 cb = a->count * k->es, W = 0, PS = (u64)p * cb, PR = PS + (u64)((p + 1) / 2) * cb;
	struct kreg in = in_reg(k, 0);

	ks_at(k, 0);
	/* W[i] = in[(r + i) % p]: two runs */
	ks_copy(k, KR(KCOLL_BUF_SCRATCH, W), radd(in, (u64)r * cb), (u64)(p - r) * cb);
	ks_copy(k, KR(KCOLL_BUF_SCRATCH, W + (u64)(p - r) * cb), in, (u64)r * cb);
	for (kk = 0; kk < L; kk++) {
		u32 d = 1U << kk, to = (r + d) % p, from = (r + p - d) % p, runs = 0, x;
		u64 n = 0, s = 1 + 3 * (u64)kk;

		for (x = d; x < p; x += 2 * d)
			runs++;
		if (runs == 1) {
			/* one run: sent from W directly, received aside and copied home */
			u64 len = (u64)(p - d < d ? p - d : d) * cb;

			ks_at(k, s + 1);
			ks_send(k, to, KR(KCOLL_BUF_SCRATCH, W + (u64)d * cb), len);
			ks_recv(k, from, KR(KCOLL_BUF_SCRATCH, PR), len);
			ks_at(k, s + 2);
			ks_copy(k, KR(KCOLL_BUF_SCRATCH, W + (u64)d * cb), KR(KCOLL_BUF_SCRATCH, PR),
				len);
			continue;
		}
		ks_at(k, s);
		for (x = d; x < p; x += 2 * d) {
			u32 e = x + d < p ? x + d : p;

			ks_copy(k, KR(KCOLL_BUF_SCRATCH, PS + n * cb),
				KR(KCOLL_BUF_SCRATCH, W + (u64)x * cb), (u64)(e - x) * cb);
			n += e - x;
		}
		ks_at(k, s + 1);
		ks_send(k, to, KR(KCOLL_BUF_SCRATCH, PS), n * cb);
		ks_recv(k, from, KR(KCOLL_BUF_SCRATCH, PR), n * cb);
		ks_at(k, s + 2);
		n = 0;
		for (x = d; x < p; x += 2 * d) {
			u32 e = x + d < p ? x + d : p;

			ks_copy(k, KR(KCOLL_BUF_SCRATCH, W + (u64)x * cb),
				KR(KCOLL_BUF_SCRATCH, PR + n * cb), (u64)(e - x) * cb);
			n += e - x;
		}
	}
	/* RECV[(r - i) % p] = W[i] */
	ks_at(k, 1 + 3 * (u64)L);
	for (i = 0; i < p; i++)
		ks_copy(k, KR(KCOLL_BUF_RECV, (u64)rmod((s64)r - i, p) * cb),
			KR(KCOLL_BUF_SCRATCH, W + (u64)i * cb), cb);
	return 0;
}

/*
 * Bruck all-gather, directly in RECV: index i stands for block (r + i) % p.  Round k sends
 * indices [0, n) to r - 2^k and receives [2^k, 2^k + n) from r + 2^k, n = min(2^k, p -
 * 2^k).  Index ranges map to block ranges that may wrap at p, at the same place on both
 * ends of a message, so they are sent as at most two pieces.  Dissemination barrier: the
 * same pattern with empty messages.
 */
static int sched_bruck(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, r = k->r, L = log2_ceil(p), kk;
	u64 cb = a->count * k->es;

	if (a->coll == KCOLL_COLL_ALLTOALL)
		return sched_bruck_a2a(k);
	if (a->coll == KCOLL_COLL_BARRIER) {
		k->zero_ok = true;
		for (kk = 0; kk < L; kk++) {
			u32 d = 1U << kk;

			ks_at(k, kk);
			ks_send(k, (r + d) % p, NOREG, 0);
			ks_recv(k, (r + p - d) % p, NOREG, 0);
		}
		return 0;
	}
	/* ALLGATHER */
	ks_at(k, 0);
	ks_copy(k, KR(KCOLL_BUF_RECV, (u64)r * cb), in_reg(k, (u64)r * cb), cb);
	for (kk = 0; kk < L; kk++) {
		u32 d = 1U << kk, n = d < p - d ? d : p - d;
		u32 to = (r + p - d) % p, from = (r + d) % p;
		u32 b0, w;

		ks_at(k, kk + 1);
		/* send: blocks r .. r+n-1 (mod p); round 0 straight from the input */
		b0 = r;
		w = p - b0 < n ? p - b0 : n;
		ks_send(k, to, kk == 0 ? in_reg(k, (u64)r * cb) : KR(KCOLL_BUF_RECV, (u64)b0 * cb),
			(u64)w * cb);
		if (w < n)
			ks_send(k, to, KR(KCOLL_BUF_RECV, 0), (u64)(n - w) * cb);
		/* receive: blocks r+d .. r+d+n-1 (mod p) */
		b0 = (r + d) % p;
		w = p - b0 < n ? p - b0 : n;
		ks_recv(k, from, KR(KCOLL_BUF_RECV, (u64)b0 * cb), (u64)w * cb);
		if (w < n)
			ks_recv(k, from, KR(KCOLL_BUF_RECV, 0), (u64)(n - w) * cb);
	}
	return 0;
}

/* ---- support matrix, arguments, sizes --------------------------------------------------- */

#define CB(c)	(1U << KCOLL_COLL_##c)

static const u32 kcoll_algo_colls[KCOLL_ALGO_COUNT] = {
	[KCOLL_ALGO_RING] = CB(ALLREDUCE) | CB(ALLGATHER) | CB(REDUCE_SCATTER) |
			    CB(ALLGATHERV) | CB(REDUCE_SCATTERV),
	[KCOLL_ALGO_RECDBL] = CB(ALLREDUCE) | CB(ALLGATHER) | CB(BARRIER),
	[KCOLL_ALGO_RABENSEIFNER] = CB(ALLREDUCE) | CB(REDUCE_SCATTER),
	[KCOLL_ALGO_BINOMIAL] = CB(BROADCAST) | CB(REDUCE) | CB(SCATTER) | CB(GATHER) |
				CB(ALLREDUCE) | CB(BARRIER),
	[KCOLL_ALGO_DBTREE] = CB(ALLREDUCE),
	[KCOLL_ALGO_CHAIN] = CB(BROADCAST) | CB(REDUCE),
	[KCOLL_ALGO_PAIRWISE] = CB(ALLTOALL) | CB(ALLTOALLV),
	[KCOLL_ALGO_BRUCK] = CB(ALLTOALL) | CB(ALLGATHER) | CB(BARRIER),
};

bool kcoll_sched_supports(enum kcoll_algo algo, enum kcoll_coll_type coll, bool in_place)
{
	if ((unsigned int)algo >= KCOLL_ALGO_COUNT || (unsigned int)coll >= KCOLL_COLL_COUNT)
		return false;
	if (in_place && coll == KCOLL_COLL_BARRIER)
		return false;
	return kcoll_algo_colls[algo] & (1U << coll);
}

static bool kcoll_rooted(enum kcoll_coll_type c)
{
	return c == KCOLL_COLL_BROADCAST || c == KCOLL_COLL_SCATTER || c == KCOLL_COLL_GATHER ||
	       c == KCOLL_COLL_REDUCE;
}

/* max over blocks with elements of off + len, or -EOVERFLOW */
static int v_extent(const u64 *counts, const u64 *displs, u32 n, u64 *ext)
{
	u64 m = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!counts[i])
			continue;
		if (displs[i] + counts[i] < displs[i])
			return -EOVERFLOW;
		if (displs[i] + counts[i] > m)
			m = displs[i] + counts[i];
	}
	*ext = m;
	return 0;
}

/* limit on elements so that byte offsets cannot overflow */
#define KCOLL_SCHED_MAX_BYTES	((u64)1 << 56)

int kcoll_sched_check_args(const struct kcoll_coll_args *a)
{
	u64 ext, tot;
	int err;

	if (!a || (unsigned int)a->coll >= KCOLL_COLL_COUNT || a->nranks == 0 ||
	    a->nranks > (1U << 30) || a->rank >= a->nranks || a->elem_size == 0)
		return -EINVAL;
	if (kcoll_rooted(a->coll) && a->root >= a->nranks)
		return -EINVAL;
	switch (a->coll) {
	case KCOLL_COLL_ALLGATHERV:
	case KCOLL_COLL_REDUCE_SCATTERV:
	case KCOLL_COLL_ALLTOALLV:
		if (!a->counts || !a->displs)
			return -EINVAL;
		err = v_extent(a->counts, a->displs, a->nranks, &ext);
		if (err)
			return err;
		if (ext > kcoll_div_u64(KCOLL_SCHED_MAX_BYTES, a->elem_size))
			return -EOVERFLOW;
		if (a->coll == KCOLL_COLL_ALLTOALLV && !a->in_place) {
			if (!a->send_counts || !a->send_displs)
				return -EINVAL;
			err = v_extent(a->send_counts, a->send_displs, a->nranks, &ext);
			if (err)
				return err;
			if (ext > kcoll_div_u64(KCOLL_SCHED_MAX_BYTES, a->elem_size))
				return -EOVERFLOW;
		}
		return 0;
	default:
		tot = a->count;
		if (tot > kcoll_div_u64(KCOLL_SCHED_MAX_BYTES, (u64)a->elem_size * a->nranks))
			return -EOVERFLOW;
		return 0;
	}
}

int kcoll_sched_buf_bytes(const struct kcoll_coll_args *a, u64 *send_bytes, u64 *recv_bytes)
{
	u64 es, B, P, ext = 0, sext = 0;
	bool root, ip;
	int err = kcoll_sched_check_args(a);

	if (err)
		return err;
	es = a->elem_size;
	B = a->count * es;
	P = B * a->nranks;
	root = a->rank == a->root;
	ip = a->in_place;
	if (a->counts)
		v_extent(a->counts, a->displs, a->nranks, &ext);
	if (a->send_counts && a->send_displs)
		v_extent(a->send_counts, a->send_displs, a->nranks, &sext);
	ext *= es;
	sext *= es;
	*send_bytes = *recv_bytes = 0;
	switch (a->coll) {
	case KCOLL_COLL_BROADCAST:
		*send_bytes = root && !ip ? B : 0;
		*recv_bytes = B;
		break;
	case KCOLL_COLL_SCATTER:
		*send_bytes = root && !ip ? P : 0;
		*recv_bytes = root && ip ? P : B;
		break;
	case KCOLL_COLL_GATHER:
		*send_bytes = root && ip ? 0 : B;
		*recv_bytes = root ? P : 0;
		break;
	case KCOLL_COLL_REDUCE:
		*send_bytes = root && ip ? 0 : B;
		*recv_bytes = root ? B : 0;
		break;
	case KCOLL_COLL_ALLREDUCE:
		*send_bytes = ip ? 0 : B;
		*recv_bytes = B;
		break;
	case KCOLL_COLL_ALLGATHER:
		*send_bytes = ip ? 0 : B;
		*recv_bytes = P;
		break;
	case KCOLL_COLL_REDUCE_SCATTER:
		*send_bytes = ip ? 0 : P;
		*recv_bytes = ip ? P : B;
		break;
	case KCOLL_COLL_ALLTOALL:
		*send_bytes = ip ? 0 : P;
		*recv_bytes = P;
		break;
	case KCOLL_COLL_BARRIER:
		break;
	case KCOLL_COLL_ALLGATHERV:
		*send_bytes = ip ? 0 : a->counts[a->rank] * es;
		*recv_bytes = ext;
		break;
	case KCOLL_COLL_REDUCE_SCATTERV:
		*send_bytes = ip ? 0 : ext;
		*recv_bytes = ip ? ext : a->counts[a->rank] * es;
		break;
	case KCOLL_COLL_ALLTOALLV:
		*send_bytes = ip ? 0 : sext;
		*recv_bytes = ext;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int kcoll_sched_build(const struct kcoll_coll_args *args, enum kcoll_algo algo,
		      u64 chunk_bytes, struct kcoll_step *steps, u32 max_steps,
		      struct kcoll_sched_info *info)
{
	struct ks k;
	int err = kcoll_sched_check_args(args);

	if (err)
		return err;
	if (!info || !kcoll_sched_supports(algo, args->coll, args->in_place))
		return -EINVAL;
	memset(&k, 0, sizeof(k));
	k.a = args;
	k.steps = steps;
	k.max = max_steps;
	k.p = args->nranks;
	k.r = args->rank;
	k.es = args->elem_size;

	switch (algo) {
	case KCOLL_ALGO_RING:
		err = sched_ring(&k, chunk_bytes);
		break;
	case KCOLL_ALGO_RECDBL:
		err = sched_recdbl(&k);
		break;
	case KCOLL_ALGO_RABENSEIFNER:
		err = sched_rabenseifner(&k);
		break;
	case KCOLL_ALGO_BINOMIAL:
		err = sched_binomial(&k);
		break;
	case KCOLL_ALGO_DBTREE:
		err = sched_dbtree(&k, chunk_bytes);
		break;
	case KCOLL_ALGO_CHAIN:
		err = sched_chain(&k, chunk_bytes);
		break;
	case KCOLL_ALGO_PAIRWISE:
		err = sched_pairwise(&k);
		break;
	case KCOLL_ALGO_BRUCK:
		err = sched_bruck(&k);
		break;
	default:
		err = -EINVAL;
		break;
	}
	if (!err)
		err = k.err;
	if (err)
		return err;
	if (k.n > 0xffffffffULL)
		return -EOVERFLOW;
	info->nsteps = (u32)k.n;
	info->nstages = k.n ? k.last_stage + 1 : 0;
	info->scratch_bytes = k.scratch;
	return 0;
}

/* ---- selection -------------------------------------------------------------------------- */

void kcoll_sched_tuning_default(struct kcoll_sched_tuning *t)
{
	memset(t, 0, sizeof(*t));
	/* derived from kcoll-sim's model: tools/kcoll-sim/thresholds.py, scale.rst */
	t->small_bytes = 2 << 20;
	t->medium_bytes = 8 << 20;
	t->tree_ranks = 384;
	t->chunk_bytes = 256 << 10;
}

static bool is_pow2(u32 x)
{
	return x && !(x & (x - 1));
}

enum kcoll_algo kcoll_sched_select(enum kcoll_coll_type coll, u32 nranks, u64 bytes,
				   const struct kcoll_sched_tuning *t)
{
	struct kcoll_sched_tuning def;

	if (!t) {
		kcoll_sched_tuning_default(&def);
		t = &def;
	}
	if ((unsigned int)coll >= KCOLL_COLL_COUNT)
		return KCOLL_ALGO_AUTO;
	if (t->algo[coll] != KCOLL_ALGO_AUTO &&
	    kcoll_sched_supports((enum kcoll_algo)t->algo[coll], coll, false))
		return (enum kcoll_algo)t->algo[coll];
	switch (coll) {
	case KCOLL_COLL_BROADCAST:
		return bytes <= t->small_bytes || nranks <= 2 ? KCOLL_ALGO_BINOMIAL :
			KCOLL_ALGO_CHAIN;
	case KCOLL_COLL_REDUCE:
		return bytes <= t->small_bytes || nranks <= 2 ? KCOLL_ALGO_BINOMIAL :
			KCOLL_ALGO_CHAIN;
	case KCOLL_COLL_SCATTER:
	case KCOLL_COLL_GATHER:
		return KCOLL_ALGO_BINOMIAL;
	case KCOLL_COLL_ALLREDUCE:
		if (bytes <= t->small_bytes)
			return KCOLL_ALGO_RECDBL;
		if (nranks >= t->tree_ranks)
			return KCOLL_ALGO_DBTREE;
		if (bytes <= t->medium_bytes && is_pow2(nranks))
			return KCOLL_ALGO_RABENSEIFNER;
		return KCOLL_ALGO_RING;
	case KCOLL_COLL_ALLGATHER:
		if (bytes * nranks <= t->small_bytes)
			return is_pow2(nranks) ? KCOLL_ALGO_RECDBL : KCOLL_ALGO_BRUCK;
		return KCOLL_ALGO_RING;
	case KCOLL_COLL_REDUCE_SCATTER:
		if (bytes * nranks <= t->medium_bytes && is_pow2(nranks))
			return KCOLL_ALGO_RABENSEIFNER;
		return KCOLL_ALGO_RING;
	case KCOLL_COLL_ALLTOALL:
		return bytes <= t->small_bytes / 16 && nranks > 8 ? KCOLL_ALGO_BRUCK :
			KCOLL_ALGO_PAIRWISE;
	case KCOLL_COLL_BARRIER:
		return is_pow2(nranks) ? KCOLL_ALGO_RECDBL : KCOLL_ALGO_BRUCK;
	case KCOLL_COLL_ALLGATHERV:
	case KCOLL_COLL_REDUCE_SCATTERV:
		return KCOLL_ALGO_RING;
	case KCOLL_COLL_ALLTOALLV:
		return KCOLL_ALGO_PAIRWISE;
	default:
		return KCOLL_ALGO_AUTO;
	}
}

int kcoll_sched_choose(enum kcoll_coll_type coll, u32 nranks, u64 bytes, bool in_place,
		       enum kcoll_algo request, const struct kcoll_sched_tuning *t)
{
	enum kcoll_algo a;

	if (request != KCOLL_ALGO_AUTO)
		return kcoll_sched_supports(request, coll, in_place) ? (int)request : -EINVAL;
	a = kcoll_sched_select(coll, nranks, bytes, t);
	if (!kcoll_sched_supports(a, coll, in_place))
		return -EINVAL;
	return (int)a;
}

/* FNV-1a over 64-bit words, folded to 32 bits */
static u64 fp_mix(u64 h, u64 v)
{
	int i;

	for (i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

u32 kcoll_sched_fingerprint(const struct kcoll_coll_args *a, enum kcoll_algo algo,
			    u64 chunk_bytes)
{
	u64 h = 0xcbf29ce484222325ULL;
	u32 i;

	h = fp_mix(h, a->coll);
	h = fp_mix(h, a->nranks);
	h = fp_mix(h, kcoll_rooted(a->coll) ? a->root : 0);
	h = fp_mix(h, a->count);
	h = fp_mix(h, a->elem_size);
	h = fp_mix(h, a->in_place);
	h = fp_mix(h, algo);
	h = fp_mix(h, chunk_bytes);
	if ((a->coll == KCOLL_COLL_ALLGATHERV || a->coll == KCOLL_COLL_REDUCE_SCATTERV) &&
	    a->counts && a->displs) {
		for (i = 0; i < a->nranks; i++) {
			h = fp_mix(h, a->counts[i]);
			h = fp_mix(h, a->displs[i]);
		}
	}
	return (u32)(h ^ (h >> 32));
}

u64 kcoll_sched_step_tag(const struct kcoll_coll_args *a, u64 op_tag,
			 const struct kcoll_step *step)
{
	u64 h;

	if (a->coll != KCOLL_COLL_ALLTOALLV)
		return op_tag;
	h = fp_mix(op_tag & 0xffffffffULL, step->bytes);
	return (op_tag & ~0xffffffffULL) | (u32)(h ^ (h >> 32));
}

const char *kcoll_coll_name(enum kcoll_coll_type coll)
{
	static const char *const n[KCOLL_COLL_COUNT] = {
		"broadcast", "scatter", "gather", "reduce", "allreduce", "allgather",
		"reduce_scatter", "alltoall", "barrier", "allgatherv", "alltoallv",
		"reduce_scatterv",
	};

	return (unsigned int)coll < KCOLL_COLL_COUNT ? n[coll] : NULL;
}

const char *kcoll_algo_name(enum kcoll_algo algo)
{
	static const char *const n[KCOLL_ALGO_COUNT] = {
		"auto", "ring", "recdbl", "rabenseifner", "binomial", "dbtree", "chain",
		"pairwise", "bruck",
	};

	return (unsigned int)algo < KCOLL_ALGO_COUNT ? n[algo] : NULL;
}
