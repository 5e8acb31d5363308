// SPDX-License-Identifier: GPL-2.0
/*
 * Communicator creation: bad peer tables with their exact errno, peers that never come,
 * create/destroy cycles without leaks, and a rank killed mid-transfer.  Runs on every node
 * of a 2-or-more VM rig at once; only ranks 0 and 1 take part in the pair tests.
 */
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

FIXTURE(dev) {
	int fd;
	struct kcoll_sockaddr peers[4];
};

FIXTURE_SETUP(dev)
{
	unsigned int i;

	/*
	 * Every node starts each case together: a node held up in the previous case (a slow
	 * teardown on a loaded host) would otherwise meet the other's next case late, and the
	 * cases that talk to the other node would fail for a reason that is not theirs.
	 */
	if (kt_nranks() > 1)
		ASSERT_EQ(0, kt_meet(_metadata->name, 0, kt_nranks(), 600));
	self->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < 4; i++)
		self->peers[i] = kt_addr(i);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST_F(dev, bad_tables_are_einval)
{
	struct kcoll_comm_create c = {
		.size = sizeof(c), .comm_id = 7, .rank = 0, .nranks = 2,
		.peers = (uintptr_t)self->peers, .peer_size = sizeof(self->peers[0]),
		.timeout_ms = 1000,
	};
	struct kcoll_comm_create t;
	struct kcoll_sockaddr bad[2];

#define EXPECT_CREATE(err, field, value) do {					\
		t = c;								\
		t.field = value;						\
		EXPECT_EQ(err, kt_ioctl(self->fd, KCOLL_IOC_COMM_CREATE, &t))	\
			TH_LOG(#field " = " #value);				\
	} while (0)

	EXPECT_CREATE(-EINVAL, nranks, 0);
	EXPECT_CREATE(-EINVAL, nranks, KCOLL_MAX_RANKS + 1);
	EXPECT_CREATE(-EINVAL, nranks, 0xffffffffu);
	EXPECT_CREATE(-EINVAL, rank, 2);
	EXPECT_CREATE(-EINVAL, rank, 0xffffffffu);
	EXPECT_CREATE(-EINVAL, comm_id, 0);
	EXPECT_CREATE(-EINVAL, flags, 1U << 31);	/* no such flag */
	/* Both transports at once. */
	EXPECT_CREATE(-EINVAL, flags, KCOLL_COMM_TRANSPORT_RDMA | KCOLL_COMM_TRANSPORT_TCP);
	EXPECT_CREATE(-EINVAL, reserved[1], 1);
	EXPECT_CREATE(-EINVAL, peer_size, sizeof(struct kcoll_sockaddr) - 1);
	EXPECT_CREATE(-EFAULT, peers, 16);
	EXPECT_CREATE(-EINVAL, size, KCOLL_COMM_CREATE_SIZE_VER0 - 1);

	memcpy(bad, self->peers, sizeof(bad));
	bad[1].family = 12345;
	EXPECT_CREATE(-EINVAL, peers, (uintptr_t)bad);
	memcpy(bad, self->peers, sizeof(bad));
	memset(bad[1].addr, 0, 16);		/* 0.0.0.0 */
	EXPECT_CREATE(-EINVAL, peers, (uintptr_t)bad);
	memcpy(bad, self->peers, sizeof(bad));
	bad[1].addr[7] = 1;			/* IPv4 with junk after the address */
	EXPECT_CREATE(-EINVAL, peers, (uintptr_t)bad);
	/* A table that runs into unmapped memory. */
	{
		long pg = sysconf(_SC_PAGESIZE);
		char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ASSERT_NE(MAP_FAILED, m);
		ASSERT_EQ(0, mprotect(m + pg, pg, PROT_NONE));
		memcpy(m + pg - sizeof(bad), self->peers, sizeof(bad));
		t = c;
		t.peers = (uintptr_t)(m + pg - sizeof(bad));
		t.nranks = 3;
		EXPECT_EQ(-EFAULT, kt_ioctl(self->fd, KCOLL_IOC_COMM_CREATE, &t));
		munmap(m, 2 * pg);
	}
	/* Nothing half-created stays behind. */
	EXPECT_EQ(0, kt_count_comms());
}

TEST_F(dev, own_address_not_rdma_is_eaddrnotavail)
{
	struct kcoll_sockaddr t[2] = { kt_addr(250), kt_addr(kt_rank()) };

	EXPECT_EQ(-EADDRNOTAVAIL, kt_comm_create(self->fd, 9, 0, 2, t, 1000, NULL, NULL));
	inet_pton(AF_INET, "127.0.0.1", t[0].addr);
	EXPECT_EQ(-EADDRNOTAVAIL, kt_comm_create(self->fd, 9, 0, 2, t, 1000, NULL, NULL));
}

/*
 * Rank 1 connects to rank 0, whose address no host answers for.  The create retries until
 * its deadline and then reports the last attempt's error: the deadline must leave room for
 * one failed address resolution (ARP gives up after about 3 s; longer on a loaded host, where
 * a 4 s deadline once ended inside the first attempt, with ETIMEDOUT).
 */
TEST_F(dev, unreachable_peer_is_ehostunreach)
{
	struct kcoll_sockaddr t[2] = { kt_addr(200), kt_addr(kt_rank()) };
	uint32_t failed = 0;
	double t0 = kt_now();

	EXPECT_EQ(-EHOSTUNREACH, kt_comm_create(self->fd, kt_comm_id("unreach", kt_rank()), 1,
						2, t, 15000, NULL, &failed));
	EXPECT_EQ(0, failed);
	EXPECT_GT(40, kt_now() - t0);
	EXPECT_EQ(0, kt_count_comms());
}

/* A reachable node where nobody creates the comm: refused until the deadline. */
TEST_F(dev, absent_peer_is_etimedout)
{
	unsigned int me = kt_rank(), other = me ? 0 : 1;
	struct kcoll_sockaddr t[2] = { kt_addr(other), kt_addr(me) };
	uint32_t failed = 0;

	if (kt_nranks() < 2)
		SKIP(return, "needs 2 nodes");
	EXPECT_EQ(-ETIMEDOUT, kt_comm_create(self->fd, kt_comm_id("absent", me), 1, 2, t, 3000,
					     NULL, &failed));
	EXPECT_EQ(0, failed);
}

/*
 * Two ranks on this node, rank 0 created over TCP, rank 1 over RDMA: rank 1's RDMA connect
 * request names a comm end that has no RDMA device (comm->dev NULL).  It must be refused
 * (the kernel dereferenced the NULL device before), and both creations fail.
 */
TEST_F(dev, rdma_hello_to_tcp_comm_is_refused)
{
	struct kcoll_sockaddr t[2] = { kt_addr(kt_rank()), kt_addr(kt_rank()) };
	uint64_t id = kt_comm_id("rdma_to_tcp", kt_rank());
	unsigned char secret[KCOLL_SECRET_LEN];
	int st = -1, fd;
	pid_t pid;

	if (!kt_rdma())
		SKIP(return, "needs an RDMA device");
	kt_comm_secret(id, secret);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		_exit(fd >= 0 && kt_comm_create_flags(fd, id, secret, 0, 2, t, 8000,
						      KCOLL_COMM_TRANSPORT_TCP, NULL, NULL) ? 0 : 1);
	}
	usleep(300 * 1000);	/* rank 0 is listed first, so the request finds it */
	EXPECT_NE(0, kt_comm_create_flags(self->fd, id, secret, 1, 2, t, 8000,
					  KCOLL_COMM_TRANSPORT_RDMA, NULL, NULL));
	EXPECT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("rank 0 (TCP) was created, or died");
	EXPECT_EQ(0, kt_count_comms());
}

TEST_F(dev, duplicate_comm_and_rank_is_eexist)
{
	struct kcoll_sockaddr me = kt_addr(kt_rank());
	uint32_t h;
	int fd2 = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, kt_comm_create(self->fd, 77, 0, 1, &me, 1000, &h, NULL));
	EXPECT_EQ(-EEXIST, kt_comm_create(self->fd, 77, 0, 1, &me, 1000, NULL, NULL));
	EXPECT_EQ(-EEXIST, kt_comm_create(fd2, 77, 0, 1, &me, 1000, NULL, NULL));
	EXPECT_EQ(1, kt_count_comms());
	EXPECT_EQ(0, kt_comm_destroy(self->fd, h));
	EXPECT_EQ(0, kt_comm_create(fd2, 77, 0, 1, &me, 1000, &h, NULL));
	close(fd2);		/* close destroys it */
	EXPECT_EQ(0, kt_count_comms());
}

TEST_F(dev, destroy_and_abort_bad_handles)
{
	struct kcoll_comm_arg a = { .size = sizeof(a), .handle = 4242 };

	EXPECT_EQ(-ENOENT, kt_ioctl(self->fd, KCOLL_IOC_COMM_DESTROY, &a));
	EXPECT_EQ(-ENOENT, kt_ioctl(self->fd, KCOLL_IOC_COMM_ABORT, &a));
	a.reserved0 = 1;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->fd, KCOLL_IOC_COMM_DESTROY, &a));
	a.reserved0 = 0;
	a.flags = 2;
	EXPECT_EQ(-EINVAL, kt_ioctl(self->fd, KCOLL_IOC_COMM_ABORT, &a));
}

/* ---- the device's GID selection (kcollctl dev set rxe0 gid N) ------------------------- */

#define KCOLLCTL	"tools/kcollctl/kcollctl"
#define GID_DEV		"rxe0"

/* The index of the first GID of rxe0 that the awk condition @cond picks, or -1. */
static int gid_find(const char *cond)
{
	char cmd[256];
	int idx = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), KCOLLCTL " dev show " GID_DEV
		 " | awk '$1 == \"gid\" && %s { print $2; exit }'", cond);
	p = popen(cmd, "r");
	if (p) {
		if (fscanf(p, "%d", &idx) != 1)
			idx = -1;
		pclose(p);
	}
	return idx;
}

static int gid_select(const char *v)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), KCOLLCTL " dev set " GID_DEV " gid %s", v);
	return system(cmd);
}

/* The comm's only peer, as kcollctl -j comm show reports it, uses GID index @idx. */
static int comm_uses_gid(uint64_t id, int idx)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), KCOLLCTL " -j comm show %016llx | grep -q '\"sgid_index\":%d,'",
		 (unsigned long long)id, idx);
	return system(cmd) == 0;
}

/*
 * Ranks 0 and 1, each selecting on its own rxe0: no selection, then the GID of its own
 * address (the IPv4-mapped entry) both work and the peers report that index; the link-local
 * entry instead fails the comm with EADDRNOTAVAIL on both ranks, well before the timeout.
 */
TEST_F_TIMEOUT(dev, gid_selection, 300)
{
	unsigned int me = kt_rank();
	char cond[96], v[16];
	int v4, ll, ret;
	uint64_t id;
	uint32_t h;
	double t0;

	if (kt_nranks() < 2)
		SKIP(return, "needs 2 nodes");
	if (me > 1)
		return;
	/* Same environment on every node: both ranks skip alike. */
	if (getenv("RIG_RDMA") && strcmp(getenv("RIG_RDMA"), "rxe"))
		SKIP(return, "no RoCE device (iWARP or none): no GID to select");
	snprintf(cond, sizeof(cond), "$3 == \"::ffff:169.254.77.%u\"", me + 1);
	v4 = gid_find(cond);
	ll = gid_find("$3 ~ /^fe80:/");
	ASSERT_LE(0, v4) TH_LOG("no GID of 169.254.77.%u on " GID_DEV, me + 1);
	ASSERT_LE(0, ll) TH_LOG("no link-local GID on " GID_DEV);
	ASSERT_NE(v4, ll);
	ASSERT_EQ(0, gid_select("auto"));
	/*
	 * Each selection must be in force on both ranks before either connects, or a rank still
	 * on the old one accepts a connection its peer then drops (ECONNRESET instead).
	 */
	ASSERT_EQ(0, kt_meet("gid-auto", 0, 2, 120));

	/* No selection: the address picks its GID, which the peer reports. */
	id = kt_comm_id("gid_selection", 0);
	ASSERT_EQ(0, kt_comm_create(self->fd, id, me, 2, self->peers, 60000, &h, NULL));
	EXPECT_TRUE(comm_uses_gid(id, v4)) TH_LOG("peer does not report sgid_index %d", v4);
	EXPECT_EQ(0, kt_comm_destroy(self->fd, h));

	/* The GID of the rank's address: the same. */
	snprintf(v, sizeof(v), "%d", v4);
	ASSERT_EQ(0, gid_select(v));
	ASSERT_EQ(0, kt_meet("gid-v4", 0, 2, 120));
	id = kt_comm_id("gid_selection", 1);
	ASSERT_EQ(0, kt_comm_create(self->fd, id, me, 2, self->peers, 60000, &h, NULL));
	EXPECT_TRUE(comm_uses_gid(id, v4));
	EXPECT_EQ(0, kt_comm_destroy(self->fd, h));

	/* Another valid entry: every connection breaks the selection. */
	snprintf(v, sizeof(v), "%d", ll);
	ASSERT_EQ(0, gid_select(v));
	ASSERT_EQ(0, kt_meet("gid-ll", 0, 2, 120));
	t0 = kt_now();
	ret = kt_comm_create(self->fd, kt_comm_id("gid_selection", 2), me, 2, self->peers,
			     60000, &h, NULL);
	EXPECT_EQ(-EADDRNOTAVAIL, ret) TH_LOG("got %s", strerror(-ret));
	EXPECT_GT(30, kt_now() - t0);
	if (!ret)
		kt_comm_destroy(self->fd, h);

	EXPECT_EQ(0, gid_select("auto"));
	EXPECT_EQ(0, kt_meet("gid-done", 0, 2, 120));
	EXPECT_EQ(0, kt_count_comms());
}

/* 200 connect/destroy cycles between ranks 0 and 1; sysfs counts return to zero. */
TEST_F_TIMEOUT(dev, create_destroy_200_cycles, 900)
{
	unsigned int me = kt_rank(), i, cycles = kt_quick() ? 20 : 200;
	uint32_t h;

	if (kt_nranks() < 2)
		SKIP(return, "needs 2 nodes");
	if (me > 1)
		return;
	ASSERT_EQ(0, kt_meet("cycles", 0, 2, 600));
	for (i = 0; i < cycles; i++) {
		ASSERT_EQ(0, kt_comm_create(self->fd, kt_comm_id("cycles", i), me, 2, self->peers,
					    60000, &h, NULL)) TH_LOG("cycle %u", i);
		ASSERT_EQ(0, kt_comm_destroy(self->fd, h));
	}
	EXPECT_EQ(0, kt_count_comms());
}

/*
 * A victim child tells its parent, through a pipe, that its communicator is up, so the
 * parent kills it mid-operation and not before it has connected (under host load the
 * create alone can take longer than any fixed delay).
 */
static void victim_ready(int wfd)
{
	char c = 'r';

	if (write(wfd, &c, 1) != 1)
		_exit(4);
	close(wfd);
}

/* 1 when the child reported ready within @timeout_s, else 0. */
static int victim_wait_ready(int rfd, unsigned int timeout_s)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	char c = 0;
	int ok;

	ok = poll(&p, 1, timeout_s * 1000) == 1 && read(rfd, &c, 1) == 1 && c == 'r';
	close(rfd);
	return ok;
}

/*
 * Fork the victim: rank 1 of comm @id, which says it is ready (victim_ready()) and then
 * sends @size bytes of @mem to rank 0 until it is killed.  Return: its pid, or -1, and in
 * *@rfd the read end of its ready pipe (for victim_wait_ready()).
 */
static pid_t victim_send(uint64_t id, const struct kcoll_sockaddr *peers, void *mem,
			 uint64_t size, int *rfd)
{
	int pfd[2];
	uint32_t h;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open(KCOLL_DEVICE_PATH, O_RDWR);

		close(pfd[0]);
		if (kt_comm_create(fd, id, 1, 2, peers, 120000, &h, NULL))
			_exit(1);
		victim_ready(pfd[1]);
		kt_p2p(fd, h, KCOLL_P2P_SEND, 0, mem, size, NULL);
		_exit(2);	/* should have been killed first */
	}
	close(pfd[1]);
	*rfd = pfd[0];
	if (pid < 0)
		close(pfd[0]);
	return pid;
}

/*
 * Rank 1's process is killed with SIGKILL while it sends 64 MiB to rank 0: rank 0's
 * receive fails with ECONNRESET (or ETIMEDOUT) within the 10 s bound, and rank 1's node
 * is left with nothing.  Five rounds.
 */
TEST_F_TIMEOUT(dev, kill9_mid_transfer, 600)
{
	const uint64_t size = kt_quick() ? 16ULL << 20 : 64ULL << 20;
	unsigned int me = kt_rank(), round, rounds = kt_quick() ? 2 : 5;
	unsigned char *mem;

	if (kt_nranks() < 2)
		SKIP(return, "needs 2 nodes");
	if (me > 1)
		return;
	char res_before[1024], res_after[1024];

	mem = malloc(size);
	ASSERT_NE(NULL, mem);
	memset(mem, 0x5a, size);
	kt_rdma_res_summary(res_before, sizeof(res_before));
	/* e.g. "0: rxe0: pd 1 cq 1 qp 1 mr 0 ctx 0 srq 0" and the cm_id count */
	if (kt_rdma())
		ASSERT_NE(NULL, strstr(res_before, " qp "))
			TH_LOG("rdma resource show: %s", res_before);
	for (round = 0; round < rounds; round++) {
		uint64_t id = kt_comm_id("kill9", round);
		uint32_t h;

		ASSERT_EQ(0, kt_meet("kill9", round, 2, 600));
		if (me == 0) {
			uint64_t req, got;
			int status = 0;
			double t0;

			ASSERT_EQ(0, kt_comm_create(self->fd, id, 0, 2, self->peers, 120000, &h,
						    NULL));
			ASSERT_EQ(0, kt_p2p(self->fd, h, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1,
					    mem, size, &req));
			t0 = kt_now();
			ASSERT_EQ(0, kt_wait(self->fd, h, req, 60000, &status, &got));
			EXPECT_TRUE(status == -ECONNRESET || status == -ETIMEDOUT)
				TH_LOG("round %u: status %d", round, status);
			/* Killed about 1 s after the transfer started. */
			EXPECT_GT(11.0, kt_now() - t0) TH_LOG("round %u", round);
			EXPECT_EQ(0, kt_comm_destroy(self->fd, h));
		} else {
			int rfd, ready, wst;
			pid_t pid;

			pid = victim_send(id, self->peers, mem, size, &rfd);
			ASSERT_LE(0, pid);
			ready = victim_wait_ready(rfd, 180);
			/* Let the transfer start: at ~0.2 Gb/s 64 MiB takes seconds. */
			usleep(500000);
			kill(pid, SIGKILL);
			ASSERT_EQ(pid, waitpid(pid, &wst, 0));
			ASSERT_TRUE(ready) TH_LOG("round %u: the victim's create failed (exit %d)",
						  round, WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
			EXPECT_TRUE(WIFSIGNALED(wst)) TH_LOG("child exit %d", WEXITSTATUS(wst));
			EXPECT_EQ(0, kt_count_comms());
			EXPECT_EQ(1, kt_sysfs_long(KT_SYS "contexts"));
			/* Every PD, CQ, QP, MR and cm_id of the dead process is gone. */
			kt_rdma_res_summary(res_after, sizeof(res_after));
			EXPECT_STREQ(res_before, res_after);
		}
	}
	free(mem);
}

/*
 * Rank 1's process is killed with SIGKILL in the middle of a 64 MiB all-reduce on a
 * zero-copy buffer: rank 0's all-reduce fails within the bound, and rank 1's node is left
 * with nothing (comms, contexts, RDMA resources).  Two rounds.
 */
TEST_F_TIMEOUT(dev, kill9_mid_allreduce, 600)
{
	const uint64_t count = (kt_quick() ? 4ULL << 20 : 16ULL << 20);
	unsigned int me = kt_rank(), round;
	char res_before[1024], res_after[1024];
	float *mem;

	if (kt_nranks() < 2)
		SKIP(return, "needs 2 nodes");
	if (me > 1)
		return;
	mem = calloc(count, sizeof(float));
	ASSERT_NE(NULL, mem);
	kt_rdma_res_summary(res_before, sizeof(res_before));
	for (round = 0; round < 2; round++) {
		uint64_t id = kt_comm_id("kill9coll", round);
		struct kcoll_coll a = {
			.size = sizeof(a), .coll = KCOLL_ALLREDUCE, .dtype = KCOLL_FP32,
			.op = KCOLL_SUM, .count = count, .flags = KCOLL_COLL_IN_PLACE,
			.recvbuf = (uintptr_t)mem,
		};
		uint32_t h;

		ASSERT_EQ(0, kt_meet("kill9coll", round, 2, 600));
		if (me == 0) {
			double t0;
			int ret;

			ASSERT_EQ(0, kt_comm_create(self->fd, id, 0, 2, self->peers, 120000, &h,
						    NULL));
			a.comm = h;
			t0 = kt_now();
			ret = kt_ioctl(self->fd, KCOLL_IOC_COLL, &a);
			EXPECT_TRUE(ret == -ECONNRESET || ret == -ETIMEDOUT)
				TH_LOG("round %u: %d", round, ret);
			EXPECT_GT(11.5, kt_now() - t0) TH_LOG("round %u", round);
			EXPECT_EQ(0, kt_comm_destroy(self->fd, h));
		} else {
			int pfd[2], ready, wst;
			pid_t pid;

			ASSERT_EQ(0, pipe(pfd));
			pid = fork();
			ASSERT_LE(0, pid);
			if (pid == 0) {
				int fd = open(KCOLL_DEVICE_PATH, O_RDWR);
				struct kcoll_buf_create bc = { .size = sizeof(bc),
							       .length = count * 4 };

				close(pfd[0]);
				if (kt_comm_create(fd, id, 1, 2, self->peers, 120000, &h, NULL))
					_exit(1);
				victim_ready(pfd[1]);
				/* Its side runs on a buffer: pages and charge must go too. */
				bc.comm = h;
				if (kt_ioctl(fd, KCOLL_IOC_BUF_CREATE, &bc))
					_exit(3);
				a.comm = h;
				a.flags |= KCOLL_COLL_RECV_BUF;
				a.recv_handle = bc.handle;
				a.recvbuf = 0;
				kt_ioctl(fd, KCOLL_IOC_COLL, &a);
				_exit(2);	/* should have been killed first */
			}
			close(pfd[1]);
			ready = victim_wait_ready(pfd[0], 180);
			usleep(1000000);
			kill(pid, SIGKILL);
			ASSERT_EQ(pid, waitpid(pid, &wst, 0));
			ASSERT_TRUE(ready) TH_LOG("round %u: the victim's create failed (exit %d)",
						  round, WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
			EXPECT_TRUE(WIFSIGNALED(wst)) TH_LOG("child exit %d", WEXITSTATUS(wst));
			EXPECT_EQ(0, kt_count_comms());
			EXPECT_EQ(1, kt_sysfs_long(KT_SYS "contexts"));
			kt_rdma_res_summary(res_after, sizeof(res_after));
			EXPECT_STREQ(res_before, res_after);
		}
	}
	free(mem);
}

/* Create an empty marker file (on the rig's shared directory: the other node sees it). */
static void kt_touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

/*
 * The victim's TCP connection to rank 0 (the higher rank dials the lower's tcp_port): 1 once
 * its send buffer is nearly full (at least 3/4 of the buffer queued, 1 MiB of it not
 * acknowledged), from `ss -tm`: "Recv-Q Send-Q local peer", then
 * "skmem:(...,tb<sndbuf>,...,w<queued>,...)".
 */
static int kt_tcp_sndbuf_full(unsigned long *sendq, unsigned long *queued, unsigned long *buf)
{
	long port = kt_read_long("/sys/module/kcoll/parameters/tcp_port", 18601);
	char line[512], *s;
	FILE *p;

	snprintf(line, sizeof(line), "ss -Htmn state established '( dport = :%ld )' 2>/dev/null",
		 port);
	p = popen(line, "r");
	*sendq = *queued = *buf = 0;
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		if (!strstr(line, "skmem:(")) {
			if (sscanf(line, "%*u %lu", sendq) != 1)
				*sendq = 0;
			continue;
		}
		s = strstr(line, ",tb");
		if (s)
			*buf = strtoul(s + 3, NULL, 10);
		s = strstr(line, ",w");
		if (s)
			*queued = strtoul(s + 2, NULL, 10);
	}
	pclose(p);
	return *buf && *queued * 4 >= *buf * 3 && *sendq >= (1UL << 20);
}

/*
 * Rank 1's process is killed with SIGKILL while its TCP send buffer is full: its node's
 * egress is throttled to 512 kbit/s (tbf) and its sockets start with a 4 MiB send buffer, so
 * the 64 MiB send fills the buffer at once and the buffer holds about a minute of data.  A
 * close that let the dead process's buffered data drain would keep rank 0's receive fed, and
 * so alive, for that minute: rank 0's receive must fail (ECONNRESET or ETIMEDOUT) within
 * op_timeout_ms (10 s) plus slack of the kill; rank 1's exit must not wait for the buffer,
 * and its node is left with nothing.  TCP suites only (a socket's send buffer).
 */
TEST_F_TIMEOUT(dev, kill9_full_sndbuf, 600)
{
	const uint64_t size = 64ULL << 20;
	const char *skip_fmt = "/run/rig/barrier/kill9full-%u.skip";
	const char *kill_fmt = "/run/rig/barrier/kill9full-%u.killed";
	unsigned int me = kt_rank(), run = kt_env("KT_RUN", 1);
	uint64_t id = kt_comm_id("kill9full", 0);
	char skip_path[64], kill_path[64];
	unsigned char *mem;
	uint32_t h;

	if (kt_nranks() < 2)
		SKIP(return, "needs 2 nodes");
	if (kt_rdma())
		SKIP(return, "a TCP send buffer: the TCP suites run it");
	if (me > 1)
		return;
	snprintf(skip_path, sizeof(skip_path), skip_fmt, run);
	snprintf(kill_path, sizeof(kill_path), kill_fmt, run);
	mem = malloc(size);
	ASSERT_NE(NULL, mem);
	memset(mem, 0x5a, size);
	if (me == 0) {
		double t_kill = 0, t_done = 0, end;
		struct pollfd pf = { .fd = self->fd, .events = POLLIN };
		int status = 0, ret;
		bool created;
		uint64_t req;

		ASSERT_EQ(0, kt_meet("kill9full", 0, 2, 600));
		if (!access(skip_path, F_OK)) {
			free(mem);
			SKIP(return, "node 1 cannot throttle its egress (tc tbf)");
		}
		/* No ASSERT from here on: node 1 waits for us to lift its throttle. */
		ret = kt_comm_create(self->fd, id, 0, 2, self->peers, 120000, &h, NULL);
		EXPECT_EQ(0, ret);
		created = !ret;
		if (created) {
			ret = kt_p2p(self->fd, h, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1, mem,
				     size, &req);
			EXPECT_EQ(0, ret);
		}
		/* Until the receive ends, noting when node 1 says it killed its rank. */
		end = kt_now() + 300;
		while (!ret && kt_now() < end) {
			if (!t_kill && !access(kill_path, F_OK))
				t_kill = kt_now();
			if (poll(&pf, 1, 200) == 1 &&
			    !kt_wait(self->fd, h, req, 0, &status, NULL)) {
				t_done = kt_now();
				break;
			}
			if (t_kill && kt_now() - t_kill > 120)
				break;
		}
		EXPECT_NE(0, t_kill) TH_LOG("node 1 never killed its rank");
		EXPECT_NE(0, t_done) TH_LOG("the receive still pending %.0f s after the kill",
					    kt_now() - t_kill);
		EXPECT_TRUE(status == -ECONNRESET || status == -ETIMEDOUT)
			TH_LOG("status %d", status);
		/* op_timeout_ms is 10 s; the marker crosses the shared directory late at worst. */
		if (t_kill && t_done)
			EXPECT_GT(20.0, t_done - t_kill) TH_LOG("failed %.1f s after the kill",
								t_done - t_kill);
		if (created)
			EXPECT_EQ(0, kt_comm_destroy(self->fd, h));
		EXPECT_EQ(0, kt_meet("kill9full-done", 0, 2, 600));
	} else {
		unsigned long sendq = 0, queued = 0, buf = 0;
		int rfd, ready, wst = 0, full = 0, i;
		double t0;
		char wmem[64] = "";
		FILE *f;
		pid_t pid;

		f = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");
		if (f) {
			if (!fgets(wmem, sizeof(wmem), f))
				wmem[0] = 0;
			fclose(f);
		}
		if (!wmem[0] || kt_sh("tc qdisc add dev eth0 root tbf rate 512kbit burst 32kb "
				      "latency 200ms >/dev/null 2>&1")) {
			kt_touch(skip_path);
			kt_meet("kill9full", 0, 2, 600);
			free(mem);
			SKIP(return, "cannot throttle eth0 (tc tbf) or read tcp_wmem");
		}
		kt_write_str("/proc/sys/net/ipv4/tcp_wmem", "4096 4194304 4194304");
		EXPECT_EQ(0, kt_meet("kill9full", 0, 2, 600));
		/* No ASSERT until the throttle is gone. */
		pid = victim_send(id, self->peers, mem, size, &rfd);
		EXPECT_LE(0, pid);
		ready = pid >= 0 && victim_wait_ready(rfd, 180);
		for (i = 0; ready && i < 600 && !full; i++) {
			full = kt_tcp_sndbuf_full(&sendq, &queued, &buf);
			usleep(100000);
		}
		usleep(500000);
		t0 = kt_now();
		if (pid > 0)
			kill(pid, SIGKILL);
		kt_touch(kill_path);
		if (pid > 0)
			EXPECT_EQ(pid, waitpid(pid, &wst, 0));
		/* Its exit tears the comm down: nothing in it may wait for the buffer to drain. */
		EXPECT_GT(20.0, kt_now() - t0) TH_LOG("the killed rank took %.1f s to exit",
						      kt_now() - t0);
		EXPECT_TRUE(ready) TH_LOG("the victim's create failed (exit %d)",
					  WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
		EXPECT_TRUE(full) TH_LOG("send buffer never full: Send-Q %lu, queued %lu of %lu",
					 sendq, queued, buf);
		EXPECT_TRUE(WIFSIGNALED(wst)) TH_LOG("child exit %d", WEXITSTATUS(wst));
		EXPECT_EQ(0, kt_count_comms());
		EXPECT_EQ(1, kt_sysfs_long(KT_SYS "contexts"));
		/* The throttle stays until rank 0 is done: it is what keeps the buffer full. */
		EXPECT_EQ(0, kt_meet("kill9full-done", 0, 2, 600));
		EXPECT_EQ(0, kt_sh("tc qdisc del dev eth0 root"));
		EXPECT_EQ(0, kt_write_str("/proc/sys/net/ipv4/tcp_wmem", wmem));
	}
	free(mem);
}

TEST_HARNESS_MAIN
