/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tools/kcoll-sim/simnet_int.h - the model's state, shared by simnet.c (schedules, ranks,
 * messages), evq.c (the event queue) and share.c (flows and max-min sharing).  Private.
 */
#ifndef _KCOLL_SIMNET_INT_H
#define _KCOLL_SIMNET_INT_H

#include <stdlib.h>
#include <string.h>

#include "simnet.h"

/* ---- compact schedules -------------------------------------------------------------------- */

struct cstep {
	uint32_t peer_rel;	/* (peer - rank) mod p */
	uint32_t seq;		/* FIFO index among this rank's messages to/from peer */
	uint64_t w;		/* bytes << 4 | op << 1 | first step of its stage */
};

static inline uint64_t cs_bytes(const struct cstep *s) { return s->w >> 4; }
static inline unsigned int cs_op(const struct cstep *s) { return (s->w >> 1) & 7; }
static inline bool cs_first(const struct cstep *s) { return s->w & 1; }

static inline bool op_xfer(unsigned int op)
{
	return op == KCOLL_STEP_SEND || op == KCOLL_STEP_RECV || op == KCOLL_STEP_RECV_REDUCE;
}

struct usched {
	uint64_t hash;
	struct cstep *s;
	uint32_t n, max_stage;
};

/* ---- state -------------------------------------------------------------------------------- */

enum { EV_STAGE, EV_FLOW_START, EV_FLOW_END, EV_DELIVER, EV_COMPLETE };

struct ev {
	uint32_t type, a, b;
};

struct bucket {
	double t;
	struct ev *ev;
	uint32_t n, cap, live, next_free;
};

#define NONE	UINT32_MAX
enum { SL_POSTED = 1, SL_MATCHED = 2 };

struct slot {
	uint8_t state;
	uint32_t msg;
	double post_t;
};

struct rank {
	const struct cstep *s;
	uint32_t n, pos, end, pending, stage;
	struct slot *sl;
	double cpu, stage_start, finish;
	double t_red, t_loc, t_ovh;
};

struct msg {
	uint32_t src, dst, sslot, dslot;
	uint64_t bytes;
	double t_send, t_recv, arrive, lat;
	uint32_t links[SIMNET_MAX_HOPS];
	uint8_t nl, eager, recv_reduce, delivered;
	uint32_t next_free;
};

struct flow {
	uint32_t msg, version, stamp, fixed, solved;
	uint32_t link[SIMNET_MAX_HOPS], lpos[SIMNET_MAX_HOPS];
	uint8_t nl;
	double rem, rate, t_last;
	uint32_t next_free;
};

struct link {
	double cap, bytes, avail;
	uint32_t *fl, nfl, fcap, nun, stamp, hver;
	uint8_t dirty;
};

struct lh {	/* heap entry of progressive filling */
	double share;
	uint32_t link, ver;
};

struct sim {
	const struct simnet_cfg *c;
	struct simnet_result *res;
	struct simnet_topo_info topo;
	uint32_t p;
	struct rank *rk;
	struct usched *us;
	uint32_t nus, cus;
	struct bucket *bk;	/* event queue: buckets of one time each */
	uint32_t nbk, cbk, bk_free, nlive, cur;
	uint32_t *htab, hmask;	/* time -> bucket */
	uint32_t *theap;	/* buckets by time */
	size_t nth, cth;
	double now;
	struct msg *msgs;
	uint32_t nmsg, cmsg, msg_free;
	struct flow *flows;
	uint32_t nflow, cflow, flow_free;
	struct link *links;
	uint32_t *dirty, ndirty;
	uint32_t stamp;
	uint32_t *S, *Ls;
	size_t cS, cLs;
	struct lh *lheap;
	size_t nlh, clh;
	int err;
	double red_bw, copy_bw;
	uint32_t trace;
};

static inline int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

#define GROW(s, arr, cap, need) do {						\
	size_t _c = (cap);							\
	if (grow((void **)&(arr), &_c, (need), sizeof(*(arr)))) {		\
		(s)->err = 1;							\
		return;								\
	}									\
	(cap) = _c;								\
} while (0)

/* evq.c */
void sn_push(struct sim *s, double t, uint32_t type, uint32_t a, uint32_t b);
void sn_tq_heap_down(struct sim *s);
void sn_tq_unhash(struct sim *s, uint32_t b);

/* share.c */
void sn_link_add(struct sim *s, uint32_t l, uint32_t f, int i);
void sn_link_del(struct sim *s, uint32_t l, uint32_t f, int i);
void sn_resolve(struct sim *s);

#endif /* _KCOLL_SIMNET_INT_H */
