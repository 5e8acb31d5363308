// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched_select.c - which algorithm a collective uses when the caller asks for
 * KCOLL_ALG_AUTO: the tuning defaults (message-size and rank-count thresholds) and the
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

enum kcoll_algorithm kcoll_sched_select(enum kcoll_collective coll, u32 nranks, u64 bytes,
					const struct kcoll_sched_tuning *t)
{
	struct kcoll_sched_tuning def;

	if (!t) {
		kcoll_sched_tuning_default(&def);
		t = &def;
	}
	if ((unsigned int)coll >= KCOLL_NUM_COLLECTIVES)
		return KCOLL_ALG_AUTO;
	if (t->algo[coll] != KCOLL_ALG_AUTO &&
	    kcoll_sched_supports((enum kcoll_algorithm)t->algo[coll], coll, false))
		return (enum kcoll_algorithm)t->algo[coll];
	/*
	 * Several ranks a node, more than one node: kcoll-sim puts the hierarchical all-reduce
	 * ahead of every flat choice up to small_bytes (8 a node, leaf-spine, 64 to 1,024
	 * ranks), behind the ring or the double tree above (scale.rst).
	 */
	if (coll == KCOLL_ALLREDUCE && t->local_size > 1 && nranks > t->local_size &&
	    nranks % t->local_size == 0 && bytes <= t->small_bytes)
		return KCOLL_ALG_HIER;
	switch (coll) {
	case KCOLL_BROADCAST:
		return bytes <= t->small_bytes || nranks <= 2 ? KCOLL_ALG_BINOMIAL :
			KCOLL_ALG_CHAIN;
	case KCOLL_REDUCE:
		return bytes <= t->small_bytes || nranks <= 2 ? KCOLL_ALG_BINOMIAL :
			KCOLL_ALG_CHAIN;
	case KCOLL_SCATTER:
	case KCOLL_GATHER:
		return KCOLL_ALG_BINOMIAL;
	case KCOLL_ALLREDUCE:
		if (bytes <= t->small_bytes)
			return KCOLL_ALG_RECDBL;
		if (nranks >= t->tree_ranks)
			return KCOLL_ALG_DBTREE;
		if (bytes <= t->medium_bytes && is_pow2(nranks))
			return KCOLL_ALG_RABENSEIFNER;
		return KCOLL_ALG_RING;
	case KCOLL_ALLGATHER:
		if (bytes * nranks <= t->small_bytes)
			return is_pow2(nranks) ? KCOLL_ALG_RECDBL : KCOLL_ALG_BRUCK;
		return KCOLL_ALG_RING;
	case KCOLL_REDUCE_SCATTER:
		if (bytes * nranks <= t->medium_bytes && is_pow2(nranks))
			return KCOLL_ALG_RABENSEIFNER;
		return KCOLL_ALG_RING;
	case KCOLL_ALLTOALL:
		return bytes <= t->small_bytes / 16 && nranks > 8 ? KCOLL_ALG_BRUCK :
			KCOLL_ALG_PAIRWISE;
	case KCOLL_BARRIER:
		return is_pow2(nranks) ? KCOLL_ALG_RECDBL : KCOLL_ALG_BRUCK;
	case KCOLL_ALLGATHERV:
	case KCOLL_REDUCE_SCATTERV:
		return KCOLL_ALG_RING;
	case KCOLL_ALLTOALLV:
		return KCOLL_ALG_PAIRWISE;
	default:
		return KCOLL_ALG_AUTO;
	}
}

int kcoll_sched_choose(enum kcoll_collective coll, u32 nranks, u64 bytes, bool in_place,
		       enum kcoll_algorithm request, const struct kcoll_sched_tuning *t)
{
	enum kcoll_algorithm a;

	if (request != KCOLL_ALG_AUTO)
		return kcoll_sched_supports(request, coll, in_place) ? (int)request : -EINVAL;
	a = kcoll_sched_select(coll, nranks, bytes, t);
	if (!kcoll_sched_supports(a, coll, in_place))
		return -EINVAL;
	return (int)a;
}
