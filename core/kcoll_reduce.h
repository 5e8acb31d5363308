/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/kcoll_reduce.h - element-wise reduction kernels for kcoll.
 *
 * Data types and operators
 * ------------------------
 * The datatypes and operators are the uAPI's own enum kcoll_datatype and enum kcoll_red_op
 * (include/uapi/linux/kcoll.h): kernel, library and host tests use the one set of values.
 *
 * Supported (dtype, op) pairs, anything else is refused by kcoll_reduce_check() with -EINVAL:
 *
 *              SUM  PROD  MIN  MAX  AVG
 *   int8        x    x     x    x    -
 *   uint8       x    x     x    x    -
 *   int32       x    x     x    x    -
 *   uint32      x    x     x    x    -
 *   int64       x    x     x    x    -
 *   uint64      x    x     x    x    -
 *   fp16        x    x     x    x    x
 *   bf16        x    x     x    x    x
 *   fp32        x    x     x    x    x
 *   fp64        x    x     x    x    x
 *
 * Semantics (identical in every engine, bit for bit):
 *   - Integers: SUM and PROD wrap modulo 2^bits, signed types included (two's complement, the
 *     arithmetic is done in the unsigned type).  MIN and MAX compare signed or unsigned values
 *     as the type says.
 *   - fp32/fp64: IEEE 754 binary32/binary64 addition and multiplication, round to nearest
 *     even, subnormals honoured (the kernel's kernel_fpu_begin() and a default userspace MXCSR
 *     both leave FTZ/DAZ off).
 *   - fp16 (IEEE binary16) and bf16 (bfloat16): each operand is widened exactly to fp32, the
 *     operation is done in fp32 and the result rounded once to the narrow type, to nearest
 *     even (fp32 has enough precision that this equals the correctly rounded narrow result for
 *     SUM and PROD of normal numbers).  Overflow rounds to +-Inf.
 *   - NaN: whenever a result is NaN it is the canonical quiet NaN with the sign bit clear
 *     (fp32 0x7fc00000, fp64 0x7ff8000000000000, fp16 0x7e00, bf16 0x7fc0), whatever the
 *     payloads of the inputs.  This keeps every engine, and every reduction order, bit-identical.
 *   - MIN/MAX propagate NaN: if either operand is NaN the result is NaN.  -0.0 is less than
 *     +0.0: min(-0, +0) = -0 and max(-0, +0) = +0 in either operand order.
 *   - All operators are commutative bit for bit (a op b == b op a), so only the grouping of a
 *     reduction matters, never the operand order inside one step.
 *   - AVG (floats only): the reduction itself accumulates SUM; after the last step the owner
 *     of the result calls kcoll_reduce_finalize(), which divides by nranks (in fp32 for
 *     fp16/bf16, rounded once; in the type itself for fp32/fp64).
 *
 * Engines
 * -------
 * struct kcoll_reduce_engine: a name, a supports() predicate and reduce()/reduce3() entry
 * points.  kcoll_reduce_engine_generic is portable C; kcoll_reduce_engine_avx2 (x86-64 only)
 * uses GCC vector extensions in __attribute__((target("avx2"))) functions and hands every pair
 * it does not implement to the generic engine.  The caller detects CPU features and picks one
 * with kcoll_reduce_best(): in the kernel boot_cpu_has(X86_FEATURE_AVX2), in userspace
 * __builtin_cpu_supports("avx2").
 *
 * Context rules for the kernel: reduce(), reduce3() and kcoll_reduce_finalize() use FPU/SIMD
 * registers and must run between kernel_fpu_begin() and kernel_fpu_end() (process context;
 * keep each call bounded, e.g. a chunk of at most a few hundred KiB, so preemption is not held
 * off for long).  Everything declared inline in this header, supports() and
 * kcoll_reduce_best() use no FPU and may be called anywhere.
 *
 * Buffers: reduce(dst, src, n) computes dst[i] = dst[i] op src[i]; reduce3(dst, a, b, n)
 * computes dst[i] = a[i] op b[i], where dst may be the same pointer as a or b (exactly, not a
 * partial overlap).  Pointers need no alignment; count is in elements; count 0 is a no-op.
 * The caller checks the pair with kcoll_reduce_check() first: an unsupported pair given to an
 * engine leaves dst unchanged.
 */
#ifndef _KCOLL_CORE_REDUCE_H
#define _KCOLL_CORE_REDUCE_H

#include "kcoll_types.h"
#include "../include/kcoll_names.h"
/* The vocabulary: enum kcoll_datatype and enum kcoll_red_op are the uAPI's, not copies. */
#include "../include/uapi/linux/kcoll.h"

/* Bytes per element; 0 for an unknown dtype. */
static inline size_t kcoll_dtype_size(enum kcoll_datatype dt)
{
	switch (dt) {
	case KCOLL_INT8:
	case KCOLL_UINT8:
		return 1;
	case KCOLL_FP16:
	case KCOLL_BF16:
		return 2;
	case KCOLL_INT32:
	case KCOLL_UINT32:
	case KCOLL_FP32:
		return 4;
	case KCOLL_INT64:
	case KCOLL_UINT64:
	case KCOLL_FP64:
		return 8;
	default:
		return 0;
	}
}

static inline bool kcoll_dtype_is_float(enum kcoll_datatype dt)
{
	return dt == KCOLL_FP16 || dt == KCOLL_BF16 || dt == KCOLL_FP32 ||
	       dt == KCOLL_FP64;
}

/* "int8" ... "fp64" (include/kcoll_names.h); NULL for an unknown value. */
static inline const char *kcoll_dtype_name(enum kcoll_datatype dt)
{
	static const char *const n[KCOLL_NUM_DATATYPES] = { KCOLL_DATATYPE_NAMES };

	return (unsigned int)dt < KCOLL_NUM_DATATYPES ? n[dt] : NULL;
}

/* "sum", "prod", "min", "max", "avg" (include/kcoll_names.h); NULL for an unknown value. */
static inline const char *kcoll_redop_name(enum kcoll_red_op op)
{
	static const char *const n[KCOLL_NUM_RED_OPS] = { KCOLL_RED_OP_NAMES };

	return (unsigned int)op < KCOLL_NUM_RED_OPS ? n[op] : NULL;
}

static inline bool kcoll_name_eq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* Inverse of the name helpers: the value, or -EINVAL for an unknown name. */
static inline int kcoll_dtype_from_name(const char *name)
{
	int i;

	for (i = 0; i < KCOLL_NUM_DATATYPES; i++)
		if (kcoll_name_eq(name, kcoll_dtype_name((enum kcoll_datatype)i)))
			return i;
	return -EINVAL;
}

static inline int kcoll_redop_from_name(const char *name)
{
	int i;

	for (i = 0; i < KCOLL_NUM_RED_OPS; i++)
		if (kcoll_name_eq(name, kcoll_redop_name((enum kcoll_red_op)i)))
			return i;
	return -EINVAL;
}

/*
 * 0 if the pair is supported (see the matrix above), -EINVAL if not or if either value is
 * unknown.  AVG is defined for the floating-point types only.
 */
static inline int kcoll_reduce_check(enum kcoll_datatype dt, enum kcoll_red_op op)
{
	if ((unsigned int)dt >= KCOLL_NUM_DATATYPES || (unsigned int)op >= KCOLL_NUM_RED_OPS)
		return -EINVAL;
	if (op == KCOLL_AVG && !kcoll_dtype_is_float(dt))
		return -EINVAL;
	return 0;
}

struct kcoll_reduce_engine {
	const char *name;
	/* Whether this engine itself implements the (supported) pair; no FPU use. */
	bool (*supports)(enum kcoll_datatype dt, enum kcoll_red_op op);
	/* dst[i] = dst[i] op src[i] for i < count. */
	void (*reduce)(void *dst, const void *src, size_t count, enum kcoll_datatype dt,
		       enum kcoll_red_op op);
	/* dst[i] = a[i] op b[i]; dst == a or dst == b allowed. */
	void (*reduce3)(void *dst, const void *a, const void *b, size_t count,
			enum kcoll_datatype dt, enum kcoll_red_op op);
};

extern const struct kcoll_reduce_engine kcoll_reduce_engine_generic;
#if defined(__x86_64__)
#define KCOLL_HAVE_REDUCE_AVX2 1
extern const struct kcoll_reduce_engine kcoll_reduce_engine_avx2;
#endif

/* The portable engine's entry points (also what the others fall back to). */
void kcoll_reduce_generic(void *dst, const void *src, size_t count, enum kcoll_datatype dt,
			  enum kcoll_red_op op);
void kcoll_reduce3_generic(void *dst, const void *a, const void *b, size_t count,
			   enum kcoll_datatype dt, enum kcoll_red_op op);

/*
 * Finish a reduction: for AVG divide every element by nranks (nranks >= 1); a no-op for
 * every other op.  Uses the FPU for AVG.
 */
void kcoll_reduce_finalize(void *buf, size_t count, enum kcoll_datatype dt, enum kcoll_red_op op,
			   unsigned int nranks);

/*
 * The fastest engine for this CPU: kcoll_reduce_engine_avx2 if have_avx2 (and this is an
 * x86-64 build), else kcoll_reduce_engine_generic.  No FPU use.
 */
const struct kcoll_reduce_engine *kcoll_reduce_best(bool have_avx2);

#endif /* _KCOLL_CORE_REDUCE_H */
