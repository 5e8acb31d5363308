/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * selftests/host/sched_ref.h - what the schedule tests share: a deterministic random source
 * and independent references for the reduction order each algorithm documents
 * (core/kcoll_sched.h).  Included by sched_sweep.c, test_sched_api.c, test_sched_sim.c and
 * test_sched_hier.c.
 */
#ifndef _KCOLL_SCHED_REF_H
#define _KCOLL_SCHED_REF_H

#define PMAX		1024

/* ---- deterministic random ------------------------------------------------------------- */

static u64 trng = 88172645463325252ULL;

static inline u64 rnd(void)
{
	trng ^= trng >> 12;
	trng ^= trng << 25;
	trng ^= trng >> 27;
	return trng * 0x2545F4914F6CDD1DULL;
}

/* A finite float of random sign and magnitude between 2^-20 and 2^20. */
static inline float rnd_float(void)
{
	u64 x = rnd();
	u32 e = 127 - 20 + (u32)(x % 41), m = (u32)(x >> 8) & 0x7fffff;
	u32 b = ((u32)(x >> 40) & 1) << 31 | e << 23 | m;
	float f;

	memcpy(&f, &b, 4);
	return f;
}

/* ---- references for the reduction order --------------------------------------------------- */

static float fx[PMAX], fl[PMAX];

static inline float ord_ring(u32 p, u32 b)
{
	float acc = fx[(b + 1) % p];
	u32 j;

	for (j = 2; j <= p; j++)
		acc += fx[(b + j) % p];
	return acc;
}

static inline u32 t_pow2_floor(u32 p)
{
	u32 q = 1;

	while (2 * q <= p)
		q *= 2;
	return q;
}

static inline void fold_leaves(u32 p, u32 q)
{
	u32 m = p - q, v;

	for (v = 0; v < q; v++)
		fl[v] = v < m ? fx[2 * v] + fx[2 * v + 1] : fx[v + m];
}

static inline float ord_recdbl(u32 p)
{
	u32 q = t_pow2_floor(p), w, v;

	fold_leaves(p, q);
	for (w = 1; w < q; w *= 2)
		for (v = 0; v < q; v += 2 * w)
			fl[v] = fl[v] + fl[v + w];
	return fl[0];
}

static inline float ord_rabenseifner(u32 p)
{
	u32 q = t_pow2_floor(p), w, v;

	fold_leaves(p, q);
	for (w = q / 2; w >= 1; w /= 2)
		for (v = 0; v < w; v++)
			fl[v] = fl[v] + fl[v + w];
	return fl[0];
}

/* binomial: relative rank v, children v + 1, v + 2, v + 4, ... below lowbit(v) */
static inline float ord_binomial(u32 p, u32 root, u32 v)
{
	float acc = fx[(v + root) % p];
	u32 lim = v ? (v & -v) : p, d;

	for (d = 1; d < lim && v + d < p; d *= 2)
		acc = acc + ord_binomial(p, root, v + d);
	return acc;
}

/* the double binary tree, derived independently from the description */
static inline void t_dbt_children(u32 p, u32 x, long *l, long *r)
{
	u32 b, d;

	*l = *r = -1;
	if (x == 0) {
		if (p > 1)
			*r = t_pow2_floor(p - 1);
		return;
	}
	b = x & -x;
	if (b == 1)
		return;
	*l = x - b / 2;
	for (d = b / 2; d; d /= 2)
		if (x + d < p) {
			*r = x + d;
			break;
		}
}

static inline u32 t_dbt_rank(u32 p, int t, u32 x)
{
	if (!t)
		return x;
	return p & 1 ? (x + 1) % p : p - 1 - x;
}

static inline float ord_dbtree(u32 p, int t, u32 x)
{
	float v = fx[t_dbt_rank(p, t, x)];
	long l, r;

	t_dbt_children(p, x, &l, &r);
	if (r >= 0)
		v = v + ord_dbtree(p, t, (u32)r);
	if (l >= 0)
		v = v + ord_dbtree(p, t, (u32)l);
	return v;
}

static inline int f32b_eq(float a, float b)
{
	return !memcmp(&a, &b, 4);
}

static inline float ord_chain(u32 p, u32 root)
{
	float acc = fx[(p - 1 + root) % p];
	u32 v;

	for (v = p - 1; v-- > 0;)
		acc = fx[(v + root) % p] + acc;
	return acc;
}

/* ring block of element e of a count split in p parts */
static inline u32 part_of(u64 count, u32 p, u64 e)
{
	u64 base = count / p, rem = count % p;

	if (e < rem * (base + 1))
		return (u32)(e / (base + 1));
	return (u32)(rem + (e - rem * (base + 1)) / base);
}


#endif /* _KCOLL_SCHED_REF_H */
