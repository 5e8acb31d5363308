// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_reduce on chosen values: NaN/Inf/-0 cases written as the values they should be,
 * integer wrap-around, AVG finalisation and its rounded quotient, and the fp16/bf16
 * conversions against the table-built references of reduce_ref.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "reduce_ref.h"

static u32 f32b(float f)
{
	u32 b;

	memcpy(&b, &f, 4);
	return b;
}

static u32 red_f32(const struct kcoll_reduce_engine *e, float x, float y, enum kcoll_red_op op)
{
	float v[9], w[9];
	int i;

	for (i = 0; i < 9; i++) {	/* 9 lanes: one vector and a tail */
		v[i] = x;
		w[i] = y;
	}
	e->reduce(v, w, 9, KCOLL_FP32, op);
	for (i = 1; i < 9; i++)
		if (f32b(v[i]) != f32b(v[0]))
			return 0xdeadbeef;
	return f32b(v[0]);
}

static u16 red_16(const struct kcoll_reduce_engine *e, enum kcoll_datatype dt, u16 x, u16 y,
		  enum kcoll_red_op op)
{
	u16 v[17], w[17];
	int i;

	for (i = 0; i < 17; i++) {
		v[i] = x;
		w[i] = y;
	}
	e->reduce(v, w, 17, dt, op);
	for (i = 1; i < 17; i++)
		if (v[i] != v[0])
			return 0xdead;
	return v[0];
}

TEST(float_special_cases)
{
	int i;

	init_engines();
	for (i = 0; i < nengines; i++) {
		const struct kcoll_reduce_engine *e = engines[i];

		/* NaN propagates through MIN/MAX, either side, canonical */
		EXPECT_EQ(0x7fc00000, red_f32(e, NAN, 1.0f, KCOLL_MIN));
		EXPECT_EQ(0x7fc00000, red_f32(e, 1.0f, -NAN, KCOLL_MAX));
		EXPECT_EQ(0x7fc00000, red_f32(e, -INFINITY, NAN, KCOLL_MIN));
		/* -0 < +0, in both orders */
		EXPECT_EQ(0x80000000, red_f32(e, 0.0f, -0.0f, KCOLL_MIN));
		EXPECT_EQ(0x80000000, red_f32(e, -0.0f, 0.0f, KCOLL_MIN));
		EXPECT_EQ(0x00000000, red_f32(e, 0.0f, -0.0f, KCOLL_MAX));
		EXPECT_EQ(0x00000000, red_f32(e, -0.0f, 0.0f, KCOLL_MAX));
		/* Inf arithmetic */
		EXPECT_EQ(0x7fc00000, red_f32(e, INFINITY, -INFINITY, KCOLL_SUM));
		EXPECT_EQ(0x7fc00000, red_f32(e, 0.0f, INFINITY, KCOLL_PROD));
		EXPECT_EQ(0xff800000, red_f32(e, -INFINITY, 5.0f, KCOLL_SUM));
		EXPECT_EQ(0x7f800000, red_f32(e, 3e38f, 3e38f, KCOLL_SUM));
		EXPECT_EQ(0xff800000, red_f32(e, -INFINITY, 5.0f, KCOLL_MIN));
		/* subnormals are not flushed */
		EXPECT_EQ(0x00000002, red_f32(e, 0x1p-149f, 0x1p-149f, KCOLL_SUM));
		/* -0 + -0 = -0; -0 + +0 = +0 */
		EXPECT_EQ(0x80000000, red_f32(e, -0.0f, -0.0f, KCOLL_SUM));
		EXPECT_EQ(0x00000000, red_f32(e, -0.0f, 0.0f, KCOLL_SUM));

		/* fp16: 1 + 2^-11 is a tie: to even, 1.0 */
		EXPECT_EQ(0x3c00, red_16(e, KCOLL_FP16, 0x3c00, 0x1000, KCOLL_SUM));
		/* 1 + 1.5 ulp (3*2^-11): a tie, to even: 1 + 2 ulp */
		EXPECT_EQ(0x3c02, red_16(e, KCOLL_FP16, 0x3c00, 0x1600, KCOLL_SUM));
		/* 1 + 0.75 ulp rounds to 1 + ulp */
		EXPECT_EQ(0x3c01, red_16(e, KCOLL_FP16, 0x3c00, 0x1200, KCOLL_SUM));
		/* 65504 + 16 = 65520: tie, to even = Inf; 65504 + 8 stays */
		EXPECT_EQ(0x7c00, red_16(e, KCOLL_FP16, 0x7bff, 0x4c00, KCOLL_SUM));
		EXPECT_EQ(0x7bff, red_16(e, KCOLL_FP16, 0x7bff, 0x4800, KCOLL_SUM));
		/* smallest subnormals: 2^-24 + 2^-24 = 2^-23; 2^-24 * 0.5 = tie to 0 */
		EXPECT_EQ(0x0002, red_16(e, KCOLL_FP16, 0x0001, 0x0001, KCOLL_SUM));
		EXPECT_EQ(0x0000, red_16(e, KCOLL_FP16, 0x0001, 0x3800, KCOLL_PROD));
		EXPECT_EQ(0x0002, red_16(e, KCOLL_FP16, 0x0003, 0x3800, KCOLL_PROD));
		/* NaN stays NaN (canonical), never turns into Inf */
		EXPECT_EQ(0x7e00, red_16(e, KCOLL_FP16, 0x7c01, 0x3c00, KCOLL_SUM));
		EXPECT_EQ(0x7e00, red_16(e, KCOLL_FP16, 0x3c00, 0xfe00, KCOLL_MAX));
		EXPECT_EQ(0x8000, red_16(e, KCOLL_FP16, 0x0000, 0x8000, KCOLL_MIN));
		/* bf16: NaN canonical, overflow to Inf, ties to even */
		EXPECT_EQ(0x7fc0, red_16(e, KCOLL_BF16, 0x7f81, 0x3f80, KCOLL_PROD));
		EXPECT_EQ(0x7f80, red_16(e, KCOLL_BF16, 0x7f7f, 0x7f7f, KCOLL_SUM));
		/* 1 + 2^-8: tie between 1 and 1 + 2^-7: even, 1.0 */
		EXPECT_EQ(0x3f80, red_16(e, KCOLL_BF16, 0x3f80, 0x3b80, KCOLL_SUM));
		EXPECT_EQ(0xff80, red_16(e, KCOLL_BF16, 0xff80, 0x3f80, KCOLL_MIN));
	}
}

TEST(integer_wrap)
{
	int i;

	init_engines();
	for (i = 0; i < nengines; i++) {
		const struct kcoll_reduce_engine *e = engines[i];
		s8 a8[40], b8[40];
		u8 u8a[40], u8b[40];
		s32 a32[20], b32[20];
		s64 a64[10], b64[10];
		u64 u64a[10], u64b[10];
		int j;

		for (j = 0; j < 40; j++) {
			a8[j] = 127;
			b8[j] = 1;
			u8a[j] = 255;
			u8b[j] = 2;
		}
		e->reduce(a8, b8, 40, KCOLL_INT8, KCOLL_SUM);
		e->reduce(u8a, u8b, 40, KCOLL_UINT8, KCOLL_PROD);
		for (j = 0; j < 40; j++) {
			ASSERT_EQ(-128, a8[j]);
			ASSERT_EQ(254, u8a[j]);
		}
		for (j = 0; j < 20; j++) {
			a32[j] = INT32_MAX;
			b32[j] = 2;
		}
		e->reduce(a32, b32, 20, KCOLL_INT32, KCOLL_PROD);
		for (j = 0; j < 20; j++)
			ASSERT_EQ(-2, a32[j]);
		for (j = 0; j < 10; j++) {
			a64[j] = INT64_MIN;
			b64[j] = -1;
			u64a[j] = ~0ULL;
			u64b[j] = 1ULL << 63;
		}
		e->reduce(a64, b64, 10, KCOLL_INT64, KCOLL_PROD);
		e->reduce(u64a, u64b, 10, KCOLL_UINT64, KCOLL_MIN);
		for (j = 0; j < 10; j++) {
			ASSERT_EQ(INT64_MIN, a64[j]);
			ASSERT_EQ(1ULL << 63, u64a[j]);
		}
		/* signed vs unsigned compare */
		for (j = 0; j < 40; j++) {
			a8[j] = -1;
			b8[j] = 1;
			u8a[j] = 0xff;
			u8b[j] = 1;
		}
		e->reduce(a8, b8, 40, KCOLL_INT8, KCOLL_MAX);
		e->reduce(u8a, u8b, 40, KCOLL_UINT8, KCOLL_MAX);
		for (j = 0; j < 40; j++) {
			ASSERT_EQ(1, a8[j]);
			ASSERT_EQ(0xff, u8a[j]);
		}
	}
}

TEST(avg_finalize)
{
	float f[5] = { 10.0f, -3.0f, 1.0f, INFINITY, NAN };
	double g[3] = { 7.0, 1.0, -0.0 };
	u16 h[3] = { 0x4900, 0x3c00, 0x7bff };	/* 10, 1, 65504 */
	u16 bf[2] = { 0x4120, 0x3f80 };		/* 10, 1 */
	s32 x[2] = { 10, 20 };
	u32 nan = 0x7fc00000, b;

	kcoll_reduce_finalize(f, 5, KCOLL_FP32, KCOLL_AVG, 4);
	EXPECT_EQ(f32b(2.5f), f32b(f[0]));
	EXPECT_EQ(f32b(-0.75f), f32b(f[1]));
	EXPECT_EQ(f32b(0.25f), f32b(f[2]));
	EXPECT_EQ(0x7f800000, f32b(f[3]));
	memcpy(&b, &f[4], 4);
	EXPECT_EQ(nan, b);
	kcoll_reduce_finalize(g, 3, KCOLL_FP64, KCOLL_AVG, 3);
	EXPECT_EQ(7.0 / 3.0, g[0]);
	EXPECT_EQ(1.0 / 3.0, g[1]);
	EXPECT_TRUE(signbit(g[2]));
	kcoll_reduce_finalize(h, 3, KCOLL_FP16, KCOLL_AVG, 3);
	EXPECT_EQ(0x42ab, h[0]);	/* 10/3 = 3.3333 -> 3.334 */
	EXPECT_EQ(0x3555, h[1]);	/* 1/3 */
	EXPECT_EQ(0x7555, h[2]);	/* 65504/3 = 21834.67 -> 21840 */
	kcoll_reduce_finalize(bf, 2, KCOLL_BF16, KCOLL_AVG, 4);
	EXPECT_EQ(0x4020, bf[0]);	/* 2.5 */
	EXPECT_EQ(0x3e80, bf[1]);	/* 0.25 */
	/* a no-op for other ops, or integers, or one rank */
	kcoll_reduce_finalize(x, 2, KCOLL_INT32, KCOLL_SUM, 4);
	kcoll_reduce_finalize(f, 1, KCOLL_FP32, KCOLL_SUM, 4);
	kcoll_reduce_finalize(f, 1, KCOLL_FP32, KCOLL_AVG, 1);
	EXPECT_EQ(10, x[0]);
	EXPECT_EQ(f32b(2.5f), f32b(f[0]));
}

/* Nearest code to a finite double a >= 0 in a table of increasing values, ties to even. */
static u16 nearest_d(const float *tab, u32 maxc, double a)
{
	u32 lo = 0, hi = maxc, mid;
	double dlo, dhi;

	while (hi - lo > 1) {	/* tab[lo] <= a < tab[hi] */
		mid = (lo + hi) / 2;
		if (tab[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	if (tab[hi] <= a)
		return (u16)hi;
	dlo = a - tab[lo];
	dhi = tab[hi] - a;
	if (dlo != dhi)
		return (u16)(dlo < dhi ? lo : hi);
	return (u16)(lo & 1 ? hi : lo);
}

/*
 * What kcoll_allreduce(3) promises for AVG of fp16/bf16 (NOTES, "Reduction order and
 * rounding"): the division in fp32 rounded to the type equals the correctly rounded quotient
 * s / nranks, for every finite s and nranks up to 4096 (KCOLL_MAX_RANKS).  The double
 * quotient rounded once more is exact enough: 53 bits >= 2 * 11 + 2.  Every code, a sample
 * of nranks (all of 1..4096 passed once, in about 30 s).
 */
TEST(avg_is_rounded_quotient)
{
	static const u32 ranks[] = { 1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 100, 127, 255, 257, 1000,
				     2047, 2049, 3001, 4095, 4096 };
	const struct {
		enum kcoll_datatype dt;
		const float *tab;
		u32 maxc;	/* largest finite code */
	} types[2] = {
		{ KCOLL_FP16, h16_val, 0x7bff },
		{ KCOLL_BF16, b16_val, 0x7f7f },
	};
	u32 i, h, t;

	build_tables();
	for (t = 0; t < 2; t++) {
		for (i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
			for (h = 0; h < 65536; h++) {
				float v = types[t].tab[h];
				u16 got = (u16)h, want;

				if (isnan(v) || isinf(v))
					continue;
				kcoll_reduce_finalize(&got, 1, types[t].dt, KCOLL_AVG, ranks[i]);
				want = (h & 0x8000) | nearest_d(types[t].tab, types[t].maxc,
								fabs((double)v) / ranks[i]);
				ASSERT_EQ(want, got) {
					TH_LOG("%s %#x / %u", kcoll_dtype_name(types[t].dt), h,
					       ranks[i]);
				}
			}
		}
	}
}

/* The test-local conversions agree with the core's on every fp16/bf16 code and on floats. */
TEST(conversions_vs_reference)
{
	u32 h, i;

	build_tables();
	for (h = 0; h < 65536; h++) {
		float a = ref_h2f((u16)h), b = kc_h2f((u16)h);

		if (isnan(a)) {
			ASSERT_TRUE(isnan(b));
		} else {
			ASSERT_EQ(f32b(a), f32b(b));
			ASSERT_EQ(h, kc_f2h(b));	/* round trip */
		}
		a = ref_bf2f((u16)h);
		b = kc_bf2f((u16)h);
		if (isnan(a)) {
			ASSERT_TRUE(isnan(b));
		} else {
			ASSERT_EQ(f32b(a), f32b(b));
			ASSERT_EQ(h, kc_f2bf(b));
		}
	}
	for (i = 0; i < 2000000; i++) {
		u32 x = (u32)rnd();
		float f;

		if (i & 1)	/* concentrate on the fp16 range */
			x = (x & 0x80000000) | (0x33000000 + (x % (0x47800000 - 0x33000000)));
		memcpy(&f, &x, 4);
		if (ref_f2h(f) != kc_f2h(f))
			TH_LOG("fp16 of %#x: ref %#x core %#x", x, ref_f2h(f), kc_f2h(f));
		ASSERT_EQ(ref_f2h(f), kc_f2h(f));
		if (ref_f2bf(f) != kc_f2bf(f))
			TH_LOG("bf16 of %#x: ref %#x core %#x", x, ref_f2bf(f), kc_f2bf(f));
		ASSERT_EQ(ref_f2bf(f), kc_f2bf(f));
	}
}

TEST_HARNESS_MAIN
