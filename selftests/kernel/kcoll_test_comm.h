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
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/kcoll.h>

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

static inline int kt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* Create a comm over the first @nranks nodes; returns 0 or -errno, *handle on success. */
static inline int kt_comm_create(int fd, uint64_t id, unsigned int rank, unsigned int nranks,
				 const struct kcoll_sockaddr *peers, unsigned int timeout_ms,
				 uint32_t *handle, uint32_t *failed_rank)
{
	struct kcoll_comm_create c = {
		.size = sizeof(c),
		.comm_id = id,
		.rank = rank,
		.nranks = nranks,
		.peers = (uintptr_t)peers,
		.peer_size = sizeof(*peers),
		.timeout_ms = timeout_ms,
	};
	int ret = kt_ioctl(fd, KCOLL_IOC_COMM_CREATE, &c);

	if (handle)
		*handle = c.handle;
	if (failed_rank)
		*failed_rank = c.failed_rank;
	return ret;
}

static inline int kt_comm_world(int fd, const char *test, unsigned int salt, uint32_t *handle)
{
	struct kcoll_sockaddr peers[64];
	unsigned int i, n = kt_nranks();

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

static inline double kt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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
