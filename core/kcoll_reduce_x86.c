// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_reduce_x86.c - the AVX2 reduction engine (x86-64).
 *
 * Written with GCC vector extensions inside __attribute__((target("avx2"))) functions: no
 * <immintrin.h>, which the kernel build does not have.  Every result is bit-identical to the
 * portable engine (same operations, same NaN canonicalisation, same fp16/bf16 rounding; the
 * tails use the very same scalar functions from kcoll_reduce_impl.h).  Pairs not implemented
 * here go to kcoll_reduce3_generic().
 *
 * Only call it on a CPU with AVX2 (the caller checks, see kcoll_reduce_best()); in the kernel
 * only between kernel_fpu_begin() and kernel_fpu_end().
 */
#include "kcoll_reduce.h"

#if defined(KCOLL_HAVE_REDUCE_AVX2) && defined(__CHECKER__)
/* sparse knows no GCC vector built-ins: it sees the engine's interface only. */
const struct kcoll_reduce_engine kcoll_reduce_engine_avx2 = {
	.name = "avx2",
	.reduce3 = kcoll_reduce3_generic,
};
#elif defined(KCOLL_HAVE_REDUCE_AVX2)

#include "kcoll_reduce_impl.h"

#define KX_FN	__attribute__((target("avx2")))
#define KX_INL	static inline __attribute__((always_inline, target("avx2")))

typedef s8 kx_i8 __attribute__((vector_size(32)));
typedef u8 kx_u8 __attribute__((vector_size(32)));
typedef s32 kx_i32 __attribute__((vector_size(32)));
typedef u32 kx_u32 __attribute__((vector_size(32)));
typedef s64 kx_i64 __attribute__((vector_size(32)));
typedef u64 kx_u64 __attribute__((vector_size(32)));
typedef float kx_f32 __attribute__((vector_size(32)));
typedef double kx_f64 __attribute__((vector_size(32)));
typedef u16 kx_h8 __attribute__((vector_size(16)));	/* 8 fp16/bf16 */

/* Unaligned accesses through may_alias types: the buffers are plain bytes to us. */
#define KX_LD(VT, p)	({ VT v_; __builtin_memcpy(&v_, (p), sizeof(VT)); v_; })
#define KX_ST(VT, p, v)	do { VT v_ = (v); __builtin_memcpy((p), &v_, sizeof(VT)); } while (0)

/*
 * The loop skeleton: 4 vectors per iteration, then single vectors, then a scalar tail with
 * the scalar definition.  VT/ET: vector and element types, W elements per vector.
 * VOP(x, y) yields the vector result, SEXPR the scalar one from x and y (of type ET).
 */
#define KX_LOOP(VT, ET, VOP, SEXPR)						\
	do {									\
		const size_t w_ = sizeof(VT) / sizeof(ET);			\
		u8 *d_ = dst;							\
		const u8 *a_ = a, *b_ = b;					\
		size_t i_ = 0;							\
		for (; i_ + 4 * w_ <= count; i_ += 4 * w_) {			\
			const size_t o_ = i_ * sizeof(ET);			\
			VT x0 = KX_LD(VT, a_ + o_), y0 = KX_LD(VT, b_ + o_);	\
			VT x1 = KX_LD(VT, a_ + o_ + 32), y1 = KX_LD(VT, b_ + o_ + 32); \
			VT x2 = KX_LD(VT, a_ + o_ + 64), y2 = KX_LD(VT, b_ + o_ + 64); \
			VT x3 = KX_LD(VT, a_ + o_ + 96), y3 = KX_LD(VT, b_ + o_ + 96); \
			KX_ST(VT, d_ + o_, VOP(x0, y0));			\
			KX_ST(VT, d_ + o_ + 32, VOP(x1, y1));			\
			KX_ST(VT, d_ + o_ + 64, VOP(x2, y2));			\
			KX_ST(VT, d_ + o_ + 96, VOP(x3, y3));			\
		}								\
		for (; i_ + w_ <= count; i_ += w_) {				\
			const size_t o_ = i_ * sizeof(ET);			\
			VT x0 = KX_LD(VT, a_ + o_), y0 = KX_LD(VT, b_ + o_);	\
			KX_ST(VT, d_ + o_, VOP(x0, y0));			\
		}								\
		for (; i_ < count; i_++) {					\
			ET x = KC_LD(ET, a_ + i_ * sizeof(ET));		\
			ET y = KC_LD(ET, b_ + i_ * sizeof(ET));		\
			KC_ST(ET, d_ + i_ * sizeof(ET), (ET)(SEXPR));		\
		}								\
	} while (0)

/* ---- integer lane operations (select with masks: C has no vector ?:) -------------------- */

#define KX_SEL(m, x, y)		(((x) & (m)) | ((y) & ~(m)))
#define KX_ADD(x, y)		((x) + (y))
#define KX_MUL(x, y)		((x) * (y))
#define KX_MIN(x, y)		KX_SEL((x) < (y), x, y)
#define KX_MAX(x, y)		KX_SEL((x) > (y), x, y)
/* unsigned compares yield signed masks: cast back to the operand type */
#define KX_UMIN(VT, x, y)	KX_SEL((VT)((x) < (y)), x, y)
#define KX_UMAX(VT, x, y)	KX_SEL((VT)((x) > (y)), x, y)

#define KS_ADD(UT)		((UT)((UT)x + (UT)y))
#define KS_MUL(UT)		((UT)((UT)x * (UT)y))

/* ---- float lane operations -------------------------------------------------------------- */

/*
 * fp32 and fp64 lanes, one definition for both widths (FV: float vector, IV: integer vector
 * of the same width, IT: integer scalar, QNAN: the canonical NaN's bits):
 * - canon: NaN lanes become the canonical NaN, so every engine and order agrees bit for bit;
 * - min/max: x where it wins, y where it wins, x|y (min, picks -0) or x&y (max, picks +0)
 *   where equal, NaN if either is NaN.
 */
#define KX_FLOAT_OPS(T, FV, IV, IT, QNAN)						\
KX_INL FV kx_##T##_canon(FV r)								\
{											\
	const IV q = (IV){} + (IT)(QNAN);						\
	IV n = r != r;									\
											\
	return (FV)KX_SEL(n, q, (IV)r);							\
}											\
											\
KX_INL FV kx_##T##_sum(FV x, FV y)							\
{											\
	return kx_##T##_canon(x + y);							\
}											\
											\
KX_INL FV kx_##T##_prod(FV x, FV y)							\
{											\
	return kx_##T##_canon(x * y);							\
}											\
											\
KX_INL FV kx_##T##_min(FV x, FV y)							\
{											\
	const IV q = (IV){} + (IT)(QNAN);						\
	IV xi = (IV)x, yi = (IV)y;							\
	IV lt = x < y, gt = y < x, nan = (x != x) | (y != y);				\
	IV r = (xi & lt) | (yi & gt) | ((xi | yi) & ~(lt | gt));			\
											\
	return (FV)KX_SEL(nan, q, r);							\
}											\
											\
KX_INL FV kx_##T##_max(FV x, FV y)							\
{											\
	const IV q = (IV){} + (IT)(QNAN);						\
	IV xi = (IV)x, yi = (IV)y;							\
	IV gt = x > y, lt = y > x, nan = (x != x) | (y != y);				\
	IV r = (xi & gt) | (yi & lt) | ((xi & yi) & ~(lt | gt));			\
											\
	return (FV)KX_SEL(nan, q, r);							\
}

KX_FLOAT_OPS(f32, kx_f32, kx_i32, s32, KCOLL_F32_QNAN)
KX_FLOAT_OPS(f64, kx_f64, kx_i64, s64, KCOLL_F64_QNAN)

/* ---- fp16 / bf16 lanes: 8 halves widened to one fp32 vector ----------------------------- */

/* Exact, as kc_h2f(); subnormals through an exact int->float conversion and scaling. */
KX_INL kx_f32 kx_h2f(kx_h8 h16)
{
	kx_i32 h = __builtin_convertvector(h16, kx_i32);
	kx_i32 s = (h & 0x8000) << 16;
	kx_i32 e = h & 0x7c00;
	kx_i32 m = h & 0x3ff;
	kx_i32 norm = s | (((h & 0x7fff) << 13) + (112 << 23));
	kx_i32 infnan = s | 0x7f800000 | (m << 13);
	kx_f32 subf = __builtin_convertvector(m, kx_f32) * 5.9604644775390625e-8f; /* 2^-24 */
	kx_i32 sub = s | (kx_i32)subf;
	kx_i32 is_sub = e == 0, is_inf = e == 0x7c00;

	return (kx_f32)KX_SEL(is_sub, sub, KX_SEL(is_inf, infnan, norm));
}

/*
 * Round to nearest even, as kc_f2h().  Normal halves: rebias and round away 13 bits in
 * integers.  Subnormal halves: adding 0.5f lines the value up on the 2^-24 grid of 0.5's
 * mantissa, the FPU rounding to nearest even (the default rounding mode, which
 * kernel_fpu_begin() also loads); the bits above 0.5 are then the subnormal code.
 */
KX_INL kx_h8 kx_f2h(kx_f32 f)
{
	kx_i32 x = (kx_i32)f;
	kx_i32 ax = x & 0x7fffffff;
	kx_i32 sign = (kx_i32)((kx_u32)(x ^ ax) >> 16);
	kx_i32 norm = (ax - 0x38000000 + 0xfff + ((ax >> 13) & 1)) >> 13;
	kx_i32 sub = (kx_i32)((kx_f32)ax + 0.5f) - 0x3f000000;
	kx_i32 res = sign | KX_SEL(ax < 0x38800000, sub, KX_SEL(ax >= 0x47800000,
					((kx_i32){} + 0x7c00), norm));

	res = KX_SEL(ax > 0x7f800000, ((kx_i32){} + (s32)KCOLL_F16_QNAN), res);
	return __builtin_convertvector(res, kx_h8);
}

KX_INL kx_f32 kx_bf2f(kx_h8 h16)
{
	return (kx_f32)(__builtin_convertvector(h16, kx_i32) << 16);
}

KX_INL kx_h8 kx_f2bf(kx_f32 f)
{
	kx_u32 x = (kx_u32)f;
	kx_i32 is_nan = ((kx_i32)x & 0x7fffffff) > 0x7f800000;
	kx_i32 r = (kx_i32)((x + 0x7fff + ((x >> 16) & 1)) >> 16);

	r = KX_SEL(is_nan, ((kx_i32){} + (s32)KCOLL_BF16_QNAN), r);
	return __builtin_convertvector(r, kx_h8);
}

/* ---- the per-type loops ----------------------------------------------------------------- */

#define KX_INT(VT, UVT, T, UT)							\
	do {									\
		switch (op) {							\
		case KCOLL_SUM:						\
			KX_LOOP(UVT, UT, KX_ADD, KS_ADD(UT));			\
			break;							\
		case KCOLL_PROD:						\
			KX_LOOP(UVT, UT, KX_MUL, KS_MUL(UT));			\
			break;							\
		case KCOLL_MIN:						\
			KX_LOOP(VT, T, KX_MIN, x < y ? x : y);			\
			break;							\
		case KCOLL_MAX:						\
			KX_LOOP(VT, T, KX_MAX, x > y ? x : y);			\
			break;							\
		default:							\
			break;							\
		}								\
	} while (0)

#define KX_UMIN_OP(x, y)	KX_UMIN(__typeof__(x), x, y)
#define KX_UMAX_OP(x, y)	KX_UMAX(__typeof__(x), x, y)

#define KX_UINT(UVT, UT)							\
	do {									\
		switch (op) {							\
		case KCOLL_SUM:						\
			KX_LOOP(UVT, UT, KX_ADD, KS_ADD(UT));			\
			break;							\
		case KCOLL_PROD:						\
			KX_LOOP(UVT, UT, KX_MUL, KS_MUL(UT));			\
			break;							\
		case KCOLL_MIN:						\
			KX_LOOP(UVT, UT, KX_UMIN_OP, x < y ? x : y);		\
			break;							\
		case KCOLL_MAX:						\
			KX_LOOP(UVT, UT, KX_UMAX_OP, x > y ? x : y);		\
			break;							\
		default:							\
			break;							\
		}								\
	} while (0)

#define KX_FLOAT(VT, F, VP, SP)							\
	do {									\
		switch (op) {							\
		case KCOLL_SUM:						\
		case KCOLL_AVG:						\
			KX_LOOP(VT, F, VP##_sum, SP##_sum(x, y));			\
			break;							\
		case KCOLL_PROD:						\
			KX_LOOP(VT, F, VP##_prod, SP##_prod(x, y));			\
			break;							\
		case KCOLL_MIN:						\
			KX_LOOP(VT, F, VP##_min, SP##_min(x, y));			\
			break;							\
		case KCOLL_MAX:						\
			KX_LOOP(VT, F, VP##_max, SP##_max(x, y));			\
			break;							\
		default:							\
			break;							\
		}								\
	} while (0)

/*
 * fp16/bf16: 16 elements (two fp32 vectors) per step, the scalar definition for the tail.
 */
#define KX_HALF_LOOP(VTOF, VFROMF, STOF, SFROMF, VOP, SOP)			\
	do {									\
		u8 *d_ = dst;							\
		const u8 *a_ = a, *b_ = b;					\
		size_t i_ = 0;							\
		for (; i_ + 16 <= count; i_ += 16) {				\
			const size_t o_ = i_ * 2;				\
			kx_f32 x0 = VTOF(KX_LD(kx_h8, a_ + o_));		\
			kx_f32 y0 = VTOF(KX_LD(kx_h8, b_ + o_));		\
			kx_f32 x1 = VTOF(KX_LD(kx_h8, a_ + o_ + 16));		\
			kx_f32 y1 = VTOF(KX_LD(kx_h8, b_ + o_ + 16));		\
			KX_ST(kx_h8, d_ + o_, VFROMF(VOP(x0, y0)));		\
			KX_ST(kx_h8, d_ + o_ + 16, VFROMF(VOP(x1, y1)));	\
		}								\
		for (; i_ + 8 <= count; i_ += 8) {				\
			const size_t o_ = i_ * 2;				\
			kx_f32 x0 = VTOF(KX_LD(kx_h8, a_ + o_));		\
			kx_f32 y0 = VTOF(KX_LD(kx_h8, b_ + o_));		\
			KX_ST(kx_h8, d_ + o_, VFROMF(VOP(x0, y0)));		\
		}								\
		for (; i_ < count; i_++) {					\
			u16 x = KC_LD(u16, a_ + i_ * 2);			\
			u16 y = KC_LD(u16, b_ + i_ * 2);			\
			KC_ST(u16, d_ + i_ * 2, SFROMF(SOP(STOF(x), STOF(y))));	\
		}								\
	} while (0)

#define KX_HALF(VTOF, VFROMF, STOF, SFROMF)					\
	do {									\
		switch (op) {							\
		case KCOLL_SUM:						\
		case KCOLL_AVG:						\
			KX_HALF_LOOP(VTOF, VFROMF, STOF, SFROMF, kx_f32_sum, kc_f32_sum); \
			break;							\
		case KCOLL_PROD:						\
			KX_HALF_LOOP(VTOF, VFROMF, STOF, SFROMF, kx_f32_prod, kc_f32_prod); \
			break;							\
		case KCOLL_MIN:						\
			KX_HALF_LOOP(VTOF, VFROMF, STOF, SFROMF, kx_f32_min, kc_f32_min); \
			break;							\
		case KCOLL_MAX:						\
			KX_HALF_LOOP(VTOF, VFROMF, STOF, SFROMF, kx_f32_max, kc_f32_max); \
			break;							\
		default:							\
			break;							\
		}								\
	} while (0)

/*
 * What the vector code covers: every supported pair.  (A pair that should go to the generic
 * engine, e.g. because it measures slower, is removed here and nowhere else.)
 */
static bool kcoll_avx2_supports(enum kcoll_datatype dt, enum kcoll_red_op op)
{
	return kcoll_reduce_check(dt, op) == 0;
}

static KX_FN void kcoll_reduce3_avx2(void *dst, const void *a, const void *b, size_t count,
				     enum kcoll_datatype dt, enum kcoll_red_op op)
{
	if (!kcoll_avx2_supports(dt, op)) {
		kcoll_reduce3_generic(dst, a, b, count, dt, op);
		return;
	}
	switch (dt) {
	case KCOLL_INT8:
		KX_INT(kx_i8, kx_u8, s8, u8);
		break;
	case KCOLL_UINT8:
		KX_UINT(kx_u8, u8);
		break;
	case KCOLL_INT32:
		KX_INT(kx_i32, kx_u32, s32, u32);
		break;
	case KCOLL_UINT32:
		KX_UINT(kx_u32, u32);
		break;
	case KCOLL_INT64:
		KX_INT(kx_i64, kx_u64, s64, u64);
		break;
	case KCOLL_UINT64:
		KX_UINT(kx_u64, u64);
		break;
	case KCOLL_FP16:
		KX_HALF(kx_h2f, kx_f2h, kc_h2f, kc_f2h);
		break;
	case KCOLL_BF16:
		KX_HALF(kx_bf2f, kx_f2bf, kc_bf2f, kc_f2bf);
		break;
	case KCOLL_FP32:
		KX_FLOAT(kx_f32, float, kx_f32, kc_f32);
		break;
	case KCOLL_FP64:
		KX_FLOAT(kx_f64, double, kx_f64, kc_f64);
		break;
	default:
		break;
	}
}

static KX_FN void kcoll_reduce_avx2(void *dst, const void *src, size_t count,
				    enum kcoll_datatype dt, enum kcoll_red_op op)
{
	kcoll_reduce3_avx2(dst, dst, src, count, dt, op);
}

const struct kcoll_reduce_engine kcoll_reduce_engine_avx2 = {
	.name = "avx2",
	.supports = kcoll_avx2_supports,
	.reduce = kcoll_reduce_avx2,
	.reduce3 = kcoll_reduce3_avx2,
};

#endif /* KCOLL_HAVE_REDUCE_AVX2 */
