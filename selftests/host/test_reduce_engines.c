// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_reduce's engines: the dtype and op names and sizes, the supported pairs (and
 * unsupported ones leaving the buffer untouched), the engine choice, every dtype x op of every
 * engine against the references of reduce_ref.c with tails and unaligned pointers, and the
 * AVX2 engine bit-identical to the portable one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "reduce_ref.h"

TEST(names_and_sizes)
{
	static const size_t sz[] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };
	int i;

	for (i = 0; i < KCOLL_NUM_DATATYPES; i++) {
		EXPECT_EQ(sz[i], kcoll_dtype_size((enum kcoll_datatype)i));
		EXPECT_EQ(i, kcoll_dtype_from_name(kcoll_dtype_name((enum kcoll_datatype)i)));
	}
	for (i = 0; i < KCOLL_NUM_RED_OPS; i++)
		EXPECT_EQ(i, kcoll_redop_from_name(kcoll_redop_name((enum kcoll_red_op)i)));
	EXPECT_STREQ("bf16", kcoll_dtype_name(KCOLL_BF16));
	EXPECT_STREQ("avg", kcoll_redop_name(KCOLL_AVG));
	EXPECT_EQ(NULL, kcoll_dtype_name(KCOLL_NUM_DATATYPES));
	EXPECT_EQ(0, kcoll_dtype_size(KCOLL_NUM_DATATYPES));
	EXPECT_EQ(-EINVAL, kcoll_dtype_from_name("float"));
	EXPECT_EQ(-EINVAL, kcoll_redop_from_name("su"));
	/* uAPI values */
	EXPECT_EQ(6, KCOLL_FP16);
	EXPECT_EQ(9, KCOLL_FP64);
	EXPECT_EQ(4, KCOLL_AVG);
}

TEST(check_matrix)
{
	int d, o;

	for (d = 0; d < KCOLL_NUM_DATATYPES; d++)
		for (o = 0; o < KCOLL_NUM_RED_OPS; o++) {
			int want = o == KCOLL_AVG &&
				   !kcoll_dtype_is_float((enum kcoll_datatype)d) ? -EINVAL : 0;

			EXPECT_EQ(want, kcoll_reduce_check((enum kcoll_datatype)d,
							   (enum kcoll_red_op)o));
		}
	EXPECT_EQ(-EINVAL, kcoll_reduce_check(KCOLL_NUM_DATATYPES, KCOLL_SUM));
	EXPECT_EQ(-EINVAL, kcoll_reduce_check(KCOLL_FP32, KCOLL_NUM_RED_OPS));
	EXPECT_EQ(-EINVAL, kcoll_reduce_check((enum kcoll_datatype)-1, KCOLL_SUM));
}

/* An unsupported pair leaves dst alone in every engine; supports() agrees with check. */
TEST(unsupported_pairs_untouched)
{
	u8 a[64], b[64], d[64];
	int i, d0, o;

	init_engines();
	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	for (i = 0; i < nengines; i++) {
		for (d0 = 0; d0 < KCOLL_NUM_DATATYPES; d0++)
			for (o = 0; o < KCOLL_NUM_RED_OPS; o++)
				EXPECT_EQ(kcoll_reduce_check((enum kcoll_datatype)d0,
							     (enum kcoll_red_op)o) == 0,
					  engines[i]->supports((enum kcoll_datatype)d0,
							       (enum kcoll_red_op)o));
		memset(d, 7, sizeof(d));
		engines[i]->reduce(d, b, 8, KCOLL_INT32, KCOLL_AVG);
		engines[i]->reduce3(d, a, b, 8, KCOLL_UINT8, KCOLL_AVG);
		engines[i]->reduce3(d, a, b, 8, KCOLL_NUM_DATATYPES, KCOLL_SUM);
		for (o = 0; o < 64; o++)
			ASSERT_EQ(7, d[o]);
	}
}

TEST(engine_choice)
{
	EXPECT_EQ(&kcoll_reduce_engine_generic, kcoll_reduce_best(false));
#ifdef KCOLL_HAVE_REDUCE_AVX2
	EXPECT_EQ(&kcoll_reduce_engine_avx2, kcoll_reduce_best(true));
	EXPECT_STREQ("avx2", kcoll_reduce_best(true)->name);
#endif
	EXPECT_STREQ("generic", kcoll_reduce_best(false)->name);
}

/* Every engine, dtype, op, count (tails!), alignment and aliasing mode vs the reference. */
TEST(all_pairs_vs_reference)
{
	static const size_t counts[] = { 0, 1, 7, 31, 33, 4097 };
	static const unsigned int offs[][3] = { { 0, 0, 0 }, { 1, 3, 2 }, { 3, 0, 1 },
						{ 0, 2, 5 } };
	char why[300];
	int i, d, o, c, m, f, checked = 0;

	build_tables();
	init_engines();
	if (nengines < 2)
		ksft_print_msg("no AVX2 on this CPU: the generic engine only\n");
	for (i = 0; i < nengines; i++)
		for (d = 0; d < KCOLL_NUM_DATATYPES; d++)
			for (o = 0; o < KCOLL_NUM_RED_OPS; o++) {
				if (kcoll_reduce_check((enum kcoll_datatype)d, (enum kcoll_red_op)o))
					continue;
				for (c = 0; c < 6; c++)
					for (m = 0; m < 5; m++)
						for (f = 0; f < 4; f++) {
							long bad;

							if (c == 5 && f > 1)
								continue;
							bad = check_one(engines[i], (enum kcoll_datatype)d,
									(enum kcoll_red_op)o, counts[c],
									m, offs[f][0], offs[f][1],
									offs[f][2], why, sizeof(why));
							if (bad != -1)
								TH_LOG("%s", why);
							ASSERT_EQ(-1, bad);
							checked++;
						}
			}
	ksft_print_msg("%d engine x dtype x op x count x mode x alignment cases\n", checked);
	fflush(stdout);
}

/* The SIMD engine gives the same bits as the generic one, on random bits of every kind. */
TEST(avx2_bit_identical)
{
	size_t n = 100003, es, i;
	int d, o, r;

	init_engines();
	if (nengines < 2)
		SKIP(return, "CPU without AVX2");
	for (d = 0; d < KCOLL_NUM_DATATYPES; d++) {
		es = kcoll_dtype_size((enum kcoll_datatype)d);
		for (o = 0; o < KCOLL_NUM_RED_OPS; o++) {
			u8 *a, *b, *g, *x;

			if (kcoll_reduce_check((enum kcoll_datatype)d, (enum kcoll_red_op)o))
				continue;
			a = malloc(n * es + 1);
			b = malloc(n * es + 1);
			g = malloc(n * es + 1);
			x = malloc(n * es + 1);
			for (r = 0; r < 2; r++) {
				if (r == 0) {	/* uniform random bits: every NaN payload */
					for (i = 0; i < n * es; i++) {
						a[i] = (u8)rnd();
						b[i] = (u8)rnd();
					}
				} else {
					fill(a, n, (enum kcoll_datatype)d);
					fill(b, n, (enum kcoll_datatype)d);
				}
				kcoll_reduce_engine_generic.reduce3(g, a, b, n, (enum kcoll_datatype)d,
								    (enum kcoll_red_op)o);
				kcoll_reduce_engine_avx2.reduce3(x + 1, a, b, n, (enum kcoll_datatype)d,
								 (enum kcoll_red_op)o);
				for (i = 0; i < n * es; i++)
					if (g[i] != x[i + 1])
						break;
				if (i < n * es)
					TH_LOG("%s %s: byte %zu differs", kcoll_dtype_name(d),
					       kcoll_redop_name(o), i);
				ASSERT_EQ(n * es, i);
			}
			free(a);
			free(b);
			free(g);
			free(x);
		}
	}
}

/* Hand-picked cases, written as the values they should be. */
TEST_HARNESS_MAIN
