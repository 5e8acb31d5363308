// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched_ring.c - collective schedules: ring, recursive doubling and halving,
 * Rabenseifner (see kcoll_sched.c for the rules every
 * schedule follows).
 */
#include "kcoll_sched_int.h"

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

/* The parts of the all-reduce vector: block b is part b of count split in p. */
static void ring_ar_setup(struct ks *k, struct kring *g, u64 chunk_bytes)
{
	memset(g, 0, sizeof(*g));
	g->b.n = k->p;
	g->b.kind = KB_PARTS;
	g->b.count = k->a->count;
	g->b.base = kcoll_div_u64(k->a->count, k->p);
	g->b.rem = k->a->count - g->b.base * k->p;
	ring_setup(k, g, chunk_bytes);
	g->in = in_reg(k, 0);
	g->acc_mode = ACC_RECV_BLOCKS;
}

void kcoll_sched_ring_ar_rs(struct ks *k, u64 chunk_bytes)
{
	struct kring g;

	ring_ar_setup(k, &g, chunk_bytes);
	if (k->p == 1)
		ks_copy(k, KR(KCOLL_BUF_RECV, 0), g.in, k->a->count * k->es);
	else
		ring_rs(k, &g, 0);
}

void kcoll_sched_ring_ar_ag(struct ks *k, u64 chunk_bytes)
{
	struct kring g;
	u64 off, len;

	ring_ar_setup(k, &g, chunk_bytes);
	blk(&g.b, k->r, &off, &len);
	if (k->p > 1)
		ring_ag(k, &g, KR(KCOLL_BUF_RECV, off * k->es), 0);
}

int kcoll_sched_alg_ring(struct ks *k, u64 chunk_bytes)
{
	const struct kcoll_coll_args *a = k->a;
	struct kring g;
	u64 off, len, s;
	u32 r = k->r;

	if (a->coll == KCOLL_ALLREDUCE) {
		ring_ar_setup(k, &g, chunk_bytes);
		if (k->p == 1) {
			ks_copy(k, KR(KCOLL_BUF_RECV, 0), g.in, a->count * k->es);
			return 0;
		}
		blk(&g.b, r, &off, &len);
		s = ring_rs(k, &g, 0);
		ring_ag(k, &g, KR(KCOLL_BUF_RECV, off * k->es), s);
		return 0;
	}
	memset(&g, 0, sizeof(g));
	g.b.n = k->p;
	switch (a->coll) {
	case KCOLL_ALLGATHER:
	case KCOLL_REDUCE_SCATTER:
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
	case KCOLL_REDUCE_SCATTER:
	case KCOLL_REDUCE_SCATTERV:
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

int kcoll_sched_alg_recdbl(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 r = k->r, p = k->p, mask, i;
	u64 B = a->count * k->es, s;
	struct kfold f;

	fold_init(k, &f);

	if (a->coll == KCOLL_BARRIER) {
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

	if (a->coll == KCOLL_ALLREDUCE) {
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
int kcoll_sched_alg_rabenseifner(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	bool rs = a->coll == KCOLL_REDUCE_SCATTER;
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
