// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll bootstrap: how the ranks of a communicator learn each other's RDMA addresses
 * before the kernel connects them.
 *
 * One process is the root.  It listens on TCP (a background thread, started by
 * kcoll_get_unique_id() or by rank 0 of kcoll_comm_init_env()); every rank, the root's own
 * included, connects to it and sends a hello with its rank and the address it wants the others
 * to reach it at; once all nranks have joined, the root sends each of them the full table,
 * indexed by rank.  When something is wrong (a rank never shows up, two claim the same rank,
 * they disagree on nranks) every rank that did join gets the root's error and message, so that
 * all of them fail with the same clear reason instead of timing out one by one.
 *
 * Both ends treat the other as untrusted: every length is checked before anything is read
 * into memory, every read and write has a deadline (poll()), and a peer that sends garbage is
 * dropped without disturbing the honest ones.  The protocol is described in
 * libkcoll_internal.h.
 */
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

static int64_t kcoll_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until @deadline, for poll(): 0 when it has passed. */
static int kcoll_left_ms(int64_t deadline)
{
	int64_t left = deadline - kcoll_now_ms();

	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

static void kcoll_sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void put_be16(unsigned char *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

static void put_be64(unsigned char *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v);
}

static uint16_t get_be16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)get_be16(p) << 16 | get_be16(p + 2);
}

static uint64_t get_be64(const unsigned char *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static uint64_t kcoll_fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define KCOLL_FNV_BASIS	0xcbf29ce484222325ULL

int kcoll_random_bytes(void *buf, size_t len)
{
	ssize_t n;

	do {
		n = getrandom(buf, len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* A random 64-bit value that is not 0. */
static int kcoll_random_u64(uint64_t *v)
{
	int err;

	do {
		err = kcoll_random_bytes(v, sizeof(*v));
	} while (!err && *v == 0);
	return err;
}

/* Addresses ------------------------------------------------------------------------------ */

static int kcoll_ksa_from_sockaddr(const struct sockaddr *sa, struct kcoll_sockaddr *k)
{
	memset(k, 0, sizeof(*k));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		k->family = AF_INET;
		k->port = ntohs(sin->sin_port);
		memcpy(k->addr, &sin->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

		k->port = ntohs(sin6->sin6_port);
		/* A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d. */
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			k->family = AF_INET;
			memcpy(k->addr, &sin6->sin6_addr.s6_addr[12], 4);
			return 0;
		}
		k->family = AF_INET6;
		k->scope_id = sin6->sin6_scope_id;
		memcpy(k->addr, &sin6->sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

static socklen_t kcoll_ksa_to_sockaddr(const struct kcoll_sockaddr *k,
				       struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (k->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(k->port);
		memcpy(&sin->sin_addr, k->addr, 4);
		return sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(k->port);
		sin6->sin6_scope_id = k->scope_id;
		memcpy(&sin6->sin6_addr, k->addr, 16);
		return sizeof(*sin6);
	}
}

const char *kcoll_sockaddr_str(const struct kcoll_sockaddr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (a->family == AF_INET && inet_ntop(AF_INET, a->addr, ip, sizeof(ip)))
		snprintf(buf, len, "%s:%u", ip, a->port);
	else if (a->family == AF_INET6 && inet_ntop(AF_INET6, a->addr, ip, sizeof(ip)) &&
		 a->scope_id)
		snprintf(buf, len, "[%s%%%u]:%u", ip, a->scope_id, a->port);
	else if (a->family == AF_INET6 && inet_ntop(AF_INET6, a->addr, ip, sizeof(ip)))
		snprintf(buf, len, "[%s]:%u", ip, a->port);
	else
		snprintf(buf, len, "(address family %u)", a->family);
	return buf;
}

/* An IP literal, IPv6 optionally with %scope (interface name or index); port 0. */
static int kcoll_parse_ip(const char *s, struct kcoll_sockaddr *k)
{
	char tmp[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	char *pct;

	memset(k, 0, sizeof(*k));
	if (inet_pton(AF_INET, s, k->addr) == 1) {
		k->family = AF_INET;
		return 0;
	}
	if (strlen(s) >= sizeof(tmp))
		return -EINVAL;
	strcpy(tmp, s);
	pct = strchr(tmp, '%');
	if (pct)
		*pct++ = '\0';
	if (inet_pton(AF_INET6, tmp, k->addr) != 1)
		return -EINVAL;
	k->family = AF_INET6;
	if (pct) {
		char *end;
		unsigned long idx = strtoul(pct, &end, 10);

		if (!*pct)
			return -EINVAL;
		if (*end)
			idx = if_nametoindex(pct);
		if (!idx || idx > UINT32_MAX)
			return -EINVAL;
		k->scope_id = idx;
	}
	return 0;
}

/* struct kcoll_sockaddr on the wire: family 4 or 6, never the host's AF_* values. */
static void kcoll_wire_put_addr(unsigned char *p, const struct kcoll_sockaddr *k)
{
	memset(p, 0, KCOLL_BOOT_ADDR_LEN);
	put_be16(p, k->family == AF_INET ? 4 : 6);
	put_be16(p + 2, k->port);
	if (k->family == AF_INET) {
		memcpy(p + 8, k->addr, 4);
	} else {
		put_be32(p + 4, k->scope_id);
		memcpy(p + 8, k->addr, 16);
	}
}

static int kcoll_wire_get_addr(const unsigned char *p, struct kcoll_sockaddr *k)
{
	static const unsigned char zero[12];
	uint16_t fam = get_be16(p);

	memset(k, 0, sizeof(*k));
	k->port = get_be16(p + 2);
	if (fam == 4) {
		/* Exactly one encoding per address: scope and padding must be zero. */
		if (get_be32(p + 4) || memcmp(p + 12, zero, sizeof(zero)))
			return -EINVAL;
		k->family = AF_INET;
		memcpy(k->addr, p + 8, 4);
		return 0;
	}
	if (fam == 6) {
		k->family = AF_INET6;
		k->scope_id = get_be32(p + 4);
		memcpy(k->addr, p + 8, 16);
		return 0;
	}
	return -EINVAL;
}

static bool kcoll_ksa_equal(const struct kcoll_sockaddr *a, const struct kcoll_sockaddr *b)
{
	return a->family == b->family && a->port == b->port && a->scope_id == b->scope_id &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

/* The unique id ---------------------------------------------------------------------------- */

int kcoll_uid_encode(const struct kcoll_uid_info *info, struct kcoll_unique_id *id)
{
	unsigned char *p = id->internal;

	if (!info->comm_id || !info->root.port ||
	    (info->root.family != AF_INET && info->root.family != AF_INET6))
		return -EINVAL;
	memset(id, 0, sizeof(*id));
	memcpy(p, KCOLL_UID_MAGIC, 8);
	put_be16(p + 8, KCOLL_UID_VERSION);
	put_be16(p + 10, info->root.family == AF_INET ? 4 : 6);
	put_be16(p + 12, info->root.port);
	put_be64(p + 16, info->comm_id);
	memcpy(p + KCOLL_UID_SECRET_OFF, info->secret, KCOLL_SECRET_LEN);
	if (info->root.family == AF_INET) {
		memcpy(p + 24, info->root.addr, 4);
	} else {
		memcpy(p + 24, info->root.addr, 16);
		put_be32(p + 40, info->root.scope_id);
	}
	put_be64(p + KCOLL_UID_CSUM_OFF, kcoll_fnv1a(KCOLL_FNV_BASIS, p, KCOLL_UID_CSUM_OFF));
	return 0;
}

int kcoll_uid_decode(const struct kcoll_unique_id *id, struct kcoll_uid_info *info)
{
	static const unsigned char zero[KCOLL_UID_CSUM_OFF];
	const unsigned char *p = id->internal;
	unsigned int ver, fam;

	memset(info, 0, sizeof(*info));
	if (memcmp(p, KCOLL_UID_MAGIC, 8))
		return kcoll_fail(-EINVAL, "not a kcoll unique id (bad magic)");
	ver = get_be16(p + 8);
	if (ver != KCOLL_UID_VERSION)
		return kcoll_fail(-EINVAL, "kcoll unique id version %u is not supported (this "
				  "libkcoll reads version %u)", ver, KCOLL_UID_VERSION);
	if (get_be64(p + KCOLL_UID_CSUM_OFF) !=
	    kcoll_fnv1a(KCOLL_FNV_BASIS, p, KCOLL_UID_CSUM_OFF))
		return kcoll_fail(-EINVAL, "kcoll unique id is corrupted (checksum mismatch)");
	fam = get_be16(p + 10);
	info->comm_id = get_be64(p + 16);
	memcpy(info->secret, p + KCOLL_UID_SECRET_OFF, KCOLL_SECRET_LEN);
	info->root.port = get_be16(p + 12);
	if (fam == 4) {
		info->root.family = AF_INET;
		memcpy(info->root.addr, p + 24, 4);
		if (memcmp(p + 28, zero, 44 - 28))
			fam = 0;
	} else if (fam == 6) {
		info->root.family = AF_INET6;
		memcpy(info->root.addr, p + 24, 16);
		info->root.scope_id = get_be32(p + 40);
	}
	/* A valid checksum over invalid fields: made by a buggy or newer writer. */
	if ((fam != 4 && fam != 6) || !info->root.port || !info->comm_id || get_be16(p + 14) ||
	    memcmp(p + KCOLL_UID_SECRET_OFF + KCOLL_SECRET_LEN, zero,
		   KCOLL_UID_CSUM_OFF - KCOLL_UID_SECRET_OFF - KCOLL_SECRET_LEN)) {
		memset(info, 0, sizeof(*info));
		return kcoll_fail(-EINVAL, "kcoll unique id is malformed");
	}
	return 0;
}

/* The environment ---------------------------------------------------------------------------- */

/* getenv(), with an empty value taken as unset (launchers export empty variables). */
static const char *kcoll_getenv(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* A decimal number in [min, max]: digits only, no sign, no blanks. */
static int kcoll_parse_ulong(const char *s, unsigned long min, unsigned long max,
			     unsigned long *out)
{
	unsigned long v = 0;
	const char *p;

	if (!*s || strlen(s) > 10)
		return -EINVAL;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int kcoll_env_ulong(const char *name, unsigned long min, unsigned long max,
		    unsigned long *out, bool *set)
{
	const char *v = kcoll_getenv(name);

	if (set)
		*set = v != NULL;
	if (!v)
		return 0;
	if (kcoll_parse_ulong(v, min, max, out))
		return kcoll_fail(-EINVAL, "%s=\"%.64s\" is not a whole number from %lu to %lu",
				  name, v, min, max);
	return 0;
}

/* Where the rank and size come from, in order of precedence. */
static const struct kcoll_env_source {
	const char *name;
	const char *rank;
	const char *size;
	const char *local_rank;
} kcoll_env_sources[] = {
	{ "KCOLL", "KCOLL_RANK", "KCOLL_NRANKS", NULL },
	{ "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK" },
	{ "Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID" },
	{ "Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	  "OMPI_COMM_WORLD_LOCAL_RANK" },
};

/* The job's identity, in order of precedence: ranks of different jobs never mix. */
static const char *const kcoll_env_job_vars[] = {
	"KCOLL_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
};

int kcoll_env_parse(struct kcoll_env_conf *conf)
{
	const struct kcoll_env_source *src = NULL;
	unsigned long rank, size, local, port;
	const char *root, *root_var, *v;
	bool rank_set, size_set, set;
	size_t i;
	int err;

	memset(conf, 0, sizeof(*conf));
	conf->local_rank = -1;
	for (i = 0; i < sizeof(kcoll_env_sources) / sizeof(kcoll_env_sources[0]); i++) {
		rank_set = kcoll_getenv(kcoll_env_sources[i].rank) != NULL;
		size_set = kcoll_getenv(kcoll_env_sources[i].size) != NULL;
		if (rank_set || size_set) {
			src = &kcoll_env_sources[i];
			break;
		}
	}
	if (!src)
		return kcoll_fail(-EINVAL, "no rank in the environment: set KCOLL_RANK and "
				  "KCOLL_NRANKS, or start under torchrun (RANK, WORLD_SIZE), "
				  "Slurm (SLURM_PROCID, SLURM_NTASKS) or Open MPI "
				  "(OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE)");
	if (!rank_set || !size_set)
		return kcoll_fail(-EINVAL, "%s is set but %s is not (%s)",
				  rank_set ? src->rank : src->size,
				  rank_set ? src->size : src->rank, src->name);
	err = kcoll_env_ulong(src->size, 1, KCOLL_MAX_RANKS, &size, NULL);
	if (!err)
		err = kcoll_env_ulong(src->rank, 0, KCOLL_MAX_RANKS - 1, &rank, NULL);
	if (err)
		return err;
	if (rank >= size)
		return kcoll_fail(-EINVAL, "%s=%lu is not below %s=%lu", src->rank, rank,
				  src->size, size);
	if (src->local_rank) {
		err = kcoll_env_ulong(src->local_rank, 0, size - 1, &local, &set);
		if (err)
			return err;
		if (set)
			conf->local_rank = (int)local;
	}
	conf->rank = (int)rank;
	conf->nranks = (int)size;
	conf->source = src->name;

	root_var = "KCOLL_BOOTSTRAP_ADDR";
	root = kcoll_getenv(root_var);
	if (!root) {
		root_var = "MASTER_ADDR";
		root = kcoll_getenv(root_var);
	}
	if (!root && size == 1)
		root = "127.0.0.1";	/* alone: nobody else needs to find the root */
	if (!root)
		return kcoll_fail(-EINVAL, "no bootstrap root: set KCOLL_BOOTSTRAP_ADDR or "
				  "MASTER_ADDR to the address of rank 0 (rank %lu of %lu from %s)",
				  rank, size, src->name);
	if (strlen(root) >= sizeof(conf->root_host))
		return kcoll_fail(-EINVAL, "%s is longer than %zu characters", root_var,
				  sizeof(conf->root_host) - 1);
	strcpy(conf->root_host, root);

	/*
	 * torchrun's TCPStore listens on MASTER_PORT itself, so the bootstrap takes the port
	 * after it.
	 */
	err = kcoll_env_ulong("KCOLL_BOOTSTRAP_PORT", 1, 65535, &port, &set);
	if (!err && !set) {
		err = kcoll_env_ulong("MASTER_PORT", 1, 65534, &port, &set);
		if (set)
			port++;
	}
	if (err)
		return err;
	conf->root_port = set ? (unsigned int)port : KCOLL_BOOTSTRAP_PORT_DEFAULT;

	for (i = 0; i < sizeof(kcoll_env_job_vars) / sizeof(kcoll_env_job_vars[0]); i++) {
		v = kcoll_getenv(kcoll_env_job_vars[i]);
		if (v) {
			conf->job_tag = kcoll_fnv1a(kcoll_fnv1a(KCOLL_FNV_BASIS,
							      kcoll_env_job_vars[i],
							      strlen(kcoll_env_job_vars[i]) + 1),
						    v, strlen(v));
			if (!conf->job_tag)
				conf->job_tag = 1;
			break;
		}
	}
	return 0;
}

/* The timeout of the rendezvous: @given if non-zero, else the environment, else default. */
static int kcoll_boot_timeout(unsigned int given, unsigned int *out)
{
	unsigned long v;
	bool set;
	int err;

	if (given) {
		*out = given;
		return 0;
	}
	err = kcoll_env_ulong("KCOLL_BOOTSTRAP_TIMEOUT_MS", 1, KCOLL_TIMEOUT_MAX_MS, &v, &set);
	if (err)
		return err;
	*out = set ? (unsigned int)v : KCOLL_BOOTSTRAP_TIMEOUT_MS_DEFAULT;
	return 0;
}

/*
 * The address this rank advertises.  *set false: the local end of the connection to the
 * root, once there is one (the port is already in @self).
 */
static int kcoll_boot_self(const struct kcoll_comm_opts *opts, struct kcoll_sockaddr *self,
			   bool *set)
{
	const char *addr, *ifname, *what;
	struct ifaddrs *ifa, *i, *v6 = NULL;
	unsigned long port;
	bool port_set;
	int err;

	memset(self, 0, sizeof(*self));
	*set = false;
	port = OPTS_GET(opts, port, 0);
	if (port > 65535)
		return kcoll_fail(-EINVAL, "port %lu is not a TCP/UDP port", port);
	if (!port) {
		err = kcoll_env_ulong("KCOLL_PORT", 0, 65535, &port, &port_set);
		if (err)
			return err;
	}

	what = "addr option";
	addr = OPTS_GET(opts, addr, NULL);
	if (!addr) {
		what = "KCOLL_ADDR";
		addr = kcoll_getenv(what);
	}
	if (addr) {
		if (kcoll_parse_ip(addr, self))
			return kcoll_fail(-EINVAL, "%s \"%.64s\" is not an IP address", what, addr);
		self->port = port;
		*set = true;
		return 0;
	}

	ifname = OPTS_GET(opts, ifname, NULL);
	if (!ifname)
		ifname = kcoll_getenv("KCOLL_IFNAME");
	if (!ifname) {
		self->port = port;
		return 0;
	}
	if (getifaddrs(&ifa))
		return kcoll_fail(-errno, "getifaddrs: %s", strerror(errno));
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, ifname))
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			break;
		if (i->ifa_addr->sa_family == AF_INET6 && !v6)
			v6 = i;
	}
	if (!i)
		i = v6;
	if (i)
		kcoll_ksa_from_sockaddr(i->ifa_addr, self);
	freeifaddrs(ifa);
	if (!i && !if_nametoindex(ifname))
		return kcoll_fail(-ENODEV, "cannot advertise an address of interface %.32s: "
				  "there is no such interface", ifname);
	if (!i)
		return kcoll_fail(-EADDRNOTAVAIL, "cannot advertise an address of interface "
				  "%.32s: it has no IP address", ifname);
	self->port = port;
	*set = true;
	return 0;
}

/* Socket I/O ------------------------------------------------------------------------------ */

static int kcoll_poll1(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	for (;;) {
		r = poll(&p, 1, kcoll_left_ms(deadline));
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* All of @buf or an error; never SIGPIPE. */
static int kcoll_send_all(int fd, const void *buf, size_t len, int64_t deadline)
{
	const unsigned char *p = buf;
	ssize_t n;
	int err;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		err = kcoll_poll1(fd, POLLOUT, deadline);
		if (err)
			return err;
	}
	return 0;
}

/* Exactly @len bytes; -ECONNRESET when the peer closes first. */
static int kcoll_recv_all(int fd, void *buf, size_t len, int64_t deadline)
{
	unsigned char *p = buf;
	ssize_t n;
	int err;

	while (len) {
		n = recv(fd, p, len, 0);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		err = kcoll_poll1(fd, POLLIN, deadline);
		if (err)
			return err;
	}
	return 0;
}

static void kcoll_put_hdr(unsigned char *p, uint16_t type, uint32_t len)
{
	put_be32(p, KCOLL_BOOT_MAGIC);
	put_be16(p + 4, KCOLL_BOOT_VERSION);
	put_be16(p + 6, type);
	put_be32(p + 8, len);
}

/* An ERROR message, best effort: the peer may be gone or not reading. */
static void kcoll_send_error(int fd, int err, const char *msg, int64_t deadline)
{
	unsigned char buf[KCOLL_BOOT_HDR_LEN + 8 + KCOLL_BOOT_MSG_MAX];
	size_t n = strnlen(msg, KCOLL_BOOT_MSG_MAX);

	kcoll_put_hdr(buf, KCOLL_BOOT_ERROR, 8 + n);
	put_be32(buf + KCOLL_BOOT_HDR_LEN, err < 0 ? -err : err);
	put_be32(buf + KCOLL_BOOT_HDR_LEN + 4, n);
	memcpy(buf + KCOLL_BOOT_HDR_LEN + 8, msg, n);
	kcoll_send_all(fd, buf, KCOLL_BOOT_HDR_LEN + 8 + n, deadline);
}

static int kcoll_listen(const struct sockaddr_storage *ss, socklen_t len, int *out)
{
	int fd, one = 1, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A restarted job must not wait for the last one's connections to leave TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) || listen(fd, SOMAXCONN)) {
		err = -errno;
		close(fd);
		return err;
	}
	*out = fd;
	return 0;
}

/* The root ------------------------------------------------------------------------------------ */

enum { KCOLL_CONN_HELLO, KCOLL_CONN_JOINED };

struct kcoll_boot_conn {
	int fd;
	int state;
	unsigned int got;			/* bytes of buf received */
	int64_t hello_deadline;
	uint32_t rank;				/* once joined */
	struct kcoll_sockaddr peer;		/* TCP peer, for messages */
	struct kcoll_sockaddr addr;		/* what it advertises */
	unsigned char buf[KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN];
};

struct kcoll_boot_server {
	struct kcoll_boot_server *next;		/* on kcoll_boot_list until claimed */
	pid_t pid;				/* the process whose thread this is */
	pthread_t tid;
	bool done;				/* the thread has finished */
	int lfd;				/* -1 once closed; under kcoll_boot_lock */
	int wake[2];				/* a byte on wake[1] cancels */

	uint64_t comm_id;			/* sent in the table */
	uint64_t expect_comm_id;		/* what hellos carry: comm_id, or 0 (env) */
	unsigned char secret[KCOLL_SECRET_LEN];	/* sent in the table: env init, else 0 */
	uint64_t job_tag;
	uint32_t nranks;			/* 0: set by the first hello */
	unsigned int timeout_ms;
	int64_t deadline;
	char where[KCOLL_ADDRSTR_MAX + 256];

	struct kcoll_boot_conn *conns;
	size_t nconns, cap, npending;
	int *slot;				/* rank -> index in conns, or -1 */
	uint32_t njoined;
	uint32_t first_rank;			/* who set nranks */
	int64_t accept_pause;			/* out of file descriptors: until then */
	/*
	 * The thread's allocations all hang off this struct: a child forked while it runs
	 * keeps them reachable (see kcoll_boot_atfork_child()).
	 */
	struct pollfd *pfd;
	size_t pcap;
	unsigned char *tbuf;

	int err;
	char msg[KCOLL_ERRMSG_MAX];
};

static pthread_mutex_t kcoll_boot_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kcoll_boot_server *kcoll_boot_list;
/* Copies inherited through fork(): never freed, their memory is the parent's state. */
static struct kcoll_boot_server *kcoll_boot_orphans;
static pthread_once_t kcoll_boot_once = PTHREAD_ONCE_INIT;

static void kcoll_boot_msg(struct kcoll_boot_server *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void kcoll_boot_msg(struct kcoll_boot_server *s, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	s->err = err;
	va_start(ap, fmt);
	n = vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(s->msg))
		memcpy(s->msg + sizeof(s->msg) - 4, "...", 4);
}

static void kcoll_conn_drop(struct kcoll_boot_server *s, size_t i)
{
	struct kcoll_boot_conn *c = &s->conns[i];

	close(c->fd);
	if (c->state == KCOLL_CONN_JOINED) {
		s->slot[c->rank] = -1;
		s->njoined--;
	} else {
		s->npending--;
	}
	if (i != s->nconns - 1) {
		*c = s->conns[s->nconns - 1];
		if (c->state == KCOLL_CONN_JOINED)
			s->slot[c->rank] = (int)i;
	}
	s->nconns--;
}

static void kcoll_boot_accept(struct kcoll_boot_server *s, int64_t now)
{
	struct kcoll_boot_conn *c;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, n;

	for (n = 0; n < 64; n++) {
		len = sizeof(ss);
		fd = accept4(s->lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				s->accept_pause = now + 100;
			return;
		}
		if (s->npending >= KCOLL_BOOT_MAX_PENDING) {
			close(fd);
			continue;
		}
		if (s->nconns == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 16;
			void *p = realloc(s->conns, cap * sizeof(*s->conns));

			if (!p) {
				close(fd);
				continue;
			}
			s->conns = p;
			s->cap = cap;
		}
		c = &s->conns[s->nconns++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->state = KCOLL_CONN_HELLO;
		c->hello_deadline = now + KCOLL_BOOT_HELLO_MS;
		if (kcoll_ksa_from_sockaddr((struct sockaddr *)&ss, &c->peer))
			c->peer.family = 0;
		s->npending++;
	}
}

/*
 * Fail the rendezvous: every rank that joined (and @extra, the culprit) gets s->msg.  So do
 * connections whose hello has not been read yet, most likely ranks that came just too late,
 * but only as far as their socket buffer takes it at once: they may be anything.
 */
static void kcoll_boot_fail_all(struct kcoll_boot_server *s, int extra_fd)
{
	int64_t now = kcoll_now_ms(), deadline = now + 1000;
	size_t i;

	for (i = 0; i < s->nconns; i++) {
		if (s->conns[i].state == KCOLL_CONN_JOINED)
			kcoll_send_error(s->conns[i].fd, s->err, s->msg, deadline);
	}
	if (extra_fd >= 0)
		kcoll_send_error(extra_fd, s->err, s->msg, deadline);
	for (i = 0; i < s->nconns; i++) {
		if (s->conns[i].state == KCOLL_CONN_HELLO && s->conns[i].fd != extra_fd)
			kcoll_send_error(s->conns[i].fd, s->err, s->msg, now);
	}
}

#define KCOLL_EV_MORE	0	/* keep going */
#define KCOLL_EV_END	1	/* the rendezvous is over: s->err says how */

/* A complete hello from conns[i]. */
static int kcoll_boot_hello(struct kcoll_boot_server *s, size_t i, int64_t now)
{
	struct kcoll_boot_conn *c = &s->conns[i];
	const unsigned char *b = c->buf + KCOLL_BOOT_HDR_LEN;
	char peer[KCOLL_ADDRSTR_MAX], other[KCOLL_ADDRSTR_MAX], msg[KCOLL_BOOT_MSG_MAX];
	uint64_t comm_id = get_be64(b), job = get_be64(b + 8);
	uint32_t rank = get_be32(b + 16), nranks = get_be32(b + 20);
	struct kcoll_sockaddr addr;
	int j;

	if (kcoll_wire_get_addr(b + 24, &addr)) {
		kcoll_conn_drop(s, i);
		return KCOLL_EV_MORE;
	}
	kcoll_sockaddr_str(&c->peer, peer, sizeof(peer));
	/* Someone else's communicator (a stale rank of an earlier job): turn it away alone. */
	if (comm_id != s->expect_comm_id || job != s->job_tag) {
		snprintf(msg, sizeof(msg), "the bootstrap root at %s serves another communicator "
			 "(the %s does not match)", s->where,
			 comm_id != s->expect_comm_id ? "communicator id" : "job id");
		kcoll_send_error(c->fd, -ECONNREFUSED, msg, now + 1000);
		kcoll_conn_drop(s, i);
		return KCOLL_EV_MORE;
	}
	if (!nranks || nranks > KCOLL_MAX_RANKS || rank >= nranks) {
		snprintf(msg, sizeof(msg), "rank %u of %u is not a valid rank", rank, nranks);
		kcoll_send_error(c->fd, -EINVAL, msg, now + 1000);
		kcoll_conn_drop(s, i);
		return KCOLL_EV_MORE;
	}
	if (!s->nranks) {
		s->slot = malloc(nranks * sizeof(*s->slot));
		if (!s->slot) {
			kcoll_boot_msg(s, -ENOMEM, "the bootstrap root at %s is out of memory",
				       s->where);
			kcoll_boot_fail_all(s, c->fd);
			return KCOLL_EV_END;
		}
		for (j = 0; j < (int)nranks; j++)
			s->slot[j] = -1;
		s->nranks = nranks;
		s->first_rank = rank;
		/* From now on the ranks have timeout_ms to gather. */
		s->deadline = now + s->timeout_ms;
	}
	if (nranks != s->nranks) {
		if (s->expect_comm_id)
			kcoll_boot_msg(s, -EINVAL, "nranks mismatch: rank %u (from %s) joined the "
				       "rendezvous at %s with nranks %u, but rank %u with nranks "
				       "%u", rank, peer, s->where, nranks, s->first_rank,
				       s->nranks);
		else
			kcoll_boot_msg(s, -EINVAL, "nranks mismatch: rank %u (from %s) joined the "
				       "rendezvous at %s with nranks %u, but rank 0 has %u", rank,
				       peer, s->where, nranks, s->nranks);
		kcoll_boot_fail_all(s, c->fd);
		return KCOLL_EV_END;
	}
	if (s->slot[rank] >= 0) {
		kcoll_sockaddr_str(&s->conns[s->slot[rank]].peer, other, sizeof(other));
		kcoll_boot_msg(s, -EINVAL, "duplicate rank: rank %u of %u joined the rendezvous "
			       "at %s twice (from %s and from %s)", rank, s->nranks, s->where,
			       other, peer);
		kcoll_boot_fail_all(s, c->fd);
		return KCOLL_EV_END;
	}
	c->state = KCOLL_CONN_JOINED;
	c->rank = rank;
	c->addr = addr;
	s->slot[rank] = (int)i;
	s->npending--;
	s->njoined++;
	if (s->njoined == s->nranks) {
		s->err = 0;
		return KCOLL_EV_END;
	}
	return KCOLL_EV_MORE;
}

/* conns[i] is readable. */
static int kcoll_boot_conn_event(struct kcoll_boot_server *s, size_t i, int64_t now)
{
	struct kcoll_boot_conn *c = &s->conns[i];
	char msg[KCOLL_BOOT_MSG_MAX];
	unsigned int need, ver;
	unsigned char byte;
	ssize_t n;

	if (c->state == KCOLL_CONN_JOINED) {
		/* A joined rank only waits: EOF means it gave up, data means it is not one. */
		n = recv(c->fd, &byte, 1, 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return KCOLL_EV_MORE;
		kcoll_conn_drop(s, i);
		return KCOLL_EV_MORE;
	}
	for (;;) {
		need = c->got < KCOLL_BOOT_HDR_LEN ? KCOLL_BOOT_HDR_LEN : sizeof(c->buf);
		n = recv(c->fd, c->buf + c->got, need - c->got, 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return KCOLL_EV_MORE;
		if (n <= 0) {
			kcoll_conn_drop(s, i);
			return KCOLL_EV_MORE;
		}
		c->got += n;
		if (c->got < need)
			continue;
		if (need == sizeof(c->buf))
			return kcoll_boot_hello(s, i, now);
		/* The header: judged before a byte of the body is read. */
		if (get_be32(c->buf) != KCOLL_BOOT_MAGIC) {
			kcoll_conn_drop(s, i);
			return KCOLL_EV_MORE;
		}
		ver = get_be16(c->buf + 4);
		if (ver != KCOLL_BOOT_VERSION) {
			snprintf(msg, sizeof(msg), "bootstrap protocol version %u is not supported "
				 "by the root at %s (it speaks version %u)", ver, s->where,
				 KCOLL_BOOT_VERSION);
			kcoll_send_error(c->fd, -EPROTONOSUPPORT, msg, now + 1000);
			kcoll_conn_drop(s, i);
			return KCOLL_EV_MORE;
		}
		if (get_be16(c->buf + 6) != KCOLL_BOOT_HELLO ||
		    get_be32(c->buf + 8) != KCOLL_BOOT_HELLO_LEN) {
			kcoll_conn_drop(s, i);
			return KCOLL_EV_MORE;
		}
	}
}

/* "1,3" or "2-5,7" (runs of three or more as ranges) into @buf; ",..." if it is cut. */
static void kcoll_boot_missing(struct kcoll_boot_server *s, char *buf, size_t len,
			       uint32_t *count)
{
	uint32_t r = 0, end;
	size_t off = 0;
	int n;

	*count = 0;
	buf[0] = '\0';
	while (r < s->nranks) {
		if (s->slot[r] >= 0) {
			r++;
			continue;
		}
		for (end = r; end + 1 < s->nranks && s->slot[end + 1] < 0; end++)
			;
		if (end == r + 1)
			end = r;	/* a pair reads better as "2,3" */
		*count += end - r + 1;
		if (off < len) {
			if (end == r)
				n = snprintf(buf + off, len - off, "%s%u", off ? "," : "", r);
			else
				n = snprintf(buf + off, len - off, "%s%u-%u", off ? "," : "", r,
					     end);
			if (n < 0 || (size_t)n >= len - off) {
				/* Cut at the last complete item. */
				buf[off] = '\0';
				if (off + 5 <= len)
					strcpy(buf + off, ",...");
				off = len;
			} else {
				off += n;
			}
		}
		r = end + 1;
	}
}

static void kcoll_boot_send_table(struct kcoll_boot_server *s)
{
	size_t len = KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_TABLE_HDR +
		     (size_t)s->nranks * KCOLL_BOOT_ADDR_LEN;
	int64_t deadline = kcoll_now_ms() + s->timeout_ms;
	unsigned char *buf, *p;
	uint32_t r;

	buf = s->tbuf = malloc(len);
	if (!buf) {
		kcoll_boot_msg(s, -ENOMEM, "the bootstrap root at %s is out of memory", s->where);
		kcoll_boot_fail_all(s, -1);
		return;
	}
	kcoll_put_hdr(buf, KCOLL_BOOT_TABLE, len - KCOLL_BOOT_HDR_LEN);
	p = buf + KCOLL_BOOT_HDR_LEN;
	put_be64(p, s->comm_id);
	put_be32(p + 8, s->nranks);
	put_be32(p + 12, 0);
	memcpy(p + 16, s->secret, KCOLL_SECRET_LEN);
	p += KCOLL_BOOT_TABLE_HDR;
	for (r = 0; r < s->nranks; r++, p += KCOLL_BOOT_ADDR_LEN)
		kcoll_wire_put_addr(p, &s->conns[s->slot[r]].addr);
	/* A rank that does not take its table times out on its side; the others go on. */
	for (r = 0; r < s->nranks; r++)
		kcoll_send_all(s->conns[s->slot[r]].fd, buf, len, deadline);
	free(buf);
	s->tbuf = NULL;
}

static void kcoll_boot_run(struct kcoll_boot_server *s)
{
	struct pollfd *pfd;
	size_t i, np;
	int64_t now, wake_at;
	char missing[256];
	uint32_t count;
	int r;

	for (;;) {
		now = kcoll_now_ms();
		wake_at = s->deadline;
		for (i = s->nconns; i-- > 0;) {
			if (s->conns[i].state != KCOLL_CONN_HELLO)
				continue;
			if (s->conns[i].hello_deadline <= now)
				kcoll_conn_drop(s, i);
		}
		for (i = 0; i < s->nconns; i++) {
			if (s->conns[i].state == KCOLL_CONN_HELLO &&
			    s->conns[i].hello_deadline < wake_at)
				wake_at = s->conns[i].hello_deadline;
		}
		if (now >= s->deadline) {
			if (!s->nranks) {
				kcoll_boot_msg(s, -ETIMEDOUT, "no rank joined the rendezvous at %s "
					       "within %u ms", s->where, s->timeout_ms);
				kcoll_boot_fail_all(s, -1);
				break;
			}
			kcoll_boot_missing(s, missing, sizeof(missing), &count);
			kcoll_boot_msg(s, -ETIMEDOUT, "%s %s of %u never joined the rendezvous "
				       "at %s within %u ms", count == 1 ? "rank" : "ranks",
				       missing, s->nranks, s->where, s->timeout_ms);
			kcoll_boot_fail_all(s, -1);
			break;
		}
		if (s->accept_pause > now && s->accept_pause < wake_at)
			wake_at = s->accept_pause;
		if (s->pcap < s->nconns + 2) {
			void *p = realloc(s->pfd, (s->nconns + 2) * sizeof(*s->pfd));

			if (!p) {
				kcoll_boot_msg(s, -ENOMEM, "the bootstrap root at %s is out of "
					       "memory", s->where);
				kcoll_boot_fail_all(s, -1);
				break;
			}
			s->pfd = p;
			s->pcap = s->nconns + 2;
		}
		pfd = s->pfd;
		pfd[0] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->accept_pause > now ? -1 : s->lfd,
					  .events = POLLIN };
		np = s->nconns;
		for (i = 0; i < np; i++)
			pfd[i + 2] = (struct pollfd){ .fd = s->conns[i].fd, .events = POLLIN };
		r = poll(pfd, np + 2, kcoll_left_ms(wake_at));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			kcoll_boot_msg(s, -errno, "the bootstrap root at %s: poll: %s", s->where,
				       strerror(errno));
			kcoll_boot_fail_all(s, -1);
			break;
		}
		if (pfd[0].revents) {
			kcoll_boot_msg(s, -ECANCELED, "the rendezvous at %s was cancelled by the "
				       "root process", s->where);
			kcoll_boot_fail_all(s, -1);
			break;
		}
		now = kcoll_now_ms();
		/* Backwards: dropping conns[i] moves the last one, already seen, into i. */
		r = KCOLL_EV_MORE;
		for (i = np; i-- > 0 && r == KCOLL_EV_MORE;) {
			if (pfd[i + 2].revents)
				r = kcoll_boot_conn_event(s, i, now);
		}
		if (r == KCOLL_EV_END) {
			if (!s->err)
				kcoll_boot_send_table(s);
			break;
		}
		if (pfd[1].revents)
			kcoll_boot_accept(s, now);
	}
	free(s->pfd);
	s->pfd = NULL;
}

static void *kcoll_boot_thread(void *arg)
{
	struct kcoll_boot_server *s = arg;
	size_t i;

	kcoll_boot_run(s);
	for (i = 0; i < s->nconns; i++) {
		/* FIN after the last byte: the ranks read their answer before the close. */
		shutdown(s->conns[i].fd, SHUT_WR);
		close(s->conns[i].fd);
	}
	s->nconns = 0;
	free(s->conns);
	s->conns = NULL;
	free(s->slot);
	s->slot = NULL;
	pthread_mutex_lock(&kcoll_boot_lock);
	close(s->lfd);
	s->lfd = -1;
	s->done = true;
	pthread_mutex_unlock(&kcoll_boot_lock);
	return NULL;
}

/* Registry of this process's root threads ------------------------------------------------ */

static void kcoll_boot_free(struct kcoll_boot_server *s)
{
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	explicit_bzero(s->secret, sizeof(s->secret));
	free(s);
}

/* Stop (when @stop) and join a root thread of this process, and free it. */
static void kcoll_boot_finish(struct kcoll_boot_server *s, bool stop)
{
	if (stop && write(s->wake[1], "x", 1) < 0) {
		/* The pipe holds a byte already: the thread is being stopped. */
	}
	pthread_join(s->tid, NULL);
	kcoll_boot_free(s);
}

static void kcoll_boot_atfork_prepare(void)
{
	pthread_mutex_lock(&kcoll_boot_lock);
}

static void kcoll_boot_atfork_parent(void)
{
	pthread_mutex_unlock(&kcoll_boot_lock);
}

/*
 * The child has no root threads.  Close its copies of their sockets at once, so that it does
 * not keep a listening port of its parent open (ranks would connect to a socket nobody
 * accepts on), and set the entries aside: what their threads had allocated is a snapshot
 * that may be mid-update, not safe to free.
 */
static void kcoll_boot_atfork_child(void)
{
	struct kcoll_boot_server *s;

	while ((s = kcoll_boot_list)) {
		kcoll_boot_list = s->next;
		if (s->lfd >= 0)
			close(s->lfd);
		if (s->wake[0] >= 0)
			close(s->wake[0]);
		if (s->wake[1] >= 0)
			close(s->wake[1]);
		s->lfd = s->wake[0] = s->wake[1] = -1;
		s->next = kcoll_boot_orphans;
		kcoll_boot_orphans = s;
	}
	pthread_mutex_unlock(&kcoll_boot_lock);
}

static void kcoll_boot_init_once(void)
{
	pthread_atfork(kcoll_boot_atfork_prepare, kcoll_boot_atfork_parent,
		       kcoll_boot_atfork_child);
}

/* Join root threads that have finished unclaimed. */
static void kcoll_boot_reap(void)
{
	struct kcoll_boot_server **pp, *s, *dead = NULL;
	pid_t pid = getpid();

	pthread_mutex_lock(&kcoll_boot_lock);
	for (pp = &kcoll_boot_list; (s = *pp);) {
		if (s->done && s->pid == pid) {
			*pp = s->next;
			s->next = dead;
			dead = s;
		} else {
			pp = &s->next;
		}
	}
	pthread_mutex_unlock(&kcoll_boot_lock);
	while ((s = dead)) {
		dead = s->next;
		kcoll_boot_finish(s, false);
	}
}

/* At exit or dlclose(): no thread may outlive the code it runs. */
__attribute__((destructor)) static void kcoll_boot_fini(void)
{
	struct kcoll_boot_server *s, *list;

	pthread_mutex_lock(&kcoll_boot_lock);
	list = kcoll_boot_list;
	kcoll_boot_list = NULL;
	pthread_mutex_unlock(&kcoll_boot_lock);
	while ((s = list)) {
		list = s->next;
		kcoll_boot_finish(s, true);
	}
}

int kcoll_bootstrap_root_join(uint64_t comm_id, bool stop, char *msg, size_t len)
{
	struct kcoll_boot_server **pp, *s;
	pid_t pid = getpid();
	int err;

	pthread_mutex_lock(&kcoll_boot_lock);
	for (pp = &kcoll_boot_list; (s = *pp); pp = &s->next) {
		if (s->pid == pid && s->comm_id == comm_id) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&kcoll_boot_lock);
	if (!s)
		return -ENOENT;
	if (stop && write(s->wake[1], "x", 1) < 0) {
		/* Full pipe: a stop is pending already. */
	}
	pthread_join(s->tid, NULL);
	err = s->err;
	if (msg && len)
		snprintf(msg, len, "%s", s->msg);
	s->pid = 0;
	kcoll_boot_free(s);
	return err;
}

int kcoll_bootstrap_root_count(void)
{
	struct kcoll_boot_server *s;
	pid_t pid = getpid();
	int n = 0;

	pthread_mutex_lock(&kcoll_boot_lock);
	for (s = kcoll_boot_list; s; s = s->next)
		n += s->pid == pid;
	pthread_mutex_unlock(&kcoll_boot_lock);
	return n;
}

/*
 * Start a root thread listening on @lfd (taken over, closed on failure too).  @where names it
 * in messages.
 */
static int kcoll_boot_start(int lfd, const char *where, uint64_t comm_id,
			    uint64_t expect_comm_id, const unsigned char *secret,
			    uint64_t job_tag, uint32_t nranks, unsigned int timeout_ms)
{
	struct kcoll_boot_server *s;
	sigset_t all, old;
	int err;

	pthread_once(&kcoll_boot_once, kcoll_boot_init_once);
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(lfd);
		return kcoll_fail(-ENOMEM, "out of memory");
	}
	s->lfd = lfd;
	s->wake[0] = s->wake[1] = -1;
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK)) {
		err = -errno;
		kcoll_boot_free(s);
		return kcoll_fail(err, "pipe: %s", strerror(-err));
	}
	s->pid = getpid();
	s->comm_id = comm_id;
	s->expect_comm_id = expect_comm_id;
	if (secret)
		memcpy(s->secret, secret, KCOLL_SECRET_LEN);
	s->job_tag = job_tag;
	s->nranks = nranks;
	s->timeout_ms = timeout_ms;
	s->deadline = kcoll_now_ms() + timeout_ms;
	snprintf(s->where, sizeof(s->where), "%s", where);
	if (nranks) {
		s->slot = malloc(nranks * sizeof(*s->slot));
		if (!s->slot) {
			kcoll_boot_free(s);
			return kcoll_fail(-ENOMEM, "out of memory");
		}
		memset(s->slot, 0xff, nranks * sizeof(*s->slot));
	}

	/* The thread takes no signal of the application's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&kcoll_boot_lock);
	err = pthread_create(&s->tid, NULL, kcoll_boot_thread, s);
	if (!err) {
		s->next = kcoll_boot_list;
		kcoll_boot_list = s;
	}
	pthread_mutex_unlock(&kcoll_boot_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(s->slot);
		kcoll_boot_free(s);
		return kcoll_fail(-err, "cannot start the bootstrap root thread: %s",
				  strerror(err));
	}
	return 0;
}

/* First IPv4 address of an interface that is up and not loopback, else a global IPv6 one. */
static bool kcoll_primary_addr(struct kcoll_sockaddr *out)
{
	struct ifaddrs *ifa, *i, *v6 = NULL;
	const struct sockaddr_in6 *sin6;

	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			break;
		sin6 = (const struct sockaddr_in6 *)i->ifa_addr;
		if (i->ifa_addr->sa_family == AF_INET6 && !v6 &&
		    !IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr) &&
		    !IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
			v6 = i;
	}
	if (!i)
		i = v6;
	if (i)
		kcoll_ksa_from_sockaddr(i->ifa_addr, out);
	freeifaddrs(ifa);
	return i != NULL;
}

/* Host name or IP literal and port to addresses; -EHOSTUNREACH with a message. */
static int kcoll_resolve(const char *host, unsigned int port, struct sockaddr_storage *ss,
			 socklen_t *lens, int max, int *n)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char service[8];
	char lit[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	const char *h = host;
	size_t hl = strlen(host);
	int rc;

	/* "[::1]" as people write it in URLs. */
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']' && hl - 2 < sizeof(lit)) {
		memcpy(lit, host + 1, hl - 2);
		lit[hl - 2] = '\0';
		h = lit;
	}
	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(h, service, &hints, &res);
	if (rc)
		return kcoll_fail(-EHOSTUNREACH, "cannot resolve the bootstrap root %.64s: %s",
				  host, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	*n = 0;
	for (ai = res; ai && *n < max; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(*ss))
			continue;
		memcpy(&ss[*n], ai->ai_addr, ai->ai_addrlen);
		lens[(*n)++] = ai->ai_addrlen;
	}
	freeaddrinfo(res);
	if (!*n)
		return kcoll_fail(-EHOSTUNREACH, "the bootstrap root %.64s has no IP address",
				  host);
	return 0;
}

int kcoll_get_unique_id(struct kcoll_unique_id *id, const struct kcoll_uid_opts *opts)
{
	struct sockaddr_storage ss;
	struct kcoll_uid_info info;
	char where[KCOLL_ADDRSTR_MAX];
	const char *addr;
	unsigned long port;
	unsigned int timeout;
	socklen_t len;
	bool set;
	int err, fd, n;

	kcoll_clear_error();
	if (!id)
		return kcoll_fail(-EINVAL, "kcoll_get_unique_id: id is NULL");
	err = OPTS_VALID(opts, kcoll_uid_opts, flags, KCOLL_UID_OPTS_SZ_VER0);
	if (err)
		return kcoll_fail(err, "kcoll_get_unique_id: bad kcoll_uid_opts");
	if (OPTS_GET(opts, flags, 0))
		return kcoll_fail(-EINVAL, "kcoll_get_unique_id: unknown flags");
	port = OPTS_GET(opts, port, 0);
	if (port > 65535)
		return kcoll_fail(-EINVAL, "kcoll_get_unique_id: port %lu is not a TCP port",
				  port);
	if (!port) {
		err = kcoll_env_ulong("KCOLL_BOOTSTRAP_PORT", 1, 65535, &port, &set);
		if (err)
			return err;
	}
	err = kcoll_boot_timeout(OPTS_GET(opts, timeout_ms, 0), &timeout);
	if (err)
		return err;
	kcoll_boot_reap();

	memset(&info, 0, sizeof(info));
	addr = OPTS_GET(opts, addr, NULL);
	if (!addr)
		addr = kcoll_getenv("KCOLL_BOOTSTRAP_ADDR");
	if (addr) {
		err = kcoll_resolve(addr, port, &ss, &len, 1, &n);
		if (err)
			return err;
		kcoll_ksa_from_sockaddr((struct sockaddr *)&ss, &info.root);
	} else if (!kcoll_primary_addr(&info.root)) {
		kcoll_parse_ip("127.0.0.1", &info.root);
	}
	info.root.port = port;
	len = kcoll_ksa_to_sockaddr(&info.root, &ss);
	err = kcoll_listen(&ss, len, &fd);
	if (err)
		return kcoll_fail(err, "the bootstrap root cannot listen on %s: %s",
				  kcoll_sockaddr_str(&info.root, where, sizeof(where)),
				  strerror(-err));
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len)) {
		err = -errno;
		close(fd);
		return kcoll_fail(err, "getsockname: %s", strerror(-err));
	}
	kcoll_ksa_from_sockaddr((struct sockaddr *)&ss, &info.root);
	err = kcoll_random_u64(&info.comm_id);
	/* The secret lives in the id only: the root never sends it (its table has zeros). */
	if (!err)
		err = kcoll_random_bytes(info.secret, sizeof(info.secret));
	if (err) {
		close(fd);
		return kcoll_fail(err, "getrandom: %s", strerror(-err));
	}
	kcoll_sockaddr_str(&info.root, where, sizeof(where));
	err = kcoll_boot_start(fd, where, info.comm_id, info.comm_id, NULL, 0, 0, timeout);
	if (!err)
		err = kcoll_uid_encode(&info, id);
	explicit_bzero(&info, sizeof(info));
	return err;
}

/* A rank ----------------------------------------------------------------------------------- */

struct kcoll_boot_client {
	struct sockaddr_storage addrs[KCOLL_BOOT_MAX_ADDRS];
	socklen_t lens[KCOLL_BOOT_MAX_ADDRS];
	int naddrs;
	char where[KCOLL_ADDRSTR_MAX + 256];
	uint64_t comm_id;		/* 0: take the root's */
	unsigned char secret[KCOLL_SECRET_LEN];
	bool have_secret;		/* from the unique id; else take the root's */
	uint64_t job_tag;
	uint32_t rank, nranks;
	unsigned int timeout_ms;
	struct kcoll_sockaddr self;
	bool self_set;
};

/* One connection attempt; the socket, or -errno. */
static int kcoll_boot_connect(const struct sockaddr_storage *ss, socklen_t len,
			      int64_t deadline)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);
	int fd, err, one = 1;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)ss, len)) {
		err = -errno;
		if (err == -EINPROGRESS || err == -EINTR) {
			err = kcoll_poll1(fd, POLLOUT, deadline);
			if (!err) {
				socklen_t el = sizeof(err);

				if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el))
					err = errno;
				err = -err;
			}
		}
		if (err) {
			close(fd);
			return err;
		}
	}
	/*
	 * Retrying a local port that nobody listens on can end in TCP simultaneous open with
	 * itself (when the ephemeral port picked is the port dialled): not the root.
	 */
	if (!getsockname(fd, (struct sockaddr *)&a, &la) &&
	    !getpeername(fd, (struct sockaddr *)&b, &lb) && la == lb && !memcmp(&a, &b, la)) {
		close(fd);
		return -ECONNREFUSED;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void kcoll_sanitize(char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			*s = '?';
	}
}

/* The root's answer: the table, or its error. */
static int kcoll_boot_reply(struct kcoll_boot_client *cl, int fd, int64_t deadline,
			    uint64_t *comm_id, struct kcoll_sockaddr **out)
{
	unsigned char hdr[KCOLL_BOOT_HDR_LEN], ebuf[8 + KCOLL_BOOT_MSG_MAX], *body;
	char msg[KCOLL_BOOT_MSG_MAX + 1], a[KCOLL_ADDRSTR_MAX], b[KCOLL_ADDRSTR_MAX];
	struct kcoll_sockaddr *table;
	uint32_t type, len, e, n, r;
	int err;

	err = kcoll_recv_all(fd, hdr, sizeof(hdr), deadline);
	if (err == -ETIMEDOUT)
		return kcoll_fail(err, "rank %u joined the rendezvous at %s but got no answer "
				  "within %u ms", cl->rank, cl->where,
				  cl->timeout_ms + KCOLL_BOOT_GRACE_MS);
	if (err == -ECONNRESET)
		return kcoll_fail(err, "the bootstrap root at %s closed the connection before "
				  "sending the peer table", cl->where);
	if (err)
		return kcoll_fail(err, "reading from the bootstrap root at %s: %s", cl->where,
				  strerror(-err));
	if (get_be32(hdr) != KCOLL_BOOT_MAGIC)
		return kcoll_fail(-EPROTO, "%s is not a kcoll bootstrap root (bad magic)",
				  cl->where);
	if (get_be16(hdr + 4) != KCOLL_BOOT_VERSION)
		return kcoll_fail(-EPROTONOSUPPORT, "the bootstrap root at %s speaks protocol "
				  "version %u, this libkcoll %u", cl->where, get_be16(hdr + 4),
				  KCOLL_BOOT_VERSION);
	type = get_be16(hdr + 6);
	len = get_be32(hdr + 8);
	if (type == KCOLL_BOOT_ERROR) {
		if (len < 8 || len > 8 + KCOLL_BOOT_MSG_MAX)
			return kcoll_fail(-EPROTO, "the bootstrap root at %s sent an error of "
					  "bad length %u", cl->where, len);
		body = ebuf;
		err = kcoll_recv_all(fd, body, len, deadline);
		if (err)
			return kcoll_fail(err, "reading from the bootstrap root at %s: %s",
					  cl->where, strerror(-err));
		e = get_be32(body);
		n = get_be32(body + 4);
		if (n != len - 8 || !e || e > 4095)
			return kcoll_fail(-EPROTO, "the bootstrap root at %s sent a malformed "
					  "error", cl->where);
		memcpy(msg, body + 8, n);
		msg[n] = '\0';
		kcoll_sanitize(msg);
		return kcoll_fail(-(int)e, "%s", msg);
	}
	if (type != KCOLL_BOOT_TABLE ||
	    len != KCOLL_BOOT_TABLE_HDR + (uint64_t)cl->nranks * KCOLL_BOOT_ADDR_LEN)
		return kcoll_fail(-EPROTO, "the bootstrap root at %s sent a malformed answer "
				  "(type %u, %u bytes, for %u ranks)", cl->where, type, len,
				  cl->nranks);
	body = malloc(len);
	table = calloc(cl->nranks, sizeof(*table));
	if (!body || !table) {
		free(body);
		free(table);
		return kcoll_fail(-ENOMEM, "out of memory");
	}
	err = kcoll_recv_all(fd, body, len, deadline);
	if (err) {
		kcoll_fail(err, "reading the peer table from the bootstrap root at %s: %s",
			   cl->where, strerror(-err));
		goto bad;
	}
	*comm_id = get_be64(body);
	if (!*comm_id || (cl->comm_id && *comm_id != cl->comm_id) ||
	    get_be32(body + 8) != cl->nranks) {
		err = kcoll_fail(-EPROTO, "the bootstrap root at %s sent the table of another "
				 "communicator", cl->where);
		goto bad;
	}
	if (!cl->have_secret)
		memcpy(cl->secret, body + 16, KCOLL_SECRET_LEN);
	for (r = 0; r < cl->nranks; r++) {
		if (kcoll_wire_get_addr(body + KCOLL_BOOT_TABLE_HDR + r * KCOLL_BOOT_ADDR_LEN,
					&table[r])) {
			err = kcoll_fail(-EPROTO, "the bootstrap root at %s sent a bad address "
					 "for rank %u", cl->where, r);
			goto bad;
		}
	}
	if (!kcoll_ksa_equal(&table[cl->rank], &cl->self)) {
		err = kcoll_fail(-EPROTO, "the bootstrap root at %s has %s for rank %u, which "
				 "advertised %s", cl->where,
				 kcoll_sockaddr_str(&table[cl->rank], a, sizeof(a)), cl->rank,
				 kcoll_sockaddr_str(&cl->self, b, sizeof(b)));
		goto bad;
	}
	free(body);
	*out = table;
	return 0;
bad:
	free(body);
	free(table);
	return err;
}

static int kcoll_boot_client_run(struct kcoll_boot_client *cl, uint64_t *comm_id,
				 struct kcoll_sockaddr **table)
{
	unsigned char hello[KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN];
	int64_t deadline = kcoll_now_ms() + cl->timeout_ms;
	int pause = KCOLL_BOOT_RETRY_MIN_MS, fd = -1, err = 0, i;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	uint16_t port;

	for (;;) {
		for (i = 0; i < cl->naddrs && fd < 0; i++) {
			fd = kcoll_boot_connect(&cl->addrs[i], cl->lens[i], deadline);
			if (fd < 0)
				err = fd;
		}
		if (fd >= 0)
			break;
		if (kcoll_left_ms(deadline) == 0)
			return kcoll_fail(-ETIMEDOUT, "rank %u cannot reach the bootstrap root "
					  "at %s within %u ms (%s)", cl->rank, cl->where,
					  cl->timeout_ms, strerror(-err));
		kcoll_sleep_ms(pause < kcoll_left_ms(deadline) ? pause : kcoll_left_ms(deadline));
		pause = pause * 2 > KCOLL_BOOT_RETRY_MAX_MS ? KCOLL_BOOT_RETRY_MAX_MS : pause * 2;
	}

	if (!cl->self_set) {
		/* The local end of the connection: the interface that routes to the root. */
		port = cl->self.port;
		err = getsockname(fd, (struct sockaddr *)&ss, &len) ? -errno : 0;
		if (!err)
			err = kcoll_ksa_from_sockaddr((struct sockaddr *)&ss, &cl->self);
		if (err) {
			close(fd);
			return kcoll_fail(err, "getsockname: %s", strerror(-err));
		}
		cl->self.port = port;
	}
	kcoll_put_hdr(hello, KCOLL_BOOT_HELLO, KCOLL_BOOT_HELLO_LEN);
	put_be64(hello + KCOLL_BOOT_HDR_LEN, cl->comm_id);
	put_be64(hello + KCOLL_BOOT_HDR_LEN + 8, cl->job_tag);
	put_be32(hello + KCOLL_BOOT_HDR_LEN + 16, cl->rank);
	put_be32(hello + KCOLL_BOOT_HDR_LEN + 20, cl->nranks);
	kcoll_wire_put_addr(hello + KCOLL_BOOT_HDR_LEN + 24, &cl->self);

	/* The root answers within its own timeout of the first rank; leave it time to. */
	deadline = kcoll_now_ms() + cl->timeout_ms + KCOLL_BOOT_GRACE_MS;
	err = kcoll_send_all(fd, hello, sizeof(hello), deadline);
	if (err)
		err = kcoll_fail(err, "sending to the bootstrap root at %s: %s", cl->where,
				 strerror(-err));
	else
		err = kcoll_boot_reply(cl, fd, deadline, comm_id, table);
	close(fd);
	return err;
}

/* Rank, size and self for a rendezvous: everything that can fail without the network. */
static int kcoll_boot_client_init(struct kcoll_boot_client *cl, int nranks, int rank,
				  const struct kcoll_comm_opts *opts)
{
	int err;

	memset(cl, 0, sizeof(*cl));
	if (nranks < 1 || nranks > KCOLL_MAX_RANKS)
		return kcoll_fail(-EINVAL, "nranks %d is not between 1 and %d", nranks,
				  KCOLL_MAX_RANKS);
	if (rank < 0 || rank >= nranks)
		return kcoll_fail(-EINVAL, "rank %d is not between 0 and %d", rank, nranks - 1);
	err = OPTS_VALID(opts, kcoll_comm_opts, ifname, KCOLL_COMM_OPTS_SZ_VER0);
	if (err)
		return kcoll_fail(err, "bad kcoll_comm_opts");
	if (OPTS_GET(opts, flags, 0))
		return kcoll_fail(-EINVAL, "kcoll_comm_opts: unknown flags");
	err = kcoll_boot_timeout(OPTS_GET(opts, bootstrap_timeout_ms, 0), &cl->timeout_ms);
	if (!err)
		err = kcoll_boot_self(opts, &cl->self, &cl->self_set);
	cl->rank = rank;
	cl->nranks = nranks;
	return err;
}

int kcoll_bootstrap_rank(const struct kcoll_unique_id *id, int nranks, int rank,
			 const struct kcoll_comm_opts *opts, uint64_t *comm_id,
			 unsigned char *secret, struct kcoll_sockaddr **table)
{
	struct kcoll_boot_client cl;
	struct kcoll_uid_info info;
	int err;

	kcoll_clear_error();
	if (!id || !comm_id || !table)
		return kcoll_fail(-EINVAL, "id, comm_id or table is NULL");
	*table = NULL;
	err = kcoll_boot_client_init(&cl, nranks, rank, opts);
	if (!err)
		err = kcoll_uid_decode(id, &info);
	if (err)
		return kcoll_err(err);
	kcoll_boot_reap();
	cl.naddrs = 1;
	cl.lens[0] = kcoll_ksa_to_sockaddr(&info.root, &cl.addrs[0]);
	kcoll_sockaddr_str(&info.root, cl.where, sizeof(cl.where));
	cl.comm_id = info.comm_id;
	memcpy(cl.secret, info.secret, KCOLL_SECRET_LEN);
	cl.have_secret = true;
	err = kcoll_boot_client_run(&cl, comm_id, table);
	if (!err && secret)
		memcpy(secret, cl.secret, KCOLL_SECRET_LEN);
	explicit_bzero(info.secret, sizeof(info.secret));
	explicit_bzero(cl.secret, sizeof(cl.secret));
	/* This process may be the root: its thread has done its work, or never will now. */
	kcoll_bootstrap_root_join(info.comm_id, err != 0, NULL, 0);
	return kcoll_err(err);
}

int kcoll_bootstrap_env(const struct kcoll_comm_opts *opts, struct kcoll_env_conf *conf,
			uint64_t *comm_id, unsigned char *secret, struct kcoll_sockaddr **table)
{
	unsigned char root_secret[KCOLL_SECRET_LEN];
	struct kcoll_boot_client cl;
	struct sockaddr_storage any;
	uint64_t root_id = 0;
	socklen_t len;
	int err, fd, i;

	kcoll_clear_error();
	if (!conf || !comm_id || !table)
		return kcoll_fail(-EINVAL, "conf, comm_id or table is NULL");
	*table = NULL;
	err = kcoll_env_parse(conf);
	if (!err)
		err = kcoll_boot_client_init(&cl, conf->nranks, conf->rank, opts);
	if (!err)
		err = kcoll_resolve(conf->root_host, conf->root_port, cl.addrs, cl.lens,
				    KCOLL_BOOT_MAX_ADDRS, &cl.naddrs);
	if (err)
		return kcoll_err(err);
	kcoll_boot_reap();
	snprintf(cl.where, sizeof(cl.where), strchr(conf->root_host, ':') &&
		 conf->root_host[0] != '[' ? "[%s]:%u" : "%s:%u", conf->root_host,
		 conf->root_port);
	cl.job_tag = conf->job_tag;

	if (conf->rank == 0) {
		/*
		 * The root listens on the root address when it is an IP literal of this host,
		 * else on every address: a host name may resolve differently here than on the
		 * other nodes (Debian maps the own host name to 127.0.1.1).
		 */
		struct kcoll_sockaddr lit;

		err = -EADDRNOTAVAIL;
		for (i = 0; i < cl.naddrs && err == -EADDRNOTAVAIL &&
			    !kcoll_parse_ip(conf->root_host, &lit); i++)
			err = kcoll_listen(&cl.addrs[i], cl.lens[i], &fd);
		if (err == -EADDRNOTAVAIL) {
			memset(&any, 0, sizeof(any));
			any.ss_family = cl.addrs[0].ss_family;
			if (any.ss_family == AF_INET)
				((struct sockaddr_in *)&any)->sin_port = htons(conf->root_port);
			else
				((struct sockaddr_in6 *)&any)->sin6_port = htons(conf->root_port);
			len = any.ss_family == AF_INET ? sizeof(struct sockaddr_in) :
							 sizeof(struct sockaddr_in6);
			err = kcoll_listen(&any, len, &fd);
		}
		if (err)
			return kcoll_fail(err, "rank 0 cannot listen for the bootstrap on %s: %s",
					  cl.where, strerror(-err));
		err = kcoll_random_u64(&root_id);
		if (!err)
			err = kcoll_random_bytes(root_secret, sizeof(root_secret));
		if (err) {
			close(fd);
			return kcoll_fail(err, "getrandom: %s", strerror(-err));
		}
		err = kcoll_boot_start(fd, cl.where, root_id, 0, root_secret, conf->job_tag,
				       conf->nranks, cl.timeout_ms);
		explicit_bzero(root_secret, sizeof(root_secret));
		if (err)
			return err;
	}
	err = kcoll_boot_client_run(&cl, comm_id, table);
	if (!err && secret)
		memcpy(secret, cl.secret, KCOLL_SECRET_LEN);
	explicit_bzero(cl.secret, sizeof(cl.secret));
	if (conf->rank == 0)
		kcoll_bootstrap_root_join(root_id, err != 0, NULL, 0);
	return kcoll_err(err);
}
