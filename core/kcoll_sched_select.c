// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched_select.c - which algorithm a collective uses when the caller asks for
 * KCOLL_ALG_AUTO: the table kcoll-sim derives from its model (kcoll_sched_table.h) and, when
 * an admin sets small_bytes, the older threshold rules, in one place.
 */
#include "kcoll_sched.h"
#include "kcoll_sched_table.h"

void kcoll_sched_tuning_default(struct kcoll_sched_tuning *t)
{
	memset(t, 0, sizeof(*t));
	/* small_bytes 0: the derived table; the rest are the rules' (thresholds.py, scale.rst) */
	t->medium_bytes = 8 << 20;
	t->tree_ranks = 384;
	t->chunk_bytes = 256 << 10;
}

static bool is_pow2(u32 x)
{
	return x && !(x & (x - 1));
}

/*
 * The table's pick, or KCOLL_ALG_AUTO when it has no rows for coll.  The rows of a kind
 * (coll, local, pow2) come in increasing "from": the last one at or below nranks holds,
 * the first one below its "from" (the grid starts at 2, 3, 16 or 24 ranks).
 */
static enum kcoll_algorithm table_pick(enum kcoll_collective coll, u32 nranks, u64 bytes,
				       u32 local_size)
{
	const struct kcoll_sched_row *r = NULL;
	bool local = local_size > 1 && nranks > local_size && nranks % local_size == 0;
	bool pow2 = is_pow2(nranks);
	unsigned int i, s;

	for (i = 0; i < sizeof(kcoll_sched_table) / sizeof(kcoll_sched_table[0]); i++) {
		const struct kcoll_sched_row *t = &kcoll_sched_table[i];

		if (t->coll != coll || t->local != local || t->pow2 != pow2)
			continue;
		if (!r || t->from <= nranks)
			r = t;
		if (t->from > nranks)
			break;
	}
	if (!r)
		return KCOLL_ALG_AUTO;
	for (s = 0; s + 1 < KCOLL_SCHED_SEGS && r->seg[s + 1].algo && bytes > r->seg[s].max_bytes;
	     s++)
		;
	return (enum kcoll_algorithm)r->seg[s].algo;
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
	if (!t->small_bytes) {
		enum kcoll_algorithm a = table_pick(coll, nranks, bytes, t->local_size);

		if (a != KCOLL_ALG_AUTO)
			return a;
		/* not in the table (scatter, gather, barrier, v): the rules at their default */
		kcoll_sched_tuning_default(&def);
		def.small_bytes = KCOLL_SCHED_RULES_SMALL_BYTES;
		def.local_size = t->local_size;
		t = &def;
	}
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
