/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One simulated run of a schedule, checked against references, and the sweep over nranks
 * and variants built on it (sched_sweep.c, which compiles core/ once for the test_sched_*
 * programs).  A run executes every rank's schedule in core/kcoll_sim on real data and
 * compares every receive buffer whole with what the collective must leave there.
 */
#ifndef _SCHED_SWEEP_H
#define _SCHED_SWEEP_H

#include "../../core/kcoll_sched_int.h"
#include "../../core/kcoll_sim.h"

/* The data of a run: uint64 and uint8 sums checked bit for bit, fp32 against the order. */
enum dkind { DK_U64_SUM, DK_F32_SUM, DK_U8_SUM, DK_COUNT };

struct trun {
	enum kcoll_algorithm algo;
	enum kcoll_collective coll;
	u32 p, root;
	u64 count;
	bool in_place;
	enum dkind dk;
	u64 chunk;
	/* v-collectives */
	u64 *counts, *displs;	/* ALLGATHERV/REDUCE_SCATTERV: shared; ALLTOALLV: matrix */
	u64 *mat;		/* ALLTOALLV: mat[i*p+j] = elements i sends to j */
	u64 *a2a_sc, *a2a_sd, *a2a_rc, *a2a_rd;	/* per rank, p each */
	/* initial buffers */
	u8 **send0, **recv0;
	u8 *refv;		/* reductions: the reduced input vector, computed once */
	const u8 **inp;		/* in_ptr() of every rank */
	u8 *arena;
	/* optional: break schedules on purpose (tests of the simulator) */
	void (*mutate)(void *ctx, u32 rank, struct kcoll_step *steps,
		       struct kcoll_sched_info *info);
	const struct kcoll_reduce_engine *engine;
	char msg[700];
};

struct sweep_stats {
	u64 runs, ranks, steps, messages, bytes;
};

struct sweep_res {
	struct sweep_stats st;
	u32 pmax_quad;
	char msg[800];
};

/* Simulate one run and check it; 0 or -1 with t->msg. */
int run_one(struct trun *t, struct sweep_stats *st);
/*
 * Every nranks and variant of every collective of @algo (the sweep of test_sched_sweep.c);
 * 0, or -1 with res->msg.
 */
int sweep(enum kcoll_algorithm algo, struct sweep_res *res);
double now_s(void);

#endif /* _SCHED_SWEEP_H */
