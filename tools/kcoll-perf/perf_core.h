/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcoll-perf's pure parts, without a kernel module (of libkcoll only the enums' names), so
 * that the host unit test (selftests/host/test_perf.c) can check them: option parsing, the
 * size sweep, bus-bandwidth factors, buffer geometry per collective, deterministic inputs
 * and the expected results.
 */
#ifndef _KCOLL_PERF_CORE_H
#define _KCOLL_PERF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <linux/kcoll.h>

#define PERF_MAX_SIZES		256

/* Bits of perf_opts.place, .mem and .mode. */
#define PERF_PLACE_OUT		(1U << 0)
#define PERF_PLACE_IN		(1U << 1)
#define PERF_MEM_USER		(1U << 0)
#define PERF_MEM_KBUF		(1U << 1)
#define PERF_MODE_BLOCKING	(1U << 0)
#define PERF_MODE_NONBLOCKING	(1U << 1)

struct perf_opts {
	unsigned int colls;		/* bit (1 << enum kcoll_collective) */
	unsigned int dtypes;		/* bit (1 << enum kcoll_datatype) */
	unsigned int ops;		/* bit (1 << enum kcoll_red_op) */
	size_t minbytes, maxbytes;
	double stepfactor;		/* > 1, used when stepbytes is 0 */
	size_t stepbytes;
	int warmup, iters;
	size_t iter_bytes;		/* 0: always iters timed iterations */
	int root;
	bool check;
	unsigned int place, mem, mode;
	int agg;			/* non-blocking: operations in flight per round */
	int algo;			/* enum kcoll_algorithm */
	unsigned int timeout_ms;
	const char *json_path;		/* JSON lines; "-" is stdout */
	const char *csv_path;
	int progress;			/* -1: when stderr is a terminal; 0: never; 1: always */
	const char *dev_path;
	const char *hold_path;		/* --hold: keep the comm until this file exists */
};

/* Names of the uAPI enums (kcoll-perf's own tables: the library's may not exist yet). */
const char *perf_coll_name(int coll);
const char *perf_dtype_name(int dtype);
const char *perf_op_name(int op);
const char *perf_algo_name(int algo);
int perf_coll_from_name(const char *s);
int perf_dtype_from_name(const char *s);
int perf_op_from_name(const char *s);
int perf_algo_from_name(const char *s);
size_t perf_dtype_size(int dtype);
bool perf_dtype_is_float(int dtype);
bool perf_dtype_is_signed(int dtype);
bool perf_coll_is_reduction(int coll);
bool perf_coll_has_root(int coll);
/* A (dtype, op) pair the uAPI allows: AVG is for floating point only. */
bool perf_op_valid(int dtype, int op);

/* Defaults, then the command line.  0: run; 1: --help was asked for; -1: error (in @err). */
void perf_opts_default(struct perf_opts *o);
int perf_parse_args(int argc, char **argv, struct perf_opts *o, char *err, size_t errlen);
/* "4096", "64K", "1M", "2G" (binary multiples); -1 when malformed. */
int perf_parse_size(const char *s, size_t *out);
void perf_usage(FILE *f, const char *prog);

/* The sizes of the sweep, in bytes, increasing; returns how many (at most @max). */
size_t perf_sizes(const struct perf_opts *o, size_t *out, size_t max);

/*
 * Bus-bandwidth factor of nccl-tests: busbw = algbw * factor.  ALLREDUCE 2(n-1)/n;
 * ALLGATHER(V), REDUCE_SCATTER(V), ALLTOALL(V), GATHER, SCATTER (n-1)/n; BROADCAST, REDUCE 1;
 * BARRIER 0.
 */
double perf_busbw_factor(int coll, int nranks);

/*
 * Element count passed to the call for a sweep size of @bytes, as nccl-tests: for the
 * collectives where every rank owns a block (ALLGATHER, REDUCE_SCATTER, ALLTOALL, GATHER,
 * SCATTER and the v-variants) @bytes is the whole buffer of nranks blocks, else one rank's
 * buffer.  At least one element; *total_bytes is the size the row reports (0 for BARRIER).
 */
size_t perf_count(int coll, size_t bytes, int dtype, int nranks, size_t *total_bytes);
/* Elements of the send and receive buffers for @count (out of place). */
void perf_buf_elems(int coll, size_t count, int nranks, size_t *send, size_t *recv);

/* Warm-up and timed iterations for a row of @bytes (the --iter-bytes cap). */
void perf_iters_for(const struct perf_opts *o, size_t bytes, int *warmup, int *iters);

/* One collective call, as the check sees it. */
struct perf_case {
	int coll, dtype, op, root;
	int rank, nranks;
	size_t count;
	bool in_place;
};

/* Rank @rank's input element @idx (index into its send buffer): a small integer. */
int64_t perf_input(const struct perf_case *pc, int rank, size_t idx);
/* Fill @sendbuf with this rank's input (what the collective reads from this rank). */
void perf_fill(const struct perf_case *pc, void *sendbuf);
/* Elements of the result this rank checks, and their offset from the recvbuf pointer. */
size_t perf_result_elems(const struct perf_case *pc, size_t *offset);
/*
 * The expected result element @i (0 <= i < perf_result_elems()) encoded in the datatype into
 * @out (perf_dtype_size() bytes); returns the tolerance (relative) a float may be off by.
 */
double perf_expected(const struct perf_case *pc, size_t i, void *out);
/* Elements of the result at @recvbuf (the pointer passed to the call) that are wrong. */
size_t perf_check(const struct perf_case *pc, const void *recvbuf);

/* Store an integer / a double as element @i of @buf in @dtype; load it as a double. */
void perf_store_int(void *buf, size_t i, int dtype, int64_t v);
void perf_store_double(void *buf, size_t i, int dtype, double v);
double perf_load(const void *buf, size_t i, int dtype);
uint16_t perf_f32_to_f16(float f);
float perf_f16_to_f32(uint16_t h);
uint16_t perf_f32_to_bf16(float f);
float perf_bf16_to_f32(uint16_t b);

/* Median of @n samples (sorts @v). */
double perf_median(double *v, size_t n);

#endif /* _KCOLL_PERF_CORE_H */
