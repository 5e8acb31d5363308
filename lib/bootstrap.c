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
 *
 * This file is a rank's side (kcoll_get_unique_id(), joining); bootstrap.h lists the others:
 * the encoding, the environment, socket I/O and the root.
 */
#include "bootstrap.h"

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
	struct kcoll_rank_locality loc;		/* this rank's, sent in the hello */
	struct kcoll_rank_locality *table_loc;	/* every rank's, from the table; or NULL */
	bool want_loc;
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
	    len != KCOLL_BOOT_TABLE_HDR + (uint64_t)cl->nranks * KCOLL_BOOT_ENTRY_LEN)
		return kcoll_fail(-EPROTO, "the bootstrap root at %s sent a malformed answer "
				  "(type %u, %u bytes, for %u ranks)", cl->where, type, len,
				  cl->nranks);
	body = malloc(len);
	table = calloc(cl->nranks, sizeof(*table));
	if (cl->want_loc)
		cl->table_loc = calloc(cl->nranks, sizeof(*cl->table_loc));
	if (!body || !table || (cl->want_loc && !cl->table_loc)) {
		err = kcoll_fail(-ENOMEM, "out of memory");
		goto bad;
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
		const unsigned char *e = body + KCOLL_BOOT_TABLE_HDR + r * KCOLL_BOOT_ENTRY_LEN;
		struct kcoll_rank_locality loc;

		if (kcoll_wire_get_addr(e, &table[r]) ||
		    kcoll_loc_get(e + KCOLL_BOOT_ADDR_LEN, KCOLL_BOOT_LOC_LEN, &loc)) {
			err = kcoll_fail(-EPROTO, "the bootstrap root at %s sent a bad entry "
					 "for rank %u", cl->where, r);
			goto bad;
		}
		if (cl->table_loc)
			cl->table_loc[r] = loc;
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
	free(cl->table_loc);
	cl->table_loc = NULL;
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
		/* Now the NIC is known: the interface of that address. */
		err = kcoll_loc_self(&cl->self, &cl->loc);
		if (err) {
			close(fd);
			return err;
		}
	}
	kcoll_put_hdr(hello, KCOLL_BOOT_HELLO, KCOLL_BOOT_HELLO_LEN);
	put_be64(hello + KCOLL_BOOT_HDR_LEN, cl->comm_id);
	put_be64(hello + KCOLL_BOOT_HDR_LEN + 8, cl->job_tag);
	put_be32(hello + KCOLL_BOOT_HDR_LEN + 16, cl->rank);
	put_be32(hello + KCOLL_BOOT_HDR_LEN + 20, cl->nranks);
	kcoll_wire_put_addr(hello + KCOLL_BOOT_HDR_LEN + 24, &cl->self);
	kcoll_loc_put(hello + KCOLL_BOOT_HDR_LEN + 24 + KCOLL_BOOT_ADDR_LEN, &cl->loc);

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
				  int local_rank, const struct kcoll_comm_opts *opts)
{
	int err;

	memset(cl, 0, sizeof(*cl));
	if (nranks < 1 || nranks > KCOLL_MAX_RANKS)
		return kcoll_fail(-EINVAL, "nranks %d is not between 1 and %d", nranks,
				  KCOLL_MAX_RANKS);
	if (rank < 0 || rank >= nranks)
		return kcoll_fail(-EINVAL, "rank %d is not between 0 and %d", rank, nranks - 1);
	err = OPTS_VALID(opts, kcoll_comm_opts, transport, KCOLL_COMM_OPTS_SZ_VER0);
	if (err)
		return kcoll_fail(err, "bad kcoll_comm_opts");
	if (OPTS_GET(opts, flags, 0))
		return kcoll_fail(-EINVAL, "kcoll_comm_opts: unknown flags");
	err = kcoll_boot_timeout(OPTS_GET(opts, bootstrap_timeout_ms, 0), &cl->timeout_ms);
	if (!err)
		err = kcoll_boot_self(opts, nranks, local_rank, &cl->self, &cl->self_set);
	/* Here, before the network: a bad topology file fails this rank alone, at once. */
	if (!err)
		err = kcoll_loc_self(&cl->self, &cl->loc);
	cl->rank = rank;
	cl->nranks = nranks;
	return err;
}

int kcoll_bootstrap_rank(const struct kcoll_unique_id *id, int nranks, int rank,
			 const struct kcoll_comm_opts *opts, uint64_t *comm_id,
			 unsigned char *secret, struct kcoll_sockaddr **table)
{
	return kcoll_bootstrap_rank_loc(id, nranks, rank, opts, comm_id, secret, table, NULL);
}

int kcoll_bootstrap_rank_loc(const struct kcoll_unique_id *id, int nranks, int rank,
			     const struct kcoll_comm_opts *opts, uint64_t *comm_id,
			     unsigned char *secret, struct kcoll_sockaddr **table,
			     struct kcoll_rank_locality **loc)
{
	struct kcoll_boot_client cl;
	struct kcoll_uid_info info;
	int err;

	kcoll_clear_error();
	if (!id || !comm_id || !table)
		return kcoll_fail(-EINVAL, "id, comm_id or table is NULL");
	*table = NULL;
	if (loc)
		*loc = NULL;
	err = kcoll_boot_client_init(&cl, nranks, rank, KCOLL_LOCAL_RANK_LOOKUP, opts);
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
	cl.want_loc = loc != NULL;
	err = kcoll_boot_client_run(&cl, comm_id, table);
	if (loc)
		*loc = cl.table_loc;
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
	return kcoll_bootstrap_env_loc(opts, conf, comm_id, secret, table, NULL);
}

int kcoll_bootstrap_env_loc(const struct kcoll_comm_opts *opts, struct kcoll_env_conf *conf,
			    uint64_t *comm_id, unsigned char *secret,
			    struct kcoll_sockaddr **table, struct kcoll_rank_locality **loc)
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
	if (loc)
		*loc = NULL;
	err = kcoll_env_parse(conf);
	if (!err)
		err = kcoll_boot_client_init(&cl, conf->nranks, conf->rank, conf->local_rank,
					     opts);
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
	cl.want_loc = loc != NULL;
	err = kcoll_boot_client_run(&cl, comm_id, table);
	if (loc)
		*loc = cl.table_loc;
	if (!err && secret)
		memcpy(secret, cl.secret, KCOLL_SECRET_LEN);
	explicit_bzero(cl.secret, sizeof(cl.secret));
	if (conf->rank == 0)
		kcoll_bootstrap_root_join(root_id, err != 0, NULL, 0);
	return kcoll_err(err);
}
