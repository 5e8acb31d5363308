// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stand-in for libkcoll.so.0 under the Python package (python/kcoll/), loaded through
 * KCOLL_LIB by test_pytorch.py so that the ctypes layer and the PyTorch backend run on the host
 * without the module.
 *
 * It plays rank R of N (kcoll_mock_world()) in a world where every other rank holds exactly
 * the data this one does: an all-reduce SUM multiplies by N, an all-gather repeats the input N
 * times, an all-to-all hands back block R of every rank, and so on.  That is enough to check
 * how the Python layer lays out buffers, counts and split sizes.  Point-to-point is a
 * loopback FIFO (a send is what the next receive gets; a non-blocking receive waits for it).
 * Every call is recorded (kcoll_mock_last()); kcoll_mock_fail() makes the next call fail
 * with a chosen errno and kcoll_last_error().
 * FP16/BF16 reductions only copy (the tests use them with MIN/MAX).
 *
 * kcoll_fd() is a pipe that is readable exactly while a posted request could complete (the
 * level-triggered POLLIN of /dev/kcoll).  kcoll_comm_abort() fails every pending request.
 * Groups run their calls at once but count them (kcoll_mock_groups()); receives of a group
 * take their bytes at kcoll_group_end(), and a call other than allreduce/isend/irecv in a
 * group fails it, as libkcoll does.  A non-blocking collective (opts->req) runs at once; its
 * request completes when waited for, except while kcoll_mock_hold(1) keeps every collective
 * in flight; kcoll_mock_fail_wait() fails the next collective's wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkcoll.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

struct kcoll_handle { int fd; };
struct kcoll_comm { int rank, nranks; };

/* What the last call was given; read by the tests through ctypes. */
struct kcoll_mock_call {
	char fn[32];
	uint64_t count;
	int dtype, op, root, peer;
	unsigned int timeout_ms;
	int nranks, rank;
	unsigned int bootstrap_timeout_ms;
	unsigned char uid[KCOLL_UNIQUE_ID_BYTES];
	uint64_t counts[8], displs[8], rcounts[8], rdispls[8];
};

static struct kcoll_mock_call last, last_post;
/* Waits run in the backend's completion threads: the FIFO and the request table are shared. */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int world_rank, world_size = 1;
static int fail_err;
static char fail_msg[256], errmsg[256];
static unsigned int uid_seq, uid_timeout;

static unsigned char fifo[1 << 16];
static size_t fifo_len;
static int aborted;

/* Groups: runs, calls in the last group run, depth now; the error the next end returns. */
static struct { int runs, ops, depth, cur_ops; } groups;
static int group_err, group_fail_err;
static struct { void *buf; size_t len; } grecv[64];
static int ngrecv;

static void update_fd(void);
static int split_nranks, split_rank;
static struct { void *buf; size_t len; int used, coll; } pending[64];
/* Non-blocking collectives: held in flight while coll_hold; the next wait's injected error. */
static int coll_hold, wait_fail_err;
static char wait_fail_msg[256];


void kcoll_mock_world(int rank, int nranks) { world_rank = rank; world_size = nranks; }
const struct kcoll_mock_call *kcoll_mock_last(void) { return &last; }
const void *kcoll_mock_groups(void) { return &groups; }
void kcoll_mock_fail_group_end(int err) { group_fail_err = err; }
void kcoll_mock_fail_wait(int err, const char *msg)
{
	wait_fail_err = err;
	snprintf(wait_fail_msg, sizeof(wait_fail_msg), "%s", msg ? msg : "");
}
static void update_fd(void);
void kcoll_mock_hold(int hold)
{
	coll_hold = hold;
	update_fd();
}

/* Between tests: no message in flight, no request pending, nothing aborted. */
void kcoll_mock_reset(void)
{
	pthread_mutex_lock(&lock);
	fifo_len = 0;
	aborted = 0;
	ngrecv = 0;
	group_err = group_fail_err = 0;
	coll_hold = wait_fail_err = 0;
	split_nranks = split_rank = 0;
	memset(pending, 0, sizeof(pending));
	update_fd();
	pthread_mutex_unlock(&lock);
}
/* The last isend/irecv as posted (a completion thread's kcoll_wait() comes later). */
const struct kcoll_mock_call *kcoll_mock_last_post(void) { return &last_post; }

/* sizeof() of the option structs, checked against the ctypes declarations. */
size_t kcoll_mock_sizeof(const char *name)
{
	if (!strcmp(name, "uid_opts"))
		return sizeof(struct kcoll_uid_opts);
	if (!strcmp(name, "comm_opts"))
		return sizeof(struct kcoll_comm_opts);
	if (!strcmp(name, "coll_opts"))
		return sizeof(struct kcoll_coll_opts);
	if (!strcmp(name, "p2p_opts"))
		return sizeof(struct kcoll_p2p_opts);
	if (!strcmp(name, "unique_id"))
		return sizeof(struct kcoll_unique_id);
	return 0;
}

void kcoll_mock_fail(int err, const char *msg)
{
	fail_err = err;
	snprintf(fail_msg, sizeof(fail_msg), "%s", msg ? msg : "");
}

/* Start recording a call; a pending injected failure fails it. */
static int enter(const char *fn)
{
	memset(&last, 0, sizeof(last));
	snprintf(last.fn, sizeof(last.fn), "%s", fn);
	errmsg[0] = '\0';
	if (fail_err) {
		int err = fail_err;

		fail_err = 0;
		snprintf(errmsg, sizeof(errmsg), "%s", fail_msg);
		errno = err;
		return -err;
	}
	return 0;
}

const char *kcoll_version(void) { return "mock"; }
const char *kcoll_last_error(void) { return errmsg; }
size_t kcoll_datatype_size(int dtype)
{
	static const size_t esize[KCOLL_NUM_DATATYPES] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };

	return dtype >= 0 && dtype < KCOLL_NUM_DATATYPES ? esize[dtype] : 0;
}

int kcoll_open(const struct kcoll_open_opts *o, struct kcoll_handle **out)
{
	int err = enter("open");

	if (err)
		return err;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void kcoll_close(struct kcoll_handle *h) { free(h); }

int kcoll_get_unique_id(struct kcoll_unique_id *id, const struct kcoll_uid_opts *o)
{
	int err = enter("get_unique_id");

	if (err)
		return err;
	memset(id, 0, sizeof(*id));
	snprintf((char *)id->internal, sizeof(id->internal), "mock-uid-%u", ++uid_seq);
	uid_timeout = last.timeout_ms = o ? o->timeout_ms : 0;
	return 0;
}

/* timeout_ms of the last kcoll_get_unique_id() (kcoll_mock_last() moves on). */
unsigned int kcoll_mock_uid_timeout(void) { return uid_timeout; }

int kcoll_comm_init_rank(struct kcoll_handle *h, const struct kcoll_unique_id *id, int nranks,
			 int rank, const struct kcoll_comm_opts *o, struct kcoll_comm **out)
{
	int err = enter("comm_init_rank");

	if (err)
		return err;
	memcpy(last.uid, id->internal, sizeof(last.uid));
	last.nranks = nranks;
	last.rank = rank;
	last.bootstrap_timeout_ms = o ? o->bootstrap_timeout_ms : 0;
	if (nranks < 1 || rank < 0 || rank >= nranks) {
		snprintf(errmsg, sizeof(errmsg), "rank %d of %d", rank, nranks);
		return -EINVAL;
	}
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->rank = rank;
	(*out)->nranks = nranks;
	world_rank = rank;
	world_size = nranks;
	aborted = 0;
	return 0;
}

int kcoll_comm_destroy(struct kcoll_comm *c) { enter("comm_destroy"); free(c); return 0; }
int kcoll_comm_abort(struct kcoll_comm *c)
{
	int err = enter("comm_abort");

	pthread_mutex_lock(&lock);
	aborted = 1;
	update_fd();
	pthread_mutex_unlock(&lock);
	return err;
}
int kcoll_comm_rank(const struct kcoll_comm *c) { return c->rank; }
int kcoll_comm_size(const struct kcoll_comm *c) { return c->nranks; }

static int post(struct kcoll_request *req, void *rbuf, size_t len, int coll);

/* A non-blocking collective ran at once; its request completes when waited for (not held). */
static int coll_done(const struct kcoll_coll_opts *o, int err)
{
	if (err || !o || !o->req)
		return err;
	return post(o->req, NULL, 0, 1);
}

static int coll_enter(const char *fn, size_t count, int dtype, int op, int root,
		      const struct kcoll_coll_opts *o)
{
	int err = enter(fn);

	last.count = count;
	last.dtype = dtype;
	last.op = op;
	last.root = root;
	last.timeout_ms = o ? o->timeout_ms : 0;
	if (err)
		return err;
	if (groups.depth) {
		groups.cur_ops++;
		if (strcmp(fn, "allreduce")) {
			snprintf(errmsg, sizeof(errmsg), "%s: not allowed in a group", fn);
			group_err = -EINVAL;
			return -EINVAL;
		}
	}
	if (dtype < 0 || dtype >= KCOLL_NUM_DATATYPES || op < 0 || op >= KCOLL_NUM_RED_OPS)
		return -EINVAL;
	if (op == KCOLL_AVG && dtype != KCOLL_FP16 && dtype != KCOLL_BF16 &&
	    dtype != KCOLL_FP32 && dtype != KCOLL_FP64) {
		snprintf(errmsg, sizeof(errmsg), "avg is for floating point only");
		return -EINVAL;
	}
	return 0;
}

/* N identical contributions: SUM is x * N, PROD x ^ N, MIN, MAX and AVG are x. */
#define MOCK_REDUCE(T)								\
	do {									\
		const T *s = sendbuf;						\
		T *r = recvbuf;							\
		for (size_t i = 0; i < count; i++) {				\
			T v = s[i], a = v;					\
			for (int k = 1; k < world_size; k++) {			\
				if (op == KCOLL_SUM)				\
					a += v;					\
				else if (op == KCOLL_PROD)			\
					a *= v;					\
			}							\
			r[i] = a;						\
		}								\
	} while (0)

static void reduce(const void *sendbuf, void *recvbuf, size_t count, int dtype, int op)
{
	switch (dtype) {
	case KCOLL_INT8: MOCK_REDUCE(int8_t); break;
	case KCOLL_UINT8: MOCK_REDUCE(uint8_t); break;
	case KCOLL_INT32: MOCK_REDUCE(int32_t); break;
	case KCOLL_UINT32: MOCK_REDUCE(uint32_t); break;
	case KCOLL_INT64: MOCK_REDUCE(int64_t); break;
	case KCOLL_UINT64: MOCK_REDUCE(uint64_t); break;
	case KCOLL_FP32: MOCK_REDUCE(float); break;
	case KCOLL_FP64: MOCK_REDUCE(double); break;
	default: memmove(recvbuf, sendbuf, count * kcoll_datatype_size(dtype)); break;
	}
}

int kcoll_allreduce(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, int op, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("allreduce", count, dtype, op, 0, o);

	if (!err)
		reduce(sendbuf, recvbuf, count, dtype, op);
	return coll_done(o, err);
}

int kcoll_reduce(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 int dtype, int op, int root, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("reduce", count, dtype, op, root, o);

	if (!err && c->rank == root)
		reduce(sendbuf, recvbuf, count, dtype, op);
	return coll_done(o, err);
}

int kcoll_broadcast(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, int root, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("broadcast", count, dtype, 0, root, o);

	if (!err)
		memmove(recvbuf, sendbuf, count * kcoll_datatype_size(dtype));
	return coll_done(o, err);
}

int kcoll_allgather(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("allgather", count, dtype, 0, 0, o);
	size_t n = count * kcoll_datatype_size(dtype);

	for (int k = 0; !err && k < c->nranks; k++)
		memmove((char *)recvbuf + k * n, sendbuf, n);
	return coll_done(o, err);
}

int kcoll_gather(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 int dtype, int root, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("gather", count, dtype, 0, root, o);
	size_t n = count * kcoll_datatype_size(dtype);

	for (int k = 0; !err && c->rank == root && k < c->nranks; k++)
		memmove((char *)recvbuf + k * n, sendbuf, n);
	return coll_done(o, err);
}

int kcoll_scatter(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		  int dtype, int root, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("scatter", count, dtype, 0, root, o);
	size_t n = count * kcoll_datatype_size(dtype);

	/* The root keeps its own block; the others cannot see the root's buffer here. */
	if (!err && c->rank == root)
		memmove(recvbuf, (const char *)sendbuf + c->rank * n, n);
	return coll_done(o, err);
}

int kcoll_reduce_scatter(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			 int dtype, int op, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("reduce_scatter", count, dtype, op, 0, o);

	if (!err)
		reduce((const char *)sendbuf + c->rank * count * kcoll_datatype_size(dtype),
		       recvbuf, count, dtype, op);
	return coll_done(o, err);
}

int kcoll_alltoall(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		   int dtype, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("alltoall", count, dtype, 0, 0, o);
	size_t n = count * kcoll_datatype_size(dtype);

	for (int k = 0; !err && k < c->nranks; k++)
		memmove((char *)recvbuf + k * n, (const char *)sendbuf + c->rank * n, n);
	return coll_done(o, err);
}

int kcoll_alltoallv(struct kcoll_comm *c, const void *sendbuf, const size_t *scounts,
		    const size_t *sdispls, void *recvbuf, const size_t *rcounts,
		    const size_t *rdispls, int dtype, const struct kcoll_coll_opts *o)
{
	int err = coll_enter("alltoallv", 0, dtype, 0, 0, o);
	size_t e = kcoll_datatype_size(dtype), me = c->rank;

	for (int k = 0; k < c->nranks && k < 8; k++) {
		last.counts[k] = scounts[k];
		last.displs[k] = sdispls[k];
		last.rcounts[k] = rcounts[k];
		last.rdispls[k] = rdispls[k];
	}
	/* Rank k sends this rank what this rank sends itself: block me of the send side. */
	for (int k = 0; !err && k < c->nranks; k++) {
		if (rcounts[k] != scounts[me]) {
			snprintf(errmsg, sizeof(errmsg), "rank %d sends %zu, rank %zu expects %zu",
				 k, scounts[me], me, rcounts[k]);
			return -EPROTO;
		}
		memmove((char *)recvbuf + rdispls[k] * e, (const char *)sendbuf + sdispls[me] * e,
			rcounts[k] * e);
	}
	return coll_done(o, err);
}

int kcoll_barrier(struct kcoll_comm *c, const struct kcoll_coll_opts *o)
{
	return coll_done(o, coll_enter("barrier", 0, 0, 0, 0, o));
}

int kcoll_send(struct kcoll_comm *c, const void *buf, size_t len, int peer,
	       const struct kcoll_p2p_opts *o)
{
	int err = enter("send");

	last.count = len;
	last.peer = peer;
	last.timeout_ms = o ? o->timeout_ms : 0;
	if (err)
		return err;
	if (len > sizeof(fifo) - fifo_len)
		return -ENOBUFS;
	memcpy(fifo + fifo_len, buf, len);
	fifo_len += len;
	update_fd();
	return 0;
}

int kcoll_recv(struct kcoll_comm *c, void *buf, size_t len, int peer, size_t *received,
	       const struct kcoll_p2p_opts *o)
{
	int err = enter("recv");

	last.count = len;
	last.peer = peer;
	last.timeout_ms = o ? o->timeout_ms : 0;
	if (err)
		return err;
	if (len > fifo_len) {
		snprintf(errmsg, sizeof(errmsg), "nothing to receive");
		return -ETIMEDOUT;
	}
	memcpy(buf, fifo, len);
	memmove(fifo, fifo + len, fifo_len - len);
	fifo_len -= len;
	if (received)
		*received = len;
	return 0;
}

/*
 * Non-blocking point-to-point: an isend goes into the FIFO at once; an irecv takes its
 * bytes when it is waited for (-EAGAIN while the FIFO has too few, as a real request still
 * in flight).  Request ids index a small table of posted receives.
 */
static uint64_t req_seq;

static int post(struct kcoll_request *req, void *rbuf, size_t len, int coll)
{
	unsigned int slot;

	pthread_mutex_lock(&lock);
	if (groups.depth) {
		/* Completed by the group's end: the request stays idle. */
		groups.cur_ops++;
		if (rbuf && ngrecv < 64) {
			grecv[ngrecv].buf = rbuf;
			grecv[ngrecv++].len = len;
		}
		last_post = last;
		pthread_mutex_unlock(&lock);
		memset(req, 0, sizeof(*req));
		return 0;
	}
	slot = req_seq++ % 64;
	pending[slot].buf = rbuf;
	pending[slot].len = len;
	pending[slot].used = 1;
	pending[slot].coll = coll;
	if (!coll)
		last_post = last;
	update_fd();
	pthread_mutex_unlock(&lock);
	req->id = slot;
	req->comm = 1;
	req->state = 1;
	return 0;
}

int kcoll_isend(struct kcoll_comm *c, const void *buf, size_t len, int peer,
		const struct kcoll_p2p_opts *o, struct kcoll_request *req)
{
	int err;

	pthread_mutex_lock(&lock);
	err = kcoll_send(c, buf, len, peer, o);
	snprintf(last.fn, sizeof(last.fn), "isend");
	pthread_mutex_unlock(&lock);
	return err ? err : post(req, NULL, len, 0);
}

int kcoll_irecv(struct kcoll_comm *c, void *buf, size_t len, int peer,
		const struct kcoll_p2p_opts *o, struct kcoll_request *req)
{
	int err;

	pthread_mutex_lock(&lock);
	err = enter("irecv");
	last.count = len;
	last.peer = peer;
	last.timeout_ms = o ? o->timeout_ms : 0;
	pthread_mutex_unlock(&lock);
	return err ? err : post(req, buf, len, 0);
}

/* Polls the FIFO for a receive, up to @timeout_ms (negative: 10 s), then -EAGAIN. */
int kcoll_wait(struct kcoll_comm *c, struct kcoll_request *req, int timeout_ms,
	       size_t *result)
{
	unsigned int slot = req->id % 64;
	int ms = timeout_ms < 0 ? 10000 : timeout_ms;

	if (req->state != 1)
		return -EINVAL;
	for (;;) {
		pthread_mutex_lock(&lock);
		if (!pending[slot].used) {
			pthread_mutex_unlock(&lock);
			return -EINVAL;
		}
		if (wait_fail_err && pending[slot].coll && !coll_hold) {
			int err = wait_fail_err;

			wait_fail_err = 0;
			pending[slot].used = 0;
			update_fd();
			pthread_mutex_unlock(&lock);
			snprintf(errmsg, sizeof(errmsg), "%s", wait_fail_msg);
			return -err;
		}
		if (aborted) {
			pending[slot].used = 0;
			update_fd();
			pthread_mutex_unlock(&lock);
			snprintf(errmsg, sizeof(errmsg), "communicator aborted");
			return -ECONNABORTED;
		}
		if (!(pending[slot].coll && coll_hold) &&
		    (!pending[slot].buf || pending[slot].len <= fifo_len))
			break;
		pthread_mutex_unlock(&lock);
		if (ms-- <= 0)
			return -EAGAIN;
		usleep(1000);
	}
	if (pending[slot].buf) {
		memcpy(pending[slot].buf, fifo, pending[slot].len);
		memmove(fifo, fifo + pending[slot].len, fifo_len - pending[slot].len);
		fifo_len -= pending[slot].len;
	}
	pending[slot].used = 0;
	if (result)
		*result = pending[slot].len;
	update_fd();
	pthread_mutex_unlock(&lock);
	req->state = 0;
	return 0;
}

/* The poll file: one byte in the pipe while some posted request could complete. */
static int pipe_fd[2] = { -1, -1 }, signaled;

static void update_fd(void)
{
	int ready = 0;
	char b = 0;

	pthread_mutex_lock(&lock);
	if (pipe_fd[0] < 0 && pipe2(pipe_fd, O_NONBLOCK | O_CLOEXEC))
		abort();
	for (int i = 0; i < 64 && !ready; i++)
		ready = pending[i].used &&
			(aborted || (!(pending[i].coll && coll_hold) &&
				     (!pending[i].buf || pending[i].len <= fifo_len)));
	if (ready && !signaled && write(pipe_fd[1], &b, 1) == 1)
		signaled = 1;
	else if (!ready && signaled && read(pipe_fd[0], &b, 1) == 1)
		signaled = 0;
	pthread_mutex_unlock(&lock);
}

int kcoll_fd(const struct kcoll_handle *h)
{
	update_fd();
	return pipe_fd[0];
}

/* The next split's child: @nranks ranks, this one @rank (0 ranks: the parent's size). */
void kcoll_mock_split(int nranks, int rank) { split_nranks = nranks; split_rank = rank; }

/* Records color in root, key in peer; the child is as kcoll_mock_split() said. */
int kcoll_comm_split(struct kcoll_comm *parent, int color, int key,
		     const struct kcoll_split_opts *o, struct kcoll_comm **child)
{
	int err = enter("comm_split");
	struct kcoll_comm *c;

	last.root = color;
	last.peer = key;
	last.timeout_ms = o ? o->timeout_ms : 0;
	*child = NULL;
	if (err || color == KCOLL_SPLIT_UNDEFINED)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->nranks = split_nranks ? split_nranks : parent->nranks;
	c->rank = split_nranks ? split_rank : parent->rank;
	last.nranks = c->nranks;
	last.rank = c->rank;
	*child = c;
	return 0;
}

int kcoll_group_start(void)
{
	int err = enter("group_start");

	if (err)
		return err;
	if (!groups.depth++)
		groups.cur_ops = 0;
	return 0;
}

int kcoll_group_end(void)
{
	int err = enter("group_end");

	if (err)
		return err;
	if (!groups.depth) {
		snprintf(errmsg, sizeof(errmsg), "no kcoll_group_start() to end");
		return -EINVAL;
	}
	if (--groups.depth)
		return 0;
	groups.runs++;
	groups.ops = groups.cur_ops;
	err = group_err ? group_err : -group_fail_err;
	group_err = group_fail_err = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; !err && i < ngrecv; i++) {
		if (grecv[i].len > fifo_len) {
			err = -ETIMEDOUT;
			break;
		}
		memcpy(grecv[i].buf, fifo, grecv[i].len);
		memmove(fifo, fifo + grecv[i].len, fifo_len - grecv[i].len);
		fifo_len -= grecv[i].len;
	}
	ngrecv = 0;
	update_fd();
	pthread_mutex_unlock(&lock);
	if (err)
		snprintf(errmsg, sizeof(errmsg), "group failed: %s", strerror(-err));
	return err;
}
