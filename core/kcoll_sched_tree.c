// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched_tree.c - collective schedules: binomial trees, the double binary tree and the
 * pipelined chain (see kcoll_sched.c for the rules every
 * schedule follows).
 */
#include "kcoll_sched_int.h"

/* ---- binomial trees --------------------------------------------------------------------- */

/*
 * Relative rank v = (r - root) mod p.  L = ceil(log2 p).  Broadcast-like trees send in
 * round j (0..L-1) along distance 2^(L-1-j) (largest subtree first); reduce-like trees
 * receive in round j along distance 2^j (smallest first).  A node v > 0 hangs below v -
 * lowbit(v); its subtree is [v, min(p, v + lowbit(v))).
 */
static inline u32 bt_real(struct ks *k, u32 root, u32 v)
{
	u32 x = v + root;	/* both < p <= 2^30 */

	return x >= k->p ? x - k->p : x;
}

/* round in which v receives (broadcast-like): distance lowbit(v) = 2^(L-1-round) */
static inline u32 bt_down_round(u32 L, u32 v)
{
	return L - 1 - ctz32(v);
}

static void bt_bcast(struct ks *k, u32 root, struct kreg src, struct kreg dst, u64 B, u64 s0)
{
	u32 p = k->p, v = rmod((s64)k->r - root, p), L = log2_ceil(p), j, top;

	if (v == 0) {
		top = L;
	} else {
		j = bt_down_round(L, v);
		ks_at(k, s0 + j);
		ks_recv(k, bt_real(k, root, v - lowbit(v)), dst, B);
		src = dst;
		top = ctz32(v);
	}
	for (j = L - top; j < L; j++) {
		u32 d = 1U << (L - 1 - j);

		if (v + d < p) {
			ks_at(k, s0 + j);
			ks_send(k, bt_real(k, root, v + d), src, B);
		}
	}
}

/*
 * Reduce to root over the binomial tree; acc: where this rank accumulates (and, at the root,
 * the result).  Round j: receive-reduce from v + 2^j, or send to v - 2^j.
 */
static void bt_reduce(struct ks *k, u32 root, struct kreg in, struct kreg acc, u64 tmp, u64 B,
		      u64 s0)
{
	u32 p = k->p, v = rmod((s64)k->r - root, p), L = log2_ceil(p), j;
	bool first = true;

	for (j = 0; j < L; j++) {
		u32 d = 1U << j;

		if (v & d) {
			ks_at(k, s0 + j);
			ks_send(k, bt_real(k, root, v - d), first ? in : acc, B);
			return;
		}
		if (v + d < p) {
			ks_at(k, s0 + j);
			ks_recv_reduce(k, bt_real(k, root, v + d), acc, first ? in : acc, tmp, B);
			first = false;
		}
	}
	if (first)	/* p == 1 */
		ks_copy(k, acc, in, B);
}

/*
 * Scatter/gather piece lists.  The root's buffer is in real rank order, so a range of
 * relative ranks [x, y) may wrap: at most two contiguous pieces.  Elsewhere data is kept in
 * scratch in relative order.
 */
static u32 bt_pieces(struct ks *k, u32 root, u32 x, u32 y, u32 pv[2][2])
{
	u32 p = k->p, n = 0;

	if (x >= y)
		return 0;
	if ((u64)x + root < p && (u64)y - 1 + root >= p) {
		pv[0][0] = x;
		pv[0][1] = p - root;
		pv[1][0] = p - root;
		pv[1][1] = y;
		return 2;
	}
	pv[n][0] = x;
	pv[n][1] = y;
	return 1;
}

static void bt_scatter(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, root = a->root, v = rmod((s64)k->r - root, p), L = log2_ceil(p), j, top;
	u64 cb = a->count * k->es;
	u32 end, pv[2][2], n, i;

	if (v == 0) {
		struct kreg sb = in_reg(k, 0);

		ks_at(k, 0);
		ks_copy(k, KR(KCOLL_BUF_RECV, a->in_place ? (u64)root * cb : 0),
			radd(sb, (u64)root * cb), cb);
		for (j = 0; j < L; j++) {
			u32 d = 1U << (L - 1 - j), c = d, cend;

			if (c >= p)
				continue;
			cend = c + d < p ? c + d : p;
			ks_at(k, j);
			/* child's own block, then the rest of its subtree */
			ks_send(k, bt_real(k, root, c), radd(sb, (u64)bt_real(k, root, c) * cb), cb);
			n = bt_pieces(k, root, c + 1, cend, pv);
			for (i = 0; i < n; i++)
				ks_send(k, bt_real(k, root, c), radd(sb, (u64)bt_real(k, root,
					pv[i][0]) * cb), (u64)(pv[i][1] - pv[i][0]) * cb);
		}
		return;
	}
	top = ctz32(v);
	end = v + lowbit(v) < p ? v + lowbit(v) : p;
	j = bt_down_round(L, v);
	ks_at(k, j);
	{
		u32 par = v - lowbit(v);

		ks_recv(k, bt_real(k, root, par), KR(KCOLL_BUF_RECV, 0), cb);
		if (par == 0) {
			n = bt_pieces(k, root, v + 1, end, pv);
			for (i = 0; i < n; i++)
				ks_recv(k, bt_real(k, root, par), KR(KCOLL_BUF_SCRATCH,
					(u64)(pv[i][0] - v - 1) * cb), (u64)(pv[i][1] - pv[i][0]) * cb);
		} else {
			ks_recv(k, bt_real(k, root, par), KR(KCOLL_BUF_SCRATCH, 0),
				(u64)(end - v - 1) * cb);
		}
	}
	for (j = L - top; j < L; j++) {
		u32 d = 1U << (L - 1 - j), c = v + d, cend;

		if (c >= p)
			continue;
		cend = c + d < p ? c + d : p;
		ks_at(k, j);
		ks_send(k, bt_real(k, root, c), KR(KCOLL_BUF_SCRATCH, (u64)(c - v - 1) * cb), cb);
		ks_send(k, bt_real(k, root, c), KR(KCOLL_BUF_SCRATCH, (u64)(c - v) * cb),
			(u64)(cend - c - 1) * cb);
	}
}

static void bt_gather(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, root = a->root, v = rmod((s64)k->r - root, p), L = log2_ceil(p), j;
	u64 cb = a->count * k->es;
	u32 end, pv[2][2], n, i;

	end = v == 0 ? p : (v + lowbit(v) < p ? v + lowbit(v) : p);
	if (v == 0) {
		ks_at(k, 0);
		ks_copy(k, KR(KCOLL_BUF_RECV, (u64)root * cb), in_reg(k, (u64)root * cb), cb);
	}
	for (j = 0; j < L; j++) {
		u32 d = 1U << j, c = v + d, cend;

		if (v & d)
			break;
		if (c >= p)
			continue;
		cend = c + d < p ? c + d : p;
		ks_at(k, j);
		if (v == 0) {
			ks_recv(k, bt_real(k, root, c), KR(KCOLL_BUF_RECV,
				(u64)bt_real(k, root, c) * cb), cb);
			n = bt_pieces(k, root, c + 1, cend, pv);
			for (i = 0; i < n; i++)
				ks_recv(k, bt_real(k, root, c), KR(KCOLL_BUF_RECV, (u64)bt_real(k,
					root, pv[i][0]) * cb), (u64)(pv[i][1] - pv[i][0]) * cb);
		} else {
			ks_recv(k, bt_real(k, root, c), KR(KCOLL_BUF_SCRATCH,
				(u64)(c - v - 1) * cb), cb);
			ks_recv(k, bt_real(k, root, c), KR(KCOLL_BUF_SCRATCH,
				(u64)(c - v) * cb), (u64)(cend - c - 1) * cb);
		}
	}
	if (v == 0)
		return;
	{
		u32 par = v - lowbit(v);

		ks_at(k, ctz32(v));
		ks_send(k, bt_real(k, root, par), KR(KCOLL_BUF_SEND, 0), cb);
		if (par == 0) {
			n = bt_pieces(k, root, v + 1, end, pv);
			for (i = 0; i < n; i++)
				ks_send(k, bt_real(k, root, par), KR(KCOLL_BUF_SCRATCH,
					(u64)(pv[i][0] - v - 1) * cb), (u64)(pv[i][1] - pv[i][0]) * cb);
		} else {
			ks_send(k, bt_real(k, root, par), KR(KCOLL_BUF_SCRATCH, 0),
				(u64)(end - v - 1) * cb);
		}
	}
}

int kcoll_sched_alg_binomial(struct ks *k)
{
	const struct kcoll_coll_args *a = k->a;
	u32 L = log2_ceil(k->p);
	u64 B = a->count * k->es;
	bool root = k->r == a->root;

	switch (a->coll) {
	case KCOLL_BROADCAST:
		if (root && !a->in_place) {
			ks_at(k, 0);
			ks_copy(k, KR(KCOLL_BUF_RECV, 0), KR(KCOLL_BUF_SEND, 0), B);
		}
		bt_bcast(k, a->root, root ? in_reg(k, 0) : KR(KCOLL_BUF_RECV, 0),
			 KR(KCOLL_BUF_RECV, 0), B, 0);
		return 0;
	case KCOLL_REDUCE:
		/* non-roots accumulate in scratch after the tmp area */
		bt_reduce(k, a->root, root ? in_reg(k, 0) : KR(KCOLL_BUF_SEND, 0),
			  root ? KR(KCOLL_BUF_RECV, 0) : KR(KCOLL_BUF_SCRATCH, B), 0, B, 0);
		return 0;
	case KCOLL_ALLREDUCE:
		bt_reduce(k, 0, in_reg(k, 0), KR(KCOLL_BUF_RECV, 0), 0, B, 0);
		bt_bcast(k, 0, KR(KCOLL_BUF_RECV, 0), KR(KCOLL_BUF_RECV, 0), B, L);
		return 0;
	case KCOLL_SCATTER:
		bt_scatter(k);
		return 0;
	case KCOLL_GATHER:
		bt_gather(k);
		return 0;
	default:	/* BARRIER: zero-byte reduce to 0, then broadcast */
		k->zero_ok = true;
		{
			u32 p = k->p, v = k->r, j;

			for (j = 0; j < L; j++) {
				u32 d = 1U << j;

				if (v & d) {
					ks_at(k, j);
					ks_send(k, v - d, NOREG, 0);
					break;
				}
				if (v + d < p) {
					ks_at(k, j);
					ks_recv(k, v + d, NOREG, 0);
				}
			}
		}
		bt_bcast(k, 0, NOREG, NOREG, 0, L);
		return 0;
	}
}

/* ---- double binary tree ----------------------------------------------------------------- */

/* Position of rank r in tree t, and back. */
static inline u32 dbt_pos(u32 p, u32 r, int t)
{
	if (!t)
		return r;
	return (p & 1) ? (r + p - 1) % p : p - 1 - r;
}

static inline u32 dbt_rank(u32 p, u32 x, int t)
{
	if (!t)
		return x;
	return (p & 1) ? (x + 1) % p : p - 1 - x;
}

/* Children and parent of position x in the in-order tree on p positions (see header). */
static void dbt_node(u32 p, u32 x, s64 *parent, s64 child[2])
{
	u32 b, d;

	child[0] = child[1] = -1;
	if (x == 0) {
		*parent = -1;
		if (p > 1)
			child[1] = pow2_floor(p - 1);	/* the only child: "right" */
		return;
	}
	b = lowbit(x);
	if ((x & (b << 1)) || (u64)x + b >= p)
		*parent = x - b;
	else
		*parent = x + b;
	if (b >= 2) {
		child[0] = x - b / 2;
		for (d = b / 2; d >= 1; d >>= 1) {
			if ((u64)x + d < p) {
				child[1] = x + d;
				break;
			}
		}
	}
}

void kcoll_sched_dbtree(u32 p, u32 r, int t, s32 *parent, s32 child[2])
{
	s64 par, ch[2];
	int i;

	dbt_node(p, dbt_pos(p, r, t), &par, ch);
	*parent = par < 0 ? -1 : (s32)dbt_rank(p, (u32)par, t);
	for (i = 0; i < 2; i++)
		child[i] = ch[i] < 0 ? -1 : (s32)dbt_rank(p, (u32)ch[i], t);
}

/*
 * Stage (chunk 0) at which position x sends its partial result up.  Leaves: 0.  A node
 * receives its right child's partial at base(right) and its left child's at base(left) (the
 * left subtree is complete: base 3*(h-1) for height h = ctz(x)), reduces the right one at
 * base(right)+1 and the left one one stage after both that and its arrival, then sends.
 * Computed along the right spine, no recursion.
 */
static u64 dbt_base(u32 p, u32 x)
{
	u32 spine[33];
	u32 n = 0, i;
	u64 base = 0;
	s64 par, ch[2];

	for (;;) {
		spine[n++] = x;
		dbt_node(p, x, &par, ch);
		if (ch[1] < 0 || n == 33)
			break;
		x = (u32)ch[1];
	}
	for (i = n; i-- > 0;) {
		u64 rr, rl;

		x = spine[i];
		dbt_node(p, x, &par, ch);
		if (ch[0] < 0 && ch[1] < 0) {
			base = 0;
			continue;
		}
		/* ch[1] >= 0 here unless it is the bottom of the spine */
		rr = ch[1] >= 0 && i + 1 < n ? base + 1 : 0;
		if (ch[0] >= 0) {
			u64 bl = 3 * (u64)(ctz32(x) - 1);

			rl = bl + 1 > rr + 1 ? bl + 1 : rr + 1;
			if (ch[1] < 0)
				rl = bl + 1;
		} else {
			rl = rr;
		}
		base = rl + 1;
	}
	return base;
}

struct kdbt_op {
	u64 off;	/* stage of chunk 0 */
	u8 kind;
	s64 peer;	/* position */
};

enum { DB_RECV_R, DB_RECV_L, DB_RED_R, DB_RED_L, DB_SEND_UP, DB_RECV_DN, DB_SEND_DN_L,
       DB_SEND_DN_R, DB_NOPS };

int kcoll_sched_alg_dbtree(struct ks *k, u64 chunk_bytes)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, C, t, i, c;
	u64 es = k->es, half[2][2], chunk_max, maxoff = 0, s, T;
	struct kdbt_op ops[2][DB_NOPS];
	u32 nops[2];
	bool leaf[2], have_r[2];
	struct kreg in = in_reg(k, 0);

	if (p == 1) {
		ks_copy(k, KR(KCOLL_BUF_RECV, 0), in, a->count * es);
		return 0;
	}
	for (t = 0; t < 2; t++) {
		kcoll_sched_part(a->count, 2, t, &half[t][0], &half[t][1]);
		half[t][0] *= es;
		half[t][1] *= es;
	}
	C = nchunks(half[0][1], chunk_bytes);
	chunk_max = (kcoll_div_u64(kcoll_div_u64(half[0][1], es) + C - 1, C)) * es;

	/* each rank's per-chunk operations in both trees, as stage offsets */
	for (t = 0; t < 2; t++) {
		u32 x = dbt_pos(p, k->r, (int)t), rootchild = pow2_floor(p - 1);
		s64 par, ch[2];
		u64 dn_root, depth = 0, y;
		struct kdbt_op *o = ops[t];
		u32 n = 0;

		dbt_node(p, x, &par, ch);
		leaf[t] = ch[0] < 0 && ch[1] < 0;
		have_r[t] = ch[1] >= 0;
		/* the root sends down one stage after its last reduction */
		dn_root = dbt_base(p, rootchild) + 2;
		for (y = x; y != 0;) {
			s64 pp, cc[2];

			dbt_node(p, (u32)y, &pp, cc);
			y = (u64)pp;
			depth++;
		}
		if (ch[1] >= 0) {
			u64 br = dbt_base(p, (u32)ch[1]);

			o[n++] = (struct kdbt_op){ br, DB_RECV_R, ch[1] };
			o[n++] = (struct kdbt_op){ br + 1, DB_RED_R, ch[1] };
		}
		if (ch[0] >= 0) {
			u64 bl = dbt_base(p, (u32)ch[0]);
			u64 rl = bl + 1;

			if (ch[1] >= 0 && dbt_base(p, (u32)ch[1]) + 2 > rl)
				rl = dbt_base(p, (u32)ch[1]) + 2;
			o[n++] = (struct kdbt_op){ bl, DB_RECV_L, ch[0] };
			o[n++] = (struct kdbt_op){ rl, DB_RED_L, ch[0] };
		}
		if (par >= 0) {
			o[n++] = (struct kdbt_op){ dbt_base(p, x), DB_SEND_UP, par };
			o[n++] = (struct kdbt_op){ dn_root + depth - 1, DB_RECV_DN, par };
		}
		if (ch[0] >= 0)
			o[n++] = (struct kdbt_op){ dn_root + depth, DB_SEND_DN_L, ch[0] };
		if (ch[1] >= 0)
			o[n++] = (struct kdbt_op){ dn_root + depth, DB_SEND_DN_R, ch[1] };
		nops[t] = n;
		for (i = 0; i < n; i++)
			if (o[i].off > maxoff)
				maxoff = o[i].off;
	}

	/*
	 * Scratch: per tree, 2 slots for the right child's chunk, 3 for the left one's.
	 * acc is RECV (the final result lands where it was accumulated).
	 */
	T = maxoff + C;
	for (s = 0; s < T; s++) {
		for (t = 0; t < 2; t++) {
			for (i = 0; i < nops[t]; i++) {
				struct kdbt_op *o = &ops[t][i];
				u64 coff, clen, tb = (u64)t * 5 * chunk_max;
				struct kreg acc, inr;
				u32 peer;

				if (s < o->off || s - o->off >= C)
					continue;
				c = (u32)(s - o->off);
				kcoll_sched_part(kcoll_div_u64(half[t][1], es), C, c, &coff, &clen);
				coff = coff * es + half[t][0];
				clen *= es;
				acc = KR(KCOLL_BUF_RECV, coff);
				inr = radd(in, coff);
				peer = o->peer >= 0 ? dbt_rank(p, (u32)o->peer, (int)t) : 0;
				ks_at(k, s);
				switch (o->kind) {
				case DB_RECV_R:
					ks_recv(k, peer, KR(KCOLL_BUF_SCRATCH, tb + (c % 2) * chunk_max),
						clen);
					break;
				case DB_RED_R:
					ks_reduce(k, acc, inr, tb + (c % 2) * chunk_max, clen);
					break;
				case DB_RECV_L:
					ks_recv(k, peer, KR(KCOLL_BUF_SCRATCH,
							   tb + (2 + c % 3) * chunk_max), clen);
					break;
				case DB_RED_L:
					ks_reduce(k, acc, have_r[t] ? acc : inr,
						  tb + (2 + c % 3) * chunk_max, clen);
					break;
				case DB_SEND_UP:
					ks_send(k, peer, leaf[t] ? inr : acc, clen);
					break;
				case DB_RECV_DN:
					ks_recv(k, peer, acc, clen);
					break;
				default:
					ks_send(k, peer, acc, clen);
					break;
				}
			}
		}
	}
	return 0;
}

/* ---- pipelined chain -------------------------------------------------------------------- */

int kcoll_sched_alg_chain(struct ks *k, u64 chunk_bytes)
{
	const struct kcoll_coll_args *a = k->a;
	u32 p = k->p, v = rmod((s64)k->r - a->root, p), C, c;
	u64 es = k->es, B = a->count * es, chunk_max, s, coff, clen;
	bool root = v == 0;

	C = nchunks(B, chunk_bytes);
	chunk_max = kcoll_div_u64(a->count + C - 1, C) * es;

	if (a->coll == KCOLL_BROADCAST) {
		/* chunk c goes from v to v+1 in stage c + v */
		struct kreg src = root ? in_reg(k, 0) : KR(KCOLL_BUF_RECV, 0);
		u32 next = (k->r + 1) % p, prev = (k->r + p - 1) % p;

		if (root && !a->in_place) {
			ks_at(k, 0);
			ks_copy(k, KR(KCOLL_BUF_RECV, 0), KR(KCOLL_BUF_SEND, 0), B);
		}
		for (s = v ? v - 1 : 0; s < (u64)C + v; s++) {
			ks_at(k, s);
			if (v > 0 && s - (v - 1) < C) {
				c = (u32)(s - (v - 1));
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				ks_recv(k, prev, KR(KCOLL_BUF_RECV, coff * es), clen * es);
			}
			if (v + 1 < p && s >= v && s - v < C) {
				c = (u32)(s - v);
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				ks_send(k, next, radd(src, coff * es), clen * es);
			}
		}
		return 0;
	}
	/*
	 * REDUCE towards the root, d = p-1-v hops from the far end.  One chunk: receive and
	 * reduce in one step, chunk c moves from distance d to d+1 in stage c + d.  Several
	 * chunks: the receive lands in a scratch slot and is reduced in the next stage while the
	 * next chunk arrives (chunk c moves in stage c + 2d).  Scratch: two receive slots, then
	 * (non-roots) two accumulation slots.
	 */
	{
		struct kreg in = root ? in_reg(k, 0) : KR(KCOLL_BUF_SEND, 0);
		u32 next = (k->r + p - 1) % p, prev = (k->r + 1) % p;	/* towards the root */
		u64 d = p - 1 - v, h = C >= 2 ? 2 : 1, first, last;

		if (p == 1) {
			ks_copy(k, KR(KCOLL_BUF_RECV, 0), in, B);
			return 0;
		}
		first = d ? h * d - h : 0;
		last = h * d + C;
		for (s = first; s < last; s++) {
			ks_at(k, s);
			/* receive chunk s - h(d-1) */
			if (d > 0 && s >= h * (d - 1) && s - h * (d - 1) < C) {
				c = (u32)(s - h * (d - 1));
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				if (h == 1)
					ks_recv_reduce(k, prev, root ? KR(KCOLL_BUF_RECV, coff * es) :
						       KR(KCOLL_BUF_SCRATCH, (2 + c % 2) * chunk_max),
						       radd(in, coff * es), 0, clen * es);
				else
					ks_recv(k, prev, KR(KCOLL_BUF_SCRATCH, (c % 2) * chunk_max),
						clen * es);
			}
			/* split form: reduce chunk s - h(d-1) - 1 */
			if (h == 2 && d > 0 && s >= 2 * d - 1 && s - (2 * d - 1) < C) {
				c = (u32)(s - (2 * d - 1));
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				ks_reduce(k, root ? KR(KCOLL_BUF_RECV, coff * es) :
					  KR(KCOLL_BUF_SCRATCH, (2 + c % 2) * chunk_max),
					  radd(in, coff * es), (c % 2) * chunk_max, clen * es);
			}
			/* send chunk s - hd */
			if (!root && s >= h * d && s - h * d < C) {
				c = (u32)(s - h * d);
				kcoll_sched_part(a->count, C, c, &coff, &clen);
				ks_send(k, next, d == 0 ? radd(in, coff * es) :
					KR(KCOLL_BUF_SCRATCH, (2 + c % 2) * chunk_max), clen * es);
			}
		}
		return 0;
	}
}
