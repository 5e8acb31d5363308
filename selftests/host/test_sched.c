// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched: every algorithm x collective, executed by the simulator (core/kcoll_sim)
 * for all ranks together on real data, against references computed here.
 *
 * Integer data is checked bit for bit (uint64 and uint8 sums of random values: a rank's
 * contribution missing or counted twice changes the result); fp32 sums are checked bit for
 * bit against a reference that reduces in the order the header documents for the algorithm.
 * Every receive buffer is compared whole: bytes outside the outputs must be untouched.
 *
 * Sweep (default): every nranks from 1 to 1024 for every algorithm x collective, one run per
 * nranks with the variant (in place or not, root 0 or last, data type, count, chunking)
 * rotating with nranks, and every variant for small nranks.  Algorithms whose step count
 * per rank grows with nranks (ring, pairwise, Bruck all-to-all: nranks^2 steps per run) run
 * every nranks up to KCOLL_QUAD_MAX and a sample of larger ones.  Above 120 ranks the
 * simulator's check for concurrent overlapping accesses looks at a sample of 120 ranks.
 *   KCOLL_SCHED_FULL=1  every nranks to 1024 for those too (minutes)
 *   VALGRIND=1          (set by run.sh) a much smaller sweep
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>

#include "kselftest_harness.h"

#include "../../core/kcoll_reduce.c"
#include "../../core/kcoll_reduce_x86.c"
#include "../../core/kcoll_sched.c"
#include "../../core/kcoll_sched_select.c"
#include "../../core/kcoll_sched_ring.c"
#include "../../core/kcoll_sched_tree.c"
#include "../../core/kcoll_sched_a2a.c"
#include "../../core/kcoll_sched_hier.c"
#include "../../core/kcoll_sim.c"

#define KCOLL_QUAD_MAX	160

#include "sched_ref.h"

/* ---- modes ---------------------------------------------------------------------------- */

static int mode_full(void)
{
	const char *e = getenv("KCOLL_SCHED_FULL");

	return e && *e && strcmp(e, "0");
}

static int mode_valgrind(void)
{
	const char *e = getenv("VALGRIND");

	return e && *e && strcmp(e, "0");
}

/* ---- one run ---------------------------------------------------------------------------- */

enum dkind { DK_U64_SUM, DK_F32_SUM, DK_U8_SUM, DK_COUNT };

static const u32 dk_es[DK_COUNT] = { 8, 4, 1 };
static const enum kcoll_datatype dk_dtype[DK_COUNT] = {
	KCOLL_UINT64, KCOLL_FP32, KCOLL_UINT8
};

struct trun {
	enum kcoll_algorithm algo;
	enum kcoll_collective coll;
	u32 p, root;
	u64 count;
	bool in_place;
	enum dkind dk;
	u64 chunk;
	/* v-collectives */
	u64 *counts, *displs;	/* ALLGATHERV/REDUCE_SCATTERV: shared; ALLTOALLV: matrix */
	u64 *mat;		/* ALLTOALLV: mat[i*p+j] = elements i sends to j */
	u64 *a2a_sc, *a2a_sd, *a2a_rc, *a2a_rd;	/* per rank, p each */
	/* initial buffers */
	u8 **send0, **recv0;
	u8 *refv;		/* reductions: the reduced input vector, computed once */
	const u8 **inp;		/* in_ptr() of every rank */
	u8 *arena;
	/* optional: break schedules on purpose (tests of the simulator) */
	void (*mutate)(void *ctx, u32 rank, struct kcoll_step *steps,
		       struct kcoll_sched_info *info);
	const struct kcoll_reduce_engine *engine;
	char msg[700];
};

static bool is_red(enum kcoll_collective c)
{
	return c == KCOLL_REDUCE || c == KCOLL_ALLREDUCE ||
	       c == KCOLL_REDUCE_SCATTER || c == KCOLL_REDUCE_SCATTERV;
}

static void a2av_rank_args(void *ctx, u32 rank, struct kcoll_coll_args *a)
{
	struct trun *t = ctx;
	u32 p = t->p;

	a->send_counts = t->a2a_sc + (u64)rank * p;
	a->send_displs = t->a2a_sd + (u64)rank * p;
	a->counts = t->a2a_rc + (u64)rank * p;
	a->displs = t->a2a_rd + (u64)rank * p;
}

/* Rank j's logical input, per the buffer conventions. */
static const u8 *in_ptr(struct trun *t, u32 j)
{
	u64 es = dk_es[t->dk], B = t->count * es;
	bool ip = t->in_place;

	switch (t->coll) {
	case KCOLL_BROADCAST:
	case KCOLL_SCATTER:
	case KCOLL_REDUCE:
		return j == t->root && ip ? t->recv0[j] : t->send0[j];
	case KCOLL_GATHER:
		return j == t->root && ip ? t->recv0[j] + (u64)j * B : t->send0[j];
	case KCOLL_ALLGATHER:
		return ip ? t->recv0[j] + (u64)j * B : t->send0[j];
	case KCOLL_ALLGATHERV:
		return ip ? t->recv0[j] + t->displs[j] * es : t->send0[j];
	default:
		return ip ? t->recv0[j] : t->send0[j];
	}
}

/*
 * Reference for the element at byte offset off of every rank's input vector; b is the ring
 * block holding it, e its index in the ALLREDUCE/REDUCE vector.
 */
static void ref_elem(struct trun *t, u64 off, u32 b, u64 e, u8 *out)
{
	u32 p = t->p, j;
	const u8 **in = t->inp;

	if (t->dk == DK_U64_SUM) {
		u64 acc = 0, x;

		for (j = 0; j < p; j++) {
			memcpy(&x, in[j] + off, 8);
			acc += x;
		}
		memcpy(out, &acc, 8);
		return;
	}
	if (t->dk == DK_U8_SUM) {
		u8 acc = 0;

		for (j = 0; j < p; j++)
			acc = (u8)(acc + in[j][off]);
		*out = acc;
		return;
	}
	for (j = 0; j < p; j++)
		memcpy(&fx[j], in[j] + off, 4);
	{
		float v;

		switch (t->algo) {
		case KCOLL_ALG_RING:
			v = ord_ring(p, b);
			break;
		case KCOLL_ALG_RECDBL:
			v = ord_recdbl(p);
			break;
		case KCOLL_ALG_RABENSEIFNER:
			v = ord_rabenseifner(p);
			break;
		case KCOLL_ALG_BINOMIAL:
			v = ord_binomial(p, t->coll == KCOLL_ALLREDUCE ? 0 : t->root, 0);
			break;
		case KCOLL_ALG_DBTREE:
			v = ord_dbtree(p, e < (t->count + 1) / 2 ? 0 : 1, 0);
			break;
		default:	/* CHAIN */
			v = ord_chain(p, t->root);
			break;
		}
		memcpy(out, &v, 4);
	}
}

/* ---- expected buffers ----------------------------------------------------------------- */

static int fail(struct trun *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct trun *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* memcpy, without a call for the one-byte blocks the big sweeps use */
static inline void cpy(u8 *d, const u8 *s, u64 n)
{
	if (n == 1)
		*d = *s;
	else if (n)
		memcpy(d, s, n);
}

static int check_rank_out(struct trun *t, struct kcoll_sim *s, u32 r)
{
	struct kcoll_sim_rank *k = &s->rk[r];
	u64 es = dk_es[t->dk], B = t->count * es, len = k->recv_len, i, j;
	u32 p = t->p;
	static u8 *exp, *mask;
	static u64 cap;
	int ret = 0;

	if (len > cap) {
		free(exp);
		free(mask);
		cap = len;
		exp = malloc(cap);
		mask = malloc(cap);
		if (!exp || !mask) {
			cap = 0;
			return fail(t, "oom");
		}
	}
	memcpy(exp, t->recv0[r], len);
	memset(mask, 1, len);
	switch (t->coll) {
	case KCOLL_BROADCAST:
		memcpy(exp, in_ptr(t, t->root), B);
		break;
	case KCOLL_SCATTER:
		if (!(r == t->root && t->in_place))
			memcpy(exp, in_ptr(t, t->root) + (u64)r * B, B);
		break;
	case KCOLL_GATHER:
		if (r == t->root)
			for (j = 0; j < p; j++)
				cpy(exp + j * B, t->inp[j], B);
		break;
	case KCOLL_REDUCE:
		if (r != t->root)
			break;
		/* fall through */
	case KCOLL_ALLREDUCE:
		memcpy(exp, t->refv, B);
		break;
	case KCOLL_ALLGATHER:
		for (j = 0; j < p; j++)
			cpy(exp + j * B, t->inp[j], B);
		break;
	case KCOLL_REDUCE_SCATTER: {
		u64 o = t->in_place ? (u64)r * B : 0;

		if (t->in_place)
			memset(mask, 0, len);
		memcpy(exp + o, t->refv + (u64)r * B, B);
		memset(mask + o, 1, B);
		break;
	}
	case KCOLL_ALLTOALL:
		for (j = 0; j < p; j++)
			cpy(exp + j * B, t->inp[j] + (u64)r * B, B);
		break;
	case KCOLL_ALLGATHERV:
		for (j = 0; j < p; j++)
			cpy(exp + t->displs[j] * es, t->inp[j], t->counts[j] * es);
		break;
	case KCOLL_REDUCE_SCATTERV: {
		u64 o = t->in_place ? t->displs[r] * es : 0;

		if (t->in_place)
			memset(mask, 0, len);
		memcpy(exp + o, t->refv + t->displs[r] * es, t->counts[r] * es);
		memset(mask + o, 1, t->counts[r] * es);
		break;
	}
	case KCOLL_ALLTOALLV:
		for (j = 0; j < p; j++) {
			u64 n = t->a2a_rc[(u64)r * p + j] * es;
			const u8 *src = t->in_place ?
				t->recv0[j] + t->a2a_rd[j * p + r] * es :
				t->send0[j] + t->a2a_sd[j * p + r] * es;

			cpy(exp + t->a2a_rd[(u64)r * p + j] * es, src, n);
		}
		break;
	default:
		break;
	}
	for (i = 0; i < len; i++) {
		if (mask[i] && k->recv[i] != exp[i]) {
			ret = fail(t, "rank %u: receive buffer byte %llu (element %llu) is 0x%02x, "
				   "expected 0x%02x (buffer %llu bytes)", r, (unsigned long long)i,
				   (unsigned long long)(i / es), k->recv[i], exp[i],
				   (unsigned long long)len);
			break;
		}
	}
	if (!ret && k->send_len && memcmp(k->send, t->send0[r], k->send_len))
		ret = fail(t, "rank %u: send buffer modified", r);
	return ret;
}

/* The reduced vector, in the input layout (ring block of each element known). */
static int make_ref(struct trun *t)
{
	u64 es = dk_es[t->dk], e, b, n;
	u32 p = t->p;

	switch (t->coll) {
	case KCOLL_REDUCE:
	case KCOLL_ALLREDUCE:
		t->refv = malloc(t->count * es + 1);
		if (!t->refv)
			return -1;
		for (e = 0; e < t->count; e++)
			ref_elem(t, e * es, part_of(t->count, p, e), e, t->refv + e * es);
		return 0;
	case KCOLL_REDUCE_SCATTER:
		t->refv = malloc((u64)p * t->count * es + 1);
		if (!t->refv)
			return -1;
		for (b = 0; b < p; b++)
			for (e = 0; e < t->count; e++)
				ref_elem(t, (b * t->count + e) * es, (u32)b, 0,
					 t->refv + (b * t->count + e) * es);
		return 0;
	default:	/* REDUCE_SCATTERV */
		for (b = 0, n = 0; b < p; b++)
			if (t->counts[b] && t->displs[b] + t->counts[b] > n)
				n = t->displs[b] + t->counts[b];
		t->refv = malloc(n * es + 1);
		if (!t->refv)
			return -1;
		for (b = 0; b < p; b++)
			for (e = 0; e < t->counts[b]; e++)
				ref_elem(t, (t->displs[b] + e) * es, (u32)b, 0,
					 t->refv + (t->displs[b] + e) * es);
		return 0;
	}
}

static void fill(u8 *b, u64 len, enum dkind dk)
{
	u64 i;

	if (dk == DK_F32_SUM) {
		for (i = 0; i + 4 <= len; i += 4) {
			float f = rnd_float();

			memcpy(b + i, &f, 4);
		}
		return;
	}
	for (i = 0; i < len; i += 8) {
		u64 x = rnd();

		memcpy(b + i, &x, len - i < 8 ? len - i : 8);
	}
}

static void free_v(struct trun *t)
{
	free(t->counts);
	free(t->displs);
	free(t->mat);
	free(t->a2a_sc);
	free(t->a2a_sd);
	free(t->a2a_rc);
	free(t->a2a_rd);
	t->counts = t->displs = t->mat = NULL;
	t->a2a_sc = t->a2a_sd = t->a2a_rc = t->a2a_rd = NULL;
}

/* Random v-arrays: sparse (most blocks empty) when sparse, gaps between blocks. */
static int make_v(struct trun *t, bool sparse)
{
	u32 p = t->p, i, j;
	u64 o;

	if (t->coll == KCOLL_ALLTOALLV) {
		t->mat = calloc((u64)p * p, 8);
		t->a2a_sc = calloc((u64)p * p, 8);
		t->a2a_sd = calloc((u64)p * p, 8);
		t->a2a_rc = calloc((u64)p * p, 8);
		t->a2a_rd = calloc((u64)p * p, 8);
		if (!t->mat || !t->a2a_sc || !t->a2a_sd || !t->a2a_rc || !t->a2a_rd)
			return -1;
		for (i = 0; i < p; i++)
			for (j = 0; j < p; j++) {
				u64 x = rnd();

				t->mat[(u64)i * p + j] = sparse ? (x % 97 == 0 ? 1 + x % 3 : 0) :
					x % 4;
			}
		if (t->in_place)	/* symmetric */
			for (i = 0; i < p; i++)
				for (j = 0; j < i; j++)
					t->mat[(u64)j * p + i] = t->mat[(u64)i * p + j];
		for (i = 0; i < p; i++) {
			o = rnd() % 3;
			for (j = 0; j < p; j++) {
				t->a2a_sc[(u64)i * p + j] = t->mat[(u64)i * p + j];
				t->a2a_sd[(u64)i * p + j] = o;
				o += t->mat[(u64)i * p + j] + (rnd() % 4 == 0);
			}
			o = rnd() % 3;
			for (j = 0; j < p; j++) {
				t->a2a_rc[(u64)i * p + j] = t->mat[(u64)j * p + i];
				t->a2a_rd[(u64)i * p + j] = o;
				o += t->mat[(u64)j * p + i] + (rnd() % 4 == 0);
			}
		}
		if (t->in_place)	/* same layout for both directions */
			memcpy(t->a2a_sd, t->a2a_rd, (u64)p * p * 8);
		return 0;
	}
	t->counts = calloc(p, 8);
	t->displs = calloc(p, 8);
	if (!t->counts || !t->displs)
		return -1;
	o = rnd() % 3;
	for (i = 0; i < p; i++) {
		u64 x = rnd();

		t->counts[i] = sparse ? (x % 61 == 0 ? 1 + x % 5 : 0) : x % 5;
		t->displs[i] = o;
		o += t->counts[i] + (x % 7 == 0 ? 1 + (x >> 20) % 3 : 0);
	}
	return 0;
}

struct sweep_stats {
	u64 runs, ranks, steps, messages, bytes;
};

/* Simulate one run and check it; 0 or -1 with t->msg. */
static int run_one(struct trun *t, struct sweep_stats *st)
{
	struct kcoll_sim s;
	struct kcoll_sim_cfg cfg;
	u32 r, p = t->p;
	u64 tot;
	int ret = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.args.coll = t->coll;
	cfg.args.nranks = p;
	cfg.args.root = t->root;
	cfg.args.count = t->count;
	cfg.args.elem_size = dk_es[t->dk];
	cfg.args.in_place = t->in_place;
	cfg.args.counts = t->counts;
	cfg.args.displs = t->displs;
	cfg.ctx = t;
	if (t->coll == KCOLL_ALLTOALLV)
		cfg.rank_args = a2av_rank_args;
	cfg.mutate = t->mutate;
	cfg.engine = t->engine;
	cfg.algo = t->algo;
	cfg.chunk_bytes = t->chunk;
	cfg.dtype = dk_dtype[t->dk];
	cfg.op = KCOLL_SUM;
	cfg.check_barrier = t->coll == KCOLL_BARRIER;
	cfg.hazard_sample = mode_full() ? 0 : 40;

	if (kcoll_sim_setup(&s, &cfg)) {
		ret = fail(t, "setup: %s", s.err);
		goto out_sim;
	}
	t->send0 = calloc(p, sizeof(u8 *));
	t->recv0 = calloc(p, sizeof(u8 *));
	for (r = 0, tot = 0; r < p; r++)
		tot += s.rk[r].send_len + s.rk[r].recv_len;
	t->arena = malloc(tot + 1);
	if (!t->send0 || !t->recv0 || !t->arena) {
		ret = fail(t, "oom");
		goto out;
	}
	for (r = 0, tot = 0; r < p; r++) {
		struct kcoll_sim_rank *k = &s.rk[r];

		fill(k->send, k->send_len, t->dk);
		if (t->in_place)
			fill(k->recv, k->recv_len, t->dk);
		else	/* not an input: a pattern is enough to see stray or missing writes */
			memset(k->recv, 0xa0 | (rnd() & 0xf), k->recv_len);
		t->send0[r] = t->arena + tot;
		tot += k->send_len;
		t->recv0[r] = t->arena + tot;
		tot += k->recv_len;
		memcpy(t->send0[r], k->send, k->send_len);
		memcpy(t->recv0[r], k->recv, k->recv_len);
	}
	t->inp = calloc(p, sizeof(*t->inp));
	if (!t->inp) {
		ret = fail(t, "oom");
		goto out;
	}
	for (r = 0; r < p; r++)
		t->inp[r] = in_ptr(t, r);
	if (kcoll_sim_run(&s)) {
		ret = fail(t, "run: %s", s.err);
		goto out;
	}
	if (is_red(t->coll) && make_ref(t)) {
		ret = fail(t, "oom");
		goto out;
	}
	for (r = 0; r < p && !ret; r++)
		ret = check_rank_out(t, &s, r);
	st->runs++;
	st->ranks += p;
	st->steps += s.steps;
	st->messages += s.messages;
	st->bytes += s.bytes;
out:
	free(t->arena);
	t->arena = NULL;
	free(t->send0);
	free(t->recv0);
	free(t->refv);
	free(t->inp);
	t->send0 = t->recv0 = NULL;
	t->refv = NULL;
	t->inp = NULL;
out_sim:
	kcoll_sim_free(&s);
	return ret;
}

/* ---- sweep ---------------------------------------------------------------------------- */

static bool is_vcoll(enum kcoll_collective c)
{
	return c == KCOLL_ALLGATHERV || c == KCOLL_REDUCE_SCATTERV ||
	       c == KCOLL_ALLTOALLV;
}

static bool is_rooted(enum kcoll_collective c)
{
	return c == KCOLL_BROADCAST || c == KCOLL_SCATTER || c == KCOLL_GATHER ||
	       c == KCOLL_REDUCE;
}

/* count is the whole vector (else it is per rank / per block) */
static bool is_vector(enum kcoll_collective c)
{
	return c == KCOLL_BROADCAST || c == KCOLL_REDUCE || c == KCOLL_ALLREDUCE;
}

/*
 * Each rank's schedule has a length proportional to nranks (a ring goes round, pairwise
 * meets everyone, Bruck all-to-all packs O(nranks) runs): simulating all ranks costs
 * nranks^2 whatever the count.
 */
static bool is_quadratic(enum kcoll_algorithm a, enum kcoll_collective c)
{
	return a == KCOLL_ALG_RING || a == KCOLL_ALG_PAIRWISE ||
	       (a == KCOLL_ALG_BRUCK && c == KCOLL_ALLTOALL);
}

static bool sampled_p(u32 p)
{
	static const u32 sample[] = { 129, 191, 255, 256, 257, 300, 383, 500, 511, 512, 513,
				      640, 767, 768, 1000, 1021, 1023, 1024 };
	unsigned int i;

	for (i = 0; i < sizeof(sample) / sizeof(sample[0]); i++)
		if (sample[i] == p)
			return true;
	return false;
}

#define NVAR 8

/*
 * Variant vi of a run at p: in place (bit 0), root last (bit 1), data kind, chunking, count.
 * "big" allows counts proportional to p.
 */
static void set_variant(struct trun *t, u32 vi, bool big)
{
	static const u32 kk[] = { 0, 0, 1, 1, 2, 0, 1, 3 };
	static const u32 rr[] = { 0, 1, 0, 1, 3, 7, 5, 2 };
	static const u32 small[] = { 0, 1, 2, 7, 33, 5, 3, 13 };
	u32 p = t->p, k = kk[vi];

	t->in_place = vi & 1;
	t->root = (vi & 2) ? p - 1 : 0;
	t->dk = (enum dkind)((vi / 2 + p) % DK_COUNT);
	if (!is_red(t->coll) && t->dk == DK_F32_SUM && vi % 3 == 0)
		t->dk = DK_U8_SUM;	/* more byte-granular layouts */
	t->chunk = (vi & 4) ? dk_es[t->dk] * (1 + vi % 3) : 0;
	if (big && p > 200) {	/* large p: one pass (no chunking), k <= 1 */
		t->chunk = 0;
		k = kk[vi] > 1 ? 1 : kk[vi];
	}
	if (t->coll == KCOLL_BARRIER)
		t->count = 0;
	else if (is_vector(t->coll))
		t->count = big ? (u64)p * k + rr[vi] : small[vi];
	else if (big)
		t->count = p > 200 ? 1 : (vi + p) % 4;	/* per rank: total p * count */
	else
		t->count = 1;
	if (!big && (!is_red(t->coll) || !is_vector(t->coll)))
		t->dk = DK_U8_SUM;		/* bytes: keeps the p^2 data small */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct sweep_res {
	struct sweep_stats st;
	u32 pmax_quad;
	char msg[800];
};

static int sweep(enum kcoll_algorithm algo, struct sweep_res *res)
{
	u32 p, c, vi, pmax = PMAX, all_below = 24, quad = KCOLL_QUAD_MAX;
	bool full = mode_full();
	struct trun t;
	double tprev = now_s();

	if (mode_valgrind()) {
		pmax = 40;
		all_below = 6;
	}
	if (getenv("KCOLL_SCHED_ONLY") && strcmp(getenv("KCOLL_SCHED_ONLY"),
						 kcoll_algo_name(algo)))
		return 0;
	if (getenv("KCOLL_SCHED_PMAX"))
		pmax = (u32)atoi(getenv("KCOLL_SCHED_PMAX"));
	res->pmax_quad = full ? pmax : quad;
	/* keep freed buffers in the heap: no mmap/munmap and page faults per run */
	mallopt(M_MMAP_THRESHOLD, 512 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	for (c = 0; c < KCOLL_NUM_COLLECTIVES; c++) {
		double tc = now_s();

		if (!kcoll_sched_supports(algo, (enum kcoll_collective)c, false))
			continue;
		if (c && getenv("KCOLL_SCHED_VERBOSE"))
			ksft_print_msg("  ... %.2f s\n", tc - tprev);
		tprev = tc;
		if (getenv("KCOLL_SCHED_VERBOSE"))
			ksft_print_msg("%s %s\n", kcoll_algo_name(algo),
				       kcoll_coll_name((enum kcoll_collective)c));
		for (p = 1; p <= pmax; p++) {
			bool quadp = is_quadratic(algo, (enum kcoll_collective)c);
			u32 v0, v1;

			if (quadp && !full && p > quad && p != 200 && p != 256 && p != 257 &&
			    p != 1023)
				continue;
			if (p <= all_below) {
				v0 = 0;
				v1 = NVAR;
			} else {
				v0 = (p * 5 + c) % NVAR;
				v1 = v0 + 1;
			}
			for (vi = v0; vi < v1; vi++) {
				bool big;
				int err;

				/* counts proportional to p: on a sample (all of them in full mode) */
				if (quadp)
					big = p <= 48 || (p <= 160 && p % 7 == 0) || p == 257 ||
					      p == 1023;
				else
					big = p <= 64 || (p <= 256 && p % 3 == 0) ||
					      (sampled_p(p) && p % 2);
				big = big || full;

				memset(&t, 0, sizeof(t));
				t.algo = algo;
				t.coll = (enum kcoll_collective)c;
				t.p = p;
				trng = 0x1234567ULL * (p + 1) + 77 * c + vi + algo * 1000003ULL;
				set_variant(&t, vi, big);
				if (t.in_place && !kcoll_sched_supports(algo, t.coll, true))
					t.in_place = false;
				if (!is_rooted(t.coll))
					t.root = 0;
				if (is_vcoll(t.coll) && make_v(&t, !big && p > 32)) {
					free_v(&t);
					snprintf(res->msg, sizeof(res->msg), "oom");
					return -1;
				}
				err = run_one(&t, &res->st);
				free_v(&t);
				if (err) {
					snprintf(res->msg, sizeof(res->msg),
						 "%s %s p=%u root=%u count=%llu es=%u in_place=%d "
						 "chunk=%llu variant=%u: %s", kcoll_algo_name(algo),
						 kcoll_coll_name(t.coll), p, t.root,
						 (unsigned long long)t.count, dk_es[t.dk], t.in_place,
						 (unsigned long long)t.chunk, vi, t.msg);
					return -1;
				}
			}
		}
	}
	return 0;
}


FIXTURE(sched) {
	int unused;
};

FIXTURE_SETUP(sched)
{
}

FIXTURE_TEARDOWN(sched)
{
}

/* generous: KCOLL_SCHED_FULL=1 runs minutes; the default sweep seconds */
#define SWEEP_TEST(name, algo)							\
TEST_F_TIMEOUT(sched, sweep_##name, 3600)					\
{										\
	struct sweep_res res;							\
	double t0 = now_s();							\
	int err;								\
										\
	memset(&res, 0, sizeof(res));						\
	err = sweep(algo, &res);						\
	if (err)								\
		TH_LOG("%s", res.msg);						\
	ASSERT_EQ(0, err);							\
	ksft_print_msg("%s: %llu runs, %llu rank schedules, %llu steps, %llu messages, " \
		       "%.1f s (quadratic ones every nranks to %u)\n", #name,	\
		       (unsigned long long)res.st.runs,				\
		       (unsigned long long)res.st.ranks,			\
		       (unsigned long long)res.st.steps,			\
		       (unsigned long long)res.st.messages, now_s() - t0,	\
		       res.pmax_quad);						\
	fflush(stdout);								\
}

SWEEP_TEST(ring, KCOLL_ALG_RING)
SWEEP_TEST(recdbl, KCOLL_ALG_RECDBL)
SWEEP_TEST(rabenseifner, KCOLL_ALG_RABENSEIFNER)
SWEEP_TEST(binomial, KCOLL_ALG_BINOMIAL)
SWEEP_TEST(dbtree, KCOLL_ALG_DBTREE)
SWEEP_TEST(chain, KCOLL_ALG_CHAIN)
SWEEP_TEST(pairwise, KCOLL_ALG_PAIRWISE)
SWEEP_TEST(bruck, KCOLL_ALG_BRUCK)


/* ---- API --------------------------------------------------------------------------------- */

TEST(support_matrix)
{
	static const struct {
		enum kcoll_algorithm a;
		u32 colls;
	} m[] = {
#define B(c) (1U << KCOLL_##c)
		{ KCOLL_ALG_RING, B(ALLREDUCE) | B(ALLGATHER) | B(REDUCE_SCATTER) |
				   B(ALLGATHERV) | B(REDUCE_SCATTERV) },
		{ KCOLL_ALG_RECDBL, B(ALLREDUCE) | B(ALLGATHER) | B(BARRIER) },
		{ KCOLL_ALG_RABENSEIFNER, B(ALLREDUCE) | B(REDUCE_SCATTER) },
		{ KCOLL_ALG_BINOMIAL, B(BROADCAST) | B(REDUCE) | B(SCATTER) | B(GATHER) |
				       B(ALLREDUCE) | B(BARRIER) },
		{ KCOLL_ALG_DBTREE, B(ALLREDUCE) },
		{ KCOLL_ALG_CHAIN, B(BROADCAST) | B(REDUCE) },
		{ KCOLL_ALG_PAIRWISE, B(ALLTOALL) | B(ALLTOALLV) },
		{ KCOLL_ALG_BRUCK, B(ALLTOALL) | B(ALLGATHER) | B(BARRIER) },
		/* local_size 0 here: one rank per node (test_sched_hier covers the shapes) */
		{ KCOLL_ALG_HIER, B(ALLREDUCE) | B(BROADCAST) | B(REDUCE) | B(ALLGATHER) },
#undef B
	};
	struct kcoll_coll_args a;
	struct kcoll_sched_info info;
	u32 covered = 0;
	unsigned int i;
	int c;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		covered |= m[i].colls;
		for (c = 0; c < KCOLL_NUM_COLLECTIVES; c++) {
			bool want = m[i].colls & (1U << c);

			EXPECT_EQ(want, kcoll_sched_supports(m[i].a, (enum kcoll_collective)c, false));
			EXPECT_EQ(want && c != KCOLL_BARRIER,
				  kcoll_sched_supports(m[i].a, (enum kcoll_collective)c, true));
			memset(&a, 0, sizeof(a));
			a.coll = (enum kcoll_collective)c;
			a.nranks = 4;
			a.rank = 1;
			a.count = 3;
			a.elem_size = 4;
			if (c == KCOLL_ALLGATHERV || c == KCOLL_REDUCE_SCATTERV ||
			    c == KCOLL_ALLTOALLV) {
				static const u64 cnt[4] = { 1, 2, 3, 4 }, dsp[4] = { 0, 1, 3, 6 };

				a.counts = a.send_counts = cnt;
				a.displs = a.send_displs = dsp;
			}
			EXPECT_EQ(want ? 0 : -EINVAL, kcoll_sched_build(&a, m[i].a, 0, NULL, 0,
									 &info));
		}
	}
	/* every collective has at least one algorithm */
	EXPECT_EQ((1U << KCOLL_NUM_COLLECTIVES) - 1, covered);
	EXPECT_FALSE(kcoll_sched_supports(KCOLL_ALG_AUTO, KCOLL_ALLREDUCE, false));
	EXPECT_FALSE(kcoll_sched_supports(KCOLL_NUM_ALGORITHMS, KCOLL_ALLREDUCE, false));
	EXPECT_STREQ("reduce_scatterv", kcoll_coll_name(KCOLL_REDUCE_SCATTERV));
	EXPECT_STREQ("rabenseifner", kcoll_algo_name(KCOLL_ALG_RABENSEIFNER));
	EXPECT_EQ(NULL, kcoll_coll_name(KCOLL_NUM_COLLECTIVES));
}

TEST(bad_arguments)
{
	struct kcoll_coll_args a;
	struct kcoll_sched_info info;
	struct kcoll_step st[4];
	u64 sb, rb;

	memset(&a, 0, sizeof(a));
	a.coll = KCOLL_ALLREDUCE;
	a.nranks = 4;
	a.rank = 0;
	a.count = 10;
	a.elem_size = 4;
	ASSERT_EQ(0, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	EXPECT_EQ(-ENOSPC, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, st, 4, &info));
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_AUTO, 0, NULL, 0, &info));
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, NULL));
	a.rank = 4;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.rank = 0;
	a.elem_size = 0;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.elem_size = 4;
	a.nranks = 0;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.nranks = 4;
	a.count = 1ULL << 62;
	EXPECT_EQ(-EOVERFLOW, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.count = 10;
	a.coll = KCOLL_BROADCAST;
	a.root = 4;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_BINOMIAL, 0, NULL, 0, &info));
	a.coll = KCOLL_ALLGATHERV;	/* arrays missing */
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.coll = KCOLL_BARRIER;
	a.in_place = true;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_BRUCK, 0, NULL, 0, &info));
	/* buffer sizes per the conventions */
	a.in_place = false;
	a.coll = KCOLL_ALLGATHER;
	a.rank = 2;
	ASSERT_EQ(0, kcoll_sched_buf_bytes(&a, &sb, &rb));
	EXPECT_EQ(40, sb);
	EXPECT_EQ(160, rb);
	a.in_place = true;
	a.coll = KCOLL_REDUCE_SCATTER;
	ASSERT_EQ(0, kcoll_sched_buf_bytes(&a, &sb, &rb));
	EXPECT_EQ(0, sb);
	EXPECT_EQ(160, rb);
	a.coll = KCOLL_GATHER;
	a.root = 1;
	a.in_place = false;
	ASSERT_EQ(0, kcoll_sched_buf_bytes(&a, &sb, &rb));
	EXPECT_EQ(40, sb);
	EXPECT_EQ(0, rb);
}

/*
 * The size limit kcoll_allreduce(3) and kcoll(4) document for EOVERFLOW, at its exact
 * boundary: count x element size x nranks may reach 2^56 bytes, not exceed it (every
 * collective with a count, rooted or not); for the v-collectives, the largest displs[j] +
 * counts[j] over the non-empty blocks (and, for ALLTOALLV not in place, over the send side)
 * times the element size, and a sum that wraps 64 bits.
 */
TEST(size_limit_eoverflow)
{
	static const enum kcoll_collective colls[] = {
		KCOLL_BROADCAST, KCOLL_SCATTER, KCOLL_GATHER, KCOLL_REDUCE,
		KCOLL_ALLREDUCE, KCOLL_ALLGATHER, KCOLL_REDUCE_SCATTER,
		KCOLL_ALLTOALL,
	};
	static const u32 sizes[] = { 1, 2, 4, 8 }, ranks[] = { 1, 3, 4, 4096 };
	const u64 lim = (u64)1 << 56;
	u64 counts[3] = { 0 }, displs[3] = { 0 }, sc[3] = { 0 }, sd[3] = { 0 };
	struct kcoll_coll_args a;
	u32 c, e, n;

	for (c = 0; c < sizeof(colls) / sizeof(colls[0]); c++)
		for (e = 0; e < 4; e++)
			for (n = 0; n < 4; n++) {
				memset(&a, 0, sizeof(a));
				a.coll = colls[c];
				a.nranks = ranks[n];
				a.elem_size = sizes[e];
				a.count = lim / ((u64)sizes[e] * ranks[n]);
				EXPECT_EQ(0, kcoll_sched_check_args(&a));
				a.count++;
				EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a)) {
					TH_LOG("%s es %u p %u", kcoll_coll_name(a.coll), sizes[e],
					       ranks[n]);
				}
			}
	/* the 2^62 of the report */
	a.coll = KCOLL_ALLREDUCE;
	a.nranks = 3;
	a.elem_size = 4;
	a.count = (u64)1 << 62;
	EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a));

	memset(&a, 0, sizeof(a));
	a.nranks = 3;
	a.elem_size = 4;
	a.counts = counts;
	a.displs = displs;
	a.send_counts = sc;
	a.send_displs = sd;
	for (c = 0; c < 3; c++) {
		a.coll = c == 0 ? KCOLL_ALLGATHERV : c == 1 ? KCOLL_REDUCE_SCATTERV :
			 KCOLL_ALLTOALLV;
		memset(counts, 0, sizeof(counts));
		memset(displs, 0, sizeof(displs));
		counts[1] = 1;
		displs[1] = lim / 4 - 1;	/* ends exactly at 2^56 bytes */
		EXPECT_EQ(0, kcoll_sched_check_args(&a));
		displs[1]++;
		EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a));
		counts[1] = 0;			/* an empty block is not looked at */
		displs[1] = ~0ULL;
		EXPECT_EQ(0, kcoll_sched_check_args(&a));
		counts[2] = 2;			/* displs + counts wraps */
		displs[2] = ~0ULL;
		EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a));
	}
	/* ALLTOALLV: the send side too, unless in place */
	memset(counts, 0, sizeof(counts));
	memset(displs, 0, sizeof(displs));
	sc[0] = 1;
	sd[0] = lim / 4;
	EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a));
	a.in_place = true;
	EXPECT_EQ(0, kcoll_sched_check_args(&a));
}

TEST(selection)
{
	struct kcoll_sched_tuning t;
	int c;
	u32 p;

	kcoll_sched_tuning_default(&t);
	/* always a supporting algorithm, and a pure function of the inputs */
	for (c = 0; c < KCOLL_NUM_COLLECTIVES; c++)
		for (p = 1; p <= 1024; p = p * 3 + 1) {
			u64 bytes;

			for (bytes = 0; bytes < (1ULL << 30); bytes = bytes * 8 + 1) {
				enum kcoll_algorithm a = kcoll_sched_select((enum kcoll_collective)c, p, bytes,
								       &t);

				ASSERT_TRUE(kcoll_sched_supports(a, (enum kcoll_collective)c, false));
				ASSERT_EQ(a, kcoll_sched_select((enum kcoll_collective)c, p, bytes, NULL));
			}
		}
	/* the rules, at given thresholds (the defaults come from kcoll-sim's model and may
	 * move: test_sched_thresholds checks them)
	 */
	t.small_bytes = 16 << 10;
	t.medium_bytes = 1 << 20;
	t.tree_ranks = 16;
	EXPECT_EQ(KCOLL_ALG_RECDBL, kcoll_sched_select(KCOLL_ALLREDUCE, 4, 8, &t));
	EXPECT_EQ(KCOLL_ALG_RING, kcoll_sched_select(KCOLL_ALLREDUCE, 3, 16 << 20, &t));
	EXPECT_EQ(KCOLL_ALG_DBTREE, kcoll_sched_select(KCOLL_ALLREDUCE, 64, 16 << 20, &t));
	EXPECT_EQ(KCOLL_ALG_CHAIN, kcoll_sched_select(KCOLL_BROADCAST, 4, 16 << 20, &t));
	EXPECT_EQ(KCOLL_ALG_BRUCK, kcoll_sched_select(KCOLL_BARRIER, 3, 0, &t));
	/* configuration forces an algorithm; one that cannot do the collective is ignored */
	t.algo[KCOLL_ALLREDUCE] = KCOLL_ALG_RABENSEIFNER;
	t.algo[KCOLL_BROADCAST] = KCOLL_ALG_PAIRWISE;
	EXPECT_EQ(KCOLL_ALG_RABENSEIFNER, kcoll_sched_select(KCOLL_ALLREDUCE, 3, 8, &t));
	EXPECT_EQ(KCOLL_ALG_CHAIN, kcoll_sched_select(KCOLL_BROADCAST, 4, 16 << 20, &t));
	/* per call: a request wins, or is refused */
	EXPECT_EQ(KCOLL_ALG_RING, kcoll_sched_choose(KCOLL_ALLREDUCE, 3, 8, false,
						      KCOLL_ALG_RING, &t));
	EXPECT_EQ(-EINVAL, kcoll_sched_choose(KCOLL_ALLREDUCE, 3, 8, false,
					      KCOLL_ALG_BRUCK, &t));
	EXPECT_EQ(KCOLL_ALG_RABENSEIFNER, kcoll_sched_choose(KCOLL_ALLREDUCE, 3, 8, true,
							      KCOLL_ALG_AUTO, &t));
}

/* the fingerprint of the first call below, as the module computed it before local_size */
#define FP_FLAT_RING_4096	0x5c40cae7U

TEST(fingerprint)
{
	static const u64 cnt[3] = { 1, 2, 3 }, dsp[3] = { 0, 1, 3 }, cnt2[3] = { 1, 2, 4 };
	struct kcoll_coll_args a;
	u32 f0, f;
	u32 r;

	memset(&a, 0, sizeof(a));
	a.coll = KCOLL_ALLREDUCE;
	a.nranks = 3;
	a.count = 100;
	a.elem_size = 4;
	f0 = kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096);
	for (r = 0; r < 3; r++) {
		a.rank = r;
		EXPECT_EQ(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096));
	}
	EXPECT_NE(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 8192));
	EXPECT_NE(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RECDBL, 4096));
	/* locality: flat calls (0 or 1) keep the value of before locality existed */
	EXPECT_EQ(FP_FLAT_RING_4096, f0);
	a.local_size = 1;
	EXPECT_EQ(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096));
	a.local_size = 3;
	EXPECT_NE(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096));
	a.local_size = 0;
	a.count = 101;
	EXPECT_NE(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096));
	a.coll = KCOLL_ALLGATHERV;
	a.counts = cnt;
	a.displs = dsp;
	f = kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 0);
	a.counts = cnt2;
	EXPECT_NE(f, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 0));
}

/*
 * ALLTOALLV: each rank's counts are its own, so a step's tag carries the step's size: two
 * ranks whose counts for each other differ tag that step differently (and are refused);
 * other collectives' steps carry the operation's tag unchanged.
 */
TEST(step_tag_alltoallv)
{
	struct kcoll_step s8 = { .op = KCOLL_STEP_SEND, .peer = 1, .bytes = 8 };
	struct kcoll_step r8 = { .op = KCOLL_STEP_RECV, .peer = 0, .bytes = 8 };
	struct kcoll_step r16 = { .op = KCOLL_STEP_RECV, .peer = 0, .bytes = 16 };
	struct kcoll_coll_args a;
	u64 tag = (5ULL << 32) | 0x1234abcd;

	memset(&a, 0, sizeof(a));
	a.coll = KCOLL_ALLTOALLV;
	a.nranks = 2;
	EXPECT_EQ(kcoll_sched_step_tag(&a, tag, &s8), kcoll_sched_step_tag(&a, tag, &r8));
	EXPECT_NE(kcoll_sched_step_tag(&a, tag, &s8), kcoll_sched_step_tag(&a, tag, &r16));
	/* the operation's sequence number stays in the upper half */
	EXPECT_EQ(5ULL, kcoll_sched_step_tag(&a, tag, &r16) >> 32);
	a.coll = KCOLL_ALLTOALL;
	EXPECT_EQ(tag, kcoll_sched_step_tag(&a, tag, &r16));
}

/* Both trees span every rank, parent and child links agree, ranks alternate roles. */
TEST(dbtree_shape)
{
	static s32 par[2][PMAX];
	u32 p, r;
	int t;

	for (p = 1; p <= PMAX; p++) {
		int both = 0, none = 0;

		for (r = 0; r < p; r++) {
			int inner = 0;

			for (t = 0; t < 2; t++) {
				s32 ch[2], cp, cc[2];
				long l, rr;
				u32 pos, j;

				kcoll_sched_dbtree(p, r, t, &par[t][r], ch);
				/* against the test's own derivation */
				pos = t == 0 ? r : (p & 1 ? (r + p - 1) % p : p - 1 - r);
				t_dbt_children(p, pos, &l, &rr);
				ASSERT_EQ(l < 0 ? -1 : (s32)t_dbt_rank(p, t, (u32)l), ch[0]);
				ASSERT_EQ(rr < 0 ? -1 : (s32)t_dbt_rank(p, t, (u32)rr), ch[1]);
				for (j = 0; j < 2; j++) {
					if (ch[j] < 0)
						continue;
					kcoll_sched_dbtree(p, (u32)ch[j], t, &cp, cc);
					ASSERT_EQ((s32)r, cp);
				}
				inner += ch[0] >= 0 || ch[1] >= 0;
			}
			both += inner == 2;
			none += inner == 0;
		}
		for (t = 0; t < 2; t++) {
			u32 roots = 0;

			for (r = 0; r < p; r++) {
				u32 x = r, d = 0;

				roots += par[t][r] < 0;
				while (par[t][x] >= 0 && d <= 2 * 11) {
					x = (u32)par[t][x];
					d++;
				}
				ASSERT_GE(22, d);	/* no cycle, depth O(log p) */
			}
			ASSERT_EQ(1, roots);
		}
		ASSERT_GE(1, both);
		ASSERT_GE(2, none);
	}
}

/* ---- the simulator catches broken schedules ---------------------------------------------- */

static int mut_kind;

static void del_step(struct kcoll_step *st, struct kcoll_sched_info *info, u32 i)
{
	memmove(&st[i], &st[i + 1], (info->nsteps - i - 1) * sizeof(*st));
	info->nsteps--;
}

static void mutate(void *ctx, u32 rank, struct kcoll_step *st, struct kcoll_sched_info *info)
{
	u32 i;

	switch (mut_kind) {
	case 0:	/* rank 1 drops its first send */
		if (rank != 1)
			return;
		for (i = 0; i < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_SEND) {
				del_step(st, info, i);
				return;
			}
		return;
	case 1:	/* rank 0 sends one element too few */
		if (rank != 0)
			return;
		for (i = 0; i < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_SEND) {
				st[i].bytes -= 8;
				return;
			}
		return;
	case 2:	/* rank 2 receives where it is sending from, in the same stage */
		if (rank != 2)
			return;
		for (i = 0; i + 1 < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_SEND && st[i + 1].op == KCOLL_STEP_RECV &&
			    st[i].stage == st[i + 1].stage && st[i].src_buf == KCOLL_BUF_RECV) {
				st[i + 1].dst_buf = KCOLL_BUF_RECV;
				st[i + 1].dst_off = st[i].src_off;
				return;
			}
		return;
	case 3:	/* rank 0 writes past its receive buffer */
		if (rank != 0)
			return;
		for (i = 0; i < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_RECV && st[i].dst_buf == KCOLL_BUF_RECV) {
				st[i].dst_off += 1 << 20;
				return;
			}
		return;
	case 4:	/* everyone receives before sending: a deadlock (2 ranks) */
		for (i = 0; i + 1 < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_SEND && st[i + 1].op == KCOLL_STEP_RECV &&
			    st[i].stage == st[i + 1].stage) {
				struct kcoll_step s0 = st[i];
				u32 j;

				st[i] = st[i + 1];
				st[i + 1] = s0;
				for (j = i + 1; j < info->nsteps; j++)
					st[j].stage++;
				info->nstages++;
				return;
			}
		return;
	case 5:	/* rank 1 forgets to reduce one incoming piece: receives over it instead */
		if (rank != 1)
			return;
		for (i = 0; i < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_RECV_REDUCE) {
				st[i].op = KCOLL_STEP_RECV;
				st[i].dst_buf = KCOLL_BUF_SCRATCH;
				st[i].dst_off = st[i].tmp_off;
				return;
			}
		return;
	default:	/* barrier: every rank skips its last round */
		if (info->nsteps >= 2) {
			info->nsteps -= 2;
			info->nstages = info->nsteps ? st[info->nsteps - 1].stage + 1 : 0;
		}
		return;
	}
}

static int run_mutated(int kind, enum kcoll_algorithm algo, enum kcoll_collective coll, u32 p,
		       char *msg, size_t len)
{
	struct sweep_stats st;
	struct trun t;
	int err;

	memset(&t, 0, sizeof(t));
	memset(&st, 0, sizeof(st));
	t.algo = algo;
	t.coll = coll;
	t.p = p;
	t.count = 4 * p;
	t.dk = DK_U64_SUM;
	if (kind >= 0) {
		mut_kind = kind;
		t.mutate = mutate;
	}
	err = run_one(&t, &st);
	snprintf(msg, len, "%s", t.msg);
	return err;
}

TEST(simulator_catches_bugs)
{
	char msg[700];

	ASSERT_EQ(0, run_mutated(-1, KCOLL_ALG_RING, KCOLL_ALLREDUCE, 4, msg, sizeof(msg)));
	ASSERT_EQ(-1, run_mutated(0, KCOLL_ALG_RING, KCOLL_ALLREDUCE, 4, msg, sizeof(msg)));
	TH_LOG("dropped send: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "UNMATCHED"));
	ASSERT_EQ(-1, run_mutated(1, KCOLL_ALG_RING, KCOLL_ALLREDUCE, 4, msg, sizeof(msg)));
	TH_LOG("short send: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "matched a"));
	ASSERT_EQ(-1, run_mutated(2, KCOLL_ALG_BRUCK, KCOLL_ALLGATHER, 5, msg,
				  sizeof(msg)));
	TH_LOG("overlap: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "concurrently"));
	ASSERT_EQ(-1, run_mutated(3, KCOLL_ALG_RING, KCOLL_ALLGATHER, 3, msg, sizeof(msg)));
	TH_LOG("out of bounds: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "outside"));
	ASSERT_EQ(-1, run_mutated(4, KCOLL_ALG_PAIRWISE, KCOLL_ALLTOALL, 2, msg,
				  sizeof(msg)));
	TH_LOG("deadlock: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "deadlock"));
	ASSERT_EQ(-1, run_mutated(5, KCOLL_ALG_RING, KCOLL_ALLREDUCE, 4, msg, sizeof(msg)));
	TH_LOG("missed reduction: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "receive buffer byte"));
	ASSERT_EQ(-1, run_mutated(6, KCOLL_ALG_BRUCK, KCOLL_BARRIER, 5, msg, sizeof(msg)));
	TH_LOG("short barrier: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "without hearing"));
}

/* The fp32 check has teeth: another order gives other bits; engines agree. */
TEST(float_order_matters)
{
	u32 p = 8, e, differ = 0;
	struct sweep_stats st;
	struct trun t;

	for (e = 0; e < 64; e++) {
		float naive = 0;
		u32 j;

		for (j = 0; j < p; j++) {
			fx[j] = rnd_float();
			naive += fx[j];
		}
		if (f32b_eq(naive, ord_ring(p, e % p)) == 0 ||
		    !f32b_eq(ord_recdbl(p), ord_rabenseifner(p)))
			differ++;
	}
	EXPECT_LT(10, differ);
	/* the same run with the AVX2 engine: identical (bit-exact check against the order) */
	memset(&t, 0, sizeof(t));
	memset(&st, 0, sizeof(st));
	t.algo = KCOLL_ALG_RING;
	t.coll = KCOLL_ALLREDUCE;
	t.p = 7;
	t.count = 7 * 40 + 3;
	t.dk = DK_F32_SUM;
	t.chunk = 64;
#ifdef KCOLL_HAVE_REDUCE_AVX2
	if (__builtin_cpu_supports("avx2"))
		t.engine = &kcoll_reduce_engine_avx2;
#endif
	EXPECT_EQ(0, run_one(&t, &st));
	if (t.msg[0])
		TH_LOG("%s", t.msg);
}

/*
 * The worked example of kcoll_allreduce(3), NOTES "Reduction order and rounding": three ranks
 * with fp16 inputs 2048, 1, 1, all-reduce AVG, run through the schedules as the module runs
 * them (reduction steps of the engine, then kcoll_reduce_finalize() on every rank's result).
 * The page states the bits; the test checks both the bits and that the page still says so.
 */
static const struct {
	enum kcoll_algorithm algo;
	u16 want;
	const char *text;	/* as the man page source has it */
} avg_example[] = {
	{ KCOLL_ALG_RING, 0x6157, "683.5 (0x6157)" },
	{ KCOLL_ALG_DBTREE, 0x6157, "683.5 (0x6157)" },
	{ KCOLL_ALG_RECDBL, 0x6155, "682.5 (0x6155)" },
	{ KCOLL_ALG_RABENSEIFNER, 0x6155, "682.5 (0x6155)" },
	{ KCOLL_ALG_BINOMIAL, 0x6155, "682.5 (0x6155)" },
};

TEST(documented_avg_example)
{
	static const u16 in[3] = { 0x6800, 0x3c00, 0x3c00 };	/* 2048, 1, 1 */
	char page[65536];
	size_t i, n;
	FILE *f;
	u32 r;

	for (i = 0; i < sizeof(avg_example) / sizeof(avg_example[0]); i++) {
		struct kcoll_sim_cfg cfg;
		struct kcoll_sim s;

		memset(&cfg, 0, sizeof(cfg));
		cfg.args.coll = KCOLL_ALLREDUCE;
		cfg.args.nranks = 3;
		cfg.args.count = 1;
		cfg.args.elem_size = 2;
		cfg.algo = avg_example[i].algo;
		cfg.dtype = KCOLL_FP16;
		cfg.op = KCOLL_AVG;
		ASSERT_EQ(0, kcoll_sim_setup(&s, &cfg)) {
			TH_LOG("%s", s.err);
		}
		for (r = 0; r < 3; r++)
			memcpy(s.rk[r].send, &in[r], 2);
		ASSERT_EQ(0, kcoll_sim_run(&s)) {
			TH_LOG("%s", s.err);
		}
		for (r = 0; r < 3; r++) {
			u16 got;

			kcoll_reduce_finalize(s.rk[r].recv, 1, KCOLL_FP16, KCOLL_AVG, 3);
			memcpy(&got, s.rk[r].recv, 2);
			EXPECT_EQ(avg_example[i].want, got) {
				TH_LOG("%s rank %u", kcoll_algo_name(avg_example[i].algo), r);
			}
		}
		kcoll_sim_free(&s);
	}
	f = fopen(KCOLL_SRC_TOP "/man/man3/kcoll_allreduce.3", "r");
	ASSERT_NE(NULL, f);
	n = fread(page, 1, sizeof(page) - 1, f);
	fclose(f);
	page[n] = 0;
	for (i = 0; i < sizeof(avg_example) / sizeof(avg_example[0]); i++) {
		EXPECT_NE(NULL, strstr(page, avg_example[i].text)) {
			TH_LOG("kcoll_allreduce.3 no longer says %s", avg_example[i].text);
		}
	}
	EXPECT_NE(NULL, strstr(page, "2048, 1 and 1"));
}

TEST_HARNESS_MAIN
