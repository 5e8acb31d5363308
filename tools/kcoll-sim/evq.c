// SPDX-License-Identifier: GPL-2.0-only
/*
 * tools/kcoll-sim/evq.c - the model's event queue (see simnet_int.h).
 */
#include "simnet_int.h"

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

void sn_tq_heap_down(struct sim *s)
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
void sn_tq_unhash(struct sim *s, uint32_t b)
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

void sn_push(struct sim *s, double t, uint32_t type, uint32_t a, uint32_t b)
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
