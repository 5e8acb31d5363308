/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What kcoll-sim's host tests share (test_kcoll_sim.c, test_kcoll_sim_host.c): the model's
 * sources, a base configuration and schedules of the tests' own.  Included once per test
 * binary, before the tests.
 */
#ifndef KCOLL_SIM_TEST_H
#define KCOLL_SIM_TEST_H

#include "kselftest_harness.h"
#include "kcoll_test.h"

#include "../../core/kcoll_sched.c"
#include "../../core/kcoll_sched_select.c"
#include "../../core/kcoll_sched_ring.c"
#include "../../core/kcoll_sched_tree.c"
#include "../../core/kcoll_sched_a2a.c"
#include "../../core/kcoll_sched_hier.c"
#include "../../tools/kcoll-sim/fabric.c"
#include "../../tools/kcoll-sim/evq.c"
#include "../../tools/kcoll-sim/share.c"
#include "../../tools/kcoll-sim/simnet.c"

#define LAT	2e-6
#define BW	10e9

static inline void base_cfg(struct simnet_cfg *c, uint32_t n)
{
	simnet_cfg_default(c);
	c->fab.link_bw = BW;
	c->fab.lat = LAT;
	c->fab.hop_lat = 0.5e-6;
	c->overhead = 0;
	c->red_bw = 0;
	c->args.nranks = n;
	c->args.elem_size = 4;
}

/* Relative closeness: the model is exact up to floating point. */
#define EXPECT_CLOSE(want, got) EXPECT_LE(fabs((got) - (want)), 1e-9 * fabs(want) + 1e-15) { \
	TH_LOG("want %.12g s, got %.12g s", (double)(want), (double)(got)); }

/* ---- schedules of the tests' own: a list of messages, each in a stage ------------------- */

struct tmsg {
	uint32_t stage, src, dst;
	uint64_t bytes;
};

struct tsched {
	const struct tmsg *m;
	size_t n;
};

static inline int tbuild(void *ctx, const struct kcoll_coll_args *a,
			 struct kcoll_step *steps, uint32_t max, struct kcoll_sched_info *info)
{
	const struct tsched *t = ctx;
	uint32_t n = 0, last = 0;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct tmsg *m = &t->m[i];
		bool send = m->src == a->rank;

		if (!send && m->dst != a->rank)
			continue;
		if (steps) {
			if (n >= max)
				return -ENOSPC;
			memset(&steps[n], 0, sizeof(steps[n]));
			steps[n].op = send ? KCOLL_STEP_SEND : KCOLL_STEP_RECV;
			steps[n].peer = send ? m->dst : m->src;
			steps[n].stage = m->stage;
			steps[n].bytes = m->bytes;
		}
		last = m->stage;
		n++;
	}
	info->nsteps = n;
	info->nstages = n ? last + 1 : 0;
	info->scratch_bytes = 0;
	return 0;
}

static inline int run_msgs(struct simnet_cfg *c, const struct tmsg *m, size_t n,
			   struct simnet_result *r)
{
	struct tsched t = { m, n };
	int ret;

	c->build = tbuild;
	c->ctx = &t;
	ret = simnet_run(c, r);
	c->build = NULL;
	return ret;
}

#endif /* KCOLL_SIM_TEST_H */
