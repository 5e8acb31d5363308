// SPDX-License-Identifier: GPL-2.0-only
/*
 * tools/kcoll-sim/simnet.c - the event-driven model (see simnet.h, Documentation/sim.rst).
 *
 * Schedules are kept compact (16 bytes a step) and in relative form (peer - rank mod p):
 * ranks whose relative schedules are equal (a ring's, a pairwise exchange's when the count
 * divides evenly) share one copy, which is what lets 16,384 ranks of a ring fit in memory.
 * Events are kept in a binary heap ordered by (time, insertion number), so runs are
 * deterministic.  Flow rates are re-solved after every batch of events of one instant, by
 * progressive filling over the flows reachable from the links that changed.
 */
#include <math.h>
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

static bool op_xfer(unsigned int op)
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

static int grow(void **p, size_t *cap, size_t need, size_t elem)
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

/* ---- event queue -------------------------------------------------------------------------
 * Symmetric ranks produce many events at exactly the same instant, so events are kept in
 * buckets, one per distinct time (insertion order inside a bucket, which keeps runs
 * deterministic), found by a hash of the time; only the distinct times are in a binary heap.
 */

static uint32_t t_hash(double t, uint32_t mask)
{
	uint64_t b;

	memcpy(&b, &t, sizeof(b));
	b *= 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(b >> 32) & mask;
}

static void tq_heap_up(struct sim *s, size_t i)
{
	while (i) {
		size_t up = (i - 1) / 2;
		uint32_t tmp;

		if (!(s->bk[s->theap[i]].t < s->bk[s->theap[up]].t))
			break;
		tmp = s->theap[i];
		s->theap[i] = s->theap[up];
		s->theap[up] = tmp;
		i = up;
	}
}

static void tq_heap_down(struct sim *s)
{
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		uint32_t tmp;

		if (l < s->nth && s->bk[s->theap[l]].t < s->bk[s->theap[m]].t)
			m = l;
		if (r < s->nth && s->bk[s->theap[r]].t < s->bk[s->theap[m]].t)
			m = r;
		if (m == i)
			break;
		tmp = s->theap[i];
		s->theap[i] = s->theap[m];
		s->theap[m] = tmp;
		i = m;
	}
}

static void tq_rehash(struct sim *s)
{
	uint32_t n = s->hmask ? 2 * (s->hmask + 1) : 1024, i;
	uint32_t *h = malloc(n * sizeof(*h));

	if (!h) {
		s->err = 1;
		return;
	}
	memset(h, 0xff, n * sizeof(*h));
	for (i = 0; i < s->nbk; i++) {
		uint32_t q;

		if (!s->bk[i].live)
			continue;
		for (q = t_hash(s->bk[i].t, n - 1); h[q] != NONE; q = (q + 1) & (n - 1))
			;
		h[q] = i;
	}
	free(s->htab);
	s->htab = h;
	s->hmask = n - 1;
}

/* The bucket of time t, created if needed. */
static uint32_t tq_bucket(struct sim *s, double t)
{
	uint32_t q, b;

	if (2 * (s->nlive + 1) > s->hmask + 1) {
		tq_rehash(s);
		if (s->err)
			return NONE;
	}
	for (q = t_hash(t, s->hmask); (b = s->htab[q]) != NONE; q = (q + 1) & s->hmask)
		if (s->bk[b].t == t)
			return b;
	if (s->bk_free != NONE) {
		b = s->bk_free;
		s->bk_free = s->bk[b].next_free;
	} else {
		size_t c = s->cbk;

		if (grow((void **)&s->bk, &c, s->nbk + 1, sizeof(*s->bk))) {
			s->err = 1;
			return NONE;
		}
		s->cbk = (uint32_t)c;
		b = s->nbk++;
		memset(&s->bk[b], 0, sizeof(s->bk[b]));
	}
	s->bk[b].t = t;
	s->bk[b].n = 0;
	s->bk[b].live = 1;
	s->htab[q] = b;
	s->nlive++;
	{
		size_t c = s->cth;

		if (grow((void **)&s->theap, &c, s->nth + 1, sizeof(*s->theap))) {
			s->err = 1;
			return NONE;
		}
		s->cth = c;
	}
	s->theap[s->nth++] = b;
	tq_heap_up(s, s->nth - 1);
	return b;
}

/* Remove the earliest bucket from the hash (linear probing: shift the cluster back). */
static void tq_unhash(struct sim *s, uint32_t b)
{
	uint32_t q = t_hash(s->bk[b].t, s->hmask), j;

	while (s->htab[q] != b)
		q = (q + 1) & s->hmask;
	s->htab[q] = NONE;
	for (j = (q + 1) & s->hmask; s->htab[j] != NONE; j = (j + 1) & s->hmask) {
		uint32_t x = s->htab[j], home = t_hash(s->bk[x].t, s->hmask);

		/* move x back to the hole if its home is not in (q, j] */
		if ((j > q && (home <= q || home > j)) || (j < q && home <= q && home > j)) {
			s->htab[q] = x;
			s->htab[j] = NONE;
			q = j;
		}
	}
	s->bk[b].live = 0;
	s->nlive--;
}

static void push(struct sim *s, double t, uint32_t type, uint32_t a, uint32_t b)
{
	struct bucket *k;
	uint32_t i;

	if (t < s->now)
		t = s->now;
	i = t == s->now && s->cur != NONE ? s->cur : tq_bucket(s, t);
	if (i == NONE)
		return;
	k = &s->bk[i];
	if (k->n == k->cap) {
		uint32_t n = k->cap ? 2 * k->cap : 16;
		struct ev *q = realloc(k->ev, n * sizeof(*q));

		if (!q) {
			s->err = 1;
			return;
		}
		k->ev = q;
		k->cap = n;
	}
	k->ev[k->n++] = (struct ev){ type, a, b };
}

/* ---- schedules ---------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static int sched_build(const struct simnet_cfg *c, const struct kcoll_coll_args *a,
		       struct kcoll_step *steps, uint32_t max, struct kcoll_sched_info *info)
{
	if (c->build)
		return c->build(c->ctx, a, steps, max, info);
	return kcoll_sched_build(a, c->algo, c->chunk_bytes, steps, max, info);
}

static int build_scheds(struct sim *s)
{
	const struct simnet_cfg *c = s->c;
	uint32_t p = s->p, r, i, *sctr, *rctr;
	struct kcoll_step *tmp = NULL;
	struct cstep *cs = NULL;
	size_t ctmp = 0, ccs = 0;
	uint64_t mem = 0, limit = c->mem_limit ? c->mem_limit : 4ULL << 30;
	uint32_t *hidx = NULL, hsize = 1024;
	int ret = -1;

	sctr = calloc(2 * (size_t)p, sizeof(*sctr));
	hidx = malloc(hsize * sizeof(*hidx));
	if (!sctr || !hidx)
		goto oom;
	memset(hidx, 0xff, hsize * sizeof(*hidx));
	rctr = sctr + p;
	for (r = 0; r < p; r++) {
		struct kcoll_coll_args a = c->args;
		struct kcoll_sched_info info;
		uint64_t h = 0xcbf29ce484222325ULL;
		uint32_t stage_n = 0, max_stage = 0, u, slotpos;
		int err;

		a.rank = r;
		/* the previous rank's size usually fits: count only when it does not */
		err = tmp ? sched_build(c, &a, tmp, ctmp > UINT32_MAX ? UINT32_MAX :
					(uint32_t)ctmp, &info) : -ENOSPC;
		if (err == -ENOSPC) {
			err = sched_build(c, &a, NULL, 0, &info);
			if (err) {
				snprintf(s->res->err, sizeof(s->res->err), "rank %u: %s cannot build "
					 "this call (%d)", r, kcoll_algo_name(c->algo), err);
				goto out;
			}
			if (grow((void **)&tmp, &ctmp, info.nsteps + 1, sizeof(*tmp)))
				goto oom;
			err = sched_build(c, &a, tmp, info.nsteps, &info);
		}
		if (!err && grow((void **)&cs, &ccs, info.nsteps + 1, sizeof(*cs)))
			goto oom;
		if (err) {
			snprintf(s->res->err, sizeof(s->res->err), "rank %u: build: %d", r, err);
			goto out;
		}
		for (i = 0; i < info.nsteps; i++) {
			const struct kcoll_step *st = &tmp[i];
			bool first = !i || st->stage != tmp[i - 1].stage;

			cs[i].peer_rel = 0;
			cs[i].seq = 0;
			if (op_xfer(st->op)) {
				if (st->peer >= p || st->peer == r) {
					snprintf(s->res->err, sizeof(s->res->err),
						 "rank %u step %u: bad peer %u", r, i, st->peer);
					goto out;
				}
				cs[i].peer_rel = (st->peer + p - r) % p;
				cs[i].seq = st->op == KCOLL_STEP_SEND ? sctr[st->peer]++ :
					    rctr[st->peer]++;
			}
			cs[i].w = st->bytes << 4 | (uint64_t)st->op << 1 | first;
			stage_n = first ? 1 : stage_n + 1;
			if (stage_n > max_stage)
				max_stage = stage_n;
			h = mix(mix(h, (uint64_t)cs[i].peer_rel << 32 | cs[i].seq), cs[i].w);
		}
		for (i = 0; i < info.nsteps; i++)
			if (op_xfer(tmp[i].op))
				sctr[tmp[i].peer] = rctr[tmp[i].peer] = 0;
		h = mix(h, info.nsteps);
		/* share an equal relative schedule */
		for (slotpos = h % hsize; (u = hidx[slotpos]) != NONE; slotpos = (slotpos + 1) % hsize)
			if (s->us[u].hash == h && s->us[u].n == info.nsteps &&
			    !memcmp(s->us[u].s, cs, info.nsteps * sizeof(*cs)))
				break;
		if (u == NONE) {
			size_t bytes = (size_t)info.nsteps * sizeof(*cs);

			mem += bytes + (uint64_t)max_stage * sizeof(struct slot);
			if (mem > limit) {
				snprintf(s->res->err, sizeof(s->res->err), "schedules need more than "
					 "%llu MiB (rank %u of %u); use fewer ranks or larger chunks",
					 (unsigned long long)(limit >> 20), r, p);
				goto out;
			}
			{
				size_t cus = s->cus;

				if (grow((void **)&s->us, &cus, s->nus + 1, sizeof(*s->us)))
					goto oom;
				s->cus = (uint32_t)cus;
			}
			u = s->nus++;
			s->us[u].hash = h;
			s->us[u].n = info.nsteps;
			s->us[u].max_stage = max_stage;
			s->us[u].s = malloc(bytes ? bytes : 1);
			if (!s->us[u].s)
				goto oom;
			memcpy(s->us[u].s, cs, bytes);
			if (2 * s->nus > hsize) {	/* rehash */
				uint32_t *nh = malloc(2 * hsize * sizeof(*nh)), k;

				if (!nh)
					goto oom;
				hsize *= 2;
				memset(nh, 0xff, hsize * sizeof(*nh));
				for (k = 0; k < s->nus; k++) {
					uint32_t q = s->us[k].hash % hsize;

					while (nh[q] != NONE)
						q = (q + 1) % hsize;
					nh[q] = k;
				}
				free(hidx);
				hidx = nh;
			} else {
				hidx[slotpos] = u;
			}
		}
		s->rk[r].s = s->us[u].s;
		s->rk[r].n = s->us[u].n;
		s->rk[r].sl = calloc(s->us[u].max_stage ? s->us[u].max_stage : 1,
				     sizeof(struct slot));
		if (!s->rk[r].sl)
			goto oom;
		s->res->sched_steps += info.nsteps;
	}
	s->res->unique_scheds = s->nus;
	ret = 0;
	goto out;
oom:
	snprintf(s->res->err, sizeof(s->res->err), "out of memory");
out:
	free(tmp);
	free(cs);
	free(sctr);
	free(hidx);
	return ret;
}

/* ---- flows and max-min sharing ------------------------------------------------------------ */

static void mark_dirty(struct sim *s, uint32_t l)
{
	if (s->links[l].dirty)
		return;
	s->links[l].dirty = 1;
	s->dirty[s->ndirty++] = l;
}

static void link_add(struct sim *s, uint32_t l, uint32_t f, int i)
{
	struct link *L = &s->links[l];

	if (L->nfl == L->fcap) {
		uint32_t n = L->fcap ? 2 * L->fcap : 4, *q = realloc(L->fl, n * sizeof(*q));

		if (!q) {
			s->err = 1;
			return;
		}
		L->fl = q;
		L->fcap = n;
	}
	s->flows[f].lpos[i] = L->nfl;
	L->fl[L->nfl++] = f;
	mark_dirty(s, l);
}

static void link_del(struct sim *s, uint32_t l, uint32_t f, int i)
{
	struct link *L = &s->links[l];
	uint32_t at = s->flows[f].lpos[i], last = L->fl[--L->nfl];
	int j;

	if (last != f) {
		L->fl[at] = last;
		for (j = 0; j < s->flows[last].nl; j++)
			if (s->flows[last].link[j] == l)
				s->flows[last].lpos[j] = at;
	}
	mark_dirty(s, l);
}

static void lh_push(struct sim *s, uint32_t l)
{
	struct link *L = &s->links[l];
	size_t i;

	GROW(s, s->lheap, s->clh, s->nlh + 1);
	i = s->nlh++;
	s->lheap[i] = (struct lh){ L->avail / L->nun, l, ++L->hver };
	while (i && s->lheap[i].share < s->lheap[(i - 1) / 2].share) {
		struct lh t = s->lheap[i];

		s->lheap[i] = s->lheap[(i - 1) / 2];
		s->lheap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct lh lh_pop(struct sim *s)
{
	struct lh top = s->lheap[0];
	size_t i = 0;

	s->lheap[0] = s->lheap[--s->nlh];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct lh t;

		if (l < s->nlh && s->lheap[l].share < s->lheap[m].share)
			m = l;
		if (r < s->nlh && s->lheap[r].share < s->lheap[m].share)
			m = r;
		if (m == i)
			break;
		t = s->lheap[i];
		s->lheap[i] = s->lheap[m];
		s->lheap[m] = t;
		i = m;
	}
	return top;
}

/*
 * Max-min fair rates of one group of flows (s->S, their links s->Ls, marked with chunk st),
 * by progressive filling: the link with the smallest fair share fixes its flows' rates,
 * which leaves more for the others.  Flows on these links outside the group keep their
 * rates and use that much of the link.
 */
static void fill(struct sim *s, size_t nS, size_t nL, uint32_t st)
{
	size_t i, x;

	for (x = 0; x < nL; x++) {
		struct link *L = &s->links[s->Ls[x]];
		uint32_t k;

		L->avail = L->cap;
		L->nun = 0;
		for (k = 0; k < L->nfl; k++) {
			struct flow *f = &s->flows[L->fl[k]];

			if (f->stamp == st)
				L->nun++;
			else
				L->avail -= f->rate;
		}
		if (L->avail < 0)
			L->avail = 0;
	}
	for (i = 0; i < nS; i++) {
		struct flow *f = &s->flows[s->S[i]];

		f->rem -= f->rate * (s->now - f->t_last);
		if (f->rem < 0)
			f->rem = 0;
		f->t_last = s->now;
		f->fixed = 0;
	}
	s->nlh = 0;
	for (x = 0; x < nL; x++)
		if (s->links[s->Ls[x]].nun)
			lh_push(s, s->Ls[x]);
	while (s->nlh && !s->err) {
		struct lh e = lh_pop(s);
		struct link *L = &s->links[e.link];
		uint32_t k;

		if (e.ver != L->hver || !L->nun)
			continue;
		for (k = 0; k < L->nfl; k++) {
			uint32_t fi = L->fl[k];
			struct flow *f = &s->flows[fi];
			double share = e.share;
			int j;

			if (f->stamp != st || f->fixed)
				continue;
			f->fixed = 1;
			if (share < L->cap * 1e-9)
				share = L->cap * 1e-9;	/* never stall on a cut group */
			if (share != f->rate) {
				f->rate = share;
				f->version++;
				push(s, s->now + f->rem / share, EV_FLOW_END, fi, f->version);
			}
			for (j = 0; j < f->nl; j++) {
				struct link *L2 = &s->links[f->link[j]];

				L2->avail -= e.share;
				if (L2->avail < 0)
					L2->avail = 0;
				L2->nun--;
				if (L2 != L && L2->nun)
					lh_push(s, f->link[j]);
			}
		}
	}
}

/*
 * Re-solve the rates of the flows connected to the links that changed: one group per
 * connected set of flows (max-min decomposes over them, so this is exact), grown outwards
 * from a changed link and cut at sharing_limit flows: the flows beyond keep their rates (an
 * approximation for very large groups, see Documentation/sim.rst).  Every new flow sits on
 * a changed link, so it is solved from that link if not before.
 */
static void resolve(struct sim *s)
{
	uint32_t limit = s->c->sharing_limit ? s->c->sharing_limit : 128;
	uint32_t *seeds = s->dirty, nseeds = s->ndirty, si;
	uint32_t done = ++s->stamp;	/* flows solved in this call */

	for (si = 0; si < nseeds; si++)
		s->links[seeds[si]].dirty = 0;
	for (si = 0; si < nseeds && !s->err; si++) {
		uint32_t st = ++s->stamp;	/* this group */
		size_t nS = 0, nL = 0, x;

		s->links[seeds[si]].stamp = st;
		GROW(s, s->Ls, s->cLs, 1);
		s->Ls[nL++] = seeds[si];
		for (x = 0; x < nL; x++) {
			uint32_t lx = s->Ls[x], k;

			for (k = 0; k < s->links[lx].nfl; k++) {
				struct flow *f = &s->flows[s->links[lx].fl[k]];
				int j;

				if (f->stamp == st || f->solved == done)
					continue;
				if (nS >= limit)
					break;	/* cut: the flows beyond keep their rates */
				f->stamp = st;
				GROW(s, s->S, s->cS, nS + 1);
				s->S[nS++] = s->links[lx].fl[k];
				for (j = 0; j < f->nl; j++) {
					struct link *L2 = &s->links[f->link[j]];

					if (L2->stamp != st) {
						L2->stamp = st;
						GROW(s, s->Ls, s->cLs, nL + 1);
						s->Ls[nL++] = f->link[j];
					}
				}
			}
		}
		if (!nS)
			continue;
		s->res->flows_resolved += nS;
		fill(s, nS, nL, st);
		for (x = 0; x < nS; x++)
			s->flows[s->S[x]].solved = done;
	}
	s->ndirty = 0;
}

/* ---- ranks and messages ------------------------------------------------------------------- */

static void complete(struct sim *s, uint32_t r, uint32_t slot, double t)
{
	struct rank *k = &s->rk[r];

	if (t > s->now) {
		push(s, t, EV_COMPLETE, r, slot);
		return;
	}
	(void)slot;
	if (!--k->pending)
		push(s, k->cpu > s->now ? k->cpu : s->now, EV_STAGE, r, 0);
}

static uint32_t msg_new(struct sim *s)
{
	uint32_t m;

	if (s->msg_free != NONE) {
		m = s->msg_free;
		s->msg_free = s->msgs[m].next_free;
	} else {
		size_t c = s->cmsg;

		if (grow((void **)&s->msgs, &c, s->nmsg + 1, sizeof(*s->msgs))) {
			s->err = 1;
			return 0;
		}
		s->cmsg = (uint32_t)c;
		m = s->nmsg++;
	}
	memset(&s->msgs[m], 0, sizeof(s->msgs[m]));
	s->msgs[m].dslot = NONE;
	s->msgs[m].t_recv = -1;
	s->res->messages++;
	return m;
}

static void msg_free(struct sim *s, uint32_t m)
{
	s->msgs[m].next_free = s->msg_free;
	s->msg_free = m;
}

static void flow_start(struct sim *s, uint32_t m)
{
	struct msg *g = &s->msgs[m];
	struct flow *f;
	uint32_t fi;
	int j;

	s->res->bytes += g->bytes;
	if (!g->bytes) {
		push(s, s->now + g->lat, EV_DELIVER, m, 0);
		return;
	}
	if (s->flow_free != NONE) {
		fi = s->flow_free;
		s->flow_free = s->flows[fi].next_free;
	} else {
		size_t c = s->cflow;

		GROW(s, s->flows, c, s->nflow + 1);
		s->cflow = (uint32_t)c;
		fi = s->nflow++;
		memset(&s->flows[fi], 0, sizeof(s->flows[fi]));
	}
	f = &s->flows[fi];
	f->solved = 0;
	f->msg = m;
	f->nl = g->nl;
	f->rem = (double)g->bytes;
	f->rate = 0;
	f->t_last = s->now;
	f->stamp = 0;
	for (j = 0; j < g->nl; j++) {
		f->link[j] = g->links[j];
		s->links[g->links[j]].bytes += (double)g->bytes;
		link_add(s, g->links[j], fi, j);
	}
}

static void flow_end(struct sim *s, uint32_t fi, uint32_t ver)
{
	struct flow *f = &s->flows[fi];
	int j;

	if (f->version != ver || f->nl == 0)
		return;
	for (j = 0; j < f->nl; j++)
		link_del(s, f->link[j], fi, j);
	f->nl = 0;
	f->version++;
	push(s, s->now + s->msgs[f->msg].lat, EV_DELIVER, f->msg, 0);
	f->next_free = s->flow_free;
	s->flow_free = fi;
}

/* The receive side has its data at time t (>= now): receive, or reduce on the CPU. */
static void recv_done(struct sim *s, struct msg *g, double t)
{
	struct rank *k = &s->rk[g->dst];

	if (g->recv_reduce && s->red_bw > 0) {
		double start = t > k->cpu ? t : k->cpu, cost = g->bytes / s->red_bw;

		k->cpu = start + cost;
		if (g->dst == s->trace)
			k->t_red += cost;
		t = k->cpu;
	}
	complete(s, g->dst, g->dslot, t);
}

/* Both ends posted, data arrived: the sender's completion is one latency after both. */
static void maybe_finish(struct sim *s, uint32_t m)
{
	struct msg *g = &s->msgs[m];
	double t;

	if (!g->delivered || g->dslot == NONE)
		return;
	t = g->arrive > g->t_recv ? g->arrive : g->t_recv;
	recv_done(s, g, t > s->now ? t : s->now);
	complete(s, g->src, g->sslot, t + g->lat);
	msg_free(s, m);
}

static void deliver(struct sim *s, uint32_t m)
{
	struct msg *g = &s->msgs[m];

	g->delivered = 1;
	g->arrive = s->now;
	maybe_finish(s, m);
}

static uint32_t find_peer_slot(struct sim *s, uint32_t r, uint32_t q, uint32_t seq, bool want_recv)
{
	struct rank *kq = &s->rk[q];
	uint32_t i;

	for (i = kq->pos; i < kq->end; i++) {
		const struct cstep *o = &kq->s[i];
		struct slot *sl = &kq->sl[i - kq->pos];
		unsigned int op = cs_op(o);

		if (!op_xfer(op) || (op != KCOLL_STEP_SEND) != want_recv || o->seq != seq ||
		    (q + o->peer_rel) % s->p != r)
			continue;
		if (!(sl->state & SL_POSTED) || (sl->state & SL_MATCHED))
			return NONE;
		return i - kq->pos;
	}
	return NONE;
}

static uint32_t msg_make(struct sim *s, uint32_t src, uint32_t sslot, uint32_t dst, uint64_t bytes)
{
	uint32_t m = msg_new(s);
	struct msg *g;

	if (s->err)
		return 0;
	g = &s->msgs[m];
	g->src = src;
	g->dst = dst;
	g->sslot = sslot;
	g->bytes = bytes;
	g->eager = bytes <= s->c->eager_max;
	g->nl = (uint8_t)simnet_path(&s->topo, src, dst, g->links, &g->lat);
	return m;
}

/*
 * Rank r posts its step at time tp (>= now: the CPU may still be busy posting the steps
 * before it; what follows from the post is scheduled at or after tp).
 */
static void post(struct sim *s, uint32_t r, uint32_t slot, double tp)
{
	struct rank *k = &s->rk[r];
	const struct cstep *st = &k->s[k->pos + slot];
	struct slot *sl = &k->sl[slot];
	uint32_t q = (r + st->peer_rel) % s->p, o, m;
	unsigned int op = cs_op(st);
	uint64_t bytes = cs_bytes(st);

	sl->state = SL_POSTED;
	sl->post_t = tp;
	o = find_peer_slot(s, r, q, st->seq, op == KCOLL_STEP_SEND);
	if (op == KCOLL_STEP_SEND) {
		bool eager = bytes <= s->c->eager_max;

		if (!eager && o == NONE)
			return;		/* waits for the receive */
		m = msg_make(s, r, slot, q, bytes);
		if (s->err)
			return;
		sl->msg = m;
		s->msgs[m].t_send = tp;
		if (o != NONE) {
			struct slot *po = &s->rk[q].sl[o];
			const struct cstep *ps = &s->rk[q].s[s->rk[q].pos + o];

			s->msgs[m].dslot = o;
			s->msgs[m].t_recv = po->post_t;
			s->msgs[m].recv_reduce = cs_op(ps) == KCOLL_STEP_RECV_REDUCE;
			po->state |= SL_MATCHED;
			sl->state |= SL_MATCHED;
		}
		if (eager) {
			if (tp > s->now)
				push(s, tp, EV_FLOW_START, m, 0);
			else
				flow_start(s, m);
		} else {
			double t0 = s->msgs[m].t_recv + s->msgs[m].lat;	/* its CTS */

			if (t0 < tp)
				t0 = tp;
			if (t0 > s->now)
				push(s, t0, EV_FLOW_START, m, 0);
			else
				flow_start(s, m);
		}
		return;
	}
	/* a receive */
	if (o == NONE)
		return;		/* waits for the send */
	{
		struct slot *po = &s->rk[q].sl[o];
		const struct cstep *ps = &s->rk[q].s[s->rk[q].pos + o];
		double t0;

		po->state |= SL_MATCHED;
		sl->state |= SL_MATCHED;
		if (cs_bytes(ps) <= s->c->eager_max) {	/* already on its way */
			m = po->msg;
		} else {
			m = msg_make(s, q, o, r, cs_bytes(ps));
			if (s->err)
				return;
			s->msgs[m].t_send = po->post_t;
			t0 = tp + s->msgs[m].lat;	/* its CTS */
			push(s, t0 > po->post_t ? t0 : po->post_t, EV_FLOW_START, m, 0);
		}
		s->msgs[m].dslot = slot;
		s->msgs[m].t_recv = tp;
		s->msgs[m].recv_reduce = op == KCOLL_STEP_RECV_REDUCE;
		maybe_finish(s, m);
	}
}

static void trace_stage(struct sim *s, struct rank *k, bool end)
{
	struct simnet_result *res = s->res;
	struct simnet_phase ph = { 0 }, *last;
	uint32_t i;

	if (end) {
		if (res->nphases)
			res->phases[res->nphases - 1].time = s->now -
				res->phases[res->nphases - 1].start;
		return;
	}
	for (i = k->pos; i < k->end; i++) {
		switch (cs_op(&k->s[i])) {
		case KCOLL_STEP_SEND:
			ph.sends++;
			break;
		case KCOLL_STEP_RECV:
			ph.recvs++;
			break;
		case KCOLL_STEP_RECV_REDUCE:
			ph.recv_reduces++;
			break;
		default:
			ph.locals++;
			continue;
		}
		ph.bytes += cs_bytes(&k->s[i]);
	}
	last = res->nphases ? &res->phases[res->nphases - 1] : NULL;
	if (last && last->sends == ph.sends && last->recvs == ph.recvs &&
	    last->recv_reduces == ph.recv_reduces && last->locals == ph.locals &&
	    last->bytes == ph.bytes) {
		last->nstages++;
		return;
	}
	{
		size_t c = res->nphases;	/* grown one by one: phases are few */
		struct simnet_phase *q = realloc(res->phases, (c + 1) * sizeof(*q));

		if (!q) {
			s->err = 1;
			return;
		}
		res->phases = q;
	}
	ph.first_stage = k->stage;
	ph.nstages = 1;
	ph.start = s->now;
	res->phases[res->nphases++] = ph;
}

/* The previous stage (if any) is done: start the next, or finish. */
static void stage(struct sim *s, uint32_t r)
{
	struct rank *k = &s->rk[r];
	double cpu;
	uint32_t i;

	if (k->end > k->pos) {		/* a stage just ended */
		if (r == s->trace)
			trace_stage(s, k, true);
		k->stage++;
	}
	k->pos = k->end;
	if (k->pos >= k->n) {
		k->finish = s->now;
		return;
	}
	k->end = k->pos + 1;
	while (k->end < k->n && !cs_first(&k->s[k->end]))
		k->end++;
	if (r == s->trace)
		trace_stage(s, k, false);
	cpu = k->cpu > s->now ? k->cpu : s->now;
	k->pending = 1;		/* held until every step is out */
	for (i = k->pos; i < k->end; i++) {
		const struct cstep *st = &k->s[i];
		unsigned int op = cs_op(st);

		k->sl[i - k->pos].state = 0;
		if (!op_xfer(op)) {
			double bw = op == KCOLL_STEP_COPY ? s->copy_bw : s->red_bw;
			double cost = bw > 0 ? cs_bytes(st) / bw : 0;

			cpu += cost;
			if (r == s->trace)
				k->t_loc += cost;
			continue;
		}
		cpu += s->c->overhead;
		if (r == s->trace)
			k->t_ovh += s->c->overhead;
		k->pending++;
		post(s, r, i - k->pos, cpu);
	}
	/* posting comes first (kcoll_op_stage()), reductions of early arrivals after it */
	if (cpu > k->cpu)
		k->cpu = cpu;
	k->stage_start = s->now;
	complete(s, r, NONE, s->now);	/* drop the hold */
}

static void dispatch(struct sim *s, const struct ev *e)
{
	switch (e->type) {
	case EV_STAGE:
		stage(s, e->a);
		break;
	case EV_FLOW_START:
		flow_start(s, e->a);
		break;
	case EV_FLOW_END:
		flow_end(s, e->a, e->b);
		break;
	case EV_DELIVER:
		deliver(s, e->a);
		break;
	case EV_COMPLETE:
		complete(s, e->a, e->b, s->now);
		break;
	}
}

/* ---- entry points ------------------------------------------------------------------------- */

void simnet_cfg_default(struct simnet_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->fab.topo = SIMNET_STAR;
	c->fab.ranks_per_node = 1;
	c->fab.rails = 1;
	c->fab.link_bw = 12.5e9;
	c->fab.mem_bw = 20e9;
	c->fab.spines = 1;
	c->fab.oversub = 1;
	c->args.elem_size = 4;
	c->chunk_bytes = 256 << 10;
	c->red_bw = 10e9;
	c->trace_rank = 0;
	simnet_transport(c, "rdma");
}

int simnet_transport(struct simnet_cfg *c, const char *name)
{
	if (!strcmp(name, "rdma")) {		/* a 100 Gb/s RoCE/InfiniBand NIC */
		c->fab.lat = 2e-6;
		c->fab.hop_lat = 0.3e-6;
		c->fab.shm_lat = 1e-6;
		c->overhead = 1e-6;
		c->eager_max = 4064;
	} else if (!strcmp(name, "tcp")) {	/* software RDMA over kernel TCP (siw, rxe) */
		c->fab.lat = 25e-6;
		c->fab.hop_lat = 1e-6;
		c->fab.shm_lat = 10e-6;
		c->overhead = 5e-6;
		c->eager_max = 4064;
	} else if (!strcmp(name, "same-host")) {	/* every rank on one node */
		c->fab.shm_lat = 1e-6;
		c->fab.ranks_per_node = 0;	/* all: set by the caller for nranks */
		c->overhead = 1e-6;
		c->eager_max = 4064;
	} else {
		return -1;
	}
	return 0;
}

int simnet_fabric_check(struct simnet_fabric *f, uint32_t nranks, char *err, size_t errlen)
{
	struct simnet_topo_info t;

	if (!f->ranks_per_node)
		f->ranks_per_node = nranks;
	return simnet_topo_init(&t, f, nranks, err, errlen);
}

void simnet_result_free(struct simnet_result *res)
{
	free(res->phases);
	res->phases = NULL;
	res->nphases = 0;
}

int simnet_run(const struct simnet_cfg *cfg, struct simnet_result *res)
{
	struct simnet_fabric fab = cfg->fab;
	double best;
	struct sim s;
	uint32_t r, l;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	s.c = cfg;
	s.res = res;
	s.p = cfg->args.nranks;
	s.msg_free = s.flow_free = s.bk_free = s.cur = NONE;
	s.red_bw = cfg->red_bw;
	s.copy_bw = cfg->copy_bw > 0 ? cfg->copy_bw : cfg->fab.mem_bw;
	if (!fab.ranks_per_node)
		fab.ranks_per_node = s.p;
	if (simnet_topo_init(&s.topo, &fab, s.p, res->err, sizeof(res->err)))
		return -1;
	s.trace = cfg->trace_rank >= 0 && (uint32_t)cfg->trace_rank < s.p ? cfg->trace_rank : 0;
	res->trace_rank = s.trace;
	s.rk = calloc(s.p, sizeof(*s.rk));
	s.links = calloc(s.topo.nlinks, sizeof(*s.links));
	s.dirty = malloc((size_t)s.topo.nlinks * sizeof(*s.dirty));
	if (!s.rk || !s.links || !s.dirty) {
		snprintf(res->err, sizeof(res->err), "out of memory");
		goto out;
	}
	for (l = 0; l < s.topo.nlinks; l++)
		s.links[l].cap = simnet_link_cap(&s.topo, l);
	if (build_scheds(&s))
		goto out;
	s.cur = s.bk_free = NONE;
	for (r = 0; r < s.p; r++)
		push(&s, 0, EV_STAGE, r, 0);
	while (s.nth && !s.err) {
		uint32_t b = s.theap[0], i;

		s.now = s.bk[b].t;
		s.theap[0] = s.theap[--s.nth];
		tq_heap_down(&s);
		s.cur = b;	/* events for now append to this bucket */
		for (i = 0; i < s.bk[b].n && !s.err; i++) {
			struct ev e = s.bk[b].ev[i];

			res->events++;
			dispatch(&s, &e);
			if (i + 1 == s.bk[b].n && s.ndirty && !s.err)
				resolve(&s);	/* may add flow ends for now */
		}
		s.cur = NONE;
		tq_unhash(&s, b);
		s.bk[b].n = 0;
		s.bk[b].next_free = s.bk_free;
		s.bk_free = b;
	}
	if (s.err) {
		snprintf(res->err, sizeof(res->err), "out of memory");
		goto out;
	}
	res->first_end = INFINITY;
	for (r = 0; r < s.p; r++) {
		struct rank *k = &s.rk[r];

		if (k->pos < k->n) {
			snprintf(res->err, sizeof(res->err), "rank %u stuck at step %u of %u "
				 "(deadlock or unmatched message)", r, k->pos, k->n);
			goto out;
		}
		if (k->finish > res->time)
			res->time = k->finish;
		if (k->finish < res->first_end)
			res->first_end = k->finish;
	}
	res->t_reduce = s.rk[s.trace].t_red;
	res->t_local = s.rk[s.trace].t_loc;
	res->t_overhead = s.rk[s.trace].t_ovh;
	res->nlinks = s.topo.nlinks;
	/* the busiest link: the most bytes for its capacity (the first of equals) */
	for (l = 0, best = 0; l < s.topo.nlinks; l++) {
		double busy = s.links[l].bytes / s.links[l].cap;

		if (busy > best) {
			best = busy;
			res->busiest_bytes = s.links[l].bytes;
			simnet_link_name(&s.topo, l, res->busiest, sizeof(res->busiest));
			res->busiest_util = res->time > 0 ? busy / res->time : 0;
		}
	}
	ret = 0;
out:
	if (s.rk)
		for (r = 0; r < s.p; r++)
			free(s.rk[r].sl);
	if (s.links)
		for (l = 0; l < s.topo.nlinks; l++)
			free(s.links[l].fl);
	for (r = 0; r < s.nus; r++)
		free(s.us[r].s);
	free(s.us);
	free(s.rk);
	free(s.links);
	free(s.dirty);
	for (r = 0; r < s.nbk; r++)
		free(s.bk[r].ev);
	free(s.bk);
	free(s.htab);
	free(s.theap);
	free(s.msgs);
	free(s.flows);
	free(s.S);
	free(s.Ls);
	free(s.lheap);
	if (ret)
		simnet_result_free(res);
	return ret;
}
