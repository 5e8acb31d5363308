// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run and the sweep of sched_sweep.h, with core/'s schedules, simulator and reduction
 * engines compiled into this one object for the test_sched_* programs.  The references
 * (sched_ref.h) reduce fp32 in the order the header documents for each algorithm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>

#include "kselftest.h"

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

#include "sched_sweep.h"

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

static const u32 dk_es[DK_COUNT] = { 8, 4, 1 };
static const enum kcoll_datatype dk_dtype[DK_COUNT] = {
	KCOLL_UINT64, KCOLL_FP32, KCOLL_UINT8
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
inline void cpy(u8 *d, const u8 *s, u64 n)
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

int run_one(struct trun *t, struct sweep_stats *st)
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

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int sweep(enum kcoll_algorithm algo, struct sweep_res *res)
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
