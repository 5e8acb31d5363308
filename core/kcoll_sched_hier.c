// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched_hier.c - hierarchical schedules (KCOLL_ALG_HIER): ranks sit in nodes of
 * L = args->local_size consecutive ranks (node n = r / L, local index l = r % L, N = p / L
 * nodes; p must be a multiple of L, L <= 1 is one rank per node).  The vector is split in
 * L parts (kcoll_sched_part()); local rank l looks after part l on the inter-node level,
 * talking only to the ranks of local index l on the other nodes (its "rail").
 *
 *   ALLREDUCE  intra-node ring reduce-scatter -> rail all-reduce of part l (recursive
 *              doubling up to KCOLL_SCHED_HIER_SMALL bytes, else ring) -> intra ring
 *              all-gather
 *   BROADCAST  the root hands part l to local rank l of its node -> rail broadcast of part l
 *              from the root's node (binomial up to KCOLL_SCHED_HIER_SMALL or 2 nodes, else
 *              chain) -> intra ring all-gather
 *   REDUCE     intra ring reduce-scatter -> rail reduce of part l to the root's node
 *              (binomial/chain as above) -> the root's node gathers the parts at the root
 *   ALLGATHER  rail ring all-gather of the blocks of local index l -> intra ring all-gather
 *              of every node's blocks at once
 *
 * The intra and rail phases are the flat algorithms run on a group through a struct ksmap
 * (peers and buffers remapped in the emitter).  Each phase starts a new stage on every rank
 * and is stage-synchronous within its group, so the whole stays deadlock-free.  Reduction
 * order: part l is reduced over each node in ring order (block l), then across nodes in the
 * order of the rail algorithm over the node results.
 */
#include "kcoll_sched_int.h"

/* Rail phases move a part of at most this many bytes with the latency-bound algorithm. */
#define KCOLL_SCHED_HIER_SMALL	(2ULL << 20)

enum { SUB_ALG, SUB_RING_RS, SUB_RING_AG };

/* Close the dense stage in use, so that what follows starts a new one. */
static void ks_next(struct ks *k)
{
	if (k->used) {
		k->stage++;
		k->used = false;
	}
}

/* Run a flat algorithm (or a ring half) as a sub-schedule of k with args sa, placed by m. */
static void hier_sub(struct ks *k, const struct kcoll_coll_args *sa, const struct ksmap *m,
		     int kind, enum kcoll_algorithm algo, u64 chunk_bytes)
{
	struct ks c = *k;
	int err = 0;

	ks_next(&c);
	c.a = sa;
	c.p = sa->nranks;
	c.r = sa->rank;
	c.map = m;
	c.cur = 0;
	if (kind == SUB_RING_RS)
		kcoll_sched_ring_ar_rs(&c, chunk_bytes);
	else if (kind == SUB_RING_AG)
		kcoll_sched_ring_ar_ag(&c, chunk_bytes);
	else
		err = kcoll_sched_alg(&c, algo, chunk_bytes);
	k->n = c.n;
	k->stage = c.stage;
	k->used = c.used;
	k->last_stage = c.last_stage;
	k->scratch = c.scratch;
	if (!k->err)
		k->err = err ? err : c.err;
}

/* A map: peers base + i * stride; SEND, RECV, SCRATCH to the given places. */
static void hier_map(struct ksmap *m, u32 base, u32 stride, struct kreg snd, struct kreg rcv,
		     u64 scratch_off)
{
	m->pbase = base;
	m->pstride = stride;
	m->buf[KCOLL_BUF_SEND] = snd.buf;
	m->off[KCOLL_BUF_SEND] = snd.off;
	m->buf[KCOLL_BUF_RECV] = rcv.buf;
	m->off[KCOLL_BUF_RECV] = rcv.off;
	m->buf[KCOLL_BUF_SCRATCH] = KCOLL_BUF_SCRATCH;
	m->off[KCOLL_BUF_SCRATCH] = scratch_off;
}

struct khier {
	u32 L, N, n, l;
	u64 poff, plen;		/* part l: element offset and count */
	struct kcoll_coll_args intra, rail;
	struct ksmap mi, mr;
};

static void hier_init(struct ks *k, struct khier *h)
{
	const struct kcoll_coll_args *a = k->a;

	h->L = a->local_size > 1 ? a->local_size : 1;
	h->N = k->p / h->L;
	h->n = k->r / h->L;
	h->l = k->r % h->L;
	kcoll_sched_part(a->count, h->L, h->l, &h->poff, &h->plen);
	/* the node's ranks, on the whole vector */
	h->intra = *a;
	h->intra.coll = KCOLL_ALLREDUCE;
	h->intra.nranks = h->L;
	h->intra.rank = h->l;
	h->intra.local_size = 0;
	/* the rail of local index l, on part l, in place */
	h->rail = h->intra;
	h->rail.nranks = h->N;
	h->rail.rank = h->n;
	h->rail.count = h->plen;
	h->rail.in_place = true;
}

static u32 rail_node(const struct khier *h, u32 rank)
{
	return rank / h->L;
}

static void hier_allreduce(struct ks *k, struct khier *h, u64 chunk_bytes)
{
	u64 es = k->es;

	hier_map(&h->mi, h->n * h->L, 1, KR(KCOLL_BUF_SEND, 0), KR(KCOLL_BUF_RECV, 0), 0);
	hier_map(&h->mr, h->l, h->L, NOREG, KR(KCOLL_BUF_RECV, h->poff * es), 0);
	hier_sub(k, &h->intra, &h->mi, SUB_RING_RS, 0, chunk_bytes);
	if (h->N > 1)
		hier_sub(k, &h->rail, &h->mr, SUB_ALG, h->plen * es <= KCOLL_SCHED_HIER_SMALL ?
			 KCOLL_ALG_RECDBL : KCOLL_ALG_RING, chunk_bytes);
	hier_sub(k, &h->intra, &h->mi, SUB_RING_AG, 0, chunk_bytes);
}

static enum kcoll_algorithm hier_rooted_alg(const struct khier *h, u64 es)
{
	return h->plen * es <= KCOLL_SCHED_HIER_SMALL || h->N <= 2 ? KCOLL_ALG_BINOMIAL :
		KCOLL_ALG_CHAIN;
}

static void hier_bcast(struct ks *k, struct khier *h, u64 chunk_bytes)
{
	const struct kcoll_coll_args *a = k->a;
	u32 root = a->root, nr = rail_node(h, root), i;
	u64 es = k->es, off, len;

	/* the root's node: part i to local rank i */
	ks_next(k);
	if (k->r == root) {
		struct kreg in = in_reg(k, 0);

		for (i = 0; i < h->L; i++) {
			kcoll_sched_part(a->count, h->L, i, &off, &len);
			if (nr * h->L + i == root)
				ks_copy(k, KR(KCOLL_BUF_RECV, off * es), radd(in, off * es),
					len * es);
			else
				ks_send(k, nr * h->L + i, radd(in, off * es), len * es);
		}
	} else if (h->n == nr) {
		ks_recv(k, root, KR(KCOLL_BUF_RECV, h->poff * es), h->plen * es);
	}
	h->rail.coll = KCOLL_BROADCAST;
	h->rail.root = nr;
	hier_map(&h->mr, h->l, h->L, NOREG, KR(KCOLL_BUF_RECV, h->poff * es), 0);
	if (h->N > 1)
		hier_sub(k, &h->rail, &h->mr, SUB_ALG, hier_rooted_alg(h, es), chunk_bytes);
	hier_map(&h->mi, h->n * h->L, 1, NOREG, KR(KCOLL_BUF_RECV, 0), 0);
	hier_sub(k, &h->intra, &h->mi, SUB_RING_AG, 0, chunk_bytes);
}

/*
 * REDUCE: a non-root has no receive buffer, so its partial sums live in SCRATCH[0, B) and
 * the phases' own scratch after them.
 */
static void hier_reduce(struct ks *k, struct khier *h, u64 chunk_bytes)
{
	const struct kcoll_coll_args *a = k->a;
	u32 root = a->root, nr = rail_node(h, root), i;
	bool isroot = k->r == root;
	u64 es = k->es, B = a->count * es, sbase = isroot ? 0 : B, off, len;
	struct kreg work = isroot ? KR(KCOLL_BUF_RECV, 0) : KR(KCOLL_BUF_SCRATCH, 0);

	h->intra.in_place = isroot && a->in_place;
	hier_map(&h->mi, h->n * h->L, 1, KR(KCOLL_BUF_SEND, 0), work, sbase);
	hier_sub(k, &h->intra, &h->mi, SUB_RING_RS, 0, chunk_bytes);
	h->rail.coll = KCOLL_REDUCE;
	h->rail.root = nr;
	h->rail.in_place = h->n == nr;
	hier_map(&h->mr, h->l, h->L, radd(work, h->poff * es), radd(work, h->poff * es), sbase);
	if (h->N > 1)
		hier_sub(k, &h->rail, &h->mr, SUB_ALG, hier_rooted_alg(h, es), chunk_bytes);
	/* the root's node: part i from local rank i to the root */
	if (h->n != nr)
		return;
	ks_next(k);
	if (!isroot) {
		ks_send(k, root, radd(work, h->poff * es), h->plen * es);
		return;
	}
	for (i = 0; i < h->L; i++) {
		kcoll_sched_part(a->count, h->L, i, &off, &len);
		if (nr * h->L + i != root)
			ks_recv(k, nr * h->L + i, KR(KCOLL_BUF_RECV, off * es), len * es);
	}
}

/* ALLGATHER: block j (count elements) of rank j at RECV + j * count. */
static void hier_allgather(struct ks *k, struct khier *h)
{
	u32 L = h->L, N = h->N, n = h->n, l = h->l, q, m;
	u64 cb = k->a->count * k->es;
	struct kreg own = in_reg(k, (u64)k->r * cb);
	u32 rnext = ((n + 1) % N) * L + l, rprev = ((n + N - 1) % N) * L + l;
	u32 inext = n * L + (l + 1) % L, iprev = n * L + (l + L - 1) % L;

	ks_next(k);
	ks_copy(k, KR(KCOLL_BUF_RECV, (u64)k->r * cb), own, cb);
	/* rail ring: round q passes on the block of node n - q, receives that of n - q - 1 */
	for (q = 0; q + 1 < N; q++) {
		u32 sb = rmod((s64)n - q, N) * L + l, rb = rmod((s64)n - q - 1, N) * L + l;

		ks_next(k);
		ks_send(k, rnext, q ? KR(KCOLL_BUF_RECV, (u64)sb * cb) : own, cb);
		ks_recv(k, rprev, KR(KCOLL_BUF_RECV, (u64)rb * cb), cb);
	}
	/* intra ring, on every node's blocks at once (in node order on both ends) */
	for (q = 0; q + 1 < L; q++) {
		ks_next(k);
		for (m = 0; m < N; m++) {
			u64 sb = (u64)m * L + rmod((s64)l - q, L);
			u64 rb = (u64)m * L + rmod((s64)l - q - 1, L);

			ks_send(k, inext, KR(KCOLL_BUF_RECV, sb * cb), cb);
			ks_recv(k, iprev, KR(KCOLL_BUF_RECV, rb * cb), cb);
		}
	}
}

int kcoll_sched_alg_hier(struct ks *k, u64 chunk_bytes)
{
	struct khier h;
	u32 lsize = k->a->local_size > 1 ? k->a->local_size : 1;

	if (lsize > k->p || k->p % lsize)
		return -EINVAL;		/* every node has local_size ranks */
	memset(&h, 0, sizeof(h));
	hier_init(k, &h);
	switch (k->a->coll) {
	case KCOLL_ALLREDUCE:
		hier_allreduce(k, &h, chunk_bytes);
		return 0;
	case KCOLL_BROADCAST:
		hier_bcast(k, &h, chunk_bytes);
		return 0;
	case KCOLL_REDUCE:
		hier_reduce(k, &h, chunk_bytes);
		return 0;
	case KCOLL_ALLGATHER:
		hier_allgather(k, &h);
		return 0;
	default:
		return -EINVAL;
	}
}
