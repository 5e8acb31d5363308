// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll communicators: KCOLL_IOC_COMM_* after the bootstrap, zero-copy buffers
 * (KCOLL_IOC_BUF_* and mmap) and point-to-point (KCOLL_IOC_P2P, KCOLL_IOC_WAIT).
 *
 * Every argument struct is zeroed before it is filled, so reserved fields and flags the
 * library does not set are 0 as the kernel demands, and @size is the size this library was
 * built with (see the conventions in the uAPI header).
 *
 * The control path (init, destroy, buffers) records a message for kcoll_last_error(); the
 * data path (send, receive, wait) only returns the errno, to stay cheap.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bootstrap.h"
#include "libkcoll_internal.h"

#define KCOLL_REQ_IDLE		0
#define KCOLL_REQ_INFLIGHT	1

/* The connect timeout for KCOLL_IOC_COMM_CREATE: option, else environment, else 0. */
int kcoll_connect_timeout_ms(unsigned long v, uint32_t *out)
{
	int err;

	if (!v) {
		err = kcoll_env_ulong("KCOLL_CONNECT_TIMEOUT_MS", 0, UINT32_MAX, &v, NULL);
		if (err)
			return err;
	}
	*out = (uint32_t)v;
	return 0;
}

/* The transport of the comm, as KCOLL_IOC_COMM_CREATE flags: option, else environment. */
static int kcoll_transport_flags(const struct kcoll_comm_opts *opts, uint32_t *out)
{
	static const uint32_t flags[] = {
		[KCOLL_CONFIG_TRANSPORT_AUTO] = 0,	/* the module's transport setting */
		[KCOLL_CONFIG_TRANSPORT_RDMA] = KCOLL_COMM_TRANSPORT_RDMA,
		[KCOLL_CONFIG_TRANSPORT_TCP] = KCOLL_COMM_TRANSPORT_TCP,
	};
	const char *v = OPTS_GET(opts, transport, NULL);
	const char *what = "kcoll_comm_opts.transport";
	int t;

	if (!v) {
		v = kcoll_getenv("KCOLL_TRANSPORT");
		what = "KCOLL_TRANSPORT";
	}
	t = v ? kcoll_transport_from_str(v) : KCOLL_CONFIG_TRANSPORT_AUTO;
	if (t < 0)
		return kcoll_fail(-EINVAL, "%s is \"%s\": must be auto, rdma or tcp", what, v);
	*out = flags[t];
	return 0;
}

/*
 * The message for a failed KCOLL_IOC_COMM_CREATE.  For the connection errors the kernel says
 * which rank it could not connect with (@failed; ~0U when it does not know): name its host.
 */
static int kcoll_create_error(int err, const struct kcoll_sockaddr *table, uint32_t failed,
			      int rank, int nranks, uint64_t comm_id, uint32_t timeout_ms,
			      uint32_t flags)
{
	char self[KCOLL_ADDRSTR_MAX], addr[KCOLL_ADDRSTR_MAX], peer[KCOLL_ADDRSTR_MAX + 32];
	const char *pre = "KCOLL_IOC_COMM_CREATE", *what;

	kcoll_sockaddr_str(&table[rank], self, sizeof(self));
	if (failed < (uint32_t)nranks && failed != (uint32_t)rank)
		snprintf(peer, sizeof(peer), "rank %u at %s", failed,
			 kcoll_sockaddr_str(&table[failed], addr, sizeof(addr)));
	else
		snprintf(peer, sizeof(peer), "a peer");
	switch (-err) {
	case ENOTTY:
		return kcoll_fail(err, "%s: the handle is not a kcoll device, or the loaded kcoll "
				  "module has no communicators", pre);
	case EADDRNOTAVAIL:
		/* What the address lacks depends on the transport the comm asked for. */
		if (flags & KCOLL_COMM_TRANSPORT_RDMA)
			what = "is not on an RDMA device kcoll may use (transport rdma;";
		else if (flags & KCOLL_COMM_TRANSPORT_TCP)
			what = "is not a non-loopback address of this network namespace "
			       "(transport tcp;";
		else
			what = "is neither on an RDMA device kcoll may use nor, for TCP, a "
			       "non-loopback address of this network namespace (";
		return kcoll_fail(err, "%s: rank %d's address %s %s set KCOLL_ADDR or "
				  "KCOLL_IFNAME)", pre, rank, self, what);
	case EPERM:
		return kcoll_fail(err, "%s: rank %d's address %s is on an RDMA device that the "
				  "devices= parameter of kcoll does not allow", pre, rank, self);
	case EHOSTUNREACH:
		return kcoll_fail(err, "%s: rank %d of %d: %s is unreachable over RDMA (the "
				  "address did not resolve)", pre, rank, nranks, peer);
	case EPROTONOSUPPORT:
		return kcoll_fail(err, "%s: rank %d of %d: %s speaks another kcoll protocol "
				  "version", pre, rank, nranks, peer);
	case ECONNREFUSED:
		return kcoll_fail(err, "%s: rank %d of %d: %s rejected the connection "
				  "(mismatched communicator, rank or device)", pre, rank, nranks,
				  peer);
	case ETIMEDOUT:
		return kcoll_fail(err, "%s: rank %d of %d: %s did not connect within %s%u ms", pre,
				  rank, nranks, peer, timeout_ms ? "" : "the module's default of ",
				  timeout_ms);
	case EEXIST:
		return kcoll_fail(err, "%s: communicator %016llx already has a rank %d on this "
				  "node", pre, (unsigned long long)comm_id, rank);
	default:
		return kcoll_fail(err, "%s (rank %d of %d at %s): %s", pre, rank, nranks, self,
				  strerror(-err));
	}
}

/*
 * The locality table for COMM_CREATE, or NULL: a table where some ranks know their host and
 * others do not would be refused, and says nothing the kernel could use anyway.
 */
static const struct kcoll_rank_locality *kcoll_loc_usable(const struct kcoll_rank_locality *loc,
							   int nranks)
{
	int r, known = 0;

	for (r = 0; loc && r < nranks; r++)
		known += loc[r].host != 0;
	return known == nranks ? loc : NULL;
}

int kcoll_comm_create(struct kcoll_handle *h, uint64_t comm_id, const unsigned char *secret,
		      int rank, int nranks, const struct kcoll_sockaddr *table,
		      const struct kcoll_rank_locality *loc, uint32_t timeout_ms,
		      uint32_t flags, struct kcoll_comm **out)
{
	struct kcoll_comm_create cc;
	struct kcoll_comm *c;
	int fd = kcoll_fd(h), ret;

	loc = kcoll_loc_usable(loc, nranks);
	c = calloc(1, sizeof(*c));
	/*
	 * The tables are kept: kcoll_comm_split() connects children to the same addresses and
	 * hands them the same locality.
	 */
	if (c)
		c->peers = calloc((size_t)nranks, sizeof(*table));
	if (c && loc)
		c->loc = calloc((size_t)nranks, sizeof(*loc));
	if (!c || !c->peers || (loc && !c->loc)) {
		if (c)
			free(c->peers);
		free(c);
		return kcoll_fail(-ENOMEM, "out of memory");
	}
	memcpy(c->peers, table, (size_t)nranks * sizeof(*table));
	if (loc)
		memcpy(c->loc, loc, (size_t)nranks * sizeof(*loc));
	pthread_mutex_init(&c->lock, NULL);
	memset(&cc, 0, sizeof(cc));
	cc.size = sizeof(cc);
	cc.flags = flags;
	cc.comm_id = comm_id;
	cc.rank = rank;
	cc.nranks = nranks;
	cc.peers = (uintptr_t)table;
	cc.peer_size = sizeof(*table);
	cc.timeout_ms = timeout_ms;
	memcpy(cc.secret, secret, sizeof(cc.secret));
	if (loc) {
		cc.locality = (uintptr_t)loc;
		cc.locality_size = sizeof(*loc);
	}
	ret = ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc);
	if (ret < 0 && errno == E2BIG && loc) {
		/* A module older than locality: the communicator works without it. */
		cc.size = KCOLL_COMM_CREATE_SIZE_VER1;
		ret = ioctl(fd, KCOLL_IOC_COMM_CREATE, &cc);
	}
	if (ret < 0) {
		int err = -errno;

		explicit_bzero(cc.secret, sizeof(cc.secret));
		free(c->loc);
		free(c->peers);
		free(c);
		return kcoll_create_error(err, table, cc.failed_rank, rank, nranks, comm_id,
					  timeout_ms, flags);
	}
	explicit_bzero(cc.secret, sizeof(cc.secret));
	c->h = h;
	c->fd = fd;
	c->handle = cc.handle;
	c->rank = rank;
	c->nranks = nranks;
	c->comm_id = comm_id;
	c->create_flags = flags;
	*out = c;
	return 0;
}

int kcoll_comm_new_check(struct kcoll_comm **out, const void *src, const char *fn,
			 const char *out_msg, const char *src_msg)
{
	int err;

	kcoll_clear_error();
	if (!out)
		return kcoll_fail(-EINVAL, "%s", out_msg);
	*out = NULL;
	err = kcoll_group_refuse(fn);
	if (err)
		return err;
	if (!src)
		return kcoll_fail(-EINVAL, "%s", src_msg);
	return 0;
}

/* Checks that need neither the network nor the kernel. */
static int kcoll_comm_init_check(struct kcoll_handle *h, const struct kcoll_comm_opts *opts,
				 struct kcoll_comm **out, uint32_t *timeout_ms, uint32_t *flags)
{
	int err;

	err = kcoll_comm_new_check(out, h, "kcoll_comm_init_rank/kcoll_comm_init_env",
				   "out is NULL", "the kcoll handle is NULL");
	if (err)
		return err;
	err = OPTS_VALID(opts, kcoll_comm_opts, transport, KCOLL_COMM_OPTS_SZ_VER0);
	if (err)
		return kcoll_fail(err, "bad kcoll_comm_opts");
	err = kcoll_transport_flags(opts, flags);
	if (err)
		return err;
	return kcoll_connect_timeout_ms(OPTS_GET(opts, connect_timeout_ms, 0), timeout_ms);
}

int kcoll_comm_init_rank(struct kcoll_handle *h, const struct kcoll_unique_id *id, int nranks,
			 int rank, const struct kcoll_comm_opts *opts, struct kcoll_comm **out)
{
	unsigned char secret[KCOLL_SECRET_LEN];
	struct kcoll_rank_locality *loc;
	struct kcoll_sockaddr *table;
	uint32_t timeout_ms, flags;
	uint64_t comm_id;
	int err;

	err = kcoll_comm_init_check(h, opts, out, &timeout_ms, &flags);
	if (err)
		return kcoll_err(err);
	err = kcoll_bootstrap_rank_loc(id, nranks, rank, opts, &comm_id, secret, &table, &loc);
	if (err)
		return err;
	err = kcoll_comm_create(h, comm_id, secret, rank, nranks, table, loc, timeout_ms, flags,
				out);
	explicit_bzero(secret, sizeof(secret));
	free(table);
	free(loc);
	return err;
}

int kcoll_comm_init_env(struct kcoll_handle *h, const struct kcoll_comm_opts *opts,
			struct kcoll_comm **out)
{
	unsigned char secret[KCOLL_SECRET_LEN];
	struct kcoll_rank_locality *loc;
	struct kcoll_sockaddr *table;
	struct kcoll_env_conf conf;
	uint32_t timeout_ms, flags;
	uint64_t comm_id;
	int err;

	err = kcoll_comm_init_check(h, opts, out, &timeout_ms, &flags);
	if (err)
		return kcoll_err(err);
	err = kcoll_bootstrap_env_loc(opts, &conf, &comm_id, secret, &table, &loc);
	if (err)
		return err;
	err = kcoll_comm_create(h, comm_id, secret, conf.rank, conf.nranks, table, loc,
				timeout_ms, flags, out);
	explicit_bzero(secret, sizeof(secret));
	free(table);
	free(loc);
	return err;
}

static int kcoll_comm_ioctl(struct kcoll_comm *c, unsigned long cmd, const char *what)
{
	struct kcoll_comm_arg a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.handle = c->handle;
	if (ioctl(c->fd, cmd, &a) < 0)
		return kcoll_fail(-errno, "%s of communicator %016llx: %s", what,
				  (unsigned long long)c->comm_id, strerror(errno));
	return 0;
}

int kcoll_comm_destroy(struct kcoll_comm *c)
{
	int err;

	kcoll_clear_error();
	if (!c)
		return 0;
	/* A recorded call may point at @c: it must outlive the group. */
	err = kcoll_group_refuse("kcoll_comm_destroy");
	if (err)
		return err;
	err = kcoll_comm_ioctl(c, KCOLL_IOC_COMM_DESTROY, "KCOLL_IOC_COMM_DESTROY");
	/* Buffers still mapped stay usable as memory; they forget the communicator. */
	pthread_mutex_lock(&c->lock);
	for (struct kcoll_buf *b = c->bufs; b; b = b->next)
		b->c = NULL;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_destroy(&c->lock);
	free(c->loc);
	free(c->peers);
	free(c);
	return kcoll_err(err);
}

int kcoll_comm_abort(struct kcoll_comm *c)
{
	kcoll_clear_error();
	if (!c)
		return kcoll_fail(-EINVAL, "the communicator is NULL");
	return kcoll_comm_ioctl(c, KCOLL_IOC_COMM_ABORT, "KCOLL_IOC_COMM_ABORT");
}

int kcoll_comm_rank(const struct kcoll_comm *c)
{
	return c ? c->rank : kcoll_err(-EINVAL);
}

int kcoll_comm_size(const struct kcoll_comm *c)
{
	return c ? c->nranks : kcoll_err(-EINVAL);
}

/* No communicator has id 0: the kernel refuses it at creation. */
uint64_t kcoll_comm_id(const struct kcoll_comm *c)
{
	if (!c) {
		errno = EINVAL;
		return 0;
	}
	return c->comm_id;
}

int kcoll_comm_query(struct kcoll_comm *c, struct kcoll_comm_query *q)
{
	if (!c || !q)
		return kcoll_err(-EINVAL);
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = c->handle;
	if (ioctl(c->fd, KCOLL_IOC_COMM_QUERY, q) < 0)
		return kcoll_err(-errno);
	return 0;
}

/* Point-to-point ---------------------------------------------------------------------- */

int kcoll_p2p_submit(struct kcoll_comm *c, struct kcoll_p2p *p, size_t *received,
		     struct kcoll_request *req)
{
	if (ioctl(c->fd, KCOLL_IOC_P2P, p) < 0)
		return kcoll_err(-errno);
	if (received)
		*received = p->result;
	if (req) {
		req->id = p->req;
		req->comm = c->handle;
		req->state = KCOLL_REQ_INFLIGHT;
	}
	return 0;
}

static int kcoll_p2p(struct kcoll_comm *c, uint32_t flags, uint64_t addr, size_t len,
		     uint32_t buf, int peer, const struct kcoll_p2p_opts *opts,
		     size_t *received, struct kcoll_request *req)
{
	struct kcoll_p2p p;
	int err;

	if (!c)
		return kcoll_group_fail(kcoll_err(-EINVAL), "point-to-point call");
	err = OPTS_VALID(opts, kcoll_p2p_opts, flags, KCOLL_P2P_OPTS_SZ_VER0);
	if (err)
		return kcoll_group_fail(kcoll_err(err), "point-to-point call");
	if (OPTS_GET(opts, flags, 0) || peer < 0 || peer >= c->nranks)
		return kcoll_group_fail(kcoll_err(-EINVAL), "point-to-point call");
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.flags = flags;
	p.comm = c->handle;
	p.peer = peer;
	p.addr = addr;
	p.len = len;
	p.buf = buf;
	p.timeout_ms = OPTS_GET(opts, timeout_ms, 0);
	if (kcoll_group_active()) {
		/* Non-blocking calls join the group; blocking ones cannot wait in it. */
		if (!(flags & KCOLL_P2P_NONBLOCK))
			return kcoll_group_refuse(flags & KCOLL_P2P_RECV ? "kcoll_recv"
									 : "kcoll_send");
		return kcoll_group_p2p(c, &p, req);
	}
	return kcoll_p2p_submit(c, &p, received, req);
}

/* A user pointer: NULL only for an empty message. */
static int kcoll_p2p_user(struct kcoll_comm *c, uint32_t flags, const void *buf, size_t len,
			  int peer, const struct kcoll_p2p_opts *opts, size_t *received,
			  struct kcoll_request *req)
{
	if (!buf && len)
		return kcoll_group_fail(kcoll_err(-EINVAL), "point-to-point call");
	return kcoll_p2p(c, flags, (uintptr_t)buf, len, 0, peer, opts, received, req);
}

/* [offset, offset + len) of a buffer of this communicator. */
static int kcoll_p2p_buf(struct kcoll_comm *c, uint32_t flags, struct kcoll_buf *b,
			 size_t offset, size_t len, int peer, const struct kcoll_p2p_opts *opts,
			 size_t *received, struct kcoll_request *req)
{
	if (!c || !b || b->fd != c->fd || b->comm != c->handle || offset > b->len ||
	    len > b->len - offset)
		return kcoll_group_fail(kcoll_err(-EINVAL), "point-to-point call");
	return kcoll_p2p(c, flags | KCOLL_P2P_BUF, offset, len, b->handle, peer, opts,
			 received, req);
}

int kcoll_send(struct kcoll_comm *c, const void *buf, size_t len, int peer,
	       const struct kcoll_p2p_opts *opts)
{
	return kcoll_p2p_user(c, KCOLL_P2P_SEND, buf, len, peer, opts, NULL, NULL);
}

int kcoll_recv(struct kcoll_comm *c, void *buf, size_t len, int peer, size_t *received,
	       const struct kcoll_p2p_opts *opts)
{
	return kcoll_p2p_user(c, KCOLL_P2P_RECV, buf, len, peer, opts, received, NULL);
}

int kcoll_isend(struct kcoll_comm *c, const void *buf, size_t len, int peer,
		const struct kcoll_p2p_opts *opts, struct kcoll_request *req)
{
	if (!req)
		return kcoll_group_fail(kcoll_err(-EINVAL), "point-to-point call");
	return kcoll_p2p_user(c, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, buf, len, peer, opts,
			      NULL, req);
}

int kcoll_irecv(struct kcoll_comm *c, void *buf, size_t len, int peer,
		const struct kcoll_p2p_opts *opts, struct kcoll_request *req)
{
	if (!req)
		return kcoll_group_fail(kcoll_err(-EINVAL), "point-to-point call");
	return kcoll_p2p_user(c, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, buf, len, peer, opts,
			      NULL, req);
}

int kcoll_send_buf(struct kcoll_comm *c, struct kcoll_buf *b, size_t offset, size_t len,
		   int peer, const struct kcoll_p2p_opts *opts)
{
	return kcoll_p2p_buf(c, KCOLL_P2P_SEND, b, offset, len, peer, opts, NULL, NULL);
}

int kcoll_recv_buf(struct kcoll_comm *c, struct kcoll_buf *b, size_t offset, size_t len,
		   int peer, size_t *received, const struct kcoll_p2p_opts *opts)
{
	return kcoll_p2p_buf(c, KCOLL_P2P_RECV, b, offset, len, peer, opts, received, NULL);
}

int kcoll_isend_buf(struct kcoll_comm *c, struct kcoll_buf *b, size_t offset, size_t len,
		    int peer, const struct kcoll_p2p_opts *opts, struct kcoll_request *req)
{
	if (!req)
		return kcoll_group_fail(kcoll_err(-EINVAL), "point-to-point call");
	return kcoll_p2p_buf(c, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, b, offset, len, peer,
			     opts, NULL, req);
}

int kcoll_irecv_buf(struct kcoll_comm *c, struct kcoll_buf *b, size_t offset, size_t len,
		    int peer, const struct kcoll_p2p_opts *opts, struct kcoll_request *req)
{
	if (!req)
		return kcoll_group_fail(kcoll_err(-EINVAL), "point-to-point call");
	return kcoll_p2p_buf(c, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, b, offset, len, peer,
			     opts, NULL, req);
}

int kcoll_wait(struct kcoll_comm *c, struct kcoll_request *req, int timeout_ms,
	       size_t *result)
{
	struct kcoll_wait w;
	int err;

	err = kcoll_group_refuse("kcoll_wait");
	if (err)
		return err;
	if (!c || !req || req->state != KCOLL_REQ_INFLIGHT || req->comm != c->handle)
		return kcoll_err(-EINVAL);
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.comm = c->handle;
	w.timeout_ms = timeout_ms < 0 ? ~0U : (uint32_t)timeout_ms;
	w.req = req->id;
	if (ioctl(c->fd, KCOLL_IOC_WAIT, &w) < 0) {
		err = -errno;
		/* Still in flight, or interrupted: the request stays valid. */
		if (err != -EAGAIN && err != -EINTR)
			req->state = KCOLL_REQ_IDLE;
		return kcoll_err(err);
	}
	req->state = KCOLL_REQ_IDLE;
	if (result)
		*result = w.result;
	if (w.status > 0 || w.status < -4095)
		return kcoll_err(-EIO);
	return kcoll_err(w.status);
}

int kcoll_test(struct kcoll_comm *c, struct kcoll_request *req, int *done, size_t *result)
{
	int err;

	err = kcoll_group_refuse("kcoll_test");
	if (err)
		return err;
	if (!done)
		return kcoll_err(-EINVAL);
	*done = 0;
	err = kcoll_wait(c, req, 0, result);
	if (err == -EAGAIN)
		return 0;
	if (req && req->state == KCOLL_REQ_IDLE && err != -EINVAL)
		*done = 1;
	return err;
}

/* Buffers ---------------------------------------------------------------------------------- */

static int kcoll_buf_ioctl_destroy(int fd, uint32_t comm, uint32_t handle)
{
	struct kcoll_buf_arg a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.comm = comm;
	a.handle = handle;
	return ioctl(fd, KCOLL_IOC_BUF_DESTROY, &a) < 0 ? -errno : 0;
}

int kcoll_buf_create(struct kcoll_comm *c, size_t len, struct kcoll_buf **out)
{
	long page = sysconf(_SC_PAGESIZE);
	struct kcoll_buf_create bc;
	struct kcoll_buf *b;
	int err;

	kcoll_clear_error();
	if (!out)
		return kcoll_fail(-EINVAL, "out is NULL");
	*out = NULL;
	err = kcoll_group_refuse("kcoll_buf_create");
	if (err)
		return err;
	if (!c || !len || page <= 0 || len > SIZE_MAX - (size_t)page ||
	    (uint64_t)len > INT64_MAX)
		return kcoll_fail(-EINVAL, "kcoll_buf_create: bad communicator or length %zu",
				  len);
	b = calloc(1, sizeof(*b));
	if (!b)
		return kcoll_fail(-ENOMEM, "out of memory");
	memset(&bc, 0, sizeof(bc));
	bc.size = sizeof(bc);
	bc.comm = c->handle;
	bc.length = len;
	if (ioctl(c->fd, KCOLL_IOC_BUF_CREATE, &bc) < 0) {
		err = -errno;
		free(b);
		if (err == -ENOMEM)
			return kcoll_fail(err, "KCOLL_IOC_BUF_CREATE of %zu bytes: out of memory or "
					  "over RLIMIT_MEMLOCK (ulimit -l)", len);
		return kcoll_fail(err, "KCOLL_IOC_BUF_CREATE of %zu bytes: %s", len,
				  strerror(-err));
	}
	b->fd = c->fd;
	b->comm = c->handle;
	b->handle = bc.handle;
	b->len = len;
	b->map_len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	b->mmap_offset = bc.mmap_offset;
	if (bc.mmap_offset > INT64_MAX) {
		err = -EOVERFLOW;
		errno = EOVERFLOW;
	} else {
		b->ptr = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
			      (off_t)bc.mmap_offset);
		err = b->ptr == MAP_FAILED ? -errno : 0;
	}
	if (err) {
		kcoll_buf_ioctl_destroy(c->fd, c->handle, bc.handle);
		free(b);
		return kcoll_fail(err, "mmap of a %zu-byte kcoll buffer: %s", len,
				  strerror(-err));
	}
	b->c = c;
	pthread_mutex_lock(&c->lock);
	b->next = c->bufs;
	c->bufs = b;
	pthread_mutex_unlock(&c->lock);
	*out = b;
	return 0;
}

struct kcoll_buf *kcoll_buf_find(struct kcoll_comm *c, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;
	struct kcoll_buf *b;

	if (!p)
		return NULL;
	pthread_mutex_lock(&c->lock);
	for (b = c->bufs; b; b = b->next) {
		uintptr_t start = (uintptr_t)b->ptr;

		/* Strictly inside: one past the end may be the next buffer's mapping. */
		if (a >= start && a - start < b->len && len <= b->len - (a - start))
			break;
	}
	pthread_mutex_unlock(&c->lock);
	return b;
}

static void kcoll_buf_unlink(struct kcoll_buf *b)
{
	struct kcoll_buf **pp;

	if (!b->c)
		return;
	pthread_mutex_lock(&b->c->lock);
	for (pp = &b->c->bufs; *pp; pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	}
	pthread_mutex_unlock(&b->c->lock);
	b->c = NULL;
}

void *kcoll_buf_ptr(const struct kcoll_buf *b)
{
	return b ? b->ptr : NULL;
}

size_t kcoll_buf_len(const struct kcoll_buf *b)
{
	return b ? b->len : 0;
}

/* kcoll_buf_create() refused offsets above INT64_MAX: a valid one is never negative. */
int64_t kcoll_buf_offset(const struct kcoll_buf *b)
{
	return b ? (int64_t)b->mmap_offset : kcoll_err(-EINVAL);
}

int kcoll_buf_destroy(struct kcoll_buf *b)
{
	int err;

	kcoll_clear_error();
	if (!b)
		return 0;
	err = kcoll_group_refuse("kcoll_buf_destroy");
	if (err)
		return err;
	/* After its communicator's destroy the kernel has dropped the buffer already. */
	err = b->c ? kcoll_buf_ioctl_destroy(b->fd, b->comm, b->handle) : 0;
	/* In use by an operation in flight: nothing changes, the caller may try again. */
	if (err == -EBUSY)
		return kcoll_fail(err, "KCOLL_IOC_BUF_DESTROY: the buffer is in use");
	kcoll_buf_unlink(b);
	munmap(b->ptr, b->map_len);
	free(b);
	if (err)
		return kcoll_fail(err, "KCOLL_IOC_BUF_DESTROY: %s", strerror(-err));
	return 0;
}
