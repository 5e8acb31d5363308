// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkcoll communicator creation against a fake kernel (comm_fake.c): its errors and their
 * messages (naming the failed rank's host), the transport option and connect timeout reaching
 * COMM_CREATE, kcoll_comm_init_env() for one rank, and the exported symbol set of
 * libkcoll.so.0 for the communicator API (KCOLL_0.2).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comm_fake.h"

#include "kselftest_harness.h"

#ifndef LIBKCOLL_SO_PATH
#error "LIBKCOLL_SO_PATH must name the libkcoll.so.0 of this tree"
#endif

TEST(create_errors)
{
	static const struct {
		const char *transport, *want, *not;
	} eaddr[] = {
		{ NULL, "is neither on an RDMA device kcoll may use nor, for TCP, a non-loopback "
		  "address of this network namespace", NULL },
		{ "auto", "is neither on an RDMA device kcoll may use nor, for TCP", NULL },
		{ "rdma", "is not on an RDMA device kcoll may use (transport rdma;", "TCP" },
		{ "tcp", "is not a non-loopback address of this network namespace (transport tcp;",
		  "RDMA" },
	};
	struct kcoll_handle *h;
	struct kcoll_comm *c = (void *)1;
	char path[64];
	size_t i;

	ASSERT_EQ(0, fake_open(path, &h));
	fk.fail = EADDRNOTAVAIL;
	EXPECT_EQ(-EADDRNOTAVAIL, one_rank(h, NULL, &c, NULL));
	EXPECT_EQ(NULL, c);
	EXPECT_EQ(0, fk.create.timeout_ms);
	/* The EADDRNOTAVAIL message names what the transport asked for needs. */
	for (i = 0; i < sizeof(eaddr) / sizeof(eaddr[0]); i++) {
		KCOLL_OPTS(kcoll_comm_opts, o, .transport = eaddr[i].transport);

		fk.fail = EADDRNOTAVAIL;
		EXPECT_EQ(-EADDRNOTAVAIL, one_rank(h, &o, &c, NULL));
		EXPECT_NE(NULL, strstr(kcoll_last_error(), eaddr[i].want)) {
			TH_LOG("%s: %s", eaddr[i].transport ?: "(none)", kcoll_last_error());
		}
		if (eaddr[i].not)
			EXPECT_EQ(NULL, strstr(kcoll_last_error(), eaddr[i].not)) {
				TH_LOG("%s: %s", eaddr[i].transport, kcoll_last_error());
			}
	}
	/* Not the device at all: the real ioctl on a regular file. */
	fk.fd = -1;
	EXPECT_EQ(-ENOTTY, one_rank(h, NULL, &c, NULL));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "not a kcoll device"));
	EXPECT_EQ(0, kcoll_bootstrap_root_count());
	kcoll_close(h);
	unlink(path);
}

/* kcoll_comm_opts.transport reaches COMM_CREATE's flags through the whole init path. */
TEST(transport_option_flags)
{
	static const struct {
		const char *transport;
		uint32_t flags;
	} t[] = {
		{ NULL, 0 }, { "auto", 0 }, { "rdma", KCOLL_COMM_TRANSPORT_RDMA },
		{ "tcp", KCOLL_COMM_TRANSPORT_TCP },
	};
	struct kcoll_handle *h;
	struct kcoll_comm *c;
	char path[64];
	size_t i;

	ASSERT_EQ(0, fake_open(path, &h));
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		KCOLL_OPTS(kcoll_comm_opts, o, .transport = t[i].transport);

		c = NULL;
		EXPECT_EQ(0, one_rank(h, &o, &c, NULL)) {
			TH_LOG("%s: %s", t[i].transport ?: "(none)", kcoll_last_error());
		}
		EXPECT_EQ(t[i].flags, fk.create.flags);
		if (c)
			kcoll_comm_destroy(c);
	}
	EXPECT_EQ(0, kcoll_bootstrap_root_count());
	kcoll_close(h);
	unlink(path);
}

/* Two ranks; this one's create fails naming rank 1, whose host is in the message. */
TEST(create_error_names_failed_rank)
{
	KCOLL_OPTS(kcoll_uid_opts, uo, .addr = "127.0.0.1", .timeout_ms = 10000);
	KCOLL_OPTS(kcoll_comm_opts, opts, .connect_timeout_ms = 300);
	struct kcoll_handle *h;
	struct kcoll_comm *c = NULL;
	struct kcoll_unique_id id;
	char path[64];
	pid_t pid;
	int st;

	ASSERT_EQ(0, fake_open(path, &h));
	ASSERT_EQ(0, kcoll_get_unique_id(&id, &uo));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		KCOLL_OPTS(kcoll_comm_opts, o1, .addr = "127.0.0.2", .port = 4791);
		struct kcoll_sockaddr *table = NULL;
		uint64_t comm_id;
		int err = kcoll_bootstrap_rank(&id, 2, 1, &o1, &comm_id, NULL, &table);

		free(table);
		_exit(err ? 1 : 0);
	}
	fk.fail = ETIMEDOUT;
	fk.failed_rank = 1;
	EXPECT_EQ(-ETIMEDOUT, kcoll_comm_init_rank(h, &id, 2, 0, &opts, &c));
	EXPECT_STREQ("KCOLL_IOC_COMM_CREATE: rank 0 of 2: rank 1 at 127.0.0.2:4791 did not "
		     "connect within 300 ms", kcoll_last_error());
	EXPECT_EQ(NULL, c);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, st);
	kcoll_close(h);
	unlink(path);
}

TEST(connect_timeout_from_env)
{
	struct kcoll_handle *h;
	struct kcoll_comm *c = NULL;
	struct kcoll_unique_id id;
	char path[64];

	ASSERT_EQ(0, fake_open(path, &h));
	setenv("KCOLL_CONNECT_TIMEOUT_MS", "777", 1);
	ASSERT_EQ(0, one_rank(h, NULL, &c, NULL));
	EXPECT_EQ(777, fk.create.timeout_ms);
	kcoll_comm_destroy(c);
	/* Malformed: refused before the network (this id has no root) and the kernel. */
	setenv("KCOLL_CONNECT_TIMEOUT_MS", "1s", 1);
	memset(&id, 0, sizeof(id));
	fk.calls = 0;
	EXPECT_EQ(-EINVAL, kcoll_comm_init_rank(h, &id, 1, 0, NULL, &c));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_CONNECT_TIMEOUT_MS"));
	EXPECT_EQ(NULL, c);
	EXPECT_EQ(0, fk.calls);
	unsetenv("KCOLL_CONNECT_TIMEOUT_MS");
	EXPECT_EQ(-EINVAL, kcoll_comm_init_rank(NULL, &id, 1, 0, NULL, &c));
	EXPECT_EQ(-EINVAL, kcoll_comm_init_rank(h, &id, 1, 0, NULL, NULL));
	kcoll_close(h);
	unlink(path);
}

TEST(init_env_one_rank)
{
	struct kcoll_handle *h;
	struct kcoll_comm *c = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	char path[64], port[16];
	int s;

	ASSERT_EQ(0, fake_open(path, &h));
	EXPECT_EQ(-EINVAL, kcoll_comm_init_env(h, NULL, &c));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "no rank in the environment"));

	/* A port that is free now, for the root to listen on. */
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_EQ(0, bind(s, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_EQ(0, getsockname(s, (struct sockaddr *)&sin, &len));
	close(s);
	snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));
	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
	setenv("KCOLL_BOOTSTRAP_PORT", port, 1);
	setenv("KCOLL_ADDR", "127.0.0.5", 1);
	ASSERT_EQ(0, kcoll_comm_init_env(h, NULL, &c)) {
		TH_LOG("%s", kcoll_last_error());
	}
	EXPECT_EQ(0, fk.create.rank);
	EXPECT_EQ(1, fk.create.nranks);
	EXPECT_NE(0, fk.create.comm_id);
	EXPECT_EQ(5, fk.peers[0].addr[3]);
	EXPECT_EQ(0, kcoll_comm_rank(c));
	EXPECT_EQ(1, kcoll_comm_size(c));
	EXPECT_EQ(0, kcoll_bootstrap_root_count());
	kcoll_comm_destroy(c);
	clear_env();
	kcoll_close(h);
	unlink(path);
}

static const char *const kcoll_exports_0_2[] = {
	"kcoll_buf_create", "kcoll_buf_destroy", "kcoll_buf_len", "kcoll_buf_ptr",
	"kcoll_comm_abort", "kcoll_comm_destroy", "kcoll_comm_init_env",
	"kcoll_comm_init_rank", "kcoll_comm_query", "kcoll_comm_rank", "kcoll_comm_size",
	"kcoll_get_unique_id", "kcoll_irecv", "kcoll_irecv_buf", "kcoll_isend",
	"kcoll_isend_buf", "kcoll_last_error", "kcoll_recv", "kcoll_recv_buf", "kcoll_send",
	"kcoll_send_buf", "kcoll_test", "kcoll_wait",
};

static const char *const kcoll_internals[] = {
	"kcoll_bootstrap_rank", "kcoll_bootstrap_env", "kcoll_bootstrap_root_join",
	"kcoll_bootstrap_root_count", "kcoll_env_parse", "kcoll_env_ulong", "kcoll_uid_encode",
	"kcoll_uid_decode", "kcoll_sockaddr_str", "kcoll_set_error", "kcoll_clear_error",
	"kcoll_fail", "kcoll_opts_validate",
};

TEST(shared_object_exports_0_2)
{
	void *so = dlopen(LIBKCOLL_SO_PATH, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	ASSERT_NE(NULL, so) {
		TH_LOG("dlopen %s: %s", LIBKCOLL_SO_PATH, dlerror());
	}
	for (i = 0; i < sizeof(kcoll_exports_0_2) / sizeof(kcoll_exports_0_2[0]); i++) {
		EXPECT_NE(NULL, dlvsym(so, kcoll_exports_0_2[i], "KCOLL_0.2")) {
			TH_LOG("%s@KCOLL_0.2 missing", kcoll_exports_0_2[i]);
		}
		EXPECT_EQ(NULL, dlvsym(so, kcoll_exports_0_2[i], "KCOLL_0.1")) {
			TH_LOG("%s is in the released node KCOLL_0.1", kcoll_exports_0_2[i]);
		}
	}
	EXPECT_NE(NULL, dlvsym(so, "kcoll_open", "KCOLL_0.1"));
	for (i = 0; i < sizeof(kcoll_internals) / sizeof(kcoll_internals[0]); i++) {
		EXPECT_EQ(NULL, dlsym(so, kcoll_internals[i])) {
			TH_LOG("%s is exported", kcoll_internals[i]);
		}
	}
	dlclose(so);
}

TEST_HARNESS_MAIN
