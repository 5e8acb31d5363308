// SPDX-License-Identifier: GPL-2.0-only
/*
 * The checks of the sweep have teeth: core/kcoll_sim catches schedules broken on purpose
 * (steps dropped, peers or offsets wrong, a barrier cut short), the fp32 check tells one
 * reduction order from another, and the worked AVG example of kcoll_allreduce(3) gives the
 * bits the page states.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>

#include "kselftest_harness.h"

#include "sched_sweep.h"
#include "sched_ref.h"

static int mut_kind;

static void del_step(struct kcoll_step *st, struct kcoll_sched_info *info, u32 i)
{
	memmove(&st[i], &st[i + 1], (info->nsteps - i - 1) * sizeof(*st));
	info->nsteps--;
}

static void mutate(void *ctx, u32 rank, struct kcoll_step *st, struct kcoll_sched_info *info)
{
	u32 i;

	switch (mut_kind) {
	case 0:	/* rank 1 drops its first send */
		if (rank != 1)
			return;
		for (i = 0; i < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_SEND) {
				del_step(st, info, i);
				return;
			}
		return;
	case 1:	/* rank 0 sends one element too few */
		if (rank != 0)
			return;
		for (i = 0; i < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_SEND) {
				st[i].bytes -= 8;
				return;
			}
		return;
	case 2:	/* rank 2 receives where it is sending from, in the same stage */
		if (rank != 2)
			return;
		for (i = 0; i + 1 < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_SEND && st[i + 1].op == KCOLL_STEP_RECV &&
			    st[i].stage == st[i + 1].stage && st[i].src_buf == KCOLL_BUF_RECV) {
				st[i + 1].dst_buf = KCOLL_BUF_RECV;
				st[i + 1].dst_off = st[i].src_off;
				return;
			}
		return;
	case 3:	/* rank 0 writes past its receive buffer */
		if (rank != 0)
			return;
		for (i = 0; i < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_RECV && st[i].dst_buf == KCOLL_BUF_RECV) {
				st[i].dst_off += 1 << 20;
				return;
			}
		return;
	case 4:	/* everyone receives before sending: a deadlock (2 ranks) */
		for (i = 0; i + 1 < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_SEND && st[i + 1].op == KCOLL_STEP_RECV &&
			    st[i].stage == st[i + 1].stage) {
				struct kcoll_step s0 = st[i];
				u32 j;

				st[i] = st[i + 1];
				st[i + 1] = s0;
				for (j = i + 1; j < info->nsteps; j++)
					st[j].stage++;
				info->nstages++;
				return;
			}
		return;
	case 5:	/* rank 1 forgets to reduce one incoming piece: receives over it instead */
		if (rank != 1)
			return;
		for (i = 0; i < info->nsteps; i++)
			if (st[i].op == KCOLL_STEP_RECV_REDUCE) {
				st[i].op = KCOLL_STEP_RECV;
				st[i].dst_buf = KCOLL_BUF_SCRATCH;
				st[i].dst_off = st[i].tmp_off;
				return;
			}
		return;
	default:	/* barrier: every rank skips its last round */
		if (info->nsteps >= 2) {
			info->nsteps -= 2;
			info->nstages = info->nsteps ? st[info->nsteps - 1].stage + 1 : 0;
		}
		return;
	}
}

static int run_mutated(int kind, enum kcoll_algorithm algo, enum kcoll_collective coll, u32 p,
		       char *msg, size_t len)
{
	struct sweep_stats st;
	struct trun t;
	int err;

	memset(&t, 0, sizeof(t));
	memset(&st, 0, sizeof(st));
	t.algo = algo;
	t.coll = coll;
	t.p = p;
	t.count = 4 * p;
	t.dk = DK_U64_SUM;
	if (kind >= 0) {
		mut_kind = kind;
		t.mutate = mutate;
	}
	err = run_one(&t, &st);
	snprintf(msg, len, "%s", t.msg);
	return err;
}

TEST(simulator_catches_bugs)
{
	char msg[700];

	ASSERT_EQ(0, run_mutated(-1, KCOLL_ALG_RING, KCOLL_ALLREDUCE, 4, msg, sizeof(msg)));
	ASSERT_EQ(-1, run_mutated(0, KCOLL_ALG_RING, KCOLL_ALLREDUCE, 4, msg, sizeof(msg)));
	TH_LOG("dropped send: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "UNMATCHED"));
	ASSERT_EQ(-1, run_mutated(1, KCOLL_ALG_RING, KCOLL_ALLREDUCE, 4, msg, sizeof(msg)));
	TH_LOG("short send: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "matched a"));
	ASSERT_EQ(-1, run_mutated(2, KCOLL_ALG_BRUCK, KCOLL_ALLGATHER, 5, msg,
				  sizeof(msg)));
	TH_LOG("overlap: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "concurrently"));
	ASSERT_EQ(-1, run_mutated(3, KCOLL_ALG_RING, KCOLL_ALLGATHER, 3, msg, sizeof(msg)));
	TH_LOG("out of bounds: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "outside"));
	ASSERT_EQ(-1, run_mutated(4, KCOLL_ALG_PAIRWISE, KCOLL_ALLTOALL, 2, msg,
				  sizeof(msg)));
	TH_LOG("deadlock: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "deadlock"));
	ASSERT_EQ(-1, run_mutated(5, KCOLL_ALG_RING, KCOLL_ALLREDUCE, 4, msg, sizeof(msg)));
	TH_LOG("missed reduction: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "receive buffer byte"));
	ASSERT_EQ(-1, run_mutated(6, KCOLL_ALG_BRUCK, KCOLL_BARRIER, 5, msg, sizeof(msg)));
	TH_LOG("short barrier: %s", msg);
	EXPECT_NE(NULL, strstr(msg, "without hearing"));
}

/* The fp32 check has teeth: another order gives other bits; engines agree. */
TEST(float_order_matters)
{
	u32 p = 8, e, differ = 0;
	struct sweep_stats st;
	struct trun t;

	for (e = 0; e < 64; e++) {
		float naive = 0;
		u32 j;

		for (j = 0; j < p; j++) {
			fx[j] = rnd_float();
			naive += fx[j];
		}
		if (f32b_eq(naive, ord_ring(p, e % p)) == 0 ||
		    !f32b_eq(ord_recdbl(p), ord_rabenseifner(p)))
			differ++;
	}
	EXPECT_LT(10, differ);
	/* the same run with the AVX2 engine: identical (bit-exact check against the order) */
	memset(&t, 0, sizeof(t));
	memset(&st, 0, sizeof(st));
	t.algo = KCOLL_ALG_RING;
	t.coll = KCOLL_ALLREDUCE;
	t.p = 7;
	t.count = 7 * 40 + 3;
	t.dk = DK_F32_SUM;
	t.chunk = 64;
#ifdef KCOLL_HAVE_REDUCE_AVX2
	if (__builtin_cpu_supports("avx2"))
		t.engine = &kcoll_reduce_engine_avx2;
#endif
	EXPECT_EQ(0, run_one(&t, &st));
	if (t.msg[0])
		TH_LOG("%s", t.msg);
}

/*
 * The worked example of kcoll_allreduce(3), NOTES "Reduction order and rounding": three ranks
 * with fp16 inputs 2048, 1, 1, all-reduce AVG, run through the schedules as the module runs
 * them (reduction steps of the engine, then kcoll_reduce_finalize() on every rank's result).
 * The page states the bits; the test checks both the bits and that the page still says so.
 */
static const struct {
	enum kcoll_algorithm algo;
	u16 want;
	const char *text;	/* as the man page source has it */
} avg_example[] = {
	{ KCOLL_ALG_RING, 0x6157, "683.5 (0x6157)" },
	{ KCOLL_ALG_DBTREE, 0x6157, "683.5 (0x6157)" },
	{ KCOLL_ALG_RECDBL, 0x6155, "682.5 (0x6155)" },
	{ KCOLL_ALG_RABENSEIFNER, 0x6155, "682.5 (0x6155)" },
	{ KCOLL_ALG_BINOMIAL, 0x6155, "682.5 (0x6155)" },
};

TEST(documented_avg_example)
{
	static const u16 in[3] = { 0x6800, 0x3c00, 0x3c00 };	/* 2048, 1, 1 */
	char page[65536];
	size_t i, n;
	FILE *f;
	u32 r;

	for (i = 0; i < sizeof(avg_example) / sizeof(avg_example[0]); i++) {
		struct kcoll_sim_cfg cfg;
		struct kcoll_sim s;

		memset(&cfg, 0, sizeof(cfg));
		cfg.args.coll = KCOLL_ALLREDUCE;
		cfg.args.nranks = 3;
		cfg.args.count = 1;
		cfg.args.elem_size = 2;
		cfg.algo = avg_example[i].algo;
		cfg.dtype = KCOLL_FP16;
		cfg.op = KCOLL_AVG;
		ASSERT_EQ(0, kcoll_sim_setup(&s, &cfg)) {
			TH_LOG("%s", s.err);
		}
		for (r = 0; r < 3; r++)
			memcpy(s.rk[r].send, &in[r], 2);
		ASSERT_EQ(0, kcoll_sim_run(&s)) {
			TH_LOG("%s", s.err);
		}
		for (r = 0; r < 3; r++) {
			u16 got;

			kcoll_reduce_finalize(s.rk[r].recv, 1, KCOLL_FP16, KCOLL_AVG, 3);
			memcpy(&got, s.rk[r].recv, 2);
			EXPECT_EQ(avg_example[i].want, got) {
				TH_LOG("%s rank %u", kcoll_algo_name(avg_example[i].algo), r);
			}
		}
		kcoll_sim_free(&s);
	}
	f = fopen(KCOLL_SRC_TOP "/man/man3/kcoll_allreduce.3", "r");
	ASSERT_NE(NULL, f);
	n = fread(page, 1, sizeof(page) - 1, f);
	fclose(f);
	page[n] = 0;
	for (i = 0; i < sizeof(avg_example) / sizeof(avg_example[0]); i++) {
		EXPECT_NE(NULL, strstr(page, avg_example[i].text)) {
			TH_LOG("kcoll_allreduce.3 no longer says %s", avg_example[i].text);
		}
	}
	EXPECT_NE(NULL, strstr(page, "2048, 1 and 1"));
}

TEST_HARNESS_MAIN
