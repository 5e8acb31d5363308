// SPDX-License-Identifier: GPL-2.0
/*
 * One-rank communicators and the lifetimes and limits a local process reaches without any
 * RDMA traffic (Documentation/security.rst, "Local users: object lifetimes and limits").
 * Runs on one VM (the node suite); the collectives themselves on one rank are checked by
 * kcoll_coll_test, which the node suite runs with one rank too.
 *
 *  - a one-rank communicator has no device: buffers, collectives and point-to-point calls
 *    on it must work, or fail with the documented errno, never reach for a device;
 *  - COMM_CREATE racing COMM_DESTROY of the handle it is about to return;
 *  - a buffer mapping is not inherited by fork();
 *  - oversized peer entries, buffers, collectives: the documented errno, at once;
 *  - the communicator's memory from vmalloc (fail_page_alloc, where the kernel has it).
 */
#include <dirent.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define PG 4096ULL

/* Communicators listed on the node (/sys/kernel/kcoll/comms). */
static int count_comms(void)
{
	DIR *d = opendir("/sys/kernel/kcoll/comms");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

FIXTURE(one) {
	int fd;
	uint32_t comm;
};

FIXTURE_SETUP(one)
{
	self->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, kt_one_rank(self->fd, _metadata->name, 0, &self->comm));
}

FIXTURE_TEARDOWN(one)
{
	EXPECT_EQ(0, kt_comm_destroy(self->fd, self->comm));
	close(self->fd);
}

/* Ready at once, one rank, and no device, so no connection to count. */
TEST_F(one, ready_without_network)
{
	struct kcoll_comm_query q = { .size = sizeof(q), .handle = self->comm };

	ASSERT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COMM_QUERY, &q));
	EXPECT_EQ(KCOLL_COMM_READY, q.state);
	EXPECT_EQ(0, q.error);
	EXPECT_EQ(0, q.rank);
	EXPECT_EQ(1, q.nranks);
}

/* Point-to-point needs another rank: there is none, so every call is EINVAL. */
TEST_F(one, p2p_has_no_peer)
{
	static const struct { uint32_t flags; unsigned int peer; } cases[] = {
		{ KCOLL_P2P_SEND, 0 },
		{ KCOLL_P2P_RECV, 0 },
		{ KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, 0 },
		{ KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 0 },
		{ KCOLL_P2P_SEND, 1 },
		{ KCOLL_P2P_RECV, 1 },
		{ KCOLL_P2P_SEND | KCOLL_P2P_BUF, 0 },
		{ KCOLL_P2P_RECV | KCOLL_P2P_BUF, 0 },
	};
	char b[64] = "";
	uint32_t h;
	unsigned int i;

	ASSERT_EQ(0, kt_buf_create(self->fd, self->comm, PG, &h, NULL));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kcoll_p2p p = {
			.size = sizeof(p), .flags = cases[i].flags, .comm = self->comm,
			.peer = cases[i].peer, .len = 8,
			.addr = cases[i].flags & KCOLL_P2P_BUF ? 0 : (uintptr_t)b,
			.buf = cases[i].flags & KCOLL_P2P_BUF ? h : 0,
		};

		EXPECT_EQ(-EINVAL, kt_ioctl(self->fd, KCOLL_IOC_P2P, &p)) TH_LOG("case %u", i);
	}
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
}

/*
 * Buffers: created without a device, mapped, zeroed, charged to RLIMIT_MEMLOCK (the charge
 * goes with the pages), destroyed; a collective on them.
 */
TEST_F(one, buffers)
{
	static const uint64_t lens[] = { 1, PG, PG + 1, 1 << 20, (8 << 20) + 3 };
	struct rlimit old, rl = { 1 << 20, 1 << 20 };
	unsigned int i;
	long pin0 = kt_vm_pin_kb();

	ASSERT_LE(0, pin0);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint64_t off, len = lens[i], pages = (len + PG - 1) / PG;
		struct kcoll_coll c = {
			.size = sizeof(c), .comm = self->comm, .coll = KCOLL_ALLREDUCE,
			.dtype = KCOLL_UINT8, .op = KCOLL_SUM, .count = len / 2,
			.flags = KCOLL_COLL_SEND_BUF | KCOLL_COLL_RECV_BUF,
			.sendbuf = 0, .recvbuf = len / 2,
		};
		unsigned char *m;
		uint64_t j;
		uint32_t h;

		ASSERT_EQ(0, kt_buf_create(self->fd, self->comm, len, &h, &off)) TH_LOG("%llu",
			(unsigned long long)len);
		EXPECT_EQ(pin0 + (long)(pages * PG / 1024), kt_vm_pin_kb());
		m = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
		ASSERT_NE(MAP_FAILED, m);
		for (j = 0; j < pages * PG; j += PG / 2)
			EXPECT_EQ(0, m[j]);
		for (j = 0; j < len / 2; j++)
			m[j] = (unsigned char)(j * 7);
		c.send_handle = c.recv_handle = h;
		EXPECT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COLL, &c));
		for (j = 0; j < len / 2; j++)
			if (m[len / 2 + j] != (unsigned char)(j * 7))
				break;
		EXPECT_EQ(len / 2, j);
		EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
		EXPECT_EQ(-ENOENT, kt_buf_destroy(self->fd, self->comm, h));
		/* Still mapped: the pages and their charge stay until munmap. */
		EXPECT_EQ(pin0 + (long)(pages * PG / 1024), kt_vm_pin_kb());
		m[len - 1] = 1;
		EXPECT_EQ(0, munmap(m, pages * PG));
		EXPECT_EQ(pin0, kt_vm_pin_kb());
	}
	/* RLIMIT_MEMLOCK applies as on any communicator. */
	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &old));
	ASSERT_EQ(0, kt_set_ipc_lock(false));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	EXPECT_EQ(-ENOMEM, kt_buf_create(self->fd, self->comm, (1 << 20) + 1, NULL, NULL));
	EXPECT_EQ(0, kt_buf_create(self->fd, self->comm, 1 << 20, &i, NULL));
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, i));
	ASSERT_EQ(0, kt_set_ipc_lock(true));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &old));
}

/* A collective on plain memory, blocking and not, in place and not: a copy of one rank. */
TEST_F(one, allreduce_plain_memory)
{
	static const uint64_t counts[] = { 0, 1, 7, 4097, (1 << 20) + 3 };
	unsigned int i, ip;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		for (ip = 0; ip < 3; ip++) {
			uint64_t n = counts[i], j, bad = 0;
			float *in = malloc(n * 4 + 4), *out = malloc(n * 4 + 4);
			struct kcoll_coll c = {
				.size = sizeof(c), .comm = self->comm, .coll = KCOLL_ALLREDUCE,
				.dtype = KCOLL_FP32, .op = ip == 2 ? KCOLL_AVG : KCOLL_SUM,
				.count = n, .sendbuf = ip == 1 ? 0 : (uintptr_t)in,
				.recvbuf = (uintptr_t)(ip == 1 ? in : out),
				.flags = ip == 1 ? KCOLL_COLL_IN_PLACE : KCOLL_COLL_NONBLOCK,
			};
			int status;

			for (j = 0; j < n; j++)
				in[j] = (float)(j % 1000) - 3.5f;
			ASSERT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COLL, &c));
			if (c.flags & KCOLL_COLL_NONBLOCK) {
				ASSERT_EQ(0, kt_wait(self->fd, self->comm, c.req, ~0u, &status,
						     NULL));
				EXPECT_EQ(0, status);
			}
			for (j = 0; j < n; j++)
				bad += (ip == 1 ? in : out)[j] != (float)(j % 1000) - 3.5f;
			EXPECT_EQ(0, bad) TH_LOG("count %llu variant %u",
						 (unsigned long long)n, ip);
			free(in);
			free(out);
		}
	}
}

/*
 * COMM_QUERY and the sysfs directory render the same description of the comm
 * (kcoll_comm_describe()): after a collective, every field both show is the same.
 */
TEST_F(one, query_and_sysfs_agree)
{
	static const char *const states[] = { "creating", "connecting", "ready", "error",
					      "aborted", "destroyed" };
	struct kcoll_comm_query q = { .size = sizeof(q), .handle = self->comm };
	float x[4] = { 1, 2, 3, 4 };
	struct kcoll_coll c = {
		.size = sizeof(c), .comm = self->comm, .coll = KCOLL_ALLREDUCE,
		.dtype = KCOLL_FP32, .op = KCOLL_SUM, .count = 4, .recvbuf = (uintptr_t)x,
		.flags = KCOLL_COLL_IN_PLACE,
	};
	char dir[96], path[160], state[32] = "";
	FILE *f;

	ASSERT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COLL, &c));
	ASSERT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COMM_QUERY, &q));
	snprintf(dir, sizeof(dir), "/sys/kernel/kcoll/comms/%016llx-%u",
		 (unsigned long long)q.comm_id, q.rank);
#define SYS(name) (snprintf(path, sizeof(path), "%s/%s", dir, name), kt_read_long(path, -999))
	ASSERT_EQ(0, access(dir, F_OK)) TH_LOG("%s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/state", dir);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(1, fscanf(f, "%31s", state));
	fclose(f);
	ASSERT_GT(sizeof(states) / sizeof(states[0]), q.state);
	EXPECT_STREQ(states[q.state], state);
	EXPECT_EQ(q.error, SYS("error"));
	EXPECT_EQ(q.rank, SYS("rank"));
	EXPECT_EQ(q.nranks, SYS("nranks"));
	EXPECT_EQ(q.tx_bytes, SYS("tx_bytes"));
	EXPECT_EQ(q.rx_bytes, SYS("rx_bytes"));
	EXPECT_EQ(q.tx_ops, SYS("tx_ops"));
	EXPECT_EQ(q.rx_ops, SYS("rx_ops"));
	EXPECT_EQ(0, SYS("peers_connected"));
	EXPECT_LE(1, SYS("coll_ops"));
#undef SYS
}

/* A child of fork() does not get the buffer's mapping (VM_DONTCOPY), as with DONTFORK. */
TEST_F(one, fork_does_not_inherit_buffer)
{
	uint64_t off, len = 4 * PG;
	unsigned char *m;
	int status;
	uint32_t h;
	pid_t pid;

	ASSERT_EQ(0, kt_buf_create(self->fd, self->comm, len, &h, &off));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, m);
	memset(m, 9, len);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned char vec[4];

		/* Not mapped at all: mincore() says ENOMEM. */
		_exit(mincore(m, len, vec) == -1 && errno == ENOMEM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	EXPECT_EQ(9, m[len - 1]);
	EXPECT_EQ(0, munmap(m, len));
	EXPECT_EQ(0, kt_buf_destroy(self->fd, self->comm, h));
}

/*
 * Collectives start while another thread holds teardown_mutex over and over (buffer
 * create and destroy): a collective that finds it taken is kicked when it is unlocked, so
 * every one completes, none waits for a timer.
 */
struct churn {
	int fd;
	uint32_t comm;
	volatile int stop;
	unsigned int n;
};

static void *buf_churn(void *arg)
{
	struct churn *c = arg;
	uint32_t h;

	while (!c->stop) {
		if (!kt_buf_create(c->fd, c->comm, 64 << 10, &h, NULL) &&
		    !kt_buf_destroy(c->fd, c->comm, h))
			c->n++;
	}
	return NULL;
}

TEST_F(one, collectives_while_buffers_churn)
{
	struct churn ch = { .fd = self->fd, .comm = self->comm };
	unsigned int i, n = kt_quick() ? 50 : 300, bad = 0;
	static float in[4096], out[4096];
	uint64_t *req = calloc(n, sizeof(*req));
	pthread_t t;
	int status;

	ASSERT_NE(NULL, req);
	for (i = 0; i < 4096; i++)
		in[i] = (float)i;
	ASSERT_EQ(0, pthread_create(&t, NULL, buf_churn, &ch));
	for (i = 0; i < n; i++) {
		struct kcoll_coll c = {
			.size = sizeof(c), .comm = self->comm, .coll = KCOLL_ALLREDUCE,
			.dtype = KCOLL_FP32, .op = KCOLL_MAX, .count = 4096,
			.flags = KCOLL_COLL_NONBLOCK, .sendbuf = (uintptr_t)in,
			.recvbuf = (uintptr_t)out,
		};

		ASSERT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COLL, &c)) TH_LOG("call %u", i);
		req[i] = c.req;
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, kt_wait(self->fd, self->comm, req[i], 60000, &status, NULL))
			TH_LOG("call %u", i);
		bad += status != 0;
	}
	ch.stop = 1;
	pthread_join(t, NULL);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, memcmp(in, out, sizeof(in)));
	TH_LOG("%u collectives, %u buffers created and destroyed meanwhile", n, ch.n);
	free(req);
}

/*
 * A buffer larger than the page array can count (2^32 + 1 pages with max_buf_mb raised):
 * refused with ENOMEM, never a buffer of fewer pages than its length says.
 */
TEST_F(one, huge_buffer_is_enomem)
{
	const char *param = "/sys/module/kcoll/parameters/max_buf_mb";
	char old[32] = "";
	FILE *f = fopen(param, "r");
	uint32_t h;
	int ret;

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(old, sizeof(old), f));
	fclose(f);
	f = fopen(param, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "%u\n", (1U << 24) + 1);	/* 16 TiB + 1 MiB */
	fclose(f);
	ret = kt_buf_create(self->fd, self->comm, (1ULL << 44) + PG, &h, NULL);
	if (!ret)
		kt_buf_destroy(self->fd, self->comm, h);
	f = fopen(param, "w");
	ASSERT_NE(NULL, f);
	fputs(old, f);
	fclose(f);
	EXPECT_EQ(-ENOMEM, ret);
}

/*
 * A collective over 1 TiB of caller memory (in place, so one rank has nothing to do but
 * pin it): the page array alone is 2 GiB, which the allocator refuses; ENOMEM, no warning.
 */
TEST_F(one, huge_collective_is_enomem)
{
	float x[4] = { 0 };
	struct kcoll_coll c = {
		.size = sizeof(c), .comm = self->comm, .coll = KCOLL_ALLREDUCE,
		.dtype = KCOLL_FP32, .op = KCOLL_SUM, .count = 1ULL << 38,
		.flags = KCOLL_COLL_IN_PLACE, .recvbuf = (uintptr_t)x,
	};

	EXPECT_EQ(-ENOMEM, kt_ioctl(self->fd, KCOLL_IOC_COLL, &c));
	c.count = 4;
	EXPECT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COLL, &c));
}

/*
 * COMM_CREATE against COMM_DESTROY of the handle it is about to return (handles are
 * predictable: one more than the last).  Until create returns, the handle does not exist:
 * destroy says ENOENT, and nothing is freed twice.
 */
struct race {
	int fd;
	volatile int stop;
	volatile uint32_t last;
	unsigned int destroyed;
};

static void *race_destroyer(void *arg)
{
	struct race *r = arg;

	while (!r->stop) {
		uint32_t next = r->last + 1, k;

		for (k = 0; k < 3; k++)
			if (!kt_comm_destroy(r->fd, next + k))
				r->destroyed++;
	}
	return NULL;
}

TEST(create_destroy_race)
{
	struct race r = { .fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC) };
	unsigned int i, n = kt_quick() ? 300 : 2000, created = 0;
	pthread_t t[2];
	double t0 = kt_now();

	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&t[0], NULL, race_destroyer, &r));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, race_destroyer, &r));
	for (i = 0; i < n && kt_now() - t0 < 60; i++) {
		uint32_t h;

		if (!kt_one_rank(r.fd, "race", i, &h)) {
			created++;
			r.last = h;
			kt_comm_destroy(r.fd, h);	/* ENOENT if a destroyer was first */
		}
	}
	r.stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	TH_LOG("%u creates, %u destroyed by the other threads", created, r.destroyed);
	EXPECT_EQ(i, created);
	EXPECT_EQ(0, close(r.fd));
	/* Every one destroyed once: none left listed on the node. */
	EXPECT_EQ(0, count_comms());
}

/*
 * Peer entries larger than struct kcoll_sockaddr need a zero tail, and are capped at
 * KCOLL_PEER_SIZE_MAX: a larger peer_size is E2BIG at once, before any of the table is read
 * (so no caller makes the kernel scan gigabytes of its memory).
 */
TEST(peer_size_cap)
{
	const uint64_t entry = 16 << 20;
	const unsigned int n = 16;
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	struct kcoll_sockaddr lo = { .family = AF_INET, .addr = { 127, 0, 0, 1 } };
	struct kcoll_sockaddr me = kt_addr(0);
	static const struct { uint32_t size; int err; } cases[] = {
		{ sizeof(struct kcoll_sockaddr) - 1, -EINVAL },
		{ sizeof(struct kcoll_sockaddr), 0 },
		{ KCOLL_PEER_SIZE_MAX, 0 },
		{ KCOLL_PEER_SIZE_MAX + 1, -E2BIG },
		{ 1U << 20, -E2BIG },
		{ 0xffffffffu, -E2BIG },
	};
	unsigned char *p;
	unsigned int i;
	double t0;

	ASSERT_LE(0, fd);
	p = mmap(NULL, KCOLL_PEER_SIZE_MAX + 1, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memcpy(p, &me, sizeof(me));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kcoll_comm_create c = {
			.size = sizeof(c), .comm_id = kt_comm_id("peer_size", i), .nranks = 1,
			.peers = (uintptr_t)p, .peer_size = cases[i].size, .timeout_ms = 1000,
		};

		EXPECT_EQ(cases[i].err, kt_ioctl(fd, KCOLL_IOC_COMM_CREATE, &c))
			TH_LOG("peer_size %u", cases[i].size);
		if (!cases[i].err)
			EXPECT_EQ(0, kt_comm_destroy(fd, c.handle));
	}
	munmap(p, KCOLL_PEER_SIZE_MAX + 1);

	/* 16 entries of 16 MiB, zero but for the address: refused before any is read. */
	p = mmap(NULL, n * entry, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < n; i++)
		memcpy(p + i * entry, &lo, sizeof(lo));
	t0 = kt_now();
	{
		struct kcoll_comm_create c = {
			.size = sizeof(c), .comm_id = kt_comm_id("peer_size", 99), .nranks = n,
			.peers = (uintptr_t)p, .peer_size = entry, .timeout_ms = 1000,
		};

		EXPECT_EQ(-E2BIG, kt_ioctl(fd, KCOLL_IOC_COMM_CREATE, &c));
	}
	TH_LOG("%.3f s", kt_now() - t0);
	munmap(p, n * entry);
	close(fd);
}

TEST(large_comm_from_vmalloc)
{
	const char *d = "/sys/kernel/debug/fail_page_alloc";
	struct kcoll_sockaddr *peers;
	char path[128];
	unsigned int i, n = KCOLL_MAX_RANKS;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/probability", d);
	if (access(path, W_OK))
		SKIP(return, "no fail_page_alloc in this kernel");
	fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	peers = calloc(n, sizeof(*peers));
	ASSERT_NE(NULL, peers);
	for (i = 0; i < n; i++)
		peers[i] = kt_addr(i % 200);
	peers[0].addr[3] = 250;		/* not this node: EADDRNOTAVAIL after the allocations */
#define FPA(file, v) do {						\
	snprintf(path, sizeof(path), "%s/" file, d);			\
	ASSERT_EQ(0, kt_write_str(path, v));				\
} while (0)
	FPA("ignore-gfp-wait", "N");
	FPA("ignore-gfp-highmem", "N");
	FPA("min-order", "1");			/* only kmalloc's large attempts */
	FPA("task-filter", "Y");
	FPA("interval", "1");
	FPA("times", "-1");
	FPA("verbose", "0");
	FPA("probability", "100");
	ASSERT_EQ(0, kt_write_str("/proc/self/make-it-fail", "1"));
	for (i = 0; i < 5; i++)
		ret = kt_comm_create(fd, kt_comm_id("vmalloc", i), 0, n, peers, 1000, NULL, NULL);
	ASSERT_EQ(0, kt_write_str("/proc/self/make-it-fail", "0"));
	FPA("probability", "0");
	FPA("min-order", "0");
	FPA("task-filter", "N");
	EXPECT_TRUE(ret == -EADDRNOTAVAIL || ret == -ENOMEM) TH_LOG("%d", ret);
	free(peers);
	close(fd);
}

TEST_HARNESS_MAIN
