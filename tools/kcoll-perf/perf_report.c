// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll-perf's report: every rank's figures gathered on rank 0, combined and printed as the
 * table, JSON lines and CSV; the preamble and the progress line.  The runs are kcoll-perf.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkcoll.h>

#include "perf_core.h"
#include "perf_run.h"

/* ---- figures from every rank to rank 0 ----------------------------------------------- */

int gather_rows(struct ctx *x, struct perf_row *mine, struct perf_row *all)
{
	size_t got;
	int j, err;

	if (x->rank) {
		err = kcoll_send(x->c, mine, sizeof(*mine), 0, NULL);
		if (err)
			report_err(x, "sending figures to rank 0", err);
		return err;
	}
	all[0] = *mine;
	for (j = 1; j < x->n; j++) {
		err = kcoll_recv(x->c, &all[j], sizeof(all[j]), j, &got, NULL);
		if (!err && got != sizeof(all[j]))
			err = -EPROTO;
		if (err) {
			char what[64];

			snprintf(what, sizeof(what), "receiving figures from rank %d", j);
			report_err(x, what, err);
			return err;
		}
	}
	return 0;
}

/* Rank 0: the slowest rank's times, the mean CPU, the sum of wrong elements. */
static void combine(const struct ctx *x, const struct perf_row *all, int p, struct perf_stat *o)
{
	int j;

	memset(o, 0, sizeof(*o));
	o->algo_used = all[0].st[p].algo_used;
	for (j = 0; j < x->n; j++) {
		const struct perf_stat *s = &all[j].st[p];

		if (s->algo_used != o->algo_used)
			o->algo_used = -1;	/* the ranks ran different schedules */
		if (s->time_us > o->time_us)
			o->time_us = s->time_us;
		if (s->median_us > o->median_us)
			o->median_us = s->median_us;
		o->usr_us += s->usr_us / x->n;
		o->sys_us += s->sys_us / x->n;
		o->node_us += s->node_us / x->n;
		o->wrong += s->wrong;
		o->ran |= s->ran;
	}
}

/* ---- output ------------------------------------------------------------------------ */

static const char *place_name(int p) { return p ? "in" : "out"; }
static const char *mem_name(unsigned int m) { return m == PERF_MEM_KBUF ? "kbuf" : "user"; }

void group_header(struct ctx *x, const struct perf_case *pc, unsigned int mem, bool nb)
{
	bool out = x->o.place & PERF_PLACE_OUT, in = x->o.place & PERF_PLACE_IN;
	const char *cols = "     time    algbw    busbw  #wrong   usr/op   sys/op";
	const char *unit = "     (us)   (GB/s)   (GB/s)             (us)     (us)";

	if (!x->table)
		return;
	printf("#\n# %s  datatype %s  op %s  mem %s  mode %s%s  algo %s\n",
	       perf_coll_name(pc->coll), perf_dtype_name(pc->dtype),
	       pc->op >= 0 ? perf_op_name(pc->op) : "-", mem_name(mem),
	       nb ? "nonblocking" : "blocking", nb && x->o.agg > 1 ? " (agg)" : "",
	       perf_algo_name(x->o.algo));
	printf("# %47s", "");
	if (out)
		printf("  %-52s", "out-of-place");
	if (in)
		printf("  %-52s", "in-place");
	printf("\n#%11s %10s %6s %6s %5s", "size", "count", "type", "redop", "root");
	if (out)
		printf(" %s", cols);
	if (in)
		printf(" %s", cols);
	printf("\n#%11s %10s %6s %6s %5s", "(B)", "(elements)", "", "", "");
	if (out)
		printf(" %s", unit);
	if (in)
		printf(" %s", unit);
	printf("\n");
}

/*
 * What the kernel ran: "mixed" when the ranks differ, "unknown" when not reported, "local"
 * for the same-host path (KCOLL_ALG_USED_LOCAL).
 */
static const char *algo_used_name(int a)
{
	if (a == KCOLL_ALG_USED_LOCAL)
		return "local";
	return a < 0 ? "mixed" : a == KCOLL_ALG_AUTO ? "unknown" : perf_algo_name(a) ?: "unknown";
}

/* One JSON line and/or CSV line per row and placement (rank 0). */
static void record(struct ctx *x, const struct perf_case *pc, size_t bytes, unsigned int mem,
		   bool nb, int p, const struct perf_stat *s, double algbw, double busbw)
{
	int root = perf_coll_has_root(pc->coll) ? pc->root : -1;
	const char *op = pc->op >= 0 ? perf_op_name(pc->op) : "none";
	const char *mode = nb ? "nonblocking" : "blocking";
	int warm, iters;

	perf_iters_for(&x->o, bytes, &warm, &iters);
	if (x->json)
		fprintf(x->json, "{\"system\": \"kcoll\", \"coll\": \"%s\", \"nranks\": %d, "
			"\"dtype\": \"%s\", \"op\": \"%s\", \"root\": %d, \"place\": \"%s\", "
			"\"mem\": \"%s\", \"mode\": \"%s\", \"agg\": %d, \"algo\": \"%s\", "
			"\"algo_used\": \"%s\", \"size\": %zu, \"count\": %zu, \"warmup\": %d, "
			"\"iters\": %d, \"time_us\": %.3f, \"median_us\": %.3f, \"algbw_gbs\": %.9g, "
			"\"busbw_gbs\": %.9g, \"wrong\": %llu, \"checked\": %s, "
			"\"cpu_usr_us\": %.3f, \"cpu_sys_us\": %.3f, \"node_cpu_us\": %.3f}\n",
			perf_coll_name(pc->coll), x->n, perf_dtype_name(pc->dtype), op, root,
			place_name(p), mem_name(mem), mode, nb ? x->o.agg : 1,
			perf_algo_name(x->o.algo), algo_used_name(s->algo_used), bytes, pc->count,
			warm, iters, s->time_us, s->median_us, algbw, busbw,
			(unsigned long long)s->wrong,
			x->o.check && pc->coll != KCOLL_BARRIER ? "true" : "false",
			s->usr_us, s->sys_us, s->node_us);
	if (x->csv)
		fprintf(x->csv, "kcoll,%s,%d,%s,%s,%d,%s,%s,%s,%d,%s,%zu,%zu,%d,%d,%.3f,%.3f,"
			"%.9g,%.9g,%llu,%.3f,%.3f,%.3f,%s\n",
			perf_coll_name(pc->coll), x->n, perf_dtype_name(pc->dtype), op, root,
			place_name(p), mem_name(mem), mode, nb ? x->o.agg : 1,
			perf_algo_name(x->o.algo), bytes, pc->count, warm, iters, s->time_us,
			s->median_us, algbw, busbw, (unsigned long long)s->wrong,
			s->usr_us, s->sys_us, s->node_us, algo_used_name(s->algo_used));
}

void print_row(struct ctx *x, const struct perf_case *pc, size_t bytes, unsigned int mem,
	       bool nb, const struct perf_row *all)
{
	double factor = perf_busbw_factor(pc->coll, x->n);
	int root = perf_coll_has_root(pc->coll) ? pc->root : -1;
	struct perf_stat s;
	int p;

	if (x->table)
		printf("%12zu %10zu %6s %6s %5d", bytes, pc->count, perf_dtype_name(pc->dtype),
		       pc->op >= 0 ? perf_op_name(pc->op) : "none", root);
	for (p = 0; p < 2; p++) {
		double algbw, busbw;

		if (!(x->o.place & (1U << p)))
			continue;
		combine(x, all, p, &s);
		algbw = s.time_us > 0 ? bytes / s.time_us / 1e3 : 0;
		busbw = algbw * factor;
		x->wrong_total += s.wrong;
		if (pc->coll != KCOLL_BARRIER) {
			x->busbw_sum += busbw;
			x->busbw_rows++;
		}
		if (x->table)
			printf(" %9.2f %8.4f %8.4f %7llu %8.2f %8.2f", s.time_us, algbw, busbw,
			       (unsigned long long)s.wrong, s.usr_us, s.sys_us);
		record(x, pc, bytes, mem, nb, p, &s, algbw, busbw);
	}
	if (x->table)
		printf("\n");
	fflush(stdout);
	if (x->json)
		fflush(x->json);
	if (x->csv)
		fflush(x->csv);
}

void progress(struct ctx *x, const struct perf_case *pc, size_t bytes)
{
	double t = now_s();

	x->rows_done++;
	if (x->rank || !x->o.progress)
		return;
	if (x->progress_tty) {
		fprintf(stderr, "\r%s: [%d/%d] %s %s %zu B          ", prog, x->rows_done,
			x->rows_total, perf_coll_name(pc->coll), perf_dtype_name(pc->dtype), bytes);
		if (x->rows_done == x->rows_total)
			fprintf(stderr, "\n");
	} else if (t - x->progress_last >= 10 || x->rows_done == x->rows_total) {
		fprintf(stderr, "%s: [%d/%d] %s %s %zu B done\n", prog, x->rows_done,
			x->rows_total, perf_coll_name(pc->coll), perf_dtype_name(pc->dtype), bytes);
		x->progress_last = t;
	}
}

/* Rank 0 prints who runs where; every rank tells it its host name. */
int print_preamble(struct ctx *x, size_t nsizes)
{
	char host[64] = "", peer[64];
	size_t got;
	int j, err;

	gethostname(host, sizeof(host) - 1);
	if (x->rank) {
		err = kcoll_send(x->c, host, sizeof(host), 0, NULL);
		if (err)
			report_err(x, "sending the host name to rank 0", err);
		return err;
	}
	if (x->table) {
		printf("# kcoll-perf: libkcoll %s, %d ranks, sizes %zu..%zu B (%zu sizes, ",
		       kcoll_version(), x->n, x->o.minbytes, x->o.maxbytes, nsizes);
		if (x->o.stepbytes)
			printf("step %zu B)\n", x->o.stepbytes);
		else
			printf("factor %g)\n", x->o.stepfactor);
		printf("# warmup %d, iters %d", x->o.warmup, x->o.iters);
		if (x->o.iter_bytes)
			printf(" (at most %zu B / size)", x->o.iter_bytes);
		printf(", check %d, timeout %u ms, agg %d\n", x->o.check, x->o.timeout_ms,
		       x->o.agg);
		printf("#  Rank %3d on %s (pid %d)\n", 0, host, (int)getpid());
	}
	for (j = 1; j < x->n; j++) {
		err = kcoll_recv(x->c, peer, sizeof(peer), j, &got, NULL);
		if (err) {
			report_err(x, "receiving a host name", err);
			return err;
		}
		peer[sizeof(peer) - 1] = 0;
		if (x->table)
			printf("#  Rank %3d on %s\n", j, peer);
	}
	if (x->csv)
		fprintf(x->csv, "system,coll,nranks,dtype,op,root,place,mem,mode,agg,algo,size,"
			"count,warmup,iters,time_us,median_us,algbw_gbs,busbw_gbs,wrong,"
			"cpu_usr_us,cpu_sys_us,node_cpu_us,algo_used\n");
	return 0;
}
