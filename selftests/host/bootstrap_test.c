// SPDX-License-Identifier: GPL-2.0-only
/*
 * The helpers of bootstrap_test.h: forked ranks, the environment, and the bootstrap wire
 * format written by hand.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap_test.h"

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Results written by forked ranks, read by the test. */
struct rank_result *shared_results(int n)
{
	void *p = mmap(NULL, n * sizeof(struct rank_result), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, n * sizeof(struct rank_result));
	return p;
}

void record(struct rank_result *res, int err, uint64_t comm_id,
	    struct kcoll_sockaddr *table, int nranks, int64_t start)
{
	res->err = err;
	res->comm_id = comm_id;
	res->elapsed_ms = now_ms() - start;
	if (!err && table)
		memcpy(res->table, table, (nranks < MAXR ? nranks : MAXR) * sizeof(*table));
	free(table);
	snprintf(res->msg, sizeof(res->msg), "%s", kcoll_last_error());
	res->done = 1;
}

/* One rank of a unique-id rendezvous, in this process. */
void run_uid_rank(const struct kcoll_unique_id *id, int nranks, int rank,
		  const struct kcoll_comm_opts *opts, struct rank_result *res)
{
	struct kcoll_sockaddr *table = NULL;
	int64_t start = now_ms();
	uint64_t comm_id = 0;
	int err;

	err = kcoll_bootstrap_rank(id, nranks, rank, opts, &comm_id, res->secret, &table);
	record(res, err, comm_id, table, nranks, start);
}

/* The same in a child process; @addr_fmt: advertise "127.0.0.<rank+1>", port 1000 + rank. */
pid_t spawn_uid_rank(const struct kcoll_unique_id *id, int nranks, int rank,
		     unsigned int timeout_ms, bool distinct, struct rank_result *res)
{
	pid_t pid = fork();

	if (pid == 0) {
		char addr[32];
		KCOLL_OPTS(kcoll_comm_opts, opts, .bootstrap_timeout_ms = timeout_ms);

		if (distinct) {
			snprintf(addr, sizeof(addr), "127.0.0.%d", rank + 1);
			opts.addr = addr;
			opts.port = 1000 + rank;
		}
		run_uid_rank(id, nranks, rank, &opts, res);
		_exit(0);
	}
	return pid;
}

int wait_all(pid_t *pids, int n)
{
	int i, st, bad = 0;

	for (i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	return bad;
}

int get_uid(struct kcoll_unique_id *id, const char *addr, unsigned int timeout_ms,
	    struct kcoll_uid_info *info)
{
	KCOLL_OPTS(kcoll_uid_opts, o, .addr = addr, .timeout_ms = timeout_ms);
	int err = kcoll_get_unique_id(id, &o);

	if (!err && info)
		err = kcoll_uid_decode(id, info);
	return err;
}

void clear_env(void)
{
	static const char *const vars[] = {
		"KCOLL_RANK", "KCOLL_NRANKS", "KCOLL_LOCAL_RANK", "RANK", "WORLD_SIZE", "LOCAL_RANK",
		"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "OMPI_COMM_WORLD_RANK",
		"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE",
		"MPI_LOCALRANKID", "KCOLL_BOOTSTRAP_ADDR",
		"MASTER_ADDR", "MASTER_PORT", "KCOLL_BOOTSTRAP_PORT", "KCOLL_JOB_ID",
		"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "KCOLL_BOOTSTRAP_TIMEOUT_MS",
		"KCOLL_ADDR", "KCOLL_IFNAME", "KCOLL_PORT", "KCOLL_CONNECT_TIMEOUT_MS",
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* A port nobody listens on right now (the kernel's choice, then released). */
int free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&sin, sizeof(sin)) &&
	    !getsockname(fd, (struct sockaddr *)&sin, &len))
		port = ntohs(sin.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

int connect_port(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 3 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		close(fd);
		return -1;
	}
	return fd;
}

void put32(unsigned char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

void put16(unsigned char *p, uint16_t v)
{
	v = htons(v);
	memcpy(p, &v, 2);
}

void put64(unsigned char *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

void make_hdr(unsigned char *p, uint16_t version, uint16_t type, uint32_t len)
{
	put32(p, KCOLL_BOOT_MAGIC);
	put16(p + 4, version);
	put16(p + 6, type);
	put32(p + 8, len);
}

/* A well-formed hello from 127.0.0.1. */
void make_hello(unsigned char *p, uint64_t comm_id, uint32_t rank, uint32_t nranks)
{
	unsigned char *b = p + KCOLL_BOOT_HDR_LEN;

	memset(p, 0, KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN);
	make_hdr(p, KCOLL_BOOT_VERSION, KCOLL_BOOT_HELLO, KCOLL_BOOT_HELLO_LEN);
	put64(b, comm_id);
	put32(b + 16, rank);
	put32(b + 20, nranks);
	put16(b + 24, 4);
	b[32] = 127;
	b[35] = 1;
	kcoll_loc_put(b + 24 + KCOLL_BOOT_ADDR_LEN,
		      &(struct kcoll_rank_locality){ .numa_node = -1 });
}

/*
 * Bytes until EOF or reset (the root closes with our unread bytes queued: RST after its
 * answer); the count, -1 on timeout.
 */
int drain(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	for (;;) {
		unsigned char tmp[256];

		n = recv(fd, tmp, sizeof(tmp), 0);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return (int)got;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (buf && got + n <= len)
			memcpy(buf + got, tmp, n);
		got += n;
	}
}

/*
 * A fake peer: connect to @port, send @len bytes of @buf, read what comes back (into @reply,
 * up to @cap bytes, if not NULL) until the root closes.  Returns the bytes read, or -1 when
 * it could not connect or the root neither answered nor closed.
 */
int fake_peer(int port, const unsigned char *buf, size_t len, unsigned char *reply,
	      size_t cap)
{
	int fd = connect_port(port), n;

	if (fd < 0)
		return -1;
	send(fd, buf, len, MSG_NOSIGNAL);
	n = drain(fd, reply, cap);
	close(fd);
	return n;
}

bool all_same_table(struct rank_result *res, int n)
{
	int r;

	for (r = 1; r < n; r++) {
		if (memcmp(res[0].table, res[r].table, n * sizeof(res[0].table[0])))
			return false;
	}
	return true;
}
