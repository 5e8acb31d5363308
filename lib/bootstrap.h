/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the bootstrap's files share (lib/bootstrap.c has the overview):
 *
 *   boot_codec.c	randomness, addresses and the unique id's encoding
 *   boot_env.c		the environment: rank, size, root address, timeouts
 *   boot_io.c		socket I/O with deadlines, the message header, listening sockets
 *   boot_server.c	the root: the rendezvous thread
 *   bootstrap.c	a rank: kcoll_get_unique_id(), joining the rendezvous
 *   boot_loc.c		locality: host identity, NIC, NUMA node, admin labels; its encoding
 *   boot_rail.c	rails: which of several interfaces a rank advertises
 */
#ifndef _KCOLL_BOOTSTRAP_H
#define _KCOLL_BOOTSTRAP_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libkcoll_internal.h"

/* Resolved addresses of a root host name that a rank tries, in order. */
#define KCOLL_BOOT_MAX_ADDRS	8
/* Retry pause when the root cannot be reached yet: doubles from MIN to MAX. */
#define KCOLL_BOOT_RETRY_MIN_MS	10
#define KCOLL_BOOT_RETRY_MAX_MS	250
/* Upper bound of any timeout taken from the environment: one day. */
#define KCOLL_TIMEOUT_MAX_MS	86400000U

/* Time and byte order ----------------------------------------------------------------- */

static inline int64_t kcoll_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until @deadline, for poll(): 0 when it has passed. */
static inline int kcoll_left_ms(int64_t deadline)
{
	int64_t left = deadline - kcoll_now_ms();

	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

static inline void kcoll_sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
static inline void put_be16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void put_be32(unsigned char *p, uint32_t v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

static inline void put_be64(unsigned char *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v);
}

static inline uint16_t get_be16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)get_be16(p) << 16 | get_be16(p + 2);
}

static inline uint64_t get_be64(const unsigned char *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static inline uint64_t kcoll_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define KCOLL_FNV_BASIS	0xcbf29ce484222325ULL

/* boot_codec.c */
KCOLL_HIDDEN bool kcoll_ksa_equal(const struct kcoll_sockaddr *a, const struct kcoll_sockaddr *b);
KCOLL_HIDDEN int kcoll_ksa_from_sockaddr(const struct sockaddr *sa, struct kcoll_sockaddr *k);
KCOLL_HIDDEN socklen_t kcoll_ksa_to_sockaddr(const struct kcoll_sockaddr *k,
					     struct sockaddr_storage *ss);
KCOLL_HIDDEN int kcoll_parse_ip(const char *s, struct kcoll_sockaddr *k);
KCOLL_HIDDEN int kcoll_random_u64(uint64_t *v);
KCOLL_HIDDEN int kcoll_wire_get_addr(const unsigned char *p, struct kcoll_sockaddr *k);
KCOLL_HIDDEN void kcoll_wire_put_addr(unsigned char *p, const struct kcoll_sockaddr *k);

/* boot_env.c */
KCOLL_HIDDEN const char *kcoll_getenv(const char *name);
KCOLL_HIDDEN int kcoll_boot_self(const struct kcoll_comm_opts *opts, int nranks, int local_rank,
				 struct kcoll_sockaddr *self, bool *set);
KCOLL_HIDDEN int kcoll_boot_timeout(unsigned int given, unsigned int *out);

/* boot_rail.c; KCOLL_LOCAL_RANK_LOOKUP: the caller has no launcher, look the local rank up */
#define KCOLL_LOCAL_RANK_LOOKUP	(-2)
KCOLL_HIDDEN int kcoll_rail_pick(const char *list, const char *what, int local_rank, int nranks,
				 char name[IF_NAMESIZE]);

/* boot_io.c */
KCOLL_HIDDEN int kcoll_poll1(int fd, short events, int64_t deadline);
KCOLL_HIDDEN int kcoll_listen(const struct sockaddr_storage *ss, socklen_t len, int *out);
KCOLL_HIDDEN int kcoll_recv_all(int fd, void *buf, size_t len, int64_t deadline);
KCOLL_HIDDEN int kcoll_send_all(int fd, const void *buf, size_t len, int64_t deadline);
KCOLL_HIDDEN void kcoll_send_error(int fd, int err, const char *msg, int64_t deadline);
KCOLL_HIDDEN void kcoll_put_hdr(unsigned char *p, uint16_t type, uint32_t len);

/* boot_server.c */
KCOLL_HIDDEN void kcoll_boot_reap(void);
KCOLL_HIDDEN int kcoll_boot_start(int lfd, const char *where, uint64_t comm_id,
				  uint64_t expect_comm_id, const unsigned char *secret,
				  uint64_t job_tag, uint32_t nranks, unsigned int timeout_ms);

#endif /* _KCOLL_BOOTSTRAP_H */
