// SPDX-License-Identifier: GPL-2.0-only
/*
 * The references of reduce_ref.h, written independently of core/kcoll_reduce (fp16/bf16
 * through tables and a nearest-value search, not bit tricks), and the engines under test,
 * compiled here once for the test_reduce_* programs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/kcoll_reduce.c"
#include "../../core/kcoll_reduce_x86.c"

#include "reduce_ref.h"

/* ---- random ----------------------------------------------------------------------------- */

static u64 rs = 0x9e3779b97f4a7c15ULL;

u64 rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 0x2545F4914F6CDD1DULL;
}

/* ---- reference fp16/bf16 conversions: tables and search ------------------------------- */

float h16_val[65536], b16_val[65536];

static float pow2f(int e)
{
	float v = 1.0f;

	for (; e > 0; e--)
		v *= 2.0f;
	for (; e < 0; e++)
		v *= 0.5f;
	return v;
}

void build_tables(void)
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

float ref_h2f(u16 h)
{
	return h16_val[h];
}

u16 ref_f2h(float f)
{
	u16 c;

	if (isnan(f))
		return 0x7e00;
	c = nearest(h16_val, 0x7bff, 0x7c00, 65536.0, f);
	return signbit(f) ? c | 0x8000 : c;
}

float ref_bf2f(u16 h)
{
	return b16_val[h];
}

u16 ref_f2bf(float f)
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
void fill(u8 *p, size_t n, enum kcoll_datatype dt)
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

const struct kcoll_reduce_engine *engines[2];
int nengines;

void init_engines(void)
{
	nengines = 0;
	engines[nengines++] = &kcoll_reduce_engine_generic;
#ifdef KCOLL_HAVE_REDUCE_AVX2
	if (have_avx2())
		engines[nengines++] = &kcoll_reduce_engine_avx2;
#endif
}

long check_one(const struct kcoll_reduce_engine *e, enum kcoll_datatype dt,
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
