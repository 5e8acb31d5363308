/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The references shared by the test_reduce_* programs (reduce_ref.c): fp16/bf16 conversions
 * through tables built with float arithmetic and a nearest-value search, element operations
 * written independently of core/kcoll_reduce, test data with the special values mixed in,
 * and the engines of this CPU.
 */
#ifndef _REDUCE_REF_H
#define _REDUCE_REF_H

#include <stddef.h>

#include "../../core/kcoll_reduce.h"
#include "../../core/kcoll_reduce_impl.h"

u64 rnd(void);

/* Every fp16 and bf16 bit pattern's value; build_tables() fills them. */
extern float h16_val[65536], b16_val[65536];
void build_tables(void);
float ref_h2f(u16 h);
u16 ref_f2h(float f);
float ref_bf2f(u16 h);
u16 ref_f2bf(float f);

/* Random elements: random bits, a quarter of them special values for floats. */
void fill(u8 *p, size_t n, enum kcoll_datatype dt);

/* The generic engine and, if this CPU has it, the AVX2 one; init_engines() fills them. */
extern const struct kcoll_reduce_engine *engines[2];
extern int nengines;
void init_engines(void);

/*
 * Check engine e on count elements at misaligned offsets; mode 0: reduce(dst, src),
 * 1: reduce3 into a separate dst, 2: reduce3 with dst == a, 3: reduce3 with dst == b,
 * 4: reduce3 with dst == a == b.
 * Returns the index of the first wrong element, -2 for a guard byte overwritten, -1 if all
 * good.
 */
long check_one(const struct kcoll_reduce_engine *e, enum kcoll_datatype dt,
	       enum kcoll_red_op op, size_t count, int mode, unsigned int oa, unsigned int ob,
	       unsigned int od, char *why, size_t whylen);

#endif /* _REDUCE_REF_H */
