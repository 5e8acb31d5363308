// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll grouped operations: kcoll_group_start() ... kcoll_group_end(), as NCCL's
 * ncclGroupStart/End.
 *
 * Between the two, kcoll_allreduce() and the non-blocking point-to-point calls are recorded
 * in a thread-local list instead of run.  kcoll_group_end() of the outermost group runs them:
 * every point-to-point request is posted first (in call order, so messages between two ranks
 * still match in posting order), then each run of consecutive all-reduces of the same
 * communicator, datatype, operator and algorithm is packed into one buffer and reduced by ONE
 * KCOLL_IOC_COLL (N small tensors cost one submission), then every posted request is waited
 * for.  Every rank must record the same sequence, as for ungrouped calls: the packing only
 * depends on the counts, types and operators, which must match across ranks anyway.
 *
 * Any failure, while recording or while running, fails the whole group: kcoll_group_end()
 * returns the first error and kcoll_last_error() says which call failed and why.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "libkcoll_internal.h"

/* Recorded calls per group, at most: a group is for batching, not for unbounded queues. */
#define KCOLL_GROUP_MAX_OPS	65536
/* Largest packed buffer: longer runs of all-reduces are cut into several fused calls. */
#define KCOLL_GROUP_PACK_MAX	(64u << 20)
/* Nesting depth, at most (start without end in a loop is a bug worth reporting). */
#define KCOLL_GROUP_MAX_DEPTH	1024

enum kcoll_group_kind { KCOLL_GOP_ALLREDUCE, KCOLL_GOP_P2P };

struct kcoll_group_op {
	enum kcoll_group_kind kind;
	struct kcoll_comm *c;
	/* all-reduce */
	const void *send;
	void *recv;
	size_t count;
	int dtype, op;
	unsigned int algo, timeout_ms;
	/* point-to-point: the argument as kcoll_p2p() built it, and the request once posted */
	struct kcoll_p2p p2p;
	struct kcoll_request req;
	int posted;
};

struct kcoll_group {
	int depth;
	int err;			/* first failure while recording; sticky */
	char msg[KCOLL_ERRMSG_MAX];	/* its kcoll_last_error() */
	struct kcoll_group_op *ops;
	size_t n, cap;
};

static __thread struct kcoll_group kcoll_grp;

bool kcoll_group_active(void)
{
	return kcoll_grp.depth > 0;
}

/* Remember the first failure of the group (its message is the current last error). */
static int kcoll_group_poison(int err)
{
	if (!kcoll_grp.err) {
		kcoll_grp.err = err;
		snprintf(kcoll_grp.msg, sizeof(kcoll_grp.msg), "%s", kcoll_last_error());
	}
	return kcoll_err(err);
}

int kcoll_group_fail(int err, const char *what)
{
	if (!err || !kcoll_group_active())
		return err;
	if (what)
		kcoll_set_error("%s: %s", what, strerror(-err));
	return kcoll_group_poison(err);
}

int kcoll_group_refuse(const char *fn)
{
	if (!kcoll_group_active())
		return 0;
	kcoll_set_error("%s: not allowed between kcoll_group_start() and kcoll_group_end() "
			"(only kcoll_allreduce() and the non-blocking kcoll_isend()/kcoll_irecv() "
			"calls may be grouped)", fn);
	return kcoll_group_poison(-EINVAL);
}

static struct kcoll_group_op *kcoll_group_add(struct kcoll_comm *c, enum kcoll_group_kind kind)
{
	struct kcoll_group *g = &kcoll_grp;
	struct kcoll_group_op *o;

	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;

		if (g->n >= KCOLL_GROUP_MAX_OPS) {
			kcoll_set_error("group: more than %d calls between kcoll_group_start() and "
					"kcoll_group_end()", KCOLL_GROUP_MAX_OPS);
			kcoll_group_poison(-E2BIG);
			return NULL;
		}
		o = realloc(g->ops, cap * sizeof(*o));
		if (!o) {
			kcoll_set_error("group: out of memory recording a call");
			kcoll_group_poison(-ENOMEM);
			return NULL;
		}
		g->ops = o;
		g->cap = cap;
	}
	o = &g->ops[g->n++];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->c = c;
	return o;
}

int kcoll_group_allreduce(struct kcoll_comm *c, const void *send, void *recv, size_t count,
			  int dtype, int op, const struct kcoll_coll_opts *opts)
{
	struct kcoll_group_op *o;

	if (OPTS_GET(opts, req, NULL) || OPTS_GET(opts, algo_used, NULL)) {
		kcoll_set_error("allreduce: kcoll_coll_opts.req and .algo_used cannot be used "
				"between kcoll_group_start() and kcoll_group_end()");
		return kcoll_group_poison(-EINVAL);
	}
	/* The group copies them; the kernel would have refused them with EFAULT. */
	if (count && (!send || !recv)) {
		kcoll_set_error("allreduce: a NULL buffer for %zu elements", count);
		return kcoll_group_poison(-EINVAL);
	}
	o = kcoll_group_add(c, KCOLL_GOP_ALLREDUCE);
	if (!o)
		return kcoll_grp.err;
	o->send = send;
	o->recv = recv;
	o->count = count;
	o->dtype = dtype;
	o->op = op;
	o->algo = OPTS_GET(opts, algo, 0);
	o->timeout_ms = OPTS_GET(opts, timeout_ms, 0);
	return 0;
}

int kcoll_group_p2p(struct kcoll_comm *c, const struct kcoll_p2p *p, struct kcoll_request *req)
{
	struct kcoll_group_op *o = kcoll_group_add(c, KCOLL_GOP_P2P);

	if (!o)
		return kcoll_grp.err;
	o->p2p = *p;
	/* Completed by kcoll_group_end(): nothing is left for kcoll_wait() to consume. */
	memset(req, 0, sizeof(*req));
	return 0;
}

int kcoll_group_start(void)
{
	if (kcoll_grp.depth >= KCOLL_GROUP_MAX_DEPTH)
		return kcoll_fail(-EOVERFLOW, "kcoll_group_start: groups nested more than %d deep",
				  KCOLL_GROUP_MAX_DEPTH);
	kcoll_grp.depth++;
	return 0;
}

/* Keep the first error of the run and its message, prefixed by the call that failed. */
static void kcoll_group_note(int *first, char *msg, size_t len, int err, size_t i,
			     const char *what)
{
	const char *why = kcoll_last_error();

	if (*first)
		return;
	*first = err;
	snprintf(msg, len, "group: call %zu (%s): %s", i, what, *why ? why : strerror(-err));
}

/*
 * One all-reduce for the all-reduces of ops[i, j) (point-to-point entries among them were
 * posted already): the sends packed into one buffer, reduced in place, the result unpacked
 * into each recv.  A run of one needs no copy.
 */
static int kcoll_group_fused(struct kcoll_group_op *ops, size_t i, size_t j)
{
	struct kcoll_group_op *a = &ops[i];
	size_t esz = kcoll_datatype_size(a->dtype), total = 0, off, k, m = 0;
	unsigned int ms = 0;
	char *pack;
	int err;

	for (k = i; k < j; k++) {
		if (ops[k].kind != KCOLL_GOP_ALLREDUCE)
			continue;
		m++;
		total += ops[k].count;
		/* The shortest timeout of the members bounds the fused call. */
		if (ops[k].timeout_ms && (!ms || ops[k].timeout_ms < ms))
			ms = ops[k].timeout_ms;
	}
	KCOLL_OPTS(kcoll_coll_opts, o, .algo = a->algo, .timeout_ms = ms);
	if (m == 1)
		return kcoll_allreduce(a->c, a->send, a->recv, a->count, a->dtype, a->op, &o);
	/* <= KCOLL_GROUP_PACK_MAX (see kcoll_group_joins()); never malloc(0) */
	pack = malloc(total ? total * esz : 1);
	if (!pack)
		return kcoll_fail(-ENOMEM, "out of memory packing %zu all-reduces", m);
	for (k = i, off = 0; k < j; k++) {
		if (ops[k].kind != KCOLL_GOP_ALLREDUCE || !ops[k].count)
			continue;
		memcpy(pack + off, ops[k].send, ops[k].count * esz);
		off += ops[k].count * esz;
	}
	err = kcoll_allreduce(a->c, pack, pack, total, a->dtype, a->op, &o);
	for (k = i, off = 0; !err && k < j; k++) {
		if (ops[k].kind != KCOLL_GOP_ALLREDUCE || !ops[k].count)
			continue;
		memcpy(ops[k].recv, pack + off, ops[k].count * esz);
		off += ops[k].count * esz;
	}
	free(pack);
	return err;
}

/* Whether @b may join the fused run of @a, which packs @bytes (<= the limit) so far. */
static bool kcoll_group_joins(const struct kcoll_group_op *a, const struct kcoll_group_op *b,
			      size_t bytes)
{
	size_t esz = kcoll_datatype_size(a->dtype);

	return b->c == a->c && b->dtype == a->dtype &&
	       b->op == a->op && b->algo == a->algo &&
	       b->count <= (KCOLL_GROUP_PACK_MAX - bytes) / esz;
}

/*
 * Run the all-reduces in order, consecutive compatible ones fused, up to the first error.
 * Point-to-point entries between them do not break a run: they were all posted before.
 */
static void kcoll_group_run_colls(struct kcoll_group_op *ops, size_t n, int *first, char *msg,
				  size_t len)
{
	size_t i = 0, j, esz, bytes;
	int err;

	while (i < n && !*first) {
		if (ops[i].kind != KCOLL_GOP_ALLREDUCE) {
			i++;
			continue;
		}
		esz = kcoll_datatype_size(ops[i].dtype);
		j = i + 1;
		/* Counts are the caller's: compared by division, never multiplied blindly. */
		if (ops[i].count <= KCOLL_GROUP_PACK_MAX / esz) {
			bytes = ops[i].count * esz;
			for (; j < n; j++) {
				if (ops[j].kind != KCOLL_GOP_ALLREDUCE)
					continue;
				if (!kcoll_group_joins(&ops[i], &ops[j], bytes))
					break;
				bytes += ops[j].count * esz;
			}
		}
		kcoll_clear_error();
		err = kcoll_group_fused(ops, i, j);
		if (err)
			kcoll_group_note(first, msg, len, err, i, "kcoll_allreduce");
		i = j;
	}
}

/*
 * Wait for a posted request.  Its memory belongs to the kernel until it completes, so a
 * request still in flight after its own timeout aborts the communicator (which fails it)
 * and is then waited for to its end.  Without a timeout the wait is kcoll_wait()'s with -1.
 */
static int kcoll_group_wait(struct kcoll_group_op *o)
{
	uint32_t t = o->p2p.timeout_ms;
	int ms = t && t <= INT32_MAX ? (int)t : -1;
	int err;

	do
		err = kcoll_wait(o->c, &o->req, ms, NULL);
	while (err == -EINTR);
	if (err != -EAGAIN)
		return err;
	kcoll_comm_abort(o->c);
	do
		err = kcoll_wait(o->c, &o->req, -1, NULL);
	while (err == -EINTR || err == -EAGAIN);
	return kcoll_fail(-ETIMEDOUT, "still in flight after %d ms; communicator aborted", ms);
}

static int kcoll_group_run(struct kcoll_group_op *ops, size_t n)
{
	char msg[KCOLL_ERRMSG_MAX] = "";
	int first = 0, err;
	size_t i;

	/* Post every point-to-point request first, so that none waits for a collective. */
	for (i = 0; i < n && !first; i++) {
		if (ops[i].kind != KCOLL_GOP_P2P)
			continue;
		kcoll_clear_error();
		err = kcoll_p2p_submit(ops[i].c, &ops[i].p2p, NULL, &ops[i].req);
		if (err)
			kcoll_group_note(&first, msg, sizeof(msg), err, i,
					 ops[i].p2p.flags & KCOLL_P2P_RECV ? "kcoll_irecv"
									   : "kcoll_isend");
		else
			ops[i].posted = 1;
	}
	kcoll_group_run_colls(ops, n, &first, msg, sizeof(msg));
	/* Even after a failure: the kernel may write posted receive buffers until they end. */
	for (i = 0; i < n; i++) {
		if (!ops[i].posted)
			continue;
		kcoll_clear_error();
		err = kcoll_group_wait(&ops[i]);
		if (err)
			kcoll_group_note(&first, msg, sizeof(msg), err, i, "kcoll_wait");
	}
	if (first)
		return kcoll_fail(first, "%s", msg);
	kcoll_clear_error();
	return 0;
}

int kcoll_group_end(void)
{
	struct kcoll_group *g = &kcoll_grp;
	struct kcoll_group_op *ops;
	size_t n;
	int err;

	if (!g->depth)
		return kcoll_fail(-EINVAL, "kcoll_group_end: no kcoll_group_start() to end");
	if (--g->depth)
		return 0;
	/* Detach the list: what runs below is not recorded again. */
	ops = g->ops;
	n = g->n;
	err = g->err;
	g->ops = NULL;
	g->n = 0;
	g->cap = 0;
	g->err = 0;
	if (err)
		err = kcoll_fail(err, "group not run: %s", g->msg);
	else
		err = kcoll_group_run(ops, n);
	free(ops);
	return err;
}
