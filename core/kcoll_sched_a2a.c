// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched_a2a.c - collective schedules: all-to-all by pairwise exchange and by Bruck,
 * Bruck's dissemination barrier (see kcoll_sched.c for the rules every
 * schedule follows).
 */
#include "kcoll_sched_int.h"

/* ---- all-to-all ------------------------------------------------------------------------- */

static void a2a_block(struct ks *k, bool send_side, u32 j, u64 *off, u64 *len)
{
	const struct kcoll_coll_args *a = k->a;

	if (a->coll == KCOLL_ALLTOALLV) {
		if (send_side && !a->in_place) {
			*off = a->send_displs[j] * k->es;
			*len = a->send_counts[j] * k->es;
		} else {
			*off = a->displs[j] * k->es;
			*len = a->counts[j] * k->es;
		}
		return;
	}
	*off = (u64)j * a->count * k->es;
	*len = a->count * k->es;
}

int kcoll_sched_alg_pairwise(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, r = k->r, st;
	u64 so, sl, ro, rl, slot = 0;

	if (!a->in_place) {
		/* step st: to r+st, from r-st; own block copied first */
		ks_at(k, 0);
		a2a_block(k, true, r, &so, &sl);
		a2a_block(k, false, r, &ro, &rl);
		ks_copy(k, KR(KCOLL_BUF_RECV, ro), KR(KCOLL_BUF_SEND, so), sl < rl ? sl : rl);
		for (st = 1; st < p; st++) {
			u32 to = (r + st) % p, from = (r + p - st) % p;

			ks_at(k, st);
			a2a_block(k, true, to, &so, &sl);
			ks_send(k, to, KR(KCOLL_BUF_SEND, so), sl);
			a2a_block(k, false, from, &ro, &rl);
			ks_recv(k, from, KR(KCOLL_BUF_RECV, ro), rl);
		}
		return 0;
	}
	/*
	 * In place: step st pairs r with (st - r) mod p (an involution), exchanging block j
	 * through a scratch slot; the slot is copied home in the next step.  Two slots.
	 */
	{
		u64 mx = 0, o, l;
		u32 j;
		s64 prevj = -1;

		for (j = 0; j < p; j++) {
			a2a_block(k, false, j, &o, &l);
			if (l > mx)
				mx = l;
		}
		for (st = 0; st <= p; st++) {
			ks_at(k, st);
			if (prevj >= 0) {
				a2a_block(k, false, (u32)prevj, &o, &l);
				ks_copy(k, KR(KCOLL_BUF_RECV, o), KR(KCOLL_BUF_SCRATCH,
					((st - 1) & 1) * mx), l);
				prevj = -1;
			}
			if (st == p)
				break;
			j = rmod((s64)st - r, p);
			if (j == r)
				continue;
			a2a_block(k, false, j, &o, &l);
			slot = (st & 1) * mx;
			ks_send(k, j, KR(KCOLL_BUF_RECV, o), l);
			ks_recv(k, j, KR(KCOLL_BUF_SCRATCH, slot), l);
			prevj = j;
		}
		return 0;
	}
}

/*
 * Bruck all-to-all.  Working area W (p blocks, scratch) holds at index i the block for rank
 * r+i; round k sends every index with bit k set to r + 2^k and receives the same indices
 * from r - 2^k.  Those indices form runs of 2^k blocks every 2^(k+1): packed into a send
 * area with COPY steps, unpacked from a receive area (a single run is sent directly).
 * Afterwards W[i] holds the block from rank r-i.  Scratch: W, send area, receive area.
 */
static int sched_bruck_a2a(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, r = k->r, L = log2_ceil(p), kk, i;
	u64 cb = a->count * k->es, W = 0, PS = (u64)p * cb, PR = PS + (u64)((p + 1) / 2) * cb;
	struct kreg in = in_reg(k, 0);

	ks_at(k, 0);
	/* W[i] = in[(r + i) % p]: two runs */
	ks_copy(k, KR(KCOLL_BUF_SCRATCH, W), radd(in, (u64)r * cb), (u64)(p - r) * cb);
	ks_copy(k, KR(KCOLL_BUF_SCRATCH, W + (u64)(p - r) * cb), in, (u64)r * cb);
	for (kk = 0; kk < L; kk++) {
		u32 d = 1U << kk, to = (r + d) % p, from = (r + p - d) % p, runs = 0, x;
		u64 n = 0, s = 1 + 3 * (u64)kk;

		for (x = d; x < p; x += 2 * d)
			runs++;
		if (runs == 1) {
			/* one run: sent from W directly, received aside and copied home */
			u64 len = (u64)(p - d < d ? p - d : d) * cb;

			ks_at(k, s + 1);
			ks_send(k, to, KR(KCOLL_BUF_SCRATCH, W + (u64)d * cb), len);
			ks_recv(k, from, KR(KCOLL_BUF_SCRATCH, PR), len);
			ks_at(k, s + 2);
			ks_copy(k, KR(KCOLL_BUF_SCRATCH, W + (u64)d * cb), KR(KCOLL_BUF_SCRATCH, PR),
				len);
			continue;
		}
		ks_at(k, s);
		for (x = d; x < p; x += 2 * d) {
			u32 e = x + d < p ? x + d : p;

			ks_copy(k, KR(KCOLL_BUF_SCRATCH, PS + n * cb),
				KR(KCOLL_BUF_SCRATCH, W + (u64)x * cb), (u64)(e - x) * cb);
			n += e - x;
		}
		ks_at(k, s + 1);
		ks_send(k, to, KR(KCOLL_BUF_SCRATCH, PS), n * cb);
		ks_recv(k, from, KR(KCOLL_BUF_SCRATCH, PR), n * cb);
		ks_at(k, s + 2);
		n = 0;
		for (x = d; x < p; x += 2 * d) {
			u32 e = x + d < p ? x + d : p;

			ks_copy(k, KR(KCOLL_BUF_SCRATCH, W + (u64)x * cb),
				KR(KCOLL_BUF_SCRATCH, PR + n * cb), (u64)(e - x) * cb);
			n += e - x;
		}
	}
	/* RECV[(r - i) % p] = W[i] */
	ks_at(k, 1 + 3 * (u64)L);
	for (i = 0; i < p; i++)
		ks_copy(k, KR(KCOLL_BUF_RECV, (u64)rmod((s64)r - i, p) * cb),
			KR(KCOLL_BUF_SCRATCH, W + (u64)i * cb), cb);
	return 0;
}

/*
 * Bruck all-gather, directly in RECV: index i stands for block (r + i) % p.  Round k sends
 * indices [0, n) to r - 2^k and receives [2^k, 2^k + n) from r + 2^k, n = min(2^k, p -
 * 2^k).  Index ranges map to block ranges that may wrap at p, at the same place on both
 * ends of a message, so they are sent as at most two pieces.  Dissemination barrier: the
 * same pattern with empty messages.
 */
int kcoll_sched_alg_bruck(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, r = k->r, L = log2_ceil(p), kk;
	u64 cb = a->count * k->es;

	if (a->coll == KCOLL_ALLTOALL)
		return sched_bruck_a2a(k);
	if (a->coll == KCOLL_BARRIER) {
		k->zero_ok = true;
		for (kk = 0; kk < L; kk++) {
			u32 d = 1U << kk;

			ks_at(k, kk);
			ks_send(k, (r + d) % p, NOREG, 0);
			ks_recv(k, (r + p - d) % p, NOREG, 0);
		}
		return 0;
	}
	/* ALLGATHER */
	ks_at(k, 0);
	ks_copy(k, KR(KCOLL_BUF_RECV, (u64)r * cb), in_reg(k, (u64)r * cb), cb);
	for (kk = 0; kk < L; kk++) {
		u32 d = 1U << kk, n = d < p - d ? d : p - d;
		u32 to = (r + p - d) % p, from = (r + d) % p;
		u32 b0, w;

		ks_at(k, kk + 1);
		/* send: blocks r .. r+n-1 (mod p); round 0 straight from the input */
		b0 = r;
		w = p - b0 < n ? p - b0 : n;
		ks_send(k, to, kk == 0 ? in_reg(k, (u64)r * cb) : KR(KCOLL_BUF_RECV, (u64)b0 * cb),
			(u64)w * cb);
		if (w < n)
			ks_send(k, to, KR(KCOLL_BUF_RECV, 0), (u64)(n - w) * cb);
		/* receive: blocks r+d .. r+d+n-1 (mod p) */
		b0 = (r + d) % p;
		w = p - b0 < n ? p - b0 : n;
		ks_recv(k, from, KR(KCOLL_BUF_RECV, (u64)b0 * cb), (u64)w * cb);
		if (w < n)
			ks_recv(k, from, KR(KCOLL_BUF_RECV, 0), (u64)(n - w) * cb);
	}
	return 0;
}
