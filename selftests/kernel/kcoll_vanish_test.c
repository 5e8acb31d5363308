// SPDX-License-Identifier: GPL-2.0
/*
 * A VM that vanishes mid-operation: rank 1's whole node powers off (sysrq o: no BYE, no
 * disconnect, its NIC simply stops answering) while rank 0 is in a 64 MiB all-reduce and
 * has a 64 MiB receive pending from it.  Rank 0 gets an error for both within the bound:
 * the keepalive fails a silent peer after op_timeout_ms (10 s by default).
 *
 * Run on 2 nodes by selftests/suites/vanish.sh; rank 1 never returns from its part.
 */
#include <sys/mman.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define COUNT (16ULL << 20)	/* fp32: 64 MiB, seconds on this rig */

/* Power the node off now, as a crash or a pulled cable would look to the peer. */
static void kt_msg_vanish(void)
{
	const char *dir = getenv("RIG_DIR");
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/vanished", dir ? dir : "/tmp");
	f = fopen(path, "w");
	if (f)
		fclose(f);
	sync();
	f = fopen("/proc/sysrq-trigger", "w");
	if (f) {
		fputs("o", f);
		fclose(f);
	}
	pause();
}

FIXTURE(pair) {
	int unused;
};

FIXTURE_SETUP(pair)
{
	if (kt_nranks() != 2)
		SKIP(return, "runs on exactly 2 nodes");
}

FIXTURE_TEARDOWN(pair)
{
}

TEST_F_TIMEOUT(pair, peer_vm_vanishes_mid_allreduce, 120)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(1) };
	unsigned int me = kt_rank();
	struct kcoll_coll a = {
		.size = sizeof(a), .coll = KCOLL_ALLREDUCE, .dtype = KCOLL_FP32,
		.op = KCOLL_SUM, .count = COUNT, .flags = KCOLL_COLL_IN_PLACE,
	};
	float *mem = calloc(COUNT, sizeof(float));
	uint64_t req;
	int fd, ret, status;
	uint32_t h;
	double t0;

	ASSERT_NE(NULL, mem);
	fd = open(KCOLL_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kt_meet("vanish", 0, 2, 600));
	ASSERT_EQ(0, kt_comm_create(fd, kt_comm_id("vanish", 0), me, 2, peers, 120000, &h, NULL));
	a.comm = h;
	a.recvbuf = (uintptr_t)mem;
	if (me == 1) {
		/* Start our side, let it run, then vanish: power off at once, no goodbye. */
		a.flags |= KCOLL_COLL_NONBLOCK;
		ASSERT_EQ(0, kt_ioctl(fd, KCOLL_IOC_COLL, &a));
		usleep(1500000);
		kt_msg_vanish();
		return;
	}
	/* A receive from rank 1 that will never complete, and the all-reduce. */
	ASSERT_EQ(0, kt_p2p(fd, h, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1, NULL, 0, &req));
	t0 = kt_now();
	ret = kt_ioctl(fd, KCOLL_IOC_COLL, &a);
	EXPECT_TRUE(ret == -ETIMEDOUT || ret == -ECONNRESET) TH_LOG("all-reduce: %d", ret);
	/* Rank 1 vanished 1.5 s in: the bound is 10 s after that, plus the watchdog tick. */
	EXPECT_GT(12.5, kt_now() - t0) TH_LOG("took %.1f s", kt_now() - t0);
	ASSERT_EQ(0, kt_wait(fd, h, req, 5000, &status, NULL));
	EXPECT_TRUE(status == -ETIMEDOUT || status == -ECONNRESET) TH_LOG("recv: %d", status);
	EXPECT_EQ(0, kt_comm_destroy(fd, h));
	close(fd);
	free(mem);
}

TEST_HARNESS_MAIN
