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
#include "kcoll_failnth.h"
#include "kcoll_failnth_ioctl.h"
#include "kcoll_failnth_nl.h"
#include "kselftest_harness.h"

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
	.nranks = 1, .call = call_buf_create, .check = check_buf };
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
	.nranks = 1, .call = call_allreduce, .check = check_allreduce1 };
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
	name = variant_name(_metadata, variant);
	if (cases) {
		char pat[64], all[512];

		snprintf(pat, sizeof(pat), " %s ", name);
		snprintf(all, sizeof(all), " %s ", cases);
		if (!strstr(all, pat))
			SKIP(return, "not in KT_FAILNTH_CASES");
	}
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
