/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reference values of the reduction tests (kcoll_coll_test.c, kcoll_local_test.c): every
 * rank's input is a small integer in every datatype, so each reference is exact whatever
 * the reduction order: integer results wrap as the documented semantics say, float
 * results are exact, AVG divides once (in fp32 for fp16/bf16, rounded to nearest even).
 */
#ifndef KCOLL_TEST_REF_H
#define KCOLL_TEST_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <linux/kcoll.h>

static const unsigned int esize[KCOLL_NUM_DATATYPES] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };

static bool is_float(int dt) { return dt >= KCOLL_FP16; }
static bool is_signed(int dt)
{
	return dt == KCOLL_INT8 || dt == KCOLL_INT32 || dt == KCOLL_INT64 || is_float(dt);
}

/* The input value of rank @r at logical index @i: a small integer, negative if signed. */
static int64_t val(int dt, unsigned int r, uint64_t i)
{
	int64_t v = (int64_t)((r * 7 + i * 3 + (i >> 9)) % 7);

	return is_signed(dt) ? v - 3 : v + 1;
}

static uint16_t f32_to_bf16(float f)
{
	uint32_t b;

	memcpy(&b, &f, 4);
	if ((b & 0x7fffffff) > 0x7f800000)
		return 0x7fc0;
	b += 0x7fff + ((b >> 16) & 1);
	return b >> 16;
}

/* Store an exact small integer (or, for AVG, a double result) as datatype @dt. */
static void put(void *p, int dt, double v)
{
	switch (dt) {
	case KCOLL_INT8: case KCOLL_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
	case KCOLL_INT32: case KCOLL_UINT32: *(uint32_t *)p = (uint32_t)(int64_t)v; break;
	case KCOLL_INT64: case KCOLL_UINT64: *(uint64_t *)p = (uint64_t)(int64_t)v; break;
	case KCOLL_FP16: { _Float16 h = (_Float16)(float)v; memcpy(p, &h, 2); break; }
	case KCOLL_BF16: { uint16_t h = f32_to_bf16((float)v); memcpy(p, &h, 2); break; }
	case KCOLL_FP32: *(float *)p = (float)v; break;
	case KCOLL_FP64: *(double *)p = v; break;
	}
}

/* Integer reductions wrap: compute modulo 2^64 and let put() truncate. */
static void put_int(void *p, int dt, uint64_t v)
{
	switch (esize[dt]) {
	case 1: *(uint8_t *)p = (uint8_t)v; break;
	case 4: *(uint32_t *)p = (uint32_t)v; break;
	case 8: *(uint64_t *)p = v; break;
	}
}

/* Reference reduction of index @i over every rank. */
static void ref_reduce(void *p, int dt, int op, unsigned int n, uint64_t i)
{
	int64_t acc = val(dt, 0, i);
	unsigned int r;

	for (r = 1; r < n; r++) {
		int64_t v = val(dt, r, i);

		switch (op) {
		case KCOLL_SUM: case KCOLL_AVG: acc = (int64_t)((uint64_t)acc + (uint64_t)v); break;
		case KCOLL_PROD: acc = (int64_t)((uint64_t)acc * (uint64_t)v); break;
		case KCOLL_MIN: acc = v < acc ? v : acc; break;
		case KCOLL_MAX: acc = v > acc ? v : acc; break;
		}
	}
	if (op == KCOLL_AVG) {
		if (dt == KCOLL_FP64)
			put(p, dt, (double)acc / n);
		else
			put(p, dt, (double)((float)acc / (float)n));
		return;
	}
	if (is_float(dt))
		put(p, dt, (double)acc);
	else
		put_int(p, dt, (uint64_t)acc);
}

#endif /* KCOLL_TEST_REF_H */
