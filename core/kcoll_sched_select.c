// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched_select.c - which algorithm a collective uses when the caller asks for
 * KCOLL_ALGO_AUTO: the tuning defaults (message-size and rank-count thresholds) and the
 * selection rules, in one place.
 */
#include "kcoll_sched.h"

void kcoll_sched_tuning_default(struct kcoll_sched_tuning *t)
{
	memset(t, 0, sizeof(*t));
	/* derived from kcoll-sim's model: tools/kcoll-sim/thresholds.py, scale.rst */
	t->small_bytes = 2 << 20;
	t->medium_bytes = 8 << 20;
	t->tree_ranks = 384;
	t->chunk_bytes = 256 << 10;
}

static bool is_pow2(u32 x)
{
	return x && !(x & (x - 1));
}

enum kcoll_algo kcoll_sched_select(enum kcoll_coll_type coll, u32 nranks, u64 bytes,
				   const struct kcoll_sched_tuning *t)
{
	struct kcoll_sched_tuning def;

	if (!t) {
		kcoll_sched_tuning_default(&def);
		t = &def;
	}
	if ((unsigned int)coll >= KCOLL_COLL_COUNT)
		return KCOLL_ALGO_AUTO;
	if (t->algo[coll] != KCOLL_ALGO_AUTO &&
	    kcoll_sched_supports((enum kcoll_algo)t->algo[coll], coll, false))
		return (enum kcoll_algo)t->algo[coll];
	/*
	 * Several ranks a node, more than one node: kcoll-sim puts the hierarchical all-reduce
	 * ahead of every flat choice up to small_bytes (8 a node, leaf-spine, 64 to 1,024
	 * ranks), behind the ring or the double tree above (scale.rst).
	 */
	if (coll == KCOLL_COLL_ALLREDUCE && t->local_size > 1 && nranks > t->local_size &&
	    nranks % t->local_size == 0 && bytes <= t->small_bytes)
		return KCOLL_ALGO_HIER;
	switch (coll) {
	case KCOLL_COLL_BROADCAST:
		return bytes <= t->small_bytes || nranks <= 2 ? KCOLL_ALGO_BINOMIAL :
			KCOLL_ALGO_CHAIN;
	case KCOLL_COLL_REDUCE:
		return bytes <= t->small_bytes || nranks <= 2 ? KCOLL_ALGO_BINOMIAL :
			KCOLL_ALGO_CHAIN;
	case KCOLL_COLL_SCATTER:
	case KCOLL_COLL_GATHER:
		return KCOLL_ALGO_BINOMIAL;
	case KCOLL_COLL_ALLREDUCE:
		if (bytes <= t->small_bytes)
			return KCOLL_ALGO_RECDBL;
		if (nranks >= t->tree_ranks)
			return KCOLL_ALGO_DBTREE;
		if (bytes <= t->medium_bytes && is_pow2(nranks))
			return KCOLL_ALGO_RABENSEIFNER;
		return KCOLL_ALGO_RING;
	case KCOLL_COLL_ALLGATHER:
		if (bytes * nranks <= t->small_bytes)
			return is_pow2(nranks) ? KCOLL_ALGO_RECDBL : KCOLL_ALGO_BRUCK;
		return KCOLL_ALGO_RING;
	case KCOLL_COLL_REDUCE_SCATTER:
		if (bytes * nranks <= t->medium_bytes && is_pow2(nranks))
			return KCOLL_ALGO_RABENSEIFNER;
		return KCOLL_ALGO_RING;
	case KCOLL_COLL_ALLTOALL:
		return bytes <= t->small_bytes / 16 && nranks > 8 ? KCOLL_ALGO_BRUCK :
			KCOLL_ALGO_PAIRWISE;
	case KCOLL_COLL_BARRIER:
		return is_pow2(nranks) ? KCOLL_ALGO_RECDBL : KCOLL_ALGO_BRUCK;
	case KCOLL_COLL_ALLGATHERV:
	case KCOLL_COLL_REDUCE_SCATTERV:
		return KCOLL_ALGO_RING;
	case KCOLL_COLL_ALLTOALLV:
		return KCOLL_ALGO_PAIRWISE;
	default:
		return KCOLL_ALGO_AUTO;
	}
}

int kcoll_sched_choose(enum kcoll_coll_type coll, u32 nranks, u64 bytes, bool in_place,
		       enum kcoll_algo request, const struct kcoll_sched_tuning *t)
{
	enum kcoll_algo a;

	if (request != KCOLL_ALGO_AUTO)
		return kcoll_sched_supports(request, coll, in_place) ? (int)request : -EINVAL;
	a = kcoll_sched_select(coll, nranks, bytes, t);
	if (!kcoll_sched_supports(a, coll, in_place))
		return -EINVAL;
	return (int)a;
}
