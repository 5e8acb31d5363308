// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_reduce: every dtype x op of every engine against references written here
 * independently (fp16/bf16 through tables built with float arithmetic and a nearest-value
 * search, not bit tricks), tails and unaligned pointers, NaN/Inf/-0 cases, integer
 * wrap-around, AVG finalisation, and the AVX2 engine bit-identical to the portable one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include "../../core/kcoll_reduce.c"
#include "../../core/kcoll_reduce_x86.c"

/* ---- random ----------------------------------------------------------------------------- */

static u64 rs = 0x9e3779b97f4a7c15ULL;

static u64 rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 0x2545F4914F6CDD1DULL;
}

/* ---- reference fp16/bf16 conversions: tables and search ------------------------------- */

static float h16_val[65536], b16_val[65536];

static float pow2f(int e)
{
	float v = 1.0f;

	for (; e > 0; e--)
		v *= 2.0f;
	for (; e < 0; e++)
		v *= 0.5f;
	return v;
}

static void build_tables(void)
{
	static int done;
	u32 h;

	if (done)
		return;
	done = 1;
	for (h = 0; h < 65536; h++) {
		int s = h >> 15;
		int e = (h >> 10) & 31, m = h & 1023;
		float v;

		if (e == 31)
			v = m ? NAN : INFINITY;
		else if (e == 0)
			v = (float)m * pow2f(-24);
		else
			v = (float)(1024 + m) * pow2f(e - 25);
		h16_val[h] = s ? -v : v;

		e = (h >> 7) & 255;
		m = h & 127;
		if (e == 255)
			v = m ? NAN : INFINITY;
		else if (e == 0)
			v = (float)m * pow2f(-133);
		else
			v = (float)(128 + m) * pow2f(e - 134);
		b16_val[h] = s ? -v : v;
	}
}

/*
 * Nearest finite code to |f| among codes 0..maxc (increasing values), ties to the even code;
 * past the largest finite value, the "next" code inf is a candidate at value lim (2^16 or
 * 2^128) and wins ties, being even.
 */
static u16 nearest(const float *tab, u32 maxc, u32 inf, double lim, float f)
{
	double a = __builtin_fabs((double)f);
	u32 lo = 0, hi = maxc;
	double vlo, vhi;
	u32 clo, chi;

	if (a >= tab[maxc]) {
		clo = maxc;
		chi = inf;
		vlo = tab[maxc];
		vhi = lim;
	} else {
		while (hi - lo > 1) {	/* tab[lo] <= a < tab[hi] */
			u32 mid = (lo + hi) / 2;

			if (tab[mid] <= a)
				lo = mid;
			else
				hi = mid;
		}
		if (tab[hi] <= a)
			lo = hi;
		clo = lo;
		chi = lo + 1;
		vlo = tab[clo];
		vhi = chi == maxc + 1 ? lim : tab[chi];
	}
	if (a - vlo < vhi - a)
		return (u16)clo;
	if (a - vlo > vhi - a)
		return (u16)(chi > maxc ? inf : chi);
	return (u16)((clo & 1) ? (chi > maxc ? inf : chi) : clo);
}

static float ref_h2f(u16 h)
{
	return h16_val[h];
}

static u16 ref_f2h(float f)
{
	u16 c;

	if (isnan(f))
		return 0x7e00;
	c = nearest(h16_val, 0x7bff, 0x7c00, 65536.0, f);
	return signbit(f) ? c | 0x8000 : c;
}

static float ref_bf2f(u16 h)
{
	return b16_val[h];
}

static u16 ref_f2bf(float f)
{
	u16 c;

	if (isnan(f))
		return 0x7fc0;
	c = nearest(b16_val, 0x7f7f, 0x7f80, 0x1p128, f);
	return signbit(f) ? c | 0x8000 : c;
}

/* ---- reference element operations ---------------------------------------------------------- */

static float ref_fop(float a, float b, enum kcoll_red_op op)
{
	float r;

	switch (op) {
	case KCOLL_SUM:
	case KCOLL_AVG:
		r = a + b;
		break;
	case KCOLL_PROD:
		r = a * b;
		break;
	case KCOLL_MIN:
		if (isnan(a) || isnan(b))
			return NAN;
		if (a == b && a == 0)
			return signbit(a) ? a : b;
		r = a < b ? a : b;
		break;
	default:
		if (isnan(a) || isnan(b))
			return NAN;
		if (a == b && a == 0)
			return signbit(a) ? b : a;
		r = a > b ? a : b;
		break;
	}
	return r;
}

static double ref_dop(double a, double b, enum kcoll_red_op op)
{
	switch (op) {
	case KCOLL_SUM:
	case KCOLL_AVG:
		return a + b;
	case KCOLL_PROD:
		return a * b;
	case KCOLL_MIN:
		if (isnan(a) || isnan(b))
			return NAN;
		if (a == b && a == 0)
			return signbit(a) ? a : b;
		return a < b ? a : b;
	default:
		if (isnan(a) || isnan(b))
			return NAN;
		if (a == b && a == 0)
			return signbit(a) ? b : a;
		return a > b ? a : b;
	}
}

/* Integers: computed wide, truncated to the width (two's complement wrap). */
static u64 ref_iop(s64 sa, s64 sb, u64 ua, u64 ub, bool sgn, unsigned int bits,
		   enum kcoll_red_op op)
{
	u64 mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
	unsigned __int128 w;

	switch (op) {
	case KCOLL_SUM:
		w = (unsigned __int128)ua + ub;
		return (u64)w & mask;
	case KCOLL_PROD:
		w = (unsigned __int128)ua * ub;
		return (u64)w & mask;
	case KCOLL_MIN:
		return (sgn ? (sa < sb ? ua : ub) : (ua < ub ? ua : ub)) & mask;
	default:
		return (sgn ? (sa > sb ? ua : ub) : (ua > ub ? ua : ub)) & mask;
	}
}

/* Reference for one element: bytes of a and b to bytes of out. */
static void ref_elem(enum kcoll_datatype dt, enum kcoll_red_op op, const u8 *a, const u8 *b,
		     u8 *out)
{
	size_t es = kcoll_dtype_size(dt);

	switch (dt) {
	case KCOLL_FP32: {
		float x, y, r;
		u32 q = 0x7fc00000;

		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		r = ref_fop(x, y, op);
		if (isnan(r))
			memcpy(out, &q, 4);
		else
			memcpy(out, &r, 4);
		return;
	}
	case KCOLL_FP64: {
		double x, y, r;
		u64 q = 0x7ff8000000000000ULL;

		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		r = ref_dop(x, y, op);
		if (isnan(r))
			memcpy(out, &q, 8);
		else
			memcpy(out, &r, 8);
		return;
	}
	case KCOLL_FP16:
	case KCOLL_BF16: {
		u16 x, y, r;
		bool h = dt == KCOLL_FP16;

		memcpy(&x, a, 2);
		memcpy(&y, b, 2);
		r = h ? ref_f2h(ref_fop(ref_h2f(x), ref_h2f(y), op)) :
			ref_f2bf(ref_fop(ref_bf2f(x), ref_bf2f(y), op));
		memcpy(out, &r, 2);
		return;
	}
	default: {
		bool sgn = dt == KCOLL_INT8 || dt == KCOLL_INT32 ||
			   dt == KCOLL_INT64;
		u64 ua = 0, ub = 0, r;
		s64 sa, sb;
		unsigned int bits = (unsigned int)es * 8;

		memcpy(&ua, a, es);	/* little endian */
		memcpy(&ub, b, es);
		if (sgn && bits < 64) {
			sa = (s64)(ua << (64 - bits)) >> (64 - bits);
			sb = (s64)(ub << (64 - bits)) >> (64 - bits);
		} else {
			sa = (s64)ua;
			sb = (s64)ub;
		}
		r = ref_iop(sa, sb, ua, ub, sgn, bits, op);
		memcpy(out, &r, es);
		return;
	}
	}
}

/* ---- data ------------------------------------------------------------------------------- */

static const u32 f32_special[] = {
	0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001,
	0x7fbfffff, 0x00000001, 0x80000001, 0x007fffff, 0x7f7fffff, 0xff7fffff, 0x3f800000,
	0xbf800000, 0x33000000, 0x477ff000, 0x477fefff, 0x38800000, 0x387fffff,
};
static const u64 f64_special[] = {
	0, 0x8000000000000000ULL, 0x7ff0000000000000ULL, 0xfff0000000000000ULL,
	0x7ff8000000000000ULL, 0xfff8000000000001ULL, 0x7ff0000000000001ULL, 1,
	0x800fffffffffffffULL, 0x7fefffffffffffffULL, 0x3ff0000000000000ULL,
};
static const u16 h16_special[] = {
	0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01, 0x0001, 0x8001, 0x03ff,
	0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x0400, 0x3c01,
};
static const u16 b16_special[] = {
	0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81, 0x0001, 0x8001, 0x007f,
	0x7f7f, 0xff7f, 0x3f80, 0xbf80,
};

/* Random elements: random bits, a quarter of them special values for floats. */
static void fill(u8 *p, size_t n, enum kcoll_datatype dt)
{
	size_t es = kcoll_dtype_size(dt), i;

	for (i = 0; i < n; i++) {
		u64 x = rnd();

		if (kcoll_dtype_is_float(dt) && (x & 3) == 0) {
			u64 k = x >> 8;

			switch (dt) {
			case KCOLL_FP32:
				memcpy(p + i * 4, &f32_special[k % (sizeof(f32_special) / 4)], 4);
				break;
			case KCOLL_FP64:
				memcpy(p + i * 8, &f64_special[k % (sizeof(f64_special) / 8)], 8);
				break;
			case KCOLL_FP16:
				memcpy(p + i * 2, &h16_special[k % (sizeof(h16_special) / 2)], 2);
				break;
			default:
				memcpy(p + i * 2, &b16_special[k % (sizeof(b16_special) / 2)], 2);
				break;
			}
			continue;
		}
		if (kcoll_dtype_is_float(dt) && (x & 3) == 1) {
			/* ordinary numbers of moderate range: sums and products that round */
			if (dt == KCOLL_FP32) {
				float f = (float)((s64)(x >> 11) % 100000) / 1024.0f;

				memcpy(p + i * 4, &f, 4);
			} else if (dt == KCOLL_FP64) {
				double f = (double)((s64)(x >> 11) % 100000000) / 1048576.0;

				memcpy(p + i * 8, &f, 8);
			} else {
				u16 h = (u16)((x >> 16) & 0x3fff) | (u16)((x >> 40) & 0x8000);

				if (dt == KCOLL_BF16)
					h = (u16)(0x3c00 + ((x >> 16) & 0x7ff)) |
					    (u16)((x >> 40) & 0x8000);
				memcpy(p + i * 2, &h, 2);
			}
			continue;
		}
		memcpy(p + i * es, &x, es);
	}
}

/* ---- the engines under test ------------------------------------------------------------- */

static int have_avx2(void)
{
#ifdef KCOLL_HAVE_REDUCE_AVX2
	return __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}

static const struct kcoll_reduce_engine *engines[2];
static int nengines;

static void init_engines(void)
{
	nengines = 0;
	engines[nengines++] = &kcoll_reduce_engine_generic;
#ifdef KCOLL_HAVE_REDUCE_AVX2
	if (have_avx2())
		engines[nengines++] = &kcoll_reduce_engine_avx2;
#endif
}

/*
 * Check engine e on count elements at misaligned offsets; mode 0: reduce(dst, src),
 * 1: reduce3 into a separate dst, 2: reduce3 with dst == a, 3: reduce3 with dst == b,
 * 4: reduce3 with dst == a == b.
 * Returns the index of the first wrong element, -2 for a guard byte overwritten, -1 if all
 * good.
 */
static long check_one(const struct kcoll_reduce_engine *e, enum kcoll_datatype dt,
		      enum kcoll_red_op op, size_t count, int mode, unsigned int oa, unsigned int ob,
		      unsigned int od, char *why, size_t whylen)
{
	size_t es = kcoll_dtype_size(dt), n = count * es, i;
	u8 *A = malloc(n + 64), *Bf = malloc(n + 64), *D = malloc(n + 64), *R = malloc(n + 8);
	u8 *a = A + oa, *b = Bf + ob, *d = D + od;
	long bad = -1;

	memset(D, 0x5a, n + 64);
	fill(a, count, dt);
	fill(b, count, dt);
	if (mode == 4)		/* x op x */
		memcpy(b, a, n);
	for (i = 0; i < count; i++)
		ref_elem(dt, op, a + i * es, b + i * es, R + i * es);
	switch (mode) {
	case 0:
		memcpy(d, a, n);
		e->reduce(d, b, count, dt, op);
		break;
	case 1:
		e->reduce3(d, a, b, count, dt, op);
		break;
	case 2:
		memcpy(d, a, n);
		e->reduce3(d, d, b, count, dt, op);
		break;
	case 3:
		memcpy(d, b, n);
		e->reduce3(d, a, d, count, dt, op);
		break;
	default:
		memcpy(d, a, n);
		e->reduce3(d, d, d, count, dt, op);
		break;
	}
	for (i = 0; i < count; i++) {
		if (memcmp(d + i * es, R + i * es, es)) {
			u64 x = 0, y = 0, got = 0, want = 0;

			memcpy(&x, a + i * es, es);
			memcpy(&y, b + i * es, es);
			memcpy(&got, d + i * es, es);
			memcpy(&want, R + i * es, es);
			snprintf(why, whylen, "%s %s %s count %zu mode %d: element %zu: a=%#llx "
				 "b=%#llx got %#llx want %#llx", e->name, kcoll_dtype_name(dt),
				 kcoll_redop_name(op), count, mode, i, (unsigned long long)x,
				 (unsigned long long)y, (unsigned long long)got,
				 (unsigned long long)want);
			bad = (long)i;
			break;
		}
	}
	if (bad < 0 && (mode == 1 || mode == 0)) {
		for (i = 0; i < od; i++)
			if (D[i] != 0x5a)
				bad = -2;
		for (i = od + n; i < n + 64; i++)
			if (D[i] != 0x5a)
				bad = -2;
		if (bad == -2)
			snprintf(why, whylen, "%s %s %s count %zu: wrote outside dst", e->name,
				 kcoll_dtype_name(dt), kcoll_redop_name(op), count);
	}
	free(A);
	free(Bf);
	free(D);
	free(R);
	return bad;
}

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
