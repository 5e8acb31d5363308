/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/kcoll_sched.h - collective algorithms as pure schedules.
 *
 * An algorithm is a function from (collective, nranks, rank, count, element size, root,
 * chunking) to the list of steps one rank executes.  No kernel dependency, no allocation, no
 * floating point, no recursion: the same code runs in the module and in host tests.
 *
 * Steps and stages
 * ----------------
 * A step is SEND, RECV, RECV_REDUCE (receive into scratch, then reduce), COPY or REDUCE (both
 * local).  Every step carries a stage number; the list is sorted by stage.  The steps of one
 * stage may run concurrently and in any order; a stage starts when every step of the previous
 * stage has completed.  A rank's sends to one peer match that peer's receives from it in list
 * order (FIFO per ordered pair), and a send's byte count equals the matching receive's.
 * Executors must be correct with rendezvous semantics (a send completes only once the receive
 * is posted): the schedules are deadlock-free under it, hence also with eager buffering.
 * Within a stage no step writes bytes that another step of the stage reads or writes.
 *
 * Regions name a buffer and a byte offset:
 *   KCOLL_BUF_SEND	the caller's send (input) buffer, never written
 *   KCOLL_BUF_RECV	the caller's receive (output) buffer
 *   KCOLL_BUF_SCRATCH	scratch of info.scratch_bytes, owned by the executor for the operation
 * For an in-place call only RECV (and SCRATCH) is used; see the buffer conventions below.
 *
 * Reduction steps compute dst = src (+) tmp element-wise, where (+) is the operation (see
 * kcoll_reduce.h: every operator is commutative bit for bit, so only the grouping matters):
 *   RECV_REDUCE: receive `bytes` from peer into SCRATCH[tmp_off], then reduce.
 *   REDUCE: local; tmp is SCRATCH[tmp_off].
 * dst may be exactly src or exactly the tmp region.  Reduction steps never involve fewer or
 * more bytes than whole elements.  AVG is reduced as SUM; the rank(s) that end with a result
 * call kcoll_reduce_finalize() on it afterwards.
 *
 * Buffer conventions (counts in elements of elem_size bytes; "p" = nranks)
 * -----------------------------------------------------------------------
 *   coll             send buffer               recv buffer              in place
 *   BROADCAST        count (root only)         count                    root's data in recv
 *   SCATTER          p*count (root only)       count                    root: recv is p*count,
 *                                                                       its block at root*count
 *   GATHER           count                     p*count (root only)      root: its block already
 *                                                                       at recv + root*count
 *   REDUCE           count                     count (root only)        root: input in recv
 *   ALLREDUCE        count                     count                    input in recv
 *   ALLGATHER        count                     p*count                  input at recv+rank*count
 *   REDUCE_SCATTER   p*count                   count                    recv is p*count, input;
 *                                                                       result at rank*count
 *   ALLTOALL         p*count, block j to j     p*count, block j from j  recv is both
 *   BARRIER          -                         -                        -
 *   ALLGATHERV       counts[rank]              block j: counts[j] at    input at
 *                                              displs[j]                recv+displs[rank]
 *   REDUCE_SCATTERV  block j: counts[j] at     counts[rank]             recv is the send
 *                    displs[j]                                          layout; result at
 *                                                                       displs[rank]
 *   ALLTOALLV        to j: send_counts[j] at   from j: counts[j] at     recv is both: to and
 *                    send_displs[j]            displs[j]                from j at displs[j]
 * Rooted collectives: "in place" concerns the root only (as in MPI); the other ranks use
 * their send and receive buffers as usual and a non-root's receive buffer is never touched
 * for GATHER and REDUCE.  In-place REDUCE_SCATTER(V) may clobber the rest of the buffer; an
 * in-place ALLTOALLV needs symmetric counts (rank j's counts[i] == rank i's counts[j]).
 * The v-collectives' arrays (counts, displs) must be identical on every rank, except
 * ALLTOALLV's, which are the calling rank's own as in MPI.
 *
 * Reduction order (deterministic, identical on every run; see core/README.md)
 * --------------------------------------------------------------------------
 * Blocks: a count split in n parts gives part i = count/n elements, plus one for i <
 * count%n, in order (kcoll_sched_part()).  x_r is rank r's input, (+) the operator.
 *   RING           block b (of p) = ((x_{b+1} (+) x_{b+2}) (+) ...) (+) x_{b+p}, ranks mod p.
 *   RECDBL         q = largest power of two <= p, m = p - q.  Leaves v < q: L_v = x_{2v}
 *                  (+) x_{2v+1} for v < m, else x_{v+m}.  Pairs (L_0,L_1), (L_2,L_3), ...
 *                  are combined, then pairs of those, and so on (a balanced tree in v order).
 *   RABENSEIFNER   the same leaves; combined first across distance q/2 (L_v with L_{v+q/2}),
 *                  then q/4, ..., 1.
 *   BINOMIAL       relative rank v = (r - root) mod p; R(v) = (((x_v (+) R(v+1)) (+) R(v+2))
 *                  (+) R(v+4)) ... over the children v+2^k < min(p, v + lowbit(v)) (all 2^k < p
 *                  for v = 0).  ALLREDUCE reduces to rank 0 so, then broadcasts.
 *   DBTREE         elements split in two halves (kcoll_sched_part(count, 2, t)); half t is
 *                  reduced over tree t towards its root: R(n) = (x_n (+) R(right)) (+)
 *                  R(left), absent children skipped (see kcoll_sched_dbtree()); the root's
 *                  result is broadcast down the same tree.
 *   CHAIN          (REDUCE) v = (r - root) mod p: x_0 (+) (x_1 (+) (... (+) x_{p-1})).
 *
 * Pipelining: RING, DBTREE and CHAIN split blocks into chunks (chunk_bytes, at most
 * KCOLL_SCHED_MAX_CHUNKS per block).  With two or more chunks a received chunk lands in a
 * scratch slot in one stage and is reduced (REDUCE) in the next, while the following chunk is
 * being received, so the link does not idle while a chunk is reduced.  The order above does
 * not depend on the chunking.
 *
 * Counting: kcoll_sched_build() with steps == NULL only fills info (steps, stages, scratch
 * bytes), so the caller can allocate exactly; called again with an array of at least
 * info.nsteps entries it writes the steps.
 */
#ifndef _KCOLL_CORE_SCHED_H
#define _KCOLL_CORE_SCHED_H

#include "kcoll_types.h"
#include "../include/uapi/linux/kcoll.h"

/*
 * Collectives and algorithms are the uAPI's: enum kcoll_collective (KCOLL_BROADCAST ..
 * KCOLL_REDUCE_SCATTERV, KCOLL_NUM_COLLECTIVES) and enum kcoll_algorithm, named once in
 * include/kcoll_names.h.  The algorithms:
 *   KCOLL_ALG_AUTO		kcoll_sched_select() decides
 *   KCOLL_ALG_RING		ring; ALLREDUCE = reduce-scatter + all-gather, chunked
 *   KCOLL_ALG_RECDBL		recursive doubling (non-powers of two folded)
 *   KCOLL_ALG_RABENSEIFNER	recursive halving reduce-scatter + doubling all-gather
 *   KCOLL_ALG_BINOMIAL		binomial tree
 *   KCOLL_ALG_DBTREE		double binary tree, chunked and pipelined
 *   KCOLL_ALG_CHAIN		pipelined chain, chunked
 *   KCOLL_ALG_PAIRWISE		pairwise exchange
 *   KCOLL_ALG_BRUCK		Bruck (for BARRIER: dissemination, the same pattern)
 *   KCOLL_ALG_HIER		hierarchical: intra-node, inter-node rails, intra
 */

enum kcoll_buf_id {
	KCOLL_BUF_SEND = 0,
	KCOLL_BUF_RECV = 1,
	KCOLL_BUF_SCRATCH = 2,
	KCOLL_BUF_NONE = 3,
};

enum kcoll_step_op {
	KCOLL_STEP_SEND = 0,		/* src -> peer */
	KCOLL_STEP_RECV = 1,		/* peer -> dst */
	KCOLL_STEP_RECV_REDUCE = 2,	/* peer -> SCRATCH[tmp_off]; dst = src (+) tmp */
	KCOLL_STEP_COPY = 3,		/* dst = src, local, non-overlapping */
	KCOLL_STEP_REDUCE = 4,		/* dst = src (+) SCRATCH[tmp_off], local */
};

struct kcoll_step {
	u8 op;		/* enum kcoll_step_op */
	u8 src_buf;	/* enum kcoll_buf_id; NONE when unused */
	u8 dst_buf;
	u8 reserved;
	u32 stage;
	u32 peer;	/* SEND, RECV, RECV_REDUCE */
	u32 reserved2;
	u64 src_off;
	u64 dst_off;
	u64 tmp_off;	/* RECV_REDUCE, REDUCE: offset in SCRATCH */
	u64 bytes;	/* may be 0 only for BARRIER's messages */
};

/* What one collective call is; identical on every rank except rank (and ALLTOALLV arrays). */
struct kcoll_coll_args {
	enum kcoll_collective coll;
	u32 nranks;
	u32 rank;
	u32 root;		/* BROADCAST, SCATTER, GATHER, REDUCE */
	u64 count;		/* elements, see the buffer conventions; unused for the v-colls */
	u32 elem_size;		/* bytes per element, >= 1 */
	bool in_place;
	const u64 *counts;	/* ALLGATHERV, REDUCE_SCATTERV, ALLTOALLV (receive side) */
	const u64 *displs;	/* element displacements for counts */
	const u64 *send_counts;	/* ALLTOALLV send side */
	const u64 *send_displs;
	/*
	 * Locality: ranks sit in blocks of local_size consecutive ranks per node (rank r on
	 * node r / local_size, local index r % local_size).  0 or 1: flat, every rank its own
	 * node; only KCOLL_ALG_HIER uses it, and needs nranks to be a multiple (-EINVAL).
	 */
	u32 local_size;
};

struct kcoll_sched_info {
	u32 nsteps;
	u32 nstages;
	u64 scratch_bytes;
};

/* Chunked algorithms split a block into at most this many pieces. */
#define KCOLL_SCHED_MAX_CHUNKS	64

/*
 * Build rank args->rank's schedule for algo (not AUTO).  chunk_bytes: target piece size of
 * the chunked algorithms (RING, DBTREE, CHAIN); 0 means one piece per block.
 * steps == NULL: count only.  Otherwise max_steps must be >= the counted nsteps.
 * Return 0, -EINVAL (bad arguments, or algo does not implement the collective / in-place
 * variant), -ENOSPC (max_steps too small), -EOVERFLOW (more steps than a u32 counts).
 */
int kcoll_sched_build(const struct kcoll_coll_args *args, enum kcoll_algorithm algo,
		      u64 chunk_bytes, struct kcoll_step *steps, u32 max_steps,
		      struct kcoll_sched_info *info);

/* Whether algo implements coll (in place or not). */
bool kcoll_sched_supports(enum kcoll_algorithm algo, enum kcoll_collective coll, bool in_place);

/*
 * Sizes of the caller's buffers for args (bytes), per the conventions above, for the calling
 * rank; 0 where a buffer is not used.  -EINVAL on bad arguments.
 */
int kcoll_sched_buf_bytes(const struct kcoll_coll_args *args, u64 *send_bytes,
			  u64 *recv_bytes);

/* Validate args (ranks, root, elem_size, arrays present, no overflow). */
int kcoll_sched_check_args(const struct kcoll_coll_args *args);

/* Part i of count split in n (n >= 1): offset and length in elements. */
static inline void kcoll_sched_part(u64 count, u64 n, u64 i, u64 *off, u64 *len)
{
	u64 base = kcoll_div_u64(count, n), rem = count - base * n;

	*off = i * base + (i < rem ? i : rem);
	*len = base + (i < rem ? 1 : 0);
}

/*
 * The double binary tree: tree t (0 or 1) over p ranks, rank r.  Sets *parent (or -1 for the
 * root), child[0] (left) and child[1] (right), -1 where absent.  Tree 0 is the in-order
 * binary tree on positions 0..p-1 rooted at 0 (whose only child is the largest power of two
 * below p); a node at position x with lowest set bit b has children x - b/2 and the first of
 * x + b/2, x + b/4, ... below p, its parent is x - b or x + b (whichever has lowest bit 2b,
 * or x - b if x + b >= p).  Tree 1 places rank r at position p - 1 - r if p is even (mirror),
 * (r + p - 1) % p if p is odd (shift), so that ranks that are leaves in one tree are inner
 * nodes in the other (at most one rank is inner in both, at most two are leaves in both).
 */
void kcoll_sched_dbtree(u32 p, u32 r, int t, s32 *parent, s32 child[2]);

/* ---- selection ------------------------------------------------------------------------- */

#define KCOLL_SCHED_SEGS	6		/* segments a row of the table has at most */
#define KCOLL_SCHED_ANY_BYTES	(~(u64)0)	/* the last segment: any size */

/*
 * One row of the table kcoll-sim derives (core/kcoll_sched_table.h, generated): for coll,
 * from this many ranks up to the next row of the same (coll, local, pow2), the algorithm
 * of the first segment whose max_bytes the payload does not exceed.  local: the rows for
 * communicators of several ranks a node over more than one node; pow2: rank counts that
 * are powers of two.  Static and read-only: nobody frees it, no lock.
 */
struct kcoll_sched_row {
	u8 coll;		/* enum kcoll_collective */
	u8 local;
	u8 pow2;
	u32 from;
	struct {
		u8 algo;	/* enum kcoll_algorithm; 0 past the last segment */
		u64 max_bytes;
	} seg[KCOLL_SCHED_SEGS];
};

/*
 * The threshold rules' small_bytes that kcoll-sim's model derives (tools/kcoll-sim/
 * thresholds.py): what an admin sets to go back to the rules (Documentation/scale.rst).
 */
#define KCOLL_SCHED_RULES_SMALL_BYTES	(2ULL << 20)

struct kcoll_sched_tuning {
	/* per collective: KCOLL_ALG_AUTO or a forced algorithm (configuration) */
	u8 algo[KCOLL_NUM_COLLECTIVES];
	/*
	 * 0 (default): AUTO picks from the table kcoll-sim derives (kcoll_sched_table.h).
	 * Else the threshold rules: latency-bound up to small_bytes, then medium_bytes and
	 * tree_ranks as below.
	 */
	u64 small_bytes;
	u64 medium_bytes;	/* rules: all-reduce/reduce-scatter halving-doubling below: 8 MiB */
	u32 tree_ranks;		/* rules: all-reduce from this many ranks up: double tree: 384 */
	u64 chunk_bytes;	/* pipelining piece: default 256 KiB */
	/*
	 * The communicator's ranks per node (kcoll_coll_args.local_size; 0: not known, or
	 * not equal blocks of consecutive ranks: kmod/kcoll_locality.c).  Only then may AUTO
	 * pick KCOLL_ALG_HIER, and the caller passes
	 * the same local_size in the arguments.
	 */
	u32 local_size;
};

/* Fill t with the defaults above. */
void kcoll_sched_tuning_default(struct kcoll_sched_tuning *t);

/*
 * The algorithm for coll on nranks ranks moving bytes (the payload per rank: count *
 * elem_size, or the total of the v-arrays' counts * elem_size).  Deterministic from its
 * arguments only, so every rank agrees.  t == NULL: defaults.  A forced t->algo[coll] wins if
 * it implements coll; otherwise (and for AUTO) the derived table when t->small_bytes is 0
 * and it has rows for coll, else the rules in core/README.md.
 */
enum kcoll_algorithm kcoll_sched_select(enum kcoll_collective coll, u32 nranks, u64 bytes,
					const struct kcoll_sched_tuning *t);

/*
 * Per-call override: request (from the call) wins if not AUTO, else kcoll_sched_select().
 * Returns -EINVAL if request does not implement coll/in_place, else the algorithm.
 */
int kcoll_sched_choose(enum kcoll_collective coll, u32 nranks, u64 bytes, bool in_place,
		       enum kcoll_algorithm request, const struct kcoll_sched_tuning *t);

/*
 * A 32-bit fingerprint of everything that must agree across ranks for a collective call
 * (collective, ranks, root, count, element size, in-place flag, algorithm, chunk size and the
 * shared v-arrays): ranks exchange it with the first message and refuse to run on a mismatch
 * instead of hanging.
 */
u32 kcoll_sched_fingerprint(const struct kcoll_coll_args *args, enum kcoll_algorithm algo,
			    u64 chunk_bytes);

/*
 * The tag a step's messages carry: @op_tag ((op sequence << 32) | fingerprint), and for
 * ALLTOALLV also the step's bytes.  ALLTOALLV's count arrays are each rank's own (what it
 * sends to and receives from every peer), so they cannot enter the fingerprint all ranks
 * share; what the two ends of one step must agree on is its size, and a step whose peer
 * has another size for it is refused before any data moves.
 */
u64 kcoll_sched_step_tag(const struct kcoll_coll_args *args, u64 op_tag,
			 const struct kcoll_step *step);

const char *kcoll_coll_name(enum kcoll_collective coll);
const char *kcoll_algo_name(enum kcoll_algorithm algo);

#endif /* _KCOLL_CORE_SCHED_H */
