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
 * table: an impostor on another address that speaks a valid hello is rejected.  From the
 * right address, only a peer holding the communicator's secret gets in (finding 8): a hello
 * with a wrong MAC is refused with KCOLL_REJ_AUTH (a kernel rank: -EACCES) and does not
 * block the real rank; a userspace peer computing the MAC with selftests/lib/kcoll_siphash.h
 * is accepted and verifies the listener's own MAC; no dump shows the secret.
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
#include "../lib/kcoll_siphash.h"

#define RXE	"kcoll_ls0"
#define SYSMOD	"/sys/module/kcoll/parameters/"
/* transport/rdma_listen.c: KCOLL_LISTEN_LINGER_MS, how long an unused listener used to stay */
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
TEST_F_TIMEOUT(port, new_port_held_at_once, 180)
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
 * An impostor, as nobody: connect to @ip's kcoll port with a well-formed hello for (@id,
 * rank @src of 2, to rank 0), its MAC under @secret (NULL: all zero).  Exit status: 0
 * rejected for @reason, 1 accepted with an accept MAC that proves @secret, 2 anything else.
 */
static int impostor(const char *ip, unsigned int port, uint64_t id, uint32_t src,
		    const unsigned char *secret, int reason)
{
	static const unsigned char none[KCOLL_SECRET_LEN];
	const struct kcoll_wire_accept *acc;
	struct kcoll_wire_hello h = {
		.magic = htonl(KCOLL_WIRE_MAGIC),
		.version = (uint8_t)kt_read_long(SYSMOD "proto_version", -1),
		.comm_id = htobe64(id),
		.src_rank = htonl(src),
		.dst_rank = htonl(0),
		.nranks = htonl(2),
	};
	uint64_t mac = kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_HELLO, secret ? secret : none);
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

	h.mac = htobe64(mac);
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
	acc = ev->param.conn.private_data;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
		ret = acc && ev->param.conn.private_data_len >= sizeof(*acc) &&
		      be64toh(acc->mac) == kcoll_wire_mac_user(&h, KCOLL_WIRE_TAG_ACCEPT,
							       secret ? secret : none) ? 1 : 2;
	else if (ev->event == RDMA_CM_EVENT_REJECTED && rej &&
		 ev->param.conn.private_data_len >= sizeof(*rej) &&
		 rej->reason == reason)
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
	bool here;		/* rank 1 is on this node too (else at 169.254.77.9) */
	unsigned int timeout_ms;
	int (*ready)(struct create_arg *a);	/* runs while the comm is up */
	int ready_ret;
};

/* Rank 0 of 2; rank 1's table address is 169.254.77.9, which nobody here has. */
static void *create_rank0(void *p)
{
	struct create_arg *a = p;
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(a->here ? 0 : 8) };
	uint32_t h;

	a->ret = kt_comm_create(a->fd, a->id, 0, 2, peers, a->timeout_ms ? : 8000, &h, NULL);
	if (!a->ret && a->ready)
		a->ready_ret = a->ready(a);
	if (!a->ret)
		kt_comm_destroy(a->fd, h);
	return NULL;
}

/* Start create_rank0() in @th and wait for its comm to show in sysfs. */
static int start_rank0(struct create_arg *a, pthread_t *th)
{
	char dir[128];
	int i;

	a->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (a->fd < 0 || pthread_create(th, NULL, create_rank0, a))
		return -1;
	snprintf(dir, sizeof(dir), "/sys/kernel/kcoll/comms/%016llx-0",
		 (unsigned long long)a->id);
	for (i = 0; i < 200 && access(dir, F_OK); i++)
		usleep(50 * 1000);
	return access(dir, F_OK);
}

/* Run impostor() in a child; its exit status, or -1. */
static int run_impostor(unsigned int port, uint64_t id, const unsigned char *secret,
			int reason)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(impostor("169.254.77.1", port, id, 1, secret, reason));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * How long rank 0 waits for the impostor: a userspace rdma_cm client took more than the
 * old 8 s to connect on the debug kernel under load, and found no comm (NOT_YET).
 */
#define IMPOSTOR_WAIT_MS	30000

/* A valid hello for rank 1 from rank 0's own address, not rank 1's: rejected. */
TEST_F_TIMEOUT(port, impostor_from_another_address_rejected, 120)
{
	struct create_arg a = { .id = kt_comm_id(_metadata->name, getpid()),
				.timeout_ms = IMPOSTOR_WAIT_MS };
	unsigned char secret[KCOLL_SECRET_LEN];
	pthread_t th;
	int ret;

	/* Even with the secret: the address is checked first. */
	kt_comm_secret(a.id, secret);
	ASSERT_EQ(0, start_rank0(&a, &th)) TH_LOG("the comm never showed up");
	ret = run_impostor(self->port, a.id, secret, KCOLL_REJ_MISMATCH);
	EXPECT_EQ(0, ret) TH_LOG("the impostor was %s", ret == 1 ? "accepted" :
				 "neither accepted nor rejected as a mismatch");
	pthread_join(th, NULL);
	EXPECT_NE(0, a.ret);
	close(a.fd);
}

/* Does @path (a whole file) hold @secret in any form a dump could print it in? */
static bool holds_secret(const char *path, const unsigned char *secret)
{
	uint64_t k0 = kcoll_sip_le64(secret), k1 = kcoll_sip_le64(secret + 8);
	char forms[6][40], *buf = NULL;
	size_t len = 0, n;
	bool found = false;
	FILE *f = fopen(path, "r");
	int i;

	if (!f)
		return true;
	buf = malloc(1 << 22);
	if (buf)
		len = fread(buf, 1, (1 << 22) - 1, f);
	fclose(f);
	if (!buf)
		return true;
	buf[len] = '\0';
	for (i = 0; i < 16; i++)
		sprintf(forms[0] + 2 * i, "%02x", secret[i]);
	snprintf(forms[1], sizeof(forms[1]), "%llx", (unsigned long long)k0);
	snprintf(forms[2], sizeof(forms[2]), "%llx", (unsigned long long)k1);
	snprintf(forms[3], sizeof(forms[3]), "%llu", (unsigned long long)k0);
	snprintf(forms[4], sizeof(forms[4]), "%llu", (unsigned long long)k1);
	snprintf(forms[5], sizeof(forms[5]), "%llx", (unsigned long long)be64toh(k0));
	for (i = 0; i < 6 && !found; i++)
		found = strcasestr(buf, forms[i]) != NULL;
	for (n = 0; !found && n + 8 <= len; n++)
		found = !memcmp(buf + n, secret, 8) || !memcmp(buf + n, secret + 8, 8);
	free(buf);
	return found;
}

/* While both ranks are up: nothing in sysfs, netlink (kcollctl) or the log shows the secret. */
static int dump_has_no_secret(struct create_arg *a)
{
	unsigned char secret[KCOLL_SECRET_LEN];
	const char *out = "/tmp/kcoll_listen_dump.txt";
	char cmd[512];

	kt_comm_secret(a->id, secret);
	snprintf(cmd, sizeof(cmd),
		 "{ for f in /sys/kernel/kcoll/comms/%016llx-*/* /sys/kernel/kcoll/comms/*/*; do "
		 "cat $f; done; tools/kcollctl/kcollctl -j comm show %016llx && "
		 "tools/kcollctl/kcollctl comm show && dmesg; } >%s 2>&1",
		 (unsigned long long)a->id, (unsigned long long)a->id, out);
	if (kt_sh(cmd))
		return -1;
	/* The dump did catch this comm (netlink shows its peers' ranks and addresses). */
	snprintf(cmd, sizeof(cmd), "grep -q '%016llx' %s", (unsigned long long)a->id, out);
	if (kt_sh(cmd))
		return -1;
	return holds_secret(out, secret) ? 1 : 0;
}

/*
 * From rank 1's own address, without the secret: refused with KCOLL_REJ_AUTH.  Both a
 * userspace peer (no MAC, a wrong one) and a kernel rank 1 with a wrong secret, which fails
 * with -EACCES; then the real rank 1 joins: the refusals left nothing behind.
 */
TEST_F_TIMEOUT(port, wrong_secret_rejected, 120)
{
	struct create_arg a = { .id = kt_comm_id(_metadata->name, getpid()), .here = true,
				.timeout_ms = 60000, .ready = dump_has_no_secret };
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(0) };
	unsigned char secret[KCOLL_SECRET_LEN], wrong[KCOLL_SECRET_LEN];
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC), ret;
	pthread_t th;
	uint32_t h;

	ASSERT_LE(0, fd);
	kt_comm_secret(a.id, secret);
	memcpy(wrong, secret, sizeof(wrong));
	wrong[15] ^= 1;
	ASSERT_EQ(0, start_rank0(&a, &th)) TH_LOG("the comm never showed up");
	ret = run_impostor(self->port, a.id, NULL, KCOLL_REJ_AUTH);
	EXPECT_EQ(0, ret) TH_LOG("no MAC: %s", ret == 1 ? "accepted" : "not refused for auth");
	ret = run_impostor(self->port, a.id, wrong, KCOLL_REJ_AUTH);
	EXPECT_EQ(0, ret) TH_LOG("wrong MAC: %s", ret == 1 ? "accepted" : "not refused for auth");
	EXPECT_EQ(-EACCES, kt_comm_create_secret(fd, a.id, wrong, 1, 2, peers, 20000, &h, NULL));
	EXPECT_EQ(0, kt_comm_create(fd, a.id, 1, 2, peers, 20000, &h, NULL));
	pthread_join(th, NULL);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(0, a.ready_ret) TH_LOG("%s", a.ready_ret > 0 ? "a dump shows the secret" :
					 "dumping failed");
	kt_comm_destroy(fd, h);
	close(fd);
	close(a.fd);
}

/*
 * A userspace peer with the secret gets in and checks the listener's MAC: the kernel and
 * selftests/lib/kcoll_siphash.h agree on every byte of the handshake.
 */
TEST_F_TIMEOUT(port, userspace_mac_accepted, 120)
{
	struct create_arg a = { .id = kt_comm_id(_metadata->name, getpid()), .here = true,
				.timeout_ms = IMPOSTOR_WAIT_MS };
	unsigned char secret[KCOLL_SECRET_LEN];
	pthread_t th;
	int ret;

	kt_comm_secret(a.id, secret);
	ASSERT_EQ(0, start_rank0(&a, &th)) TH_LOG("the comm never showed up");
	ret = run_impostor(self->port, a.id, secret, -1);
	EXPECT_EQ(1, ret) TH_LOG("%s", ret == 0 || ret == 2 ?
				 "refused, or accepted without proving the secret" : "failed");
	/* The peer left without a word: rank 0 fails or times out, either is fine. */
	pthread_join(th, NULL);
	close(a.fd);
}

/* require_secret=1 refuses a communicator without a secret, and only that. */
TEST(require_secret)
{
	struct kcoll_sockaddr self_addr = kt_addr(0);
	unsigned char secret[KCOLL_SECRET_LEN];
	uint64_t id = kt_comm_id(_metadata->name, getpid());
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	uint32_t h;

	ASSERT_LE(0, fd);
	kt_comm_secret(id, secret);
	ASSERT_EQ(0, kt_sh("echo 1 > " SYSMOD "require_secret"));
	EXPECT_EQ(-EACCES, kt_comm_create_secret(fd, id, NULL, 0, 1, &self_addr, 1000, &h,
						 NULL));
	EXPECT_EQ(0, kt_comm_create_secret(fd, id, secret, 0, 1, &self_addr, 1000, &h, NULL));
	EXPECT_EQ(0, kt_comm_destroy(fd, h));
	ASSERT_EQ(0, kt_sh("echo 0 > " SYSMOD "require_secret"));
	EXPECT_EQ(0, kt_comm_create_secret(fd, id, NULL, 0, 1, &self_addr, 1000, &h, NULL));
	EXPECT_EQ(0, kt_comm_destroy(fd, h));
	close(fd);
}

TEST_HARNESS_MAIN
