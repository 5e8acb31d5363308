// SPDX-License-Identifier: GPL-2.0
/*
 * The node's rdma_cm port is kcoll's for as long as the module is loaded: an unprivileged
 * program cannot bind it - not before the first communicator, not between jobs, not after a
 * configuration change - and so cannot collect the hellos of peers connecting to this node
 * (Documentation/security.rst, finding 10 of issue 11).  Run in the node suite right after
 * kcoll is loaded (before any communicator), with eth0 up at 169.254.77.1 and rdma_rxe
 * loaded; the test adds its own Soft-RoCE device, kcoll_ls0.
 *
 * "Bind" is rdma_bind_addr() on RDMA_PS_TCP through librdmacm, as user nobody, with
 * /dev/infiniband/ open to everyone (as rdma-core's udev rules leave it), with and without
 * RDMA_OPTION_ID_REUSEADDR: it must fail with EADDRINUSE or EADDRNOTAVAIL (what rdma_cm
 * answers when the port has a wildcard listener).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define RXE	"kcoll_ls0"
#define SYSMOD	"/sys/module/kcoll/parameters/"
/* kcoll_listen.c: KCOLL_LISTEN_LINGER_MS, how long an unused listener used to stay */
#define LINGER_S 10

static int sh(const char *cmd)
{
	int ret = system(cmd);

	return WIFEXITED(ret) ? WEXITSTATUS(ret) : -1;
}

static long read_long(const char *path)
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

/* One bind attempt: as nobody, in a child; 0 if it bound, else the errno. */
static int bind_as_nobody(const char *ip, unsigned int port, bool reuse)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	int status, one = 1;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid) {
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
			return -1;
		return WEXITSTATUS(status);
	}
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(250);
	if (strchr(ip, ':')) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &s6->sin6_addr);
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		inet_pton(AF_INET, ip, &s4->sin_addr);
	}
	ch = rdma_create_event_channel();
	if (!ch)
		_exit(251);
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		_exit(252);
	if (reuse && rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one,
				     sizeof(one)))
		_exit(253);
	if (rdma_bind_addr(id, (struct sockaddr *)&ss))
		_exit(errno);
	_exit(0);
}

static const struct {
	const char *ip;
	bool reuse;
} bind_cases[] = {
	{ "0.0.0.0", false },
	{ "0.0.0.0", true },
	{ "169.254.77.1", false },
	{ "169.254.77.1", true },
	{ "::", false },
	{ "::", true },
};

/* Every bind of @port as nobody fails because kcoll holds the port. */
static void expect_port_held(struct __test_metadata *_metadata, unsigned int port)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(bind_cases); i++) {
		ret = bind_as_nobody(bind_cases[i].ip, port, bind_cases[i].reuse);
		EXPECT_TRUE(ret == EADDRINUSE || ret == EADDRNOTAVAIL)
			TH_LOG("nobody binding %s port %u%s: %s (%d)", bind_cases[i].ip, port,
			       bind_cases[i].reuse ? " with REUSEADDR" : "",
			       ret ? strerror(ret) : "bound", ret);
	}
}

FIXTURE(port) {
	long port;
};

FIXTURE_SETUP(port)
{
	self->port = read_long(SYSMOD "listen_port");
	ASSERT_LT(0, self->port);
	sh("rdma link delete " RXE " 2>/dev/null");
	ASSERT_EQ(0, sh("rdma link add " RXE " type rxe netdev eth0"));
	/* As rdma-core's udev rules leave them: every user may use rdma_cm and verbs. */
	ASSERT_EQ(0, sh("chmod 0666 /dev/infiniband/*"));
}

FIXTURE_TEARDOWN(port)
{
	sh("chmod 0600 /dev/infiniband/*");
	sh("rdma link delete " RXE);
}

/* Loaded, no communicator yet: the port is already kcoll's. */
TEST_F(port, held_from_module_load)
{
	expect_port_held(_metadata, self->port);
}

/* A job's communicator came and went, and the linger is long over: still kcoll's. */
TEST_F_TIMEOUT(port, held_after_last_comm, 60)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(0) };
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC), ret;
	uint32_t h;

	ASSERT_LE(0, fd);
	/* Rank 0 of 2, its peer never comes: it listens, times out, and is gone. */
	ret = kt_comm_create(fd, kt_comm_id(_metadata->name, getpid()), 0, 2, peers, 1000, &h,
			     NULL);
	EXPECT_NE(0, ret) TH_LOG("the create of a lone rank 0 of 2 succeeded");
	if (!ret)
		kt_comm_destroy(fd, h);
	close(fd);
	sleep(LINGER_S + 2);
	expect_port_held(_metadata, self->port);
}

/* The configuration moves the node to another port: that one is kcoll's at once. */
TEST_F(port, new_port_held_at_once)
{
	unsigned int port = self->port == 18611 ? 18612 : 18611;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl config set listen_port %u", port);
	ASSERT_EQ(0, sh(cmd));
	expect_port_held(_metadata, port);
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl config set listen_port %ld",
		 self->port);
	ASSERT_EQ(0, sh(cmd));
	expect_port_held(_metadata, self->port);
}

TEST_HARNESS_MAIN
