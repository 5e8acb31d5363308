// SPDX-License-Identifier: GPL-2.0
/*
 * Communicators and point-to-point across rig VMs: run on every node at once (2 or 4 VMs);
 * each node is the rank of its number.  Data is exchanged on a ring: every rank receives
 * from the previous one and sends to the next.
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

FIXTURE(world) {
	int fd;
	uint32_t comm;
	unsigned int rank, nranks, next, prev;
};

FIXTURE_SETUP(world)
{
	self->rank = kt_rank();
	self->nranks = kt_nranks();
	if (self->nranks < 2)
		SKIP(return, "needs at least 2 nodes");
	self->next = (self->rank + 1) % self->nranks;
	self->prev = (self->rank + self->nranks - 1) % self->nranks;
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

TEST_F_TIMEOUT(world, query_reports_ready, 120)
{
	struct kcoll_comm_query q = { .size = sizeof(q), .handle = self->comm };

	ASSERT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COMM_QUERY, &q));
	EXPECT_EQ(KCOLL_COMM_READY, q.state);
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(self->rank, q.rank);
	EXPECT_EQ(self->nranks, q.nranks);
	EXPECT_EQ(kt_comm_id(_metadata->name, 0), q.comm_id);
}

/* What an admin sees: kcollctl -j lists this rank of the comm, ready, with its peers. */
TEST_F_TIMEOUT(world, kcollctl_shows_comm, 120)
{
	char cmd[256], out[16384] = "", want[128];
	unsigned int i;
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl -j comm show %016llx-%u",
		 (unsigned long long)kt_comm_id(_metadata->name, 0), self->rank);
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	ASSERT_EQ(0, pclose(p)) TH_LOG("%s: %s", cmd, out);
	snprintf(want, sizeof(want), "\"rank\":%u", self->rank);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"nranks\":%u", self->nranks);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "\"peers_connected\":%u", self->nranks - 1);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"state\":\"ready\"")) TH_LOG("%s", out);
	/* Over netlink, every peer is listed with its connection up. */
	for (i = 0; i < self->nranks; i++) {
		if (i == self->rank)
			continue;
		snprintf(want, sizeof(want), "{\"rank\":%u,\"state\":\"up\"", i);
		EXPECT_NE(NULL, strstr(out, want)) TH_LOG("peer %u: %s", i, out);
	}
}

/* Ring exchange of one size; the content is checked byte by byte. */
static int ring_exchange(struct __test_metadata *_metadata, FIXTURE_DATA(world) *self,
			 uint64_t size)
{
	unsigned char *tx = malloc(size + 1), *rx = malloc(size + 1);
	uint64_t req, got = ~0ULL, i;
	int status = -1;

	ASSERT_NE(NULL, tx);
	ASSERT_NE(NULL, rx);
	for (i = 0; i < size; i++)
		tx[i] = kt_byte(self->rank, size, i);
	memset(rx, 0xee, size + 1);
	ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK,
			    self->prev, rx, size, &req));
	ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->next, tx, size, NULL))
		TH_LOG("send of %llu bytes", (unsigned long long)size);
	ASSERT_EQ(0, kt_wait(self->fd, self->comm, req, ~0u, &status, &got));
	EXPECT_EQ(0, status);
	EXPECT_EQ(size, got);
	for (i = 0; i < size; i++) {
		if (rx[i] != kt_byte(self->prev, size, i)) {
			TH_LOG("size %llu: byte %llu is %#x, want %#x", (unsigned long long)size,
			       (unsigned long long)i, rx[i], kt_byte(self->prev, size, i));
			break;
		}
	}
	EXPECT_EQ(size, i);
	EXPECT_EQ(0xee, rx[size]) TH_LOG("wrote past the receive");
	free(tx);
	free(rx);
	return 0;
}

TEST_F_TIMEOUT(world, ring_sizes, 600)
{
	uint64_t sizes[] = { 0, 1, 4095, 4096, (1 << 20) + 3,
			     kt_quick() ? (4ULL << 20) + 1 : 64ULL << 20 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ring_exchange(_metadata, self, sizes[i]);
}

TEST_F_TIMEOUT(world, counters_count_bytes, 120)
{
	struct kcoll_comm_query q = { .size = sizeof(q), .handle = self->comm };

	ring_exchange(_metadata, self, 10000);
	ring_exchange(_metadata, self, 3);
	ASSERT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COMM_QUERY, &q));
	EXPECT_EQ(10003, q.tx_bytes);
	EXPECT_EQ(10003, q.rx_bytes);
	EXPECT_EQ(2, q.tx_ops);
	EXPECT_EQ(2, q.rx_ops);
}

/* Unaligned buffers straddling pages, many messages in flight in both directions. */
TEST_F_TIMEOUT(world, many_in_flight_unaligned, 300)
{
	enum { N = 40, SZ = 70001 };
	unsigned char *tx = malloc(N * SZ + 7), *rx = malloc(N * SZ + 7);
	uint64_t reqs[N], got;
	int i, status;
	uint64_t j;

	ASSERT_NE(NULL, tx);
	ASSERT_NE(NULL, rx);
	for (j = 0; j < (uint64_t)N * SZ; j++)
		tx[j + 3] = kt_byte(self->rank, j / SZ, j % SZ);
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK,
				    self->prev, rx + 5 + (uint64_t)i * SZ, SZ, &reqs[i]));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->next,
				    tx + 3 + (uint64_t)i * SZ, SZ, NULL));
	for (i = N - 1; i >= 0; i--) {
		ASSERT_EQ(0, kt_wait(self->fd, self->comm, reqs[i], ~0u, &status, &got));
		EXPECT_EQ(0, status);
		EXPECT_EQ(SZ, got);
	}
	for (j = 0; j < (uint64_t)N * SZ; j++)
		if (rx[j + 5] != kt_byte(self->prev, j / SZ, j % SZ))
			break;
	EXPECT_EQ((uint64_t)N * SZ, j);
	free(tx);
	free(rx);
}

/*
 * Point-to-point pins count against RLIMIT_MEMLOCK while they last: a send or receive over
 * a 1 MiB limit is ENOMEM before anything is queued (the peer sees nothing), a receive and
 * a send of 512 KiB each fit together, and the charge goes with the pins.
 */
TEST_F_TIMEOUT(world, pins_charged_to_memlock, 120)
{
	size_t mib = 1 << 20, half = mib / 2;
	char *tx = mmap(NULL, 2 * mib, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	char *rx = mmap(NULL, half, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rlimit old, rl = { mib, mib };
	long pin0 = kt_vm_pin_kb();
	uint64_t req, got;
	int status;

	ASSERT_NE(MAP_FAILED, tx);
	ASSERT_NE(MAP_FAILED, rx);
	ASSERT_LE(0, pin0);
	memset(tx, self->rank + 1, 2 * mib);
	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &old));
	ASSERT_EQ(0, kt_set_ipc_lock(false));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	EXPECT_EQ(-ENOMEM, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->next, tx,
				  mib + 1, NULL));
	EXPECT_EQ(-ENOMEM, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK,
				  self->prev, tx, 2 * mib, &req));
	EXPECT_EQ(pin0, kt_vm_pin_kb());
	ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK,
			    self->prev, rx, half, &req));
	EXPECT_EQ(pin0 + (long)(half / 1024), kt_vm_pin_kb());
	/* Nobody sends before every rank has looked: else a receive may be done, unpinned. */
	ASSERT_EQ(0, kt_meet("pins-charged", 0, self->nranks, 600));
	ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->next, tx, half, NULL));
	ASSERT_EQ(0, kt_wait(self->fd, self->comm, req, ~0u, &status, &got));
	EXPECT_EQ(0, status);
	EXPECT_EQ(half, got);
	EXPECT_EQ(self->prev + 1, rx[half - 1]);
	EXPECT_EQ(pin0, kt_vm_pin_settles(pin0));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &old));
	ASSERT_EQ(0, kt_set_ipc_lock(true));
	munmap(tx, 2 * mib);
	munmap(rx, half);
}

/*
 * A token goes round the ring once, from rank 0: nobody's receive can complete before
 * its predecessor got the token, so rank 0 can check "not done yet" without a race.
 */
TEST_F_TIMEOUT(world, poll_reports_completion, 120)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	char tx[100] = "token", rx[100];
	uint64_t req, got;
	int status;

	ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK,
			    self->prev, rx, sizeof(rx), &req));
	if (self->rank == 0) {
		EXPECT_EQ(-EAGAIN, kt_wait(self->fd, self->comm, req, 0, &status, &got));
		EXPECT_EQ(0, poll(&pfd, 1, 0));
		ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->next, tx,
				    sizeof(tx), NULL));
	}
	ASSERT_EQ(1, poll(&pfd, 1, 60000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	ASSERT_EQ(0, kt_wait(self->fd, self->comm, req, 0, &status, &got));
	EXPECT_EQ(0, status);
	EXPECT_EQ(sizeof(rx), got);
	EXPECT_STREQ("token", rx);
	/* Consumed: POLLIN is gone and the id is unknown now. */
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	EXPECT_EQ(-ENOENT, kt_wait(self->fd, self->comm, req, 0, &status, &got));
	if (self->rank != 0)
		ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->next, rx,
				    sizeof(rx), NULL));
}

/*
 * Remote write scope of a receive into the caller's memory (Documentation/security.rst,
 * "Remote write scope"): rank 0 receives at an odd offset inside a page, with sentinel
 * bytes around it in the same pages.  While the receive is announced, its registration
 * covers exactly its bytes (not the 6 pages they touch); once the WAIT or the blocking
 * receive has returned, no registration of it is left.  Rank 1 sends only after rank 0
 * looked (a token), so the look cannot race with the transfer.
 */
TEST_F_TIMEOUT(world, recv_keys_cover_exact_bytes_until_return, 120)
{
	enum { OFF = 3, LEN = 5 * 4096 + 77, PAGES = 8 };
	const uint64_t rounded = 6 * 4096;	/* the pages [OFF, OFF + LEN) touches */
	unsigned char *map, *rx, *tx, token = 1;
	uint64_t req, got, i;
	int status, round;

	if (self->rank > 1)
		return;
	ASSERT_EQ(4096, sysconf(_SC_PAGESIZE));
	map = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	rx = map + OFF;
	tx = malloc(LEN);
	ASSERT_NE(NULL, tx);
	for (i = 0; i < LEN; i++)
		tx[i] = kt_byte(1, LEN, i);
	for (round = 0; round < 2; round++) {	/* 0: non-blocking and WAIT; 1: blocking */
		if (self->rank == 1) {
			ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV, 0, &token, 1,
					    NULL));
			ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, 0, tx, LEN,
					    NULL));
			continue;
		}
		memset(map, 0xa5, PAGES * 4096);
		if (round == 0) {
			ASSERT_EQ(0, kt_p2p(self->fd, self->comm,
					    KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1, rx, LEN,
					    &req));
			if (kt_rdma()) {
				EXPECT_EQ(1, kt_mrs_of_length(LEN))
					TH_LOG("no MR of exactly %d bytes", LEN);
				EXPECT_EQ(0, kt_mrs_of_length(rounded)) TH_LOG("a page-rounded MR");
			}
			ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, 1, &token, 1,
					    NULL));
			ASSERT_EQ(0, kt_wait(self->fd, self->comm, req, ~0u, &status, &got));
			EXPECT_EQ(0, status);
		} else {
			/* The token goes first: eager, it does not wait for our receive. */
			ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, 1, &token, 1,
					    NULL));
			ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV, 1, rx, LEN,
					    &got));
		}
		EXPECT_EQ(LEN, got);
		/* Returned: the keys are dead, no MR of the receive is left. */
		EXPECT_EQ(0, kt_mrs_of_length(LEN)) TH_LOG("round %d: MR outlives the call", round);
		EXPECT_EQ(0, kt_mrs_of_length(rounded)) TH_LOG("round %d: MR outlives the call",
							   round);
		for (i = 0; i < LEN; i++)
			if (rx[i] != tx[i])
				break;
		EXPECT_EQ(LEN, i) TH_LOG("round %d: byte %llu differs", round,
					 (unsigned long long)i);
		i = kt_sentinel_written(map, PAGES * 4096, OFF, LEN, 0xa5);
		EXPECT_EQ(PAGES * 4096, i) TH_LOG("round %d: sentinel byte %llu written", round,
						  (unsigned long long)i);
	}
	free(tx);
	munmap(map, PAGES * 4096);
}

TEST_F_TIMEOUT(world, larger_than_receive_is_emsgsize_on_both_sides, 120)
{
	char tx[64] = { 1 }, rx[16];
	uint64_t req, got;
	int status = 0;

	ASSERT_EQ(0, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK,
			    self->prev, rx, sizeof(rx), &req));
	EXPECT_EQ(-EMSGSIZE, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->next, tx,
				    sizeof(tx), NULL));
	ASSERT_EQ(0, kt_wait(self->fd, self->comm, req, ~0u, &status, &got));
	EXPECT_EQ(-EMSGSIZE, status);
	/* Not fatal: the communicator goes on. */
	ring_exchange(_metadata, self, 5000);
}

TEST_F_TIMEOUT(world, bad_arguments, 120)
{
	char b[8];
	struct kcoll_p2p p = { .size = sizeof(p), .comm = self->comm, .flags = KCOLL_P2P_SEND,
			       .peer = self->next, .addr = (uintptr_t)b, .len = 8 };

	EXPECT_EQ(-EINVAL, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->rank, b, 8, NULL));
	EXPECT_EQ(-EINVAL, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->nranks, b, 8,
				  NULL));
	EXPECT_EQ(-EINVAL, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND | KCOLL_P2P_RECV,
				  self->next, b, 8, NULL));
	EXPECT_EQ(-EINVAL, kt_p2p(self->fd, self->comm, 0, self->next, b, 8, NULL));
	EXPECT_EQ(-EINVAL, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND | (1u << 20),
				  self->next, b, 8, NULL));
	EXPECT_EQ(-ENOENT, kt_p2p(self->fd, self->comm + 100, KCOLL_P2P_SEND, self->next, b, 8,
				  NULL));
	EXPECT_EQ(-EFAULT, kt_p2p(self->fd, self->comm, KCOLL_P2P_SEND, self->next,
				  (void *)8, 8, NULL));
	EXPECT_EQ(-EFAULT, kt_p2p(self->fd, self->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK,
				  self->prev, (void *)"read-only", 8, NULL));
	p.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->fd, KCOLL_IOC_P2P, &p));
	EXPECT_EQ(-ENOENT, kt_wait(self->fd, self->comm, 12345, 0, &(int){0}, NULL));
	/* Nothing above broke the communicator. */
	ring_exchange(_metadata, self, 100);
}

/*
 * Rank 1 sends a small (eager) message and destroys its end at once; rank 0 posts the
 * receive only after the BYE came.  The data was sent before the BYE, so the receive gets
 * it; a second receive, for which nothing was ever sent, fails with ECONNRESET.
 */
TEST(sent_then_left_still_arrives)
{
	char tx[100] = "sent before the bye", rx[100] = "";
	unsigned int me = kt_rank();
	uint64_t req, got = 0;
	uint32_t comm;
	int fd;

	if (kt_nranks() < 2)
		SKIP(return, "needs at least 2 nodes");
	fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kt_comm_world(fd, "sent-then-left", 0, &comm));
	if (me == 1) {
		ASSERT_EQ(0, kt_p2p(fd, comm, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, 0, tx,
				    sizeof(tx), &req));
	} else if (me == 0) {
		sleep(3);	/* rank 1's BYE is here by now (not a bound: only makes it late) */
		EXPECT_EQ(0, kt_p2p(fd, comm, KCOLL_P2P_RECV, 1, rx, sizeof(rx), &got));
		EXPECT_EQ(sizeof(tx), got);
		EXPECT_STREQ(tx, rx);
		EXPECT_EQ(-ECONNRESET, kt_p2p(fd, comm, KCOLL_P2P_RECV, 1, rx, sizeof(rx), NULL));
	}
	EXPECT_EQ(0, kt_comm_destroy(fd, comm));
	close(fd);
}

/* A communicator of one rank needs no network. */
TEST(single_rank_comm)
{
	struct kcoll_sockaddr me = kt_addr(kt_rank());
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	uint32_t h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kt_comm_create(fd, kt_comm_id("single", kt_rank()), 0, 1, &me, 1000, &h,
				    NULL));
	EXPECT_EQ(-EINVAL, kt_p2p(fd, h, KCOLL_P2P_SEND, 0, &h, 4, NULL));
	EXPECT_EQ(0, kt_comm_destroy(fd, h));
	EXPECT_EQ(-ENOENT, kt_comm_destroy(fd, h));
	close(fd);
}

TEST_HARNESS_MAIN
