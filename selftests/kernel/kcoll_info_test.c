// SPDX-License-Identifier: GPL-2.0
/*
 * KCOLL_IOC_GET_INFO: the happy path and every bad input the uAPI promises an errno for.
 * Runs inside a rig VM with kcoll loaded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kcoll.h>

#include "kselftest_harness.h"

static int read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(buf, len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static unsigned int count_sysfs_devices(void)
{
	DIR *d = opendir("/sys/kernel/kcoll/devices");
	struct dirent *e;
	unsigned int n = 0;

	if (!d)
		return ~0u;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ioctl() result folded into 0 or -errno, so tests compare against one value. */
static int get_info(int fd, void *arg)
{
	return ioctl(fd, KCOLL_IOC_GET_INFO, arg) ? -errno : 0;
}

FIXTURE(info) {
	int fd;
	struct kcoll_info info;
};

FIXTURE_SETUP(info)
{
	self->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", KCOLL_DEVICE_PATH, strerror(errno));
	memset(&self->info, 0, sizeof(self->info));
	self->info.size = sizeof(self->info);
}

FIXTURE_TEARDOWN(info)
{
	close(self->fd);
}

TEST_F(info, reports_module_state)
{
	char buf[64];
	struct kcoll_info *info = &self->info;
	unsigned int i;

	ASSERT_EQ(0, get_info(self->fd, info));
	EXPECT_EQ(sizeof(*info), info->size);
	EXPECT_EQ(0, info->flags);
	EXPECT_EQ(KCOLL_ABI_VERSION, info->abi_version);
	EXPECT_TRUE(info->features & KCOLL_FEAT_RDMA_DEVICES);
	EXPECT_TRUE(info->features & KCOLL_FEAT_SYSFS);
	EXPECT_TRUE(info->ioctls & (1ULL << KCOLL_IOC_NR_GET_INFO));
	EXPECT_EQ(count_sysfs_devices(), info->ndevices);
	EXPECT_NE(NULL, memchr(info->version, '\0', sizeof(info->version)));
	ASSERT_EQ(0, read_sysfs("/sys/kernel/kcoll/version", buf, sizeof(buf)));
	EXPECT_STREQ(buf, info->version);
	ASSERT_EQ(0, read_sysfs("/sys/kernel/kcoll/abi_version", buf, sizeof(buf)));
	EXPECT_EQ(info->abi_version, strtoul(buf, NULL, 0));
	ASSERT_EQ(0, read_sysfs("/sys/kernel/kcoll/features", buf, sizeof(buf)));
	EXPECT_EQ(info->features, strtoull(buf, NULL, 0));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, info->reserved[i]);
}

TEST_F(info, size_below_first_version_is_einval)
{
	uint32_t sizes[] = { 0, 4, 8, KCOLL_INFO_SIZE_VER0 - 8, KCOLL_INFO_SIZE_VER0 - 1 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		self->info.size = sizes[i];
		EXPECT_EQ(-EINVAL, get_info(self->fd, &self->info)) TH_LOG("size %u", sizes[i]);
		/* Nothing is written back on error. */
		EXPECT_EQ(0, self->info.abi_version);
	}
}

TEST_F(info, unknown_flags_are_einval)
{
	uint32_t flags[] = { 1, 2, 0x80000000u, ~0u };
	unsigned int i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		self->info.flags = flags[i];
		EXPECT_EQ(-EINVAL, get_info(self->fd, &self->info)) TH_LOG("flags %#x", flags[i]);
	}
}

TEST_F(info, nonzero_reserved_is_einval)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		memset(self->info.reserved, 0, sizeof(self->info.reserved));
		self->info.reserved[i] = 1ULL << (i * 9);
		EXPECT_EQ(-EINVAL, get_info(self->fd, &self->info)) TH_LOG("reserved[%u]", i);
	}
}

/* A newer caller whose extra fields are all zero is served as if it were this version. */
TEST_F(info, larger_size_with_zero_tail_is_accepted)
{
	unsigned char buf[sizeof(struct kcoll_info) + 64];
	struct kcoll_info *info = (struct kcoll_info *)buf;
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	info->size = sizeof(buf);
	ASSERT_EQ(0, get_info(self->fd, buf));
	EXPECT_EQ(KCOLL_ABI_VERSION, info->abi_version);
	for (i = sizeof(struct kcoll_info); i < sizeof(buf); i++)
		ASSERT_EQ(0, buf[i]) TH_LOG("kernel wrote past its struct at byte %u", i);
}

TEST_F(info, larger_size_with_nonzero_tail_is_e2big)
{
	unsigned char buf[sizeof(struct kcoll_info) + 64];
	struct kcoll_info *info = (struct kcoll_info *)buf;

	memset(buf, 0, sizeof(buf));
	info->size = sizeof(buf);
	buf[sizeof(buf) - 1] = 0x5a;
	EXPECT_EQ(-E2BIG, get_info(self->fd, buf));
	buf[sizeof(buf) - 1] = 0;
	buf[sizeof(struct kcoll_info)] = 1;
	EXPECT_EQ(-E2BIG, get_info(self->fd, buf));
}

TEST_F(info, absurd_size_is_e2big)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *buf = calloc(1, 2 * page);

	ASSERT_NE(NULL, buf);
	((struct kcoll_info *)buf)->size = page + 1;
	EXPECT_EQ(-E2BIG, get_info(self->fd, buf));
	((struct kcoll_info *)buf)->size = ~0u;
	EXPECT_EQ(-E2BIG, get_info(self->fd, buf));
	free(buf);
}

TEST_F(info, bad_pointer_is_efault)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *map;
	struct kcoll_info *info;

	EXPECT_EQ(-EFAULT, get_info(self->fd, NULL));
	EXPECT_EQ(-EFAULT, get_info(self->fd, (void *)16));

	/* Two pages, the second inaccessible: the struct straddles the boundary. */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_NONE));
	info = (struct kcoll_info *)(map + page - 16);
	info->size = sizeof(*info);
	EXPECT_EQ(-EFAULT, get_info(self->fd, info));
	EXPECT_EQ(-EFAULT, get_info(self->fd, map + page));

	/* Readable but not writable: the copy back fails. */
	info = (struct kcoll_info *)map;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	ASSERT_EQ(0, mprotect(map, page, PROT_READ));
	EXPECT_EQ(-EFAULT, get_info(self->fd, info));
	munmap(map, 2 * page);
}

TEST_F(info, unknown_commands_are_enotty)
{
	unsigned long cmds[] = {
		_IO(KCOLL_IOC_MAGIC, 0x7f),
		_IO(KCOLL_IOC_MAGIC, 0xff),
		_IO(KCOLL_IOC_MAGIC + 1, KCOLL_IOC_NR_GET_INFO),
		/* Same number, other encoding: the size is deliberately not in our commands. */
		_IOWR(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_GET_INFO, struct kcoll_info),
		0,
	};
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		errno = 0;
		EXPECT_EQ(-1, ioctl(self->fd, cmds[i], &self->info)) TH_LOG("cmd %#lx", cmds[i]);
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd %#lx", cmds[i]);
	}
}

TEST_F(info, output_never_exceeds_caller_size)
{
	struct kcoll_info *info = &self->info;

	/* Exactly the first version's size: everything fits, nothing more. */
	info->size = KCOLL_INFO_SIZE_VER0;
	ASSERT_EQ(0, get_info(self->fd, info));
	EXPECT_EQ(KCOLL_ABI_VERSION, info->abi_version);
}

TEST_HARNESS_MAIN
