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
 *
 * And the listener takes a connection for rank j only from rank j's address in the peer
 * table: an impostor on another address that speaks a valid hello is rejected.
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

#include <infiniband/verbs.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"
#include "../../kmod/kcoll_wire.h"

#define RXE	"kcoll_ls0"
#define SYSMOD	"/sys/module/kcoll/parameters/"
/* kcoll_listen.c: KCOLL_LISTEN_LINGER_MS, how long an unused listener used to stay */
#define LINGER_S 10

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
	self->port = kt_read_long(SYSMOD "listen_port", -1);
	ASSERT_LT(0, self->port);
	kt_sh("rdma link delete " RXE " 2>/dev/null");
	ASSERT_EQ(0, kt_sh("rdma link add " RXE " type rxe netdev eth0"));
	/* As rdma-core's udev rules leave them: every user may use rdma_cm and verbs. */
	ASSERT_EQ(0, kt_sh("chmod 0666 /dev/infiniband/*"));
}

FIXTURE_TEARDOWN(port)
{
	kt_sh("chmod 0600 /dev/infiniband/*");
	kt_sh("rdma link delete " RXE);
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
	ASSERT_EQ(0, kt_sh(cmd));
	expect_port_held(_metadata, port);
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl config set listen_port %ld",
		 self->port);
	ASSERT_EQ(0, kt_sh(cmd));
	expect_port_held(_metadata, self->port);
}

/*
 * An impostor, as nobody: connect to @ip's kcoll port with a valid hello for (@id, rank
 * @src of 2, to rank 0).  Exit status: 0 rejected as a mismatch, 1 accepted, 2 anything else.
 */
static int impostor(const char *ip, unsigned int port, uint64_t id, uint32_t src)
{
	struct kcoll_wire_hello h = {
		.magic = htonl(KCOLL_WIRE_MAGIC),
		.version = (uint8_t)kt_read_long(SYSMOD "proto_version", -1),
		.comm_id = htobe64(id),
		.src_rank = htonl(src),
		.dst_rank = htonl(0),
		.nranks = htonl(2),
	};
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC, .cap = { 4, 4, 1, 1, 0 } };
	struct rdma_conn_param cp = { .private_data = &h, .private_data_len = sizeof(h),
				      .responder_resources = 1, .initiator_depth = 1,
				      .retry_count = 3, .rnr_retry_count = 3 };
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	const struct kcoll_wire_reject *rej;
	struct rdma_cm_id *cid;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	int ret;

	alarm(30);
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return 2;
	inet_pton(AF_INET, ip, &dst.sin_addr);
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &cid, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(cid, NULL, (struct sockaddr *)&dst, 5000) ||
	    rdma_get_cm_event(ch, &ev) || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_ack_cm_event(ev) || rdma_resolve_route(cid, 5000) ||
	    rdma_get_cm_event(ch, &ev) || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED ||
	    rdma_ack_cm_event(ev))
		return 2;
	pd = ibv_alloc_pd(cid->verbs);
	cq = pd ? ibv_create_cq(cid->verbs, 16, NULL, NULL, 0) : NULL;
	if (!cq)
		return 2;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	if (rdma_create_qp(cid, pd, &qa) || rdma_connect(cid, &cp) || rdma_get_cm_event(ch, &ev))
		return 2;
	rej = ev->param.conn.private_data;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
		ret = 1;
	else if (ev->event == RDMA_CM_EVENT_REJECTED && rej &&
		 ev->param.conn.private_data_len >= sizeof(*rej) &&
		 rej->reason == KCOLL_REJ_MISMATCH)
		ret = 0;
	else
		ret = 2;
	fprintf(stderr, "#   impostor: %s, status %d, reason %d\n", rdma_event_str(ev->event),
		ev->status, rej && ev->param.conn.private_data_len >= sizeof(*rej) ?
		rej->reason : -1);
	rdma_ack_cm_event(ev);
	return ret;
}

struct create_arg {
	int fd;
	uint64_t id;
	int ret;
};

/* Rank 0 of 2; rank 1's table address is 169.254.77.9, which nobody here has. */
static void *create_rank0(void *p)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(8) };
	struct create_arg *a = p;
	uint32_t h;

	a->ret = kt_comm_create(a->fd, a->id, 0, 2, peers, 8000, &h, NULL);
	if (!a->ret)
		kt_comm_destroy(a->fd, h);
	return NULL;
}

/* A valid hello for rank 1 from rank 0's own address, not rank 1's: rejected. */
TEST_F_TIMEOUT(port, impostor_from_another_address_rejected, 60)
{
	struct create_arg a = { .id = kt_comm_id(_metadata->name, getpid()) };
	char dir[128];
	pthread_t th;
	int i, status;
	pid_t pid;

	a.fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, a.fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, create_rank0, &a));
	snprintf(dir, sizeof(dir), "/sys/kernel/kcoll/comms/%016llx-0",
		 (unsigned long long)a.id);
	for (i = 0; i < 100 && access(dir, F_OK); i++)
		usleep(50 * 1000);
	ASSERT_EQ(0, access(dir, F_OK)) TH_LOG("the comm never showed up");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(impostor("169.254.77.1", self->port, a.id, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the impostor was %s",
						 WEXITSTATUS(status) == 1 ? "accepted" :
						 "neither accepted nor rejected as a mismatch");
	pthread_join(th, NULL);
	EXPECT_NE(0, a.ret);
	close(a.fd);
}

TEST_HARNESS_MAIN
