// SPDX-License-Identifier: GPL-2.0
/*
 * Targeted fail points on connection set-up: the CQ or QP of one side of a two-rank
 * communicator cannot be created.  Whichever rank's resource failed must end its
 * COMM_CREATE with the injected errno at once; the other must end with a defined error
 * (refused, or aborted by the test when it could not know).  Before the fix, a failure on
 * the accepting side was answered with a reject and nothing else: that rank waited for a
 * connection that could never come and reported -ETIMEDOUT at the end of its timeout.
 *
 * Needs the debug kernel (kcoll's fail points in debugfs, kmod/kcoll_fault.h); elsewhere
 * every case skips.  Both ranks live in this process (two files, rank 1 in a thread), over
 * a Soft-RoCE device the test adds.  Each case fails the n-th point of its class for
 * n = 1, 2, ... until the set-up no longer reaches an n-th point.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <libkcoll.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define RXE		"kcoll_fp0"
#define DBG		"/sys/kernel/debug/"
#define TMO		30000	/* ms: each rank's COMM_CREATE */
#define PROMPT_S	15.0	/* a rank that failed itself knows at once; slack for TCG */
#define MAX_N		8

struct rank1 {
	int fd;
	struct kcoll_nl *nl;
	uint64_t id;
	uint32_t h;
	int ret;
	double took;
	atomic_int rank0_done;
};

static void *rank1_main(void *arg)
{
	struct rank1 *r = arg;
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(0) };
	double t0 = kt_now();

	r->ret = kt_comm_create(r->fd, r->id, 1, 2, peers, TMO, &r->h, NULL);
	r->took = kt_now() - t0;
	/*
	 * Our own resource failed: rank 0 cannot know and would wait out its timeout; an
	 * admin abort ends its create (once its communicator is listed).
	 */
	while (r->ret == -ENOMEM && !atomic_load(&r->rank0_done)) {
		kcoll_nl_comm_abort(r->nl, r->id, 0);
		usleep(100000);
	}
	return NULL;
}

static int knob(const char *cls, const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), DBG "kcoll/fail_%s/%s", cls, name);
	return kt_write_str(path, val);
}

static long knob_read(const char *cls, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), DBG "kcoll/fail_%s/%s", cls, name);
	return kt_read_long(path, -1);
}

/* A refusal, an abort or a lost peer: what a rank sees when the other one failed. */
static bool peer_failed_errno(int err)
{
	return err == -ECONNREFUSED || err == -ECONNABORTED || err == -ECONNRESET ||
	       err == -ETIMEDOUT;
}

FIXTURE(fp) {
	int fd0, fd1;
	struct kcoll_nl *nl;
	bool ready;
};

FIXTURE_VARIANT(fp) {
	const char *cls;
};

FIXTURE_VARIANT_ADD(fp, cq) { .cls = "cq" };
FIXTURE_VARIANT_ADD(fp, qp) { .cls = "qp" };

FIXTURE_SETUP(fp)
{
	struct stat st;

	if (stat(DBG "kcoll", &st))
		mount("debugfs", DBG, "debugfs", 0, NULL);
	if (knob_read(variant->cls, "times") < 0)
		SKIP(return, "kcoll without fail points (a kernel without FAULT_INJECTION)");
	system("rdma link delete " RXE " 2>/dev/null");
	ASSERT_EQ(0, system("rdma link add " RXE " type rxe netdev eth0"));
	self->fd0 = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	self->fd1 = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd0);
	ASSERT_LE(0, self->fd1);
	ASSERT_EQ(0, kcoll_nl_open(&self->nl));
	/* Every thread's hit counts: the accepting side runs in rdma_cm's work items. */
	ASSERT_EQ(0, knob(variant->cls, "task-filter", "N"));
	ASSERT_EQ(0, knob(variant->cls, "probability", "100"));
	ASSERT_EQ(0, knob(variant->cls, "interval", "1"));
	ASSERT_EQ(0, knob(variant->cls, "verbose", "0"));
	self->ready = true;
}

FIXTURE_TEARDOWN(fp)
{
	if (!self->ready)
		return;
	knob(variant->cls, "times", "0");
	knob(variant->cls, "space", "0");
	knob(variant->cls, "probability", "0");
	kcoll_nl_close(self->nl);
	close(self->fd0);
	close(self->fd1);
	system("rdma link delete " RXE);
}

TEST_F_TIMEOUT(fp, setup_failure_reported_at_once, 600)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(0) };
	unsigned int n, hit_passive = 0;
	bool fired = true;

	if (!self->ready)
		return;
	for (n = 1; n <= MAX_N && fired; n++) {
		struct rank1 r1 = { .fd = self->fd1, .nl = self->nl,
				     .id = kt_comm_id(variant->cls, n) };
		double t0, took0;
		pthread_t thr;
		uint32_t h0 = 0;
		char b[16];
		int ret0;

		snprintf(b, sizeof(b), "%u", n);
		/* space = n: the first n - 1 hits count down, times = 1 arms one failure. */
		ASSERT_EQ(0, knob(variant->cls, "space", b));
		ASSERT_EQ(0, knob(variant->cls, "times", "1"));
		ASSERT_EQ(0, pthread_create(&thr, NULL, rank1_main, &r1));
		t0 = kt_now();
		ret0 = kt_comm_create(self->fd0, r1.id, 0, 2, peers, TMO, &h0, NULL);
		took0 = kt_now() - t0;
		atomic_store(&r1.rank0_done, 1);
		pthread_join(thr, NULL);
		fired = knob_read(variant->cls, "times") == 0;
		knob(variant->cls, "times", "0");
		knob(variant->cls, "space", "0");
		TH_LOG("%s n=%u: rank 0 %d after %.1f s, rank 1 %d after %.1f s%s", variant->cls,
		       n, ret0, took0, r1.ret, r1.took, fired ? "" : " (no fault)");
		if (!fired) {
			EXPECT_EQ(0, ret0);
			EXPECT_EQ(0, r1.ret);
		} else if (r1.ret == -ENOMEM) {
			/* Rank 1's (the connecting side's) own resource: rank 0 was aborted. */
			EXPECT_TRUE(peer_failed_errno(ret0)) TH_LOG("rank 0: %d", ret0);
		} else {
			/* Rank 0's, when it accepted rank 1: it must say so, at once. */
			hit_passive++;
			EXPECT_EQ(-ENOMEM, ret0);
			EXPECT_GT(PROMPT_S, took0);
			EXPECT_TRUE(peer_failed_errno(r1.ret)) TH_LOG("rank 1: %d", r1.ret);
		}
		if (h0)
			kt_comm_destroy(self->fd0, h0);
		if (r1.h)
			kt_comm_destroy(self->fd1, r1.h);
	}
	EXPECT_FALSE(fired) TH_LOG("still reaching %s fail points at n = %u", variant->cls, n);
	/* The point of the test: some n failed the accepting side. */
	EXPECT_LE(1, hit_passive);
}

TEST_HARNESS_MAIN
