// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkcoll bootstrap without a kernel module, the unique id and the calls around it
 * (lib/boot_codec.c, lib/bootstrap.c): the id's encoding byte for byte, corruption detected,
 * its options and environment, the root's default address, bad arguments refused before any
 * network wait, the advertised address, and kcoll_last_error() per thread.
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

/* The unique id ------------------------------------------------------------------------- */

TEST(uid_round_trip)
{
	struct kcoll_unique_id a, b;
	struct kcoll_uid_info ia, ib;
	char msg[KCOLL_ERRMSG_MAX];

	ASSERT_EQ(0, get_uid(&a, LOOPBACK, 5000, &ia));
	ASSERT_EQ(0, get_uid(&b, LOOPBACK, 5000, &ib));
	EXPECT_EQ(0, memcmp(a.internal, "KCOLLUID", 8));
	EXPECT_EQ(AF_INET, ia.root.family);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), *(uint32_t *)ia.root.addr);
	EXPECT_NE(0, ia.root.port);
	EXPECT_NE(0, ia.comm_id);
	EXPECT_NE(ia.comm_id, ib.comm_id);
	/* Two draws of 128 bits: never the same, never all zero. */
	EXPECT_NE(0, memcmp(ia.secret, ib.secret, KCOLL_SECRET_LEN));
	EXPECT_NE(0, memcmp(ia.secret, (unsigned char[KCOLL_SECRET_LEN]){ 0 }, KCOLL_SECRET_LEN));
	EXPECT_NE(ia.root.port, ib.root.port);
	EXPECT_EQ(2, kcoll_bootstrap_root_count());
	EXPECT_EQ(-ECANCELED, kcoll_bootstrap_root_join(ia.comm_id, true, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "cancelled"));
	EXPECT_EQ(-ECANCELED, kcoll_bootstrap_root_join(ib.comm_id, true, NULL, 0));
	EXPECT_EQ(-ENOENT, kcoll_bootstrap_root_join(ib.comm_id, true, NULL, 0));
	EXPECT_EQ(0, kcoll_bootstrap_root_count());
}

/* The encoding is fixed: byte for byte, whatever the host's byte order. */
TEST(uid_encoding_is_stable)
{
	static const unsigned char want[44] = {
		'K', 'C', 'O', 'L', 'L', 'U', 'I', 'D', 0, 2, 0, 6, 0x12, 0x34, 0, 0,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0, 0, 0, 7,
	};
	struct kcoll_uid_info info = { .comm_id = 0x0102030405060708ULL }, back;
	struct kcoll_unique_id id;
	int i;

	info.root.family = AF_INET6;
	info.root.port = 0x1234;
	info.root.scope_id = 7;
	info.root.addr[0] = 0xfe;
	info.root.addr[1] = 0x80;
	info.root.addr[15] = 1;
	for (i = 0; i < KCOLL_SECRET_LEN; i++)
		info.secret[i] = 0xa0 + i;
	ASSERT_EQ(0, kcoll_uid_encode(&info, &id));
	EXPECT_EQ(0, memcmp(id.internal, want, sizeof(want)));
	/* Version 2: the secret as is at 44, then zeros up to the checksum. */
	EXPECT_EQ(0, memcmp(id.internal + 44, info.secret, KCOLL_SECRET_LEN));
	for (i = 44 + KCOLL_SECRET_LEN; i < KCOLL_UID_CSUM_OFF; i++)
		EXPECT_EQ(0, id.internal[i]);
	ASSERT_EQ(0, kcoll_uid_decode(&id, &back));
	EXPECT_EQ(0, memcmp(&info, &back, sizeof(info)));
	/* Nothing that cannot be served: no comm id, no port, unknown family. */
	info.comm_id = 0;
	EXPECT_EQ(-EINVAL, kcoll_uid_encode(&info, &id));
	info.comm_id = 1;
	info.root.port = 0;
	EXPECT_EQ(-EINVAL, kcoll_uid_encode(&info, &id));
	info.root.port = 1;
	info.root.family = AF_UNIX;
	EXPECT_EQ(-EINVAL, kcoll_uid_encode(&info, &id));
}

TEST(uid_corruption_detected)
{
	struct kcoll_unique_id id, bad;
	struct kcoll_uid_info info, out;
	struct kcoll_sockaddr *table = NULL;
	uint64_t comm_id;
	int i;

	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
	/* Every single-bit error, wherever it is. */
	for (i = 0; i < KCOLL_UNIQUE_ID_BYTES; i++) {
		bad = id;
		bad.internal[i] ^= 1u << (i % 8);
		EXPECT_EQ(-EINVAL, kcoll_uid_decode(&bad, &out)) {
			TH_LOG("byte %d flipped but accepted", i);
		}
	}
	memset(&bad, 0, sizeof(bad));
	EXPECT_EQ(-EINVAL, kcoll_uid_decode(&bad, &out));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "bad magic"));
	bad = id;
	bad.internal[9] = 3;		/* version 3 */
	EXPECT_EQ(-EINVAL, kcoll_uid_decode(&bad, &out));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "version 3"));
	bad = id;
	bad.internal[20] ^= 0x40;
	EXPECT_EQ(-EINVAL, kcoll_uid_decode(&bad, &out));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "corrupted"));
	/* Init refuses it before touching the network. */
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&bad, 2, 0, NULL, &comm_id, NULL, &table));
	EXPECT_EQ(NULL, table);
	EXPECT_EQ(-ECANCELED, kcoll_bootstrap_root_join(info.comm_id, true, NULL, 0));
}

TEST(uid_opts_and_env)
{
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	struct kcoll_uid_opts small = { .sz = 1 };
	int port;

	clear_env();
	EXPECT_EQ(-EINVAL, kcoll_get_unique_id(NULL, NULL));
	EXPECT_EQ(-EINVAL, kcoll_get_unique_id(&id, &small));
	{
		KCOLL_OPTS(kcoll_uid_opts, o, .addr = LOOPBACK, .flags = 1);

		EXPECT_EQ(-EINVAL, kcoll_get_unique_id(&id, &o));
		o.flags = 0;
		o.port = 65536;
		EXPECT_EQ(-EINVAL, kcoll_get_unique_id(&id, &o));
	}
	setenv("KCOLL_BOOTSTRAP_TIMEOUT_MS", "soon", 1);
	EXPECT_EQ(-EINVAL, kcoll_get_unique_id(&id, NULL));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_BOOTSTRAP_TIMEOUT_MS"));
	unsetenv("KCOLL_BOOTSTRAP_TIMEOUT_MS");
	EXPECT_EQ(0, kcoll_bootstrap_root_count());

	/* Address and port from the environment. */
	port = free_port();
	ASSERT_LT(0, port);
	setenv("KCOLL_BOOTSTRAP_ADDR", LOOPBACK, 1);
	{
		char p[16];

		snprintf(p, sizeof(p), "%d", port);
		setenv("KCOLL_BOOTSTRAP_PORT", p, 1);
	}
	ASSERT_EQ(0, kcoll_get_unique_id(&id, NULL));
	ASSERT_EQ(0, kcoll_uid_decode(&id, &info));
	EXPECT_EQ(htonl(INADDR_LOOPBACK), *(uint32_t *)info.root.addr);
	EXPECT_EQ(port, info.root.port);
	/* The port is taken now: a second root on it fails and says where. */
	EXPECT_EQ(-EADDRINUSE, kcoll_get_unique_id(&id, NULL));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "127.0.0.1:"));
	EXPECT_EQ(-ECANCELED, kcoll_bootstrap_root_join(info.comm_id, true, NULL, 0));
	clear_env();
}

/* Without an address the root picks one of this host's; nothing connects to it here. */
TEST(uid_default_address)
{
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;

	clear_env();
	ASSERT_EQ(0, get_uid(&id, NULL, 5000, &info));
	EXPECT_TRUE(info.root.family == AF_INET || info.root.family == AF_INET6);
	EXPECT_NE(0, info.root.port);
	EXPECT_EQ(-ECANCELED, kcoll_bootstrap_root_join(info.comm_id, true, NULL, 0));
}

/* Bad arguments fail at once: the root here never answers, so any network wait would show. */
TEST(invalid_args_before_network)
{
	static const int bad[][2] = {	/* nranks, rank */
		{ 2, 2 }, { 2, -1 }, { 0, 0 }, { -1, 0 }, { KCOLL_MAX_RANKS + 1, 0 },
		{ 4, 4 }, { 1, 1 },
	};
	struct kcoll_sockaddr *table = NULL;
	struct kcoll_uid_info info = { .comm_id = 42 };
	struct kcoll_unique_id id;
	struct kcoll_comm_opts small = { .sz = 2 };
	KCOLL_OPTS(kcoll_comm_opts, opts, .bootstrap_timeout_ms = 10000);
	uint64_t comm_id;
	int64_t start = now_ms();
	size_t i;

	clear_env();
	info.root.family = AF_INET;
	info.root.port = free_port();
	info.root.addr[0] = 127;
	info.root.addr[3] = 1;
	ASSERT_EQ(0, kcoll_uid_encode(&info, &id));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, bad[i][0], bad[i][1], &opts,
							&comm_id, NULL, &table)) {
			TH_LOG("nranks %d rank %d", bad[i][0], bad[i][1]);
		}
		EXPECT_NE(0, strlen(kcoll_last_error()));
	}
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 2, 3, &opts, &comm_id, NULL, &table));
	EXPECT_STREQ("rank 3 is not between 0 and 1", kcoll_last_error());
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 5000, 0, &opts, &comm_id, NULL, &table));
	EXPECT_STREQ("nranks 5000 is not between 1 and 4096", kcoll_last_error());
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(NULL, 2, 0, &opts, &comm_id, NULL, &table));
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 2, 0, &small, &comm_id, NULL, &table));
	opts.flags = 1;
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 2, 0, &opts, &comm_id, NULL, &table));
	opts.flags = 0;
	opts.addr = "not-an-ip";
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 2, 0, &opts, &comm_id, NULL, &table));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "not-an-ip"));
	opts.addr = NULL;
	opts.port = 70000;
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 2, 0, &opts, &comm_id, NULL, &table));
	opts.port = 0;
	setenv("KCOLL_ADDR", "10.0.0.300", 1);
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 2, 0, &opts, &comm_id, NULL, &table));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_ADDR"));
	unsetenv("KCOLL_ADDR");
	setenv("KCOLL_IFNAME", "kcollnosuch0", 1);
	EXPECT_EQ(-ENODEV, kcoll_bootstrap_rank(&id, 2, 0, &opts, &comm_id, NULL, &table));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "kcollnosuch0"));
	unsetenv("KCOLL_IFNAME");
	setenv("KCOLL_PORT", "65536", 1);
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 2, 0, &opts, &comm_id, NULL, &table));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_PORT"));
	unsetenv("KCOLL_PORT");
	setenv("KCOLL_BOOTSTRAP_TIMEOUT_MS", "0", 1);
	opts.bootstrap_timeout_ms = 0;
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_rank(&id, 2, 0, &opts, &comm_id, NULL, &table));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_BOOTSTRAP_TIMEOUT_MS"));
	unsetenv("KCOLL_BOOTSTRAP_TIMEOUT_MS");
	EXPECT_EQ(NULL, table);
	EXPECT_GT(5000, now_ms() - start);
}

/* The advertised address: KCOLL_ADDR, then the interface, then the connection's. */
TEST(advertised_address)
{
	struct rank_result *res = shared_results(1);
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;

	ASSERT_NE(NULL, res);
	clear_env();
	setenv("KCOLL_IFNAME", "lo", 1);
	setenv("KCOLL_PORT", "4791", 1);
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
	run_uid_rank(&id, 1, 0, NULL, res);
	ASSERT_EQ(0, res->err) {
		TH_LOG("%s", res->msg);
	}
	EXPECT_EQ(AF_INET, res->table[0].family);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), *(uint32_t *)res->table[0].addr);
	EXPECT_EQ(4791, res->table[0].port);

	/* KCOLL_ADDR wins over the interface; the option over both. */
	setenv("KCOLL_ADDR", "127.0.0.9", 1);
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
	run_uid_rank(&id, 1, 0, NULL, res);
	ASSERT_EQ(0, res->err);
	EXPECT_EQ(9, res->table[0].addr[3]);
	{
		KCOLL_OPTS(kcoll_comm_opts, opts, .addr = "127.0.0.10", .port = 7);

		ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
		run_uid_rank(&id, 1, 0, &opts, res);
		ASSERT_EQ(0, res->err);
		EXPECT_EQ(10, res->table[0].addr[3]);
		EXPECT_EQ(7, res->table[0].port);
	}
	clear_env();
	munmap(res, sizeof(*res));
}

/* last_error is per thread. */
static void *other_thread(void *arg)
{
	struct kcoll_sockaddr *table;
	uint64_t comm_id;

	*(int *)arg = kcoll_bootstrap_rank(NULL, 0, 0, NULL, &comm_id, NULL, &table);
	return (void *)kcoll_last_error();
}

TEST(last_error_is_thread_local)
{
	pthread_t t;
	void *msg;
	int err = 0;
	struct kcoll_unique_id id;

	memset(&id, 0, sizeof(id));
	EXPECT_EQ(-EINVAL, kcoll_uid_decode(&id, &(struct kcoll_uid_info){ 0 }));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "bad magic"));
	ASSERT_EQ(0, pthread_create(&t, NULL, other_thread, &err));
	ASSERT_EQ(0, pthread_join(t, &msg));
	EXPECT_EQ(-EINVAL, err);
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "bad magic"));
}

TEST_HARNESS_MAIN
