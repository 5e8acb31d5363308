// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll-sim --derive-thresholds: which algorithm the module should pick, per collective,
 * rank count and size, derived from the model instead of set by hand.
 *
 * The grid: every collective the selection has a choice for (broadcast, reduce, all-reduce,
 * all-gather, reduce-scatter, all-to-all) with every algorithm the module has for it, fp32,
 * payloads (kcoll_sched_select()'s bytes: the vector, or one rank's block) from 256 B to
 * 16 MiB (or 16 MiB / ranks for per-rank blocks) by 2, one switch, on
 *   - one rank a node: 2, 3, 4, 6, 8, 12, ..., 192, 256 ranks (powers of two and 3 * 2^k);
 *   - several ranks a node, the schedules told so (hierarchical algorithms allowed): 2 a
 *     node for 4 to 12 ranks (two VMs of two ranks are the smallest such communicator), 8 a
 *     node for 16 to 128.
 * At each rank count the fastest algorithm per size, within DERIVE_TOL (5 %) of the best, is
 * compressed into the fewest segments "algorithm up to B bytes" (then the least
 * sum of log(time / best)); a segment ends where the two algorithms' times cross between
 * the last grid size it was chosen for and the next, log-log interpolated (at the eager
 * limit if that lies between them).  A row holds
 * from the geometric mean of its rank count and the previous one of its class (powers of
 * two, or not; one a node, or several) on; rows whose segments equal the previous row of their
 * class are merged into it.
 * The output is core/kcoll_sched_table.h (Documentation/scale.rst, "Where the module's
 * thresholds come from").
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "derive.h"
#include "../kcoll-perf/perf_core.h"

#define DERIVE_TOL		0.05	/* an algorithm this close to the fastest is as good */
#define DERIVE_MAX_SEGS		6	/* KCOLL_SCHED_SEGS in core/kcoll_sched.h */
#define DERIVE_MAX_ALGOS	5
#define DERIVE_MIN_SHIFT	8	/* 256 B */
#define DERIVE_MAX_SHIFT	24	/* 16 MiB */
#define DERIVE_NSIZES		(DERIVE_MAX_SHIFT - DERIVE_MIN_SHIFT + 1)
#define DERIVE_LOCAL		8	/* ranks a node of the "local" rows from 16 ranks */
#define DERIVE_LOCAL_SMALL	2	/* and below */
/* --check-table: the AUTO pick against the fastest, on the grid and between its points */
#define DERIVE_CHECK_ON		(1 + DERIVE_TOL)
#define DERIVE_CHECK_BETWEEN	1.25
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

struct dcoll {
	enum kcoll_collective coll;
	bool per_rank;			/* the payload is one rank's block */
	enum kcoll_algorithm algos[DERIVE_MAX_ALGOS];	/* 0-terminated; HIER: local only */
};

static const struct dcoll dcolls[] = {
	{ KCOLL_BROADCAST, false, { KCOLL_ALG_BINOMIAL, KCOLL_ALG_CHAIN, KCOLL_ALG_HIER } },
	{ KCOLL_REDUCE, false, { KCOLL_ALG_BINOMIAL, KCOLL_ALG_CHAIN, KCOLL_ALG_HIER } },
	{ KCOLL_ALLREDUCE, false, { KCOLL_ALG_RING, KCOLL_ALG_RECDBL, KCOLL_ALG_RABENSEIFNER,
				    KCOLL_ALG_DBTREE, KCOLL_ALG_HIER } },
	{ KCOLL_ALLGATHER, true, { KCOLL_ALG_RING, KCOLL_ALG_RECDBL, KCOLL_ALG_BRUCK,
				   KCOLL_ALG_HIER } },
	{ KCOLL_REDUCE_SCATTER, true, { KCOLL_ALG_RING, KCOLL_ALG_RABENSEIFNER } },
	{ KCOLL_ALLTOALL, true, { KCOLL_ALG_PAIRWISE, KCOLL_ALG_BRUCK } },
};

static const uint32_t ranks_flat[] = { 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
				       256 };
static const uint32_t ranks_local[] = { 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128 };

/* ranks a node at n ranks: 1 for the flat rows */
static uint32_t ranks_a_node(bool local, uint32_t n)
{
	return !local ? 1 : n < 2 * DERIVE_LOCAL ? DERIVE_LOCAL_SMALL : DERIVE_LOCAL;
}

/* the threshold rules the table replaces, for the comparison (kcollctl config-set values) */
#define RULES_SMALL	KCOLL_SCHED_RULES_SMALL_BYTES
#define RULES_MEDIUM	(8ULL << 20)
#define RULES_TREE	384

struct seg {
	enum kcoll_algorithm algo;
	uint64_t max_bytes;		/* UINT64_MAX: any size */
};

struct row {
	uint32_t from;			/* ranks */
	bool pow2;
	uint32_t nsegs;
	struct seg seg[DERIVE_MAX_SEGS];
};

/* what one (collective, class, ranks) point of the grid measured */
struct point {
	uint64_t payload[DERIVE_NSIZES];
	double t[DERIVE_NSIZES][DERIVE_MAX_ALGOS];	/* s; <= 0: the algorithm cannot */
	double best[DERIVE_NSIZES];
};

/* comparison with the rules, per collective and class */
struct stats {
	uint32_t points, worse;		/* worse: rules' choice more than 5 % behind */
	double log_rules, log_table, worst;
	uint64_t worst_bytes;
	uint32_t worst_ranks;
};

int derive_preset(struct simnet_cfg *c, const char *name)
{
	if (!strcmp(name, "datacentre")) {
		struct simnet_cfg d;

		simnet_cfg_default(&d);
		c->fab.link_bw = d.fab.link_bw;
		c->fab.mem_bw = d.fab.mem_bw;
		c->red_bw = d.red_bw;
		return simnet_transport(c, "rdma");
	}
	if (!strcmp(name, "rig")) {
		/* bench/calibrate.py on bench/reports/2026-11-30-idle, 4 VMs (sim.rst) */
		simnet_transport(c, "rdma");
		c->fab.link_bw = 0.0112e9;
		c->fab.lat = 2027e-6;
		c->overhead = 480e-6;
		c->red_bw = 0.37e9;
		return 0;
	}
	return -1;
}

static bool is_pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

/* half: the sizes between the grid's, sqrt(2) times each (derive_check()) */
static int run_point(const struct simnet_cfg *base, const struct dcoll *d, uint32_t n,
		     uint32_t local, bool half, struct point *pt)
{
	uint32_t i, k;

	for (i = 0; i < DERIVE_NSIZES; i++) {
		uint64_t size = (uint64_t)ldexp(half ? M_SQRT2 : 1.0, DERIVE_MIN_SHIFT + (int)i);
		uint64_t count;

		count = (d->per_rank ? size / n : size) / 4;
		if (!count)
			count = 1;
		pt->payload[i] = count * 4;
		pt->best[i] = INFINITY;
		if (half && i == DERIVE_NSIZES - 1) {
			/* beyond the grid's largest size: not a point between */
			for (k = 0; k < DERIVE_MAX_ALGOS; k++)
				pt->t[i][k] = -1;
			continue;
		}
		for (k = 0; k < DERIVE_MAX_ALGOS; k++) {
			struct simnet_cfg c = *base;
			struct simnet_result res;

			pt->t[i][k] = -1;
			if (!d->algos[k] || (d->algos[k] == KCOLL_ALG_HIER && local < 2))
				continue;
			c.fab.ranks_per_node = local > 1 ? local : 1;
			c.args.coll = d->coll;
			c.args.nranks = n;
			c.args.root = 0;
			c.args.count = count;
			c.args.elem_size = 4;
			c.args.local_size = local > 1 ? local : 0;
			c.algo = d->algos[k];
			memset(&res, 0, sizeof(res));
			if (simnet_run(&c, &res)) {
				fprintf(stderr, "kcoll-sim: %s %s %u ranks %llu B: %s\n",
					perf_coll_name(d->coll), perf_algo_name(d->algos[k]), n,
					(unsigned long long)pt->payload[i], res.err);
				return -1;
			}
			simnet_result_free(&res);
			pt->t[i][k] = res.time;
			if (res.time < pt->best[i])
				pt->best[i] = res.time;
		}
	}
	return 0;
}

/*
 * Where algorithm index a (chosen at size i - 1) and b (at i) cross between the two sizes:
 * log(time) taken as linear in log(size) for each; clamped to the interval, so the grid's
 * own sizes keep their choice.
 */
static uint64_t crossover(const struct dcoll *d, const struct point *pt, int i, int a, int b)
{
	double s0 = (double)pt->payload[i - 1], s1 = (double)pt->payload[i];
	double r0 = log(pt->t[i - 1][a] / pt->t[i - 1][b]);
	double r1 = log(pt->t[i][a] / pt->t[i][b]);
	double f = r0 >= 0 ? 0 : r1 <= 0 ? 1 : r0 / (r0 - r1);
	uint64_t x;

	(void)d;
	if (pt->t[i - 1][b] <= 0 || pt->t[i][a] <= 0)
		f = 0.5;	/* one cannot run at one of the sizes: the geometric mean */
	x = (uint64_t)exp(log(s0) + f * (log(s1) - log(s0)));
	if (x < pt->payload[i - 1])
		x = pt->payload[i - 1];
	if (x >= pt->payload[i])
		x = pt->payload[i] - 1;
	return x;
}

/*
 * The fewest segments that keep every size within DERIVE_TOL of its fastest, then the least
 * sum of log(time / fastest); ties to the earlier algorithm of the list.  A dynamic program
 * over (size, algorithm of its segment).
 */
static int segments(const struct dcoll *d, const struct point *pt, struct row *r)
{
	uint32_t nsegs[DERIVE_NSIZES][DERIVE_MAX_ALGOS];
	double cost[DERIVE_NSIZES][DERIVE_MAX_ALGOS];
	int prev[DERIVE_NSIZES][DERIVE_MAX_ALGOS];
	int i, k, j, bk = -1;

	for (i = 0; i < DERIVE_NSIZES; i++) {
		for (k = 0; k < DERIVE_MAX_ALGOS; k++) {
			double t = pt->t[i][k];

			nsegs[i][k] = UINT32_MAX;
			prev[i][k] = -1;
			if (t <= 0 || t > pt->best[i] * (1 + DERIVE_TOL))
				continue;
			for (j = 0; j < DERIVE_MAX_ALGOS; j++) {
				uint32_t s;
				double c;

				if (i == 0 && j != k)
					continue;
				if (i == 0) {
					s = 1;
					c = 0;
				} else if (nsegs[i - 1][j] == UINT32_MAX) {
					continue;
				} else {
					s = nsegs[i - 1][j] + (j != k);
					c = cost[i - 1][j];
				}
				if (s < nsegs[i][k] ||
				    (s == nsegs[i][k] && c < cost[i][k] - 1e-12)) {
					nsegs[i][k] = s;
					cost[i][k] = c;
					prev[i][k] = j;
				}
			}
			if (nsegs[i][k] != UINT32_MAX)
				cost[i][k] += log(t / pt->best[i]);
		}
	}
	i = DERIVE_NSIZES - 1;
	for (k = 0; k < DERIVE_MAX_ALGOS; k++)
		if (nsegs[i][k] != UINT32_MAX &&
		    (bk < 0 || nsegs[i][k] < nsegs[i][bk] ||
		     (nsegs[i][k] == nsegs[i][bk] && cost[i][k] < cost[i][bk] - 1e-12)))
			bk = k;
	if (bk < 0 || nsegs[i][bk] > DERIVE_MAX_SEGS) {
		fprintf(stderr, "kcoll-sim: %s, %u ranks: %u segments needed, at most %d\n",
			perf_coll_name(d->coll), r->from, bk < 0 ? 0 : nsegs[i][bk],
			DERIVE_MAX_SEGS);
		return -1;
	}
	r->nsegs = nsegs[i][bk];
	j = (int)r->nsegs - 1;
	r->seg[j].algo = d->algos[bk];
	r->seg[j].max_bytes = UINT64_MAX;
	for (; i > 0; i--) {
		int p = prev[i][bk];

		if (p != bk) {
			j--;
			r->seg[j].algo = d->algos[p];
			/*
			 * The crossover is between the two sizes, where the two algorithms'
			 * times, straight lines in log-log between the sizes, cross (not at
			 * the eager limit: the algorithms' messages are not the payload).
			 */
			r->seg[j].max_bytes = crossover(d, pt, i, p, bk);
		}
		bk = p;
	}
	return 0;
}

static const char *upper(const char *prefix, const char *name, char *buf, size_t len)
{
	size_t i, n = strlen(prefix);

	snprintf(buf, len, "%s%s", prefix, name);
	for (i = n; buf[i]; i++)
		buf[i] = (char)toupper((unsigned char)buf[i]);
	return buf;
}

static void print_row(FILE *out, const struct dcoll *d, int local, const struct row *r)
{
	char cn[40], an[40];
	uint32_t s;

	fprintf(out, "\t{ %s, %u, %d, %u, {\n", upper("KCOLL_", perf_coll_name(d->coll), cn,
						       sizeof(cn)), local, r->pow2, r->from);
	for (s = 0; s < r->nsegs; s++) {
		upper("KCOLL_ALG_", perf_algo_name(r->seg[s].algo), an, sizeof(an));
		if (r->seg[s].max_bytes == UINT64_MAX)
			fprintf(out, "\t\t{ %s, KCOLL_SCHED_ANY_BYTES },\n", an);
		else
			fprintf(out, "\t\t{ %s, %llu },\n", an,
				(unsigned long long)r->seg[s].max_bytes);
	}
	fprintf(out, "\t} },\n");
}

static bool same_segs(const struct row *a, const struct row *b)
{
	uint32_t s;

	if (a->nsegs != b->nsegs)
		return false;
	for (s = 0; s < a->nsegs; s++)
		if (a->seg[s].algo != b->seg[s].algo || a->seg[s].max_bytes != b->seg[s].max_bytes)
			return false;
	return true;
}

static enum kcoll_algorithm row_pick(const struct row *r, uint64_t bytes)
{
	uint32_t s;

	for (s = 0; s + 1 < r->nsegs && bytes > r->seg[s].max_bytes; s++)
		;
	return r->seg[s].algo;
}

static void compare(const struct dcoll *d, uint32_t n, uint32_t local, const struct point *pt,
		    const struct row *r, struct stats *st)
{
	struct kcoll_sched_tuning tun;
	uint32_t i, k;

	kcoll_sched_tuning_default(&tun);
	tun.small_bytes = RULES_SMALL;
	tun.medium_bytes = RULES_MEDIUM;
	tun.tree_ranks = RULES_TREE;
	tun.local_size = local > 1 ? local : 0;
	for (i = 0; i < DERIVE_NSIZES; i++) {
		enum kcoll_algorithm ra = kcoll_sched_select(d->coll, n, pt->payload[i], &tun);
		enum kcoll_algorithm ta = row_pick(r, pt->payload[i]);
		double tr = -1, tt = -1;

		for (k = 0; k < DERIVE_MAX_ALGOS; k++) {
			if (d->algos[k] == ra)
				tr = pt->t[i][k];
			if (d->algos[k] == ta)
				tt = pt->t[i][k];
		}
		if (tr <= 0 || tt <= 0)
			continue;	/* the rules pick outside the grid's algorithms */
		st->points++;
		st->log_rules += log(tr / pt->best[i]);
		st->log_table += log(tt / pt->best[i]);
		st->worse += tr > pt->best[i] * 1.05;
		if (tr / pt->best[i] > st->worst) {
			st->worst = tr / pt->best[i];
			st->worst_bytes = pt->payload[i];
			st->worst_ranks = n;
		}
	}
}

static void header(FILE *out, const struct simnet_cfg *c, const char *preset)
{
	fprintf(out,
"/* SPDX-License-Identifier: GPL-2.0-only */\n"
"/*\n"
" * core/kcoll_sched_table.h - GENERATED by kcoll-sim from its model; do not edit.  Regenerate:\n"
" *\n"
" *   make -C tools/kcoll-sim\n"
" *   tools/kcoll-sim/kcoll-sim --derive-thresholds %s > core/kcoll_sched_table.h\n"
" *\n"
" * (selftests/host/test_sched_table fails when this file is not what that prints.)\n"
" * Parameters: one switch, links %.4g GB/s, latency %.4g us, %.4g us a message, reductions\n"
" * %.4g GB/s, memory link %.4g GB/s, eager up to %llu B, chunk %llu B.  Grid, and how a\n"
" * row is read: Documentation/scale.rst, \"Where the module's thresholds come from\".\n"
" *\n"
" * A row: collective, local (1: the rows for a communicator of several ranks a node, more\n"
" * than one node, whose ranks a node are known), pow2 (1: rank counts that are powers of\n"
" * two), from (the row holds from this many ranks up to the next row of its kind), then the\n"
" * algorithm for payloads up to each size, in order.\n"
" */\n"
"#ifndef _KCOLL_SCHED_TABLE_H\n"
"#define _KCOLL_SCHED_TABLE_H\n"
"\n"
"static const struct kcoll_sched_row kcoll_sched_table[] = {\n",
		preset, c->fab.link_bw / 1e9, c->fab.lat * 1e6, c->overhead * 1e6,
		c->red_bw / 1e9, c->fab.mem_bw / 1e9, (unsigned long long)c->eager_max,
		(unsigned long long)c->chunk_bytes);
}

int derive_thresholds(const struct simnet_cfg *c, const char *preset, uint32_t max_ranks,
		      FILE *out, FILE *report)
{
	struct point *pt = malloc(sizeof(*pt));
	size_t ci, ni;
	int loc;

	if (!pt) {
		fprintf(stderr, "kcoll-sim: out of memory\n");
		return -1;
	}
	header(out, c, preset);
	if (report)
		fprintf(report, "%-15s %-5s %6s %6s %9s %9s  %s\n", "collective", "rows",
			"points", "worse", "rules", "table", "rules' worst (ratio, ranks, bytes)");
	for (ci = 0; ci < ARRAY_SIZE(dcolls); ci++) {
		const struct dcoll *d = &dcolls[ci];

		for (loc = 0; loc < 2; loc++) {
			const uint32_t *rk = loc ? ranks_local : ranks_flat;
			size_t nr = loc ? ARRAY_SIZE(ranks_local) : ARRAY_SIZE(ranks_flat);
			struct row last[2] = { { .nsegs = 0 }, { .nsegs = 0 } };
			struct stats st = { 0 };

			for (ni = 0; ni < nr && (!max_ranks || rk[ni] <= max_ranks); ni++) {
				uint32_t local = ranks_a_node(loc, rk[ni]);
				struct row r = { .from = rk[ni], .pow2 = is_pow2(rk[ni]) };
				size_t pi = ni;

				/* from the geometric mean with the class's previous grid point */
				while (pi > 0 && is_pow2(rk[--pi]) != r.pow2)
					;
				if (pi != ni && is_pow2(rk[pi]) == r.pow2)
					r.from = (uint32_t)floor(sqrt((double)rk[pi] * rk[ni])) + 1;

				if (run_point(c, d, rk[ni], local, false, pt) ||
				    segments(d, pt, &r)) {
					free(pt);
					return -1;
				}
				compare(d, rk[ni], local, pt, &r, &st);
				if (same_segs(&r, &last[r.pow2]))
					continue;
				last[r.pow2] = r;
				print_row(out, d, loc, &r);
			}
			if (report && st.points)
				fprintf(report, "%-15s %-5s %6u %6u %9.3f %9.3f  %.2f, %u, %llu\n",
					perf_coll_name(d->coll), loc ? "local" : "flat",
					st.points, st.worse, exp(st.log_rules / st.points),
					exp(st.log_table / st.points), st.worst, st.worst_ranks,
					(unsigned long long)st.worst_bytes);
		}
	}
	fprintf(out, "};\n\n#endif /* _KCOLL_SCHED_TABLE_H */\n");
	free(pt);
	return fflush(out) ? -1 : 0;
}

/* rank counts between the grid's (check only): flat, and several a node (ranks_a_node()) */
static const uint32_t ranks_flat_mid[] = { 5, 7, 10, 14, 20, 28, 40, 56, 80, 112, 160, 224 };
static const uint32_t ranks_local_mid[] = { 10, 40, 56, 80, 112 };

/* the worst pick/fastest so far of one kind of point, and where */
struct worst {
	double ratio;
	uint32_t ranks;
	uint64_t bytes;
};

/* the pick of tun at every size of pt against the fastest; -1 if it picks outside */
static int check_point(const struct dcoll *d, uint32_t n, const struct point *pt,
		       const struct kcoll_sched_tuning *tun, struct worst *w)
{
	uint32_t i, k;

	for (i = 0; i < DERIVE_NSIZES; i++) {
		enum kcoll_algorithm a = kcoll_sched_select(d->coll, n, pt->payload[i], tun);
		double t = -1;

		if (pt->best[i] == INFINITY)
			continue;	/* not measured (run_point()) */
		for (k = 0; k < DERIVE_MAX_ALGOS; k++)
			if (d->algos[k] == a)
				t = pt->t[i][k];
		if (t <= 0) {
			fprintf(stderr, "kcoll-sim: %s, %u ranks, %llu B: %s is not one of the "
				"grid's algorithms\n", perf_coll_name(d->coll), n,
				(unsigned long long)pt->payload[i], perf_algo_name(a));
			return -1;
		}
		if (t / pt->best[i] > w->ratio) {
			w->ratio = t / pt->best[i];
			w->ranks = n;
			w->bytes = pt->payload[i];
		}
	}
	return 0;
}

/* one rank count of the check: run it, then its picks against the fastest into w */
static int check_ranks(const struct simnet_cfg *c, const struct dcoll *d, uint32_t n, int loc,
		       bool half, uint64_t small_bytes, struct point *pt, struct worst *w)
{
	uint32_t local = ranks_a_node(loc, n);
	struct kcoll_sched_tuning tun;

	kcoll_sched_tuning_default(&tun);
	tun.chunk_bytes = c->chunk_bytes;
	tun.small_bytes = small_bytes;
	tun.local_size = local > 1 ? local : 0;
	if (run_point(c, d, n, local, half, pt))
		return -1;
	return check_point(d, n, pt, &tun, w);
}

int derive_check(const struct simnet_cfg *c, uint64_t small_bytes, uint32_t max_ranks,
		 FILE *out)
{
	struct point *pt = malloc(sizeof(*pt));
	struct worst all_on = { 0 }, all_mid = { 0 };
	size_t ci, ni;
	int loc;
	int ret = 0;

	if (!pt) {
		fprintf(stderr, "kcoll-sim: out of memory\n");
		return -1;
	}
	fprintf(out, "%-15s %-5s  %-28s  %s\n", "collective", "rows",
		"worst on the grid (ranks, B)", "worst between (ranks, B)");
	for (ci = 0; ci < ARRAY_SIZE(dcolls); ci++) {
		const struct dcoll *d = &dcolls[ci];

		for (loc = 0; loc < 2; loc++) {
			const uint32_t *rk = loc ? ranks_local : ranks_flat;
			const uint32_t *rm = loc ? ranks_local_mid : ranks_flat_mid;
			size_t nr = loc ? ARRAY_SIZE(ranks_local) : ARRAY_SIZE(ranks_flat);
			size_t nm = loc ? ARRAY_SIZE(ranks_local_mid) : ARRAY_SIZE(ranks_flat_mid);
			struct worst on = { 0 }, mid = { 0 };
			int half;

			/* the grid's points, then the sizes between them */
			for (ni = 0; ni < nr && (!max_ranks || rk[ni] <= max_ranks); ni++)
				for (half = 0; half < 2; half++)
					if (check_ranks(c, d, rk[ni], loc, half, small_bytes, pt,
							half ? &mid : &on))
						goto fail;
			/* the rank counts between, every size */
			for (ni = 0; ni < nm && (!max_ranks || rm[ni] <= max_ranks); ni++)
				for (half = 0; half < 2; half++)
					if (check_ranks(c, d, rm[ni], loc, half, small_bytes, pt,
							&mid))
						goto fail;
			fprintf(out, "%-15s %-5s  %6.3f (%3u, %9llu)  %10.3f (%3u, %9llu)\n",
				perf_coll_name(d->coll), loc ? "local" : "flat", on.ratio,
				on.ranks, (unsigned long long)on.bytes, mid.ratio, mid.ranks,
				(unsigned long long)mid.bytes);
			if (on.ratio > all_on.ratio)
				all_on = on;
			if (mid.ratio > all_mid.ratio)
				all_mid = mid;
		}
	}
	fprintf(out, "worst: %.3f on the grid (at most %.2f), %.3f between (at most %.2f)\n",
		all_on.ratio, DERIVE_CHECK_ON, all_mid.ratio, DERIVE_CHECK_BETWEEN);
	if (all_on.ratio > DERIVE_CHECK_ON + 1e-9 || all_mid.ratio > DERIVE_CHECK_BETWEEN)
		ret = 1;
	free(pt);
	return fflush(out) ? -1 : ret;
fail:
	free(pt);
	return -1;
}
