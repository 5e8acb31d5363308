/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The same-host path of blocking all-reduces, between its two files: kcoll_local.c (the
 * group, its rendezvous, the small calls through the group's slots) and kcoll_local_big.c
 * (larger calls: every rank reduces its share straight from its peers' pinned pages).
 */
#ifndef KCOLL_LOCAL_INT_H
#define KCOLL_LOCAL_INT_H

#include "kcoll.h"

struct kcoll_local_mem;

/*
 * Payload per rank of the rendezvous through the group's slots: 4 KiB is where the normal
 * path's cost stops being the per-call overhead (a handful of eager messages) and starts
 * being the copies, and it keeps a group at most KCOLL_LOCAL_MAX_RANKS x 4 KiB.  Larger
 * calls take the single-copy path (kcoll_local_big.c).
 */
#define KCOLL_LOCAL_MAX_BYTES	SZ_4K
/* Ranks of a group: its slots, nranks x KCOLL_LOCAL_MAX_BYTES, stay a bounded allocation. */
#define KCOLL_LOCAL_MAX_RANKS	64

/* What every rank's call must agree on (the normal path's fingerprint: EPROTO). */
struct kcoll_local_sig {
	u64 count;
	u8 coll;
	u8 dtype;
	u8 op;
	bool in_place;
};

/**
 * struct kcoll_local_group - the ranks of one communicator on this host, meeting in memory
 * @list:	in kcoll_local_groups while not @dead (kcoll_local_mutex)
 * @ref:	one per joined rank (its comm->local) and per call in progress; the last put
 *		frees it
 * @net:	the key, constant: the network namespace (referenced) ...
 * @comm_id:	... the comm id ...
 * @secret:	... the comm's secret (wiped at free) ...
 * @nranks:	... and the comm's size
 * @lock:	guards what follows
 * @dead:	unlisted: a rank left or failed; @error says why (also kcoll_local_mutex)
 * @error:	sticky: every later call fails with it
 * @gen:	rendezvous completed so far
 * @narrived:	ranks arrived at the current one
 * @sig:	the current one's call, as its first arrival made it
 * @joined:	the ranks that joined (a rank joins once)
 * @wq:		per joined rank, its comm->wq, where it waits (cleared when it leaves):
 *		woken when @gen moves or @error is set, and by the comm's own events
 * @mem:	per rank, the pinned memory of its single-copy call in progress (a
 *		reference), from its arrival until the call's second rendezvous completes
 *		(or the group is freed); kcoll_local_big.c
 * @result:	the last rendezvous' result, KCOLL_LOCAL_MAX_BYTES
 * @slots:	@nranks inputs of KCOLL_LOCAL_MAX_BYTES; slot r written by rank r only
 */
struct kcoll_local_group {
	struct list_head list;
	struct kref ref;
	struct net *net;
	u64 comm_id;
	siphash_key_t secret;
	u32 nranks;
	struct mutex lock;		/* see @lock above */
	bool dead;
	int error;
	u64 gen;
	u32 narrived;
	struct kcoll_local_sig sig;
	DECLARE_BITMAP(joined, KCOLL_LOCAL_MAX_RANKS);
	wait_queue_head_t *wq[KCOLL_LOCAL_MAX_RANKS];
	struct kcoll_local_mem *mem[KCOLL_LOCAL_MAX_RANKS];
	u8 *result;
	u8 slots[];
};

/*
 * Run when the last rank arrives, under the group lock, before the others are woken
 * (kcoll_local_arrive()).
 */
typedef void (*kcoll_local_last_fn)(struct kcoll_local_group *g);

struct kcoll_local_group *kcoll_local_get(struct kcoll_comm *comm);
void kcoll_local_put(struct kcoll_local_group *g);
void kcoll_local_poison(struct kcoll_local_group *g, int err);
int kcoll_local_arrive(struct kcoll_comm *comm, struct kcoll_local_group *g,
		       const struct kcoll_local_sig *sig, struct kcoll_local_mem *mem,
		       kcoll_local_last_fn last, u64 *gen);
int kcoll_local_wait(struct kcoll_comm *comm, struct kcoll_local_group *g, u64 gen,
		     u32 timeout_ms);

/* kcoll_local_big.c */
int kcoll_local_run_big(struct kcoll_comm *comm, const struct kcoll_coll *arg,
			const struct kcoll_local_sig *sig, bool *fatal);
void kcoll_local_mem_get(struct kcoll_local_mem *mem);
void kcoll_local_mem_put(struct kcoll_local_mem *mem);

#endif /* KCOLL_LOCAL_INT_H */
