/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll_failnth_test.c's machinery (its header comment says what the test does): struct fn,
 * the fault-injection knobs, rank 1's thread, set-up and clean-up, the node snapshots.
 * The calls under test are in kcoll_failnth_ioctl.h and kcoll_failnth_nl.h.
 */
#ifndef KCOLL_FAILNTH_H
#define KCOLL_FAILNTH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <libkcoll.h>

#include "kcoll_test_comm.h"

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

#endif /* KCOLL_FAILNTH_H */
