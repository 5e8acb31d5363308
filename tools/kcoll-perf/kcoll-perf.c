// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll-perf: nccl-tests style benchmark of kcoll's collectives, with a result check.
 *
 * Every rank runs the same command line; the communicator comes from the launcher's
 * environment through kcoll_comm_init_env() (KCOLL_RANK/KCOLL_NRANKS/KCOLL_BOOTSTRAP_ADDR,
 * torchrun, Slurm, Open MPI).  For every collective, datatype, operator, memory kind (plain
 * user pointers or zero-copy kcoll_buf memory), mode (blocking or non-blocking) and size of
 * the sweep, each placement (out of place, in place) is warmed up, timed, then run once more
 * on fresh deterministic inputs and checked element by element against a result computed
 * here (perf_core.c).  Rank 0 collects every rank's figures over point-to-point messages, so
 * the report does not depend on the collectives being measured, and prints the table (and
 * JSON lines or CSV).  See kcoll-perf(1).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libkcoll.h>

#include "json_writer.h"
#include "perf_core.h"
#include "perf_cpu.h"
#include "perf_run.h"

const char *prog = "kcoll-perf";

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* This process's user and system CPU seconds. */
static void cpu_self(double *usr, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*usr = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
	*sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static void errmsg(struct ctx *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->errwhat, sizeof(x->errwhat), fmt, ap);
	va_end(ap);
}

/* "what: reason" from libkcoll's last error, else strerror. */
void report_err(struct ctx *x, const char *what, int err)
{
	const char *why = kcoll_last_error();

	if (err == -ENOSYS && kcoll_perf_nstubs)
		why = "not in this libkcoll (kcoll-perf was built with stubs: rebuild it "
		      "against a library that has the collectives)";
	else if (!why || !*why)
		why = strerror(-err);
	errmsg(x, "%s: %s", what, why);
	fprintf(stderr, "%s: rank %d: %s (errno %d)\n", prog, x->rank, x->errwhat, -err);
}

static bool open_json(struct ctx *x)
{
	if (x->json)
		return true;
	x->json = !strcmp(x->o.json_path, "-") ? stdout : fopen(x->o.json_path, "w");
	if (!x->json)
		fprintf(stderr, "%s: %s: %s\n", prog, x->o.json_path, strerror(errno));
	return x->json;
}

/* The failure as a JSON line: rank 0's, or any rank's that failed before it knew its rank. */
static void json_error(struct ctx *x, int err)
{
	if (!x->o.json_path || (x->c && x->rank) || !open_json(x))
		return;
	fprintf(x->json, "{\"system\": \"kcoll\", \"rank\": %d, \"nranks\": %d, \"error\": ",
		x->c ? x->rank : -1, x->c ? x->n : 0);
	kcoll_jw_escape(x->json, x->errwhat);
	fprintf(x->json, ", \"errno\": %d}\n", -err);
	fflush(x->json);
}

/* ---- one collective call ----------------------------------------------------------- */

static int coll_call(struct ctx *x, const struct perf_case *pc, const void *sb, void *rb,
		     struct kcoll_request *req)
{
	/* The algorithm the kernel ran is reported for blocking calls: the row says it. */
	KCOLL_OPTS(kcoll_coll_opts, co, .algo = (unsigned int)x->o.algo,
		   .timeout_ms = x->o.timeout_ms, .req = req,
		   .algo_used = req ? NULL : &x->algo_used);
	size_t c = pc->count;

	switch (pc->coll) {
	case KCOLL_BROADCAST:
		return kcoll_broadcast(x->c, sb, rb, c, pc->dtype, pc->root, &co);
	case KCOLL_SCATTER:
		return kcoll_scatter(x->c, sb, rb, c, pc->dtype, pc->root, &co);
	case KCOLL_GATHER:
		return kcoll_gather(x->c, sb, rb, c, pc->dtype, pc->root, &co);
	case KCOLL_REDUCE:
		return kcoll_reduce(x->c, sb, rb, c, pc->dtype, pc->op, pc->root, &co);
	case KCOLL_ALLREDUCE:
		return kcoll_allreduce(x->c, sb, rb, c, pc->dtype, pc->op, &co);
	case KCOLL_ALLGATHER:
		return kcoll_allgather(x->c, sb, rb, c, pc->dtype, &co);
	case KCOLL_REDUCE_SCATTER:
		return kcoll_reduce_scatter(x->c, sb, rb, c, pc->dtype, pc->op, &co);
	case KCOLL_ALLTOALL:
		return kcoll_alltoall(x->c, sb, rb, c, pc->dtype, &co);
	case KCOLL_BARRIER:
		return kcoll_barrier(x->c, &co);
	case KCOLL_ALLGATHERV:
		return kcoll_allgatherv(x->c, sb, rb, x->counts, x->displs, pc->dtype, &co);
	case KCOLL_REDUCE_SCATTERV:
		return kcoll_reduce_scatterv(x->c, sb, rb, x->counts, x->displs, pc->dtype,
					     pc->op, &co);
	case KCOLL_ALLTOALLV:
		return kcoll_alltoallv(x->c, sb, x->counts, x->displs, rb, x->counts, x->displs,
				       pc->dtype, &co);
	}
	return -EINVAL;
}

/* @k operations back to back: blocking ones, or submitted together and then waited for. */
static int run_round(struct ctx *x, const struct perf_case *pc, const void *sb, void *rb,
		     bool nonblock, int k)
{
	int i, j, err = 0, e;

	if (!nonblock) {
		for (i = 0; i < k && !err; i++)
			err = coll_call(x, pc, sb, rb, NULL);
		return err;
	}
	for (i = 0; i < k; i++) {
		memset(&x->reqs[i], 0, sizeof(x->reqs[i]));
		err = coll_call(x, pc, sb, rb, &x->reqs[i]);
		if (err)
			break;
	}
	for (j = 0; j < i; j++) {
		e = kcoll_wait(x->c, &x->reqs[j], -1, NULL);
		if (e && !err)
			err = e;
	}
	return err;
}

/* The send and receive pointers of a placement (the conventions of libkcoll.h). */
static void case_bufs(struct ctx *x, const struct perf_case *pc, unsigned int mem,
		      void **sb, void **rb)
{
	char *s, *r;
	size_t off = pc->count * perf_dtype_size(pc->dtype);
	bool root = pc->rank == pc->root;

	if (mem == PERF_MEM_KBUF) {
		s = kcoll_buf_ptr(x->kb[0]);
		r = kcoll_buf_ptr(x->kb[1]);
	} else {
		s = x->ubuf[0];
		r = x->ubuf[1];
	}
	*sb = s;
	*rb = r;
	if (!pc->in_place)
		return;
	switch (pc->coll) {
	case KCOLL_ALLGATHER:
	case KCOLL_ALLGATHERV:
		*sb = r + (size_t)pc->rank * off;
		break;
	case KCOLL_REDUCE_SCATTER:
	case KCOLL_REDUCE_SCATTERV:
		*rb = s + (size_t)pc->rank * off;
		break;
	case KCOLL_GATHER:
		if (root)
			*sb = r + (size_t)pc->root * off;
		break;
	case KCOLL_SCATTER:
		if (root)
			*rb = s;
		break;
	default:
		*sb = r;
	}
}

/* Warm-up, timed iterations, then the check; fills @st. */
static int time_case(struct ctx *x, const struct perf_case *pc, size_t bytes, unsigned int mem,
		     bool nonblock, struct perf_stat *st)
{
	size_t es = perf_dtype_size(pc->dtype), send, recv;
	int warm, iters, rounds, k, i, err = 0;
	double t, u0, s0, u1, s1, n0, n1, total = 0, ops;
	void *sb, *rb;

	memset(st, 0, sizeof(*st));
	st->ran = 1;
	x->algo_used = KCOLL_ALG_AUTO;
	perf_iters_for(&x->o, bytes, &warm, &iters);
	k = nonblock ? x->o.agg : 1;
	rounds = (iters + k - 1) / k;
	case_bufs(x, pc, mem, &sb, &rb);
	perf_buf_elems(pc->coll, pc->count, pc->nranks, &send, &recv);
	if (send)
		perf_fill(pc, sb);

	for (i = 0; i < (warm + k - 1) / k; i++) {
		err = run_round(x, pc, sb, rb, nonblock, k);
		if (err)
			goto fail;
	}
	n0 = perf_cpu_node();	/* outside the process's own window: reading /proc costs */
	cpu_self(&u0, &s0);
	for (i = 0; i < rounds; i++) {
		t = now_s();
		err = run_round(x, pc, sb, rb, nonblock, k);
		t = now_s() - t;
		if (err)
			goto fail;
		x->samples[i] = t / k;
		total += t;
	}
	cpu_self(&u1, &s1);
	n1 = perf_cpu_node();
	ops = (double)rounds * k;
	st->time_us = total / ops * 1e6;
	st->median_us = perf_median(x->samples, rounds) * 1e6;
	st->algo_used = nonblock ? KCOLL_ALG_AUTO : (int32_t)x->algo_used;
	st->usr_us = (u1 - u0) / ops * 1e6;
	st->sys_us = (s1 - s0) / ops * 1e6;
	st->node_us = (n1 - n0) / ops * 1e6;

	if (x->o.check && pc->coll != KCOLL_BARRIER) {
		/* Fresh inputs over a poisoned result: nothing left from the timed runs counts. */
		memset(rb, 0xa5, recv * es);
		perf_fill(pc, sb);
		err = run_round(x, pc, sb, rb, nonblock, 1);
		if (err)
			goto fail;
		st->wrong = perf_check(pc, rb);
	}
	return 0;

fail:
	st->err = err;
	{
		char what[128];

		snprintf(what, sizeof(what), "kcoll_%s %s%s%s %zu B %s%s", perf_coll_name(pc->coll),
			 perf_dtype_name(pc->dtype), pc->op >= 0 ? " " : "",
			 pc->op >= 0 ? perf_op_name(pc->op) : "", bytes,
			 pc->in_place ? "in place" : "out of place",
			 nonblock ? " non-blocking" : "");
		report_err(x, what, err);
	}
	return err;
}

/* ---- setup --------------------------------------------------------------------------- */

/* Bytes each of the send and receive buffers needs for the largest row. */
static size_t buffer_len(const struct perf_opts *o, int n)
{
	size_t need = 64, total, c, s, r, es;
	int coll, d;

	for (coll = 0; coll < KCOLL_NUM_COLLECTIVES; coll++) {
		if (!(o->colls & (1U << coll)))
			continue;
		for (d = 0; d < KCOLL_NUM_DATATYPES; d++) {
			if (!(o->dtypes & (1U << d)))
				continue;
			es = perf_dtype_size(d);
			c = perf_count(coll, o->maxbytes, d, n, &total);
			perf_buf_elems(coll, c, n, &s, &r);
			if (s * es > need)
				need = s * es;
			if (r * es > need)
				need = r * es;
		}
	}
	return (need + 4095) & ~(size_t)4095;
}

static int setup_buffers(struct ctx *x)
{
	int i, err;

	x->buflen = buffer_len(&x->o, x->n);
	if (x->o.mem & PERF_MEM_USER) {
		for (i = 0; i < 2; i++) {
			x->ubuf[i] = aligned_alloc(4096, x->buflen);
			if (!x->ubuf[i]) {
				errmsg(x, "out of memory (%zu bytes)", x->buflen);
				fprintf(stderr, "%s: %s\n", prog, x->errwhat);
				return -ENOMEM;
			}
		}
	}
	if (x->o.mem & PERF_MEM_KBUF) {
		for (i = 0; i < 2; i++) {
			err = kcoll_buf_create(x->c, x->buflen, &x->kb[i]);
			if (err) {
				report_err(x, "kcoll_buf_create", err);
				return err;
			}
		}
	}
	x->counts = calloc(x->n, sizeof(*x->counts));
	x->displs = calloc(x->n, sizeof(*x->displs));
	x->samples = calloc(x->o.iters, sizeof(*x->samples));
	x->reqs = calloc(x->o.agg, sizeof(*x->reqs));
	if (!x->counts || !x->displs || !x->samples || !x->reqs) {
		errmsg(x, "out of memory");
		fprintf(stderr, "%s: %s\n", prog, x->errwhat);
		return -ENOMEM;
	}
	return 0;
}

static FILE *open_out(const char *path)
{
	if (!strcmp(path, "-"))
		return stdout;
	return fopen(path, "w");
}

/* Rows of the whole run, for the progress line. */
static int count_rows(const struct ctx *x, size_t nsizes)
{
	int coll, d, op, ops, rows = 0;

	for (coll = 0; coll < KCOLL_NUM_COLLECTIVES; coll++) {
		if (!(x->o.colls & (1U << coll)))
			continue;
		for (d = 0; d < KCOLL_NUM_DATATYPES; d++) {
			if (!(x->o.dtypes & (1U << d)))
				continue;
			ops = 0;
			for (op = 0; op < KCOLL_NUM_RED_OPS; op++)
				ops += (x->o.ops & (1U << op)) && perf_op_valid(d, op);
			if (!perf_coll_is_reduction(coll))
				ops = 1;
			rows += ops * __builtin_popcount(x->o.mem) * __builtin_popcount(x->o.mode) *
				(coll == KCOLL_BARRIER ? 1 : (int)nsizes);
			if (coll == KCOLL_BARRIER)	/* no datatype */
				break;
		}
	}
	return rows;
}

/* One table: every size of the sweep for one collective, datatype, op, memory and mode. */
static int run_table(struct ctx *x, struct perf_case *pc, unsigned int mem, bool nb,
		     const size_t *sizes, size_t nsizes, struct perf_row *all)
{
	struct perf_row mine;
	size_t si, bytes, prev = (size_t)-1;
	int p, err;

	if (!x->rank)
		group_header(x, pc, mem, nb);
	for (si = 0; si < nsizes; si++) {
		pc->count = perf_count(pc->coll, sizes[si], pc->dtype, x->n, &bytes);
		if (bytes == prev) {	/* a size rounded to the same element count */
			progress(x, pc, bytes);
			continue;
		}
		prev = bytes;
		for (p = 0; p < x->n; p++) {
			x->counts[p] = pc->count;
			x->displs[p] = (size_t)p * pc->count;
		}
		memset(&mine, 0, sizeof(mine));
		for (p = 0; p < 2; p++) {
			if (!(x->o.place & (1U << p)))
				continue;
			pc->in_place = p;
			err = time_case(x, pc, bytes, mem, nb, &mine.st[p]);
			if (err)
				return err;
			x->wrong_own += mine.st[p].wrong;
		}
		err = gather_rows(x, &mine, all);
		if (err)
			return err;
		if (!x->rank)
			print_row(x, pc, bytes, mem, nb, all);
		progress(x, pc, bytes);
		if (pc->coll == KCOLL_BARRIER)
			break;
	}
	return 0;
}

static int run_all(struct ctx *x, const size_t *sizes, size_t nsizes)
{
	struct perf_row *all;
	struct perf_case pc;
	int coll, d, op, mi, err = 0;

	all = calloc(x->n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	x->rows_total = count_rows(x, nsizes);

	for (coll = 0; coll < KCOLL_NUM_COLLECTIVES && !err; coll++) {
		if (!(x->o.colls & (1U << coll)))
			continue;
		for (d = 0; d < KCOLL_NUM_DATATYPES && !err; d++) {
			if (!(x->o.dtypes & (1U << d)))
				continue;
			/* op -1: the collective reduces nothing */
			for (op = perf_coll_is_reduction(coll) ? 0 : -1;
			     op < KCOLL_NUM_RED_OPS && !err; op++) {
				if (op >= 0 && !perf_coll_is_reduction(coll))
					break;	/* ran once, with op -1 */
				if (op >= 0 && (!(x->o.ops & (1U << op)) || !perf_op_valid(d, op)))
					continue;
				for (mi = 0; mi < 4 && !err; mi++) {
					/* mi: bit 0 memory kind, bit 1 mode */
					if (!(x->o.mem & (1U << (mi & 1))) ||
					    !(x->o.mode & (1U << (mi >> 1))))
						continue;
					memset(&pc, 0, sizeof(pc));
					pc.coll = coll;
					pc.dtype = d;
					pc.op = op;
					pc.root = perf_coll_has_root(coll) ? x->o.root : 0;
					pc.rank = x->rank;
					pc.nranks = x->n;
					err = run_table(x, &pc, 1U << (mi & 1), mi >> 1, sizes,
							nsizes, all);
				}
			}
			if (coll == KCOLL_BARRIER)
				break;
		}
	}
	free(all);
	return err;
}

/*
 * --hold FILE: keep the communicator (every rank does, each on its own file system's FILE)
 * until FILE exists, at most the timeout (0: no limit), so that a monitor listing it never
 * races the end of a short run.  Not finding FILE in time is said, not an error.
 */
static void hold(const struct ctx *x)
{
	double end = now_s() + x->o.timeout_ms / 1000.0;

	while (access(x->o.hold_path, F_OK)) {
		if (x->o.timeout_ms && now_s() >= end) {
			fprintf(stderr, "%s: rank %d: %s did not appear within %u ms\n", prog,
				x->rank, x->o.hold_path, x->o.timeout_ms);
			return;
		}
		usleep(50000);
	}
}

int main(int argc, char **argv)
{
	KCOLL_OPTS(kcoll_open_opts, oopts);
	size_t sizes[PERF_MAX_SIZES], nsizes;
	struct ctx x = { .rank = 0, .n = 1 };
	char err_text[256];
	int err, rc = 1, i;

	err = perf_parse_args(argc, argv, &x.o, err_text, sizeof(err_text));
	if (err > 0) {
		perf_usage(stdout, prog);
		return 0;
	}
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", prog, err_text);
		fprintf(stderr, "Try '%s --help'.\n", prog);
		return 2;
	}
	nsizes = perf_sizes(&x.o, sizes, PERF_MAX_SIZES);
	x.table = !((x.o.json_path && !strcmp(x.o.json_path, "-")) ||
		    (x.o.csv_path && !strcmp(x.o.csv_path, "-")));
	if (x.o.progress < 0)
		x.o.progress = isatty(STDERR_FILENO);
	x.progress_tty = isatty(STDERR_FILENO);
	x.progress_last = now_s();

	oopts.dev_path = x.o.dev_path;
	err = kcoll_open(&oopts, &x.h);
	if (err) {
		report_err(&x, "cannot open the kcoll device (is the module loaded?)", err);
		json_error(&x, err);
		goto out;
	}
	err = kcoll_comm_init_env(x.h, NULL, &x.c);
	if (err) {
		report_err(&x, "kcoll_comm_init_env", err);
		json_error(&x, err);
		goto out;
	}
	x.rank = kcoll_comm_rank(x.c);
	x.n = kcoll_comm_size(x.c);
	if (x.o.root >= x.n) {
		errmsg(&x, "root %d, but the communicator has %d ranks", x.o.root, x.n);
		fprintf(stderr, "%s: %s\n", prog, x.errwhat);
		err = -EINVAL;
		json_error(&x, err);
		goto out;
	}
	/* Only rank 0 writes the report (the ranks may share a directory). */
	if (!x.rank && x.o.json_path && !open_json(&x))
		goto out;
	if (!x.rank && x.o.csv_path) {
		x.csv = open_out(x.o.csv_path);
		if (!x.csv) {
			fprintf(stderr, "%s: %s: %s\n", prog, x.o.csv_path, strerror(errno));
			goto out;
		}
	}
	if (x.rank)
		x.table = false;

	err = setup_buffers(&x);
	if (!err)
		err = print_preamble(&x, nsizes);
	if (!err)
		err = run_all(&x, sizes, nsizes);
	if (err) {
		json_error(&x, err);
		/* Fail the others' pending operations rather than leave them to time out. */
		kcoll_comm_abort(x.c);
		goto out;
	}
	if (!x.rank && x.table) {
		printf("# Out of bounds values : %llu %s\n", (unsigned long long)x.wrong_total,
		       x.wrong_total ? "FAILED" : "OK");
		printf("# Avg bus bandwidth    : %.4f GB/s\n",
		       x.busbw_rows ? x.busbw_sum / x.busbw_rows : 0.0);
		printf("#\n");
	}
	rc = (x.rank ? x.wrong_own : x.wrong_total) ? 1 : 0;
	if (x.o.hold_path)
		hold(&x);
out:
	for (i = 0; i < 2; i++) {
		kcoll_buf_destroy(x.kb[i]);
		free(x.ubuf[i]);
	}
	kcoll_comm_destroy(x.c);
	kcoll_close(x.h);
	free(x.counts);
	free(x.displs);
	free(x.samples);
	free(x.reqs);
	if (x.json && x.json != stdout)
		fclose(x.json);
	if (x.csv && x.csv != stdout)
		fclose(x.csv);
	return rc;
}
