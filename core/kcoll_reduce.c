// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_reduce.c - the portable reduction engine, AVG finalisation and engine choice.
 *
 * Plain C, no libc beyond memcpy (as __builtin_memcpy on fixed sizes), no libm.  The float
 * paths use the FPU: in the kernel everything here except kcoll_reduce_best() and
 * kcoll_generic_supports() runs between kernel_fpu_begin() and kernel_fpu_end(), and the file
 * is built with SSE enabled (see core/README.md for the kbuild flags).
 */
#include "kcoll_reduce.h"
#include "kcoll_reduce_impl.h"

/*
 * One element-wise loop: x from a_, y from b_, r = EXPR into d_.  Blocks of KG_BLK elements
 * with a constant trip count, through restrict pointers, so that a compiler at -O2 (GCC's
 * "very cheap" vectoriser: no runtime alias checks, no epilogues) can still vectorise; then
 * the tail.  Every element is read before it is written and elements do not interact.
 */
#define KG_BLK	32

#define KG_ONE(T, EXPR, I)							\
	do {									\
		T x = KC_LD(T, a_ + (I) * sizeof(T));				\
		T y = KC_LD(T, b_ + (I) * sizeof(T));				\
		KC_ST(T, d_ + (I) * sizeof(T), (T)(EXPR));			\
	} while (0)

#define KG_LOOP(T, EXPR)							\
	do {									\
		size_t i_ = 0, j_;						\
		for (; i_ + KG_BLK <= count; i_ += KG_BLK)			\
			for (j_ = 0; j_ < KG_BLK; j_++)				\
				KG_ONE(T, EXPR, i_ + j_);			\
		for (; i_ < count; i_++)					\
			KG_ONE(T, EXPR, i_);					\
	} while (0)

/* Integers: SUM/PROD in the unsigned type UT (wrapping, no UB), MIN/MAX in T. */
#define KG_INT(T, UT)								\
	do {									\
		switch (op) {							\
		case KCOLL_SUM:						\
			KG_LOOP(T, (UT)((UT)x + (UT)y));			\
			break;							\
		case KCOLL_PROD:						\
			KG_LOOP(T, (UT)((UT)x * (UT)y));			\
			break;							\
		case KCOLL_MIN:						\
			KG_LOOP(T, x < y ? x : y);				\
			break;							\
		case KCOLL_MAX:						\
			KG_LOOP(T, x > y ? x : y);				\
			break;							\
		default:							\
			break;							\
		}								\
	} while (0)

/* fp32/fp64: F is the float type, P the element-op prefix (kc_f32 / kc_f64). */
#define KG_FLOAT(F, P)								\
	do {									\
		switch (op) {							\
		case KCOLL_SUM:						\
		case KCOLL_AVG:						\
			KG_LOOP(F, P##_sum(x, y));				\
			break;							\
		case KCOLL_PROD:						\
			KG_LOOP(F, P##_prod(x, y));				\
			break;							\
		case KCOLL_MIN:						\
			KG_LOOP(F, P##_min(x, y));				\
			break;							\
		case KCOLL_MAX:						\
			KG_LOOP(F, P##_max(x, y));				\
			break;							\
		default:							\
			break;							\
		}								\
	} while (0)

/* fp16/bf16: widen with TOF, operate in fp32, round back with FROMF. */
#define KG_HALF(TOF, FROMF)							\
	do {									\
		switch (op) {							\
		case KCOLL_SUM:						\
		case KCOLL_AVG:						\
			KG_LOOP(u16, FROMF(kc_f32_sum(TOF(x), TOF(y))));	\
			break;							\
		case KCOLL_PROD:						\
			KG_LOOP(u16, FROMF(kc_f32_prod(TOF(x), TOF(y))));	\
			break;							\
		case KCOLL_MIN:						\
			KG_LOOP(u16, FROMF(kc_f32_min(TOF(x), TOF(y))));	\
			break;							\
		case KCOLL_MAX:						\
			KG_LOOP(u16, FROMF(kc_f32_max(TOF(x), TOF(y))));	\
			break;							\
		default:							\
			break;							\
		}								\
	} while (0)

#define KG_DISPATCH()								\
	do {									\
		switch (dt) {							\
		case KCOLL_INT8:						\
			KG_INT(s8, u8);						\
			break;							\
		case KCOLL_UINT8:						\
			KG_INT(u8, u8);						\
			break;							\
		case KCOLL_INT32:						\
			KG_INT(s32, u32);					\
			break;							\
		case KCOLL_UINT32:					\
			KG_INT(u32, u32);					\
			break;							\
		case KCOLL_INT64:						\
			KG_INT(s64, u64);					\
			break;							\
		case KCOLL_UINT64:					\
			KG_INT(u64, u64);					\
			break;							\
		case KCOLL_FP16:						\
			KG_HALF(kc_h2f, kc_f2h);				\
			break;							\
		case KCOLL_BF16:						\
			KG_HALF(kc_bf2f, kc_f2bf);				\
			break;							\
		case KCOLL_FP32:						\
			KG_FLOAT(float, kc_f32);				\
			break;							\
		case KCOLL_FP64:						\
			KG_FLOAT(double, kc_f64);				\
			break;							\
		default:							\
			break;							\
		}								\
	} while (0)

/* d = a op b, three distinct buffers (a == b allowed: both are only read) */
static void kg_distinct(u8 *restrict d_, const u8 *restrict a_, const u8 *restrict b_,
			size_t count, enum kcoll_datatype dt, enum kcoll_red_op op)
{
	KG_DISPATCH();
}

/* d = d op b */
static void kg_inplace(u8 *restrict d_, const u8 *restrict b_, size_t count,
		       enum kcoll_datatype dt, enum kcoll_red_op op)
{
	const u8 *a_ = d_;

	KG_DISPATCH();
}

/* d = d op d, the one case restrict cannot describe */
static void kg_self(u8 *d_, size_t count, enum kcoll_datatype dt, enum kcoll_red_op op)
{
	const u8 *a_ = d_, *b_ = d_;

	KG_DISPATCH();
}

void kcoll_reduce3_generic(void *dst, const void *a, const void *b, size_t count,
			   enum kcoll_datatype dt, enum kcoll_red_op op)
{
	if (kcoll_reduce_check(dt, op))
		return;
	if (dst == a && dst == b)
		kg_self(dst, count, dt, op);
	else if (dst == a)
		kg_inplace(dst, b, count, dt, op);
	else if (dst == b)	/* every op is commutative bit for bit */
		kg_inplace(dst, a, count, dt, op);
	else
		kg_distinct(dst, a, b, count, dt, op);
}

void kcoll_reduce_generic(void *dst, const void *src, size_t count, enum kcoll_datatype dt,
			  enum kcoll_red_op op)
{
	kcoll_reduce3_generic(dst, dst, src, count, dt, op);
}

void kcoll_reduce_finalize(void *buf, size_t count, enum kcoll_datatype dt, enum kcoll_red_op op,
			   unsigned int nranks)
{
	u8 *p = buf;
	size_t i;

	if (op != KCOLL_AVG || kcoll_reduce_check(dt, op) || nranks <= 1)
		return;
	switch (dt) {
	case KCOLL_FP32: {
		float n = (float)nranks;

		for (i = 0; i < count; i++)
			KC_ST(float, p + 4 * i, kc_f32_canon(KC_LD(float, p + 4 * i) / n));
		break;
	}
	case KCOLL_FP64: {
		double n = (double)nranks;

		for (i = 0; i < count; i++)
			KC_ST(double, p + 8 * i, kc_f64_canon(KC_LD(double, p + 8 * i) / n));
		break;
	}
	case KCOLL_FP16: {
		float n = (float)nranks;

		for (i = 0; i < count; i++)
			KC_ST(u16, p + 2 * i, kc_f2h(kc_h2f(KC_LD(u16, p + 2 * i)) / n));
		break;
	}
	case KCOLL_BF16: {
		float n = (float)nranks;

		for (i = 0; i < count; i++)
			KC_ST(u16, p + 2 * i, kc_f2bf(kc_bf2f(KC_LD(u16, p + 2 * i)) / n));
		break;
	}
	default:
		break;
	}
}

static bool kcoll_generic_supports(enum kcoll_datatype dt, enum kcoll_red_op op)
{
	return kcoll_reduce_check(dt, op) == 0;
}

const struct kcoll_reduce_engine kcoll_reduce_engine_generic = {
	.name = "generic",
	.supports = kcoll_generic_supports,
	.reduce = kcoll_reduce_generic,
	.reduce3 = kcoll_reduce3_generic,
};

const struct kcoll_reduce_engine *kcoll_reduce_best(bool have_avx2)
{
#ifdef KCOLL_HAVE_REDUCE_AVX2
	if (have_avx2)
		return &kcoll_reduce_engine_avx2;
#else
	(void)have_avx2;
#endif
	return &kcoll_reduce_engine_generic;
}
