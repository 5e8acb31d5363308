/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What kcoll-perf.c (the runs) and perf_report.c (the report) share: the run's context
 * and one rank's figures.
 */
#ifndef KCOLL_PERF_RUN_H
#define KCOLL_PERF_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libkcoll.h>

#include "perf_core.h"

extern const char *prog;

/* Collective entry points the library lacked at build time (stubs.c); 0 normally. */
extern const int kcoll_perf_nstubs;

/* One rank's figures for one placement of one row. */
struct perf_stat {
	double time_us;		/* mean per operation */
	double median_us;	/* median per operation (per round of --agg operations / agg) */
	double usr_us, sys_us;	/* this process's CPU per operation */
	double node_us;		/* the whole node's busy CPU per operation (/proc/stat) */
	uint64_t wrong;
	int64_t err;		/* 0, or the negative errno the collective failed with */
	int32_t ran;		/* 1 when this placement ran */
	int32_t algo_used;	/* what the kernel ran (enum kcoll_algorithm); -1: ranks differ */
};

struct perf_row {
	struct perf_stat st[2];	/* out of place, in place */
};

struct ctx {
	struct perf_opts o;
	struct kcoll_handle *h;
	struct kcoll_comm *c;
	int rank, n;
	size_t buflen;
	void *ubuf[2];			/* plain memory: send, recv */
	struct kcoll_buf *kb[2];	/* zero-copy buffers: send, recv */
	size_t *counts, *displs;	/* v-collectives: nranks blocks of count */
	double *samples;
	struct kcoll_request *reqs;
	unsigned int algo_used;		/* the last blocking call's, as the kernel reports it */
	FILE *json, *csv;
	bool table;
	/* progress */
	int rows_done, rows_total;
	bool progress_tty;
	double progress_last;
	/* summary */
	uint64_t wrong_total;		/* rank 0: every rank's */
	uint64_t wrong_own;
	double busbw_sum;
	int busbw_rows;
	/* the failing call, for the report */
	char errwhat[160];
};

/* kcoll-perf.c */
double now_s(void);
void report_err(struct ctx *x, const char *what, int err);

/* perf_report.c */
int gather_rows(struct ctx *x, struct perf_row *mine, struct perf_row *all);
void group_header(struct ctx *x, const struct perf_case *pc, unsigned int mem, bool nb);
void print_row(struct ctx *x, const struct perf_case *pc, size_t bytes, unsigned int mem,
	       bool nb, const struct perf_row *all);
void progress(struct ctx *x, const struct perf_case *pc, size_t bytes);
int print_preamble(struct ctx *x, size_t nsizes);

#endif /* KCOLL_PERF_RUN_H */
