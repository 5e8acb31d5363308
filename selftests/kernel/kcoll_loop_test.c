// SPDX-License-Identifier: GPL-2.0
/*
 * The loopback transport proves the transport interface: two ranks in one VM, without any
 * RDMA device, on a communicator whose peer table names only 127.0.0.1.  Rank 0 is this
 * process, rank 1 a forked child with its own file; they run an all-reduce (values
 * checked), an eager and a rendezvous message, a buffer's all-reduce, then destroy.  A
 * rank killed (SIGKILL) in the middle of a call fails the other's call well within its
 * timeout.  Non-blocking transfers and collectives share one request table.  Run by the node suite where no RDMA device exists.
 */
#include "kselftest_harness.h"
#include "kcoll_test_comm.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>

#define LOOP_COUNT	(64 * 1024)		/* int32 elements: rendezvous-sized */
#define LOOP_EAGER	256			/* an eager message */
#define LOOP_BIG	(1024 * 1024 + 3)	/* a rendezvous message, odd length */

static const struct kcoll_sockaddr loop_peers[2] = {
	{ .family = AF_INET, .addr = { 127, 0, 0, 1 } },
	{ .family = AF_INET, .addr = { 127, 0, 0, 1 } },
};

/* RDMA devices present (the test means to run without any). */
static int loop_rdma_devices(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int loop_create(int fd, uint64_t id, unsigned int rank, uint32_t *h)
{
	return kt_comm_create(fd, id, rank, 2, loop_peers, 30000, h, NULL);
}

static int loop_allreduce(int fd, uint32_t h, uint32_t flags, uint64_t send, uint64_t recv,
			  uint32_t sh, uint32_t rh, uint64_t count)
{
	struct kcoll_coll c = {
		.size = sizeof(c),
		.flags = flags,
		.comm = h,
		.coll = KCOLL_ALLREDUCE,
		.dtype = KCOLL_INT32,
		.op = KCOLL_SUM,
		.timeout_ms = 30000,
		.count = count,
		.sendbuf = send,
		.recvbuf = recv,
		.send_handle = sh,
		.recv_handle = rh,
	};

	return kt_ioctl(fd, KCOLL_IOC_COLL, &c);
}

static unsigned char loop_byte(uint64_t i) { return (unsigned char)(i * 7 + 3); }

/* One rank's whole run; 0 or the first failing step (a positive number). */
static int loop_rank(uint64_t id, unsigned int rank)
{
	int32_t *in = malloc(LOOP_COUNT * 4), *out = malloc(LOOP_COUNT * 4);
	unsigned char *msg = malloc(LOOP_BIG);
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	unsigned int peer = !rank;
	uint64_t got, boff, i;
	int32_t *bmap;
	uint32_t h, bh;
	int ret = 0;

	if (fd < 0 || !in || !out || !msg)
		return 1;
	if (loop_create(fd, id, rank, &h))
		return 2;
	for (i = 0; i < LOOP_COUNT; i++)
		in[i] = (int32_t)(i * (rank + 1));
	if (loop_allreduce(fd, h, 0, (uintptr_t)in, (uintptr_t)out, 0, 0, LOOP_COUNT))
		return 3;
	for (i = 0; i < LOOP_COUNT; i++)
		if (out[i] != (int32_t)(3 * i))
			return 4;
	/* Eager then rendezvous, rank 0 to rank 1. */
	if (rank == 0) {
		for (i = 0; i < LOOP_BIG; i++)
			msg[i] = loop_byte(i);
		if (kt_p2p(fd, h, KCOLL_P2P_SEND, peer, msg, LOOP_EAGER, NULL) ||
		    kt_p2p(fd, h, KCOLL_P2P_SEND, peer, msg, LOOP_BIG, NULL))
			return 5;
	} else {
		memset(msg, 0, LOOP_BIG);
		if (kt_p2p(fd, h, KCOLL_P2P_RECV, peer, msg, LOOP_BIG, &got) || got != LOOP_EAGER)
			return 6;
		for (i = 0; i < LOOP_EAGER; i++)
			if (msg[i] != loop_byte(i))
				return 7;
		memset(msg, 0, LOOP_BIG);
		if (kt_p2p(fd, h, KCOLL_P2P_RECV, peer, msg, LOOP_BIG, &got) || got != LOOP_BIG)
			return 8;
		for (i = 0; i < LOOP_BIG; i++)
			if (msg[i] != loop_byte(i))
				return 9;
	}
	/* A registered buffer, in place: every peer writes into it. */
	if (kt_buf_create(fd, h, LOOP_COUNT * 4, &bh, &boff)) {
		ret = 10;
		goto out;
	}
	bmap = mmap(NULL, LOOP_COUNT * 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, boff);
	if (bmap == MAP_FAILED) {
		ret = 11;
		goto out;
	}
	for (i = 0; i < LOOP_COUNT; i++)
		bmap[i] = (int32_t)(rank + 1);
	if (loop_allreduce(fd, h, KCOLL_COLL_IN_PLACE | KCOLL_COLL_SEND_BUF | KCOLL_COLL_RECV_BUF,
			   0, 0, bh, bh, LOOP_COUNT))
		ret = 12;
	for (i = 0; !ret && i < LOOP_COUNT; i++)
		if (bmap[i] != 3)
			ret = 13;
	munmap(bmap, LOOP_COUNT * 4);
	if (!ret && kt_buf_destroy(fd, h, bh))
		ret = 14;
	/* Destroy only after both finished (kt_barrier()'s reason). */
	if (!ret && loop_allreduce(fd, h, 0, (uintptr_t)in, (uintptr_t)out, 0, 0, 1))
		ret = 15;
out:
	if (kt_comm_destroy(fd, h))
		ret = ret ?: 16;
	close(fd);
	free(in);
	free(out);
	free(msg);
	return ret;
}

/* Run @rank_fn as rank 1 in a forked child and as rank 0 here; both must return 0. */
static void loop_pair(struct __test_metadata *_metadata, uint64_t id,
		      int (*rank_fn)(uint64_t id, unsigned int rank))
{
	int status, ret;
	pid_t child;

	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(rank_fn(id, 1));
	ret = rank_fn(id, 0);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, ret) TH_LOG("rank 0 failed at step %d", ret);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("rank 1 failed at step %d",
						 WEXITSTATUS(status));
	EXPECT_EQ(0, kt_count_comms());
}

TEST(two_ranks_no_device)
{
	uint64_t id = kt_comm_id("loop_two_ranks", 0);

	TH_LOG("RDMA devices present: %d", loop_rdma_devices());
	EXPECT_EQ(0, loop_rdma_devices());
	loop_pair(_metadata, id, loop_rank);
}

/* A rank killed in a call: the other's call fails, well before its timeout. */
TEST(killed_rank)
{
	uint64_t id = kt_comm_id("loop_killed", 0);
	int32_t in[256] = { 1 }, out[256];
	int pipefd[2], status, st = 0, ret;
	uint32_t h;
	uint64_t req;
	pid_t child;
	double t0;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		unsigned char buf[64];

		close(pipefd[0]);
		if (fd < 0 || loop_create(fd, id, 1, &h))
			_exit(1);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(2);
		/* Mid-call: a receive rank 0 never sends; killed in it. */
		kt_p2p(fd, h, KCOLL_P2P_RECV, 0, buf, sizeof(buf), NULL);
		_exit(3);
	}
	close(pipefd[1]);
	{
		int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, loop_create(fd, id, 0, &h));
		ASSERT_EQ(1, read(pipefd[0], &c, 1));
		/* A receive rank 1 never answers: pending when rank 1 dies. */
		ASSERT_EQ(0, kt_p2p(fd, h, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1, out,
				    sizeof(out), &req));
		usleep(200 * 1000);
		t0 = kt_now();
		kill(child, SIGKILL);
		ASSERT_EQ(child, waitpid(child, &status, 0));
		ret = kt_wait(fd, h, req, 30000, &st, NULL);
		EXPECT_NE(0, ret ?: st) TH_LOG("the receive from a killed rank succeeded");
		EXPECT_LT(kt_now() - t0, 25.0);
		TH_LOG("wait %d, status %d after %.2f s", ret, st, kt_now() - t0);
		EXPECT_NE(0, loop_allreduce(fd, h, 0, (uintptr_t)in, (uintptr_t)out, 0, 0, 256));
		EXPECT_EQ(0, kt_comm_destroy(fd, h));
		close(fd);
	}
	close(pipefd[0]);
	EXPECT_EQ(0, kt_count_comms());
}

/*
 * Transfers and collectives share one request table: ids from one allocator (none above
 * 2^31, none repeated while outstanding), one WAIT for either kind, in any order, each
 * consumed once, and poll() reporting both.  0 or the first failing step.
 */
static int loop_one_table(uint64_t id, unsigned int rank)
{
	int32_t in[1024], out[1024], msg[64], got[64];
	struct pollfd pfd = { .events = POLLIN };
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	uint64_t req[3], res;
	struct kcoll_coll c;
	int i, j, st;
	uint32_t h;

	if (fd < 0 || loop_create(fd, id, rank, &h))
		return 1;
	for (i = 0; i < 1024; i++)
		in[i] = (int32_t)(rank + 1);
	for (i = 0; i < 64; i++)
		msg[i] = (int32_t)(rank * 1000 + i);
	/*
	 * The transfers first: each takes its sequence number when posted, and the
	 * collective's steps, posted after on both ranks, come after them in both directions.
	 */
	if (kt_p2p(fd, h, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, !rank, got, sizeof(got), &req[0]))
		return 2;
	if (kt_p2p(fd, h, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, !rank, msg, sizeof(msg), &req[1]))
		return 3;
	c = (struct kcoll_coll){
		.size = sizeof(c), .flags = KCOLL_COLL_NONBLOCK, .comm = h,
		.coll = KCOLL_ALLREDUCE, .dtype = KCOLL_INT32, .op = KCOLL_SUM,
		.count = 1024, .sendbuf = (uintptr_t)in, .recvbuf = (uintptr_t)out,
	};
	if (kt_ioctl(fd, KCOLL_IOC_COLL, &c))
		return 4;
	req[2] = c.req;
	for (i = 0; i < 3; i++) {
		if (!req[i] || req[i] >= 1ULL << 31)
			return 5;
		for (j = 0; j < i; j++)
			if (req[i] == req[j])
				return 6;
	}
	pfd.fd = fd;
	if (poll(&pfd, 1, 30000) != 1 || !(pfd.revents & POLLIN))
		return 7;
	/* The collective first, then the send, then the receive. */
	if (kt_wait(fd, h, req[2], 30000, &st, &res) || st || res != sizeof(in))
		return 8;
	for (i = 0; i < 1024; i++)
		if (out[i] != 3)
			return 9;
	if (kt_wait(fd, h, req[1], 30000, &st, NULL) || st)
		return 10;
	if (kt_wait(fd, h, req[0], 30000, &st, &res) || st || res != sizeof(got))
		return 11;
	for (i = 0; i < 64; i++)
		if (got[i] != (int32_t)(!rank * 1000 + i))
			return 12;
	/* Each was consumed by its wait. */
	for (i = 0; i < 3; i++)
		if (kt_wait(fd, h, req[i], 0, &st, NULL) != -ENOENT)
			return 13;
	/* Destroy only after both finished (kt_barrier()'s reason). */
	if (loop_allreduce(fd, h, 0, (uintptr_t)in, (uintptr_t)out, 0, 0, 1))
		return 14;
	if (kt_comm_destroy(fd, h))
		return 15;
	close(fd);
	return 0;
}

TEST(one_request_table)
{
	loop_pair(_metadata, kt_comm_id("loop_one_table", 0), loop_one_table);
}

TEST_HARNESS_MAIN
