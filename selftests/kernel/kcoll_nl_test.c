// SPDX-License-Identifier: GPL-2.0
/*
 * The "kcoll" generic netlink family (Documentation/netlink/specs/kcoll.yaml), run inside a
 * rig VM with kcoll loaded, eth0 up at 169.254.77.1 and rdma_rxe loaded (selftests/suites/
 * node.sh).  The test adds its own Soft-RoCE device, kcoll_nl0.
 *
 * - every command with bad attributes (unknown, unsupported, wrong length, out of range,
 *   missing) is refused with EINVAL and an extended ACK message;
 * - every changing command is refused with EPERM (and a message) from nobody, from root
 *   without CAP_NET_ADMIN and from the root of a user namespace of its own;
 * - a user sees and aborts only its own communicators (netlink, events, sysfs); root all;
 * - devices, configuration and communicators read back as set; kcollctl -j agrees;
 * - the events group reports device add/remove, comm create, a killed peer and destroy;
 * - an admin abort unblocks a rank waiting for a peer that never comes, within a second.
 *
 * The raw messages are built with libmnl here, not with libkcoll, so that malformed ones
 * can be sent.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/kcoll.h>
#include <linux/kcoll_netlink.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define RXE	"kcoll_nl0"
#define SYSMOD	"/sys/module/kcoll/parameters/"

/* ---- a minimal generic netlink client ------------------------------------------------------ */

struct nlt {
	struct mnl_socket *sock;
	uint16_t family;
	uint32_t events;
	uint32_t portid;
	uint32_t seq;
	char ext[256];		/* extack message of the last error */
	char buf[65536];
};

/* What nlt_talk() hands the callbacks: the client, and the caller's data callback. */
struct nlt_ctx {
	struct nlt *t;
	mnl_cb_t cb;
	void *data;
};

static int nlt_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlt_ctx *c = data;

	return c->cb ? c->cb(nlh, c->data) : MNL_CB_OK;
}

static int nlt_err_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct nlt *t = ((struct nlt_ctx *)data)->t;
	const struct nlattr *attr;
	const char *tlv, *end = (const char *)nlh + nlh->nlmsg_len;
	const void *start;
	size_t len;

	if (!e->error)
		return MNL_CB_STOP;
	tlv = (const char *)e + sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		tlv += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && tlv < end) {
		len = end - tlv;
		start = tlv;
		mnl_attr_for_each_payload(start, len) {
			if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG)
				snprintf(t->ext, sizeof(t->ext), "%s", mnl_attr_get_str(attr));
		}
	}
	errno = -e->error;
	return MNL_CB_ERROR;
}

static int nlt_done_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *attr;
	struct nlt *t = ((struct nlt_ctx *)data)->t;
	int err = *(const int *)mnl_nlmsg_get_payload(nlh);
	const char *tlv = (const char *)mnl_nlmsg_get_payload(nlh) + sizeof(int);
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	const void *start = tlv;
	size_t len;

	if (!err)
		return MNL_CB_STOP;
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && tlv < end) {
		len = end - tlv;
		mnl_attr_for_each_payload(start, len) {
			if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG)
				snprintf(t->ext, sizeof(t->ext), "%s", mnl_attr_get_str(attr));
		}
	}
	errno = -err;
	return MNL_CB_ERROR;
}

static struct nlmsghdr *nlt_req(struct nlt *t, uint16_t type, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(t->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++t->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

static struct nlmsghdr *nlt_cmd(struct nlt *t, uint8_t cmd, uint16_t flags)
{
	return nlt_req(t, t->family, cmd, flags);
}

/* Send and read to the end: 0 or -errno (t->ext holds the extack message). */
static int nlt_talk(struct nlt *t, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = { [NLMSG_ERROR] = nlt_err_cb, [NLMSG_DONE] = nlt_done_cb };
	struct nlt_ctx c = { .t = t, .cb = cb, .data = data };
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t n;
	int ret;

	t->ext[0] = '\0';
	if (mnl_socket_sendto(t->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(t->sock, t->buf, sizeof(t->buf));
		if (n < 0)
			return -errno;
		ret = mnl_cb_run2(t->buf, n, seq, t->portid, nlt_data_cb, &c, ctl,
				  NLMSG_MIN_TYPE);
	} while (ret == MNL_CB_OK);
	return ret < 0 ? -errno : 0;
}

static int nlt_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlt *t = data;
	const struct nlattr *a, *g, *m;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			t->family = mnl_attr_get_u16(a);
		if (mnl_attr_get_type(a) != CTRL_ATTR_MCAST_GROUPS)
			continue;
		mnl_attr_for_each_nested(g, a) {
			const char *name = NULL;
			uint32_t id = 0;

			mnl_attr_for_each_nested(m, g) {
				if (mnl_attr_get_type(m) == CTRL_ATTR_MCAST_GRP_NAME)
					name = mnl_attr_get_str(m);
				if (mnl_attr_get_type(m) == CTRL_ATTR_MCAST_GRP_ID)
					id = mnl_attr_get_u32(m);
			}
			if (name && !strcmp(name, KCOLL_MCGRP_EVENTS))
				t->events = id;
		}
	}
	return MNL_CB_OK;
}

static struct nlt *nlt_open(void)
{
	struct nlt *t = calloc(1, sizeof(*t));
	struct nlmsghdr *nlh;
	int one = 1;

	if (!t)
		return NULL;
	t->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!t->sock || mnl_socket_bind(t->sock, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	mnl_socket_setsockopt(t->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(t->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	t->portid = mnl_socket_get_portid(t->sock);
	t->seq = time(NULL);
	nlh = nlt_req(t, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, KCOLL_FAMILY_NAME);
	if (nlt_talk(t, nlh, nlt_family_cb, t) || !t->family)
		goto fail;
	return t;
fail:
	if (t->sock)
		mnl_socket_close(t->sock);
	free(t);
	return NULL;
}

static void nlt_close(struct nlt *t)
{
	if (t) {
		mnl_socket_close(t->sock);
		free(t);
	}
}

/* ---- helpers ----------------------------------------------------------------------------- */

/* The request must fail with EINVAL and say why. */
#define EXPECT_EINVAL_MSG(t, nlh) do {						\
	int __r = nlt_talk((t), (nlh), NULL, NULL);				\
	EXPECT_EQ(-EINVAL, __r) TH_LOG("line %d: got %d (%s)", __LINE__, __r, (t)->ext); \
	EXPECT_NE('\0', (t)->ext[0]) TH_LOG("line %d: no extack message", __LINE__); \
} while (0)

static int comm_create(int fd, uint64_t id, unsigned int rank, unsigned int nranks,
		       unsigned int timeout_ms, uint32_t *handle)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(0) };

	return kt_comm_create(fd, id, rank, nranks, peers, timeout_ms, handle, NULL);
}

/* ---- family, bad attributes ---------------------------------------------------------------- */

FIXTURE(nl) {
	struct nlt *t;
};

FIXTURE_SETUP(nl)
{
	self->t = nlt_open();
	ASSERT_NE(NULL, self->t) TH_LOG("cannot resolve the kcoll family: %s", strerror(errno));
}

FIXTURE_TEARDOWN(nl)
{
	nlt_close(self->t);
}

TEST_F(nl, family_has_events_group)
{
	EXPECT_NE(0, self->t->events);
}

TEST_F(nl, unknown_attribute)
{
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;
	static const uint8_t cmds[] = {
		KCOLL_CMD_DEV_GET, KCOLL_CMD_DEV_SET, KCOLL_CMD_COMM_GET, KCOLL_CMD_COMM_ABORT,
		KCOLL_CMD_CONFIG_GET, KCOLL_CMD_CONFIG_SET, KCOLL_CMD_ENGINE_SET,
	};
	unsigned int i;

	for (i = 0; i < sizeof(cmds); i++) {
		nlh = nlt_cmd(t, cmds[i], 0);
		mnl_attr_put_u32(nlh, 200, 1);	/* beyond every attribute set */
		EXPECT_EINVAL_MSG(t, nlh);
	}
	/* Dumps are validated too. */
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_GET, NLM_F_DUMP);
	mnl_attr_put_u32(nlh, 200, 1);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_COMM_GET, NLM_F_DUMP);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, 1);
	EXPECT_EINVAL_MSG(t, nlh);
}

TEST_F(nl, unsupported_attribute)
{
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;

	/* Attributes of the set that the command does not take. */
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u64(nlh, KCOLL_A_DEV_NODE_GUID, 1);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_COMM_ABORT, 0);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, 1);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_NRANKS, 2);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_GET, 0);
	mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_LISTEN_PORT, 1);
	EXPECT_EINVAL_MSG(t, nlh);
}

TEST_F(nl, wrong_type)
{
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_ALLOWED, 1);		/* u8 */
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_GET, 0);
	mnl_attr_put(nlh, KCOLL_A_DEV_NAME, 3, "abc");		/* no NUL */
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_COMM_ABORT, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_ID, 1);		/* u64 */
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_LISTEN_PORT, 18600);	/* u16 */
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_ALGO, 1);		/* a nest */
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
	mnl_attr_put_u8(nlh, KCOLL_A_ALGO_COLL, 1);		/* u32 in the nest */
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, 1);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EINVAL_MSG(t, nlh);
}

TEST_F(nl, out_of_range)
{
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u8(nlh, KCOLL_A_DEV_ALLOWED, 2);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("allowed must be 0 or 1", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_TOS, 256);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_TOS, (uint32_t)-2);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_COMM_ABORT, 0);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_COMM_GET, 0);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, 1);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, KCOLL_MAX_RANKS);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("rank must be 0 to 4095", t->ext);

	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_LISTEN_PORT, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_OP_TIMEOUT_MS, 99);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("op-timeout-ms must be 100 to 3600000", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS, 3600001);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_TOS, 300);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_CHUNK_BYTES, 2048);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_CHUNK_BYTES, 3 * 4096);	/* not a power of 2 */
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("chunk-bytes must be a power of two", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_TREE_RANKS, 1);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u8(nlh, KCOLL_A_CONFIG_TRANSPORT, KCOLL_CONFIG_TRANSPORT_TCP + 1);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("transport must be 0 (auto), 1 (rdma) or 2 (tcp)", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_TCP_PORT, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("tcp-port must be 1 to 65535", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_SMALL_BYTES, 1 << 20);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_MEDIUM_BYTES, 1 << 19);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("small-bytes must not exceed medium-bytes", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, KCOLL_NUM_COLLECTIVES);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, 0);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, KCOLL_NUM_ALGORITHMS);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_ENGINE_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_ENGINE_NAME, "generic");
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_DTYPE, KCOLL_NUM_DATATYPES);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_OP, 0);
	EXPECT_EINVAL_MSG(t, nlh);
}

TEST_F(nl, missing_attribute)
{
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	nlh = nlt_cmd(t, KCOLL_CMD_DEV_GET, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_u8(nlh, KCOLL_A_DEV_ALLOWED, 1);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);		/* nothing to change */
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_COMM_GET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_COMM_ABORT, 0);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, 1);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("missing rank (rank)", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, 1);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EINVAL_MSG(t, nlh);
	nlh = nlt_cmd(t, KCOLL_CMD_ENGINE_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_ENGINE_NAME, "generic");
	EXPECT_EINVAL_MSG(t, nlh);
}

/* Nothing bad was applied: the configuration is what it was. */
TEST_F(nl, refused_config_changes_nothing)
{
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;
	long before = kt_read_long(SYSMOD "op_timeout_ms", -999);

	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_OP_TIMEOUT_MS, 4321);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_TREE_RANKS, 1);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_EQ(before, kt_read_long(SYSMOD "op_timeout_ms", -999));
}

/*
 * The module parameters are views of the configuration store: a write goes through the
 * same checks as config-set, so a value config-set refuses is refused there too and changes
 * nothing (a timeout of 0 would fail every communicator at once).  tos is clamped, as ever.
 */
TEST_F(nl, module_parameters_obey_the_config_rules)
{
	static const struct {
		const char *param;
		const char *value;
	} bad[] = {
		{ "op_timeout_ms", "0" },
		{ "op_timeout_ms", "99" },
		{ "op_timeout_ms", "3600001" },
		{ "connect_timeout_ms", "0" },
		{ "connect_timeout_ms", "-5" },
		{ "connect_timeout_ms", "4294967296" },
		{ "tos", "many" },
	};
	char cmd[160], path[96];
	unsigned int i;
	long before;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), SYSMOD "%s", bad[i].param);
		before = kt_read_long(path, -999);
		snprintf(cmd, sizeof(cmd), "echo %s > %s 2>/dev/null", bad[i].value, path);
		EXPECT_NE(0, kt_sh(cmd)) TH_LOG("%s=%s accepted", bad[i].param, bad[i].value);
		EXPECT_EQ(before, kt_read_long(path, -999)) TH_LOG("%s", bad[i].param);
		if (kt_read_long(path, -999) != before) {	/* put it back for the next tests */
			snprintf(cmd, sizeof(cmd), "echo %ld > %s", before, path);
			kt_sh(cmd);
		}
	}
	/* Out-of-range tos values are clamped to what connections use, and shown so. */
	EXPECT_EQ(0, kt_sh("echo 1000 > " SYSMOD "tos"));
	EXPECT_EQ(255, kt_read_long(SYSMOD "tos", -999));
	EXPECT_EQ(0, kt_sh("echo -7 > " SYSMOD "tos"));
	EXPECT_EQ(-1, kt_read_long(SYSMOD "tos", -999));
}

/*
 * transport is a name at the module parameter and a number over netlink, one setting: a
 * name that is none of auto, rdma, tcp is refused and changes nothing, a good one shows on
 * both sides.
 */
TEST_F(nl, transport_setting)
{
	static const char *const bad[] = { "", "tcpx", "RDMA", "3", "auto rdma" };
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;
	char cmd[160], v[16];
	unsigned int i;
	FILE *f;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(cmd, sizeof(cmd), "echo '%s' > " SYSMOD "transport 2>/dev/null", bad[i]);
		EXPECT_NE(0, kt_sh(cmd)) TH_LOG("transport='%s' accepted", bad[i]);
	}
	EXPECT_EQ(0, kt_sh("grep -qx auto " SYSMOD "transport"));
	EXPECT_EQ(0, kt_sh("echo tcp > " SYSMOD "transport"));
	EXPECT_EQ(0, kt_sh("grep -qx tcp " SYSMOD "transport"));
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u8(nlh, KCOLL_A_CONFIG_TRANSPORT, KCOLL_CONFIG_TRANSPORT_RDMA);
	EXPECT_EQ(0, nlt_talk(t, nlh, NULL, NULL)) TH_LOG("%s", t->ext);
	f = fopen(SYSMOD "transport", "r");
	ASSERT_NE(NULL, f);
	EXPECT_NE(NULL, fgets(v, sizeof(v), f));
	fclose(f);
	EXPECT_STREQ("rdma\n", v);
	EXPECT_EQ(0, kt_sh("echo auto > " SYSMOD "transport"));
}

/*
 * tcp_port is a setting of the store like listen_port: config-set changes it (0 refused with
 * a message, nothing changed), the read-only module parameter and config-get show it, and
 * kcollctl reads and sets it and the transport by name.
 */
TEST_F(nl, tcp_port_setting)
{
	long old = kt_read_long(SYSMOD "tcp_port", -999);
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;
	char cmd[128];

	ASSERT_LT(0, old);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_TCP_PORT, 18777);
	ASSERT_EQ(0, nlt_talk(t, nlh, NULL, NULL)) TH_LOG("%s", t->ext);
	EXPECT_EQ(18777, kt_read_long(SYSMOD "tcp_port", -999));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl -j config show | "
			   "grep -q '\"tcp_port\":18777'"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl config show | grep -qx 'tcp_port 18777'"));
	/* 0 is refused, at the attribute and by the store, and changes nothing. */
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_TCP_PORT, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("tcp-port must be 1 to 65535", t->ext);
	EXPECT_EQ(18777, kt_read_long(SYSMOD "tcp_port", -999));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl config set tcp_port 0 2>&1 | "
			   "grep -q 'tcp-port must be 1 to 65535'"));
	EXPECT_NE(0, kt_sh("tools/kcollctl/kcollctl config set tcp_port 65536 2>/dev/null"));
	/* Read-only at the module parameter, as listen_port. */
	EXPECT_NE(0, kt_sh("echo 18778 > " SYSMOD "tcp_port 2>/dev/null"));
	EXPECT_EQ(18777, kt_read_long(SYSMOD "tcp_port", -999));
	/* The transport by name through kcollctl; a bad name never reaches the kernel. */
	EXPECT_NE(0, kt_sh("tools/kcollctl/kcollctl config set transport udp 2>/dev/null"));
	EXPECT_EQ(0, kt_sh("grep -qx auto " SYSMOD "transport"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl config set transport tcp"));
	EXPECT_EQ(0, kt_sh("grep -qx tcp " SYSMOD "transport"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl -j config show | "
			   "grep -q '\"transport\":\"tcp\"'"));
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl config set transport auto tcp_port %ld",
		 old);
	EXPECT_EQ(0, kt_sh(cmd));
	EXPECT_EQ(old, kt_read_long(SYSMOD "tcp_port", -999));
}

/* ---- privilege --------------------------------------------------------------------------- */

/*
 * Every command that changes something, with attributes it would accept: only the privilege
 * check may refuse it.  Configuration, devices and engines are the node's: they need
 * CAP_NET_ADMIN in the initial user namespace, which the root of a user namespace of its own
 * does not have.  An abort needs the comm's owner or that capability; comm 1 is nobody's.
 */
static void priv_dev_allowed(struct nlmsghdr *nlh)
{
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u8(nlh, KCOLL_A_DEV_ALLOWED, 0);
}

static void priv_dev_tos(struct nlmsghdr *nlh)
{
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_TOS, 96);
}

/* A GID selection is a device change like any other. */
static void priv_dev_gid(struct nlmsghdr *nlh)
{
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_GID_INDEX, 0);
}

static void priv_config_timeout(struct nlmsghdr *nlh)
{
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_OP_TIMEOUT_MS, 4321);
}

static void priv_config_port(struct nlmsghdr *nlh)
{
	mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_LISTEN_PORT, 18699);
}

static void priv_config_tcp_port(struct nlmsghdr *nlh)
{
	mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_TCP_PORT, 18699);
}

static void priv_config_algo(struct nlmsghdr *nlh)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);

	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, 0);
	mnl_attr_nest_end(nlh, nest);
}

static void priv_engine(struct nlmsghdr *nlh)
{
	mnl_attr_put_strz(nlh, KCOLL_A_ENGINE_NAME, "generic");
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_DTYPE, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_OP, 0);
}

static void priv_comm_abort(struct nlmsghdr *nlh)
{
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, 1);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 0);
}

static const struct priv_case {
	const char *name;
	uint8_t cmd;
	void (*build)(struct nlmsghdr *nlh);
} priv_cases[] = {
	{ "dev-set allowed",	KCOLL_CMD_DEV_SET,	priv_dev_allowed },
	{ "dev-set tos",	KCOLL_CMD_DEV_SET,	priv_dev_tos },
	{ "dev-set gid-index",	KCOLL_CMD_DEV_SET,	priv_dev_gid },
	{ "config-set op-timeout", KCOLL_CMD_CONFIG_SET, priv_config_timeout },
	{ "config-set listen-port", KCOLL_CMD_CONFIG_SET, priv_config_port },
	{ "config-set tcp-port", KCOLL_CMD_CONFIG_SET, priv_config_tcp_port },
	{ "config-set algo",	KCOLL_CMD_CONFIG_SET,	priv_config_algo },
	{ "engine-set",		KCOLL_CMD_ENGINE_SET,	priv_engine },
	{ "comm-abort",		KCOLL_CMD_COMM_ABORT,	priv_comm_abort },
};

enum priv_who { NOBODY, ROOT_NO_NET_ADMIN, ROOT_IN_USERNS, NOBODY_IN_USERNS };

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = -1;

	if (fd >= 0) {
		ret = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
		close(fd);
	}
	return ret;
}

static int become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return -1;
	/* setuid() made us undumpable: /proc/self/uid_map would then be root's. */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* A user namespace of our own (we are its root, with every capability) and a netns in it. */
static int enter_userns(unsigned int outer)
{
	char map[64];

	if (unshare(CLONE_NEWUSER | CLONE_NEWNET))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", outer);
	if (write_file("/proc/self/setgroups", "deny") || write_file("/proc/self/uid_map", map) ||
	    write_file("/proc/self/gid_map", map))
		return -1;
	return 0;
}

/* Root, without CAP_NET_ADMIN anywhere (effective, permitted, inheritable). */
static int drop_net_admin(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1u << CAP_NET_ADMIN);
	d[0].permitted &= ~(1u << CAP_NET_ADMIN);
	d[0].inheritable &= ~(1u << CAP_NET_ADMIN);
	return syscall(SYS_capset, &h, d);
}

static int become(enum priv_who who)
{
	switch (who) {
	case NOBODY:
		return become_nobody();
	case ROOT_NO_NET_ADMIN:
		return drop_net_admin();
	case ROOT_IN_USERNS:
		return enter_userns(0);
	case NOBODY_IN_USERNS:
		return become_nobody() ?: enter_userns(65534);
	}
	return -1;
}

/* In a child: every case as @who; the exit status is the number of cases not refused. */
static int priv_run(enum priv_who who)
{
	struct nlmsghdr *nlh;
	unsigned int i, bad = 0;
	struct nlt *t;
	int ret;

	if (become(who)) {
		fprintf(stderr, "#   cannot change identity: %s\n", strerror(errno));
		return 100;
	}
	t = nlt_open();
	if (!t) {
		fprintf(stderr, "#   cannot open the kcoll family: %s\n", strerror(errno));
		return 100;
	}
	for (i = 0; i < ARRAY_SIZE(priv_cases); i++) {
		t->ext[0] = '\0';
		nlh = nlt_cmd(t, priv_cases[i].cmd, 0);
		priv_cases[i].build(nlh);
		ret = nlt_talk(t, nlh, NULL, NULL);
		if (ret == -EPERM && strstr(t->ext, "CAP_NET_ADMIN in the initial user namespace"))
			continue;
		fprintf(stderr, "#   %s: got %d (%s), extack \"%s\"\n", priv_cases[i].name, ret,
			strerror(-ret), t->ext);
		bad++;
	}
	nlt_close(t);
	return bad;
}

FIXTURE(priv) {
	long timeout, port, tcp_port;
};

FIXTURE_VARIANT(priv) {
	enum priv_who who;
};

FIXTURE_VARIANT_ADD(priv, nobody) { .who = NOBODY };
FIXTURE_VARIANT_ADD(priv, root_without_cap_net_admin) { .who = ROOT_NO_NET_ADMIN };
FIXTURE_VARIANT_ADD(priv, root_of_own_userns) { .who = ROOT_IN_USERNS };
FIXTURE_VARIANT_ADD(priv, nobody_as_root_of_own_userns) { .who = NOBODY_IN_USERNS };

FIXTURE_SETUP(priv)
{
	/* Debian's switch for unprivileged user namespaces (on by default; made sure). */
	write_file("/proc/sys/kernel/unprivileged_userns_clone", "1");
	self->timeout = kt_read_long(SYSMOD "op_timeout_ms", -999);
	self->port = kt_read_long(SYSMOD "listen_port", -999);
	self->tcp_port = kt_read_long(SYSMOD "tcp_port", -999);
}

FIXTURE_TEARDOWN(priv)
{
}

/* Every changing command is EPERM, says why, and changes nothing. */
TEST_F(priv, changes_are_eperm)
{
	int status;
	pid_t pid;

	/* The debug tier's kernel is built without user namespaces (CONFIG_USER_NS). */
	if ((variant->who == ROOT_IN_USERNS || variant->who == NOBODY_IN_USERNS) &&
	    access("/proc/self/ns/user", F_OK))
		SKIP(return, "kernel without user namespaces");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(priv_run(variant->who));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("%d changing commands were not refused",
						 WEXITSTATUS(status));
	EXPECT_EQ(self->timeout, kt_read_long(SYSMOD "op_timeout_ms", -999));
	EXPECT_EQ(self->port, kt_read_long(SYSMOD "listen_port", -999));
	EXPECT_EQ(self->tcp_port, kt_read_long(SYSMOD "tcp_port", -999));
	if (self->timeout != kt_read_long(SYSMOD "op_timeout_ms", -999) ||
	    self->port != kt_read_long(SYSMOD "listen_port", -999) ||
	    self->tcp_port != kt_read_long(SYSMOD "tcp_port", -999)) {
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl config set op_timeout_ms %ld"
			 " listen_port %ld tcp_port %ld", self->timeout, self->port,
			 self->tcp_port);
		kt_sh(cmd);
	}
}

/* Reading needs no privilege. */
TEST(unprivileged_reads)
{
	struct nlmsghdr *nlh;
	struct nlt *t;

	ASSERT_EQ(0, become_nobody());
	t = nlt_open();
	ASSERT_NE(NULL, t) TH_LOG("cannot open the family");
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_GET, 0);
	EXPECT_EQ(0, nlt_talk(t, nlh, NULL, NULL)) TH_LOG("%s", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_GET, NLM_F_DUMP);
	EXPECT_EQ(0, nlt_talk(t, nlh, NULL, NULL)) TH_LOG("%s", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_COMM_GET, NLM_F_DUMP);
	EXPECT_EQ(0, nlt_talk(t, nlh, NULL, NULL)) TH_LOG("%s", t->ext);
	nlt_close(t);
}

/* The kcollctl command line gives the same answer, with exit status 1. */
TEST(unprivileged_kcollctl)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		SKIP(return, "cannot become nobody");
	EXPECT_EQ(1, kt_sh("tools/kcollctl/kcollctl config set op_timeout_ms 10000"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl config show >/dev/null"));
}

/* ---- devices and configuration ------------------------------------------------------------- */

#define MAX_GIDS	1024

struct dev_seen {
	bool found;
	uint8_t allowed;
	int32_t tos;
	int32_t gid_index;
	unsigned int ports, gids;
	bool valid[MAX_GIDS];	/* port 1's valid GID table entries */
	int v4_index;		/* of ::ffff:169.254.77.1, or -1 */
	int ll_index;		/* of a fe80:: entry, or -1 */
};

static void dev_gid(struct dev_seen *d, const struct nlattr *g)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 169, 254, 77, 1 };
	const struct nlattr *a;
	const uint8_t *gid = NULL;
	int index = -1;

	mnl_attr_for_each_nested(a, g) {
		if (mnl_attr_get_type(a) == KCOLL_A_GID_INDEX)
			index = (int)mnl_attr_get_u32(a);
		if (mnl_attr_get_type(a) == KCOLL_A_GID_GID &&
		    mnl_attr_get_payload_len(a) == 16)
			gid = mnl_attr_get_payload(a);
	}
	if (index < 0 || index >= MAX_GIDS || !gid)
		return;
	d->valid[index] = true;
	if (!memcmp(gid, v4, 16) && d->v4_index < 0)
		d->v4_index = index;
	if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80 && d->ll_index < 0)
		d->ll_index = index;
}

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dev_seen *d = data;
	const struct nlattr *a, *p;
	bool mine = false;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == KCOLL_A_DEV_NAME)
			mine = !strcmp(mnl_attr_get_str(a), RXE);
	}
	if (!mine)
		return MNL_CB_OK;
	d->found = true;
	d->v4_index = -1;
	d->ll_index = -1;
	d->gid_index = -2;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_DEV_ALLOWED:
			d->allowed = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_DEV_TOS:
			d->tos = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_DEV_GID_INDEX:
			d->gid_index = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_DEV_PORT:
			d->ports++;
			mnl_attr_for_each_nested(p, a) {
				if (mnl_attr_get_type(p) != KCOLL_A_PORT_GID)
					continue;
				d->gids++;
				if (d->ports == 1)
					dev_gid(d, p);
			}
			break;
		}
	}
	return MNL_CB_OK;
}

FIXTURE(dev) {
	struct nlt *t;
};

FIXTURE_SETUP(dev)
{
	kt_sh("rdma link delete " RXE " 2>/dev/null");
	ASSERT_EQ(0, kt_sh("rdma link add " RXE " type rxe netdev eth0"));
	self->t = nlt_open();
	ASSERT_NE(NULL, self->t);
}

FIXTURE_TEARDOWN(dev)
{
	nlt_close(self->t);
	kt_sh("rdma link delete " RXE);
}

TEST_F(dev, dump_and_get_show_ports_and_gids)
{
	struct dev_seen d = { 0 };
	struct nlmsghdr *nlh;

	nlh = nlt_cmd(self->t, KCOLL_CMD_DEV_GET, NLM_F_DUMP);
	ASSERT_EQ(0, nlt_talk(self->t, nlh, dev_cb, &d)) TH_LOG("%s", self->t->ext);
	ASSERT_TRUE(d.found);
	EXPECT_EQ(1, d.allowed);
	EXPECT_EQ(-1, d.tos);
	EXPECT_EQ(-1, d.gid_index);
	EXPECT_EQ(1, d.ports);
	EXPECT_LE(1, d.gids);	/* eth0's IPv4 address and link-local IPv6 */

	memset(&d, 0, sizeof(d));
	nlh = nlt_cmd(self->t, KCOLL_CMD_DEV_GET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	ASSERT_EQ(0, nlt_talk(self->t, nlh, dev_cb, &d)) TH_LOG("%s", self->t->ext);
	EXPECT_TRUE(d.found);

	nlh = nlt_cmd(self->t, KCOLL_CMD_DEV_GET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, "no_such_dev");
	EXPECT_EQ(-ENODEV, nlt_talk(self->t, nlh, NULL, NULL));
	EXPECT_NE('\0', self->t->ext[0]);
}

TEST_F(dev, set_allowed_and_tos)
{
	struct dev_seen d = { 0 };
	struct nlmsghdr *nlh;

	nlh = nlt_cmd(self->t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u8(nlh, KCOLL_A_DEV_ALLOWED, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_TOS, 104);
	ASSERT_EQ(0, nlt_talk(self->t, nlh, NULL, NULL)) TH_LOG("%s", self->t->ext);
	EXPECT_EQ(0, kt_read_long("/sys/kernel/kcoll/devices/" RXE "/allowed", -999));
	nlh = nlt_cmd(self->t, KCOLL_CMD_DEV_GET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	ASSERT_EQ(0, nlt_talk(self->t, nlh, dev_cb, &d));
	EXPECT_EQ(0, d.allowed);
	EXPECT_EQ(104, d.tos);
	/* kcollctl shows and sets it too. */
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl -j dev show " RXE
			" | grep -q '\"allowed\":false.*\"tos\":104'"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl dev set " RXE " allowed yes tos default"));
	EXPECT_EQ(1, kt_read_long("/sys/kernel/kcoll/devices/" RXE "/allowed", -999));
	EXPECT_EQ(2, kt_sh("tools/kcollctl/kcollctl dev set " RXE " allowed maybe 2>/dev/null"));
	EXPECT_EQ(1, kt_sh("tools/kcollctl/kcollctl dev set nodev0 allowed yes 2>/dev/null"));
}

/* Read the device back; 0 or -errno. */
static int dev_read(struct nlt *t, struct dev_seen *d)
{
	struct nlmsghdr *nlh = nlt_cmd(t, KCOLL_CMD_DEV_GET, 0);

	memset(d, 0, sizeof(*d));
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	return nlt_talk(t, nlh, dev_cb, d);
}

static int dev_set_gid(struct nlt *t, int32_t index)
{
	struct nlmsghdr *nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);

	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_GID_INDEX, (uint32_t)index);
	return nlt_talk(t, nlh, NULL, NULL);
}

/* Bad GID selections: EINVAL (EOPNOTSUPP on iWARP) with a message, and nothing changes. */
TEST_F(dev, gid_index_refused)
{
	struct nlt *t = self->t;
	struct dev_seen d;
	struct nlmsghdr *nlh;
	int empty = -1, i;

	ASSERT_EQ(0, dev_read(t, &d)) TH_LOG("%s", t->ext);
	for (i = 0; i < MAX_GIDS && empty < 0; i++) {
		if (!d.valid[i])
			empty = i;
	}
	ASSERT_LE(0, empty) TH_LOG("no empty GID table entry below %d", MAX_GIDS);

	/* Beyond the GID table (rxe has 1024 entries). */
	EXPECT_EQ(-EINVAL, dev_set_gid(t, 1 << 20));
	EXPECT_STREQ("gid-index is beyond the device's GID table", t->ext);
	/* An empty entry. */
	EXPECT_EQ(-EINVAL, dev_set_gid(t, empty)) TH_LOG("index %d", empty);
	EXPECT_STREQ("gid-index names an empty GID table entry", t->ext);
	/* Below -1. */
	EXPECT_EQ(-EINVAL, dev_set_gid(t, -2));
	EXPECT_STREQ("gid-index must be -1 (no selection) or a GID table index", t->ext);
	/* Wrong type: a u8 where an s32 belongs. */
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u8(nlh, KCOLL_A_DEV_GID_INDEX, 0);
	EXPECT_EINVAL_MSG(t, nlh);
	/* A refused selection applies nothing else of the request either. */
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_TOS, 104);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_GID_INDEX, (uint32_t)empty);
	EXPECT_EINVAL_MSG(t, nlh);
	/* The message names the new attribute. */
	nlh = nlt_cmd(t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, RXE);
	EXPECT_EINVAL_MSG(t, nlh);
	EXPECT_STREQ("nothing to change: give allowed, tos or gid-index", t->ext);

	ASSERT_EQ(0, dev_read(t, &d));
	EXPECT_EQ(-1, d.gid_index);
	EXPECT_EQ(-1, d.tos);
	/* kcollctl refuses a bad value itself (2), relays the kernel's refusal (1). */
	EXPECT_EQ(2, kt_sh("tools/kcollctl/kcollctl dev set " RXE " gid none 2>/dev/null"));
	EXPECT_EQ(1, kt_sh("tools/kcollctl/kcollctl dev set " RXE " gid 1048576 2>/dev/null"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl dev set " RXE " gid 1048576 2>&1"
			" | grep -q 'beyond the device'"));
}

/* An iWARP device (Soft-iWARP, when the kernel has it) has no GID to select. */
TEST_F(nl, gid_index_iwarp_eopnotsupp)
{
	struct nlmsghdr *nlh;
	int ret;

	if (kt_sh("modprobe siw 2>/dev/null") ||
	    kt_sh("rdma link add kcoll_siw0 type siw netdev eth0 2>/dev/null"))
		SKIP(return, "no Soft-iWARP (siw) in this kernel");
	nlh = nlt_cmd(self->t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, "kcoll_siw0");
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_GID_INDEX, 0);
	ret = nlt_talk(self->t, nlh, NULL, NULL);
	EXPECT_EQ(-EOPNOTSUPP, ret);
	EXPECT_STREQ("iWARP devices have no GID to select: the address picks the connection",
		     self->t->ext);
	/* No selection is fine on any device. */
	nlh = nlt_cmd(self->t, KCOLL_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, "kcoll_siw0");
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_GID_INDEX, (uint32_t)-1);
	EXPECT_EQ(0, nlt_talk(self->t, nlh, NULL, NULL)) TH_LOG("%s", self->t->ext);
	kt_sh("rdma link delete kcoll_siw0");
}

/* Set, read back by netlink and kcollctl, cleared with -1 and with "auto". */
TEST_F(dev, gid_index_set_get_clear)
{
	struct nlt *t = self->t;
	struct dev_seen d;
	char cmd[256];

	ASSERT_EQ(0, dev_read(t, &d)) TH_LOG("%s", t->ext);
	ASSERT_LE(0, d.v4_index) TH_LOG("no GID for 169.254.77.1 on " RXE);

	ASSERT_EQ(0, dev_set_gid(t, d.v4_index)) TH_LOG("%s", t->ext);
	ASSERT_EQ(0, dev_read(t, &d));
	EXPECT_EQ(d.v4_index, d.gid_index);
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl -j dev show " RXE
		 " | grep -q '\"gid_index\":%d,'", d.v4_index);
	EXPECT_EQ(0, kt_sh(cmd));
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl dev show " RXE
		 " | grep -q ' gid %d comms'", d.v4_index);
	EXPECT_EQ(0, kt_sh(cmd));

	ASSERT_EQ(0, dev_set_gid(t, -1)) TH_LOG("%s", t->ext);
	ASSERT_EQ(0, dev_read(t, &d));
	EXPECT_EQ(-1, d.gid_index);

	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl dev set " RXE " gid %d tos 8",
		 d.v4_index);
	EXPECT_EQ(0, kt_sh(cmd));
	ASSERT_EQ(0, dev_read(t, &d));
	EXPECT_EQ(d.v4_index, d.gid_index);
	EXPECT_EQ(8, d.tos);
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl dev set " RXE " gid auto tos default"));
	ASSERT_EQ(0, dev_read(t, &d));
	EXPECT_EQ(-1, d.gid_index);
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl -j dev show " RXE
			" | grep -q '\"gid_index\":-1,'"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl dev show " RXE " | grep -q ' gid auto comms'"));
}

struct cfg_seen {
	uint32_t op_timeout, chunk;
	int32_t tos;
	uint32_t algo_allreduce;
	unsigned int nalgo;
};

static int cfg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct cfg_seen *c = data;
	const struct nlattr *a, *b;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_CONFIG_OP_TIMEOUT_MS:
			c->op_timeout = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_CONFIG_CHUNK_BYTES:
			c->chunk = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_CONFIG_TOS:
			c->tos = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_CONFIG_ALGO: {
			uint32_t coll = ~0u, algo = ~0u;

			c->nalgo++;
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == KCOLL_A_ALGO_COLL)
					coll = mnl_attr_get_u32(b);
				if (mnl_attr_get_type(b) == KCOLL_A_ALGO_ALGORITHM)
					algo = mnl_attr_get_u32(b);
			}
			if (coll == KCOLL_ALLREDUCE)
				c->algo_allreduce = algo;
			break;
		}
		}
	}
	return MNL_CB_OK;
}

TEST_F(nl, config_set_get_and_module_parameters)
{
	struct nlt *t = self->t;
	long old_op = kt_read_long(SYSMOD "op_timeout_ms", -999);
	struct cfg_seen c = { 0 };
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	char cmd[128];

	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_OP_TIMEOUT_MS, 12345);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_CHUNK_BYTES, 1 << 20);
	mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_TOS, 96);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, KCOLL_ALLREDUCE);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, KCOLL_ALG_RING);
	mnl_attr_nest_end(nlh, nest);
	ASSERT_EQ(0, nlt_talk(t, nlh, NULL, NULL)) TH_LOG("%s", t->ext);

	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_GET, 0);
	ASSERT_EQ(0, nlt_talk(t, nlh, cfg_cb, &c));
	EXPECT_EQ(12345, c.op_timeout);
	EXPECT_EQ(1 << 20, c.chunk);
	EXPECT_EQ(96, c.tos);
	EXPECT_EQ(KCOLL_ALG_RING, c.algo_allreduce);
	EXPECT_EQ(KCOLL_NUM_COLLECTIVES, c.nalgo);
	/* The module parameters are the same values, both ways. */
	EXPECT_EQ(12345, kt_read_long(SYSMOD "op_timeout_ms", -999));
	EXPECT_EQ(96, kt_read_long(SYSMOD "tos", -999));
	EXPECT_EQ(0, kt_sh("echo 23456 > " SYSMOD "op_timeout_ms"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl -j config show | grep -q "
			"'\"op_timeout_ms\":23456.*\"allreduce\":\"ring\"'"));
	EXPECT_EQ(0, kt_sh("tools/kcollctl/kcollctl config set tos default algo allreduce auto "
			"chunk_bytes 262144"));
	EXPECT_EQ(-1, kt_read_long(SYSMOD "tos", -999));
	EXPECT_EQ(1, kt_sh("tools/kcollctl/kcollctl config set chunk_bytes 5000 2>/dev/null"));
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl config set op_timeout_ms %ld",
		 old_op);
	EXPECT_EQ(0, kt_sh(cmd));
}

/* the attributes of a config-get reply, as they came */
struct cfg_raw {
	char attrs[2048];
	size_t len;
};

static int cfg_raw_cb(const struct nlmsghdr *nlh, void *data)
{
	struct cfg_raw *r = data;
	size_t off = MNL_ALIGN(sizeof(struct genlmsghdr));
	size_t len = mnl_nlmsg_get_payload_len(nlh) - off;

	if (len > sizeof(r->attrs))
		return MNL_CB_ERROR;
	memcpy(r->attrs, (const char *)mnl_nlmsg_get_payload(nlh) + off, len);
	r->len = len;
	return MNL_CB_OK;
}

/*
 * A config-set of everything config-get returned is accepted and changes nothing: the
 * defaults pass their own checks (small-bytes 0, the derived table, among them); a
 * save-and-restore of the configuration (libkcoll's failnth test) relies on it.
 */
TEST_F(nl, default_config_sets_back)
{
	struct nlt *t = self->t;
	struct cfg_raw *a = calloc(2, sizeof(*a));
	struct nlmsghdr *nlh;

	ASSERT_NE(NULL, a);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_GET, 0);
	ASSERT_EQ(0, nlt_talk(t, nlh, cfg_raw_cb, &a[0]));
	ASSERT_LT(0, a[0].len);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_SET, 0);
	memcpy(mnl_nlmsg_get_payload_tail(nlh), a[0].attrs, a[0].len);
	nlh->nlmsg_len += a[0].len;
	EXPECT_EQ(0, nlt_talk(t, nlh, NULL, NULL)) TH_LOG("%s", t->ext);
	nlh = nlt_cmd(t, KCOLL_CMD_CONFIG_GET, 0);
	ASSERT_EQ(0, nlt_talk(t, nlh, cfg_raw_cb, &a[1]));
	EXPECT_EQ(a[0].len, a[1].len);
	EXPECT_EQ(0, memcmp(a[0].attrs, a[1].attrs, a[0].len));
	free(a);
}

/* ---- communicators and events ---------------------------------------------------------------- */

struct comm_seen {
	uint64_t id;
	uint32_t rank;
	bool found;
	uint32_t nranks, owner_pid, npeers;
	uint8_t state;
	int32_t error;
	uint32_t peer_rank[4];
	uint8_t peer_state[4];
	int peer_sgid[4];	/* -1: not reported */
	int peer_gid_type[4];
};

static int comm_cb(const struct nlmsghdr *nlh, void *data)
{
	struct comm_seen *c = data;
	const struct nlattr *a, *p;
	uint64_t id = 0;
	uint32_t rank = ~0u;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == KCOLL_A_COMM_ID)
			id = mnl_attr_get_u64(a);
		if (mnl_attr_get_type(a) == KCOLL_A_COMM_RANK)
			rank = mnl_attr_get_u32(a);
	}
	if (id != c->id || rank != c->rank)
		return MNL_CB_OK;
	c->found = true;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_COMM_NRANKS:
			c->nranks = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_OWNER_PID:
			c->owner_pid = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_STATE:
			c->state = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_COMM_ERROR:
			c->error = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_PEER:
			mnl_attr_for_each_nested(p, a) {
				if (c->npeers >= 4)
					break;
				if (mnl_attr_get_type(p) == KCOLL_A_PEER_RANK)
					c->peer_rank[c->npeers] = mnl_attr_get_u32(p);
				if (mnl_attr_get_type(p) == KCOLL_A_PEER_STATE)
					c->peer_state[c->npeers] = mnl_attr_get_u8(p);
				if (mnl_attr_get_type(p) == KCOLL_A_PEER_SGID_INDEX)
					c->peer_sgid[c->npeers] = (int)mnl_attr_get_u32(p);
				if (mnl_attr_get_type(p) == KCOLL_A_PEER_GID_TYPE)
					c->peer_gid_type[c->npeers] = mnl_attr_get_u8(p);
			}
			c->npeers++;
			break;
		}
	}
	return MNL_CB_OK;
}

static int comm_lookup(struct nlt *t, struct comm_seen *c, bool dump)
{
	struct nlmsghdr *nlh = nlt_cmd(t, KCOLL_CMD_COMM_GET, dump ? NLM_F_DUMP : 0);

	c->found = false;
	c->npeers = 0;
	memset(c->peer_sgid, 0xff, sizeof(c->peer_sgid));
	memset(c->peer_gid_type, 0xff, sizeof(c->peer_gid_type));
	if (!dump) {
		mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, c->id);
		mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, c->rank);
	}
	return nlt_talk(t, nlh, comm_cb, c);
}

struct ev_seen {
	uint8_t cmd;
	uint64_t id;
	uint32_t rank, peer;
	uint8_t state;
	int32_t error;
	char dev[64];
};

static int ev_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct ev_seen *e = data;
	const struct nlattr *a;
	bool dev = g->cmd == KCOLL_CMD_DEV_ADDED_NTF || g->cmd == KCOLL_CMD_DEV_REMOVED_NTF;

	memset(e, 0, sizeof(*e));
	e->cmd = g->cmd;
	e->peer = ~0u;
	mnl_attr_for_each(a, nlh, sizeof(*g)) {
		int type = mnl_attr_get_type(a);

		if (dev) {
			if (type == KCOLL_A_DEV_NAME)
				snprintf(e->dev, sizeof(e->dev), "%s", mnl_attr_get_str(a));
			continue;
		}
		if (type == KCOLL_A_COMM_ID)
			e->id = mnl_attr_get_u64(a);
		else if (type == KCOLL_A_COMM_RANK)
			e->rank = mnl_attr_get_u32(a);
		else if (type == KCOLL_A_COMM_PEER_RANK)
			e->peer = mnl_attr_get_u32(a);
		else if (type == KCOLL_A_COMM_STATE)
			e->state = mnl_attr_get_u8(a);
		else if (type == KCOLL_A_COMM_ERROR)
			e->error = (int32_t)mnl_attr_get_u32(a);
	}
	return MNL_CB_STOP;
}

/* Wait up to @ms for an event @cmd about comm @id (0: any) of rank 0, or device @dev. */
static bool ev_wait(struct nlt *t, uint8_t cmd, uint64_t id, const char *dev, int ms,
		    struct ev_seen *e)
{
	struct pollfd pfd = { .fd = mnl_socket_get_fd(t->sock), .events = POLLIN };
	double end = kt_now() + ms / 1000.0;
	ssize_t n;

	while (kt_now() < end) {
		if (poll(&pfd, 1, (int)((end - kt_now()) * 1000) + 1) <= 0)
			continue;
		n = recv(pfd.fd, t->buf, sizeof(t->buf), MSG_DONTWAIT);
		if (n <= 0)
			continue;
		if (mnl_cb_run(t->buf, n, 0, 0, ev_cb, e) < 0)
			continue;
		if (e->cmd != cmd)
			continue;
		if (dev && strcmp(dev, e->dev))
			continue;
		if (id && (e->id != id || e->rank))
			continue;
		return true;
	}
	return false;
}

static struct nlt *nlt_monitor(void)
{
	struct nlt *t = nlt_open();
	int grp;

	if (!t)
		return NULL;
	grp = t->events;
	if (mnl_socket_setsockopt(t->sock, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp))) {
		nlt_close(t);
		return NULL;
	}
	return t;
}

TEST(events_device_added_and_removed)
{
	struct nlt *m = nlt_monitor();
	struct ev_seen e;

	ASSERT_NE(NULL, m);
	kt_sh("rdma link delete " RXE " 2>/dev/null");
	ASSERT_EQ(0, kt_sh("rdma link add " RXE " type rxe netdev eth0"));
	EXPECT_TRUE(ev_wait(m, KCOLL_CMD_DEV_ADDED_NTF, 0, RXE, 5000, &e));
	ASSERT_EQ(0, kt_sh("rdma link delete " RXE));
	EXPECT_TRUE(ev_wait(m, KCOLL_CMD_DEV_REMOVED_NTF, 0, RXE, 5000, &e));
	nlt_close(m);
}

/*
 * Two ranks on this node (one address, one listener): created, listed with ranks and
 * peers by netlink and kcollctl -j, rank 1 killed in a blocking receive, destroyed; the
 * events group sees all of it.
 */
FIXTURE(pair) {
	struct nlt *t, *m;
	int fd;
	pid_t child;
	uint64_t id;
};

FIXTURE_SETUP(pair)
{
	kt_sh("rdma link delete " RXE " 2>/dev/null");
	ASSERT_EQ(0, kt_sh("rdma link add " RXE " type rxe netdev eth0"));
	self->t = nlt_open();
	self->m = nlt_monitor();
	ASSERT_NE(NULL, self->t);
	ASSERT_NE(NULL, self->m);
	self->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->id = kt_comm_id(_metadata->name, getpid());
	self->child = -1;
}

FIXTURE_TEARDOWN(pair)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	close(self->fd);
	nlt_close(self->t);
	nlt_close(self->m);
	kt_sh("rdma link delete " RXE);
}

/* Rank 1 in a child: create, tell the parent, then block in a receive until killed. */
static void pair_child(uint64_t id, int wfd)
{
	char buf[16];
	uint32_t h;
	int fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC), ret;

	ret = comm_create(fd, id, 1, 2, 20000, &h);
	if (write(wfd, &ret, sizeof(ret)) != sizeof(ret))
		_exit(2);
	if (ret)
		_exit(1);
	kt_p2p(fd, h, KCOLL_P2P_RECV, 0, buf, sizeof(buf), NULL);
	_exit(0);
}

/* Create both ranks of a pair (rank 1 in a child); the two results. */
static void pair_create(struct __test_metadata *_metadata, FIXTURE_DATA(pair) *self,
			uint64_t id, int *ret0, int *ret1, uint32_t *h)
{
	int pipefd[2];

	*ret1 = -1;
	ASSERT_EQ(0, pipe(pipefd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(pipefd[0]);
		pair_child(id, pipefd[1]);
	}
	close(pipefd[1]);
	*ret0 = comm_create(self->fd, id, 0, 2, 20000, h);
	if (read(pipefd[0], ret1, sizeof(*ret1)) != sizeof(*ret1))
		*ret1 = -EPIPE;
	close(pipefd[0]);
}

/*
 * The device's GID selection on a live pair: a selection other than the entry of the ranks'
 * address fails both ranks with EADDRNOTAVAIL; the entry of the address works, and every
 * peer reports the source GID index its connection uses.
 */
TEST_F_TIMEOUT(pair, gid_selection_enforced, 120)
{
	struct comm_seen c = { .id = self->id + 1, .rank = 0 };
	struct dev_seen d;
	int ret0, ret1;
	char cmd[512];
	uint32_t h;

	ASSERT_EQ(0, dev_read(self->t, &d)) TH_LOG("%s", self->t->ext);
	ASSERT_LE(0, d.v4_index) TH_LOG("no GID for 169.254.77.1");
	ASSERT_LE(0, d.ll_index) TH_LOG("no link-local GID");

	ASSERT_EQ(0, dev_set_gid(self->t, d.ll_index)) TH_LOG("%s", self->t->ext);
	pair_create(_metadata, self, self->id, &ret0, &ret1, &h);
	EXPECT_EQ(-EADDRNOTAVAIL, ret0) TH_LOG("rank 0: %s", strerror(-ret0));
	EXPECT_EQ(-EADDRNOTAVAIL, ret1) TH_LOG("rank 1: %s", strerror(-ret1));
	if (!ret0)
		kt_comm_destroy(self->fd, h);
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = -1;

	ASSERT_EQ(0, dev_set_gid(self->t, d.v4_index)) TH_LOG("%s", self->t->ext);
	pair_create(_metadata, self, self->id + 1, &ret0, &ret1, &h);
	ASSERT_EQ(0, ret0) TH_LOG("rank 0: %s", strerror(-ret0));
	ASSERT_EQ(0, ret1) TH_LOG("rank 1: %s", strerror(-ret1));
	ASSERT_EQ(0, comm_lookup(self->t, &c, false)) TH_LOG("%s", self->t->ext);
	EXPECT_EQ(1, c.npeers);
	EXPECT_EQ(d.v4_index, c.peer_sgid[0]);
	EXPECT_LE(0, c.peer_gid_type[0]);
	c.rank = 1;
	ASSERT_EQ(0, comm_lookup(self->t, &c, true)) TH_LOG("%s", self->t->ext);
	EXPECT_EQ(d.v4_index, c.peer_sgid[0]);
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl -j comm show %016llx"
		 " | grep -q '\"sgid_index\":%d,\"gid_type\":\"roce-v'",
		 (unsigned long long)c.id, d.v4_index);
	EXPECT_EQ(0, kt_sh(cmd));
	EXPECT_EQ(0, dev_set_gid(self->t, -1));
	kt_comm_destroy(self->fd, h);
}

TEST_F_TIMEOUT(pair, create_show_kill_destroy_events, 120)
{
	struct comm_seen c = { .id = self->id, .rank = 0 };
	int pipefd[2], child_ret = -1, ret;
	struct ev_seen e;
	char cmd[512];
	uint32_t h;

	ASSERT_EQ(0, pipe(pipefd));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(pipefd[0]);
		pair_child(self->id, pipefd[1]);
	}
	close(pipefd[1]);
	ret = comm_create(self->fd, self->id, 0, 2, 20000, &h);
	ASSERT_EQ(0, ret) TH_LOG("create rank 0: %s", strerror(-ret));
	ASSERT_EQ(sizeof(child_ret), read(pipefd[0], &child_ret, sizeof(child_ret)));
	close(pipefd[0]);
	ASSERT_EQ(0, child_ret) TH_LOG("create rank 1: %s", strerror(-child_ret));
	EXPECT_TRUE(ev_wait(self->m, KCOLL_CMD_COMM_CREATED_NTF, self->id, NULL, 5000, &e));

	/* Dump and get agree on this rank: ready, 2 ranks, our pid, peer 1 up. */
	ASSERT_EQ(0, comm_lookup(self->t, &c, true)) TH_LOG("%s", self->t->ext);
	ASSERT_TRUE(c.found);
	EXPECT_EQ(2, c.nranks);
	EXPECT_EQ(KCOLL_COMM_READY, c.state);
	EXPECT_EQ((uint32_t)getpid(), c.owner_pid);
	EXPECT_EQ(1, c.npeers);
	EXPECT_EQ(1, c.peer_rank[0]);
	EXPECT_EQ(KCOLL_PEER_STATE_UP, c.peer_state[0]);
	ASSERT_EQ(0, comm_lookup(self->t, &c, false)) TH_LOG("%s", self->t->ext);
	EXPECT_TRUE(c.found);
	EXPECT_EQ(1, c.npeers);
	c.rank = 1;
	ASSERT_EQ(0, comm_lookup(self->t, &c, false)) TH_LOG("%s", self->t->ext);
	EXPECT_EQ((uint32_t)self->child, c.owner_pid);
	EXPECT_EQ(0, c.peer_rank[0]);
	c.rank = 0;

	/* kcollctl -j comm show lists both ranks, with each other as peers. */
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl -j comm show %016llx | python3 -c '"
		 "import json,sys; c=json.load(sys.stdin); "
		 "assert sorted((x[\"rank\"], x[\"nranks\"], x[\"state\"], "
		 "[p[\"rank\"] for p in x[\"peers\"]], x[\"peers\"][0][\"state\"]) for x in c) == "
		 "[(0, 2, \"ready\", [1], \"up\"), (1, 2, \"ready\", [0], \"up\")], c'",
		 (unsigned long long)self->id);
	EXPECT_EQ(0, kt_sh(cmd));

	/* The peer is killed in a blocking receive: rank 0 loses it. */
	usleep(200 * 1000);
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = -1;
	EXPECT_TRUE(ev_wait(self->m, KCOLL_CMD_PEER_LOST_NTF, self->id, NULL, 15000, &e));
	EXPECT_EQ(0, e.rank);
	EXPECT_EQ(1, e.peer);
	EXPECT_NE(0, e.error);

	EXPECT_EQ(0, kt_comm_destroy(self->fd, h));
	EXPECT_TRUE(ev_wait(self->m, KCOLL_CMD_COMM_DESTROYED_NTF, self->id, NULL, 5000, &e));
	ASSERT_EQ(0, comm_lookup(self->t, &c, true));
	EXPECT_FALSE(c.found);
	EXPECT_EQ(-ENOENT, comm_lookup(self->t, &c, false));
	EXPECT_NE('\0', self->t->ext[0]);
}

struct create_arg {
	int fd;
	uint64_t id;
	int ret;
	double done;
};

static void *create_thread(void *p)
{
	struct create_arg *a = p;
	uint32_t h;

	a->ret = comm_create(a->fd, a->id, 0, 2, 60000, &h);
	a->done = kt_now();
	return NULL;
}

/* Rank 0 waits for a rank 1 that never comes; the admin abort ends the wait at once. */
TEST_F_TIMEOUT(pair, admin_abort_unblocks_waiting_rank, 120)
{
	struct create_arg a = { .fd = self->fd, .id = self->id };
	struct comm_seen c = { .id = self->id, .rank = 0 };
	struct nlmsghdr *nlh;
	struct ev_seen e;
	pthread_t th;
	double t0;
	int i;

	ASSERT_EQ(0, pthread_create(&th, NULL, create_thread, &a));
	for (i = 0; i < 100; i++) {
		if (!comm_lookup(self->t, &c, true) && c.found &&
		    c.state == KCOLL_COMM_CONNECTING)
			break;
		usleep(50 * 1000);
	}
	ASSERT_TRUE(c.found) TH_LOG("the comm never showed up connecting");
	usleep(300 * 1000);
	EXPECT_EQ(0, a.done);

	nlh = nlt_cmd(self->t, KCOLL_CMD_COMM_ABORT, 0);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, self->id);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 0);
	t0 = kt_now();
	ASSERT_EQ(0, nlt_talk(self->t, nlh, NULL, NULL)) TH_LOG("%s", self->t->ext);
	pthread_join(th, NULL);
	EXPECT_EQ(-ECONNABORTED, a.ret);
	EXPECT_LT(a.done - t0, 1.0) TH_LOG("create returned %.3f s after the abort", a.done - t0);
	EXPECT_TRUE(ev_wait(self->m, KCOLL_CMD_COMM_FAILED_NTF, self->id, NULL, 2000, &e));
	EXPECT_EQ(KCOLL_COMM_ABORTED, e.state);
	EXPECT_EQ(-ECONNABORTED, e.error);

	/* A comm that does not exist: ENOENT with a message. */
	nlh = nlt_cmd(self->t, KCOLL_CMD_COMM_ABORT, 0);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, self->id);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 0);
	EXPECT_EQ(-ENOENT, nlt_talk(self->t, nlh, NULL, NULL));
	EXPECT_NE('\0', self->t->ext[0]);
}

/* Admin abort of a ready comm: its owner sees ABORTED; kcollctl comm abort does the same. */
TEST_F(pair, admin_abort_ready_comm)
{
	struct kcoll_comm_query q = { .size = sizeof(q) };
	struct comm_seen c = { .id = self->id, .rank = 0 };
	char cmd[128];
	uint32_t h;

	ASSERT_EQ(0, comm_create(self->fd, self->id, 0, 1, 5000, &h));
	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl comm abort %016llx-0",
		 (unsigned long long)self->id);
	EXPECT_EQ(0, kt_sh(cmd));
	q.handle = h;
	ASSERT_EQ(0, kt_ioctl(self->fd, KCOLL_IOC_COMM_QUERY, &q));
	EXPECT_EQ(KCOLL_COMM_ABORTED, q.state);
	EXPECT_EQ(-ECONNABORTED, q.error);
	ASSERT_EQ(0, comm_lookup(self->t, &c, false));
	EXPECT_EQ(KCOLL_COMM_ABORTED, c.state);
	EXPECT_EQ(0, kt_comm_destroy(self->fd, h));
	EXPECT_EQ(1, kt_sh(cmd));	/* gone now */
}

/* ---- owners: a user sees and aborts its own communicators only ----------------------- */

struct comm_uid_seen {
	uint64_t id;
	bool found;
	uint32_t owner_uid;
};

static int comm_uid_cb(const struct nlmsghdr *nlh, void *data)
{
	struct comm_uid_seen *c = data;
	const struct nlattr *a;
	bool match = false;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == KCOLL_A_COMM_ID && mnl_attr_get_u64(a) == c->id)
			match = true;
	}
	if (!match)
		return MNL_CB_OK;
	c->found = true;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == KCOLL_A_COMM_OWNER_UID)
			c->owner_uid = mnl_attr_get_u32(a);
	}
	return MNL_CB_OK;
}

/* Is comm @id (rank 0) in @t's dump?  Its owner's uid in *@uid.  -errno if the dump fails. */
static int comm_listed(struct nlt *t, uint64_t id, uint32_t *uid)
{
	struct comm_uid_seen c = { .id = id, .owner_uid = ~0u };
	int ret = nlt_talk(t, nlt_cmd(t, KCOLL_CMD_COMM_GET, NLM_F_DUMP), comm_uid_cb, &c);

	if (ret)
		return ret;
	if (uid)
		*uid = c.owner_uid;
	return c.found;
}

static int comm_abort(struct nlt *t, uint64_t id)
{
	struct nlmsghdr *nlh = nlt_cmd(t, KCOLL_CMD_COMM_ABORT, 0);

	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, id);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 0);
	return nlt_talk(t, nlh, NULL, NULL);
}

/* Wait until comm @id shows in @t's dump (connecting); false after 5 s. */
static bool comm_wait_listed(struct nlt *t, uint64_t id)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (comm_listed(t, id, NULL) == 1)
			return true;
		usleep(50 * 1000);
	}
	return false;
}

#define OWN_CHECK(cond, ...) do {						\
	if (!(cond)) {								\
		fprintf(stderr, "#   nobody: " __VA_ARGS__);			\
		fprintf(stderr, "\n");						\
		bad++;								\
	}									\
} while (0)

/*
 * The child, as nobody, with a /dev/kcoll file root opened: creates its own comm @own (rank 0
 * of 2, connecting), sees it and not root's @other anywhere (dump, get, events, sysfs), may
 * not abort @other; tells the parent, waits for its word, aborts its own.  Exit status: the
 * number of failed checks.
 */
static int own_child(int fd, uint64_t own, uint64_t other, int wfd, int rfd)
{
	struct create_arg a = { .fd = fd, .id = own };
	struct comm_seen c = { .id = other, .rank = 0 };
	struct nlt *t, *m;
	int bad = 0, ret;
	pthread_t th;
	DIR *d;
	char go;

	if (become_nobody() || !(t = nlt_open()))
		return 100;
	if (pthread_create(&th, NULL, create_thread, &a))
		return 100;
	OWN_CHECK(comm_wait_listed(t, own), "its own comm is not listed");
	OWN_CHECK(comm_listed(t, other, NULL) == 0, "root's comm is listed");
	ret = comm_lookup(t, &c, false);
	OWN_CHECK(ret == -ENOENT, "get of root's comm: %d", ret);
	c.id = own;
	ret = comm_lookup(t, &c, false);
	OWN_CHECK(ret == 0 && c.found, "get of its own comm: %d (%s)", ret, t->ext);
	ret = comm_abort(t, other);
	OWN_CHECK(ret == -EPERM && strstr(t->ext, "CAP_NET_ADMIN"),
		  "abort of root's comm: %d (%s)", ret, t->ext);
	errno = 0;
	m = nlt_monitor();
	OWN_CHECK(!m && errno == EPERM, "events group: %s", m ? "joined" : strerror(errno));
	nlt_close(m);
	errno = 0;
	d = opendir("/sys/kernel/kcoll/comms");
	OWN_CHECK(!d && errno == EACCES, "/sys/kernel/kcoll/comms: %s",
		  d ? "listed" : strerror(errno));
	if (d)
		closedir(d);

	/* Root looks now (it sees both); then our own abort ends our create. */
	if (write(wfd, "r", 1) != 1 || read(rfd, &go, 1) != 1)
		bad++;
	ret = comm_abort(t, own);
	OWN_CHECK(ret == 0, "abort of its own comm: %d (%s)", ret, t->ext);
	pthread_join(th, NULL);
	OWN_CHECK(a.ret == -ECONNABORTED, "its create returned %d", a.ret);
	nlt_close(t);
	return bad;
}

TEST_F_TIMEOUT(pair, users_see_and_abort_their_own_comms_only, 120)
{
	struct create_arg a = { .fd = self->fd, .id = self->id };
	uint64_t own = self->id + 1;
	int to_child[2], to_parent[2], status, fd;
	uint32_t uid = 0;
	pthread_t th;
	char r;

	/* Root's comm, connecting to a rank 1 that never comes. */
	ASSERT_EQ(0, pthread_create(&th, NULL, create_thread, &a));
	ASSERT_TRUE(comm_wait_listed(self->t, self->id));
	fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child)
		_exit(own_child(fd, own, self->id, to_parent[1], to_child[0]));
	close(fd);
	/* The administrator sees every user's comms, with their owners. */
	EXPECT_EQ(1, read(to_parent[0], &r, 1));
	EXPECT_EQ(1, comm_listed(self->t, own, &uid));
	EXPECT_EQ(65534, uid);
	EXPECT_EQ(1, comm_listed(self->t, self->id, &uid));
	EXPECT_EQ(0, uid);
	EXPECT_EQ(1, write(to_child[1], "g", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = -1;
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("%d checks failed as nobody",
						 WEXITSTATUS(status));
	/* ... and may abort any of them. */
	EXPECT_EQ(0, comm_abort(self->t, self->id)) TH_LOG("%s", self->t->ext);
	pthread_join(th, NULL);
	EXPECT_EQ(-ECONNABORTED, a.ret);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

/* One engine-get reply: count the engines and remember the first one's name and pairs. */
struct engines_seen {
	int n;
	char first[32];
	int first_pairs, first_active;
};

static int engine_cb(const struct nlmsghdr *nlh, void *data)
{
	struct engines_seen *e = data;
	const struct nlattr *a, *b;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (e->n)
			break;
		if (mnl_attr_get_type(a) == KCOLL_A_ENGINE_NAME)
			snprintf(e->first, sizeof(e->first), "%s", mnl_attr_get_str(a));
		if (mnl_attr_get_type(a) != KCOLL_A_ENGINE_SERVES)
			continue;
		e->first_pairs++;
		mnl_attr_for_each_nested(b, a)
			if (mnl_attr_get_type(b) == KCOLL_A_ENGINE_PAIR_ACTIVE &&
			    mnl_attr_get_u8(b))
				e->first_active++;
	}
	e->n++;
	return MNL_CB_OK;
}

/*
 * The built-in engine is listed first, declaring every pair kcoll reduces (44: 6 integer
 * types x 4 ops, 4 float types x 5) and serving them all while no other engine is loaded;
 * choosing it is accepted, unknown names and pairs are refused with a message.
 */
TEST_F(nl, engine_show_and_set)
{
	struct engines_seen e = { 0 };
	struct nlt *t = self->t;
	struct nlmsghdr *nlh;

	nlh = nlt_cmd(t, KCOLL_CMD_ENGINE_GET, NLM_F_DUMP);
	ASSERT_EQ(0, nlt_talk(t, nlh, engine_cb, &e)) TH_LOG("%s", t->ext);
	ASSERT_LE(1, e.n);
	EXPECT_TRUE(!strcmp(e.first, "avx2") || !strcmp(e.first, "generic")) TH_LOG("%s", e.first);
	EXPECT_EQ(44, e.first_pairs);
	if (e.n == 1)
		EXPECT_EQ(44, e.first_active);

	nlh = nlt_cmd(t, KCOLL_CMD_ENGINE_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_ENGINE_NAME, e.first);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_DTYPE, KCOLL_INT32);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_OP, KCOLL_SUM);
	EXPECT_EQ(0, nlt_talk(t, nlh, NULL, NULL)) TH_LOG("%s", t->ext);

	nlh = nlt_cmd(t, KCOLL_CMD_ENGINE_SET, 0);
	mnl_attr_put_strz(nlh, KCOLL_A_ENGINE_NAME, "no-such-engine");
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_DTYPE, KCOLL_INT32);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_OP, KCOLL_SUM);
	EXPECT_EQ(-ENOENT, nlt_talk(t, nlh, NULL, NULL));
	EXPECT_STREQ("no reduction engine of that name", t->ext);

	nlh = nlt_cmd(t, KCOLL_CMD_ENGINE_SET, 0);		/* avg of an integer type */
	mnl_attr_put_strz(nlh, KCOLL_A_ENGINE_NAME, e.first);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_DTYPE, KCOLL_INT32);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_OP, KCOLL_AVG);
	EXPECT_EINVAL_MSG(t, nlh);
}

TEST_HARNESS_MAIN
