// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy buffers across rig VMs: collective creation, mmap, point-to-point on buffers,
 * RLIMIT_MEMLOCK charged exactly, destroy while mapped, bad arguments.  Every node runs
 * it at once; node i is rank i.
 */
#include <sys/mman.h>
#include <sys/resource.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define PG 4096UL

FIXTURE(world) {
	int fd;
	uint32_t comm;
	unsigned int rank, nranks;
};

FIXTURE_SETUP(world)
{
	self->rank = kt_rank();
	self->nranks = kt_nranks();
	if (self->nranks < 2)
		SKIP(return, "needs at least 2 nodes");
	self->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, kt_comm_world(self->fd, _metadata->name, 0, &self->comm));
}

FIXTURE_TEARDOWN(world)
{
	if (self->nranks >= 2) {
		EXPECT_EQ(0, kt_barrier(self->fd, self->comm));
		EXPECT_EQ(0, kt_comm_destroy(self->fd, self->comm));
		close(self->fd);
	}
}

static int p2p_buf(int fd, uint32_t comm, uint32_t flags, unsigned int peer, uint32_t h,
		   uint64_t off, uint64_t len, uint64_t *out)
{
	struct kcoll_p2p p = {
		.size = sizeof(p), .flags = flags | KCOLL_P2P_BUF, .comm = comm, .peer = peer,
		.addr = off, .len = len, .buf = h,
	};
	int ret = kt_ioctl(fd, KCOLL_IOC_P2P, &p);

	if (out)
		*out = flags & KCOLL_P2P_NONBLOCK ? p.req : p.result;
	return ret;
}

/* A ring over buffers: receive from the previous rank, send to the next, check bytes. */
TEST_F_TIMEOUT(world, ring_on_buffers, 300)
{
	unsigned int me = self->rank, n = self->nranks;
	unsigned int next = (me + 1) % n, prev = (me + n - 1) % n;
	uint64_t sizes[] = { 0, 1, 4095, 4096, (1 << 20) + 3 }, len = 4 << 20, req, got;
	uint64_t off;
	unsigned char *m;
	uint32_t h;
	unsigned int k;
	int status;

	ASSERT_EQ(0, kt_buf_create(self->fd, self->comm, len, &h, &off));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, m);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint64_t sz = sizes[k], i, bad = 0, roff = 2 << 20, soff = 77;

		for (i = 0; i < sz; i++)
			m[soff + i] = kt_byte(me, sz, i);
		memset(m + roff, 0, sz + 16);
		ASSERT_EQ(0, p2p_buf(self->fd, self->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK,
				     prev, h, roff, sz + 16, &req));
		ASSERT_EQ(0, p2p_buf(self->fd, self->comm, KCOLL_P2P_SEND, next, h, soff, sz,
				     NULL));
		ASSERT_EQ(0, kt_wait(self->fd, self->comm, req, 60000, &status, &got));
		ASSERT_EQ(0, status);
		EXPECT_EQ(sz, got);
		for (i = 0; i < sz; i++)
			bad += m[roff + i] != kt_byte(prev, sz, i);
		EXPECT_EQ(0, bad) TH_LOG("size %llu", (unsigned long long)sz);
		EXPECT_EQ(0, m[roff + sz]);	/* nothing beyond the message */
	}
	EXPECT_EQ(0, kt_barrier(self->fd, self->comm));
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
	munmap(m, len);
}

/*
 * RLIMIT_MEMLOCK is exact: a buffer of the limit fits, one page more does not; a lower
 * limit refuses it; the charge lives as long as the pages (a mapping after destroy keeps
 * it).  Every rank runs the same limits, so creation fails or succeeds everywhere alike.
 */
TEST_F_TIMEOUT(world, memlock_exact, 300)
{
	const uint64_t lim = 1 << 20;
	struct rlimit old, rl = { lim, lim };
	uint64_t off;
	uint32_t h;
	void *m;

	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &old));
	ASSERT_EQ(0, kt_set_ipc_lock(false));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));

	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, lim, &h, &off));
	EXPECT_EQ(-ENOMEM, kt_buf_create(self->fd, self->comm, PG, NULL, NULL));
	m = mmap(NULL, lim, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 1, lim);
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
	/* Destroyed but still mapped: the pages, and their charge, are still there. */
	EXPECT_EQ(-ENOMEM, kt_buf_create(self->fd, self->comm, PG, NULL, NULL));
	EXPECT_EQ(1, ((unsigned char *)m)[lim - 1]);
	munmap(m, lim);
	/* Unmapped: charge back; one page over the limit is still refused. */
	EXPECT_EQ(-ENOMEM, kt_buf_create(self->fd, self->comm, lim + PG, NULL, NULL));
	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, lim, &h, NULL));
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
	/* Just below: refused. */
	rl.rlim_cur = lim - PG;
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	EXPECT_EQ(-ENOMEM, kt_buf_create(self->fd, self->comm, lim, NULL, NULL));
	/* CAP_IPC_LOCK bypasses the limit. */
	ASSERT_EQ(0, kt_set_ipc_lock(true));
	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, lim, &h, NULL));
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &old));
}

/* Destroy while mapped: the mapping stays valid memory; the handle and offset are gone. */
TEST_F_TIMEOUT(world, destroy_while_mapped, 120)
{
	uint64_t off, len = 64 * PG;
	unsigned char *m;
	uint32_t h;

	ASSERT_EQ(0, kt_buf_create(self->fd, self->comm, len, &h, &off));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, m[0]);			/* zeroed */
	memset(m, 0x42, len);
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
	EXPECT_EQ(-ENOENT, kt_buf_destroy(self->fd, self->comm, h));
	EXPECT_EQ(0x42, m[len - 1]);
	memset(m, 0x43, len);			/* still writable, still ours */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd, off));
	EXPECT_EQ(-ENOENT, p2p_buf(self->fd, self->comm, KCOLL_P2P_SEND, (self->rank + 1) %
				   self->nranks, h, 0, 1, NULL));
	EXPECT_EQ(0, munmap(m, len));
}

/* A buffer still mapped when its communicator (and then the file) goes: no leak, no oops. */
TEST_F_TIMEOUT(world, mapping_outlives_file, 120)
{
	uint64_t off, len = 16 * PG;
	unsigned char *m;
	int fd;
	uint32_t c;

	fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kt_comm_world(fd, "mapping_outlives_file", 1, &c));
	ASSERT_EQ(0, kt_buf_create(fd, c, len, NULL, &off));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, kt_barrier(fd, c));
	EXPECT_EQ(0, kt_comm_destroy(fd, c));
	close(fd);
	memset(m, 7, len);
	EXPECT_EQ(7, m[len / 2]);
	EXPECT_EQ(0, munmap(m, len));
}

TEST_F_TIMEOUT(world, bad_arguments, 120)
{
	struct kcoll_buf_create bc = { .size = sizeof(bc), .comm = self->comm, .length = PG };
	uint64_t off;
	uint32_t h;
	void *m;

	bc.length = 0;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->fd, KCOLL_IOC_BUF_CREATE, &bc));
	bc.length = 1ULL << 40;			/* above max_buf_mb */
	EXPECT_EQ(-EINVAL, kt_ioctl(self->fd, KCOLL_IOC_BUF_CREATE, &bc));
	bc.length = PG;
	bc.flags = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->fd, KCOLL_IOC_BUF_CREATE, &bc));
	bc.flags = 0;
	bc.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->fd, KCOLL_IOC_BUF_CREATE, &bc));
	bc.reserved[1] = 0;
	bc.comm = 4242;
	EXPECT_EQ(-ENOENT, kt_ioctl(self->fd, KCOLL_IOC_BUF_CREATE, &bc));
	EXPECT_EQ(-ENOENT, kt_buf_destroy(self->fd, self->comm, 4242));

	ASSERT_EQ(0, kt_buf_create(self->fd, self->comm, 3 * PG + 5, &h, &off));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd,
				   off));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 5 * PG, PROT_READ, MAP_SHARED, self->fd, off));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PG, PROT_READ, MAP_SHARED, self->fd, off + 999 * PG));
	m = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, m);
	/* Past the length asked for (not the page rounding): ERANGE. */
	EXPECT_EQ(-ERANGE, p2p_buf(self->fd, self->comm, KCOLL_P2P_SEND,
				   (self->rank + 1) % self->nranks, h, 3 * PG, 6, NULL));
	EXPECT_EQ(-ENOENT, p2p_buf(self->fd, self->comm, KCOLL_P2P_SEND,
				   (self->rank + 1) % self->nranks, h + 1, 0, 1, NULL));
	munmap(m, 4 * PG);
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
}

/* Ranks that disagree about a buffer's length all get EINVAL; the comm stays usable. */
TEST_F_TIMEOUT(world, length_mismatch_is_einval_everywhere, 120)
{
	uint32_t h;

	EXPECT_EQ(-EINVAL, kt_buf_create(self->fd, self->comm, self->rank ? PG : 2 * PG, NULL,
				      NULL));
	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, PG, &h, NULL));
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
}

TEST_HARNESS_MAIN
