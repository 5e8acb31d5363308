// SPDX-License-Identifier: GPL-2.0
/*
 * Several ranks of one host over kernel TCP (Documentation/design.rst, Transports: TCP).
 * Every rank is a forked process of this test with its own file; all of them use this
 * node's own rig address, so their links are TCP connections that never leave this kernel
 * (the route goes through the loopback device).
 *
 * reuse: there the peer's socket queues the sender's skbs and TCP acknowledges them before
 * the peer's reader copied the bytes out, while kcoll completes a send on that ACK.  Each
 * rank reuses its memory at once after every call (the send buffer overwritten with 0xee,
 * the result copied and overwritten), the way applications do, over 1 MiB sends and ring
 * and AUTO all-reduces of 1 MiB whose every element is checked.  A sender whose pages
 * were still referenced by the peer's socket shows as 0xee bytes or wrong sums.
 *
 * bye: cycles of create, a 1 MiB ring all-reduce, a barrier and an immediate destroy.  The
 * ranks leave in any order; none of them may see an error: no call fails and no comm
 * logs the error state (the kernel log's "comm <id> rank <r>: error") during the orderly
 * destroy.  A rank whose peer closed the link after that peer's own BYE used to fail its
 * comm, which dropped its BYEs to ranks still in their barrier (ECONNRESET there).
 *
 * port: the tcp_port setting changed at run time (netlink config-set, through kcollctl)
 * is where the next communicator listens and dials: while it is up, a listener on the new
 * port and connections to it; once it is gone, no listener there.
 *
 * Run by the node suite (no RDMA device: the comms ask for TCP anyway).
 */
#include "kselftest_harness.h"
#include "kcoll_test_comm.h"

#include <sys/mman.h>

#define TL_NRANKS	4
#define TL_BYTES	(1024 * 1024)
#define TL_COUNT	(TL_BYTES / 4)	/* int32 elements */
#define TL_TIMEOUT_MS	60000

/* The ranks' peer table: every rank at this node's address. */
static void tl_peers(struct kcoll_sockaddr *peers, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		peers[i] = kt_addr(kt_rank());
}

static int tl_create(int fd, uint64_t id, unsigned int rank, unsigned int n, uint32_t *h)
{
	struct kcoll_sockaddr peers[TL_NRANKS];
	unsigned char secret[KCOLL_SECRET_LEN];

	tl_peers(peers, n);
	kt_comm_secret(id, secret);
	return kt_comm_create_flags(fd, id, secret, rank, n, peers, TL_TIMEOUT_MS,
				    KCOLL_COMM_TRANSPORT_TCP, h, NULL);
}

static int tl_allreduce(int fd, uint32_t h, uint8_t algo, const int32_t *in, int32_t *out)
{
	struct kcoll_coll c = {
		.size = sizeof(c),
		.comm = h,
		.coll = KCOLL_ALLREDUCE,
		.dtype = KCOLL_INT32,
		.op = KCOLL_SUM,
		.algo = algo,
		.timeout_ms = TL_TIMEOUT_MS,
		.count = TL_COUNT,
		.sendbuf = (uintptr_t)in,
		.recvbuf = (uintptr_t)out,
	};

	return kt_ioctl(fd, KCOLL_IOC_COLL, &c);
}

/* kt_barrier() for a rank of this process tree (the rig's rank is the node's). */
static int tl_barrier(int fd, uint32_t h, unsigned int me, unsigned int n)
{
	uint64_t reqs[2 * TL_NRANKS];
	unsigned int i, nreq = 0;
	int ret, st;

	for (i = 0; i < n; i++)
		if (i != me) {
			ret = kt_p2p(fd, h, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, i, NULL, 0,
				     &reqs[nreq++]);
			if (ret)
				return ret;
		}
	for (i = 0; i < n; i++)
		if (i != me) {
			ret = kt_p2p(fd, h, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, i, NULL, 0,
				     &reqs[nreq++]);
			if (ret)
				return ret;
		}
	for (i = 0; i < nreq; i++) {
		ret = kt_wait(fd, h, reqs[i], TL_TIMEOUT_MS, &st, NULL);
		if (ret || st)
			return ret ?: st;
	}
	return 0;
}

/* Rank @r's all-reduce input: sums stay far from overflow and differ by position. */
static int32_t tl_val(unsigned int r, unsigned int round, uint64_t i)
{
	return (int32_t)((i * (r + 1) + round * 7 + r) & 0xfffff);
}

/* The first element of @got that is not the sum over @n ranks, or -1. */
static int64_t tl_check_sum(const int32_t *got, unsigned int n, unsigned int round,
			    int32_t *want)
{
	uint64_t i;
	unsigned int r;

	for (i = 0; i < TL_COUNT; i++) {
		int32_t s = 0;

		for (r = 0; r < n; r++)
			s += tl_val(r, round, i);
		if (got[i] != s) {
			*want = s;
			return (int64_t)i;
		}
	}
	return -1;
}

/*
 * One rank of "reuse": per round, a 1 MiB send to the next rank (the send buffer
 * overwritten with 0xee as soon as the send returned) and a receive from the previous
 * one, then a ring and an AUTO all-reduce (the input overwritten and the result moved
 * out and overwritten as soon as each returned).  Return: 0 or the failing step.
 */
static int tl_reuse_rank(uint64_t id, unsigned int me, unsigned int n, unsigned int rounds)
{
	unsigned char *snd = malloc(TL_BYTES), *rcv = malloc(TL_BYTES);
	int32_t *in = malloc(TL_BYTES), *out = malloc(TL_BYTES), *res = malloc(TL_BYTES);
	unsigned int next = (me + 1) % n, prev = (me + n - 1) % n, round, a;
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	static const uint8_t algos[] = { KCOLL_ALG_RING, KCOLL_ALG_AUTO };
	uint64_t req, got, i;
	int ret, st;
	uint32_t h;

	if (fd < 0 || !snd || !rcv || !in || !out || !res)
		return 1;
	ret = tl_create(fd, id, me, n, &h);
	if (ret) {
		fprintf(stderr, "# rank %u: create: %d\n", me, ret);
		return 2;
	}
	for (round = 0; round < rounds; round++) {
		memset(rcv, 0, TL_BYTES);
		if (kt_p2p(fd, h, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, prev, rcv, TL_BYTES, &req))
			return 3;
		for (i = 0; i < TL_BYTES; i++)
			snd[i] = kt_byte(me, TL_BYTES + round, i);
		ret = kt_p2p(fd, h, KCOLL_P2P_SEND, next, snd, TL_BYTES, NULL);
		memset(snd, 0xee, TL_BYTES);	/* reused at once */
		if (ret) {
			fprintf(stderr, "# rank %u: send: %d\n", me, ret);
			return 4;
		}
		ret = kt_wait(fd, h, req, TL_TIMEOUT_MS, &st, &got);
		if (ret || st || got != TL_BYTES) {
			fprintf(stderr, "# rank %u: receive: %d, status %d, %llu bytes\n", me, ret,
				st, (unsigned long long)got);
			return 5;
		}
		for (i = 0; i < TL_BYTES; i++)
			if (rcv[i] != kt_byte(prev, TL_BYTES + round, i)) {
				fprintf(stderr, "# rank %u round %u: from rank %u: byte %llu = 0x%02x, want 0x%02x\n",
					me, round, prev, (unsigned long long)i, rcv[i],
					kt_byte(prev, TL_BYTES + round, i));
				return 6;
			}
		for (a = 0; a < sizeof(algos); a++) {
			int32_t want;
			int64_t bad;

			for (i = 0; i < TL_COUNT; i++)
				in[i] = tl_val(me, round, i);
			memset(out, 0, TL_BYTES);
			ret = tl_allreduce(fd, h, algos[a], in, out);
			memset(in, 0xee, TL_BYTES);
			memcpy(res, out, TL_BYTES);
			memset(out, 0xee, TL_BYTES);
			if (ret) {
				fprintf(stderr, "# rank %u: all-reduce (algo %u): %d\n", me,
					algos[a], ret);
				return 7;
			}
			bad = tl_check_sum(res, n, round, &want);
			if (bad >= 0) {
				fprintf(stderr, "# rank %u round %u: all-reduce (algo %u): element %lld = %d (0x%08x), want %d\n",
					me, round, algos[a], (long long)bad, res[bad], res[bad],
					want);
				return 8;
			}
		}
	}
	/* Destroy only after every rank's last call (kt_barrier()'s reason). */
	if (tl_barrier(fd, h, me, n))
		return 9;
	if (kt_comm_destroy(fd, h))
		return 10;
	close(fd);
	return 0;
}

/*
 * One rank of "bye", one cycle: create, a 1 MiB ring all-reduce, a barrier, destroy at
 * once.  Return: 0 or the failing step.
 */
static int tl_bye_rank(uint64_t id, unsigned int me, unsigned int n)
{
	int32_t *in = malloc(TL_BYTES), *out = malloc(TL_BYTES), want;
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	int64_t bad;
	uint64_t i;
	uint32_t h;
	int ret;

	if (fd < 0 || !in || !out)
		return 1;
	ret = tl_create(fd, id, me, n, &h);
	if (ret) {
		fprintf(stderr, "# rank %u: create: %d\n", me, ret);
		return 2;
	}
	for (i = 0; i < TL_COUNT; i++)
		in[i] = tl_val(me, 0, i);
	ret = tl_allreduce(fd, h, KCOLL_ALG_RING, in, out);
	if (ret) {
		fprintf(stderr, "# rank %u: all-reduce: %d\n", me, ret);
		return 3;
	}
	bad = tl_check_sum(out, n, 0, &want);
	if (bad >= 0) {
		fprintf(stderr, "# rank %u: element %lld = %d, want %d\n", me, (long long)bad,
			out[bad], want);
		return 4;
	}
	ret = tl_barrier(fd, h, me, n);
	if (ret) {
		fprintf(stderr, "# rank %u: barrier: %d\n", me, ret);
		return 5;
	}
	ret = kt_comm_destroy(fd, h);
	if (ret) {
		fprintf(stderr, "# rank %u: destroy: %d\n", me, ret);
		return 6;
	}
	close(fd);
	return 0;
}

/*
 * One rank of "port": create, rank 0 checks that this comm's TCP listener and links are on
 * @port (`ss`: a listening socket on it, connections established to it), an all-reduce
 * over the links, a barrier, destroy.  Return: 0 or the failing step.
 */
static int tl_port_rank(uint64_t id, unsigned int me, unsigned int n, unsigned int port)
{
	int32_t *in = malloc(TL_BYTES), *out = malloc(TL_BYTES), want;
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	char cmd[160];
	uint64_t i;
	uint32_t h;

	if (fd < 0 || !in || !out)
		return 1;
	if (tl_create(fd, id, me, n, &h))
		return 2;
	if (me == 0) {
		snprintf(cmd, sizeof(cmd), "ss -Hltn 'sport = :%u' | grep -q LISTEN", port);
		if (kt_sh(cmd)) {
			fprintf(stderr, "# no TCP listener on port %u\n", port);
			return 3;
		}
		snprintf(cmd, sizeof(cmd), "ss -Htn state established '( dport = :%u )' | grep -q .",
			 port);
		if (kt_sh(cmd)) {
			fprintf(stderr, "# no TCP connection to port %u\n", port);
			return 4;
		}
	}
	for (i = 0; i < TL_COUNT; i++)
		in[i] = tl_val(me, 0, i);
	if (tl_allreduce(fd, h, KCOLL_ALG_RING, in, out) || tl_check_sum(out, n, 0, &want) >= 0)
		return 5;
	if (tl_barrier(fd, h, me, n))
		return 6;
	if (kt_comm_destroy(fd, h))
		return 7;
	close(fd);
	return 0;
}

/* Fork @n ranks running @fn; return how many failed (each says why on stderr). */
static int tl_run(struct __test_metadata *_metadata, uint64_t id, unsigned int n,
		  int (*fn)(uint64_t id, unsigned int me, unsigned int n, unsigned int arg),
		  unsigned int arg)
{
	pid_t pids[TL_NRANKS];
	unsigned int r;
	int bad = 0, st;

	for (r = 0; r < n; r++) {
		pids[r] = fork();
		if (!pids[r])
			_exit(fn(id, r, n, arg));
	}
	for (r = 0; r < n; r++) {
		if (pids[r] < 0 || waitpid(pids[r], &st, 0) != pids[r]) {
			bad++;
			continue;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			TH_LOG("rank %u failed at step %d", r,
			       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			bad++;
		}
	}
	return bad;
}

static int tl_reuse_fn(uint64_t id, unsigned int me, unsigned int n, unsigned int rounds)
{
	return tl_reuse_rank(id, me, n, rounds);
}

static int tl_bye_fn(uint64_t id, unsigned int me, unsigned int n, unsigned int unused)
{
	return tl_bye_rank(id, me, n);
}

static int tl_port_fn(uint64_t id, unsigned int me, unsigned int n, unsigned int port)
{
	return tl_port_rank(id, me, n, port);
}

/* Lines of the kernel log where comm @id entered the error state (not aborted). */
static int tl_comm_errors(uint64_t id)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "exit $(dmesg | grep -cE 'comm %llx rank [0-9]+: error ')",
		 (unsigned long long)id);
	return kt_sh(cmd);
}

FIXTURE(tl) {
	int unused;
};

FIXTURE_SETUP(tl)
{
	if (access(KCOLL_DEVICE_PATH, F_OK))
		SKIP(return, "kcoll is not loaded");
}

FIXTURE_TEARDOWN(tl)
{
}

TEST_F_TIMEOUT(tl, reuse, 600)
{
	unsigned int rounds = kt_env("KT_TCP_LOCAL_ROUNDS", kt_quick() ? 2 : 6);
	uint64_t id = kt_comm_id("tcp_local_reuse", 0);
	double t0 = kt_now();

	EXPECT_EQ(0, tl_run(_metadata, id, TL_NRANKS, tl_reuse_fn, rounds));
	TH_LOG("%u ranks, %u rounds in %.1f s", TL_NRANKS, rounds, kt_now() - t0);
	EXPECT_EQ(0, tl_comm_errors(id));
	EXPECT_EQ(0, kt_count_comms());
}

TEST_F_TIMEOUT(tl, bye, 900)
{
	unsigned int cycles = kt_env("KT_TCP_LOCAL_CYCLES", kt_quick() ? 3 : 8), c;
	int failed = 0, errors = 0;
	double t0 = kt_now();

	for (c = 0; c < cycles; c++) {
		uint64_t id = kt_comm_id("tcp_local_bye", c);
		int e;

		failed += tl_run(_metadata, id, TL_NRANKS, tl_bye_fn, 0);
		e = tl_comm_errors(id);
		if (e)
			TH_LOG("cycle %u: comm %llx logged %d error(s)", c,
			       (unsigned long long)id, e);
		errors += e;
	}
	TH_LOG("%u cycles of %u ranks in %.1f s", cycles, TL_NRANKS, kt_now() - t0);
	EXPECT_EQ(0, failed);
	EXPECT_EQ(0, errors);
	EXPECT_EQ(0, kt_count_comms());
}

TEST_F_TIMEOUT(tl, port, 300)
{
	long old = kt_read_long("/sys/module/kcoll/parameters/tcp_port", -1);
	const unsigned int port = 18779;
	uint64_t id = kt_comm_id("tcp_local_port", 0);
	char cmd[128];

	ASSERT_LT(0, old);
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl config set tcp_port %u", port);
	ASSERT_EQ(0, kt_sh(cmd));
	EXPECT_EQ(port, kt_read_long("/sys/module/kcoll/parameters/tcp_port", -1));
	EXPECT_EQ(0, tl_run(_metadata, id, 2, tl_port_fn, port));
	/* The last comm on the port is gone: so is its listener (within 5 s). */
	snprintf(cmd, sizeof(cmd), "for i in $(seq 50); do ss -Hltn 'sport = :%u' | "
		 "grep -q LISTEN || exit 0; sleep 0.1; done; exit 1", port);
	EXPECT_EQ(0, kt_sh(cmd));
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl config set tcp_port %ld", old);
	EXPECT_EQ(0, kt_sh(cmd));
	EXPECT_EQ(0, tl_comm_errors(id));
	EXPECT_EQ(0, kt_count_comms());
}

TEST_HARNESS_MAIN
