// SPDX-License-Identifier: GPL-2.0-only
/*
 * tools/kcoll-perf's pure parts: bus-bandwidth factors, the size sweep, option parsing,
 * buffer geometry, and the expected results.  The expected values are checked against every
 * collective simulated here on 1 to 5 ranks, with reductions rounded to the datatype after
 * every step and in reverse rank order (so "exact whatever the order" is tested, not
 * assumed), and a single corrupted element must count as one #wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "../../tools/kcoll-perf/perf_core.c"
#include "../../tools/kcoll-perf/perf_opts.c"

static int parse(struct perf_opts *o, char *err, ...)
{
	char *argv[64];
	int argc = 0;
	va_list ap;

	argv[argc++] = "kcoll-perf";
	va_start(ap, err);
	while (argc < 63 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = 0;
	return perf_parse_args(argc, argv, o, err, 256);
}

#define PARSE(o, err, ...) parse(o, err, ##__VA_ARGS__, (char *)NULL)

TEST(busbw_factors)
{
	int n;

	for (n = 1; n <= 16; n++) {
		EXPECT_EQ(2.0 * (n - 1) / n, perf_busbw_factor(KCOLL_ALLREDUCE, n));
		EXPECT_EQ((double)(n - 1) / n, perf_busbw_factor(KCOLL_ALLGATHER, n));
		EXPECT_EQ((double)(n - 1) / n, perf_busbw_factor(KCOLL_REDUCE_SCATTER, n));
		EXPECT_EQ((double)(n - 1) / n, perf_busbw_factor(KCOLL_ALLTOALL, n));
		EXPECT_EQ((double)(n - 1) / n, perf_busbw_factor(KCOLL_GATHER, n));
		EXPECT_EQ((double)(n - 1) / n, perf_busbw_factor(KCOLL_SCATTER, n));
		EXPECT_EQ((double)(n - 1) / n, perf_busbw_factor(KCOLL_ALLGATHERV, n));
		EXPECT_EQ((double)(n - 1) / n, perf_busbw_factor(KCOLL_REDUCE_SCATTERV, n));
		EXPECT_EQ((double)(n - 1) / n, perf_busbw_factor(KCOLL_ALLTOALLV, n));
		EXPECT_EQ(1.0, perf_busbw_factor(KCOLL_BROADCAST, n));
		EXPECT_EQ(1.0, perf_busbw_factor(KCOLL_REDUCE, n));
		EXPECT_EQ(0.0, perf_busbw_factor(KCOLL_BARRIER, n));
	}
	EXPECT_EQ(1.5, perf_busbw_factor(KCOLL_ALLREDUCE, 4));
	EXPECT_EQ(0.75, perf_busbw_factor(KCOLL_ALLGATHER, 4));
	EXPECT_EQ(0.0, perf_busbw_factor(KCOLL_ALLREDUCE, 0));
}

TEST(sweep_default)
{
	struct perf_opts o;
	size_t s[PERF_MAX_SIZES], n, i;

	perf_opts_default(&o);
	n = perf_sizes(&o, s, PERF_MAX_SIZES);
	/* 4 B to 16 MiB by factors of 2: 2^2 .. 2^24 */
	ASSERT_EQ(23, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ((size_t)4 << i, s[i]);
}

TEST(sweep_variants)
{
	struct perf_opts o;
	size_t s[PERF_MAX_SIZES], n, i;
	char err[256];

	ASSERT_EQ(0, PARSE(&o, err, "-b", "1K", "-e", "4K", "-i", "1K"));
	n = perf_sizes(&o, s, PERF_MAX_SIZES);
	ASSERT_EQ(4, n);
	EXPECT_EQ(1024, s[0]);
	EXPECT_EQ(4096, s[3]);

	ASSERT_EQ(0, PARSE(&o, err, "-b", "1M", "-e", "1M"));
	ASSERT_EQ(1, perf_sizes(&o, s, PERF_MAX_SIZES));
	EXPECT_EQ(1 << 20, s[0]);

	/* A factor below 2 on tiny sizes still moves on, and never passes -e. */
	ASSERT_EQ(0, PARSE(&o, err, "-b", "1", "-e", "100", "-f", "1.5"));
	n = perf_sizes(&o, s, PERF_MAX_SIZES);
	ASSERT_GT(n, 5);
	for (i = 1; i < n; i++)
		EXPECT_GT(s[i], s[i - 1]);
	EXPECT_LE(s[n - 1], 100);

	/* Factor 4 from 4 B to 16 MiB: 4, 16, ..., 16M */
	ASSERT_EQ(0, PARSE(&o, err, "-f", "4"));
	n = perf_sizes(&o, s, PERF_MAX_SIZES);
	ASSERT_EQ(12, n);
	EXPECT_EQ(16 << 20, s[11]);

	/* The output is bounded by max */
	EXPECT_EQ(3, perf_sizes(&o, s, 3));
}

TEST(parse_defaults_and_lists)
{
	struct perf_opts o;
	char err[256];

	ASSERT_EQ(0, PARSE(&o, err));
	EXPECT_EQ(1U << KCOLL_ALLREDUCE, o.colls);
	EXPECT_EQ(1U << KCOLL_FP32, o.dtypes);
	EXPECT_EQ(1U << KCOLL_SUM, o.ops);
	EXPECT_EQ(4, o.minbytes);
	EXPECT_EQ(16 << 20, o.maxbytes);
	EXPECT_EQ(5, o.warmup);
	EXPECT_EQ(20, o.iters);
	EXPECT_TRUE(o.check);
	EXPECT_EQ(PERF_PLACE_OUT | PERF_PLACE_IN, o.place);
	EXPECT_EQ(PERF_MEM_USER, o.mem);
	EXPECT_EQ(PERF_MODE_BLOCKING, o.mode);

	ASSERT_EQ(0, PARSE(&o, err, "-C", "allreduce,allgather,reduce_scatter,broadcast,alltoall",
			   "-d", "fp16,bf16,int8", "-o", "sum,max", "-r", "1", "-w", "0",
			   "-n", "3", "-b", "8", "-e", "64K", "-c", "0", "-p", "in", "-m", "both",
			   "-B", "nonblocking", "-a", "4", "-A", "ring", "-t", "0", "-I", "32M",
			   "-J", "out.json", "-S", "out.csv", "-q", "-D", "/dev/null"));
	EXPECT_EQ((1U << KCOLL_ALLREDUCE) | (1U << KCOLL_ALLGATHER) |
		  (1U << KCOLL_REDUCE_SCATTER) | (1U << KCOLL_BROADCAST) |
		  (1U << KCOLL_ALLTOALL), o.colls);
	EXPECT_EQ((1U << KCOLL_FP16) | (1U << KCOLL_BF16) | (1U << KCOLL_INT8), o.dtypes);
	EXPECT_EQ((1U << KCOLL_SUM) | (1U << KCOLL_MAX), o.ops);
	EXPECT_EQ(1, o.root);
	EXPECT_EQ(0, o.warmup);
	EXPECT_EQ(3, o.iters);
	EXPECT_EQ(8, o.minbytes);
	EXPECT_EQ(64 << 10, o.maxbytes);
	EXPECT_FALSE(o.check);
	EXPECT_EQ(PERF_PLACE_IN, o.place);
	EXPECT_EQ(PERF_MEM_USER | PERF_MEM_KBUF, o.mem);
	EXPECT_EQ(PERF_MODE_NONBLOCKING, o.mode);
	EXPECT_EQ(4, o.agg);
	EXPECT_EQ(KCOLL_ALG_RING, o.algo);
	EXPECT_EQ(0, o.timeout_ms);
	EXPECT_EQ((size_t)32 << 20, o.iter_bytes);
	EXPECT_STREQ("out.json", o.json_path);
	EXPECT_STREQ("out.csv", o.csv_path);
	EXPECT_EQ(0, o.progress);
	EXPECT_STREQ("/dev/null", o.dev_path);

	/* Long options and nccl-tests spellings */
	ASSERT_EQ(0, PARSE(&o, err, "--coll=all_reduce,bcast", "--datatype", "float",
			   "--minbytes=1k", "--maxbytes=2MB", "--stepfactor=4", "--iters=7",
			   "--warmup_iters=2", "--progress", "--place=both", "--mode=both"));
	EXPECT_EQ((1U << KCOLL_ALLREDUCE) | (1U << KCOLL_BROADCAST), o.colls);
	EXPECT_EQ(1U << KCOLL_FP32, o.dtypes);
	EXPECT_EQ(1024, o.minbytes);
	EXPECT_EQ(2 << 20, o.maxbytes);
	EXPECT_EQ(4.0, o.stepfactor);
	EXPECT_EQ(7, o.iters);
	EXPECT_EQ(2, o.warmup);
	EXPECT_EQ(1, o.progress);
	EXPECT_EQ(3, o.mode);

	ASSERT_EQ(0, PARSE(&o, err, "-C", "all", "-d", "all", "-o", "all"));
	EXPECT_EQ((1U << KCOLL_NUM_COLLECTIVES) - 1, o.colls);
	EXPECT_EQ((1U << KCOLL_NUM_DATATYPES) - 1, o.dtypes);
	EXPECT_EQ((1U << KCOLL_NUM_RED_OPS) - 1, o.ops);

	/* Parsing again starts from the defaults */
	ASSERT_EQ(0, PARSE(&o, err, "-n", "9"));
	EXPECT_EQ(1U << KCOLL_ALLREDUCE, o.colls);
	EXPECT_EQ(9, o.iters);
	ASSERT_EQ(1, PARSE(&o, err, "--help"));
	ASSERT_EQ(1, PARSE(&o, err, "-h"));
}

TEST(parse_errors)
{
	struct perf_opts o;
	char err[256];

	EXPECT_EQ(-1, PARSE(&o, err, "-C", "allreduce,nosuch"));
	EXPECT_NE(NULL, strstr(err, "nosuch"));
	EXPECT_EQ(-1, PARSE(&o, err, "-d", "fp8"));
	EXPECT_NE(NULL, strstr(err, "fp8"));
	EXPECT_EQ(-1, PARSE(&o, err, "-o", "xor"));
	EXPECT_EQ(-1, PARSE(&o, err, "-A", "magic"));
	EXPECT_EQ(-1, PARSE(&o, err, "-b", "12Q"));
	EXPECT_NE(NULL, strstr(err, "12Q"));
	EXPECT_EQ(-1, PARSE(&o, err, "-b", "-4"));
	EXPECT_EQ(-1, PARSE(&o, err, "-e", ""));
	EXPECT_EQ(-1, PARSE(&o, err, "-b", "1M", "-e", "1K"));
	EXPECT_NE(NULL, strstr(err, "larger"));
	EXPECT_EQ(-1, PARSE(&o, err, "-f", "1"));
	EXPECT_EQ(-1, PARSE(&o, err, "-f", "abc"));
	EXPECT_EQ(-1, PARSE(&o, err, "-n", "0"));
	EXPECT_EQ(-1, PARSE(&o, err, "-w", "-1"));
	EXPECT_EQ(-1, PARSE(&o, err, "-a", "0"));
	EXPECT_EQ(-1, PARSE(&o, err, "-c", "2"));
	EXPECT_EQ(-1, PARSE(&o, err, "-r", "x"));
	EXPECT_EQ(-1, PARSE(&o, err, "-p", "sideways"));
	EXPECT_EQ(-1, PARSE(&o, err, "-m", "gpu"));
	EXPECT_EQ(-1, PARSE(&o, err, "-B", "sometimes"));
	EXPECT_EQ(-1, PARSE(&o, err, "-x"));
	EXPECT_NE(NULL, strstr(err, "-x"));
	EXPECT_EQ(-1, PARSE(&o, err, "--nosuch"));
	EXPECT_NE(NULL, strstr(err, "--nosuch"));
	EXPECT_EQ(-1, PARSE(&o, err, "-n"));
	EXPECT_NE(NULL, strstr(err, "argument"));
	EXPECT_EQ(-1, PARSE(&o, err, "stray"));
	EXPECT_NE(NULL, strstr(err, "stray"));
	/* avg exists for floating point only */
	EXPECT_EQ(-1, PARSE(&o, err, "-d", "int32", "-o", "avg"));
	EXPECT_NE(NULL, strstr(err, "avg"));
	EXPECT_EQ(0, PARSE(&o, err, "-d", "int32,fp32", "-o", "avg"));
	EXPECT_EQ(0, PARSE(&o, err, "-C", "allgather", "-d", "int32", "-o", "avg"));
	/* -b 0 needs an increment; too long sweeps are refused */
	EXPECT_EQ(-1, PARSE(&o, err, "-b", "0"));
	EXPECT_EQ(0, PARSE(&o, err, "-b", "0", "-e", "8", "-i", "4"));
	EXPECT_EQ(-1, PARSE(&o, err, "-b", "1", "-e", "1M", "-i", "1"));
	EXPECT_NE(NULL, strstr(err, "sizes"));
	EXPECT_EQ(-1, PARSE(&o, err, "-J", "-", "-S", "-"));
}

TEST(names)
{
	int i;

	for (i = 0; i < KCOLL_NUM_COLLECTIVES; i++)
		EXPECT_EQ(i, perf_coll_from_name(perf_coll_name(i)));
	for (i = 0; i < KCOLL_NUM_DATATYPES; i++) {
		EXPECT_EQ(i, perf_dtype_from_name(perf_dtype_name(i)));
		EXPECT_NE(0, perf_dtype_size(i));
	}
	for (i = 0; i < KCOLL_NUM_RED_OPS; i++)
		EXPECT_EQ(i, perf_op_from_name(perf_op_name(i)));
	for (i = 0; i < KCOLL_NUM_ALGORITHMS; i++)
		EXPECT_EQ(i, perf_algo_from_name(perf_algo_name(i)));
	EXPECT_EQ(NULL, perf_coll_name(KCOLL_NUM_COLLECTIVES));
	EXPECT_EQ(NULL, perf_dtype_name(-1));
	EXPECT_EQ(0, perf_dtype_size(KCOLL_NUM_DATATYPES));
	EXPECT_TRUE(perf_op_valid(KCOLL_BF16, KCOLL_AVG));
	EXPECT_FALSE(perf_op_valid(KCOLL_UINT64, KCOLL_AVG));
	EXPECT_TRUE(perf_op_valid(KCOLL_UINT64, KCOLL_PROD));
}

TEST(count_and_geometry)
{
	size_t total, s, r;

	/* one rank's buffer */
	EXPECT_EQ(262144, perf_count(KCOLL_ALLREDUCE, 1 << 20, KCOLL_FP32, 4, &total));
	EXPECT_EQ(1 << 20, total);
	EXPECT_EQ(1, perf_count(KCOLL_ALLREDUCE, 4, KCOLL_FP64, 4, &total));
	EXPECT_EQ(8, total);
	EXPECT_EQ(3, perf_count(KCOLL_BROADCAST, 7, KCOLL_FP16, 2, &total));
	EXPECT_EQ(6, total);
	/* the whole buffer of nranks blocks */
	EXPECT_EQ(65536, perf_count(KCOLL_ALLGATHER, 1 << 20, KCOLL_FP32, 4, &total));
	EXPECT_EQ(1 << 20, total);
	EXPECT_EQ(1, perf_count(KCOLL_ALLTOALL, 4, KCOLL_FP32, 4, &total));
	EXPECT_EQ(16, total);
	EXPECT_EQ(8, perf_count(KCOLL_REDUCE_SCATTER, 100, KCOLL_INT32, 3, &total));
	EXPECT_EQ(96, total);
	EXPECT_EQ(0, perf_count(KCOLL_BARRIER, 1 << 20, KCOLL_FP32, 4, &total));
	EXPECT_EQ(0, total);

	perf_buf_elems(KCOLL_ALLGATHER, 5, 3, &s, &r);
	EXPECT_EQ(5, s);
	EXPECT_EQ(15, r);
	perf_buf_elems(KCOLL_REDUCE_SCATTER, 5, 3, &s, &r);
	EXPECT_EQ(15, s);
	EXPECT_EQ(5, r);
	perf_buf_elems(KCOLL_ALLTOALL, 5, 3, &s, &r);
	EXPECT_EQ(15, s);
	EXPECT_EQ(15, r);
	perf_buf_elems(KCOLL_SCATTER, 5, 3, &s, &r);
	EXPECT_EQ(15, s);
	EXPECT_EQ(5, r);
	perf_buf_elems(KCOLL_GATHER, 5, 3, &s, &r);
	EXPECT_EQ(5, s);
	EXPECT_EQ(15, r);
	perf_buf_elems(KCOLL_ALLREDUCE, 5, 3, &s, &r);
	EXPECT_EQ(5, s);
	EXPECT_EQ(5, r);
}

TEST(iteration_cap)
{
	struct perf_opts o;
	int w, n;

	perf_opts_default(&o);
	perf_iters_for(&o, 16 << 20, &w, &n);
	EXPECT_EQ(5, w);
	EXPECT_EQ(20, n);
	o.iter_bytes = 32 << 20;
	perf_iters_for(&o, 16 << 20, &w, &n);
	EXPECT_EQ(2, n);
	EXPECT_EQ(2, w);
	perf_iters_for(&o, 64 << 20, &w, &n);
	EXPECT_EQ(1, n);
	EXPECT_EQ(1, w);
	perf_iters_for(&o, 8, &w, &n);
	EXPECT_EQ(20, n);
	EXPECT_EQ(5, w);
}

TEST(half_conversions)
{
	int i;

	EXPECT_EQ(0x3c00, perf_f32_to_f16(1.0f));
	EXPECT_EQ(0xc000, perf_f32_to_f16(-2.0f));
	EXPECT_EQ(0x7bff, perf_f32_to_f16(65504.0f));
	EXPECT_EQ(0x7c00, perf_f32_to_f16(65520.0f));	/* rounds to inf */
	EXPECT_EQ(0x7bff, perf_f32_to_f16(65519.0f));
	EXPECT_EQ(0x0001, perf_f32_to_f16(ldexpf(1, -24)));
	EXPECT_EQ(0x0000, perf_f32_to_f16(ldexpf(1, -26)));
	EXPECT_EQ(0x3c00, perf_f32_to_f16(1.0f + ldexpf(1, -11)));	/* tie to even */
	EXPECT_EQ(0x3c02, perf_f32_to_f16(1.0f + 3 * ldexpf(1, -11)));
	EXPECT_EQ(0x3f80, perf_f32_to_bf16(1.0f));
	EXPECT_EQ(0xc040, perf_f32_to_bf16(-3.0f));
	EXPECT_EQ(1.0f, perf_f16_to_f32(0x3c00));
	EXPECT_EQ(65504.0f, perf_f16_to_f32(0x7bff));
	EXPECT_EQ(ldexpf(1, -24), perf_f16_to_f32(0x0001));
	EXPECT_TRUE(isinf(perf_f16_to_f32(0x7c00)));
	EXPECT_TRUE(isnan(perf_f16_to_f32(0x7e00)));
	EXPECT_EQ(-3.0f, perf_bf16_to_f32(0xc040));
	for (i = -2048; i <= 2048; i++)
		ASSERT_EQ((float)i, perf_f16_to_f32(perf_f32_to_f16((float)i)));
	for (i = -256; i <= 256; i++)
		ASSERT_EQ((float)i, perf_bf16_to_f32(perf_f32_to_bf16((float)i)));
}

TEST(store_load_wrap)
{
	unsigned char b[8];

	perf_store_int(b, 0, KCOLL_INT8, 130);
	EXPECT_EQ(-126, perf_load(b, 0, KCOLL_INT8));
	perf_store_int(b, 0, KCOLL_UINT8, 256);
	EXPECT_EQ(0, perf_load(b, 0, KCOLL_UINT8));
	perf_store_int(b, 0, KCOLL_UINT32, -1);
	EXPECT_EQ(4294967295.0, perf_load(b, 0, KCOLL_UINT32));
	perf_store_int(b, 0, KCOLL_INT64, -5);
	EXPECT_EQ(-5, perf_load(b, 0, KCOLL_INT64));
	perf_store_int(b, 0, KCOLL_FP16, 7);
	EXPECT_EQ(7, perf_load(b, 0, KCOLL_FP16));
	perf_store_double(b, 0, KCOLL_FP64, 0.25);
	EXPECT_EQ(0.25, perf_load(b, 0, KCOLL_FP64));
}

TEST(input_ranges)
{
	struct perf_case pc = { .coll = KCOLL_ALLREDUCE, .dtype = KCOLL_INT8, .nranks = 4 };
	int r, op, seen[200] = { 0 };
	size_t i;
	int64_t v;

	for (op = 0; op < KCOLL_NUM_RED_OPS; op++) {
		pc.op = op;
		for (r = 0; r < 8; r++) {
			for (i = 0; i < 1000; i++) {
				v = perf_input(&pc, r, i);
				if (op == KCOLL_SUM || op == KCOLL_AVG) {
					ASSERT_TRUE(v >= 0 && v <= 3);
				} else if (op == KCOLL_PROD) {
					ASSERT_TRUE(v == 1 || v == 2);
				} else {
					ASSERT_TRUE(v >= -8 && v <= 7);
				}
			}
		}
	}
	pc.dtype = KCOLL_UINT8;
	pc.op = KCOLL_MIN;
	for (i = 0; i < 1000; i++)
		ASSERT_TRUE(perf_input(&pc, 1, i) >= 0);
	/* data movement: 0..99, and every value turns up */
	pc.coll = KCOLL_ALLGATHER;
	for (i = 0; i < 20000; i++) {
		v = perf_input(&pc, (int)(i % 5), i);
		ASSERT_TRUE(v >= 0 && v <= 99);
		seen[v] = 1;
	}
	for (i = 0; i < 100; i++)
		EXPECT_EQ(1, seen[i]);
	/* different ranks give different data */
	EXPECT_NE(0, memcmp((int64_t[]){ perf_input(&pc, 0, 0), perf_input(&pc, 0, 1),
					 perf_input(&pc, 0, 2), perf_input(&pc, 0, 3) },
			    (int64_t[]){ perf_input(&pc, 1, 0), perf_input(&pc, 1, 1),
					 perf_input(&pc, 1, 2), perf_input(&pc, 1, 3) },
			    4 * sizeof(int64_t)));
}

/* ---- every collective simulated on nranks ranks -------------------------------------- */

/* acc = acc OP v, rounded to the datatype (integers wrap). */
static void combine_elem(void *acc, const void *v, int dtype, int op)
{
	double a = perf_load(acc, 0, dtype), b = perf_load(v, 0, dtype), r;

	if (!perf_dtype_is_float(dtype)) {
		int64_t x = (int64_t)a, y = (int64_t)b;

		switch (op) {
		case KCOLL_SUM: x = (int64_t)((uint64_t)x + (uint64_t)y); break;
		case KCOLL_PROD: x = (int64_t)((uint64_t)x * (uint64_t)y); break;
		case KCOLL_MIN: x = y < x ? y : x; break;
		case KCOLL_MAX: x = y > x ? y : x; break;
		}
		perf_store_int(acc, 0, dtype, x);
		return;
	}
	switch (op) {
	case KCOLL_SUM: case KCOLL_AVG: r = a + b; break;
	case KCOLL_PROD: r = a * b; break;
	case KCOLL_MIN: r = b < a ? b : a; break;
	default: r = b > a ? b : a; break;
	}
	perf_store_double(acc, 0, dtype, r);
}

/*
 * Result of rank @r into @out for the inputs @in[j] (each rank's send buffer), written
 * independently of perf_expected(): by moving and reducing elements.
 */
static void simulate(const struct perf_case *pc, int r, unsigned char **in, unsigned char *out)
{
	size_t c = pc->count, es = perf_dtype_size(pc->dtype), i, src;
	int n = pc->nranks, j;

	switch (pc->coll) {
	case KCOLL_BROADCAST:
		memcpy(out, in[pc->root], c * es);
		return;
	case KCOLL_SCATTER:
		memcpy(out, in[pc->root] + (size_t)r * c * es, c * es);
		return;
	case KCOLL_GATHER:
	case KCOLL_ALLGATHER:
	case KCOLL_ALLGATHERV:
		for (j = 0; j < n; j++)
			memcpy(out + (size_t)j * c * es, in[j], c * es);
		return;
	case KCOLL_ALLTOALL:
	case KCOLL_ALLTOALLV:
		for (j = 0; j < n; j++)
			memcpy(out + (size_t)j * c * es, in[j] + (size_t)r * c * es, c * es);
		return;
	default:
		break;
	}
	for (i = 0; i < c; i++) {
		src = perf_coll_is_reduction(pc->coll) && (pc->coll == KCOLL_REDUCE_SCATTER ||
			pc->coll == KCOLL_REDUCE_SCATTERV) ? (size_t)r * c + i : i;
		/* reverse rank order, rounding after every step */
		memcpy(out + i * es, in[n - 1] + src * es, es);
		for (j = n - 2; j >= 0; j--)
			combine_elem(out + i * es, in[j] + src * es, pc->dtype, pc->op);
		if (pc->op == KCOLL_AVG)
			perf_store_double(out, i, pc->dtype, perf_load(out, i, pc->dtype) / n);
	}
}

/*
 * Fill every rank's inputs, simulate the collective, check every rank's result (must be 0
 * wrong) and that one corrupted element counts as 1.  Returns the failures, logged.
 */
static int check_one(int n, int coll, int d, int op, size_t count, unsigned char **in,
		     unsigned char *out, int *cases)
{
	struct perf_case pc = { .coll = coll, .dtype = d, .op = op, .nranks = n, .count = count,
				.root = perf_coll_has_root(coll) ? n - 1 : 0 };
	size_t es = perf_dtype_size(d), off, relems, w;
	int rank, fails = 0;
	unsigned char *res;

	for (rank = 0; rank < n; rank++) {
		pc.rank = rank;
		perf_fill(&pc, in[rank]);
	}
	for (rank = 0; rank < n; rank++) {
		pc.rank = rank;
		memset(out, 0xa5, 5 * 33 * 8);
		simulate(&pc, rank, in, out);
		relems = perf_result_elems(&pc, &off);
		w = perf_check(&pc, out);
		if (off || w) {
			fprintf(stderr,
				"# %s %s %s n=%d rank %d count %zu: offset %zu, %zu wrong\n",
				perf_coll_name(coll), perf_dtype_name(d),
				op >= 0 ? perf_op_name(op) : "-", n, rank, count, off, w);
			fails++;
			continue;
		}
		if (!relems)
			continue;
		res = out + (relems / 2) * es;
		res[es - 1] ^= 0x40;
		w = perf_check(&pc, out);
		if (w != 1) {
			fprintf(stderr, "# %s %s n=%d rank %d: a corrupted element counts %zu\n",
				perf_coll_name(coll), perf_dtype_name(d), n, rank, w);
			fails++;
		}
		(*cases)++;
	}
	return fails;
}

TEST(expected_matches_simulation)
{
	static const size_t counts[] = { 1, 7, 33 };
	unsigned char *in[5], *out;
	int coll, d, op, n, rank, ci, cases = 0, fails = 0;

	for (rank = 0; rank < 5; rank++)
		in[rank] = malloc(5 * 33 * 8);
	out = malloc(5 * 33 * 8);
	ASSERT_NE(NULL, out);
	for (n = 1; n <= 5; n++) {
		for (coll = 0; coll < KCOLL_NUM_COLLECTIVES; coll++) {
			if (coll == KCOLL_BARRIER)
				continue;
			for (d = 0; d < KCOLL_NUM_DATATYPES; d++) {
				op = perf_coll_is_reduction(coll) ? 0 : -1;
				for (; op < KCOLL_NUM_RED_OPS; op++) {
					if (op >= 0 && !perf_op_valid(d, op))
						continue;
					for (ci = 0; ci < 3; ci++)
						fails += check_one(n, coll, d, op, counts[ci],
								   in, out, &cases);
					if (op < 0)
						break;
				}
			}
		}
	}
	for (rank = 0; rank < 5; rank++)
		free(in[rank]);
	free(out);
	TH_LOG("%d simulated results checked", cases);
	EXPECT_EQ(0, fails);
	EXPECT_GT(cases, 1000);
}

TEST(in_place_offsets)
{
	struct perf_case pc = { .coll = KCOLL_SCATTER, .dtype = KCOLL_FP32, .root = 2,
				.rank = 2, .nranks = 4, .count = 3, .in_place = true };
	float buf[12];
	size_t off, i;

	/* The root's own block stays where it is in its sendbuf. */
	EXPECT_EQ(3, perf_result_elems(&pc, &off));
	EXPECT_EQ(6, off);
	perf_fill(&pc, buf);
	EXPECT_EQ(0, perf_check(&pc, buf));
	for (i = 0; i < 6; i++)
		buf[i] = -1;		/* other blocks are not looked at */
	EXPECT_EQ(0, perf_check(&pc, buf));
	buf[7] = -1;
	EXPECT_EQ(1, perf_check(&pc, buf));
	pc.rank = 1;
	EXPECT_EQ(3, perf_result_elems(&pc, &off));
	EXPECT_EQ(0, off);
	/* Reduce and gather results exist at the root only. */
	pc.coll = KCOLL_REDUCE;
	pc.op = KCOLL_SUM;
	EXPECT_EQ(0, perf_result_elems(&pc, &off));
	pc.coll = KCOLL_GATHER;
	EXPECT_EQ(0, perf_result_elems(&pc, &off));
	pc.rank = 2;
	EXPECT_EQ(12, perf_result_elems(&pc, &off));
}

TEST(median)
{
	double a[] = { 5, 1, 3 }, b[] = { 4, 1, 3, 2 }, c[] = { 7 };

	EXPECT_EQ(3, perf_median(a, 3));
	EXPECT_EQ(2.5, perf_median(b, 4));
	EXPECT_EQ(7, perf_median(c, 1));
	EXPECT_EQ(0, perf_median(c, 0));
}

TEST_HARNESS_MAIN
