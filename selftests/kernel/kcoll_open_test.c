// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kcoll open files: per-open contexts are created and freed, counted in sysfs, and pin
 * the module.  Runs inside a rig VM with kcoll loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kcoll.h>

#include "kselftest_harness.h"

#define CONTEXTS "/sys/kernel/kcoll/contexts"

static long read_contexts(void)
{
	FILE *f = fopen(CONTEXTS, "r");
	long n = -1;

	if (!f)
		return -errno;
	if (fscanf(f, "%ld", &n) != 1)
		n = -EIO;
	fclose(f);
	return n;
}

TEST(open_close_1000_cycles)
{
	long before = read_contexts();
	int i, fd;

	ASSERT_LE(0, before);
	for (i = 0; i < 1000; i++) {
		fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd) TH_LOG("cycle %d: %s", i, strerror(errno));
		ASSERT_EQ(0, close(fd));
	}
	EXPECT_EQ(before, read_contexts());
}

TEST(contexts_counts_open_files)
{
	long before = read_contexts();
	int fds[3], i;

	for (i = 0; i < 3; i++) {
		fds[i] = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]);
		EXPECT_EQ(before + i + 1, read_contexts());
	}
	/* dup() shares the open file: no new context. */
	i = dup(fds[0]);
	ASSERT_LE(0, i);
	EXPECT_EQ(before + 3, read_contexts());
	close(i);
	for (i = 0; i < 3; i++)
		close(fds[i]);
	EXPECT_EQ(before, read_contexts());
}

/* A process that exits without closing loses its context all the same. */
TEST(context_freed_on_exit)
{
	long before = read_contexts();
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (open(KCOLL_DEVICE_PATH, O_RDWR) < 0)
			_exit(1);
		_exit(read_contexts() == before + 1 ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(before, read_contexts());
}

TEST(rmmod_refused_while_open)
{
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "kcoll", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_EQ(0, access("/sys/module/kcoll", F_OK));
	/* Still fully usable after the refused unload. */
	EXPECT_EQ(0, access("/sys/kernel/kcoll/version", F_OK));
	close(fd);
}

TEST(open_without_rdwr_still_works)
{
	int fd = open(KCOLL_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
	struct kcoll_info info = { .size = sizeof(info) };

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, KCOLL_IOC_GET_INFO, &info));
	close(fd);
}

TEST_HARNESS_MAIN
