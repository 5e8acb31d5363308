// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile TCP peers (Documentation/security.rst, "Hostile TCP peers"), on one node: the
 * victim is a real communicator of two ranks over the TCP transport (forced with
 * KCOLL_COMM_TRANSPORT_TCP), rank 0 at the node's address; the hostile rank 1 is this
 * process, from a second address of the same interface, speaking kcoll's TCP framing
 * (kcoll_wire.h) by hand.  For each case of the table it sends one crafted thing, before
 * the hello or once the communicator is ready, and checks the answer: a REJECT with the
 * defined reason, or the communicator failed with the defined error of ours.  The rig fails
 * the run on any kernel splat (rig/dmesg-check.sh).
 */
#include <endian.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>

#include "kcoll_test_comm.h"
#include "../../kmod/kcoll_wire.h"
#include "../lib/kcoll_siphash.h"
#include "kselftest_harness.h"

#define EVIL_ADDR	"169.254.77.201"
#define TCP_PORT	KCOLL_WIRE_TCP_PORT

enum when { BEFORE_HELLO, AFTER_READY };

struct evil_case {
	const char *name;
	enum when when;
	struct { uint8_t type; uint32_t len, key; uint64_t off; } f;	/* the header sent */
	uint32_t send_len;		/* payload bytes actually sent */
	bool bad_magic;
	bool bad_mac;			/* BEFORE_HELLO: a hello with a wrong MAC */
	bool close;			/* AFTER_READY: just close the socket (a crash) */
	int reason;			/* BEFORE_HELLO: the REJECT reason expected */
	int error;			/* AFTER_READY: the comm's error expected */
};

#define FR(t, l, k, o) { .type = (t), .len = (l), .key = (k), .off = (o) }

static const struct evil_case cases[] = {
	{ "frame_before_hello", BEFORE_HELLO, FR(KCOLL_TCP_MSG, 32, 0, 0), 32,
	  .reason = KCOLL_REJ_BAD_HELLO },
	{ "data_before_hello", BEFORE_HELLO, FR(KCOLL_TCP_DATA, 16, 1, 0), 16,
	  .reason = KCOLL_REJ_BAD_HELLO },
	{ "hello_short", BEFORE_HELLO, FR(KCOLL_TCP_HELLO, 39, 0, 0), 39,
	  .reason = KCOLL_REJ_BAD_HELLO },
	{ "hello_bad_magic", BEFORE_HELLO, FR(KCOLL_TCP_HELLO, 40, 0, 0), 40,
	  .bad_magic = true, .reason = KCOLL_REJ_BAD_HELLO },
	{ "hello_unauthenticated", BEFORE_HELLO, FR(KCOLL_TCP_HELLO, 40, 0, 0), 40,
	  .bad_mac = true, .reason = KCOLL_REJ_AUTH },
	{ "msg_too_long", AFTER_READY, FR(KCOLL_TCP_MSG, KCOLL_WIRE_MSG_SIZE + 1, 0, 0), 0,
	  .error = -EPROTO },
	{ "msg_empty", AFTER_READY, FR(KCOLL_TCP_MSG, 0, 0, 0), 0, .error = -EPROTO },
	{ "msg_with_key", AFTER_READY, FR(KCOLL_TCP_MSG, 32, 7, 0), 32, .error = -EPROTO },
	{ "data_oversized", AFTER_READY, FR(KCOLL_TCP_DATA, KCOLL_WIRE_TCP_DATA_MAX + 1, 1, 0),
	  0, .error = -EPROTO },
	{ "data_empty", AFTER_READY, FR(KCOLL_TCP_DATA, 0, 1, 0), 0, .error = -EPROTO },
	{ "data_bad_key", AFTER_READY, FR(KCOLL_TCP_DATA, 16, 0xfffffff0, 0), 16,
	  .error = -ECONNRESET },
	{ "data_offset_wraps", AFTER_READY, FR(KCOLL_TCP_DATA, 16, 1, UINT64_MAX - 7), 16,
	  .error = -ECONNRESET },
	{ "hello_after_ready", AFTER_READY, FR(KCOLL_TCP_HELLO, 40, 0, 0), 40,
	  .error = -EPROTO },
	{ "unknown_type", AFTER_READY, FR(200, 8, 0, 0), 8, .error = -EPROTO },
	{ "bad_magic", AFTER_READY, FR(KCOLL_TCP_MSG, 32, 0, 0), 32, .bad_magic = true,
	  .error = -EPROTO },
	{ "peer_vanishes", AFTER_READY, {}, 0, .close = true, .error = -ECONNRESET },
};

static struct kcoll_sockaddr evil_addr(void)
{
	struct kcoll_sockaddr a = { .family = AF_INET };

	inet_pton(AF_INET, EVIL_ADDR, a.addr);
	return a;
}

static int send_all(int fd, const void *p, size_t n)
{
	return send(fd, p, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

static int recv_all(int fd, void *p, size_t n, int timeout_ms)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1;
		r = recv(fd, (char *)p + got, n - got, 0);
		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

static int send_frame(int fd, uint8_t type, const void *payload, uint32_t len)
{
	struct kcoll_wire_tcp_frame f = {
		.magic = htobe32(KCOLL_WIRE_MAGIC), .type = type, .len = htobe32(len),
	};

	if (send_all(fd, &f, sizeof(f)))
		return -1;
	return len ? send_all(fd, payload, len) : 0;
}

/* A TCP connection from the hostile address to the victim's listener. */
static int dial(void)
{
	struct sockaddr_in from = { .sin_family = AF_INET };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(TCP_PORT) };
	struct kcoll_sockaddr v = kt_addr(0);
	int fd, one = 1;

	inet_pton(AF_INET, EVIL_ADDR, &from.sin_addr);
	memcpy(&to.sin_addr, v.addr, 4);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&from, sizeof(from)) ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void hello(struct kcoll_wire_hello *h, uint64_t id, const unsigned char *secret)
{
	memset(h, 0, sizeof(*h));
	h->magic = htobe32(KCOLL_WIRE_MAGIC);
	h->version = KCOLL_PROTO_VERSION;
	h->comm_id = htobe64(id);
	h->src_rank = htobe32(1);
	h->dst_rank = htobe32(0);
	h->nranks = htobe32(2);
	h->mac = htobe64(kcoll_wire_mac_user(h, KCOLL_WIRE_TAG_HELLO, secret));
}

/*
 * Connect as rank 1 with a proper hello; the answer's frame type (ACCEPT, REJECT) and
 * reason in *@reason.  Retries while the victim's comm does not exist yet.
 */
static int join(uint64_t id, const unsigned char *secret, int *fdp)
{
	struct kcoll_wire_tcp_frame f;
	struct kcoll_wire_hello h;
	unsigned char ans[16];
	int fd, i;

	for (i = 0; i < 100; i++) {
		fd = dial();
		if (fd < 0) {
			usleep(100000);
			continue;
		}
		hello(&h, id, secret);
		if (send_frame(fd, KCOLL_TCP_HELLO, &h, sizeof(h)) ||
		    recv_all(fd, &f, sizeof(f), 5000) || be32toh(f.len) > sizeof(ans) ||
		    recv_all(fd, ans, be32toh(f.len), 5000)) {
			close(fd);
			return -1;
		}
		if (f.type == KCOLL_TCP_ACCEPT) {
			*fdp = fd;
			return 0;
		}
		close(fd);
		if (f.type != KCOLL_TCP_REJECT || ans[5] != KCOLL_REJ_NOT_YET)
			return -1;
		usleep(100000);
	}
	return -1;
}

/* The victim, in a child: create, wait for the comm to fail, report create's and its error. */
static void victim(int out, uint64_t id, int timeout_ms)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), evil_addr() };
	unsigned char secret[KCOLL_SECRET_LEN];
	struct kcoll_comm_create c = {
		.size = sizeof(c), .flags = KCOLL_COMM_TRANSPORT_TCP, .comm_id = id, .rank = 0,
		.nranks = 2, .peers = (uintptr_t)peers, .peer_size = sizeof(peers[0]),
		.timeout_ms = timeout_ms,
	};
	struct kcoll_comm_query q = { .size = sizeof(q) };
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC), r[2] = { -EBADF, 0 }, i;

	kt_comm_secret(id, secret);
	memcpy(c.secret, secret, sizeof(secret));
	r[0] = fd < 0 ? -errno : kt_ioctl(fd, KCOLL_IOC_COMM_CREATE, &c);
	for (i = 0; !r[0] && i < 300; i++) {
		q.handle = c.handle;
		if (kt_ioctl(fd, KCOLL_IOC_COMM_QUERY, &q))
			break;
		if (q.state != KCOLL_COMM_READY) {
			r[1] = q.error;
			break;
		}
		usleep(50000);
	}
	if (write(out, r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

FIXTURE(evil) {
	pid_t child;
	int pipe[2];
};

FIXTURE_SETUP(evil)
{
	self->child = -1;
	if (access(KCOLL_DEVICE_PATH, F_OK))
		SKIP(return, "kcoll not loaded");
	/* A second address of the node's interface: the hostile rank's. */
	kt_sh("ip addr add " EVIL_ADDR "/24 dev eth0 2>/dev/null");
	ASSERT_EQ(0, pipe(self->pipe));
}

FIXTURE_TEARDOWN(evil)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
}

TEST_F_TIMEOUT(evil, table, 300)
{
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct evil_case *e = &cases[i];
		uint64_t id = kt_comm_id("tcp_evil", i);
		unsigned char secret[KCOLL_SECRET_LEN], buf[64] = {}, pay[96] = {};
		struct kcoll_wire_tcp_frame f = {
			.type = e->f.type, .len = htobe32(e->f.len), .key = htobe32(e->f.key),
			.off = htobe64(e->f.off),
		};
		struct kcoll_wire_hello h;
		int fd = -1, r[2];
		pid_t pid;

		kt_comm_secret(id, secret);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			victim(self->pipe[1], id, e->when == BEFORE_HELLO ? 3000 : 20000);
		self->child = pid;
		if (!e->bad_magic)
			f.magic = htobe32(KCOLL_WIRE_MAGIC);
		if (e->when == BEFORE_HELLO) {
			struct kcoll_wire_tcp_frame a;
			int k;

			/* The victim's listener exists once its comm does: retry the dial. */
			for (k = 0; k < 50 && (fd = dial()) < 0; k++)
				usleep(100000);
			ASSERT_LE(0, fd) TH_LOG("%s: cannot connect", e->name);
			hello(&h, id, secret);
			if (e->bad_mac)
				h.mac ^= 1;
			memcpy(pay, &f, sizeof(f));
			memcpy(pay + sizeof(f), &h, sizeof(h));
			/*
			 * One send: the listener may refuse on the header alone and close, so
			 * what follows need not be taken; its REJECT is read all the same.
			 */
			send_all(fd, pay, sizeof(f) + e->send_len);
			/* Not yet created (NOT_YET) is the only other answer: ask again. */
			for (k = 0; k < 50; k++) {
				ASSERT_EQ(0, recv_all(fd, &a, sizeof(a), 5000)) TH_LOG("%s", e->name);
				ASSERT_EQ(0, recv_all(fd, buf, be32toh(a.len), 5000));
				if (a.type != KCOLL_TCP_REJECT || buf[5] != KCOLL_REJ_NOT_YET)
					break;
				close(fd);
				usleep(100000);
				fd = dial();
				ASSERT_LE(0, fd);
				send_all(fd, pay, sizeof(f) + e->send_len);
			}
			EXPECT_EQ(KCOLL_TCP_REJECT, a.type) TH_LOG("%s", e->name);
			EXPECT_EQ(e->reason, buf[5]) TH_LOG("%s: reason %u", e->name, buf[5]);
			/* The listener closed it: nothing more comes. */
			EXPECT_NE(0, recv_all(fd, buf, 1, 5000)) TH_LOG("%s: still open", e->name);
			close(fd);
			/* The comm itself goes on: no one proper ever came, it times out. */
			ASSERT_EQ(sizeof(r), read(self->pipe[0], r, sizeof(r)));
			EXPECT_EQ(-ETIMEDOUT, r[0]) TH_LOG("%s: create %d", e->name, r[0]);
		} else {
			struct kcoll_wire_signal ready = {
				.hdr = { .magic = htobe32(KCOLL_WIRE_MAGIC), .type = KCOLL_MSG_READY },
			};
			struct kcoll_wire_tcp_frame a;

			ASSERT_EQ(0, join(id, secret, &fd)) TH_LOG("%s: join", e->name);
			ASSERT_EQ(0, send_frame(fd, KCOLL_TCP_MSG, &ready, sizeof(ready)));
			/* The victim's READY: it is ready now. */
			ASSERT_EQ(0, recv_all(fd, &a, sizeof(a), 10000)) TH_LOG("%s", e->name);
			ASSERT_EQ(KCOLL_TCP_MSG, a.type);
			ASSERT_EQ(0, recv_all(fd, buf, be32toh(a.len), 5000));
			if (e->close) {
				close(fd);
				fd = -1;
			} else {
				memcpy(pay, &f, sizeof(f));
				send_all(fd, pay, sizeof(f) + e->send_len);
			}
			ASSERT_EQ(sizeof(r), read(self->pipe[0], r, sizeof(r)));
			EXPECT_EQ(0, r[0]) TH_LOG("%s: create %d", e->name, r[0]);
			EXPECT_EQ(e->error, r[1]) TH_LOG("%s: comm error %d", e->name, r[1]);
			/* Our connection was closed by the victim. */
			if (fd >= 0) {
				while (recv_all(fd, buf, 1, 5000) == 0)
					;
				close(fd);
			}
		}
		waitpid(pid, NULL, 0);
		self->child = -1;
	}
	kt_sh("ip addr del " EVIL_ADDR "/24 dev eth0 2>/dev/null");
	/* Every victim went with its process. */
	EXPECT_EQ(0, kt_count_comms());
}

TEST_HARNESS_MAIN
