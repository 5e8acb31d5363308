/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for selftests that run on every node of a rig cluster at once: the peer table
 * comes from the rig (node i is rank i at 169.254.77.<i+1>), so the kernel is tested
 * without libkcoll's bootstrap in the way.
 */
#ifndef KCOLL_TEST_COMM_H
#define KCOLL_TEST_COMM_H

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kcoll.h>

/* A shell command's exit status, -1 if it did not exit. */
static inline int kt_sh(const char *cmd)
{
	int ret = system(cmd);

	return WIFEXITED(ret) ? WEXITSTATUS(ret) : -1;
}

/* MRs of this node whose length is @len (rdma res lists the kernel's, kcoll's among them). */
static inline int kt_mrs_of_length(uint64_t len)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd),
		 "exit $(rdma resource show mr | grep -cE 'mrlen %llu( |$)')",
		 (unsigned long long)len);
	return kt_sh(cmd);
}

/* The first byte of @map[0, @size) outside [@off, @off + @len) that is not @fill, or @size. */
static inline uint64_t kt_sentinel_written(const unsigned char *map, uint64_t size,
					   uint64_t off, uint64_t len, unsigned char fill)
{
	uint64_t i;

	for (i = 0; i < size; i++)
		if ((i < off || i >= off + len) && map[i] != fill)
			break;
	return i;
}

/* The number a file (a sysfs or module parameter file) starts with, or @def. */
static inline long kt_read_long(const char *path, long def)
{
	FILE *f = fopen(path, "r");
	long v = def;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = def;
		fclose(f);
	}
	return v;
}

static inline unsigned int kt_env(const char *name, unsigned int def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned int)strtoul(v, NULL, 0) : def;
}

/*
 * The debug tier (KASAN, lockdep, kmemleak) runs several times slower: there the tests keep
 * every code path but shrink their volume (fewer cycles, smaller transfers).
 */
static inline int kt_quick(void)
{
	const char *f = getenv("RIG_FLAVOUR");

	return f && !strcmp(f, "debug");
}

static inline unsigned int kt_rank(void) { return kt_env("RIG_NODE", 0); }
/* The rig loaded an RDMA device (RIG_RDMA=none: the TCP suites, no MR to count). */
static inline bool kt_rdma(void)
{
	const char *v = getenv("RIG_RDMA");

	return !v || strcmp(v, "none");
}
static inline unsigned int kt_nranks(void) { return kt_env("RIG_NNODES", 1); }

/* The address of node @i on the rig's segment. */
static inline struct kcoll_sockaddr kt_addr(unsigned int i)
{
	struct kcoll_sockaddr a = { .family = AF_INET };
	char ip[32];

	snprintf(ip, sizeof(ip), "169.254.77.%u", i + 1);
	inet_pton(AF_INET, ip, a.addr);
	return a;
}

/* A comm id every node derives alike for the same test and attempt. */
static inline uint64_t kt_comm_id(const char *test, unsigned int salt)
{
	uint64_t h = 1469598103934665603ULL ^ salt ^ ((uint64_t)kt_env("KT_RUN", 1) << 32);

	while (*test)
		h = (h ^ (unsigned char)*test++) * 1099511628211ULL;
	return h ? h : 1;
}

static inline double kt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int kt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * The tests' communicator secret: derived from the comm id (itself from the test's name),
 * so every node of a test derives the same one without exchanging it (splitmix64).
 */
static inline void kt_comm_secret(uint64_t id, unsigned char secret[KCOLL_SECRET_LEN])
{
	uint64_t z = 0;
	int i;

	for (i = 0; i < KCOLL_SECRET_LEN; i++) {
		if (!(i & 7)) {
			id += 0x9e3779b97f4a7c15ULL;
			z = id;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			z ^= z >> 31;
		}
		secret[i] = z >> (8 * (i & 7));
	}
}

/* kt_comm_create() with a given secret (NULL: none, all zero) and create flags. */
static inline int kt_comm_create_flags(int fd, uint64_t id, const unsigned char *secret,
				       unsigned int rank, unsigned int nranks,
				       const struct kcoll_sockaddr *peers,
				       unsigned int timeout_ms, uint32_t flags, uint32_t *handle,
				       uint32_t *failed_rank)
{
	struct kcoll_comm_create c = {
		/* KT_COMM_CREATE_V0=1: the 64-byte struct, no secret (a module without one) */
		.size = kt_env("KT_COMM_CREATE_V0", 0) ? KCOLL_COMM_CREATE_SIZE_VER0 : sizeof(c),
		.comm_id = id,
		.rank = rank,
		.nranks = nranks,
		.peers = (uintptr_t)peers,
		.peer_size = sizeof(*peers),
		.timeout_ms = timeout_ms,
		.flags = flags,
	};
	int ret;

	if (secret)
		memcpy(c.secret, secret, sizeof(c.secret));
	ret = kt_ioctl(fd, KCOLL_IOC_COMM_CREATE, &c);

	if (handle)
		*handle = c.handle;
	if (failed_rank)
		*failed_rank = c.failed_rank;
	return ret;
}

/* kt_comm_create() with a given secret (NULL: none, all zero). */
static inline int kt_comm_create_secret(int fd, uint64_t id, const unsigned char *secret,
					unsigned int rank, unsigned int nranks,
					const struct kcoll_sockaddr *peers,
					unsigned int timeout_ms, uint32_t *handle,
					uint32_t *failed_rank)
{
	return kt_comm_create_flags(fd, id, secret, rank, nranks, peers, timeout_ms, 0, handle,
				    failed_rank);
}

/* Create a comm over the first @nranks nodes; returns 0 or -errno, *handle on success. */
static inline int kt_comm_create(int fd, uint64_t id, unsigned int rank, unsigned int nranks,
				 const struct kcoll_sockaddr *peers, unsigned int timeout_ms,
				 uint32_t *handle, uint32_t *failed_rank)
{
	unsigned char secret[KCOLL_SECRET_LEN];

	kt_comm_secret(id, secret);
	return kt_comm_create_secret(fd, id, secret, rank, nranks, peers, timeout_ms, handle,
				     failed_rank);
}

/* A one-rank communicator (no device, no peer): 0 or -errno, *h on success. */
static inline int kt_one_rank(int fd, const char *name, unsigned int salt, uint32_t *h)
{
	struct kcoll_sockaddr me = kt_addr(kt_rank());

	return kt_comm_create(fd, kt_comm_id(name, salt), 0, 1, &me, 10000, h, NULL);
}

/* The value of line "@key:" of a /proc file such as /proc/meminfo, in KiB; -1 if absent. */
static inline long kt_proc_kb(const char *file, const char *key)
{
	size_t n = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Pages charged to this process (pinned_vm): VmPin in /proc/self/status, in KiB. */
static inline long kt_vm_pin_kb(void)
{
	return kt_proc_kb("/proc/self/status", "VmPin");
}

/*
 * VmPin once it is @kb: an operation's pins go (and their charge with them) just after it
 * completes, from a worker.  Polls for up to 20 s; returns the last value seen.
 */
static inline long kt_vm_pin_settles(long kb)
{
	long now = kt_vm_pin_kb();
	int i;

	for (i = 0; i < 2000 && now != kb; i++) {
		usleep(10000);
		now = kt_vm_pin_kb();
	}
	return now;
}

/*
 * Nodes 0 .. @nodes-1 meet before a step that needs them all (files on the rig's shared run
 * directory, as rig_barrier does).  A communicator's create timeout is not a rendezvous: a
 * loaded host can keep one node minutes behind another, and the early one's create then
 * fails although nothing is wrong.  Each name may be met several times (a per-process
 * count tells the meetings apart; every node runs the same sequence).  Returns 0, or
 * -ETIMEDOUT after @timeout_s seconds (five times that on the debug kernel).
 */
static inline int kt_meet(const char *name, unsigned int salt, unsigned int nodes,
			  unsigned int timeout_s)
{
	static unsigned int seq;
	const char *dir = "/run/rig/barrier";
	unsigned int i, me = kt_rank(), run = kt_env("KT_RUN", 1);
	char path[256];
	uint64_t tag;
	double end;
	int fd;

	/* The name may be long (a test's name): a hash keeps the path short. */
	tag = kt_comm_id(name, salt) ^ ((uint64_t)++seq << 48);
	if (kt_quick())
		timeout_s *= 5;
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/kt-%016llx-%u.%u", dir, (unsigned long long)tag, run,
		 me);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	end = kt_now() + timeout_s;
	for (i = 0; i < nodes; i++) {
		snprintf(path, sizeof(path), "%s/kt-%016llx-%u.%u", dir,
			 (unsigned long long)tag, run, i);
		while (access(path, F_OK)) {
			if (kt_now() > end) {
				fprintf(stderr, "# kt_meet %s: node %u did not come in %u s\n",
					name, i, timeout_s);
				return -ETIMEDOUT;
			}
			usleep(50000);
		}
	}
	return 0;
}

static inline int kt_comm_world(int fd, const char *test, unsigned int salt, uint32_t *handle)
{
	struct kcoll_sockaddr peers[64];
	unsigned int i, n = kt_nranks();
	int ret;

	/* Every node reaches this test before any connects (see kt_meet). */
	ret = kt_meet(test, salt, n, 600);
	if (ret)
		return ret;
	for (i = 0; i < n && i < 64; i++)
		peers[i] = kt_addr(i);
	return kt_comm_create(fd, kt_comm_id(test, salt), kt_rank(), n, peers, 120000, handle,
			      NULL);
}

static inline int kt_comm_destroy(int fd, uint32_t handle)
{
	struct kcoll_comm_arg a = { .size = sizeof(a), .handle = handle };

	return kt_ioctl(fd, KCOLL_IOC_COMM_DESTROY, &a);
}

static inline int kt_p2p(int fd, uint32_t comm, uint32_t flags, unsigned int peer, void *buf,
			 uint64_t len, uint64_t *out)
{
	struct kcoll_p2p p = {
		.size = sizeof(p),
		.flags = flags,
		.comm = comm,
		.peer = peer,
		.addr = (uintptr_t)buf,
		.len = len,
	};
	int ret = kt_ioctl(fd, KCOLL_IOC_P2P, &p);

	if (out)
		*out = flags & KCOLL_P2P_NONBLOCK ? p.req : p.result;
	return ret;
}

/* Wait for request @req: 0 with its status and result filled in, or the wait's -errno. */
static inline int kt_wait(int fd, uint32_t comm, uint64_t req, uint32_t timeout_ms,
			  int *status, uint64_t *result)
{
	struct kcoll_wait w = {
		.size = sizeof(w),
		.comm = comm,
		.req = req,
		.timeout_ms = timeout_ms,
	};
	int ret = kt_ioctl(fd, KCOLL_IOC_WAIT, &w);

	if (!ret) {
		*status = w.status;
		if (result)
			*result = w.result;
	}
	return ret;
}

/*
 * Every rank exchanges an empty message with every other.  Destroying a communicator
 * fails, at its peers, whatever they still had pending with this rank (ECONNRESET), so
 * tests destroy only after this barrier, as applications destroy after their last
 * collective.
 */
static inline int kt_barrier(int fd, uint32_t comm)
{
	unsigned int me = kt_rank(), n = kt_nranks(), i;
	uint64_t reqs[2 * 64];
	unsigned int nreq = 0;
	int ret, status;

	for (i = 0; i < n && i < 64; i++) {
		if (i == me)
			continue;
		ret = kt_p2p(fd, comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, i, NULL, 0,
			     &reqs[nreq++]);
		if (ret)
			return ret;
	}
	for (i = 0; i < n && i < 64; i++) {
		if (i == me)
			continue;
		ret = kt_p2p(fd, comm, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, i, NULL, 0,
			     &reqs[nreq++]);
		if (ret)
			return ret;
	}
	for (i = 0; i < nreq; i++) {
		ret = kt_wait(fd, comm, reqs[i], ~0u, &status, NULL);
		if (ret)
			return ret;
		if (status)
			return status;
	}
	return 0;
}

/* Create a zero-copy buffer; *h and *off (if given): its handle and mmap offset, or 0. */
static inline int kt_buf_create(int fd, uint32_t comm, uint64_t len, uint32_t *h,
				uint64_t *off)
{
	struct kcoll_buf_create b = { .size = sizeof(b), .comm = comm, .length = len };
	int ret = kt_ioctl(fd, KCOLL_IOC_BUF_CREATE, &b);

	if (h)
		*h = b.handle;
	if (off)
		*off = b.mmap_offset;
	return ret;
}

static inline int kt_buf_destroy(int fd, uint32_t comm, uint32_t h)
{
	struct kcoll_buf_arg a = { .size = sizeof(a), .comm = comm, .handle = h };

	return kt_ioctl(fd, KCOLL_IOC_BUF_DESTROY, &a);
}

/* Drop or regain CAP_IPC_LOCK (effective), which bypasses RLIMIT_MEMLOCK. */
static inline int kt_set_ipc_lock(bool on)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	if (on)
		data[0].effective |= 1U << CAP_IPC_LOCK;
	else
		data[0].effective &= ~(1U << CAP_IPC_LOCK);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* Write @s to a sysfs, debugfs or proc file; 0 or -errno. */
static inline int kt_write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(s, f) < 0 ? -EIO : 0;
	return fclose(f) ? -errno : ret;
}

/* Content that names its sender, size and position: a misplaced byte shows. */
static inline unsigned char kt_byte(unsigned int src, uint64_t size, uint64_t i)
{
	return (unsigned char)((i * 131) ^ (i >> 11) ^ (src * 29) ^ (size * 7));
}

#define KT_SYS "/sys/kernel/kcoll/"

/* A number from a sysfs file, or -1. */
static inline long kt_sysfs_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * The RDMA core's per-device resource counts (PDs, CQs, QPs, MRs, ...) and the number of
 * cm_ids that are not listening.  kcoll's listener outlives the last communicator by a few
 * seconds (admin-guide.rst, listen_port), so listening ids are not counted.
 */
static inline void kt_rdma_res_summary(char *buf, size_t len)
{
	FILE *p = popen("rdma resource show 2>&1 | sed 's/ cm_id [0-9]*//'; "
			"echo \"cm_ids not listening: "
			"$(rdma resource show cm_id 2>&1 | grep -vc 'state LISTEN')\"", "r");
	size_t n = 0;

	buf[0] = '\0';
	if (p) {
		n = fread(buf, 1, len - 1, p);
		pclose(p);
	}
	buf[n] = '\0';
}

/* Communicators on this node, as /sys/kernel/kcoll/comms lists them (no fork: cheap). */
static inline int kt_count_comms(void)
{
	DIR *d = opendir(KT_SYS "comms");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

#endif
