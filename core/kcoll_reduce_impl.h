/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/kcoll_reduce_impl.h - private to the reduction engines: the scalar definition of every
 * element operation and the fp16/bf16 conversions.  The SIMD engines must produce exactly
 * these bits (they use these functions for their tails), so this file *is* the specification
 * the tests compare against.  Uses floating point: include only from files compiled with FPU
 * code enabled (kcoll_reduce.c, kcoll_reduce_x86.c).
 */
#ifndef _KCOLL_CORE_REDUCE_IMPL_H
#define _KCOLL_CORE_REDUCE_IMPL_H

#include "kcoll_types.h"

#define KCOLL_F32_QNAN	0x7fc00000U
#define KCOLL_F64_QNAN	0x7ff8000000000000ULL
#define KCOLL_F16_QNAN	0x7e00U
#define KCOLL_BF16_QNAN	0x7fc0U

/* Unaligned, alias-safe loads and stores. */
#define KC_LD(T, p)	({ T v_; __builtin_memcpy(&v_, (p), sizeof(T)); v_; })
#define KC_ST(T, p, v)	do { T v_ = (v); __builtin_memcpy((p), &v_, sizeof(T)); } while (0)

static inline float kc_f32(u32 b)
{
	float f;

	__builtin_memcpy(&f, &b, 4);
	return f;
}

static inline u32 kc_b32(float f)
{
	u32 b;

	__builtin_memcpy(&b, &f, 4);
	return b;
}

static inline double kc_f64(u64 b)
{
	double f;

	__builtin_memcpy(&f, &b, 8);
	return f;
}

static inline u64 kc_b64(double f)
{
	u64 b;

	__builtin_memcpy(&b, &f, 8);
	return b;
}

/* ---- fp32 / fp64 element operations ------------------------------------------------------ */

static inline float kc_f32_canon(float r)
{
	return r != r ? kc_f32(KCOLL_F32_QNAN) : r;
}

static inline float kc_f32_sum(float x, float y)
{
	return kc_f32_canon(x + y);
}

static inline float kc_f32_prod(float x, float y)
{
	return kc_f32_canon(x * y);
}

/* Equal operands that are not NaN differ at most in the sign of a zero: OR picks -0. */
static inline float kc_f32_min(float x, float y)
{
	if (x != x || y != y)
		return kc_f32(KCOLL_F32_QNAN);
	if (x < y)
		return x;
	if (y < x)
		return y;
	return kc_f32(kc_b32(x) | kc_b32(y));
}

static inline float kc_f32_max(float x, float y)
{
	if (x != x || y != y)
		return kc_f32(KCOLL_F32_QNAN);
	if (x > y)
		return x;
	if (y > x)
		return y;
	return kc_f32(kc_b32(x) & kc_b32(y));
}

static inline double kc_f64_canon(double r)
{
	return r != r ? kc_f64(KCOLL_F64_QNAN) : r;
}

static inline double kc_f64_sum(double x, double y)
{
	return kc_f64_canon(x + y);
}

static inline double kc_f64_prod(double x, double y)
{
	return kc_f64_canon(x * y);
}

static inline double kc_f64_min(double x, double y)
{
	if (x != x || y != y)
		return kc_f64(KCOLL_F64_QNAN);
	if (x < y)
		return x;
	if (y < x)
		return y;
	return kc_f64(kc_b64(x) | kc_b64(y));
}

static inline double kc_f64_max(double x, double y)
{
	if (x != x || y != y)
		return kc_f64(KCOLL_F64_QNAN);
	if (x > y)
		return x;
	if (y > x)
		return y;
	return kc_f64(kc_b64(x) & kc_b64(y));
}

/* ---- fp16 <-> fp32 (IEEE binary16), by bit manipulation ----------------------------------- */

/* Exact widening.  NaN stays NaN (payload shifted up), subnormals are normalised. */
static inline float kc_h2f(u16 h)
{
	u32 s = (u32)(h & 0x8000U) << 16;
	u32 e = (h >> 10) & 0x1fU;
	u32 m = h & 0x3ffU;
	u32 sh;

	if (e == 0x1f)
		return kc_f32(s | 0x7f800000U | (m << 13));
	if (e != 0)
		return kc_f32(s | ((e + 112) << 23) | (m << 13));
	if (m == 0)
		return kc_f32(s);
	/* m * 2^-24: shift the leading one up to bit 10. */
	sh = (u32)__builtin_clz(m) - 21;
	return kc_f32(s | ((113 - sh) << 23) | (((m << sh) & 0x3ffU) << 13));
}

/*
 * Round to nearest even.  NaN becomes the canonical 0x7e00; magnitudes from 65520 (half way
 * between the largest half, 65504, and 2^16) up round to Inf.
 */
static inline u16 kc_f2h(float f)
{
	u32 x = kc_b32(f);
	u32 sign = (x >> 16) & 0x8000U;
	u32 ax = x & 0x7fffffffU;
	u32 mant, sh, r, rem, half;

	if (ax > 0x7f800000U)
		return KCOLL_F16_QNAN;
	if (ax >= 0x477ff000U)
		return (u16)(sign | 0x7c00U);
	if (ax >= 0x38800000U)	/* normal half: rebias, round away 13 bits */
		return (u16)(sign | ((ax - 0x38000000U + 0xfffU + ((ax >> 13) & 1U)) >> 13));
	/* subnormal half (or zero): units of 2^-24 */
	sh = 126 - (ax >> 23);
	if (sh > 31)
		sh = 31;
	mant = (ax & 0x7fffffU) | 0x800000U;
	r = mant >> sh;
	rem = mant & ((1U << sh) - 1);
	half = 1U << (sh - 1);
	if (rem > half || (rem == half && (r & 1U)))
		r++;
	return (u16)(sign | r);
}

/* ---- bf16 <-> fp32 ---------------------------------------------------------------------- */

static inline float kc_bf2f(u16 h)
{
	return kc_f32((u32)h << 16);
}

static inline u16 kc_f2bf(float f)
{
	u32 x = kc_b32(f);

	if ((x & 0x7fffffffU) > 0x7f800000U)
		return KCOLL_BF16_QNAN;
	return (u16)((x + 0x7fffU + ((x >> 16) & 1U)) >> 16);
}

#endif /* _KCOLL_CORE_REDUCE_IMPL_H */
