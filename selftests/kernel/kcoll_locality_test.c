// SPDX-License-Identifier: GPL-2.0
/*
 * Locality at COMM_CREATE: ranks that say they share a host are grouped, and the groups
 * reach the algorithm choice.  Four ranks in one VM on the loopback transport (this process
 * and three forked children): all on one host (local_size 4 in sysfs), then as two hosts of
 * two ranks: AUTO all-reduce picks what core's kcoll_sched_select() picks with that
 * local_size (the derived table), and under the threshold rules (small_bytes set) the
 * hierarchical schedule; results checked.  One-rank
 * communicators check the argument's rules: contradictory tables, sizes, tails.  Run by the
 * node suite (no RDMA device needed).
 */
#include "kselftest_harness.h"
#include "kcoll_test_comm.h"
#include "../../core/kcoll_sched.h"

#define LOC_N		4
#define LOC_COUNT	1100	/* 4400 bytes: the single-copy same-host path on one host */

static const struct kcoll_sockaddr loc_peers[LOC_N] = {
	{ .family = AF_INET, .addr = { 127, 0, 0, 1 } },
	{ .family = AF_INET, .addr = { 127, 0, 0, 1 } },
	{ .family = AF_INET, .addr = { 127, 0, 0, 1 } },
	{ .family = AF_INET, .addr = { 127, 0, 0, 1 } },
};

static int loc_create(int fd, uint64_t id, unsigned int rank, unsigned int nranks,
		      const void *loc, uint32_t loc_size, uint32_t *h)
{
	unsigned char secret[KCOLL_SECRET_LEN];
	struct kcoll_comm_create c = {
		.size = sizeof(c),
		.comm_id = id,
		.rank = rank,
		.nranks = nranks,
		.peers = (uintptr_t)loc_peers,
		.peer_size = sizeof(loc_peers[0]),
		.timeout_ms = 30000,
		.locality = (uintptr_t)loc,
		.locality_size = loc_size,
	};
	int ret;

	kt_comm_secret(id, secret);
	memcpy(c.secret, secret, sizeof(secret));
	ret = kt_ioctl(fd, KCOLL_IOC_COMM_CREATE, &c);
	*h = c.handle;
	return ret;
}

static long loc_sysfs(uint64_t id, unsigned int rank, const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), KT_SYS "comms/%016llx-%u/%s", (unsigned long long)id,
		 rank, file);
	return kt_sysfs_long(path);
}

/* One rank: create, check sysfs, all-reduce; 0 or the failing step. */
static int loc_rank(uint64_t id, unsigned int rank, const struct kcoll_rank_locality *loc,
		    long local_size, long hosts, unsigned int want_algo)
{
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	int32_t in[LOC_COUNT], out[LOC_COUNT];
	struct kcoll_coll c = {
		.size = sizeof(c),
		.coll = KCOLL_ALLREDUCE,
		.dtype = KCOLL_INT32,
		.op = KCOLL_SUM,
		.timeout_ms = 30000,
		.count = LOC_COUNT,
		.sendbuf = (uintptr_t)in,
		.recvbuf = (uintptr_t)out,
	};
	uint32_t h;
	int ret = 0, i;

	if (fd < 0)
		return 1;
	if (loc_create(fd, id, rank, LOC_N, loc, sizeof(*loc), &h))
		return 2;
	if (loc_sysfs(id, rank, "local_size") != local_size)
		ret = 3;
	else if (loc_sysfs(id, rank, "local_rank") != (long)rank % local_size)
		ret = 4;
	else if (loc_sysfs(id, rank, "hosts") != hosts)
		ret = 5;
	for (i = 0; i < LOC_COUNT; i++)
		in[i] = i + (int)rank;
	c.comm = h;
	if (!ret && kt_ioctl(fd, KCOLL_IOC_COLL, &c))
		ret = 6;
	for (i = 0; !ret && i < LOC_COUNT; i++)
		if (out[i] != 4 * i + 6)
			ret = 7;
	if (!ret && c.algo_used != want_algo)
		ret = 8;
	/* Every rank done before any destroys (kt_barrier()'s reason). */
	if (!ret && kt_barrier(fd, h))
		ret = 9;
	if (kt_comm_destroy(fd, h))
		ret = ret ?: 10;
	close(fd);
	return ret;
}

/* What the module's AUTO picks for loc_rank()'s all-reduce: core's own selection. */
static unsigned int loc_auto(uint32_t local_size)
{
	struct kcoll_sched_tuning t;

	kcoll_sched_tuning_default(&t);
	t.local_size = local_size;
	return kcoll_sched_select(KCOLL_ALLREDUCE, LOC_N, LOC_COUNT * sizeof(int32_t), &t);
}

/* Ranks 1..3 forked, rank 0 here; the steps they failed at, or 0. */
static int loc_run(const char *name, const struct kcoll_rank_locality *loc, long local_size,
		   long hosts, unsigned int want_algo, int fails[LOC_N])
{
	uint64_t id = kt_comm_id(name, 0);
	pid_t pids[LOC_N];
	int r, st, bad = 0;

	for (r = 1; r < LOC_N; r++) {
		pids[r] = fork();
		if (!pids[r])
			_exit(loc_rank(id, r, loc, local_size, hosts, want_algo));
	}
	fails[0] = loc_rank(id, 0, loc, local_size, hosts, want_algo);
	bad += !!fails[0];
	for (r = 1; r < LOC_N; r++) {
		fails[r] = -1;
		if (pids[r] > 0 && waitpid(pids[r], &st, 0) == pids[r] && WIFEXITED(st))
			fails[r] = WEXITSTATUS(st);
		bad += !!fails[r];
	}
	return bad;
}

TEST(one_host)
{
	struct kcoll_rank_locality loc[LOC_N];
	int fails[LOC_N], r;

	for (r = 0; r < LOC_N; r++)
		loc[r] = (struct kcoll_rank_locality){ .host = 0xabcdef, .nic = 0x1234,
						       .numa_node = -1 };
	/*
	 * One host: no second level to climb, the flat choice for a schedule; but every
	 * peer is on the loop transport, so the call meets the others in memory instead.
	 */
	EXPECT_NE(KCOLL_ALG_HIER, loc_auto(LOC_N));
	EXPECT_EQ(0, loc_run("loc_one_host", loc, LOC_N, 1, KCOLL_ALG_USED_LOCAL, fails))
		TH_LOG("steps failed: %d %d %d %d", fails[0], fails[1], fails[2], fails[3]);
	EXPECT_EQ(0, kt_count_comms());
}

TEST(two_hosts_hier)
{
	struct kcoll_rank_locality loc[LOC_N];
	int fails[LOC_N], r;

	for (r = 0; r < LOC_N; r++)
		loc[r] = (struct kcoll_rank_locality){ .host = 100 + r / 2, .numa_node = r % 2,
						       .leaf = 7 };
	EXPECT_EQ(0, loc_run("loc_two_hosts", loc, 2, 2, loc_auto(2), fails))
		TH_LOG("steps failed: %d %d %d %d", fails[0], fails[1], fails[2], fails[3]);
	EXPECT_EQ(0, kt_count_comms());
	/* The threshold rules (an admin's small_bytes): hierarchical up to small_bytes. */
	ASSERT_EQ(0, kt_sh("tools/kcollctl/kcollctl config set small_bytes 2097152"));
	EXPECT_EQ(0, loc_run("loc_two_hosts_rules", loc, 2, 2, KCOLL_ALG_HIER, fails))
		TH_LOG("steps failed: %d %d %d %d", fails[0], fails[1], fails[2], fails[3]);
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl config set small_bytes 0"));
	EXPECT_EQ(0, kt_count_comms());
}

/* A table that contradicts itself, or a bad size: refused before any connection. */
struct loc_bad {
	const char *what;
	struct kcoll_rank_locality loc;
	uint32_t size;		/* 0: sizeof(loc) */
	bool null;		/* locality pointer 0 */
	int err;
};

static const struct loc_bad loc_bads[] = {
	{ "nic without host", { .nic = 5, .numa_node = -1 }, 0, false, -EINVAL },
	{ "numa below -1", { .host = 1, .numa_node = -2 }, 0, false, -EINVAL },
	{ "reserved", { .host = 1, .reserved = 1 }, 0, false, -EINVAL },
	{ "size too small", { .host = 1 }, KCOLL_RANK_LOCALITY_SIZE_VER0 - 8, false, -EINVAL },
	{ "size too large", { .host = 1 }, KCOLL_PEER_SIZE_MAX + 8, false, -E2BIG },
	{ "size without table", { .host = 1 }, 8, true, -EINVAL },
	{ "good", { .host = 1, .nic = 2, .numa_node = 0 }, 0, false, 0 },
	{ "larger entry, zero tail", { .host = 1 }, sizeof(struct kcoll_rank_locality) + 8,
	  false, 0 },
};

TEST(one_rank_args)
{
	struct { struct kcoll_rank_locality l; uint64_t tail; } e;
	struct kcoll_comm_create c = {
		.size = sizeof(c), .nranks = 1, .peers = (uintptr_t)loc_peers,
		.peer_size = sizeof(loc_peers[0]), .locality_size = sizeof(e.l), .reserved2 = 1,
	};
	size_t i;
	uint32_t h;
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd);
	for (i = 0; i < sizeof(loc_bads) / sizeof(loc_bads[0]); i++) {
		const struct loc_bad *b = &loc_bads[i];
		uint64_t id = kt_comm_id("loc_args", i);
		int ret;

		e.l = b->loc;
		e.tail = 0;
		ret = loc_create(fd, id, 0, 1, b->null ? NULL : &e,
				 b->size ?: sizeof(e.l), &h);
		EXPECT_EQ(b->err, ret) TH_LOG("%s", b->what);
		if (!ret) {
			EXPECT_EQ(1, loc_sysfs(id, 0, "local_size"));
			EXPECT_EQ(1, loc_sysfs(id, 0, "hosts"));
			EXPECT_EQ(0, kt_comm_destroy(fd, h));
		}
	}
	/* A non-zero tail in a larger entry: something this kernel does not know. */
	e.l = (struct kcoll_rank_locality){ .host = 1 };
	e.tail = 1;
	EXPECT_EQ(-E2BIG, loc_create(fd, kt_comm_id("loc_args", 99), 0, 1, &e, sizeof(e), &h));
	/* reserved2 set. */
	c.comm_id = kt_comm_id("loc_args", 100);
	c.locality = (uintptr_t)&e.l;
	EXPECT_EQ(-EINVAL, kt_ioctl(fd, KCOLL_IOC_COMM_CREATE, &c));
	close(fd);
	EXPECT_EQ(0, kt_count_comms());
}

TEST_HARNESS_MAIN
