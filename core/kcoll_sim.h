/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/kcoll_sim.h - a schedule simulator for host tests (userspace only, never in the
 * module).
 *
 * It builds the schedules of all ranks of one collective call, gives every rank real send,
 * receive and scratch buffers, and executes all schedules together:
 *   - stages: a rank posts a stage once every step of its previous stage completed;
 *   - messages: the k-th send from a to b matches the k-th receive at b from a (rendezvous:
 *     both must be posted), byte counts must be equal;
 *   - data: sends copy real bytes, reductions run through a reduction engine;
 *   - checks: steps sorted by dense stage, valid ops, buffers and peers, every region inside
 *     its buffer (the send buffer is never written; an in-place rank has none), reductions on
 *     whole elements, no two steps of a stage touching the same bytes when one of them
 *     writes, no deadlock (reported with the ranks and steps that wait), no unmatched message,
 *     and optionally that every rank heard (transitively) from every other (BARRIER).
 * The caller fills the buffers after kcoll_sim_setup() and checks them after kcoll_sim_run().
 */
#ifndef _KCOLL_CORE_SIM_H
#define _KCOLL_CORE_SIM_H

#include "kcoll_sched.h"
#include "kcoll_reduce.h"

struct kcoll_sim_rank {
	struct kcoll_coll_args args;	/* this rank's arguments */
	u8 *send, *recv, *scratch;
	u64 send_len, recv_len, scratch_len;
	struct kcoll_step *steps;
	struct kcoll_sched_info info;
	/* execution state */
	u32 *seq;		/* per step: FIFO index among its (peer, direction) */
	u8 *done;
	u32 pos, end;		/* current stage [pos, end) */
	u32 pending;
	u64 *know;		/* BARRIER check: ranks heard from (bitset) */
	u64 *know_next;
};

struct kcoll_sim_cfg {
	struct kcoll_coll_args args;	/* rank ignored */
	/* optional: adjust one rank's args (ALLTOALLV's per-rank arrays) */
	void (*rank_args)(void *ctx, u32 rank, struct kcoll_coll_args *a);
	void *ctx;
	enum kcoll_algorithm algo;
	u64 chunk_bytes;
	enum kcoll_datatype dtype;		/* for reductions */
	enum kcoll_red_op op;
	const struct kcoll_reduce_engine *engine;	/* NULL: generic */
	/* optional, for testing the simulator: alter a built schedule (may lower nsteps) */
	void (*mutate)(void *ctx, u32 rank, struct kcoll_step *steps, struct kcoll_sched_info *info);
	bool check_barrier;		/* every rank must have heard from every other */
	/*
	 * Hazard checks (concurrent overlapping accesses) cost a sort per stage: 0 checks every
	 * rank, n > 0 only ranks below n, the last n and every rank = 0 mod (p / n).
	 */
	u32 hazard_sample;
	bool no_hazard_check;
};

struct kcoll_sim {
	struct kcoll_sim_cfg cfg;
	u32 p;
	struct kcoll_sim_rank *rk;
	u32 *ctr;		/* scratch: per-peer counters */
	u8 *arena;		/* every rank's steps, state and buffers */
	/* statistics of the last run */
	u64 steps, messages, bytes, max_stages;
	char err[512];
};

/* Build all schedules and allocate buffers (random-filled scratch).  0, or -1 with err. */
int kcoll_sim_setup(struct kcoll_sim *s, const struct kcoll_sim_cfg *cfg);
/* Execute.  0 on success, -1 with a message in s->err. */
int kcoll_sim_run(struct kcoll_sim *s);
void kcoll_sim_free(struct kcoll_sim *s);

#endif /* _KCOLL_CORE_SIM_H */
