// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll collectives: one KCOLL_IOC_COLL per call (in a group, lib/group.c, all-reduces
 * are recorded instead and fused).
 *
 * The library's job is translation: NCCL-style in-place conventions become the kernel's
 * KCOLL_COLL_IN_PLACE layout (see the table in include/libkcoll.h), pointers into a mapped
 * kcoll_buf become (handle, offset) zero-copy regions, and size_t arrays become the __u64
 * arrays of the uAPI.  Failed calls get a kcoll_last_error() message; the successful
 * path records nothing, to stay cheap.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "libkcoll_internal.h"

#define KCOLL_REQ_INFLIGHT	1

/* One call as the library assembles it. */
struct kcoll_call {
	struct kcoll_coll a;
	const void *send;
	void *recv;
	uint64_t *arrays;		/* the v-collectives' __u64 copies (one allocation) */
};

static int kcoll_call_check_args(struct kcoll_comm *c, struct kcoll_call *k,
				 const struct kcoll_coll_opts *opts)
{
	const char *cn = kcoll_collective_str(k->a.coll);
	int err;

	if (!c)
		return kcoll_fail(-EINVAL, "%s: the communicator is NULL", cn);
	err = OPTS_VALID(opts, kcoll_coll_opts, algo_used, KCOLL_COLL_OPTS_SZ_VER0);
	if (err)
		return kcoll_fail(err, "%s: bad kcoll_coll_opts (sz or unknown fields)", cn);
	if (OPTS_GET(opts, flags, 0))
		return kcoll_fail(-EINVAL, "%s: unknown flags in kcoll_coll_opts", cn);
	if (k->a.dtype >= KCOLL_NUM_DATATYPES)
		return kcoll_fail(-EINVAL, "%s: unknown datatype %u", cn, k->a.dtype);
	if (k->a.op >= KCOLL_NUM_RED_OPS)
		return kcoll_fail(-EINVAL, "%s: unknown reduction operator %u", cn, k->a.op);
	if (k->a.op == KCOLL_AVG && k->a.dtype < KCOLL_FP16)
		return kcoll_fail(-EINVAL, "%s: avg of %s is not supported: avg is defined for "
				  "fp16, bf16, fp32 and fp64 only", cn,
				  kcoll_datatype_str(k->a.dtype));
	if (OPTS_GET(opts, algo, 0) >= KCOLL_NUM_ALGORITHMS)
		return kcoll_fail(-EINVAL, "%s: unknown algorithm %u", cn,
				  OPTS_GET(opts, algo, 0));
	if (k->a.root >= (uint32_t)c->nranks)
		return kcoll_fail(-EINVAL, "%s: root %u is not a rank of a %d-rank communicator",
				  cn, k->a.root, c->nranks);
	return 0;
}

/* In a group only all-reduces are recorded; a refusal or a bad argument fails the group. */
static int kcoll_call_check(struct kcoll_comm *c, struct kcoll_call *k,
			    const struct kcoll_coll_opts *opts)
{
	int err = 0;

	if (k->a.coll != KCOLL_ALLREDUCE)
		err = kcoll_group_refuse(kcoll_collective_str(k->a.coll));
	if (!err)
		err = kcoll_group_fail(kcoll_call_check_args(c, k, opts), NULL);
	return err;
}

/* A side of the call: a zero-copy buffer region if it lies in a mapped buffer. */
static void kcoll_call_side(struct kcoll_comm *c, const void *p, uint32_t flag,
			    __u32 *handle, __u64 *addr, __u32 *flags)
{
	struct kcoll_buf *b = kcoll_buf_find(c, p, 0);

	if (b) {
		*flags |= flag;
		*handle = b->handle;
		*addr = (uint64_t)((uintptr_t)p - (uintptr_t)b->ptr);
	} else {
		*addr = (uintptr_t)p;
	}
}

static int kcoll_call_run(struct kcoll_comm *c, struct kcoll_call *k,
			  const struct kcoll_coll_opts *opts)
{
	struct kcoll_request *req = OPTS_GET(opts, req, NULL);
	unsigned int *algo_used = OPTS_GET(opts, algo_used, NULL);
	const char *cn = kcoll_collective_str(k->a.coll);
	int err;

	k->a.size = sizeof(k->a);
	k->a.comm = c->handle;
	k->a.algo = (uint8_t)OPTS_GET(opts, algo, 0);
	k->a.timeout_ms = OPTS_GET(opts, timeout_ms, 0);
	if (req)
		k->a.flags |= KCOLL_COLL_NONBLOCK;
	kcoll_call_side(c, k->send, KCOLL_COLL_SEND_BUF, &k->a.send_handle, &k->a.sendbuf,
			&k->a.flags);
	kcoll_call_side(c, k->recv, KCOLL_COLL_RECV_BUF, &k->a.recv_handle, &k->a.recvbuf,
			&k->a.flags);
	err = ioctl(c->fd, KCOLL_IOC_COLL, &k->a) < 0 ? -errno : 0;
	free(k->arrays);
	if (err == -EINVAL)
		return kcoll_fail(err, "%s: the kernel refused the arguments (count, root, "
				  "algorithm %s for this collective, or datatype/op)", cn,
				  kcoll_algorithm_str(k->a.algo));
	if (err == -ERANGE)
		return kcoll_fail(err, "%s: a region runs past the end of its kcoll buffer", cn);
	if (err == -EOVERFLOW)
		return kcoll_fail(err, "%s: too large: count x element size x number of ranks (for "
				  "the v-collectives: the largest displs[j] + counts[j], times the "
				  "element size) exceeds 2^56 bytes", cn);
	if (err == -EPROTO)
		return kcoll_fail(err, "%s: the ranks' calls differ (collective, count, root, "
				  "datatype, algorithm or order of calls)", cn);
	if (err == -ECONNRESET || err == -ETIMEDOUT)
		return kcoll_fail(err, "%s: %s: a peer rank left, died or cannot be reached (the "
				  "communicator has failed; `kcollctl comm show` names the rank)",
				  cn, strerror(-err));
	if (err)
		return kcoll_fail(err, "%s: %s", cn, strerror(-err));
	if (algo_used)
		*algo_used = k->a.algo_used;
	if (req) {
		req->id = k->a.req;
		req->comm = c->handle;
		req->state = KCOLL_REQ_INFLIGHT;
	}
	return 0;
}

static void kcoll_call_init(struct kcoll_call *k, int coll, const void *send, void *recv,
			    size_t count, int dtype, int op, int root)
{
	memset(k, 0, sizeof(*k));
	k->a.coll = (uint8_t)coll;
	k->a.count = count;
	k->a.dtype = dtype < 0 || dtype > 255 ? 255 : (uint8_t)dtype;
	k->a.op = op < 0 || op > 255 ? 255 : (uint8_t)op;
	k->a.root = root < 0 ? UINT32_MAX : (uint32_t)root;
	k->send = send;
	k->recv = recv;
}

/* The byte offset of element @n of @dtype. */
static uintptr_t kcoll_at(const void *p, size_t n, int dtype)
{
	return (uintptr_t)p + n * kcoll_datatype_size(dtype);
}

/*
 * NCCL-style in place becomes KCOLL_COLL_IN_PLACE: the send buffer is element @at of the
 * receive buffer (the kernel then reads recv alone) or, for the reduce-scatters, the receive
 * buffer is element @at of the send buffer (the kernel then takes the whole send buffer and
 * leaves the result in place).
 */
static void kcoll_call_in_place(struct kcoll_call *k, size_t at, int dtype)
{
	bool rs = k->a.coll == KCOLL_REDUCE_SCATTER || k->a.coll == KCOLL_REDUCE_SCATTERV;
	const void *inner = rs ? k->recv : k->send;
	const void *outer = rs ? k->send : k->recv;

	if ((uintptr_t)inner != kcoll_at(outer, at, dtype))
		return;
	k->a.flags |= KCOLL_COLL_IN_PLACE;
	if (rs)
		k->recv = (void *)k->send;
	k->send = NULL;
}

/*
 * Broadcast and scatter (the root sends), gather and reduce (the root receives): only the
 * root's buffers may be in place, except a broadcast's, and the other side of the root's
 * transfer is not the other ranks' to give.
 */
static int kcoll_rooted(struct kcoll_comm *c, int coll, const void *sendbuf, void *recvbuf,
			size_t count, int dtype, int op, int root,
			const struct kcoll_coll_opts *opts)
{
	bool root_sends = coll == KCOLL_BROADCAST || coll == KCOLL_SCATTER;
	struct kcoll_call k;
	int err;

	kcoll_call_init(&k, coll, sendbuf, recvbuf, count, dtype, op, root);
	err = kcoll_call_check(c, &k, opts);
	if (err)
		return err;
	if (c->rank == root || coll == KCOLL_BROADCAST)
		kcoll_call_in_place(&k, coll == KCOLL_GATHER ? (size_t)root * count : 0, dtype);
	if (c->rank != root && root_sends)
		k.send = NULL;
	else if (c->rank != root)
		k.recv = NULL;
	return kcoll_call_run(c, &k, opts);
}

/* Copy @n arrays of nranks size_t into k->arrays (uAPI __u64) and point the call at them. */
static int kcoll_call_arrays(struct kcoll_comm *c, struct kcoll_call *k,
			     const size_t *const *src, int n)
{
	size_t nr = (size_t)c->nranks;
	__u64 *dst[4] = { &k->a.counts, &k->a.displs, &k->a.send_counts, &k->a.send_displs };
	int i;

	for (i = 0; i < n; i++)
		if (!src[i])
			return kcoll_fail(-EINVAL, "%s: a counts or displacements array is NULL",
					  kcoll_collective_str(k->a.coll));
	k->arrays = calloc((size_t)n * nr, sizeof(uint64_t));
	if (!k->arrays)
		return kcoll_fail(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		for (size_t j = 0; j < nr; j++)
			k->arrays[i * nr + j] = src[i][j];
		*dst[i] = (uintptr_t)(k->arrays + i * nr);
	}
	return 0;
}

/*
 * The collectives without a root; the v-collectives bring @narr count and displacement
 * arrays @arr (receive counts, receive displacements, then the send ones).
 */
static int kcoll_unrooted(struct kcoll_comm *c, int coll, const void *sendbuf, void *recvbuf,
			  size_t count, const size_t *const *arr, int narr, int dtype, int op,
			  const struct kcoll_coll_opts *opts)
{
	struct kcoll_call k;
	size_t at = 0;
	int err;

	kcoll_call_init(&k, coll, sendbuf, recvbuf, count, dtype, op, 0);
	err = kcoll_call_check(c, &k, opts);
	if (!err && narr)
		err = kcoll_call_arrays(c, &k, arr, narr);
	if (err)
		return err;
	if (coll == KCOLL_ALLREDUCE && kcoll_group_active())
		return kcoll_group_allreduce(c, sendbuf, recvbuf, count, dtype, op, opts);
	/* This rank's block: where an in-place caller left its own data. */
	if (coll == KCOLL_ALLGATHER || coll == KCOLL_REDUCE_SCATTER)
		at = (size_t)c->rank * count;
	else if (coll == KCOLL_ALLGATHERV || coll == KCOLL_REDUCE_SCATTERV)
		at = arr[1][c->rank];
	kcoll_call_in_place(&k, at, dtype);
	return kcoll_call_run(c, &k, opts);
}

int kcoll_broadcast(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, int root, const struct kcoll_coll_opts *opts)
{
	return kcoll_rooted(c, KCOLL_BROADCAST, sendbuf, recvbuf, count, dtype, 0, root, opts);
}

int kcoll_scatter(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		  int dtype, int root, const struct kcoll_coll_opts *opts)
{
	return kcoll_rooted(c, KCOLL_SCATTER, sendbuf, recvbuf, count, dtype, 0, root, opts);
}

int kcoll_gather(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 int dtype, int root, const struct kcoll_coll_opts *opts)
{
	return kcoll_rooted(c, KCOLL_GATHER, sendbuf, recvbuf, count, dtype, 0, root, opts);
}

int kcoll_reduce(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 int dtype, int op, int root, const struct kcoll_coll_opts *opts)
{
	return kcoll_rooted(c, KCOLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root, opts);
}

int kcoll_allreduce(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, int op, const struct kcoll_coll_opts *opts)
{
	return kcoll_unrooted(c, KCOLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, 0, dtype, op,
			      opts);
}

int kcoll_allgather(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, const struct kcoll_coll_opts *opts)
{
	return kcoll_unrooted(c, KCOLL_ALLGATHER, sendbuf, recvbuf, count, NULL, 0, dtype, 0,
			      opts);
}

int kcoll_reduce_scatter(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			 size_t count, int dtype, int op, const struct kcoll_coll_opts *opts)
{
	return kcoll_unrooted(c, KCOLL_REDUCE_SCATTER, sendbuf, recvbuf, count, NULL, 0, dtype,
			      op, opts);
}

int kcoll_alltoall(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		   int dtype, const struct kcoll_coll_opts *opts)
{
	return kcoll_unrooted(c, KCOLL_ALLTOALL, sendbuf, recvbuf, count, NULL, 0, dtype, 0,
			      opts);
}

int kcoll_barrier(struct kcoll_comm *c, const struct kcoll_coll_opts *opts)
{
	struct kcoll_call k;
	int err;

	kcoll_call_init(&k, KCOLL_BARRIER, NULL, NULL, 0, KCOLL_UINT8, 0, 0);
	err = kcoll_call_check(c, &k, opts);
	if (err)
		return err;
	return kcoll_call_run(c, &k, opts);
}

int kcoll_allgatherv(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
		     const size_t *counts, const size_t *displs, int dtype,
		     const struct kcoll_coll_opts *opts)
{
	const size_t *arr[2] = { counts, displs };

	return kcoll_unrooted(c, KCOLL_ALLGATHERV, sendbuf, recvbuf, 0, arr, 2, dtype, 0, opts);
}

int kcoll_reduce_scatterv(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			  const size_t *counts, const size_t *displs, int dtype, int op,
			  const struct kcoll_coll_opts *opts)
{
	const size_t *arr[2] = { counts, displs };

	return kcoll_unrooted(c, KCOLL_REDUCE_SCATTERV, sendbuf, recvbuf, 0, arr, 2, dtype, op,
			      opts);
}

int kcoll_alltoallv(struct kcoll_comm *c, const void *sendbuf, const size_t *send_counts,
		    const size_t *send_displs, void *recvbuf, const size_t *recv_counts,
		    const size_t *recv_displs, int dtype, const struct kcoll_coll_opts *opts)
{
	const size_t *arr[4] = { recv_counts, recv_displs, send_counts, send_displs };

	return kcoll_unrooted(c, KCOLL_ALLTOALLV, sendbuf, recvbuf, 0, arr, 4, dtype, 0, opts);
}
