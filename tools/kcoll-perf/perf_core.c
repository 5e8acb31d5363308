// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll-perf's pure parts: size sweep, bus-bandwidth factors, buffer geometry,
 * deterministic inputs and expected results.  Of libkcoll, only its names of the uAPI's
 * enums (kcoll_*_str(), lib/names.c: no device, no communicator).
 *
 * Inputs are small integers chosen from a hash of (rank, index), so that every result is
 * exact in every datatype whatever order the ranks' contributions are combined in:
 *   SUM, AVG	0..3 (sums of up to 85 ranks are exact integers even in bf16; integer types
 *		wrap modulo 2^bits, which does not depend on the order either)
 *   PROD	1 or 2 (products are powers of two: exact until they overflow, alike everywhere)
 *   MIN, MAX	-8..7 (0..15 for unsigned types)
 *   otherwise	0..99 (data movement: the value tells which rank and index it came from)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "perf_core.h"

/* The names are libkcoll's (kcoll_*_str()), with nccl-tests' spellings accepted too. */
const char *perf_coll_name(int c) { return kcoll_collective_str(c); }
const char *perf_dtype_name(int d) { return kcoll_datatype_str(d); }
const char *perf_op_name(int o) { return kcoll_red_op_str(o); }
const char *perf_algo_name(int a) { return kcoll_algorithm_str(a); }

int perf_coll_from_name(const char *s)
{
	if (!strcmp(s, "all_reduce"))
		return KCOLL_ALLREDUCE;
	if (!strcmp(s, "all_gather"))
		return KCOLL_ALLGATHER;
	if (!strcmp(s, "alltoall") || !strcmp(s, "all_to_all"))
		return KCOLL_ALLTOALL;
	if (!strcmp(s, "bcast"))
		return KCOLL_BROADCAST;
	return kcoll_collective_from_str(s);
}

int perf_dtype_from_name(const char *s)
{
	if (!strcmp(s, "float"))
		return KCOLL_FP32;
	if (!strcmp(s, "double"))
		return KCOLL_FP64;
	if (!strcmp(s, "half"))
		return KCOLL_FP16;
	return kcoll_datatype_from_str(s);
}

int perf_op_from_name(const char *s) { return kcoll_red_op_from_str(s); }
int perf_algo_from_name(const char *s) { return kcoll_algorithm_from_str(s); }

size_t perf_dtype_size(int d)
{
	return kcoll_datatype_size(d);
}

bool perf_dtype_is_float(int d)
{
	return d == KCOLL_FP16 || d == KCOLL_BF16 || d == KCOLL_FP32 || d == KCOLL_FP64;
}

bool perf_dtype_is_signed(int d)
{
	return d == KCOLL_INT8 || d == KCOLL_INT32 || d == KCOLL_INT64 || perf_dtype_is_float(d);
}

bool perf_coll_is_reduction(int c)
{
	return c == KCOLL_REDUCE || c == KCOLL_ALLREDUCE || c == KCOLL_REDUCE_SCATTER ||
	       c == KCOLL_REDUCE_SCATTERV;
}

bool perf_coll_has_root(int c)
{
	return c == KCOLL_BROADCAST || c == KCOLL_SCATTER || c == KCOLL_GATHER || c == KCOLL_REDUCE;
}

bool perf_op_valid(int dtype, int op)
{
	if (dtype < 0 || dtype >= KCOLL_NUM_DATATYPES || op < 0 || op >= KCOLL_NUM_RED_OPS)
		return false;
	return op != KCOLL_AVG || perf_dtype_is_float(dtype);
}

/* Collectives where the sweep size is the whole buffer of nranks blocks. */
static bool per_rank_blocks(int c)
{
	return c == KCOLL_ALLGATHER || c == KCOLL_REDUCE_SCATTER || c == KCOLL_ALLTOALL ||
	       c == KCOLL_GATHER || c == KCOLL_SCATTER || c == KCOLL_ALLGATHERV ||
	       c == KCOLL_REDUCE_SCATTERV || c == KCOLL_ALLTOALLV;
}

/* ---- sweep, factors, geometry (options: perf_opts.c) ----------------------------------- */

int perf_parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (1ULL << 40))
		return -1;
	*out = v;
	return 0;
}

size_t perf_sizes(const struct perf_opts *o, size_t *out, size_t max)
{
	size_t n = 0, s = o->minbytes, next;

	while (s <= o->maxbytes && n < max) {
		out[n++] = s;
		if (o->stepbytes)
			next = s + o->stepbytes;
		else
			next = (size_t)((double)s * o->stepfactor);
		if (next <= s)		/* a factor below 2 on tiny sizes: at least one byte more */
			next = s + 1;
		s = next;
	}
	return n;
}

double perf_busbw_factor(int coll, int n)
{
	if (n < 1)
		return 0;
	switch (coll) {
	case KCOLL_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case KCOLL_ALLGATHER:
	case KCOLL_ALLGATHERV:
	case KCOLL_REDUCE_SCATTER:
	case KCOLL_REDUCE_SCATTERV:
	case KCOLL_ALLTOALL:
	case KCOLL_ALLTOALLV:
	case KCOLL_GATHER:
	case KCOLL_SCATTER:
		return (double)(n - 1) / n;
	case KCOLL_BROADCAST:
	case KCOLL_REDUCE:
		return 1.0;
	default:
		return 0;
	}
}

size_t perf_count(int coll, size_t bytes, int dtype, int nranks, size_t *total_bytes)
{
	size_t es = perf_dtype_size(dtype), count;

	if (coll == KCOLL_BARRIER || !es || nranks < 1) {
		*total_bytes = 0;
		return 0;
	}
	if (per_rank_blocks(coll)) {
		count = bytes / (es * nranks);
		if (!count)
			count = 1;
		*total_bytes = count * es * nranks;
	} else {
		count = bytes / es;
		if (!count)
			count = 1;
		*total_bytes = count * es;
	}
	return count;
}

void perf_buf_elems(int coll, size_t c, int n, size_t *send, size_t *recv)
{
	size_t nc = c * (size_t)n;

	switch (coll) {
	case KCOLL_ALLGATHER:
	case KCOLL_ALLGATHERV:
	case KCOLL_GATHER:
		*send = c;
		*recv = nc;
		break;
	case KCOLL_REDUCE_SCATTER:
	case KCOLL_REDUCE_SCATTERV:
	case KCOLL_SCATTER:
		*send = nc;
		*recv = c;
		break;
	case KCOLL_ALLTOALL:
	case KCOLL_ALLTOALLV:
		*send = nc;
		*recv = nc;
		break;
	case KCOLL_BARRIER:
		*send = 0;
		*recv = 0;
		break;
	default:
		*send = c;
		*recv = c;
	}
}

void perf_iters_for(const struct perf_opts *o, size_t bytes, int *warmup, int *iters)
{
	int n = o->iters, w = o->warmup;

	if (o->iter_bytes && bytes) {
		size_t cap = o->iter_bytes / bytes;

		if (cap < 1)
			cap = 1;
		if (cap < (size_t)n)
			n = (int)cap;
		if (w > n)
			w = n;
	}
	*iters = n;
	*warmup = w;
}

/* ---- elements ---------------------------------------------------------------------- */

uint16_t perf_f32_to_f16(float f)
{
	uint32_t x, mant, rem, half_ulp;
	uint16_t sign, h;
	int exp;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	if ((x & 0x7fffffff) > 0x7f800000)
		return sign | 0x7e00;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffff;
	if (exp >= 31)
		return sign | 0x7c00;
	if (exp <= 0) {				/* subnormal half, or zero */
		int shift;

		if (exp < -10)
			return sign;
		mant |= 0x800000;
		shift = 14 - exp;
		h = mant >> shift;
		rem = mant & ((1U << shift) - 1);
		half_ulp = 1U << (shift - 1);
		if (rem > half_ulp || (rem == half_ulp && (h & 1)))
			h++;
		return sign | h;
	}
	h = sign | (exp << 10) | (mant >> 13);
	rem = mant & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;				/* a carry into the exponent is right, up to inf */
	return h;
}

float perf_f16_to_f32(uint16_t h)
{
	int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	float v;

	if (exp == 0)
		v = ldexpf((float)mant, -24);
	else if (exp == 31)
		v = mant ? NAN : INFINITY;
	else
		v = ldexpf((float)(1024 + mant), exp - 25);
	return (h & 0x8000) ? -v : v;
}

uint16_t perf_f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffff) > 0x7f800000)
		return (x >> 16) | 0x40;
	x += 0x7fff + ((x >> 16) & 1);
	return x >> 16;
}

float perf_bf16_to_f32(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

void perf_store_double(void *buf, size_t i, int dtype, double v)
{
	float f = (float)v;
	uint16_t h;

	switch (dtype) {
	case KCOLL_FP16:
		h = perf_f32_to_f16(f);
		memcpy((char *)buf + 2 * i, &h, 2);
		break;
	case KCOLL_BF16:
		h = perf_f32_to_bf16(f);
		memcpy((char *)buf + 2 * i, &h, 2);
		break;
	case KCOLL_FP32:
		memcpy((char *)buf + 4 * i, &f, 4);
		break;
	case KCOLL_FP64:
		memcpy((char *)buf + 8 * i, &v, 8);
		break;
	default:
		perf_store_int(buf, i, dtype, (int64_t)v);
	}
}

void perf_store_int(void *buf, size_t i, int dtype, int64_t v)
{
	uint64_t u = (uint64_t)v;	/* integer types wrap modulo 2^bits */
	uint32_t u32 = (uint32_t)u;
	uint8_t u8 = (uint8_t)u;

	switch (dtype) {
	case KCOLL_INT8:
	case KCOLL_UINT8:
		((uint8_t *)buf)[i] = u8;
		break;
	case KCOLL_INT32:
	case KCOLL_UINT32:
		memcpy((char *)buf + 4 * i, &u32, 4);
		break;
	case KCOLL_INT64:
	case KCOLL_UINT64:
		memcpy((char *)buf + 8 * i, &u, 8);
		break;
	default:
		perf_store_double(buf, i, dtype, (double)v);
	}
}

double perf_load(const void *buf, size_t i, int dtype)
{
	const char *p = buf;
	uint16_t h;
	uint32_t u32;
	uint64_t u64;
	float f;
	double d;

	switch (dtype) {
	case KCOLL_INT8:
		return (int8_t)((const uint8_t *)p)[i];
	case KCOLL_UINT8:
		return ((const uint8_t *)p)[i];
	case KCOLL_INT32:
		memcpy(&u32, p + 4 * i, 4);
		return (int32_t)u32;
	case KCOLL_UINT32:
		memcpy(&u32, p + 4 * i, 4);
		return u32;
	case KCOLL_INT64:
		memcpy(&u64, p + 8 * i, 8);
		return (double)(int64_t)u64;
	case KCOLL_UINT64:
		memcpy(&u64, p + 8 * i, 8);
		return (double)u64;
	case KCOLL_FP16:
		memcpy(&h, p + 2 * i, 2);
		return perf_f16_to_f32(h);
	case KCOLL_BF16:
		memcpy(&h, p + 2 * i, 2);
		return perf_bf16_to_f32(h);
	case KCOLL_FP32:
		memcpy(&f, p + 4 * i, 4);
		return f;
	case KCOLL_FP64:
		memcpy(&d, p + 8 * i, 8);
		return d;
	}
	return NAN;
}

/* ---- inputs and expected results ----------------------------------------------------- */

static uint32_t mix(int rank, size_t idx)
{
	uint32_t h = (uint32_t)rank * 0x9e3779b1U ^ (uint32_t)idx * 0x85ebca77U ^
		     (uint32_t)((uint64_t)idx >> 32) * 0xc2b2ae3dU;

	h ^= h >> 15;
	h *= 0x2c1b3c6dU;
	h ^= h >> 12;
	h *= 0x297a2d39U;
	h ^= h >> 15;
	return h;
}

int64_t perf_input(const struct perf_case *pc, int rank, size_t idx)
{
	uint32_t h = mix(rank, idx);

	if (!perf_coll_is_reduction(pc->coll))
		return h % 100;
	switch (pc->op) {
	case KCOLL_SUM:
	case KCOLL_AVG:
		return h % 4;
	case KCOLL_PROD:
		return (h % 8) ? 1 : 2;
	default:	/* MIN, MAX */
		return perf_dtype_is_signed(pc->dtype) ? (int64_t)(h % 16) - 8 : h % 16;
	}
}

void perf_fill(const struct perf_case *pc, void *sendbuf)
{
	size_t send, recv, i;

	perf_buf_elems(pc->coll, pc->count, pc->nranks, &send, &recv);
	for (i = 0; i < send; i++)
		perf_store_int(sendbuf, i, pc->dtype, perf_input(pc, pc->rank, i));
}

size_t perf_result_elems(const struct perf_case *pc, size_t *offset)
{
	size_t c = pc->count, n = (size_t)pc->nranks;
	bool root = pc->rank == pc->root;

	*offset = 0;
	switch (pc->coll) {
	case KCOLL_BROADCAST:
	case KCOLL_ALLREDUCE:
	case KCOLL_REDUCE_SCATTER:
	case KCOLL_REDUCE_SCATTERV:
		return c;
	case KCOLL_REDUCE:
		return root ? c : 0;
	case KCOLL_GATHER:
		return root ? n * c : 0;
	case KCOLL_SCATTER:
		/* In place, the root's recvbuf is its sendbuf: its own block stays there. */
		if (root && pc->in_place)
			*offset = (size_t)pc->root * c;
		return c;
	case KCOLL_ALLGATHER:
	case KCOLL_ALLGATHERV:
	case KCOLL_ALLTOALL:
	case KCOLL_ALLTOALLV:
		return n * c;
	default:
		return 0;
	}
}

/* Mantissa precision (bits, with the implicit one) of the float types; 0 for integers. */
static int precision(int dtype)
{
	switch (dtype) {
	case KCOLL_FP16: return 11;
	case KCOLL_BF16: return 8;
	case KCOLL_FP32: return 24;
	case KCOLL_FP64: return 53;
	}
	return 0;
}

double perf_expected(const struct perf_case *pc, size_t i, void *out)
{
	size_t c = pc->count;
	int n = pc->nranks, j, twos, p = precision(pc->dtype);
	size_t src;
	int64_t acc;
	double tol = 0, eps = p ? ldexp(1.0, 1 - p) : 0;

	switch (pc->coll) {
	case KCOLL_BROADCAST:
		perf_store_int(out, 0, pc->dtype, perf_input(pc, pc->root, i));
		return 0;
	case KCOLL_SCATTER:
		perf_store_int(out, 0, pc->dtype,
			       perf_input(pc, pc->root, (size_t)pc->rank * c + i));
		return 0;
	case KCOLL_GATHER:
	case KCOLL_ALLGATHER:
	case KCOLL_ALLGATHERV:
		perf_store_int(out, 0, pc->dtype, perf_input(pc, (int)(i / c), i % c));
		return 0;
	case KCOLL_ALLTOALL:
	case KCOLL_ALLTOALLV:
		perf_store_int(out, 0, pc->dtype,
			       perf_input(pc, (int)(i / c), (size_t)pc->rank * c + i % c));
		return 0;
	case KCOLL_REDUCE:
	case KCOLL_ALLREDUCE:
		src = i;
		break;
	case KCOLL_REDUCE_SCATTER:
	case KCOLL_REDUCE_SCATTERV:
		src = (size_t)pc->rank * c + i;
		break;
	default:
		return 0;
	}

	/* A reduction over every rank's element src; PROD counts its factors of two. */
	acc = perf_input(pc, 0, src);
	twos = acc == 2;
	for (j = 1; j < n; j++) {
		int64_t v = perf_input(pc, j, src);

		switch (pc->op) {
		case KCOLL_SUM:
		case KCOLL_AVG:
			acc += v;
			break;
		case KCOLL_PROD:
			twos += v == 2;
			break;
		case KCOLL_MIN:
			acc = v < acc ? v : acc;
			break;
		case KCOLL_MAX:
			acc = v > acc ? v : acc;
			break;
		}
	}
	/* Float sums past the exactly representable integers depend on the order: allow it. */
	if (p && (pc->op == KCOLL_SUM || pc->op == KCOLL_AVG) && 3.0 * n > ldexp(1.0, p))
		tol = eps * n;
	switch (pc->op) {
	case KCOLL_PROD:
		if (perf_dtype_is_float(pc->dtype))	/* 2^twos, inf once it overflows */
			perf_store_double(out, 0, pc->dtype, ldexp(1.0, twos));
		else					/* modulo 2^64, then 2^bits */
			perf_store_int(out, 0, pc->dtype, twos < 64 ? (int64_t)(1ULL << twos) : 0);
		return tol;
	case KCOLL_AVG:
		perf_store_double(out, 0, pc->dtype, (double)acc / n);
		return tol + 4 * eps;
	default:
		perf_store_int(out, 0, pc->dtype, acc);
		return tol;
	}
}

size_t perf_check(const struct perf_case *pc, const void *recvbuf)
{
	size_t off, n = perf_result_elems(pc, &off), es = perf_dtype_size(pc->dtype), i, wrong = 0;
	const char *res = (const char *)recvbuf + off * es;
	unsigned char want[8];
	double tol, got, exp;

	for (i = 0; i < n; i++) {
		tol = perf_expected(pc, i, want);
		if (!memcmp(res + i * es, want, es))
			continue;
		if (tol > 0) {
			got = perf_load(res, i, pc->dtype);
			exp = perf_load(want, 0, pc->dtype);
			if (fabs(got - exp) <= tol * (fabs(exp) > 1 ? fabs(exp) : 1))
				continue;
		}
		wrong++;
	}
	return wrong;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double perf_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
