// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection over the whole uAPI: every ioctl of /dev/kcoll (and mmap() of a buffer)
 * and every command of the kcoll netlink family runs with the n-th fault-injection point of
 * the calling thread made to fail (/proc/thread-self/fail-nth, with failslab and
 * fail_page_alloc set to fail sleeping allocations too), for n = 1, 2, ... until the call no
 * longer reaches an n-th point.  For every n:
 *  - the call fails with a clean errno (ENOMEM, ENOBUFS), or, when the failed allocation was
 *    optional, succeeds with the right result;
 *  - nothing is left behind once the case is cleaned up: the same communicators in sysfs,
 *    open contexts and memory pinned by the process (VmPin) after every n, the same
 *    `rdma resource` counts at the end;
 *  - the node keeps working: every n sets up its communicators afresh, and the last n is the
 *    call succeeding normally.
 * Over a case, Slab stays within a bound; kmemleak (the suite checks it) must stay empty.
 *
 * Needs the debug kernel (FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC,
 * FAULT_INJECTION_DEBUG_FS); elsewhere every case skips.  One rig VM is enough: a two-rank
 * communicator has rank 1 in a second thread of this process, over a Soft-RoCE device the
 * test adds, and faults are injected into rank 0's thread only.
 *
 * kcoll's own fail points (kmod/kcoll_fault.h) count towards fail-nth like the kernel's.
 * KT_FAILNTH_CLASS=<class> (alloc, pin, reg, qp, cq, cm, post) counts kcoll's points of that
 * class alone instead: the n-th is failed through /sys/kernel/debug/kcoll/fail_<class>/
 * (task-filter, with make-it-fail set on rank 0's thread; space = n, times = 1).
 *
 * KT_FAILNTH_CASES="get_info nl_dev_get ..." runs only the cases named;
 * KT_FAILNTH_FROM (default 1) and KT_FAILNTH_MAX (default 2000) bound n;
 * KT_FAILNTH_VERBOSE=2 makes the kernel log a stack trace for every injected failure (slow
 * on the console, for finding the failing site).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <libkcoll.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define RXE		"kcoll_fn0"
#define FAILNTH		"/proc/thread-self/fail-nth"
#define DBG		"/sys/kernel/debug/"
#define COUNT		256		/* elements of a collective */
#define MSG		4096		/* bytes of a point-to-point message */
#define BUFLEN		(64 * 1024)	/* bytes of a zero-copy buffer */
#define TMO		60000		/* ms: communicator creation, blocking calls */
#define BADRESULT	(-EBADMSG)	/* a call "succeeded" with a wrong result */
#define SLAB_BOUND_KB	(64 * 1024)	/* KASAN's quarantine alone may hold 1/32 of RAM */

struct fn;
typedef int (*fn_op)(struct fn *f);

struct fn {
	int fd0, fd1;		/* rank 0 (this thread, faults injected), rank 1 (peer thread) */
	int nth;		/* this thread's fail-nth */
	uint64_t id;		/* communicator id of this n */
	uint32_t c0, c1;	/* communicators, 0: none */
	uint32_t b0, b1;	/* buffers, 0: none */
	uint64_t off0, off1;
	void *map0, *map1;
	uint64_t req;		/* a non-blocking request of rank 0 */
	struct kcoll_nl *nl;	/* set-up, checks, aborts: never injected */
	struct kcoll_nl *nlt;	/* the netlink cases' handle, fresh for every n */
	struct kcoll_nl_config cfg;
	char engine[32];
	pthread_t peer;
	fn_op peer_op;
	int peer_ret;
	atomic_int peer_done;
	bool peer_on;
	int32_t snd0[COUNT], snd1[COUNT], rcv0[COUNT], rcv1[COUNT];
	uint64_t counts[2], displs[2];
	char m0[MSG], m1[MSG];
};

/* ---- fault injection ------------------------------------------------------------------------ */

/* The debugfs knobs set for the test, and the values they had before. */
static const struct { const char *path, *val; } fn_knobs[] = {
	{ DBG "failslab/ignore-gfp-wait", "N" },
	{ DBG "failslab/task-filter", "Y" },
	{ DBG "failslab/verbose", NULL },
	{ DBG "fail_page_alloc/ignore-gfp-wait", "N" },
	{ DBG "fail_page_alloc/min-order", "0" },
	{ DBG "fail_page_alloc/task-filter", "Y" },
	{ DBG "fail_page_alloc/verbose", NULL },
};

#define NKNOBS (sizeof(fn_knobs) / sizeof(fn_knobs[0]))

/* Read a debugfs knob into @old, then write @val (debugfs attributes do not seek). */
static int knob_rw(const char *path, char *old, size_t len, const char *val)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, old, len - 1);
	old[n > 0 ? n : 0] = '\0';
	close(fd);
	if (!val)
		return 0;
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* KT_FAILNTH_CLASS: the debugfs directory of the class's fault_attr, else empty (fail-nth). */
static char fi_class[64];
/* KT_FAILNTH_ANYWHERE=1: the class's n-th hit in any context (no task filter). */
static bool fi_anywhere;

static void knob_set(const char *dir, const char *knob, const char *val)
{
	char path[128], old[32];

	snprintf(path, sizeof(path), "%s/%s", dir, knob);
	if (knob_rw(path, old, sizeof(old), val))
		abort();
}

static void fi_arm(struct fn *f, int n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%d", n);

	if (fi_class[0]) {
		/* space = n: the first n - 1 hits only count down; times = 1 arms it. */
		knob_set(fi_class, "space", b);
		knob_set(fi_class, "times", "1");
		return;
	}
	if (pwrite(f->nth, b, l, 0) != l)
		abort();
}

/* What is left of the count, and disarm: 0 means the n-th point was reached and failed. */
static int fi_left(struct fn *f)
{
	char b[16] = "";

	if (fi_class[0]) {
		char path[128];

		snprintf(path, sizeof(path), "%s/times", fi_class);
		if (knob_rw(path, b, sizeof(b), "0"))
			abort();
		knob_set(fi_class, "space", "0");
		return atoi(b);
	}
	if (pread(f->nth, b, sizeof(b) - 1, 0) <= 0 || pwrite(f->nth, "0", 1, 0) != 1)
		abort();
	return atoi(b);
}

/*
 * Class mode: every hit of rank 0's thread (make-it-fail) counts, or (fi_anywhere) every
 * hit at all, from rank 1's thread and the work items too.
 */
static int fi_class_setup(const char *cls, const char *verbose)
{
	char old[32];

	snprintf(fi_class, sizeof(fi_class), DBG "kcoll/fail_%s", cls);
	if (access(fi_class, F_OK))
		return -ENOENT;
	knob_set(fi_class, "times", "0");
	knob_set(fi_class, "task-filter", fi_anywhere ? "N" : "Y");
	knob_set(fi_class, "probability", "100");
	knob_set(fi_class, "interval", "1");
	knob_set(fi_class, "verbose", verbose ? verbose : "0");
	return knob_rw("/proc/thread-self/make-it-fail", old, sizeof(old), "1");
}

static void fi_class_teardown(void)
{
	char old[32];

	if (!fi_class[0])
		return;
	knob_set(fi_class, "times", "0");
	knob_set(fi_class, "probability", "0");
	knob_set(fi_class, "space", "0");
	knob_rw("/proc/thread-self/make-it-fail", old, sizeof(old), "0");
}

/* ---- rank 1 ---------------------------------------------------------------------------------- */

static void *peer_main(void *arg)
{
	struct fn *f = arg;
	char old[8];

	/* A new thread inherits make-it-fail (not fail-nth): rank 1 is not under test. */
	if (fi_class[0] && !fi_anywhere)
		knob_rw("/proc/thread-self/make-it-fail", old, sizeof(old), "0");
	f->peer_ret = f->peer_op(f);
	atomic_store(&f->peer_done, 1);
	return NULL;
}

static int peer_start(struct fn *f, fn_op op)
{
	f->peer_op = op;
	f->peer_ret = 0;
	atomic_store(&f->peer_done, 0);
	pthread_attr_t a;
	int ret;

	/* A small stack: every mapping is locked (see FIXTURE_SETUP). */
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 << 10);
	ret = pthread_create(&f->peer, &a, peer_main, f);
	pthread_attr_destroy(&a);
	if (ret)
		return -ret;
	f->peer_on = true;
	return 0;
}

/*
 * Rank 1's result.  When rank 0 failed, rank 1 may wait for it forever: an admin abort of
 * rank 1's communicator ends its call (or its create, once the communicator is listed).
 */
static int peer_join(struct fn *f, bool abort_it)
{
	double end = kt_now() + 2.0 * TMO / 1000;

	if (!f->peer_on)
		return 0;
	while (!atomic_load(&f->peer_done)) {
		if (kt_now() > end)
			return -EDEADLK;	/* stuck: the test cannot go on */
		if (abort_it)
			kcoll_nl_comm_abort(f->nl, f->id, 1);
		usleep(50000);
	}
	pthread_join(f->peer, NULL);
	f->peer_on = false;
	return f->peer_ret;
}

/* ---- set-up and clean-up, never injected ---------------------------------------------------- */

static int create(int fd, struct fn *f, unsigned int rank, unsigned int nranks, uint32_t *h)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(0) };

	return kt_comm_create(fd, f->id, rank, nranks, peers, TMO, h, NULL);
}

static int peer_create(struct fn *f) { return create(f->fd1, f, 1, 2, &f->c1); }

static int query(int fd, uint32_t h, struct kcoll_comm_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = h;
	return kt_ioctl(fd, KCOLL_IOC_COMM_QUERY, q);
}

static int buf_create(int fd, uint32_t comm, uint32_t *h, uint64_t *off)
{
	struct kcoll_buf_create bc = { .size = sizeof(bc), .comm = comm, .length = BUFLEN };
	int ret = kt_ioctl(fd, KCOLL_IOC_BUF_CREATE, &bc);

	*h = bc.handle;
	*off = bc.mmap_offset;
	return ret;
}

static int buf_destroy(int fd, uint32_t comm, uint32_t h)
{
	struct kcoll_buf_arg a = { .size = sizeof(a), .comm = comm, .handle = h };

	return kt_ioctl(fd, KCOLL_IOC_BUF_DESTROY, &a);
}

static int peer_buf(struct fn *f) { return buf_create(f->fd1, f->c1, &f->b1, &f->off1); }

static void *map(int fd, uint64_t off)
{
	void *m = mmap(NULL, BUFLEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	return m == MAP_FAILED ? NULL : m;
}

/* The communicator of this n: none, one rank, or two (rank 1 in the peer thread). */
static int iter_setup(struct fn *f, unsigned int nranks)
{
	int ret, pret;

	if (nranks == 1)
		return create(f->fd0, f, 0, 1, &f->c0);
	if (nranks != 2)
		return 0;
	ret = peer_start(f, peer_create);
	if (ret)
		return ret;
	ret = create(f->fd0, f, 0, 2, &f->c0);
	pret = peer_join(f, ret != 0);
	return ret ?: pret;	/* rank 0's error first: rank 1's may be the abort */
}

static void iter_clean(struct fn *f)
{
	if (f->map0)
		munmap(f->map0, BUFLEN);
	if (f->map1)
		munmap(f->map1, BUFLEN);
	if (f->b0)
		buf_destroy(f->fd0, f->c0, f->b0);
	if (f->b1)
		buf_destroy(f->fd1, f->c1, f->b1);
	if (f->c0)
		kt_comm_destroy(f->fd0, f->c0);
	if (f->c1)
		kt_comm_destroy(f->fd1, f->c1);
	if (f->nlt)
		kcoll_nl_close(f->nlt);
	f->map0 = f->map1 = NULL;
	f->b0 = f->b1 = f->c0 = f->c1 = 0;
	f->req = 0;
	f->nlt = NULL;
}

/* Two buffers of one two-rank communicator, both mapped. */
static int prep_bufs(struct fn *f)
{
	int ret = peer_start(f, peer_buf), pret;

	if (ret)
		return ret;
	ret = buf_create(f->fd0, f->c0, &f->b0, &f->off0);
	pret = peer_join(f, ret != 0);
	if (ret || pret)
		return ret ?: pret;
	f->map0 = map(f->fd0, f->off0);
	f->map1 = map(f->fd1, f->off1);
	return f->map0 && f->map1 ? 0 : -errno;
}

static int prep_nl(struct fn *f) { return kcoll_nl_open(&f->nlt); }

/*
 * What must come back to where it was: kcoll's own counts after every n, the RDMA core's
 * (slow to settle: connections linger in the CM's timewait) at the end of a case.
 */
struct fn_snap {
	long contexts, comms, vmpin;
	char res[2048];
};

static void snap(struct fn_snap *s, bool rdma)
{
	s->contexts = kt_sysfs_long(KT_SYS "contexts");
	s->comms = kt_count_comms();
	s->vmpin = kt_vm_pin_kb();
	if (rdma)
		kt_rdma_res_summary(s->res, sizeof(s->res));
	else
		s->res[0] = '\0';
}

/* kcoll's counts, or (@rdma) the RDMA core's alone. */
static bool snap_eq(const struct fn_snap *a, const struct fn_snap *b, bool rdma)
{
	if (rdma)
		return !strcmp(a->res, b->res);
	return a->contexts == b->contexts && a->comms == b->comms && a->vmpin == b->vmpin;
}

/* Teardown finishes asynchronously (QPs drain, the CM says goodbye): give it time. */
static bool settle(const struct fn_snap *base, struct fn_snap *now, bool rdma, double secs)
{
	double end = kt_now() + secs;

	for (;;) {
		snap(now, rdma);
		if (snap_eq(base, now, rdma) || kt_now() > end)
			return snap_eq(base, now, rdma);
		usleep(100000);
	}
}

/* ---- the calls under test (rank 0) and rank 1's part ---------------------------------------- */

static int call_info(struct fn *f)
{
	struct kcoll_info i = { .size = sizeof(i) };
	int ret = kt_ioctl(f->fd0, KCOLL_IOC_GET_INFO, &i);

	if (!ret && (i.abi_version != KCOLL_ABI_VERSION || !(i.features & KCOLL_FEAT_COMM)))
		return BADRESULT;
	return ret;
}

static int call_create1(struct fn *f) { return create(f->fd0, f, 0, 1, &f->c0); }
static int call_create2(struct fn *f) { return create(f->fd0, f, 0, 2, &f->c0); }

/* The new communicator is ready, on both ranks when it has two. */
static int check_ready(struct fn *f)
{
	struct kcoll_comm_query q;

	if (query(f->fd0, f->c0, &q) || q.state != KCOLL_COMM_READY)
		return BADRESULT;
	if (f->c1 && (query(f->fd1, f->c1, &q) || q.state != KCOLL_COMM_READY))
		return BADRESULT;
	return 0;
}

static int call_destroy(struct fn *f)
{
	int ret = kt_comm_destroy(f->fd0, f->c0);

	if (!ret)
		f->c0 = 0;
	return ret;
}

static int check_destroyed(struct fn *f)
{
	char p[128];
	struct stat st;

	snprintf(p, sizeof(p), KT_SYS "comms/%016llx-0", (unsigned long long)f->id);
	return stat(p, &st) ? 0 : BADRESULT;
}

static int call_abort(struct fn *f)
{
	struct kcoll_comm_arg a = { .size = sizeof(a), .handle = f->c0 };

	return kt_ioctl(f->fd0, KCOLL_IOC_COMM_ABORT, &a);
}

static int check_aborted(struct fn *f)
{
	struct kcoll_comm_query q;

	if (query(f->fd0, f->c0, &q) || q.state != KCOLL_COMM_ABORTED || q.error != -ECONNABORTED)
		return BADRESULT;
	return 0;
}

static int call_query(struct fn *f)
{
	struct kcoll_comm_query q;
	int ret = query(f->fd0, f->c0, &q);

	if (!ret && (q.state != KCOLL_COMM_READY || q.comm_id != f->id || q.nranks != 1))
		return BADRESULT;
	return ret;
}

static int call_buf_create(struct fn *f) { return buf_create(f->fd0, f->c0, &f->b0, &f->off0); }

static int check_buf(struct fn *f)
{
	f->map0 = map(f->fd0, f->off0);
	if (!f->map0)
		return BADRESULT;
	memset(f->map0, 0x5a, BUFLEN);
	return 0;
}

/* Both buffers, rank 0's not mapped: munmap() in the call would take fault points. */
static int prep_bufs_unmapped(struct fn *f)
{
	int ret = prep_bufs(f);

	munmap(f->map0, BUFLEN);
	f->map0 = NULL;
	return ret;
}

static int call_buf_destroy(struct fn *f)
{
	int ret = buf_destroy(f->fd0, f->c0, f->b0);

	if (!ret)
		f->b0 = 0;
	return ret;
}

static int call_mmap(struct fn *f)
{
	f->map0 = map(f->fd0, f->off0);
	return f->map0 ? 0 : -errno;
}

static int check_mmap(struct fn *f)
{
	memset(f->map0, 0xa5, BUFLEN);
	return ((unsigned char *)f->map0)[BUFLEN - 1] == 0xa5 ? 0 : BADRESULT;
}

static void fill(struct fn *f)
{
	unsigned int i;

	for (i = 0; i < MSG; i++)
		f->m0[i] = kt_byte(0, MSG, i);
	memset(f->m1, 0, MSG);
}

static int call_send(struct fn *f)
{
	fill(f);
	return kt_p2p(f->fd0, f->c0, KCOLL_P2P_SEND, 1, f->m0, MSG, NULL);
}

static int peer_recv(struct fn *f)
{
	return kt_p2p(f->fd1, f->c1, KCOLL_P2P_RECV, 0, f->m1, MSG, NULL);
}

static int call_send_nb(struct fn *f)
{
	fill(f);
	return kt_p2p(f->fd0, f->c0, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, 1, f->m0, MSG, &f->req);
}

static int check_sent(struct fn *f)
{
	int status;

	if (f->req && (kt_wait(f->fd0, f->c0, f->req, TMO, &status, NULL) || status))
		return BADRESULT;
	return memcmp(f->m0, f->m1, MSG) ? BADRESULT : 0;
}

static int peer_send(struct fn *f)
{
	unsigned int i;

	for (i = 0; i < MSG; i++)
		f->m1[i] = kt_byte(1, MSG, i);
	return kt_p2p(f->fd1, f->c1, KCOLL_P2P_SEND, 0, f->m1, MSG, NULL);
}

static int call_recv(struct fn *f)
{
	uint64_t got = 0;
	int ret;

	memset(f->m0, 0, MSG);
	ret = kt_p2p(f->fd0, f->c0, KCOLL_P2P_RECV, 1, f->m0, MSG, &got);
	return !ret && got != MSG ? BADRESULT : ret;
}

static int check_received(struct fn *f) { return memcmp(f->m0, f->m1, MSG) ? BADRESULT : 0; }

static int p2p_buf(int fd, uint32_t comm, uint32_t flags, unsigned int peer, uint32_t h)
{
	struct kcoll_p2p p = {
		.size = sizeof(p), .flags = flags | KCOLL_P2P_BUF, .comm = comm, .peer = peer,
		.len = MSG, .buf = h,
	};

	return kt_ioctl(fd, KCOLL_IOC_P2P, &p);
}

static int call_send_buf(struct fn *f)
{
	memset(f->map0, 0x3c, MSG);
	memset(f->map1, 0, MSG);
	return p2p_buf(f->fd0, f->c0, KCOLL_P2P_SEND, 1, f->b0);
}

static int peer_recv_buf(struct fn *f) { return p2p_buf(f->fd1, f->c1, KCOLL_P2P_RECV, 0, f->b1); }

static int check_sent_buf(struct fn *f) { return memcmp(f->map0, f->map1, MSG) ? BADRESULT : 0; }

/* WAIT: rank 0 posted a receive before; the call waits for it (rank 1 sends meanwhile). */
static int prep_wait(struct fn *f)
{
	memset(f->m0, 0, MSG);
	return kt_p2p(f->fd0, f->c0, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1, f->m0, MSG, &f->req);
}

static int call_wait(struct fn *f)
{
	uint64_t got = 0;
	int status = 0, ret = kt_wait(f->fd0, f->c0, f->req, TMO, &status, &got);

	if (!ret && (status || got != MSG))
		return BADRESULT;
	return ret;
}

/* Collectives: rank r contributes (r + 1) * (i + 1). */
static int coll(int fd, uint32_t comm, uint8_t c, uint32_t flags, int32_t *snd, int32_t *rcv,
		struct fn *f, uint64_t *req)
{
	struct kcoll_coll a = {
		.size = sizeof(a), .flags = flags, .comm = comm, .coll = c, .dtype = KCOLL_INT32,
		.op = KCOLL_SUM, .count = COUNT, .sendbuf = (uintptr_t)snd,
		.recvbuf = (uintptr_t)rcv, .timeout_ms = TMO,
	};
	int ret;

	if (c == KCOLL_BARRIER) {
		a.count = 0;
		a.sendbuf = a.recvbuf = 0;
	} else if (c == KCOLL_ALLGATHERV) {
		a.count = 0;
		a.counts = (uintptr_t)f->counts;
		a.displs = (uintptr_t)f->displs;
	} else if (c == KCOLL_BROADCAST) {
		a.op = 0;	/* root 0 sends from snd; every rank receives in rcv */
	}
	ret = kt_ioctl(fd, KCOLL_IOC_COLL, &a);
	if (req)
		*req = a.req;
	return ret;
}

static void fill_coll(int32_t *snd, int32_t *rcv, unsigned int rank)
{
	unsigned int i;

	for (i = 0; i < COUNT; i++) {
		snd[i] = (rank + 1) * (i + 1);
		rcv[i] = -1;
	}
}

static int call_allreduce(struct fn *f)
{
	fill_coll(f->snd0, f->rcv0, 0);
	return coll(f->fd0, f->c0, KCOLL_ALLREDUCE, 0, f->snd0, f->rcv0, f, NULL);
}

static int call_allreduce_nb(struct fn *f)
{
	fill_coll(f->snd0, f->rcv0, 0);
	return coll(f->fd0, f->c0, KCOLL_ALLREDUCE, KCOLL_COLL_NONBLOCK, f->snd0, f->rcv0, f,
		    &f->req);
}

static int peer_allreduce(struct fn *f)
{
	fill_coll(f->snd1, f->rcv1, 1);
	return coll(f->fd1, f->c1, KCOLL_ALLREDUCE, 0, f->snd1, f->rcv1, f, NULL);
}

static int check_allreduce(struct fn *f)
{
	unsigned int i;
	int status;

	if (f->req && (kt_wait(f->fd0, f->c0, f->req, TMO, &status, NULL) || status))
		return BADRESULT;
	for (i = 0; i < COUNT; i++)
		if (f->rcv0[i] != 3 * (int32_t)(i + 1) ||
		    (f->c1 && f->rcv1[i] != 3 * (int32_t)(i + 1)))
			return BADRESULT;
	return 0;
}

/* One rank: the sum is the rank's own contribution. */
static int check_allreduce1(struct fn *f)
{
	return memcmp(f->snd0, f->rcv0, sizeof(f->rcv0)) ? BADRESULT : 0;
}

static int call_bcast(struct fn *f)
{
	fill_coll(f->snd0, f->rcv0, 0);
	return coll(f->fd0, f->c0, KCOLL_BROADCAST, 0, f->snd0, f->rcv0, f, NULL);
}

static int peer_bcast(struct fn *f)
{
	memset(f->rcv1, 0, sizeof(f->rcv1));
	return coll(f->fd1, f->c1, KCOLL_BROADCAST, 0, NULL, f->rcv1, f, NULL);
}

static int check_bcast(struct fn *f)
{
	if (memcmp(f->snd0, f->rcv0, sizeof(f->rcv0)) || memcmp(f->snd0, f->rcv1, sizeof(f->rcv1)))
		return BADRESULT;
	return 0;
}

static int call_barrier(struct fn *f)
{
	return coll(f->fd0, f->c0, KCOLL_BARRIER, 0, NULL, NULL, f, NULL);
}

static int peer_barrier(struct fn *f)
{
	return coll(f->fd1, f->c1, KCOLL_BARRIER, 0, NULL, NULL, f, NULL);
}

/* ALLGATHERV: rank 0 gives the first COUNT / 2 elements, rank 1 the rest. */
static void v_layout(struct fn *f)
{
	f->counts[0] = COUNT / 2;
	f->counts[1] = COUNT - COUNT / 2;
	f->displs[0] = 0;
	f->displs[1] = COUNT / 2;
}

static int call_allgatherv(struct fn *f)
{
	v_layout(f);
	fill_coll(f->snd0, f->rcv0, 0);
	return coll(f->fd0, f->c0, KCOLL_ALLGATHERV, 0, f->snd0, f->rcv0, f, NULL);
}

static int peer_allgatherv(struct fn *f)
{
	fill_coll(f->snd1, f->rcv1, 1);
	return coll(f->fd1, f->c1, KCOLL_ALLGATHERV, 0, f->snd1, f->rcv1, f, NULL);
}

static int check_allgatherv(struct fn *f)
{
	unsigned int i;

	for (i = 0; i < COUNT; i++) {
		int32_t want = i < COUNT / 2 ? f->snd0[i] : f->snd1[i - COUNT / 2];

		if (f->rcv0[i] != want || f->rcv1[i] != want)
			return BADRESULT;
	}
	return 0;
}

/* An all-reduce from and into zero-copy buffers: send at offset 0, receive at BUFLEN / 2. */
static int coll_bufs(int fd, uint32_t comm, uint32_t h, int32_t *m, unsigned int rank)
{
	struct kcoll_coll a = {
		.size = sizeof(a), .comm = comm, .coll = KCOLL_ALLREDUCE, .dtype = KCOLL_INT32,
		.op = KCOLL_SUM, .count = COUNT, .timeout_ms = TMO,
		.flags = KCOLL_COLL_SEND_BUF | KCOLL_COLL_RECV_BUF,
		.sendbuf = 0, .recvbuf = BUFLEN / 2, .send_handle = h, .recv_handle = h,
	};

	fill_coll(m, m + BUFLEN / 2 / sizeof(*m), rank);
	return kt_ioctl(fd, KCOLL_IOC_COLL, &a);
}

static int call_allreduce_buf(struct fn *f) { return coll_bufs(f->fd0, f->c0, f->b0, f->map0, 0); }
static int peer_allreduce_buf(struct fn *f) { return coll_bufs(f->fd1, f->c1, f->b1, f->map1, 1); }

static int check_allreduce_buf(struct fn *f)
{
	int32_t *r0 = (int32_t *)f->map0 + BUFLEN / 2 / 4, *r1 = (int32_t *)f->map1 + BUFLEN / 2 / 4;
	unsigned int i;

	for (i = 0; i < COUNT; i++)
		if (r0[i] != 3 * (int32_t)(i + 1) || r1[i] != 3 * (int32_t)(i + 1))
			return BADRESULT;
	return 0;
}

/* ---- netlink commands ------------------------------------------------------------------------ */

static int call_nl_dev_get(struct fn *f)
{
	struct kcoll_nl_dev *d = NULL;
	size_t n = 0;
	int ret = kcoll_nl_dev_list(f->nlt, RXE, &d, &n);

	if (!ret && (n != 1 || strcmp(d[0].name, RXE) || !d[0].nports))
		ret = BADRESULT;
	kcoll_nl_dev_list_free(d, n);
	return ret;
}

static int call_nl_dev_dump(struct fn *f)
{
	struct kcoll_nl_dev *d = NULL;
	size_t n = 0, i;
	int ret = kcoll_nl_dev_list(f->nlt, NULL, &d, &n);

	if (!ret) {
		for (i = 0; i < n && strcmp(d[i].name, RXE); i++)
			;
		if (i == n)
			ret = BADRESULT;
	}
	kcoll_nl_dev_list_free(d, n);
	return ret;
}

static int call_nl_dev_set(struct fn *f) { return kcoll_nl_dev_set(f->nlt, RXE, 1, 1, -1); }
static int call_nl_dev_set_gid(struct fn *f) { return kcoll_nl_dev_set_gid(f->nlt, RXE, -1); }

static int check_dev(struct fn *f)
{
	struct kcoll_nl_dev *d = NULL;
	size_t n = 0;
	int ret = kcoll_nl_dev_list(f->nl, RXE, &d, &n);

	if (!ret && (n != 1 || d[0].allowed != 1 || d[0].tos != -1 || d[0].gid_index != -1))
		ret = BADRESULT;
	kcoll_nl_dev_list_free(d, n);
	return ret;
}

static int call_nl_comm_get(struct fn *f)
{
	struct kcoll_nl_comm *c = NULL;
	int ret = kcoll_nl_comm_get(f->nlt, f->id, 0, &c);

	if (!ret && (c->comm_id != f->id || c->nranks != 1))
		ret = BADRESULT;
	if (c)
		kcoll_nl_comm_list_free(c, 1);
	return ret;
}

static int call_nl_comm_dump(struct fn *f)
{
	struct kcoll_nl_comm *c = NULL;
	size_t n = 0, i;
	int ret = kcoll_nl_comm_list(f->nlt, &c, &n);

	if (!ret) {
		for (i = 0; i < n && c[i].comm_id != f->id; i++)
			;
		if (i == n)
			ret = BADRESULT;
	}
	kcoll_nl_comm_list_free(c, n);
	return ret;
}

static int call_nl_comm_abort(struct fn *f) { return kcoll_nl_comm_abort(f->nlt, f->id, 0); }

static int call_nl_config_get(struct fn *f)
{
	struct kcoll_nl_config c = { 0 };
	int ret = kcoll_nl_config_get(f->nlt, &c);

	if (!ret && (!c.op_timeout_ms || !c.chunk_bytes))
		ret = BADRESULT;
	return ret;
}

/* Set every parameter to what it is. */
static int prep_config(struct fn *f) { return prep_nl(f) ?: kcoll_nl_config_get(f->nl, &f->cfg); }
static int call_nl_config_set(struct fn *f) { return kcoll_nl_config_set(f->nlt, &f->cfg); }

static int check_config(struct fn *f)
{
	struct kcoll_nl_config c = { 0 };

	if (kcoll_nl_config_get(f->nl, &c))
		return BADRESULT;
	return memcmp(&c, &f->cfg, sizeof(c)) ? BADRESULT : 0;
}

static int call_nl_engine_get(struct fn *f)
{
	struct kcoll_nl_engine *e = NULL;
	size_t n = 0;
	int ret = kcoll_nl_engine_list(f->nlt, &e, &n);

	if (!ret && (!n || !e[0].npairs))
		ret = BADRESULT;
	kcoll_nl_engine_list_free(e, n);
	return ret;
}

static int prep_engine(struct fn *f)
{
	struct kcoll_nl_engine *e = NULL;
	size_t n = 0;
	int ret = prep_nl(f) ?: kcoll_nl_engine_list(f->nl, &e, &n);

	if (!ret && n)
		snprintf(f->engine, sizeof(f->engine), "%s", e[0].name);
	kcoll_nl_engine_list_free(e, n);
	return ret ?: (n ? 0 : -ENOENT);
}

static int call_nl_engine_set(struct fn *f)
{
	return kcoll_nl_engine_set(f->nlt, f->engine, KCOLL_INT32, KCOLL_SUM);
}

/* ---- the cases --------------------------------------------------------------------------- */

/* The name of the running variant (the 6.1 harness hands the test its data only). */
static const char *variant_name(struct __test_metadata *m, const void *data)
{
	struct __fixture_variant_metadata *v;

	for (v = m->fixture->variant; v; v = v->next)
		if (v->data == data)
			return v->name;
	return "?";
}

FIXTURE(fi) {
	struct fn *f;
	char old[NKNOBS][32];
	bool ready;
};

FIXTURE_VARIANT(fi) {
	unsigned int nranks;	/* communicator set up before the call: none, 1 or 2 ranks */
	fn_op prep;		/* more set-up, no faults */
	fn_op call;		/* the call under test, rank 0: 0 or -errno */
	fn_op peer;		/* rank 1's part, in its thread, while the call runs */
	fn_op check;		/* after a successful call: 0 if its result is right */
	bool one_rank;		/* a one-rank collective or buffer: see FIXTURE_SETUP */
};

/* ioctls */
FIXTURE_VARIANT_ADD(fi, get_info) { .call = call_info };
FIXTURE_VARIANT_ADD(fi, comm_create_1) { .call = call_create1, .check = check_ready };
FIXTURE_VARIANT_ADD(fi, comm_create_2) {
	.call = call_create2, .peer = peer_create, .check = check_ready };
FIXTURE_VARIANT_ADD(fi, comm_destroy_1) {
	.nranks = 1, .call = call_destroy, .check = check_destroyed };
FIXTURE_VARIANT_ADD(fi, comm_destroy_2) {
	.nranks = 2, .call = call_destroy, .check = check_destroyed };
FIXTURE_VARIANT_ADD(fi, comm_abort_1) { .nranks = 1, .call = call_abort, .check = check_aborted };
FIXTURE_VARIANT_ADD(fi, comm_abort_2) { .nranks = 2, .call = call_abort, .check = check_aborted };
FIXTURE_VARIANT_ADD(fi, comm_query_1) { .nranks = 1, .call = call_query };
FIXTURE_VARIANT_ADD(fi, buf_create_1) {
	.nranks = 1, .call = call_buf_create, .check = check_buf, .one_rank = true };
FIXTURE_VARIANT_ADD(fi, buf_create_2) {
	.nranks = 2, .call = call_buf_create, .peer = peer_buf, .check = check_buf };
FIXTURE_VARIANT_ADD(fi, buf_destroy_2) {
	.nranks = 2, .prep = prep_bufs_unmapped, .call = call_buf_destroy };
FIXTURE_VARIANT_ADD(fi, buf_mmap_2) {
	.nranks = 2, .prep = prep_bufs_unmapped, .call = call_mmap, .check = check_mmap };
FIXTURE_VARIANT_ADD(fi, p2p_send_2) {
	.nranks = 2, .call = call_send, .peer = peer_recv, .check = check_sent };
FIXTURE_VARIANT_ADD(fi, p2p_send_nonblock_2) {
	.nranks = 2, .call = call_send_nb, .peer = peer_recv, .check = check_sent };
FIXTURE_VARIANT_ADD(fi, p2p_recv_2) {
	.nranks = 2, .call = call_recv, .peer = peer_send, .check = check_received };
FIXTURE_VARIANT_ADD(fi, p2p_send_buf_2) {
	.nranks = 2, .prep = prep_bufs, .call = call_send_buf, .peer = peer_recv_buf,
	.check = check_sent_buf };
FIXTURE_VARIANT_ADD(fi, wait_2) {
	.nranks = 2, .prep = prep_wait, .call = call_wait, .peer = peer_send,
	.check = check_received };
FIXTURE_VARIANT_ADD(fi, allreduce_1) {
	.nranks = 1, .call = call_allreduce, .check = check_allreduce1, .one_rank = true };
FIXTURE_VARIANT_ADD(fi, allreduce_2) {
	.nranks = 2, .call = call_allreduce, .peer = peer_allreduce, .check = check_allreduce };
FIXTURE_VARIANT_ADD(fi, allreduce_nonblock_2) {
	.nranks = 2, .call = call_allreduce_nb, .peer = peer_allreduce, .check = check_allreduce };
FIXTURE_VARIANT_ADD(fi, allreduce_buf_2) {
	.nranks = 2, .prep = prep_bufs, .call = call_allreduce_buf, .peer = peer_allreduce_buf,
	.check = check_allreduce_buf };
FIXTURE_VARIANT_ADD(fi, bcast_2) {
	.nranks = 2, .call = call_bcast, .peer = peer_bcast, .check = check_bcast };
FIXTURE_VARIANT_ADD(fi, barrier_2) { .nranks = 2, .call = call_barrier, .peer = peer_barrier };
FIXTURE_VARIANT_ADD(fi, allgatherv_2) {
	.nranks = 2, .call = call_allgatherv, .peer = peer_allgatherv, .check = check_allgatherv };
/* generic netlink commands */
FIXTURE_VARIANT_ADD(fi, nl_dev_get) { .prep = prep_nl, .call = call_nl_dev_get };
FIXTURE_VARIANT_ADD(fi, nl_dev_dump) { .prep = prep_nl, .call = call_nl_dev_dump };
FIXTURE_VARIANT_ADD(fi, nl_dev_set) {
	.prep = prep_nl, .call = call_nl_dev_set, .check = check_dev };
FIXTURE_VARIANT_ADD(fi, nl_dev_set_gid) {
	.prep = prep_nl, .call = call_nl_dev_set_gid, .check = check_dev };
FIXTURE_VARIANT_ADD(fi, nl_comm_get) { .nranks = 1, .prep = prep_nl, .call = call_nl_comm_get };
FIXTURE_VARIANT_ADD(fi, nl_comm_dump) { .nranks = 1, .prep = prep_nl, .call = call_nl_comm_dump };
FIXTURE_VARIANT_ADD(fi, nl_comm_abort) {
	.nranks = 1, .prep = prep_nl, .call = call_nl_comm_abort, .check = check_aborted };
FIXTURE_VARIANT_ADD(fi, nl_config_get) { .prep = prep_nl, .call = call_nl_config_get };
FIXTURE_VARIANT_ADD(fi, nl_config_set) {
	.prep = prep_config, .call = call_nl_config_set, .check = check_config };
FIXTURE_VARIANT_ADD(fi, nl_engine_get) { .prep = prep_nl, .call = call_nl_engine_get };
FIXTURE_VARIANT_ADD(fi, nl_engine_set) { .prep = prep_engine, .call = call_nl_engine_set };

FIXTURE_SETUP(fi)
{
	const char *verbose = getenv("KT_FAILNTH_VERBOSE");
	const char *cases = getenv("KT_FAILNTH_CASES"), *name;
	struct stat st;
	unsigned int i;
	char old[32];

	/* The harness runs the test after a SKIP in set-up: self->ready says whether to. */
	if (access(FAILNTH, F_OK))
		SKIP(return, "kernel without fault injection (" FAILNTH ")");
	/*
	 * Issue 12, finding 0: on a one-rank communicator a collective on plain memory and
	 * BUF_CREATE dereference a device the communicator does not have; KT_ONE_RANK=1 runs
	 * those cases once that is fixed.
	 */
	name = variant_name(_metadata, variant);
	if (cases) {
		char pat[64], all[512];

		snprintf(pat, sizeof(pat), " %s ", name);
		snprintf(all, sizeof(all), " %s ", cases);
		if (!strstr(all, pat))
			SKIP(return, "not in KT_FAILNTH_CASES");
	}
	if (variant->one_rank && !kt_env("KT_ONE_RANK", 0))
		SKIP(return, "needs the one-rank fix (issue 12, finding 0): KT_ONE_RANK=1 runs it");
	if (stat(DBG "failslab", &st))
		mount("debugfs", DBG, "debugfs", 0, NULL);
	for (i = 0; i < NKNOBS; i++) {
		const char *val = fn_knobs[i].val ?: (verbose ? verbose : "0");

		ASSERT_EQ(0, knob_rw(fn_knobs[i].path, old, sizeof(old), val))
			TH_LOG("%s", fn_knobs[i].path);
		snprintf(self->old[i], sizeof(self->old[i]), "%s", old);
	}
	self->f = calloc(1, sizeof(*self->f));
	ASSERT_NE(NULL, self->f);
	self->ready = true;
	system("rdma link delete " RXE " 2>/dev/null");
	ASSERT_EQ(0, system("rdma link add " RXE " type rxe netdev eth0"));
	self->f->fd0 = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	self->f->fd1 = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->f->fd0);
	ASSERT_LE(0, self->f->fd1);
	ASSERT_EQ(0, kcoll_nl_open(&self->f->nl));
	self->f->nth = open(FAILNTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->f->nth);
	fi_class[0] = '\0';
	fi_anywhere = kt_env("KT_FAILNTH_ANYWHERE", 0);
	if (getenv("KT_FAILNTH_CLASS"))
		ASSERT_EQ(0, fi_class_setup(getenv("KT_FAILNTH_CLASS"), verbose))
			TH_LOG("kcoll without fail points (%s)", fi_class);
	/*
	 * The binary is on 9p: a page of it faulted in during the call would take the n-th
	 * point (a 9p read) instead of kcoll.  Every page is resident from here on.
	 */
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE));
}

FIXTURE_TEARDOWN(fi)
{
	unsigned int i;

	if (!self->ready)
		return;
	fi_class_teardown();
	iter_clean(self->f);
	kcoll_nl_close(self->f->nl);
	close(self->f->fd0);
	close(self->f->fd1);
	close(self->f->nth);
	free(self->f);
	system("rdma link delete " RXE);
	for (i = 0; i < NKNOBS; i++) {
		char cur[32];

		/* The value read has a newline; writing it back is accepted. */
		knob_rw(fn_knobs[i].path, cur, sizeof(cur), self->old[i]);
	}
}

/*
 * The errnos an allocation failure may come back as; a failed post (kcoll's fail points)
 * breaks the communicator (EIO); a failure on the peer's side (KT_FAILNTH_ANYWHERE) shows as
 * the peer's refusal or its absence.
 */
static bool clean_errno(int ret)
{
	if (ret == -ENOMEM || ret == -ENOBUFS || ret == -EIO)
		return true;
	return fi_anywhere && (ret == -ETIMEDOUT || ret == -ECONNREFUSED ||
			       ret == -ECONNRESET || ret == -ECONNABORTED ||
			       ret == -EHOSTUNREACH);
}

TEST_F_TIMEOUT(fi, loop, 3600)
{
	unsigned int max = kt_env("KT_FAILNTH_MAX", 2000), n, failed = 0, tolerated = 0, bad = 0;
	unsigned int from = kt_env("KT_FAILNTH_FROM", 1);
	struct fn *f = self->f;
	struct fn_snap base, now;
	double t0 = kt_now();
	long slab0, slab;
	bool done = false;

	if (!self->ready)
		return;
	snap(&base, true);
	slab0 = kt_proc_kb("/proc/meminfo", "Slab");
	for (n = from; n <= max && !done && bad < 3; n++) {
		int ret, pret = 0, left;
		double t1 = kt_now();

		f->id = kt_comm_id(variant_name(_metadata, variant), n);
		ret = iter_setup(f, variant->nranks);
		ASSERT_EQ(0, ret) TH_LOG("n=%u: set-up after n=%u: %d (%s)", n, n - 1, ret,
					 strerror(-ret));
		if (variant->prep)
			ASSERT_EQ(0, variant->prep(f)) TH_LOG("n=%u: prep", n);
		if (variant->peer)
			ASSERT_EQ(0, peer_start(f, variant->peer));

		fi_arm(f, n);
		ret = variant->call(f);
		left = fi_left(f);

		if (variant->peer) {
			pret = peer_join(f, ret != 0);
			ASSERT_NE(-EDEADLK, pret) TH_LOG("n=%u: rank 1 stuck after %d", n, ret);
		}
		if (!ret && variant->check)
			ret = variant->check(f);
		if (!ret && pret)
			ret = pret;	/* rank 1 failed where rank 0 succeeded */
		if (left) {
			done = true;
			if (ret)
				bad++;
			EXPECT_EQ(0, ret) TH_LOG("n=%u: the call fails without a fault: %d (%s)",
						 n, ret, kcoll_last_error());
		} else if (ret) {
			failed++;
			if (!clean_errno(ret))
				bad++;
			EXPECT_TRUE(clean_errno(ret))
				TH_LOG("n=%u: injected failure came back as %d (%s)", n, ret,
				       ret == BADRESULT ? "wrong result" : strerror(-ret));
		} else {
			tolerated++;
		}
		iter_clean(f);
		if (!settle(&base, &now, false, 30)) {
			bad++;
			EXPECT_TRUE(0) TH_LOG("n=%u (%d): left behind: contexts %ld/%ld comms %ld/%ld "
					      "VmPin %ld/%ld", n, ret, base.contexts, now.contexts,
					      base.comms, now.comms, base.vmpin, now.vmpin);
		}
		fprintf(stderr, "# n=%u: %d%s, %.1f s\n", n, ret, left ? " (no fault)" : "",
			kt_now() - t1);
	}
	/* Only two-rank cases touch the device; its counts take a while (CM timewait). */
	if (variant->nranks == 2 || variant->peer)
		EXPECT_TRUE(settle(&base, &now, true, 90))
				TH_LOG("RDMA resources left behind\nbefore:\n%s\nafter:\n%s", base.res,
			       now.res);
	slab = kt_proc_kb("/proc/meminfo", "Slab");
	fprintf(stderr, "# %s: n = %u..%u, %u failed cleanly, %u tolerated, Slab %+ld kB, %.0f s\n",
		variant_name(_metadata, variant), from, n - 1, failed, tolerated, slab - slab0,
		kt_now() - t0);
	if (bad < 3)
		EXPECT_TRUE(done) TH_LOG("still reaching fault points at n = %u (KT_FAILNTH_MAX)",
					 max);
	EXPECT_GT(SLAB_BOUND_KB, slab - slab0) TH_LOG("Slab grew by %ld kB", slab - slab0);
}

TEST_HARNESS_MAIN
