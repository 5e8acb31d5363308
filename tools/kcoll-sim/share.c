// SPDX-License-Identifier: GPL-2.0-only
/*
 * tools/kcoll-sim/share.c - flows on links and their max-min fair rates (see simnet_int.h,
 * Documentation/sim.rst).
 */
#include "simnet_int.h"

/* ---- flows and max-min sharing ------------------------------------------------------------ */

static void mark_dirty(struct sim *s, uint32_t l)
{
	if (s->links[l].dirty)
		return;
	s->links[l].dirty = 1;
	s->dirty[s->ndirty++] = l;
}

void sn_link_add(struct sim *s, uint32_t l, uint32_t f, int i)
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

void sn_link_del(struct sim *s, uint32_t l, uint32_t f, int i)
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
				sn_push(s, s->now + f->rem / share, EV_FLOW_END, fi, f->version);
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
void sn_resolve(struct sim *s)
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
