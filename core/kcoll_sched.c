// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched.c - collective algorithms as schedules (see kcoll_sched.h): arguments,
 * buffer sizes, the support matrix and kcoll_sched_build(); the algorithms are in
 * kcoll_sched_{ring,tree,a2a}.c, the choice among them in kcoll_sched_select.c.
 *
 * Every algorithm here is written "synchronously": a message is sent and received in the
 * same (sparse) stage number on both ranks, and when one stage holds several messages between
 * the same two ranks both emit them in the same order.  FIFO matching per pair is then
 * consistent by construction, and the schedules cannot deadlock: once every rank has finished
 * stage s-1, every message of stage s has both ends posted.  The stage numbers written out
 * are made dense per rank (empty stages dropped), which keeps that order.
 *
 * No allocation, no recursion, no floating point; u64 division via kcoll_div_u64().
 */
#include "kcoll_sched_int.h"
#include "../include/kcoll_names.h"

/* ---- support matrix, arguments, sizes --------------------------------------------------- */

#define CB(c)	(1U << KCOLL_##c)

static const u32 kcoll_algo_colls[KCOLL_NUM_ALGORITHMS] = {
	[KCOLL_ALG_RING] = CB(ALLREDUCE) | CB(ALLGATHER) | CB(REDUCE_SCATTER) |
			    CB(ALLGATHERV) | CB(REDUCE_SCATTERV),
	[KCOLL_ALG_RECDBL] = CB(ALLREDUCE) | CB(ALLGATHER) | CB(BARRIER),
	[KCOLL_ALG_RABENSEIFNER] = CB(ALLREDUCE) | CB(REDUCE_SCATTER),
	[KCOLL_ALG_BINOMIAL] = CB(BROADCAST) | CB(REDUCE) | CB(SCATTER) | CB(GATHER) |
				CB(ALLREDUCE) | CB(BARRIER),
	[KCOLL_ALG_DBTREE] = CB(ALLREDUCE),
	[KCOLL_ALG_CHAIN] = CB(BROADCAST) | CB(REDUCE),
	[KCOLL_ALG_PAIRWISE] = CB(ALLTOALL) | CB(ALLTOALLV),
	[KCOLL_ALG_BRUCK] = CB(ALLTOALL) | CB(ALLGATHER) | CB(BARRIER),
	[KCOLL_ALG_HIER] = CB(ALLREDUCE) | CB(BROADCAST) | CB(REDUCE) | CB(ALLGATHER),
};

bool kcoll_sched_supports(enum kcoll_algorithm algo, enum kcoll_collective coll, bool in_place)
{
	if ((unsigned int)algo >= KCOLL_NUM_ALGORITHMS ||
	    (unsigned int)coll >= KCOLL_NUM_COLLECTIVES)
		return false;
	if (in_place && coll == KCOLL_BARRIER)
		return false;
	return kcoll_algo_colls[algo] & (1U << coll);
}

static bool kcoll_rooted(enum kcoll_collective c)
{
	return c == KCOLL_BROADCAST || c == KCOLL_SCATTER || c == KCOLL_GATHER ||
	       c == KCOLL_REDUCE;
}

/* max over blocks with elements of off + len, or -EOVERFLOW */
static int v_extent(const u64 *counts, const u64 *displs, u32 n, u64 *ext)
{
	u64 m = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!counts[i])
			continue;
		if (displs[i] + counts[i] < displs[i])
			return -EOVERFLOW;
		if (displs[i] + counts[i] > m)
			m = displs[i] + counts[i];
	}
	*ext = m;
	return 0;
}

/* limit on elements so that byte offsets cannot overflow */
#define KCOLL_SCHED_MAX_BYTES	((u64)1 << 56)

int kcoll_sched_check_args(const struct kcoll_coll_args *a)
{
	u64 ext, tot;
	int err;

	if (!a || (unsigned int)a->coll >= KCOLL_NUM_COLLECTIVES || a->nranks == 0 ||
	    a->nranks > (1U << 30) || a->rank >= a->nranks || a->elem_size == 0)
		return -EINVAL;
	if (kcoll_rooted(a->coll) && a->root >= a->nranks)
		return -EINVAL;
	switch (a->coll) {
	case KCOLL_ALLGATHERV:
	case KCOLL_REDUCE_SCATTERV:
	case KCOLL_ALLTOALLV:
		if (!a->counts || !a->displs)
			return -EINVAL;
		err = v_extent(a->counts, a->displs, a->nranks, &ext);
		if (err)
			return err;
		if (ext > kcoll_div_u64(KCOLL_SCHED_MAX_BYTES, a->elem_size))
			return -EOVERFLOW;
		if (a->coll == KCOLL_ALLTOALLV && !a->in_place) {
			if (!a->send_counts || !a->send_displs)
				return -EINVAL;
			err = v_extent(a->send_counts, a->send_displs, a->nranks, &ext);
			if (err)
				return err;
			if (ext > kcoll_div_u64(KCOLL_SCHED_MAX_BYTES, a->elem_size))
				return -EOVERFLOW;
		}
		return 0;
	default:
		tot = a->count;
		if (tot > kcoll_div_u64(KCOLL_SCHED_MAX_BYTES, (u64)a->elem_size * a->nranks))
			return -EOVERFLOW;
		return 0;
	}
}

int kcoll_sched_buf_bytes(const struct kcoll_coll_args *a, u64 *send_bytes, u64 *recv_bytes)
{
	u64 es, B, P, ext = 0, sext = 0;
	bool root, ip;
	int err = kcoll_sched_check_args(a);

	if (err)
		return err;
	es = a->elem_size;
	B = a->count * es;
	P = B * a->nranks;
	root = a->rank == a->root;
	ip = a->in_place;
	if (a->counts)
		v_extent(a->counts, a->displs, a->nranks, &ext);
	if (a->send_counts && a->send_displs)
		v_extent(a->send_counts, a->send_displs, a->nranks, &sext);
	ext *= es;
	sext *= es;
	*send_bytes = *recv_bytes = 0;
	switch (a->coll) {
	case KCOLL_BROADCAST:
		*send_bytes = root && !ip ? B : 0;
		*recv_bytes = B;
		break;
	case KCOLL_SCATTER:
		*send_bytes = root && !ip ? P : 0;
		*recv_bytes = root && ip ? P : B;
		break;
	case KCOLL_GATHER:
		*send_bytes = root && ip ? 0 : B;
		*recv_bytes = root ? P : 0;
		break;
	case KCOLL_REDUCE:
		*send_bytes = root && ip ? 0 : B;
		*recv_bytes = root ? B : 0;
		break;
	case KCOLL_ALLREDUCE:
		*send_bytes = ip ? 0 : B;
		*recv_bytes = B;
		break;
	case KCOLL_ALLGATHER:
		*send_bytes = ip ? 0 : B;
		*recv_bytes = P;
		break;
	case KCOLL_REDUCE_SCATTER:
		*send_bytes = ip ? 0 : P;
		*recv_bytes = ip ? P : B;
		break;
	case KCOLL_ALLTOALL:
		*send_bytes = ip ? 0 : P;
		*recv_bytes = P;
		break;
	case KCOLL_BARRIER:
		break;
	case KCOLL_ALLGATHERV:
		*send_bytes = ip ? 0 : a->counts[a->rank] * es;
		*recv_bytes = ext;
		break;
	case KCOLL_REDUCE_SCATTERV:
		*send_bytes = ip ? 0 : ext;
		*recv_bytes = ip ? ext : a->counts[a->rank] * es;
		break;
	case KCOLL_ALLTOALLV:
		*send_bytes = ip ? 0 : sext;
		*recv_bytes = ext;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

int kcoll_sched_alg(struct ks *k, enum kcoll_algorithm algo, u64 chunk_bytes)
{
	switch (algo) {
	case KCOLL_ALG_RING:
		return kcoll_sched_alg_ring(k, chunk_bytes);
	case KCOLL_ALG_RECDBL:
		return kcoll_sched_alg_recdbl(k);
	case KCOLL_ALG_RABENSEIFNER:
		return kcoll_sched_alg_rabenseifner(k);
	case KCOLL_ALG_BINOMIAL:
		return kcoll_sched_alg_binomial(k);
	case KCOLL_ALG_DBTREE:
		return kcoll_sched_alg_dbtree(k, chunk_bytes);
	case KCOLL_ALG_CHAIN:
		return kcoll_sched_alg_chain(k, chunk_bytes);
	case KCOLL_ALG_PAIRWISE:
		return kcoll_sched_alg_pairwise(k);
	case KCOLL_ALG_BRUCK:
		return kcoll_sched_alg_bruck(k);
	default:
		return -EINVAL;
	}
}

int kcoll_sched_build(const struct kcoll_coll_args *args, enum kcoll_algorithm algo,
		      u64 chunk_bytes, struct kcoll_step *steps, u32 max_steps,
		      struct kcoll_sched_info *info)
{
	struct ks k;
	int err = kcoll_sched_check_args(args);

	if (err)
		return err;
	if (!info || !kcoll_sched_supports(algo, args->coll, args->in_place))
		return -EINVAL;
	memset(&k, 0, sizeof(k));
	k.a = args;
	k.steps = steps;
	k.max = max_steps;
	k.p = args->nranks;
	k.r = args->rank;
	k.es = args->elem_size;

	err = algo == KCOLL_ALG_HIER ? kcoll_sched_alg_hier(&k, chunk_bytes) :
		kcoll_sched_alg(&k, algo, chunk_bytes);
	if (!err)
		err = k.err;
	if (err)
		return err;
	if (k.n > 0xffffffffULL)
		return -EOVERFLOW;
	info->nsteps = (u32)k.n;
	info->nstages = k.n ? k.last_stage + 1 : 0;
	info->scratch_bytes = k.scratch;
	return 0;
}



/* FNV-1a over 64-bit words, folded to 32 bits */
static u64 fp_mix(u64 h, u64 v)
{
	int i;

	for (i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

u32 kcoll_sched_fingerprint(const struct kcoll_coll_args *a, enum kcoll_algorithm algo,
			    u64 chunk_bytes)
{
	u64 h = 0xcbf29ce484222325ULL;
	u32 i;

	h = fp_mix(h, a->coll);
	h = fp_mix(h, a->nranks);
	h = fp_mix(h, kcoll_rooted(a->coll) ? a->root : 0);
	h = fp_mix(h, a->count);
	h = fp_mix(h, a->elem_size);
	h = fp_mix(h, a->in_place);
	h = fp_mix(h, algo);
	h = fp_mix(h, chunk_bytes);
	if (a->local_size > 1)	/* flat calls keep the fingerprint they always had */
		h = fp_mix(h, a->local_size);
	if ((a->coll == KCOLL_ALLGATHERV || a->coll == KCOLL_REDUCE_SCATTERV) &&
	    a->counts && a->displs) {
		for (i = 0; i < a->nranks; i++) {
			h = fp_mix(h, a->counts[i]);
			h = fp_mix(h, a->displs[i]);
		}
	}
	return (u32)(h ^ (h >> 32));
}

u64 kcoll_sched_step_tag(const struct kcoll_coll_args *a, u64 op_tag,
			 const struct kcoll_step *step)
{
	u64 h;

	if (a->coll != KCOLL_ALLTOALLV)
		return op_tag;
	h = fp_mix(op_tag & 0xffffffffULL, step->bytes);
	return (op_tag & ~0xffffffffULL) | (u32)(h ^ (h >> 32));
}

const char *kcoll_coll_name(enum kcoll_collective coll)
{
	static const char *const n[KCOLL_NUM_COLLECTIVES] = { KCOLL_COLLECTIVE_NAMES };

	return (unsigned int)coll < KCOLL_NUM_COLLECTIVES ? n[coll] : NULL;
}

const char *kcoll_algo_name(enum kcoll_algorithm algo)
{
	static const char *const n[KCOLL_NUM_ALGORITHMS] = { KCOLL_ALGORITHM_NAMES };

	return (unsigned int)algo < KCOLL_NUM_ALGORITHMS ? n[algo] : NULL;
}
