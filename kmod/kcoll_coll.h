/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kcoll_coll.c (the KCOLL_IOC_COLL call) and kcoll_op.c (the op's execution) share.
 */
#ifndef _KCOLL_COLL_H
#define _KCOLL_COLL_H

#include "kcoll.h"

static inline bool kcoll_coll_reduces(u32 coll)
{
	return coll == KCOLL_REDUCE || coll == KCOLL_ALLREDUCE || coll == KCOLL_REDUCE_SCATTER ||
	       coll == KCOLL_REDUCE_SCATTERV;
}

static inline bool kcoll_coll_rooted(u32 coll)
{
	return coll == KCOLL_BROADCAST || coll == KCOLL_SCATTER || coll == KCOLL_GATHER ||
	       coll == KCOLL_REDUCE;
}

static inline bool kcoll_coll_vector(u32 coll)
{
	return coll == KCOLL_ALLGATHERV || coll == KCOLL_ALLTOALLV ||
	       coll == KCOLL_REDUCE_SCATTERV;
}

/* kcoll_local.c: the same-host fast path of small collectives */
bool kcoll_local_wanted(struct kcoll_comm *comm, const struct kcoll_coll *arg, u8 cfg_algo);
int kcoll_local_run(struct kcoll_comm *comm, const struct kcoll_coll *arg, bool *fatal);

/* kcoll_op.c */
u64 kcoll_op_payload(const struct kcoll_op *op);
void kcoll_op_work(struct work_struct *work);
int kcoll_op_submit(struct kcoll_op *op);
extern const struct kcoll_pending_ops kcoll_op_pending_ops;

#endif /* _KCOLL_COLL_H */
