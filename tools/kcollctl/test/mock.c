// SPDX-License-Identifier: GPL-2.0-only
/*
 * Canned answers for kcollctl's reads, so that every object's output can be checked on the
 * host without the module (selftests/host/test_ctl_views.py compares each object's text and
 * JSON).  Linked with -Wl,--wrap=SYMBOL for each function below: kcollctl's calls come
 * here, the rest of libkcoll.a is the real one.  KCOLL_MOCK_NO_NL=1: the netlink family is
 * absent, so dev and comm show fall back to (this file's) sysfs lists.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

struct kcoll_nl { int events; };
struct kcoll_handle { int fd; };

static void *dup_mem(const void *p, size_t len)
{
	void *q = malloc(len);

	if (q)
		memcpy(q, p, len);
	return q;
}

int __wrap_kcoll_open(const struct kcoll_open_opts *o, struct kcoll_handle **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void __wrap_kcoll_close(struct kcoll_handle *h)
{
	free(h);
}

int __wrap_kcoll_get_info(struct kcoll_handle *h, struct kcoll_info *info)
{
	memset(info, 0, sizeof(*info));
	info->abi_version = 3;
	info->ndevices = 2;
	info->features = 0x5 | 1ULL << 40;	/* two known bits and one from a newer module */
	info->ioctls = 0x7;
	strcpy(info->version, "9.8.7-mock");
	return 0;
}

int __wrap_kcoll_nl_open(struct kcoll_nl **nl)
{
	if (getenv("KCOLL_MOCK_NO_NL"))
		return -ENOENT;
	*nl = calloc(1, sizeof(**nl));
	return *nl ? 0 : -ENOMEM;
}

void __wrap_kcoll_nl_close(struct kcoll_nl *nl)
{
	free(nl);
}

/* ---- dev ---------------------------------------------------------------------------------- */

static const struct kcoll_nl_gid mock_gids[] = {
	{ .index = 0, .gid = { 0xfe, 0x80, [8] = 0x50, 0x54, 0, 0xff, 0xfe, 0x77, 0, 1 },
	  .type = 2, .netdev = "eth0" },
	{ .index = 1, .gid = { [10] = 0xff, 0xff, 169, 254, 77, 9 }, .type = 2,
	  .netdev = "eth0" },
	{ .index = 7, .gid = { 0xfe, 0x80, [15] = 0x42 }, .type = 0 },
};

int __wrap_kcoll_nl_dev_list(struct kcoll_nl *nl, const char *name,
			     struct kcoll_nl_dev **devs, size_t *n)
{
	struct kcoll_nl_dev d[2] = {
		{ .name = "mlx5_0", .node_type = 1, .node_guid = 0xec0d9a0300a1b2c3ULL,
		  .allowed = 0, .tos = 104, .gid_index = 7, .ncomms = 3, .nports = 2 },
		{ .name = "rxe0", .node_type = 2, .node_guid = 0x505400fffe770001ULL,
		  .allowed = 1, .tos = -1, .gid_index = -1, .ncomms = 0, .nports = 1 },
	};
	size_t i, first = 0, cnt = 2;

	if (name) {
		for (first = 0; first < 2 && strcmp(d[first].name, name); first++)
			;
		if (first == 2)
			return -ENODEV;
		cnt = 1;
	}
	*devs = calloc(cnt, sizeof(**devs));
	if (!*devs)
		return -ENOMEM;
	for (i = 0; i < cnt; i++) {
		struct kcoll_nl_dev *o = &(*devs)[i];
		size_t p;

		*o = d[first + i];
		o->ports = calloc(o->nports, sizeof(*o->ports));
		for (p = 0; o->ports && p < o->nports; p++) {
			o->ports[p] = (struct kcoll_nl_port){
				.index = (uint32_t)p + 1, .state = p ? 1 : 4,
				.active_mtu = p ? 256 : 4096, .ngids = p ? 1 : 3,
			};
			o->ports[p].gids = dup_mem(p ? &mock_gids[2] : mock_gids,
						   o->ports[p].ngids * sizeof(mock_gids[0]));
		}
	}
	*n = cnt;
	return 0;
}

void __wrap_kcoll_nl_dev_list_free(struct kcoll_nl_dev *devs, size_t n)
{
	size_t i, p;

	for (i = 0; devs && i < n; i++) {
		for (p = 0; devs[i].ports && p < devs[i].nports; p++)
			free(devs[i].ports[p].gids);
		free(devs[i].ports);
	}
	free(devs);
}

int __wrap_kcoll_dev_list(const struct kcoll_dev_list_opts *o, struct kcoll_dev_entry **devs,
			  size_t *n)
{
	static const struct kcoll_dev_entry d[] = {
		{ "mlx5_0", "InfiniBand", 2, 0, 0xec0d9a0300a1b2c3ULL },
		{ "rxe0", "RoCE", 1, 1, 0x505400fffe770001ULL },
	};

	*devs = dup_mem(d, sizeof(d));
	*n = 2;
	return *devs ? 0 : -ENOMEM;
}

void __wrap_kcoll_dev_list_free(struct kcoll_dev_entry *devs)
{
	free(devs);
}

/* ---- comm --------------------------------------------------------------------------------- */

int __wrap_kcoll_nl_comm_list(struct kcoll_nl *nl, struct kcoll_nl_comm **comms, size_t *n)
{
	static const struct kcoll_nl_peer peers[] = {
		{ .rank = 1, .state = 3, .ready = 1, .pending_sends = 2, .pending_recvs = 5,
		  .idle_ms = 17, .sgid_index = 1, .gid_type = 2, .host = 0, .nic = 1, .leaf = 0 },
		{ .rank = 2, .state = 4, .left = 1, .last_err = -110, .idle_ms = 90210,
		  .sgid_index = -1, .gid_type = -1, .host = 1, .nic = 2, .leaf = 0 },
	};
	struct kcoll_nl_comm c[2] = {
		{ .comm_id = 0x86e20c1d95477967ULL, .rank = 0, .nranks = 3, .owner_pid = 4242,
		  .owner_uid = 1000, .state = 2, .failed_rank = UINT32_MAX, .dev_name = "rxe0",
		  .netns = 0, .tx_bytes = 19922944, .rx_bytes = 19922943, .tx_ops = 31,
		  .rx_ops = 29, .peers_up = 1, .peers_truncated = 1,
		  .op = { .type = 3, .id = 77, .coll = 4, .bytes = 1048576, .step = 3,
			  .nsteps = 8, .wait_peer = 2 },
		  .npeers = 2, .local_rank = 0, .local_size = 2, .hosts = 2, .loc_known = 1,
		  .nics = 3, .leaves = 1 },
		{ .comm_id = 0xabcdefULL, .rank = 3, .nranks = 4, .owner_pid = 5151,
		  .owner_uid = 0, .state = 3, .error = -104, .failed_rank = 1, .netns = 4026531999U,
		  .op = { .type = 1, .id = 12, .bytes = 64, .wait_peer = UINT32_MAX },
		  .local_size = 1, .hosts = 4 },
	};
	size_t i;

	*comms = dup_mem(c, sizeof(c));
	if (!*comms)
		return -ENOMEM;
	for (i = 0; i < 2; i++)
		(*comms)[i].peers = (*comms)[i].npeers ? dup_mem(peers, sizeof(peers)) : NULL;
	*n = 2;
	return 0;
}

void __wrap_kcoll_nl_comm_list_free(struct kcoll_nl_comm *comms, size_t n)
{
	size_t i;

	for (i = 0; comms && i < n; i++)
		free(comms[i].peers);
	free(comms);
}

int __wrap_kcoll_comm_list(const struct kcoll_comm_list_opts *o,
			   struct kcoll_comm_entry **comms, size_t *n)
{
	static const struct kcoll_comm_entry c[] = {
		{ "0000000000abcdef-3", 0xabcdefULL, 3, 4, "error", -104, 4242, 0, 0, 0, 0, 0 },
		{ "86e20c1d95477967-0", 0x86e20c1d95477967ULL, 0, 2, "ready", 0, 99, 1, 1, 2, 3,
		  4 },
	};

	*comms = dup_mem(c, sizeof(c));
	*n = 2;
	return *comms ? 0 : -ENOMEM;
}

void __wrap_kcoll_comm_list_free(struct kcoll_comm_entry *comms)
{
	free(comms);
}

/* ---- engine, config ----------------------------------------------------------------------- */

int __wrap_kcoll_nl_engine_list(struct kcoll_nl *nl, struct kcoll_nl_engine **engines,
				size_t *n)
{
	static const struct kcoll_nl_engine_pair pairs[] = {
		{ KCOLL_FP32, KCOLL_SUM, 1 }, { KCOLL_INT32, KCOLL_MAX, 0 },
	};
	struct kcoll_nl_engine e[2] = {
		{ .name = "avx2", .priority = 9, .npairs = 2 },
		{ .name = "offload", .priority = 0, .npairs = 1 },
	};

	*engines = dup_mem(e, sizeof(e));
	if (!*engines)
		return -ENOMEM;
	(*engines)[0].pairs = dup_mem(pairs, sizeof(pairs));
	(*engines)[1].pairs = dup_mem(&pairs[1], sizeof(pairs[1]));
	*n = 2;
	return 0;
}

void __wrap_kcoll_nl_engine_list_free(struct kcoll_nl_engine *engines, size_t n)
{
	size_t i;

	for (i = 0; engines && i < n; i++)
		free(engines[i].pairs);
	free(engines);
}

int __wrap_kcoll_nl_config_get_opts(struct kcoll_nl *nl, struct kcoll_nl_config_opts *cfg)
{
	memset(&cfg->mask, 0, sizeof(*cfg) - offsetof(struct kcoll_nl_config_opts, mask));
	cfg->mask = 0x7ff;
	cfg->listen_port = 18515;
	cfg->connect_timeout_ms = 30000;
	cfg->op_timeout_ms = 120000;
	cfg->tos = -1;
	cfg->chunk_bytes = 262144;
	cfg->small_bytes = 4096;
	cfg->medium_bytes = 524288;
	cfg->tree_ranks = 16;
	cfg->algo_mask = 1u << 4 | 1u << 0;
	cfg->algo[4] = 1;
	cfg->algo[0] = 5;
	cfg->transport = KCOLL_CONFIG_TRANSPORT_TCP;
	cfg->tcp_port = 18777;
	return 0;
}

/* ---- monitor ------------------------------------------------------------------------------ */

int __wrap_kcoll_nl_monitor(struct kcoll_nl *nl)
{
	return 0;
}

int __wrap_kcoll_nl_event_next(struct kcoll_nl *nl, struct kcoll_nl_event *ev, int timeout_ms)
{
	static const struct kcoll_nl_event evs[] = {
		{ .cmd = KCOLL_CMD_COMM_CREATED_NTF, .comm_id = 0x86e20c1d95477967ULL, .rank = 0,
		  .nranks = 3, .netns = 4026531840U, .state = 0, .failed_rank = UINT32_MAX,
		  .peer_rank = UINT32_MAX },
		{ .cmd = KCOLL_CMD_PEER_LOST_NTF, .comm_id = 0x86e20c1d95477967ULL, .rank = 0,
		  .nranks = 3, .error = -110, .failed_rank = 1, .peer_rank = 2 },
		{ .cmd = KCOLL_CMD_DEV_ADDED_NTF, .dev_name = "rxe1", .node_type = 2, .allowed = 1,
		  .failed_rank = UINT32_MAX, .peer_rank = UINT32_MAX },
		{ .cmd = KCOLL_CMD_ENGINE_REGISTERED_NTF, .engine = "offload", .priority = 3,
		  .failed_rank = UINT32_MAX, .peer_rank = UINT32_MAX },
	};

	if ((size_t)nl->events >= sizeof(evs) / sizeof(evs[0]))
		return -EAGAIN;
	*ev = evs[nl->events++];
	return 0;
}
