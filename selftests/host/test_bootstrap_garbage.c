// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkcoll bootstrap without a kernel module, against peers that send garbage: clients that
 * are not ranks do not hurt the root (lib/boot_server.c), forged hellos fail cleanly, and a
 * root that answers garbage gives the rank a clean error, no crash and no overflow.
 *
 * Linked against libkcoll.a: the rendezvous is reached through the library's internal
 * kcoll_bootstrap_rank() and kcoll_bootstrap_env(), which stop where the ioctl would start.
 * Only 127.0.0.1 and ::1 are used, with ephemeral ports.
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

#include "kselftest_harness.h"

/* Garbage ------------------------------------------------------------------------------------ */

/* One byte of a well-formed hello (make_hello()), at @off past the header, set to @val. */
static const struct {
	const char *what;
	size_t off;
	unsigned char val;
} bad_hellos[] = {
	{ "an address of family 5", 24 + 1, 5 },	/* the low byte of the big-endian 4 */
	{ "junk in an IPv4 address's padding", 24 + 20, 1 },
	{ "a locality record of another version", 24 + KCOLL_BOOT_ADDR_LEN + 1, 2 },
	{ "junk in the locality record's reserved bytes", KCOLL_BOOT_HELLO_LEN - 1, 1 },
};

/* Clients that are not ranks do not hurt the root; the honest ranks complete. */
TEST(garbage_clients)
{
	struct rank_result *res = shared_results(2);
	unsigned char buf[256 + KCOLL_BOOT_HELLO_LEN], reply[2048];
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	int fd, silent[40], i, n;
	pid_t pids[2];

	ASSERT_NE(NULL, res);
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 10000, &info));

	/* Random bytes. */
	srand(1);
	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = rand();
	EXPECT_EQ(0, fake_peer(info.root.port, buf, 256, NULL, 0));	/* dropped */

	/* A hello cut short, then silence: dropped after its hello timeout or at the end. */
	make_hello(buf, info.comm_id, 0, 2);
	fd = connect_port(info.root.port);
	ASSERT_LE(0, fd);
	send(fd, buf, KCOLL_BOOT_HDR_LEN + 10, MSG_NOSIGNAL);
	close(fd);

	/* A huge length: rejected from the header alone. */
	make_hdr(buf, KCOLL_BOOT_VERSION, KCOLL_BOOT_HELLO, 0xffffffffu);
	EXPECT_EQ(0, fake_peer(info.root.port, buf, KCOLL_BOOT_HDR_LEN, NULL, 0));

	/* Wrong type with the hello's length. */
	make_hdr(buf, KCOLL_BOOT_VERSION, KCOLL_BOOT_TABLE, KCOLL_BOOT_HELLO_LEN);
	EXPECT_EQ(0, fake_peer(info.root.port, buf, KCOLL_BOOT_HDR_LEN, NULL, 0));

	/* A future protocol version is told so. */
	make_hello(buf, info.comm_id, 0, 2);
	put16(buf + 4, 99);
	n = fake_peer(info.root.port, buf, KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN, reply,
		      sizeof(reply));
	ASSERT_LT(KCOLL_BOOT_HDR_LEN + 8, n);
	EXPECT_EQ(KCOLL_BOOT_MAGIC, get32(reply));
	EXPECT_EQ(KCOLL_BOOT_ERROR, reply[7]);
	EXPECT_EQ(EPROTONOSUPPORT, get32(reply + KCOLL_BOOT_HDR_LEN));

	/* Another communicator's rank is turned away alone. */
	make_hello(buf, info.comm_id ^ 1, 0, 2);
	n = fake_peer(info.root.port, buf, KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN, reply,
		      sizeof(reply));
	ASSERT_LT(KCOLL_BOOT_HDR_LEN + 8, n);
	EXPECT_EQ(ECONNREFUSED, get32(reply + KCOLL_BOOT_HDR_LEN));

	/* Hellos with one bad byte: dropped without an answer. */
	for (i = 0; i < (int)(sizeof(bad_hellos) / sizeof(bad_hellos[0])); i++) {
		make_hello(buf, info.comm_id, 0, 2);
		buf[KCOLL_BOOT_HDR_LEN + bad_hellos[i].off] = bad_hellos[i].val;
		EXPECT_EQ(0, fake_peer(info.root.port, buf, KCOLL_BOOT_HDR_LEN +
				       KCOLL_BOOT_HELLO_LEN, NULL, 0)) {
			TH_LOG("a hello with %s", bad_hellos[i].what);
		}
	}

	/* A rank that joins and then talks out of turn loses its place. */
	make_hello(buf, info.comm_id, 1, 2);
	memcpy(buf + KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN, "junk", 4);
	EXPECT_EQ(0, fake_peer(info.root.port, buf, KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN + 4,
			       NULL, 0));

	/* Connections that say nothing at all, open while the ranks meet. */
	for (i = 0; i < 40; i++)
		silent[i] = connect_port(info.root.port);

	for (i = 0; i < 2; i++)
		pids[i] = spawn_uid_rank(&id, 2, i, 10000, false, &res[i]);
	EXPECT_EQ(0, wait_all(pids, 2));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, res[i].err) {
			TH_LOG("rank %d: %s", i, res[i].msg);
		}
	}
	EXPECT_TRUE(all_same_table(res, 2));
	EXPECT_EQ(0, kcoll_bootstrap_root_join(info.comm_id, false, NULL, 0));
	for (i = 0; i < 40; i++) {
		if (silent[i] >= 0) {
			EXPECT_EQ(0, drain(silent[i], NULL, 0));
			close(silent[i]);
		}
	}
}

/*
 * A well-formed hello with a forged nranks fails the rendezvous, cleanly.  One honest rank:
 * one that came later would find the root gone and time out instead.
 */
TEST(forged_hello_fails_cleanly)
{
	struct rank_result *res = shared_results(1);
	unsigned char buf[KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN], reply[2048];
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	pid_t pid;
	int fd, n;

	ASSERT_NE(NULL, res);
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
	make_hello(buf, info.comm_id, 4095, KCOLL_MAX_RANKS);
	fd = connect_port(info.root.port);
	ASSERT_LE(0, fd);
	send(fd, buf, sizeof(buf), MSG_NOSIGNAL);
	pid = spawn_uid_rank(&id, 2, 0, 5000, false, res);
	EXPECT_EQ(0, wait_all(&pid, 1));
	EXPECT_EQ(-EINVAL, res->err);
	/* Whichever hello the root read first sets nranks; the other is the mismatch. */
	EXPECT_NE(NULL, strstr(res->msg, "nranks mismatch: rank ")) {
		TH_LOG("%s", res->msg);
	}
	EXPECT_NE(NULL, strstr(res->msg, "nranks 2"));
	EXPECT_NE(NULL, strstr(res->msg, "nranks 4096"));
	/* The forger is told too. */
	n = drain(fd, reply, sizeof(reply));
	close(fd);
	EXPECT_LT(KCOLL_BOOT_HDR_LEN + 8, n);
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_root_join(info.comm_id, false, NULL, 0));
}

/* A root that answers garbage: the rank fails with a clean error, no crash, no overflow. */
struct fake_root {
	int lfd;
	const unsigned char *reply;
	size_t len;
	bool hold;			/* keep the connection open, say nothing */
};

static void *fake_root_main(void *arg)
{
	struct fake_root *f = arg;
	unsigned char hello[KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN];
	size_t got = 0;
	ssize_t n;
	int fd;

	fd = accept(f->lfd, NULL, NULL);
	if (fd < 0)
		return NULL;
	while (got < sizeof(hello)) {
		n = recv(fd, hello + got, sizeof(hello) - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	if (f->len)
		send(fd, f->reply, f->len, MSG_NOSIGNAL);
	if (f->hold)
		drain(fd, NULL, 0);
	close(fd);
	return NULL;
}

static int against_fake_root(const unsigned char *reply, size_t len, bool hold,
			     unsigned int timeout_ms, uint64_t comm_id, char *msg)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	struct fake_root f = { .reply = reply, .len = len, .hold = hold };
	struct kcoll_uid_info info = { .comm_id = comm_id };
	struct kcoll_sockaddr *table = NULL;
	KCOLL_OPTS(kcoll_comm_opts, opts, .bootstrap_timeout_ms = timeout_ms,
		   .addr = "127.0.0.1");
	struct kcoll_unique_id id;
	uint64_t got_id;
	pthread_t t;
	int err;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f.lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (f.lfd < 0 || bind(f.lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(f.lfd, 4) || getsockname(f.lfd, (struct sockaddr *)&sin, &sl))
		return 1000;
	info.root.family = AF_INET;
	info.root.port = ntohs(sin.sin_port);
	memcpy(info.root.addr, &sin.sin_addr, 4);
	kcoll_uid_encode(&info, &id);
	pthread_create(&t, NULL, fake_root_main, &f);
	err = kcoll_bootstrap_rank(&id, 2, 0, &opts, &got_id, NULL, &table);
	snprintf(msg, KCOLL_ERRMSG_MAX, "%s", kcoll_last_error());
	shutdown(f.lfd, SHUT_RDWR);
	pthread_join(t, NULL);
	close(f.lfd);
	if (table && !err)
		err = 1;
	free(table);
	return err;
}

static size_t make_table(unsigned char *p, uint64_t comm_id, uint32_t nranks, int fam0)
{
	unsigned char *b = p + KCOLL_BOOT_HDR_LEN;
	uint32_t r;

	make_hdr(p, KCOLL_BOOT_VERSION, KCOLL_BOOT_TABLE,
		 KCOLL_BOOT_TABLE_HDR + nranks * KCOLL_BOOT_ENTRY_LEN);
	put64(b, comm_id);
	put32(b + 8, nranks);
	put32(b + 12, 0);
	for (r = 0; r < nranks; r++) {
		unsigned char *a = b + KCOLL_BOOT_TABLE_HDR + r * KCOLL_BOOT_ENTRY_LEN;

		memset(a, 0, KCOLL_BOOT_ADDR_LEN);
		put16(a, r ? 4 : fam0);
		a[8] = 127;
		a[11] = 1;
		kcoll_loc_put(a + KCOLL_BOOT_ADDR_LEN,
			      &(struct kcoll_rank_locality){ .host = r + 1, .numa_node = -1 });
	}
	return KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_TABLE_HDR + nranks * KCOLL_BOOT_ENTRY_LEN;
}

TEST(garbage_root)
{
	unsigned char buf[4096];
	char msg[KCOLL_ERRMSG_MAX];
	const uint64_t cid = 0x1122334455667788ULL;
	int64_t start;
	size_t len;
	int i;

	/* Hangs up without a word. */
	EXPECT_EQ(-ECONNRESET, against_fake_root(NULL, 0, false, 2000, cid, msg));
	EXPECT_NE(NULL, strstr(msg, "closed the connection before sending the peer table"));

	/* Random bytes. */
	srand(2);
	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = rand();
	EXPECT_EQ(-EPROTO, against_fake_root(buf, 100, false, 2000, cid, msg));
	EXPECT_NE(NULL, strstr(msg, "not a kcoll bootstrap root"));

	/* A table of 4 GiB announced. */
	make_hdr(buf, KCOLL_BOOT_VERSION, KCOLL_BOOT_TABLE, 0xffffffffu);
	EXPECT_EQ(-EPROTO, against_fake_root(buf, KCOLL_BOOT_HDR_LEN, false, 2000, cid, msg));

	/* An error message longer than allowed, and one that lies about its length. */
	make_hdr(buf, KCOLL_BOOT_VERSION, KCOLL_BOOT_ERROR, 8 + 5000);
	EXPECT_EQ(-EPROTO, against_fake_root(buf, KCOLL_BOOT_HDR_LEN, false, 2000, cid, msg));
	make_hdr(buf, KCOLL_BOOT_VERSION, KCOLL_BOOT_ERROR, 8 + 4);
	put32(buf + KCOLL_BOOT_HDR_LEN, EIO);
	put32(buf + KCOLL_BOOT_HDR_LEN + 4, 400);
	memcpy(buf + KCOLL_BOOT_HDR_LEN + 8, "oops", 4);
	EXPECT_EQ(-EPROTO, against_fake_root(buf, KCOLL_BOOT_HDR_LEN + 12, false, 2000, cid,
					     msg));
	/* errno 0 is no error. */
	put32(buf + KCOLL_BOOT_HDR_LEN, 0);
	put32(buf + KCOLL_BOOT_HDR_LEN + 4, 4);
	EXPECT_EQ(-EPROTO, against_fake_root(buf, KCOLL_BOOT_HDR_LEN + 12, false, 2000, cid,
					     msg));

	/* The largest error message, with terminal escapes in it: passed on, defused. */
	make_hdr(buf, KCOLL_BOOT_VERSION, KCOLL_BOOT_ERROR, 8 + KCOLL_BOOT_MSG_MAX);
	put32(buf + KCOLL_BOOT_HDR_LEN, ENOSPC);
	put32(buf + KCOLL_BOOT_HDR_LEN + 4, KCOLL_BOOT_MSG_MAX);
	memset(buf + KCOLL_BOOT_HDR_LEN + 8, 'x', KCOLL_BOOT_MSG_MAX);
	memcpy(buf + KCOLL_BOOT_HDR_LEN + 8, "\x1b[2Jbad\n", 8);
	EXPECT_EQ(-ENOSPC, against_fake_root(buf, KCOLL_BOOT_HDR_LEN + 8 + KCOLL_BOOT_MSG_MAX,
					     false, 2000, cid, msg));
	EXPECT_EQ(0, strncmp(msg, "?[2Jbad?xxx", 11));
	EXPECT_EQ(KCOLL_ERRMSG_MAX - 1, strlen(msg));
	EXPECT_STREQ("...", msg + KCOLL_ERRMSG_MAX - 4);

	/* Tables that are not ours: other comm id, other size, bad family, wrong self. */
	len = make_table(buf, cid ^ 1, 2, 4);
	EXPECT_EQ(-EPROTO, against_fake_root(buf, len, false, 2000, cid, msg));
	EXPECT_NE(NULL, strstr(msg, "another communicator"));
	len = make_table(buf, cid, 3, 4);
	EXPECT_EQ(-EPROTO, against_fake_root(buf, len, false, 2000, cid, msg));
	len = make_table(buf, cid, 2, 9);
	EXPECT_EQ(-EPROTO, against_fake_root(buf, len, false, 2000, cid, msg));
	EXPECT_NE(NULL, strstr(msg, "bad entry for rank 0"));
	/* A locality record of another version, a truncated one (its length field). */
	len = make_table(buf, cid, 2, 4);
	buf[KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_TABLE_HDR + KCOLL_BOOT_ENTRY_LEN +
	    KCOLL_BOOT_ADDR_LEN + 1] = 9;
	EXPECT_EQ(-EPROTO, against_fake_root(buf, len, false, 2000, cid, msg));
	EXPECT_NE(NULL, strstr(msg, "bad entry for rank 1"));
	len = make_table(buf, cid, 2, 4);
	buf[KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_TABLE_HDR + KCOLL_BOOT_ADDR_LEN + 3] = 40;
	EXPECT_EQ(-EPROTO, against_fake_root(buf, len, false, 2000, cid, msg));
	EXPECT_NE(NULL, strstr(msg, "bad entry for rank 0"));
	len = make_table(buf, cid, 2, 4);
	buf[KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_TABLE_HDR + 11] = 2;	/* 127.0.0.2 */
	EXPECT_EQ(-EPROTO, against_fake_root(buf, len, false, 2000, cid, msg));
	EXPECT_NE(NULL, strstr(msg, "which advertised 127.0.0.1:0"));
	/* A cut table. */
	len = make_table(buf, cid, 2, 4);
	EXPECT_EQ(-ECONNRESET, against_fake_root(buf, len - 5, false, 2000, cid, msg));

	/* The right table is taken (the fake root is sound when it is honest). */
	len = make_table(buf, cid, 2, 4);
	EXPECT_EQ(1, against_fake_root(buf, len, false, 2000, cid, msg)) {
		TH_LOG("%s", msg);
	}

	/* Says nothing, keeps the line open: the rank gives up after its timeout + grace. */
	start = now_ms();
	EXPECT_EQ(-ETIMEDOUT, against_fake_root(NULL, 0, true, 200, cid, msg));
	EXPECT_LE(200 + KCOLL_BOOT_GRACE_MS, now_ms() - start);
	EXPECT_NE(NULL, strstr(msg, "got no answer"));
}

TEST_HARNESS_MAIN
