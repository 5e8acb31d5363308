// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched's interface: which algorithm supports which collective, bad arguments
 * refused, sizes that overflow, the selection (flat and tuned) of kcoll_sched_select(),
 * schedule fingerprints, the step tags of all-to-all-v and the double binary tree's shape.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>

#include "kselftest_harness.h"

#include "sched_sweep.h"
#include "sched_ref.h"

TEST(support_matrix)
{
	static const struct {
		enum kcoll_algorithm a;
		u32 colls;
	} m[] = {
#define B(c) (1U << KCOLL_##c)
		{ KCOLL_ALG_RING, B(ALLREDUCE) | B(ALLGATHER) | B(REDUCE_SCATTER) |
				   B(ALLGATHERV) | B(REDUCE_SCATTERV) },
		{ KCOLL_ALG_RECDBL, B(ALLREDUCE) | B(ALLGATHER) | B(BARRIER) },
		{ KCOLL_ALG_RABENSEIFNER, B(ALLREDUCE) | B(REDUCE_SCATTER) },
		{ KCOLL_ALG_BINOMIAL, B(BROADCAST) | B(REDUCE) | B(SCATTER) | B(GATHER) |
				       B(ALLREDUCE) | B(BARRIER) },
		{ KCOLL_ALG_DBTREE, B(ALLREDUCE) },
		{ KCOLL_ALG_CHAIN, B(BROADCAST) | B(REDUCE) },
		{ KCOLL_ALG_PAIRWISE, B(ALLTOALL) | B(ALLTOALLV) },
		{ KCOLL_ALG_BRUCK, B(ALLTOALL) | B(ALLGATHER) | B(BARRIER) },
		/* local_size 0 here: one rank per node (test_sched_hier covers the shapes) */
		{ KCOLL_ALG_HIER, B(ALLREDUCE) | B(BROADCAST) | B(REDUCE) | B(ALLGATHER) },
#undef B
	};
	struct kcoll_coll_args a;
	struct kcoll_sched_info info;
	u32 covered = 0;
	unsigned int i;
	int c;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		covered |= m[i].colls;
		for (c = 0; c < KCOLL_NUM_COLLECTIVES; c++) {
			bool want = m[i].colls & (1U << c);

			EXPECT_EQ(want, kcoll_sched_supports(m[i].a, (enum kcoll_collective)c, false));
			EXPECT_EQ(want && c != KCOLL_BARRIER,
				  kcoll_sched_supports(m[i].a, (enum kcoll_collective)c, true));
			memset(&a, 0, sizeof(a));
			a.coll = (enum kcoll_collective)c;
			a.nranks = 4;
			a.rank = 1;
			a.count = 3;
			a.elem_size = 4;
			if (c == KCOLL_ALLGATHERV || c == KCOLL_REDUCE_SCATTERV ||
			    c == KCOLL_ALLTOALLV) {
				static const u64 cnt[4] = { 1, 2, 3, 4 }, dsp[4] = { 0, 1, 3, 6 };

				a.counts = a.send_counts = cnt;
				a.displs = a.send_displs = dsp;
			}
			EXPECT_EQ(want ? 0 : -EINVAL, kcoll_sched_build(&a, m[i].a, 0, NULL, 0,
									 &info));
		}
	}
	/* every collective has at least one algorithm */
	EXPECT_EQ((1U << KCOLL_NUM_COLLECTIVES) - 1, covered);
	EXPECT_FALSE(kcoll_sched_supports(KCOLL_ALG_AUTO, KCOLL_ALLREDUCE, false));
	EXPECT_FALSE(kcoll_sched_supports(KCOLL_NUM_ALGORITHMS, KCOLL_ALLREDUCE, false));
	EXPECT_STREQ("reduce_scatterv", kcoll_coll_name(KCOLL_REDUCE_SCATTERV));
	EXPECT_STREQ("rabenseifner", kcoll_algo_name(KCOLL_ALG_RABENSEIFNER));
	EXPECT_EQ(NULL, kcoll_coll_name(KCOLL_NUM_COLLECTIVES));
}

TEST(bad_arguments)
{
	struct kcoll_coll_args a;
	struct kcoll_sched_info info;
	struct kcoll_step st[4];
	u64 sb, rb;

	memset(&a, 0, sizeof(a));
	a.coll = KCOLL_ALLREDUCE;
	a.nranks = 4;
	a.rank = 0;
	a.count = 10;
	a.elem_size = 4;
	ASSERT_EQ(0, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	EXPECT_EQ(-ENOSPC, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, st, 4, &info));
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_AUTO, 0, NULL, 0, &info));
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, NULL));
	a.rank = 4;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.rank = 0;
	a.elem_size = 0;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.elem_size = 4;
	a.nranks = 0;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.nranks = 4;
	a.count = 1ULL << 62;
	EXPECT_EQ(-EOVERFLOW, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.count = 10;
	a.coll = KCOLL_BROADCAST;
	a.root = 4;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_BINOMIAL, 0, NULL, 0, &info));
	a.coll = KCOLL_ALLGATHERV;	/* arrays missing */
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	a.coll = KCOLL_BARRIER;
	a.in_place = true;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_BRUCK, 0, NULL, 0, &info));
	/* buffer sizes per the conventions */
	a.in_place = false;
	a.coll = KCOLL_ALLGATHER;
	a.rank = 2;
	ASSERT_EQ(0, kcoll_sched_buf_bytes(&a, &sb, &rb));
	EXPECT_EQ(40, sb);
	EXPECT_EQ(160, rb);
	a.in_place = true;
	a.coll = KCOLL_REDUCE_SCATTER;
	ASSERT_EQ(0, kcoll_sched_buf_bytes(&a, &sb, &rb));
	EXPECT_EQ(0, sb);
	EXPECT_EQ(160, rb);
	a.coll = KCOLL_GATHER;
	a.root = 1;
	a.in_place = false;
	ASSERT_EQ(0, kcoll_sched_buf_bytes(&a, &sb, &rb));
	EXPECT_EQ(40, sb);
	EXPECT_EQ(0, rb);
}

/*
 * The size limit kcoll_allreduce(3) and kcoll(4) document for EOVERFLOW, at its exact
 * boundary: count x element size x nranks may reach 2^56 bytes, not exceed it (every
 * collective with a count, rooted or not); for the v-collectives, the largest displs[j] +
 * counts[j] over the non-empty blocks (and, for ALLTOALLV not in place, over the send side)
 * times the element size, and a sum that wraps 64 bits.
 */
TEST(size_limit_eoverflow)
{
	static const enum kcoll_collective colls[] = {
		KCOLL_BROADCAST, KCOLL_SCATTER, KCOLL_GATHER, KCOLL_REDUCE,
		KCOLL_ALLREDUCE, KCOLL_ALLGATHER, KCOLL_REDUCE_SCATTER,
		KCOLL_ALLTOALL,
	};
	static const u32 sizes[] = { 1, 2, 4, 8 }, ranks[] = { 1, 3, 4, 4096 };
	const u64 lim = (u64)1 << 56;
	u64 counts[3] = { 0 }, displs[3] = { 0 }, sc[3] = { 0 }, sd[3] = { 0 };
	struct kcoll_coll_args a;
	u32 c, e, n;

	for (c = 0; c < sizeof(colls) / sizeof(colls[0]); c++)
		for (e = 0; e < 4; e++)
			for (n = 0; n < 4; n++) {
				memset(&a, 0, sizeof(a));
				a.coll = colls[c];
				a.nranks = ranks[n];
				a.elem_size = sizes[e];
				a.count = lim / ((u64)sizes[e] * ranks[n]);
				EXPECT_EQ(0, kcoll_sched_check_args(&a));
				a.count++;
				EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a)) {
					TH_LOG("%s es %u p %u", kcoll_coll_name(a.coll), sizes[e],
					       ranks[n]);
				}
			}
	/* the 2^62 of the report */
	a.coll = KCOLL_ALLREDUCE;
	a.nranks = 3;
	a.elem_size = 4;
	a.count = (u64)1 << 62;
	EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a));

	memset(&a, 0, sizeof(a));
	a.nranks = 3;
	a.elem_size = 4;
	a.counts = counts;
	a.displs = displs;
	a.send_counts = sc;
	a.send_displs = sd;
	for (c = 0; c < 3; c++) {
		a.coll = c == 0 ? KCOLL_ALLGATHERV : c == 1 ? KCOLL_REDUCE_SCATTERV :
			 KCOLL_ALLTOALLV;
		memset(counts, 0, sizeof(counts));
		memset(displs, 0, sizeof(displs));
		counts[1] = 1;
		displs[1] = lim / 4 - 1;	/* ends exactly at 2^56 bytes */
		EXPECT_EQ(0, kcoll_sched_check_args(&a));
		displs[1]++;
		EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a));
		counts[1] = 0;			/* an empty block is not looked at */
		displs[1] = ~0ULL;
		EXPECT_EQ(0, kcoll_sched_check_args(&a));
		counts[2] = 2;			/* displs + counts wraps */
		displs[2] = ~0ULL;
		EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a));
	}
	/* ALLTOALLV: the send side too, unless in place */
	memset(counts, 0, sizeof(counts));
	memset(displs, 0, sizeof(displs));
	sc[0] = 1;
	sd[0] = lim / 4;
	EXPECT_EQ(-EOVERFLOW, kcoll_sched_check_args(&a));
	a.in_place = true;
	EXPECT_EQ(0, kcoll_sched_check_args(&a));
}

TEST(selection)
{
	struct kcoll_sched_tuning t;
	int c;
	u32 p;

	kcoll_sched_tuning_default(&t);
	/* always a supporting algorithm, and a pure function of the inputs */
	for (c = 0; c < KCOLL_NUM_COLLECTIVES; c++)
		for (p = 1; p <= 1024; p = p * 3 + 1) {
			u64 bytes;

			for (bytes = 0; bytes < (1ULL << 30); bytes = bytes * 8 + 1) {
				enum kcoll_algorithm a = kcoll_sched_select((enum kcoll_collective)c, p, bytes,
								       &t);

				ASSERT_TRUE(kcoll_sched_supports(a, (enum kcoll_collective)c, false));
				ASSERT_EQ(a, kcoll_sched_select((enum kcoll_collective)c, p, bytes, NULL));
			}
		}
	/* the rules, at given thresholds (the defaults come from kcoll-sim's model and may
	 * move: test_sched_thresholds checks them)
	 */
	t.small_bytes = 16 << 10;
	t.medium_bytes = 1 << 20;
	t.tree_ranks = 16;
	EXPECT_EQ(KCOLL_ALG_RECDBL, kcoll_sched_select(KCOLL_ALLREDUCE, 4, 8, &t));
	EXPECT_EQ(KCOLL_ALG_RING, kcoll_sched_select(KCOLL_ALLREDUCE, 3, 16 << 20, &t));
	EXPECT_EQ(KCOLL_ALG_DBTREE, kcoll_sched_select(KCOLL_ALLREDUCE, 64, 16 << 20, &t));
	EXPECT_EQ(KCOLL_ALG_CHAIN, kcoll_sched_select(KCOLL_BROADCAST, 4, 16 << 20, &t));
	EXPECT_EQ(KCOLL_ALG_BRUCK, kcoll_sched_select(KCOLL_BARRIER, 3, 0, &t));
	/* configuration forces an algorithm; one that cannot do the collective is ignored */
	t.algo[KCOLL_ALLREDUCE] = KCOLL_ALG_RABENSEIFNER;
	t.algo[KCOLL_BROADCAST] = KCOLL_ALG_PAIRWISE;
	EXPECT_EQ(KCOLL_ALG_RABENSEIFNER, kcoll_sched_select(KCOLL_ALLREDUCE, 3, 8, &t));
	EXPECT_EQ(KCOLL_ALG_CHAIN, kcoll_sched_select(KCOLL_BROADCAST, 4, 16 << 20, &t));
	/* per call: a request wins, or is refused */
	EXPECT_EQ(KCOLL_ALG_RING, kcoll_sched_choose(KCOLL_ALLREDUCE, 3, 8, false,
						      KCOLL_ALG_RING, &t));
	EXPECT_EQ(-EINVAL, kcoll_sched_choose(KCOLL_ALLREDUCE, 3, 8, false,
					      KCOLL_ALG_BRUCK, &t));
	EXPECT_EQ(KCOLL_ALG_RABENSEIFNER, kcoll_sched_choose(KCOLL_ALLREDUCE, 3, 8, true,
							      KCOLL_ALG_AUTO, &t));
}

/* the fingerprint of the first call below, as the module computed it before local_size */
#define FP_FLAT_RING_4096	0x5c40cae7U

TEST(fingerprint)
{
	static const u64 cnt[3] = { 1, 2, 3 }, dsp[3] = { 0, 1, 3 }, cnt2[3] = { 1, 2, 4 };
	struct kcoll_coll_args a;
	u32 f0, f;
	u32 r;

	memset(&a, 0, sizeof(a));
	a.coll = KCOLL_ALLREDUCE;
	a.nranks = 3;
	a.count = 100;
	a.elem_size = 4;
	f0 = kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096);
	for (r = 0; r < 3; r++) {
		a.rank = r;
		EXPECT_EQ(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096));
	}
	EXPECT_NE(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 8192));
	EXPECT_NE(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RECDBL, 4096));
	/* locality: flat calls (0 or 1) keep the value of before locality existed */
	EXPECT_EQ(FP_FLAT_RING_4096, f0);
	a.local_size = 1;
	EXPECT_EQ(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096));
	a.local_size = 3;
	EXPECT_NE(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096));
	a.local_size = 0;
	a.count = 101;
	EXPECT_NE(f0, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 4096));
	a.coll = KCOLL_ALLGATHERV;
	a.counts = cnt;
	a.displs = dsp;
	f = kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 0);
	a.counts = cnt2;
	EXPECT_NE(f, kcoll_sched_fingerprint(&a, KCOLL_ALG_RING, 0));
}

/*
 * ALLTOALLV: each rank's counts are its own, so a step's tag carries the step's size: two
 * ranks whose counts for each other differ tag that step differently (and are refused);
 * other collectives' steps carry the operation's tag unchanged.
 */
TEST(step_tag_alltoallv)
{
	struct kcoll_step s8 = { .op = KCOLL_STEP_SEND, .peer = 1, .bytes = 8 };
	struct kcoll_step r8 = { .op = KCOLL_STEP_RECV, .peer = 0, .bytes = 8 };
	struct kcoll_step r16 = { .op = KCOLL_STEP_RECV, .peer = 0, .bytes = 16 };
	struct kcoll_coll_args a;
	u64 tag = (5ULL << 32) | 0x1234abcd;

	memset(&a, 0, sizeof(a));
	a.coll = KCOLL_ALLTOALLV;
	a.nranks = 2;
	EXPECT_EQ(kcoll_sched_step_tag(&a, tag, &s8), kcoll_sched_step_tag(&a, tag, &r8));
	EXPECT_NE(kcoll_sched_step_tag(&a, tag, &s8), kcoll_sched_step_tag(&a, tag, &r16));
	/* the operation's sequence number stays in the upper half */
	EXPECT_EQ(5ULL, kcoll_sched_step_tag(&a, tag, &r16) >> 32);
	a.coll = KCOLL_ALLTOALL;
	EXPECT_EQ(tag, kcoll_sched_step_tag(&a, tag, &r16));
}

/* Both trees span every rank, parent and child links agree, ranks alternate roles. */
TEST(dbtree_shape)
{
	static s32 par[2][PMAX];
	u32 p, r;
	int t;

	for (p = 1; p <= PMAX; p++) {
		int both = 0, none = 0;

		for (r = 0; r < p; r++) {
			int inner = 0;

			for (t = 0; t < 2; t++) {
				s32 ch[2], cp, cc[2];
				long l, rr;
				u32 pos, j;

				kcoll_sched_dbtree(p, r, t, &par[t][r], ch);
				/* against the test's own derivation */
				pos = t == 0 ? r : (p & 1 ? (r + p - 1) % p : p - 1 - r);
				t_dbt_children(p, pos, &l, &rr);
				ASSERT_EQ(l < 0 ? -1 : (s32)t_dbt_rank(p, t, (u32)l), ch[0]);
				ASSERT_EQ(rr < 0 ? -1 : (s32)t_dbt_rank(p, t, (u32)rr), ch[1]);
				for (j = 0; j < 2; j++) {
					if (ch[j] < 0)
						continue;
					kcoll_sched_dbtree(p, (u32)ch[j], t, &cp, cc);
					ASSERT_EQ((s32)r, cp);
				}
				inner += ch[0] >= 0 || ch[1] >= 0;
			}
			both += inner == 2;
			none += inner == 0;
		}
		for (t = 0; t < 2; t++) {
			u32 roots = 0;

			for (r = 0; r < p; r++) {
				u32 x = r, d = 0;

				roots += par[t][r] < 0;
				while (par[t][x] >= 0 && d <= 2 * 11) {
					x = (u32)par[t][x];
					d++;
				}
				ASSERT_GE(22, d);	/* no cycle, depth O(log p) */
			}
			ASSERT_EQ(1, roots);
		}
		ASSERT_GE(1, both);
		ASSERT_GE(2, none);
	}
}

TEST_HARNESS_MAIN
