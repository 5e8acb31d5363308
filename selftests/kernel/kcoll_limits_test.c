// SPDX-License-Identifier: GPL-2.0
/*
 * Memory limits a local process meets (Documentation/security.rst, "Local users: object
 * lifetimes and limits"), on one-rank communicators in one VM (the node suite):
 *
 *  - user memory pinned for a collective is charged to the caller's RLIMIT_MEMLOCK
 *    (pinned_vm, VmPin), CAP_IPC_LOCK bypasses it, and the charge goes with the pins;
 *  - a buffer is charged to the mm and limit of the process that creates it, whoever
 *    opened the file: a file shared with a child does not multiply the child's limit;
 *  - buffers are charged to the creator's memory cgroup, whose memory.max stops them;
 *  - communicators, buffers and unconsumed non-blocking requests per open file are capped
 *    by module parameters (EMFILE past a cap).
 */
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define PG 4096ULL
#define MIB (1ULL << 20)
#define PARAMS "/sys/module/kcoll/parameters/"

/* RLIMIT_MEMLOCK of @bytes and no CAP_IPC_LOCK (0), or back to @old and the capability. */
static int memlock(rlim_t bytes, const struct rlimit *old)
{
	struct rlimit rl = { bytes, bytes };

	if (old) {
		if (setrlimit(RLIMIT_MEMLOCK, old))
			return -errno;
		return kt_set_ipc_lock(true);
	}
	if (kt_set_ipc_lock(false))
		return -EPERM;
	return setrlimit(RLIMIT_MEMLOCK, &rl) ? -errno : 0;
}

/* A blocking all-reduce of @bytes uint8 on plain memory (in place): 0 or -errno. */
static int allreduce(int fd, uint32_t comm, void *m, uint64_t bytes, bool nonblock,
		     uint64_t *req)
{
	struct kcoll_coll c = {
		.size = sizeof(c), .comm = comm, .coll = KCOLL_ALLREDUCE,
		.dtype = KCOLL_UINT8, .op = KCOLL_SUM, .count = bytes,
		.recvbuf = (uintptr_t)m,
		.flags = KCOLL_COLL_IN_PLACE | (nonblock ? KCOLL_COLL_NONBLOCK : 0),
	};
	int ret = kt_ioctl(fd, KCOLL_IOC_COLL, &c);

	if (req)
		*req = c.req;
	return ret;
}

FIXTURE(one) {
	int fd;
	uint32_t comm;
	struct rlimit old;
};

FIXTURE_SETUP(one)
{
	self->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, kt_one_rank(self->fd, _metadata->name, 0, &self->comm));
	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &self->old));
}

FIXTURE_TEARDOWN(one)
{
	EXPECT_EQ(0, memlock(0, &self->old));
	EXPECT_EQ(0, kt_comm_destroy(self->fd, self->comm));
	close(self->fd);
}

/*
 * A collective's pins count against RLIMIT_MEMLOCK while they last: within the limit it
 * works and the charge is gone after; over it, ENOMEM; CAP_IPC_LOCK bypasses the limit.
 */
TEST_F(one, collective_pins_charged)
{
	size_t len = 4 * MIB;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long pin0 = kt_vm_pin_kb();
	uint64_t req;
	int status = -1;

	ASSERT_NE(MAP_FAILED, m);
	ASSERT_LE(0, pin0);
	memset(m, 1, len);
	ASSERT_EQ(0, memlock(MIB, NULL));
	EXPECT_EQ(0, allreduce(self->fd, self->comm, m, MIB, false, NULL));
	EXPECT_EQ(pin0, kt_vm_pin_settles(pin0));
	EXPECT_EQ(-ENOMEM, allreduce(self->fd, self->comm, m, MIB + 1, false, NULL));
	EXPECT_EQ(-ENOMEM, allreduce(self->fd, self->comm, m, len, false, NULL));
	EXPECT_EQ(-ENOMEM, allreduce(self->fd, self->comm, m, len, true, &req));
	EXPECT_EQ(pin0, kt_vm_pin_kb());
	/* A buffer's charge and a collective's add up against the same limit. */
	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, MIB / 2, NULL, NULL));
	pin0 += MIB / 2 / 1024;
	EXPECT_EQ(pin0, kt_vm_pin_kb());
	EXPECT_EQ(-ENOMEM, allreduce(self->fd, self->comm, m, MIB, false, NULL));
	EXPECT_EQ(0, allreduce(self->fd, self->comm, m, MIB / 2, false, NULL));
	EXPECT_EQ(pin0, kt_vm_pin_settles(pin0));
	ASSERT_EQ(0, allreduce(self->fd, self->comm, m, MIB / 2, true, &req));
	EXPECT_EQ(0, kt_wait(self->fd, self->comm, req, 10000, &status, NULL));
	EXPECT_EQ(0, status);
	EXPECT_EQ(pin0, kt_vm_pin_settles(pin0));
	ASSERT_EQ(0, kt_set_ipc_lock(true));
	EXPECT_EQ(0, allreduce(self->fd, self->comm, m, len, false, NULL));
	EXPECT_EQ(pin0, kt_vm_pin_settles(pin0));
	EXPECT_EQ(0, munmap(m, len));
}

/*
 * The file is the parent's; a child creates buffers on it and on a file of its own.  Each
 * buffer is charged to the child (its VmPin, its limit), none to the parent: the shared
 * file lends the child no second RLIMIT_MEMLOCK.
 */
TEST_F(one, buffer_charged_to_creator)
{
	long pin0 = kt_vm_pin_kb();
	int status;
	pid_t pid;

	ASSERT_LE(0, pin0);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		long cpin0 = kt_vm_pin_kb();
		int fd2 = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		uint32_t comm2;

		if (fd2 < 0 || kt_one_rank(fd2, "buffer_charged_to_creator", 1, &comm2) ||
		    memlock(MIB, NULL))
			_exit(10);
		/* On the parent's file: charged to this process. */
		if (kt_buf_create(self->fd, self->comm, MIB, NULL, NULL))
			_exit(11);
		if (kt_vm_pin_kb() != cpin0 + (long)(MIB / 1024))
			_exit(12);
		/* The limit is spent: not again on another file. */
		if (kt_buf_create(fd2, comm2, PG, NULL, NULL) != -ENOMEM)
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	/* The child's buffer stays on the parent's communicator, charged to nobody alive. */
	EXPECT_EQ(pin0, kt_vm_pin_kb());
}

/*
 * Each cap: a second file is not affected, freeing one slot lets the next call through.
 * The parameters are writable at run time; the test lowers them and restores them.
 */
struct cap {
	const char *param;
	unsigned int dflt;
};

static const struct cap caps[] = {
	{ "max_comms_per_file", 64 },
	{ "max_reqs_per_file", 4096 },
	{ "max_bufs_per_file", 1024 },
};

static void set_param(struct __test_metadata *_metadata, const char *name, long v)
{
	char path[128], s[32];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	snprintf(s, sizeof(s), "%ld", v);
	ASSERT_EQ(0, kt_write_str(path, s));
	ASSERT_EQ(v, kt_read_long(path, -1));
}

TEST(caps_visible_in_sysfs)
{
	char path[128];
	struct stat st;
	unsigned int i;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		snprintf(path, sizeof(path), PARAMS "%s", caps[i].param);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(0644, st.st_mode & 0777);
		EXPECT_EQ(caps[i].dflt, kt_read_long(path, -1)) TH_LOG("%s", path);
	}
}

TEST(comms_per_file)
{
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	int fd2 = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	uint32_t h[3], h2;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	set_param(_metadata, "max_comms_per_file", 2);
	EXPECT_EQ(0, kt_one_rank(fd, "comms_per_file", 0, &h[0]));
	EXPECT_EQ(0, kt_one_rank(fd, "comms_per_file", 1, &h[1]));
	EXPECT_EQ(-EMFILE, kt_one_rank(fd, "comms_per_file", 2, &h[2]));
	EXPECT_EQ(0, kt_one_rank(fd2, "comms_per_file", 3, &h2));
	/* A failed create gives its slot back; a destroyed communicator too. */
	EXPECT_EQ(0, kt_comm_destroy(fd, h[1]));
	EXPECT_EQ(-ENOENT, kt_comm_destroy(fd, h[1]));
	EXPECT_EQ(0, kt_one_rank(fd, "comms_per_file", 4, &h[2]));
	EXPECT_EQ(-EMFILE, kt_one_rank(fd, "comms_per_file", 5, &h[1]));
	set_param(_metadata, "max_comms_per_file", 64);
	EXPECT_EQ(0, kt_comm_destroy(fd, h[0]));
	EXPECT_EQ(0, kt_comm_destroy(fd, h[2]));
	EXPECT_EQ(0, kt_comm_destroy(fd2, h2));
	close(fd);
	close(fd2);
}

TEST_F(one, bufs_per_file)
{
	uint32_t h[3];
	uint64_t off;
	void *m;

	set_param(_metadata, "max_bufs_per_file", 2);
	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, PG, &h[0], &off));
	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, PG, &h[1], NULL));
	EXPECT_EQ(-EMFILE, kt_buf_create(self->fd, self->comm, PG, &h[2], NULL));
	/* Destroyed but still mapped: the pages stay charged, the slot is free. */
	m = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h[0]));
	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, PG, &h[2], NULL));
	EXPECT_EQ(-EMFILE, kt_buf_create(self->fd, self->comm, PG, &h[0], NULL));
	EXPECT_EQ(0, munmap(m, PG));
	set_param(_metadata, "max_bufs_per_file", 1024);
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h[1]));
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h[2]));
}

/* Non-blocking collectives not waited for yet count; blocking ones do not. */
TEST_F(one, reqs_per_file)
{
	char m[64] = "";
	uint64_t req[3];
	int status = -1, i;

	set_param(_metadata, "max_reqs_per_file", 2);
	EXPECT_EQ(0, allreduce(self->fd, self->comm, m, sizeof(m), true, &req[0]));
	EXPECT_EQ(0, allreduce(self->fd, self->comm, m, sizeof(m), true, &req[1]));
	EXPECT_EQ(-EMFILE, allreduce(self->fd, self->comm, m, sizeof(m), true, &req[2]));
	EXPECT_EQ(0, allreduce(self->fd, self->comm, m, sizeof(m), false, NULL));
	EXPECT_EQ(0, kt_wait(self->fd, self->comm, req[0], 10000, &status, NULL));
	EXPECT_EQ(0, allreduce(self->fd, self->comm, m, sizeof(m), true, &req[2]));
	EXPECT_EQ(-EMFILE, allreduce(self->fd, self->comm, m, sizeof(m), true, &req[0]));
	set_param(_metadata, "max_reqs_per_file", 4096);
	for (i = 1; i < 3; i++)
		EXPECT_EQ(0, kt_wait(self->fd, self->comm, req[i], 10000, &status, NULL));
}

/*
 * Memory cgroup (v2): a child in a group with memory.max creates 4 MiB buffers until one
 * fails with ENOMEM (the group's OOM killer stays out of it).  Buffer pages are charged to the
 * group: memory.current grows by at least each buffer, and the group's limit stops it.
 */
#define CG "/sys/fs/cgroup"
#define CG_DIR CG "/kcoll_limits_test"
#define CG_MAX (32 * MIB)
#define CG_BUF (4 * MIB)
#define CG_TRIES 32

static int cg2(void)
{
	struct stat st;

	if (stat(CG "/cgroup.controllers", &st)) {
		if (mount("cgroup2", CG, "cgroup2", 0, NULL))
			return -errno;
	}
	return kt_write_str(CG "/cgroup.subtree_control", "+memory");
}

TEST(memcg_sees_buffers)
{
	int fd, p[2], status, n = 0, ret;
	long c0, c[CG_TRIES + 1];
	char s[32];
	pid_t pid;

	ret = cg2();
	if (ret)
		SKIP(return, "no cgroup2 memory controller (%d)", ret);
	rmdir(CG_DIR);
	ASSERT_EQ(0, mkdir(CG_DIR, 0755));
	snprintf(s, sizeof(s), "%llu", CG_MAX);
	ASSERT_EQ(0, kt_write_str(CG_DIR "/memory.max", s));
	kt_write_str(CG_DIR "/memory.swap.max", "0");	/* absent without swap accounting */
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uint32_t comm;
		long cur;
		int i;

		close(p[0]);
		snprintf(s, sizeof(s), "%d", getpid());
		if (kt_write_str(CG_DIR "/cgroup.procs", s))
			_exit(10);
		fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0 || kt_one_rank(fd, "memcg_sees_buffers", 0, &comm))
			_exit(11);
		cur = kt_read_long(CG_DIR "/memory.current", -1);
		if (write(p[1], &cur, sizeof(cur)) != sizeof(cur))
			_exit(12);
		for (i = 0; i < CG_TRIES; i++) {
			int ret = kt_buf_create(fd, comm, CG_BUF, NULL, NULL);

			if (ret == -ENOMEM)
				break;
			if (ret)
				_exit(13);
			cur = kt_read_long(CG_DIR "/memory.current", -1);
			if (write(p[1], &cur, sizeof(cur)) != sizeof(cur))
				_exit(12);
		}
		_exit(0);
	}
	close(p[1]);
	while (n <= CG_TRIES && read(p[0], &c[n], sizeof(c[n])) == sizeof(c[n]))
		n++;
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* ENOMEM, not the OOM killer: the size was the caller's choice. */
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("%#x", status);
	ASSERT_LE(1, n);
	c0 = c[0];
	TH_LOG("%d buffers of 4 MiB in a group of %llu MiB; memory.current %ld -> %ld", n - 1,
	       CG_MAX / MIB, c0, c[n - 1]);
	/* Each buffer shows in the group, and the group's limit ends the loop. */
	EXPECT_LE(c0 + (long)((n - 1) * CG_BUF), c[n - 1]);
	EXPECT_GT(CG_TRIES, n - 1);
	EXPECT_GE(CG_MAX / CG_BUF, (unsigned long long)(n - 1));
	EXPECT_EQ(0, rmdir(CG_DIR));
}

TEST_HARNESS_MAIN
