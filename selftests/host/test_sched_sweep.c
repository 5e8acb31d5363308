// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched: every algorithm x collective, executed by the simulator (core/kcoll_sim)
 * for all ranks together on real data, against references (sched_sweep.c, sched_ref.h).
 *
 * Integer data is checked bit for bit (uint64 and uint8 sums of random values: a rank's
 * contribution missing or counted twice changes the result); fp32 sums are checked bit for
 * bit against a reference that reduces in the order the header documents for the algorithm.
 * Every receive buffer is compared whole: bytes outside the outputs must be untouched.
 *
 * Sweep (default): every nranks from 1 to 1024 for every algorithm x collective, one run per
 * nranks with the variant (in place or not, root 0 or last, data type, count, chunking)
 * rotating with nranks, and every variant for small nranks.  Algorithms whose step count
 * per rank grows with nranks (ring, pairwise, Bruck all-to-all: nranks^2 steps per run) run
 * every nranks up to KCOLL_QUAD_MAX and a sample of larger ones.  Above 120 ranks the
 * simulator's check for concurrent overlapping accesses looks at a sample of 120 ranks.
 *   KCOLL_SCHED_FULL=1  every nranks to 1024 for those too (minutes)
 *   VALGRIND=1          (set by run.sh) a much smaller sweep
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>

#include "kselftest_harness.h"

#include "sched_sweep.h"

FIXTURE(sched) {
	int unused;
};

FIXTURE_SETUP(sched)
{
}

FIXTURE_TEARDOWN(sched)
{
}

/* generous: KCOLL_SCHED_FULL=1 runs minutes; the default sweep seconds */
#define SWEEP_TEST(name, algo)							\
TEST_F_TIMEOUT(sched, sweep_##name, 3600)					\
{										\
	struct sweep_res res;							\
	double t0 = now_s();							\
	int err;								\
										\
	memset(&res, 0, sizeof(res));						\
	err = sweep(algo, &res);						\
	if (err)								\
		TH_LOG("%s", res.msg);						\
	ASSERT_EQ(0, err);							\
	ksft_print_msg("%s: %llu runs, %llu rank schedules, %llu steps, %llu messages, " \
		       "%.1f s (quadratic ones every nranks to %u)\n", #name,	\
		       (unsigned long long)res.st.runs,				\
		       (unsigned long long)res.st.ranks,			\
		       (unsigned long long)res.st.steps,			\
		       (unsigned long long)res.st.messages, now_s() - t0,	\
		       res.pmax_quad);						\
	fflush(stdout);								\
}

SWEEP_TEST(ring, KCOLL_ALG_RING)
SWEEP_TEST(recdbl, KCOLL_ALG_RECDBL)
SWEEP_TEST(rabenseifner, KCOLL_ALG_RABENSEIFNER)
SWEEP_TEST(binomial, KCOLL_ALG_BINOMIAL)
SWEEP_TEST(dbtree, KCOLL_ALG_DBTREE)
SWEEP_TEST(chain, KCOLL_ALG_CHAIN)
SWEEP_TEST(pairwise, KCOLL_ALG_PAIRWISE)
SWEEP_TEST(bruck, KCOLL_ALG_BRUCK)

TEST_HARNESS_MAIN
