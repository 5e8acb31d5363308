// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench/mpi_timing: MPI_Allreduce and MPI_Bcast timed the way kcoll-perf times kcoll, so that
 * `make bench` compares like with like: the same size sweep, warm-up and iteration rule, time
 * per operation of the slowest rank, algbw = size / time, busbw = algbw x the nccl-tests
 * factor (all-reduce 2(n-1)/n, broadcast 1), and a result check (#wrong).  fp32; all-reduce
 * sums small integers (exact), broadcast from rank 0.
 *
 *   mpirun -np N mpi_timing [-C allreduce,bcast] [-b 4] [-e 16M] [-f 2] [-w 5] [-n 20]
 *                           [-I BYTES] [-L LABEL] [-J FILE]
 *
 * Rank 0 prints an nccl-tests style table and, with -J, one JSON object per row to FILE
 * ("system" is LABEL, e.g. mpi-ucx).  Exit status 0 when every result was right.
 */
#include <errno.h>
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../tools/kcoll-perf/perf_cpu.h"

#define MAX_SIZES	256

enum { ALLREDUCE = 1, BCAST = 2 };

struct opts {
	unsigned int colls;
	size_t minbytes, maxbytes, iter_bytes;
	double factor;
	int warmup, iters;
	const char *label, *json;
};

static int rank, nranks;

static void usage(FILE *f)
{
	fprintf(f,
"usage: mpi_timing [-C allreduce,bcast] [-b SIZE] [-e SIZE] [-f FACTOR] [-w N] [-n N]\n"
"                  [-I BYTES] [-L LABEL] [-J FILE]\n"
"  -C LIST   collectives: allreduce, bcast (default both)\n"
"  -b, -e    smallest and largest size in bytes, K/M/G suffixes (default 4 and 16M)\n"
"  -f F      size factor from row to row (default 2)\n"
"  -w, -n    warm-up and timed iterations per row (default 5 and 20)\n"
"  -I BYTES  at most BYTES / size timed iterations (at least 1), warm-up no more than timed\n"
"  -L LABEL  the \"system\" field of the JSON lines (default mpi)\n"
"  -J FILE   write one JSON object per row to FILE (rank 0)\n");
}

static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	char *tok, *save, buf[128];
	int opt;

	*o = (struct opts){ .colls = ALLREDUCE | BCAST, .minbytes = 4, .maxbytes = 16 << 20,
			    .factor = 2, .warmup = 5, .iters = 20, .label = "mpi" };
	while ((opt = getopt(argc, argv, "C:b:e:f:w:n:I:L:J:h")) != -1) {
		switch (opt) {
		case 'C':
			snprintf(buf, sizeof(buf), "%s", optarg);
			o->colls = 0;
			for (tok = strtok_r(buf, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (!strcmp(tok, "allreduce"))
					o->colls |= ALLREDUCE;
				else if (!strcmp(tok, "bcast") || !strcmp(tok, "broadcast"))
					o->colls |= BCAST;
				else
					return -1;
			}
			break;
		case 'b':
			if (parse_size(optarg, &o->minbytes) || !o->minbytes)
				return -1;
			break;
		case 'e':
			if (parse_size(optarg, &o->maxbytes))
				return -1;
			break;
		case 'I':
			if (parse_size(optarg, &o->iter_bytes))
				return -1;
			break;
		case 'f':
			o->factor = atof(optarg);
			if (!(o->factor > 1))
				return -1;
			break;
		case 'w':
			o->warmup = atoi(optarg);
			if (o->warmup < 0)
				return -1;
			break;
		case 'n':
			o->iters = atoi(optarg);
			if (o->iters < 1)
				return -1;
			break;
		case 'L':
			o->label = optarg;
			break;
		case 'J':
			o->json = optarg;
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc || !o->colls || o->minbytes > o->maxbytes)
		return -1;
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double cpu_s(int sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	if (sys)
		return ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
}

/* Small integers from (rank, index): sums over ranks are exact in fp32. */
static float input(int r, size_t i)
{
	return (float)((r * 7 + i * 3 + i / 5) % 4);
}

static void fill(float *buf, size_t count, int coll)
{
	size_t i;

	for (i = 0; i < count; i++)
		buf[i] = coll == BCAST ? (rank == 0 ? (float)(i % 100) : -1.0f) : input(rank, i);
}

static long long check(const float *buf, size_t count, int coll)
{
	long long wrong = 0;
	size_t i;
	float want;
	int r;

	for (i = 0; i < count; i++) {
		if (coll == BCAST) {
			want = (float)(i % 100);
		} else {
			want = 0;
			for (r = 0; r < nranks; r++)
				want += input(r, i);
		}
		wrong += buf[i] != want;
	}
	return wrong;
}

static void run_op(int coll, float *buf, size_t count)
{
	if (coll == ALLREDUCE)
		MPI_Allreduce(MPI_IN_PLACE, buf, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	else
		MPI_Bcast(buf, (int)count, MPI_FLOAT, 0, MPI_COMM_WORLD);
}

/* Rank 0: one table row, and one JSON line with -J. */
static void print_row(FILE *json, const struct opts *o, int coll, size_t bytes, int warm,
		      int iters, const double *glob, long long wrong)
{
	double factor = coll == ALLREDUCE ? 2.0 * (nranks - 1) / nranks : 1.0;
	double algbw = bytes / glob[0] / 1e3, busbw = algbw * factor;
	size_t count = bytes / sizeof(float);

	printf("%12zu %10zu %10.2f %10.2f %9.4f %9.4f %7lld %9.2f %9.2f %9.2f\n", bytes, count,
	       glob[0], glob[1], algbw, busbw, wrong, glob[2], glob[3], glob[4]);
	fflush(stdout);
	if (!json)
		return;
	fprintf(json, "{\"system\": \"%s\", \"coll\": \"%s\", \"nranks\": %d, "
		"\"dtype\": \"fp32\", \"op\": \"%s\", \"size\": %zu, \"count\": %zu, "
		"\"warmup\": %d, \"iters\": %d, \"time_us\": %.3f, \"median_us\": %.3f, "
		"\"algbw_gbs\": %.9g, \"busbw_gbs\": %.9g, \"wrong\": %lld, "
		"\"cpu_usr_us\": %.3f, \"cpu_sys_us\": %.3f, \"node_cpu_us\": %.3f}\n", o->label,
		coll == ALLREDUCE ? "allreduce" : "broadcast", nranks,
		coll == ALLREDUCE ? "sum" : "none", bytes, count, warm, iters, glob[0], glob[1],
		algbw, busbw, wrong, glob[2], glob[3], glob[4]);
	fflush(json);
}

int main(int argc, char **argv)
{
	double t, total, *samples, loc[5], glob[5], u0, s0, n0;
	size_t sizes[MAX_SIZES], nsizes = 0, s, count, bytes, prev;
	long long wrong, wrong_all, wrong_total = 0;
	int coll, si, i, warm, iters, err;
	struct opts o;
	FILE *json = NULL;
	float *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	err = parse(argc, argv, &o);
	if (err) {
		if (!rank)
			usage(err > 0 ? stdout : stderr);
		MPI_Finalize();
		return err > 0 ? 0 : 2;
	}
	for (s = o.minbytes; s <= o.maxbytes && nsizes < MAX_SIZES;) {
		size_t next = (size_t)(s * o.factor);

		sizes[nsizes++] = s;
		s = next > s ? next : s + 1;
	}
	buf = malloc(o.maxbytes + 64);
	samples = calloc(o.iters, sizeof(*samples));
	if (!buf || !samples) {
		fprintf(stderr, "mpi_timing: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (!rank && o.json) {
		json = fopen(o.json, "w");
		if (!json) {
			fprintf(stderr, "mpi_timing: %s: %s\n", o.json, strerror(errno));
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	for (coll = ALLREDUCE; coll <= BCAST; coll <<= 1) {
		if (!(o.colls & coll))
			continue;
		prev = 0;
		if (!rank) {
			printf("#\n# %s: MPI_%s, fp32%s, %d ranks\n", o.label,
			       coll == ALLREDUCE ? "Allreduce" : "Bcast",
			       coll == ALLREDUCE ? " sum, in place" : ", root 0", nranks);
			printf("#%11s %10s %10s %10s %9s %9s %7s %9s %9s %9s\n", "size", "count",
			       "time", "median", "algbw", "busbw", "#wrong", "usr/op", "sys/op",
			       "node/op");
			printf("#%11s %10s %10s %10s %9s %9s %7s %9s %9s %9s\n", "(B)",
			       "(elements)", "(us)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)",
			       "(us)");
		}
		for (si = 0; si < (int)nsizes; si++) {
			count = sizes[si] / sizeof(float);
			if (!count)
				count = 1;
			bytes = count * sizeof(float);
			if (bytes == prev)
				continue;
			prev = bytes;
			iters = o.iters;
			warm = o.warmup;
			if (o.iter_bytes) {
				size_t cap = o.iter_bytes / bytes;

				if (cap < 1)
					cap = 1;
				if (cap < (size_t)iters)
					iters = (int)cap;
				if (warm > iters)
					warm = iters;
			}
			fill(buf, count, coll);
			for (i = 0; i < warm; i++)
				run_op(coll, buf, count);
			MPI_Barrier(MPI_COMM_WORLD);
			n0 = perf_cpu_node();
			u0 = cpu_s(0);
			s0 = cpu_s(1);
			total = 0;
			for (i = 0; i < iters; i++) {
				t = MPI_Wtime();
				run_op(coll, buf, count);
				t = MPI_Wtime() - t;
				samples[i] = t;
				total += t;
			}
			loc[2] = (cpu_s(0) - u0) / iters * 1e6 / nranks;
			loc[3] = (cpu_s(1) - s0) / iters * 1e6 / nranks;
			/* every rank of a node reads the same node: the mean over ranks */
			loc[4] = (perf_cpu_node() - n0) / iters * 1e6 / nranks;
			loc[0] = total / iters * 1e6;
			loc[1] = median(samples, iters) * 1e6;
			MPI_Reduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			MPI_Reduce(loc + 2, glob + 2, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

			fill(buf, count, coll);
			run_op(coll, buf, count);
			wrong = check(buf, count, coll);
			MPI_Reduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, 0,
				   MPI_COMM_WORLD);
			if (rank)
				continue;
			wrong_total += wrong_all;
			print_row(json, &o, coll, bytes, warm, iters, glob, wrong_all);
		}
	}
	if (!rank)
		printf("# Out of bounds values : %lld %s\n", wrong_total,
		       wrong_total ? "FAILED" : "OK");
	if (json)
		fclose(json);
	free(buf);
	free(samples);
	MPI_Bcast(&wrong_total, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return wrong_total ? 1 : 0;
}
