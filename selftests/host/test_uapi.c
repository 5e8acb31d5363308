// SPDX-License-Identifier: GPL-2.0-only
/*
 * The uAPI is an ABI: these numbers are what binaries built today will pass to every future
 * kernel, so they are pinned here and a change to them fails loudly.
 */
#include <stddef.h>
#include <linux/kcoll.h>

#include "kselftest_harness.h"

TEST(info_layout)
{
	EXPECT_EQ(0, offsetof(struct kcoll_info, size));
	EXPECT_EQ(4, offsetof(struct kcoll_info, flags));
	EXPECT_EQ(8, offsetof(struct kcoll_info, abi_version));
	EXPECT_EQ(12, offsetof(struct kcoll_info, ndevices));
	EXPECT_EQ(16, offsetof(struct kcoll_info, features));
	EXPECT_EQ(24, offsetof(struct kcoll_info, ioctls));
	EXPECT_EQ(32, offsetof(struct kcoll_info, version));
	EXPECT_EQ(64, offsetof(struct kcoll_info, reserved));
	EXPECT_EQ(96, sizeof(struct kcoll_info));
	EXPECT_EQ(KCOLL_INFO_SIZE_VER0, sizeof(struct kcoll_info));
	EXPECT_EQ(32, sizeof(((struct kcoll_info *)0)->version));
	EXPECT_EQ(4, sizeof(((struct kcoll_info *)0)->reserved) / sizeof(__u64));
}

/* __aligned_u64 keeps 32-bit and 64-bit callers on the same layout. */
TEST(info_alignment)
{
	EXPECT_EQ(8, __alignof__(struct kcoll_info));
}

TEST(ioctl_numbers)
{
	EXPECT_EQ(0xCC, KCOLL_IOC_MAGIC);
	EXPECT_EQ(0, KCOLL_IOC_NR_GET_INFO);
	/* _IO(): no size in the number, so the struct can grow without a new command. */
	EXPECT_EQ(0, _IOC_SIZE(KCOLL_IOC_GET_INFO));
	EXPECT_EQ(_IOC_NONE, _IOC_DIR(KCOLL_IOC_GET_INFO));
	EXPECT_EQ(0xCC00, KCOLL_IOC_GET_INFO);
}

TEST(constants)
{
	EXPECT_EQ(1, KCOLL_ABI_VERSION);
	EXPECT_EQ(1ULL, KCOLL_FEAT_RDMA_DEVICES);
	EXPECT_EQ(2ULL, KCOLL_FEAT_SYSFS);
	EXPECT_STREQ("/dev/kcoll", KCOLL_DEVICE_PATH);
	EXPECT_STREQ("kcoll", KCOLL_DEVICE_NAME);
}

TEST_HARNESS_MAIN
