// SPDX-License-Identifier: GPL-2.0-only
/*
 * A one-rank stand-in for libkcoll, so that kcoll-perf's whole run (options, buffers, every
 * collective, placements, modes, the check, the table, JSON and CSV) can be exercised on the
 * host without the module: with one rank every collective is a copy.  KCOLL_MOCK_CORRUPT=1
 * flips a bit of one result element per call, which must show up in #wrong.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

struct kcoll_handle { int fd; };
struct kcoll_comm { int rank; };
struct kcoll_buf { void *p; size_t len; };

static const size_t esize[] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };

const char *kcoll_version(void) { return "mock"; }
const char *kcoll_last_error(void) { return ""; }

int kcoll_open(const struct kcoll_open_opts *o, struct kcoll_handle **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void kcoll_close(struct kcoll_handle *h) { free(h); }

int kcoll_comm_init_env(struct kcoll_handle *h, const struct kcoll_comm_opts *o,
			struct kcoll_comm **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

int kcoll_comm_destroy(struct kcoll_comm *c) { free(c); return 0; }
int kcoll_comm_abort(struct kcoll_comm *c) { return 0; }
int kcoll_comm_rank(const struct kcoll_comm *c) { return 0; }
int kcoll_comm_size(const struct kcoll_comm *c) { return 1; }

int kcoll_send(struct kcoll_comm *c, const void *b, size_t l, int p,
	       const struct kcoll_p2p_opts *o) { return -EINVAL; }
int kcoll_recv(struct kcoll_comm *c, void *b, size_t l, int p, size_t *r,
	       const struct kcoll_p2p_opts *o) { return -EINVAL; }

int kcoll_wait(struct kcoll_comm *c, struct kcoll_request *req, int t, size_t *res)
{
	return req->state == 1 ? (req->state = 2, 0) : -ENOENT;
}

int kcoll_buf_create(struct kcoll_comm *c, size_t len, struct kcoll_buf **out)
{
	struct kcoll_buf *b = calloc(1, sizeof(*b));

	if (!b || !(b->p = aligned_alloc(4096, len))) {
		free(b);
		return -ENOMEM;
	}
	b->len = len;
	*out = b;
	return 0;
}

void *kcoll_buf_ptr(const struct kcoll_buf *b) { return b->p; }

int kcoll_buf_destroy(struct kcoll_buf *b)
{
	if (b)
		free(b->p);
	free(b);
	return 0;
}

/* One rank: the result is the input.  Completes at once, blocking or not. */
static int done(const void *src, void *dst, size_t count, int dtype,
		const struct kcoll_coll_opts *o)
{
	size_t n = count * esize[dtype];

	if (n && dst != src)
		memmove(dst, src, n);
	if (n && getenv("KCOLL_MOCK_CORRUPT"))
		((unsigned char *)dst)[n - 1] ^= 0x10;
	if (o && o->req) {
		o->req->id = 1;
		o->req->state = 1;
	}
	/* The kernel reports its choice; the mock's "auto" is the ring. */
	if (o && o->algo_used)
		*o->algo_used = o->algo ? o->algo : KCOLL_ALG_RING;
	return 0;
}

int kcoll_broadcast(struct kcoll_comm *c, const void *s, void *r, size_t n, int d, int root,
		    const struct kcoll_coll_opts *o) { return done(s, r, n, d, o); }
int kcoll_scatter(struct kcoll_comm *c, const void *s, void *r, size_t n, int d, int root,
		  const struct kcoll_coll_opts *o) { return done(s, r, n, d, o); }
int kcoll_gather(struct kcoll_comm *c, const void *s, void *r, size_t n, int d, int root,
		 const struct kcoll_coll_opts *o) { return done(s, r, n, d, o); }
int kcoll_reduce(struct kcoll_comm *c, const void *s, void *r, size_t n, int d, int op,
		 int root, const struct kcoll_coll_opts *o) { return done(s, r, n, d, o); }
int kcoll_allreduce(struct kcoll_comm *c, const void *s, void *r, size_t n, int d, int op,
		    const struct kcoll_coll_opts *o) { return done(s, r, n, d, o); }
int kcoll_allgather(struct kcoll_comm *c, const void *s, void *r, size_t n, int d,
		    const struct kcoll_coll_opts *o) { return done(s, r, n, d, o); }
int kcoll_reduce_scatter(struct kcoll_comm *c, const void *s, void *r, size_t n, int d,
			 int op, const struct kcoll_coll_opts *o) { return done(s, r, n, d, o); }
int kcoll_alltoall(struct kcoll_comm *c, const void *s, void *r, size_t n, int d,
		   const struct kcoll_coll_opts *o) { return done(s, r, n, d, o); }
int kcoll_barrier(struct kcoll_comm *c, const struct kcoll_coll_opts *o)
{
	return done(NULL, NULL, 0, 0, o);
}
int kcoll_allgatherv(struct kcoll_comm *c, const void *s, void *r, const size_t *counts,
		     const size_t *displs, int d, const struct kcoll_coll_opts *o)
{
	return done(s, (char *)r + displs[0] * esize[d], counts[0], d, o);
}
int kcoll_reduce_scatterv(struct kcoll_comm *c, const void *s, void *r, const size_t *counts,
			  const size_t *displs, int d, int op, const struct kcoll_coll_opts *o)
{
	return done((const char *)s + displs[0] * esize[d], r, counts[0], d, o);
}
int kcoll_alltoallv(struct kcoll_comm *c, const void *s, const size_t *sc, const size_t *sd,
		    void *r, const size_t *rc, const size_t *rd, int d,
		    const struct kcoll_coll_opts *o)
{
	return done(s, r, sc[0], d, o);
}
