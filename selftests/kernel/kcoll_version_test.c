// SPDX-License-Identifier: GPL-2.0
/*
 * A peer speaking another wire protocol version is refused on both sides.  Run on nodes 0
 * and 1 after node 1 loaded kcoll with proto_version=1, the version before EAGER
 * (selftests/suites/cluster.sh).
 */
#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

TEST(version_mismatch_is_refused)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(1) };
	unsigned int me = kt_rank();
	uint32_t failed = 0;
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (kt_nranks() < 2 || me > 1)
		SKIP(return, "runs on nodes 0 and 1");
	ASSERT_LE(0, fd);
	if (me == 1) {
		/* The connecting side learns why from the refusal. */
		EXPECT_EQ(-EPROTONOSUPPORT, kt_comm_create(fd, kt_comm_id("version", 0), 1, 2,
							   peers, 30000, NULL, &failed));
		EXPECT_EQ(0, failed);
	} else {
		/* The accepting side refused it and so never hears from rank 1. */
		EXPECT_EQ(-ETIMEDOUT, kt_comm_create(fd, kt_comm_id("version", 0), 0, 2, peers,
						     8000, NULL, &failed));
		EXPECT_EQ(1, failed);
	}
	close(fd);
}

TEST_HARNESS_MAIN
