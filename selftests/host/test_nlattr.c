// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control plane's attribute tables (lib/nl_attr.c and the object files): messages built
 * here as the module sends them, decoded as kcoll_nl_*_list() and kcoll_nl_event_next() do,
 * with every default that an absent attribute leaves.
 */
#include <stdint.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/kcoll_netlink.h>

#include "../../lib/libkcoll_internal.h"
#include "../../lib/nl_internal.h"

#include "kselftest_harness.h"

#define FAMILY	0x20

static char buf[8192];

static struct nlmsghdr *msg_start(uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));

	nlh->nlmsg_type = FAMILY;
	g->cmd = cmd;
	return nlh;
}

/* One answer decoded into one more element of *@arr, as kcoll_nl_list() does. */
static int decode(const struct kcoll_nl_obj *o, const struct nlmsghdr *nlh, void **arr,
		  size_t *n)
{
	void *e = kcoll_nl_grow(arr, n, o->size);

	if (!e)
		return -1;
	kcoll_nl_init(o, e);
	return kcoll_nl_parse_msg(o, nlh, e);
}

TEST(comm_fields_and_defaults)
{
	struct nlmsghdr *nlh = msg_start(KCOLL_CMD_COMM_GET);
	struct kcoll_nl_comm *c = NULL;
	struct nlattr *nest;
	size_t n = 0;

	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, 0x86e20c1d95477967ull);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, 1);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_NRANKS, 3);
	mnl_attr_put_u8(nlh, KCOLL_A_COMM_STATE, 2);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_ERROR, (uint32_t)-110);
	mnl_attr_put_strz(nlh, KCOLL_A_COMM_DEV_NAME, "rxe0");
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_TX_BYTES, 1ull << 40);
	mnl_attr_put_u32(nlh, __KCOLL_A_COMM_MAX + 3, 7);	/* newer module: skipped */
	nest = mnl_attr_nest_start(nlh, KCOLL_A_COMM_PEER);
	mnl_attr_put_u32(nlh, KCOLL_A_PEER_RANK, 0);
	mnl_attr_put_u32(nlh, KCOLL_A_PEER_SGID_INDEX, 3);
	mnl_attr_put_u8(nlh, KCOLL_A_PEER_GID_TYPE, 2);
	mnl_attr_put_u32(nlh, KCOLL_A_PEER_HOST, 1);
	mnl_attr_put_strz(nlh, KCOLL_A_PEER_TRANSPORT, "rdma");
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_COMM_PEER);
	mnl_attr_put_u32(nlh, KCOLL_A_PEER_RANK, 2);
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put(nlh, KCOLL_A_COMM_PEERS_TRUNCATED, 0, NULL);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_COMM_OP);
	mnl_attr_put_u32(nlh, KCOLL_A_OP_STEP, 4);
	mnl_attr_put_u64(nlh, KCOLL_A_OP_BYTES, 1 << 20);
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_HOST, 0);

	ASSERT_EQ(0, decode(&kcoll_nl_comm_obj, nlh, (void **)&c, &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(0x86e20c1d95477967ull, c->comm_id);
	EXPECT_EQ(1, c->rank);
	EXPECT_EQ(3, c->nranks);
	EXPECT_EQ(2, c->state);
	EXPECT_EQ(-110, c->error);
	EXPECT_STREQ("rxe0", c->dev_name);
	EXPECT_EQ(1ull << 40, c->tx_bytes);
	EXPECT_EQ(UINT32_MAX, c->failed_rank);		/* absent: none */
	EXPECT_EQ(1, c->peers_truncated);
	EXPECT_EQ(1, c->loc_known);			/* the host came */
	EXPECT_EQ(4, c->op.step);
	EXPECT_EQ(1 << 20, c->op.bytes);
	EXPECT_EQ(UINT32_MAX, c->op.wait_peer);		/* a nest's default without it */
	ASSERT_EQ(2, c->npeers);
	EXPECT_EQ(3, c->peers[0].sgid_index);
	EXPECT_EQ(2, c->peers[0].gid_type);
	EXPECT_EQ(1, c->peers[0].host);
	EXPECT_EQ(UINT32_MAX, c->peers[0].nic);
	EXPECT_STREQ("rdma", c->peers[0].transport);
	EXPECT_EQ(2, c->peers[1].rank);
	EXPECT_EQ(-1, c->peers[1].sgid_index);
	EXPECT_EQ(-1, c->peers[1].gid_type);
	EXPECT_EQ(UINT32_MAX, c->peers[1].host);
	EXPECT_EQ(UINT32_MAX, c->peers[1].leaf);
	EXPECT_STREQ("", c->peers[1].transport);
	kcoll_nl_comm_list_free(c, n);
}

TEST(comm_without_locality)
{
	struct nlmsghdr *nlh = msg_start(KCOLL_CMD_COMM_GET);
	struct kcoll_nl_comm *c = NULL;
	size_t n = 0;

	mnl_attr_put_u32(nlh, KCOLL_A_COMM_FAILED_RANK, 2);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_NIC, 1);
	ASSERT_EQ(0, decode(&kcoll_nl_comm_obj, nlh, (void **)&c, &n));
	EXPECT_EQ(2, c->failed_rank);
	EXPECT_EQ(0, c->loc_known);
	EXPECT_EQ(1, c->nic);
	EXPECT_EQ(0, c->npeers);
	EXPECT_EQ(NULL, c->peers);
	kcoll_nl_comm_list_free(c, n);
}

TEST(dev_ports_gids)
{
	struct nlmsghdr *nlh = msg_start(KCOLL_CMD_DEV_GET);
	struct kcoll_nl_dev *d = NULL;
	uint8_t gid[16] = { 0xfe, 0x80, [15] = 0x55 };
	struct nlattr *port, *nest;
	size_t n = 0;

	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, "rxe0");
	mnl_attr_put_u8(nlh, KCOLL_A_DEV_ALLOWED, 1);
	mnl_attr_put_u64(nlh, KCOLL_A_DEV_NODE_GUID, 0x021122fffe334455ull);
	port = mnl_attr_nest_start(nlh, KCOLL_A_DEV_PORT);
	mnl_attr_put_u32(nlh, KCOLL_A_PORT_INDEX, 1);
	mnl_attr_put_u32(nlh, KCOLL_A_PORT_ACTIVE_MTU, 4096);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_PORT_GID);
	mnl_attr_put_u32(nlh, KCOLL_A_GID_INDEX, 1);
	mnl_attr_put(nlh, KCOLL_A_GID_GID, sizeof(gid), gid);
	mnl_attr_put_strz(nlh, KCOLL_A_GID_NETDEV, "eth0");
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_PORT_GID);
	mnl_attr_put_u32(nlh, KCOLL_A_GID_INDEX, 2);
	mnl_attr_put(nlh, KCOLL_A_GID_GID, 4, gid);		/* wrong length: left out */
	mnl_attr_put(nlh, KCOLL_A_GID_NETDEV, 3, "eth");	/* no NUL: left out */
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_nest_end(nlh, port);

	ASSERT_EQ(0, decode(&kcoll_nl_dev_obj, nlh, (void **)&d, &n));
	ASSERT_EQ(1, n);
	EXPECT_STREQ("rxe0", d->name);
	EXPECT_EQ(1, d->allowed);
	EXPECT_EQ(0x021122fffe334455ull, d->node_guid);
	EXPECT_EQ(-1, d->tos);
	EXPECT_EQ(-1, d->gid_index);
	ASSERT_EQ(1, d->nports);
	EXPECT_EQ(4096, d->ports[0].active_mtu);
	ASSERT_EQ(2, d->ports[0].ngids);
	EXPECT_EQ(0, memcmp(gid, d->ports[0].gids[0].gid, sizeof(gid)));
	EXPECT_STREQ("eth0", d->ports[0].gids[0].netdev);
	EXPECT_EQ(2, d->ports[0].gids[1].index);
	EXPECT_EQ(0, d->ports[0].gids[1].gid[0]);
	EXPECT_STREQ("", d->ports[0].gids[1].netdev);
	kcoll_nl_dev_list_free(d, n);
}

TEST(engine_pairs)
{
	struct nlmsghdr *nlh = msg_start(KCOLL_CMD_ENGINE_GET);
	struct kcoll_nl_engine *e = NULL;
	struct nlattr *nest;
	size_t n = 0;
	int i;

	mnl_attr_put_strz(nlh, KCOLL_A_ENGINE_NAME, "generic");
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_PRIORITY, 9);
	for (i = 0; i < 3; i++) {
		nest = mnl_attr_nest_start(nlh, KCOLL_A_ENGINE_SERVES);
		mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_PAIR_DTYPE, i);
		mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_PAIR_OP, 1);
		mnl_attr_put_u8(nlh, KCOLL_A_ENGINE_PAIR_ACTIVE, i & 1);
		mnl_attr_nest_end(nlh, nest);
	}
	ASSERT_EQ(0, decode(&kcoll_nl_engine_obj, nlh, (void **)&e, &n));
	EXPECT_STREQ("generic", e->name);
	EXPECT_EQ(9, e->priority);
	ASSERT_EQ(3, e->npairs);
	EXPECT_EQ(2, e->pairs[2].dtype);
	EXPECT_EQ(1, e->pairs[1].active);
	EXPECT_EQ(0, e->pairs[2].active);
	kcoll_nl_engine_list_free(e, n);
}

/* What kcoll_nl_config_set_opts() puts, _get_opts() reads back, masks included. */
TEST(config_round_trip)
{
	struct nlmsghdr *nlh = msg_start(KCOLL_CMD_CONFIG_GET);
	KCOLL_OPTS(kcoll_nl_config_opts, in,
		   .mask = KCOLL_NL_CFG_LISTEN_PORT | KCOLL_NL_CFG_TOS | KCOLL_NL_CFG_TREE_RANKS |
			   KCOLL_NL_CFG_TRANSPORT | KCOLL_NL_CFG_TCP_PORT,
		   .listen_port = 18515, .tos = -1, .tree_ranks = 64, .chunk_bytes = 777,
		   .transport = KCOLL_CONFIG_TRANSPORT_TCP, .tcp_port = 18777);
	KCOLL_OPTS(kcoll_nl_config_opts, out);
	struct nlattr *nest;

	kcoll_nl_put_fields(nlh, &kcoll_nl_config_obj, &in, in.mask);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, 3);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, 2);
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);	/* no algorithm: ignored */
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, 4);
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);	/* out of range: ignored */
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, KCOLL_NL_MAX_COLLECTIVES);
	mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, 1);
	mnl_attr_nest_end(nlh, nest);

	ASSERT_EQ(0, kcoll_nl_parse_msg(&kcoll_nl_config_obj, nlh, &out));
	EXPECT_EQ(in.mask | KCOLL_NL_CFG_ALGO, out.mask);
	EXPECT_EQ(18515, out.listen_port);
	EXPECT_EQ(-1, out.tos);
	EXPECT_EQ(64, out.tree_ranks);
	EXPECT_EQ(KCOLL_CONFIG_TRANSPORT_TCP, out.transport);
	EXPECT_EQ(18777, out.tcp_port);
	EXPECT_EQ(0, out.chunk_bytes);			/* not in the mask: not sent */
	EXPECT_EQ(1u << 3, out.algo_mask);
	EXPECT_EQ(2, out.algo[3]);
}

/* A struct kcoll_nl_config_opts of a newer libkcoll: one more field. */
struct kcoll_nl_config_opts_next {
	struct kcoll_nl_config_opts base;
	uint64_t new_field;
};

/*
 * The opts' size is checked before anything is sent (so with no socket): below the first
 * published size -EINVAL, a larger struct with a non-zero tail -E2BIG, a zero tail is an
 * older caller's and goes on to the next check (the missing handle).
 */
TEST(config_opts_sz)
{
	struct kcoll_nl_config_opts_next next;
	KCOLL_OPTS(kcoll_nl_config_opts, opts);

	memset(&next, 0, sizeof(next));
	next.base.sz = sizeof(next);
	next.new_field = 1;
	EXPECT_EQ(-E2BIG, kcoll_nl_config_get_opts(NULL, &next.base));
	EXPECT_EQ(-E2BIG, kcoll_nl_config_set_opts(NULL, &next.base));
	next.new_field = 0;
	EXPECT_EQ(-EINVAL, kcoll_nl_config_get_opts(NULL, &next.base));
	EXPECT_EQ(NULL, strstr(kcoll_last_error(), "opts->sz"));
	opts.sz = offsetof(struct kcoll_nl_config_opts, tcp_port);
	EXPECT_EQ(-EINVAL, kcoll_nl_config_get_opts(NULL, &opts));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "opts->sz"));
	EXPECT_EQ(-EINVAL, kcoll_nl_config_set_opts(NULL, &opts));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "opts->sz"));
	EXPECT_EQ(-EINVAL, kcoll_nl_config_get_opts(NULL, NULL));
}

/* The transport setting's names, both ways, from the one table (include/kcoll_names.h). */
TEST(transport_names)
{
	EXPECT_STREQ("auto", kcoll_transport_str(KCOLL_CONFIG_TRANSPORT_AUTO));
	EXPECT_STREQ("rdma", kcoll_transport_str(KCOLL_CONFIG_TRANSPORT_RDMA));
	EXPECT_STREQ("tcp", kcoll_transport_str(KCOLL_CONFIG_TRANSPORT_TCP));
	EXPECT_EQ(NULL, kcoll_transport_str(KCOLL_CONFIG_TRANSPORT_TCP + 1));
	EXPECT_EQ(NULL, kcoll_transport_str(-1));
	EXPECT_EQ(KCOLL_CONFIG_TRANSPORT_TCP, kcoll_transport_from_str("tcp"));
	EXPECT_EQ(-EINVAL, kcoll_transport_from_str("udp"));
	EXPECT_EQ(-EINVAL, kcoll_transport_from_str(NULL));
}

TEST(events)
{
	struct nlmsghdr *nlh = msg_start(KCOLL_CMD_DEV_ADDED_NTF);
	struct kcoll_nl_event ev;

	/* A device event reads the device attributes only. */
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, "rxe1");
	mnl_attr_put_u8(nlh, KCOLL_A_DEV_NODE_TYPE, 4);
	memset(&ev, 0x5a, sizeof(ev));
	EXPECT_EQ(MNL_CB_STOP, kcoll_nl_event_parse(nlh, FAMILY, &ev));
	EXPECT_EQ(KCOLL_CMD_DEV_ADDED_NTF, ev.cmd);
	EXPECT_STREQ("rxe1", ev.dev_name);
	EXPECT_EQ(4, ev.node_type);
	EXPECT_EQ(-1, ev.allowed);
	EXPECT_EQ(UINT32_MAX, ev.failed_rank);
	EXPECT_EQ(UINT32_MAX, ev.peer_rank);
	EXPECT_EQ(0, ev.comm_id);

	nlh = msg_start(KCOLL_CMD_PEER_LOST_NTF);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, 42);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_PEER_RANK, 2);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_ERROR, (uint32_t)-104);
	EXPECT_EQ(MNL_CB_STOP, kcoll_nl_event_parse(nlh, FAMILY, &ev));
	EXPECT_EQ(42, ev.comm_id);
	EXPECT_EQ(2, ev.peer_rank);
	EXPECT_EQ(-104, ev.error);
	EXPECT_EQ(UINT32_MAX, ev.failed_rank);
	EXPECT_STREQ("", ev.dev_name);

	/* Another family's message leaves the event alone. */
	memset(&ev, 0, sizeof(ev));
	EXPECT_EQ(MNL_CB_OK, kcoll_nl_event_parse(nlh, FAMILY + 1, &ev));
	EXPECT_EQ(0, ev.cmd);
}

TEST_HARNESS_MAIN
