// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkcoll bootstrap without a kernel module, the TCP rendezvous of a unique id
 * (lib/boot_server.c, lib/boot_io.c) with ranks as forked processes: 1 to 16 ranks over IPv4
 * and IPv6, and its failures and their messages (root absent, ranks missing, duplicate ranks,
 * nranks disagreeing, a finished root reaped).
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

/* The rendezvous ------------------------------------------------------------------------- */

/*
 * @n ranks as child processes (the test process itself as rank 0 when @self0); with
 * @distinct every rank advertises its own address, so the table can be checked entry by
 * entry.
 */
static void rendezvous(struct __test_metadata *_metadata, int n, bool distinct, bool self0)
{
	struct rank_result *res = shared_results(n);
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	pid_t pids[MAXR] = { 0 };
	char msg[KCOLL_ERRMSG_MAX];
	int r, q;

	ASSERT_NE(NULL, res);
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 20000, &info));
	for (r = self0 ? 1 : 0; r < n; r++) {
		pids[r] = spawn_uid_rank(&id, n, r, 20000, distinct, &res[r]);
		ASSERT_LT(0, pids[r]);
	}
	if (self0) {
		KCOLL_OPTS(kcoll_comm_opts, opts, .bootstrap_timeout_ms = 20000);

		if (distinct) {
			opts.addr = "127.0.0.1";
			opts.port = 1000;
		}
		run_uid_rank(&id, n, 0, &opts, &res[0]);
		/* The root of this process was joined by its rank's init. */
		EXPECT_EQ(0, kcoll_bootstrap_root_count());
	}
	EXPECT_EQ(0, wait_all(pids, n));
	for (r = 0; r < n; r++) {
		ASSERT_TRUE(res[r].done);
		EXPECT_EQ(0, res[r].err) {
			TH_LOG("rank %d: %s", r, res[r].msg);
		}
		EXPECT_EQ(info.comm_id, res[r].comm_id);
		/* The id's secret, which the rendezvous never carried (its table has zeros). */
		EXPECT_EQ(0, memcmp(info.secret, res[r].secret, KCOLL_SECRET_LEN));
		for (q = 0; q < n; q++) {
			const struct kcoll_sockaddr *a = &res[r].table[q];

			EXPECT_EQ(AF_INET, a->family);
			EXPECT_EQ(0, a->scope_id);
			EXPECT_EQ(127, a->addr[0]);
			EXPECT_EQ(distinct ? q + 1 : 1, a->addr[3]);
			EXPECT_EQ(distinct ? 1000 + q : 0, a->port);
		}
	}
	EXPECT_TRUE(all_same_table(res, n));
	if (!self0)
		EXPECT_EQ(0, kcoll_bootstrap_root_join(info.comm_id, false, msg, sizeof(msg)));
	munmap(res, n * sizeof(*res));
}

TEST(rendezvous_1)
{
	rendezvous(_metadata, 1, false, true);
}

TEST(rendezvous_2)
{
	clear_env();
	rendezvous(_metadata, 2, false, false);
}

TEST(rendezvous_4)
{
	rendezvous(_metadata, 4, true, true);
}

TEST(rendezvous_16)
{
	rendezvous(_metadata, 16, true, false);
}

TEST(rendezvous_ipv6)
{
	struct rank_result *res = shared_results(2);
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	pid_t pids[2];
	int r, err;

	ASSERT_NE(NULL, res);
	err = get_uid(&id, "::1", 10000, &info);
	if (err == -EADDRNOTAVAIL || err == -EAFNOSUPPORT)
		SKIP(return, "no IPv6 loopback: %s", kcoll_last_error());
	ASSERT_EQ(0, err);
	EXPECT_EQ(AF_INET6, info.root.family);
	for (r = 0; r < 2; r++)
		pids[r] = spawn_uid_rank(&id, 2, r, 10000, false, &res[r]);
	EXPECT_EQ(0, wait_all(pids, 2));
	for (r = 0; r < 2; r++) {
		EXPECT_EQ(0, res[r].err) {
			TH_LOG("rank %d: %s", r, res[r].msg);
		}
		EXPECT_EQ(AF_INET6, res[r].table[r].family);
		EXPECT_EQ(1, res[r].table[r].addr[15]);
	}
	EXPECT_TRUE(all_same_table(res, 2));
	EXPECT_EQ(0, kcoll_bootstrap_root_join(info.comm_id, false, NULL, 0));
}

/* Failures -------------------------------------------------------------------------------- */

TEST(root_absent)
{
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	struct kcoll_sockaddr *table = NULL;
	KCOLL_OPTS(kcoll_comm_opts, opts, .bootstrap_timeout_ms = 300);
	char want[64];
	uint64_t comm_id;
	int64_t start, took;

	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
	EXPECT_EQ(-ECANCELED, kcoll_bootstrap_root_join(info.comm_id, true, NULL, 0));
	start = now_ms();
	EXPECT_EQ(-ETIMEDOUT, kcoll_bootstrap_rank(&id, 2, 1, &opts, &comm_id, NULL, &table));
	took = now_ms() - start;
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_EQ(NULL, table);
	EXPECT_LE(300, took);
	EXPECT_GT(5000, took);
	snprintf(want, sizeof(want), "bootstrap root at 127.0.0.1:%u within 300 ms",
		 info.root.port);
	EXPECT_NE(NULL, strstr(kcoll_last_error(), want)) {
		TH_LOG("message: %s", kcoll_last_error());
	}
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "rank 1 cannot reach"));
}

/*
 * Ranks @join of @n join; all of them and the root fail, naming the missing ones.  The ranks
 * are forked first and released together once the id exists, so that the root's clock
 * (from the id, then from the first rank) does not run while processes start.
 */
static void missing(struct __test_metadata *_metadata, int n, const int *join, int njoin,
		    const char *missing_str)
{
	struct rank_result *res = shared_results(njoin + 1);
	struct kcoll_unique_id *id = (struct kcoll_unique_id *)&res[njoin];
	struct kcoll_uid_info info;
	char want[256], msg[KCOLL_ERRMSG_MAX];
	pid_t pids[MAXR];
	int i, gate[2];

	ASSERT_NE(NULL, res);
	ASSERT_EQ(0, pipe(gate));
	for (i = 0; i < njoin; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			KCOLL_OPTS(kcoll_comm_opts, opts, .bootstrap_timeout_ms = 2000);
			char c;

			close(gate[1]);
			if (read(gate[0], &c, 1) != 0)
				_exit(1);
			run_uid_rank(id, n, join[i], &opts, &res[i]);
			_exit(0);
		}
	}
	close(gate[0]);
	ASSERT_EQ(0, get_uid(id, LOOPBACK, 2000, &info));
	close(gate[1]);		/* go */
	EXPECT_EQ(0, wait_all(pids, njoin));
	snprintf(want, sizeof(want), "%s of %d never joined the rendezvous at 127.0.0.1:%u "
		 "within 2000 ms", missing_str, n, info.root.port);
	/* The root's message, not the rank's own timeout ("got no answer"). */
	for (i = 0; i < njoin; i++) {
		EXPECT_EQ(-ETIMEDOUT, res[i].err);
		EXPECT_STREQ(want, res[i].msg);
	}
	EXPECT_EQ(-ETIMEDOUT, kcoll_bootstrap_root_join(info.comm_id, false, msg, sizeof(msg)));
	EXPECT_STREQ(want, msg);
	munmap(res, (njoin + 1) * sizeof(*res));
}

TEST(missing_rank)
{
	static const int join[] = { 0, 1, 2 };

	missing(_metadata, 4, join, 3, "rank 3");
}

TEST(missing_ranks_listed)
{
	static const int join[] = { 0, 2, 7 };

	missing(_metadata, 8, join, 3, "ranks 1,3-6");
}

TEST(missing_pair)
{
	static const int join[] = { 0, 1 };

	missing(_metadata, 4, join, 2, "ranks 2,3");
}

TEST(no_rank_joins)
{
	unsigned char reply[2048];
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	char msg[KCOLL_ERRMSG_MAX];
	int fd, n;

	/*
	 * Connected, hello not sent yet when the root gives up: it is told why, even if the
	 * root thread, starved on a loaded host, had not accepted it yet (the join waits for
	 * the root's deadline; 1 s leaves the connect room on a loaded host).
	 */
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 1000, &info));
	fd = connect_port(info.root.port);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ETIMEDOUT, kcoll_bootstrap_root_join(info.comm_id, false, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, "no rank joined the rendezvous at 127.0.0.1:"));
	n = drain(fd, reply, sizeof(reply));
	close(fd);
	ASSERT_LT(KCOLL_BOOT_HDR_LEN + 8, n);
	EXPECT_EQ(KCOLL_BOOT_ERROR, reply[7]);
	EXPECT_EQ(ETIMEDOUT, get32(reply + KCOLL_BOOT_HDR_LEN));
}

/* A finished root that nobody joins is reaped by the next bootstrap call. */
TEST(finished_root_reaped)
{
	struct kcoll_unique_id id;
	struct kcoll_uid_info info, first;
	int i, fd;

	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 100, &first));
	EXPECT_EQ(1, kcoll_bootstrap_root_count());
	/*
	 * Finished: its thread closes the listening socket as it marks itself done (under the
	 * registry's lock).  Not a fixed sleep: on a loaded host the thread may wake late.
	 */
	for (i = 0; i < 200; i++) {
		fd = connect_port(first.root.port);
		if (fd < 0)
			break;
		close(fd);
		usleep(50 * 1000);
	}
	ASSERT_GT(200, i) TH_LOG("the 100 ms root still listens after 10 s");
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
	EXPECT_EQ(1, kcoll_bootstrap_root_count());
	EXPECT_EQ(-ECANCELED, kcoll_bootstrap_root_join(info.comm_id, true, NULL, 0));
}

TEST(duplicate_rank)
{
	struct rank_result *res = shared_results(2);
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	char msg[KCOLL_ERRMSG_MAX];
	pid_t pids[2];
	int i;

	ASSERT_NE(NULL, res);
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
	pids[0] = spawn_uid_rank(&id, 2, 1, 5000, false, &res[0]);
	pids[1] = spawn_uid_rank(&id, 2, 1, 5000, false, &res[1]);
	EXPECT_EQ(0, wait_all(pids, 2));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(-EINVAL, res[i].err);
		EXPECT_NE(NULL, strstr(res[i].msg, "duplicate rank: rank 1 of 2 joined the "
				       "rendezvous at 127.0.0.1:")) {
			TH_LOG("rank %d: %s", i, res[i].msg);
		}
	}
	EXPECT_STREQ(res[0].msg, res[1].msg);
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_root_join(info.comm_id, false, msg, sizeof(msg)));
	EXPECT_STREQ(res[0].msg, msg);
}

TEST(nranks_mismatch)
{
	struct rank_result *res = shared_results(2);
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	pid_t pids[2];
	int i;

	ASSERT_NE(NULL, res);
	ASSERT_EQ(0, get_uid(&id, LOOPBACK, 5000, &info));
	pids[0] = spawn_uid_rank(&id, 2, 0, 5000, false, &res[0]);
	pids[1] = spawn_uid_rank(&id, 3, 1, 5000, false, &res[1]);
	EXPECT_EQ(0, wait_all(pids, 2));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(-EINVAL, res[i].err);
		EXPECT_NE(NULL, strstr(res[i].msg, "nranks mismatch")) {
			TH_LOG("rank %d: %s", i, res[i].msg);
		}
	}
	EXPECT_EQ(-EINVAL, kcoll_bootstrap_root_join(info.comm_id, false, NULL, 0));
}

TEST_HARNESS_MAIN
