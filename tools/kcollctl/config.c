// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl config, stats and monitor: objects that exist only through the "kcoll" generic
 * netlink family.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libkcoll.h>

#include "kcollctl.h"

/* ---- config -------------------------------------------------------------------------------- */

static void kcoll_ctl_config_usage(FILE *f)
{
	fputs("Usage: kcollctl config [ show ]\n"
	      "       kcollctl config set { KEY VALUE | algo COLL ALGO } ...\n"
	      "       kcollctl config help\n"
	      "where  KEY := { listen_port | connect_timeout_ms | op_timeout_ms | tos |\n"
	      "                chunk_bytes | small_bytes | medium_bytes | tree_ranks }\n"
	      "       tos VALUE := { 0..255 | default }\n"
	      "       COLL := { broadcast | scatter | gather | reduce | allreduce | allgather |\n"
	      "                 reduce_scatter | alltoall | barrier | allgatherv | alltoallv |\n"
	      "                 reduce_scatterv }\n"
	      "       ALGO := { auto | ring | recdbl | rabenseifner | binomial | dbtree | chain |\n"
	      "                 pairwise | bruck }\n"
	      "config set needs CAP_NET_ADMIN; the kernel checks every value.\n", f);
}

struct kcoll_ctl_cfg_key {
	const char *name;
	uint32_t bit;
	size_t off;
	int size;	/* 2: u16, 4: u32, -4: s32 */
};

#define KCOLL_CTL_CFG(n, b, f, s) { n, b, offsetof(struct kcoll_nl_config, f), s }

static const struct kcoll_ctl_cfg_key kcoll_ctl_cfg_keys[] = {
	KCOLL_CTL_CFG("listen_port", KCOLL_NL_CFG_LISTEN_PORT, listen_port, 2),
	KCOLL_CTL_CFG("connect_timeout_ms", KCOLL_NL_CFG_CONNECT_TIMEOUT, connect_timeout_ms, 4),
	KCOLL_CTL_CFG("op_timeout_ms", KCOLL_NL_CFG_OP_TIMEOUT, op_timeout_ms, 4),
	KCOLL_CTL_CFG("tos", KCOLL_NL_CFG_TOS, tos, -4),
	KCOLL_CTL_CFG("chunk_bytes", KCOLL_NL_CFG_CHUNK_BYTES, chunk_bytes, 4),
	KCOLL_CTL_CFG("small_bytes", KCOLL_NL_CFG_SMALL_BYTES, small_bytes, 4),
	KCOLL_CTL_CFG("medium_bytes", KCOLL_NL_CFG_MEDIUM_BYTES, medium_bytes, 4),
	KCOLL_CTL_CFG("tree_ranks", KCOLL_NL_CFG_TREE_RANKS, tree_ranks, 4),
};

#define KCOLL_CTL_NKEYS	(sizeof(kcoll_ctl_cfg_keys) / sizeof(kcoll_ctl_cfg_keys[0]))

static int64_t kcoll_ctl_cfg_get(const struct kcoll_nl_config *c, const struct kcoll_ctl_cfg_key *k)
{
	const char *p = (const char *)c + k->off;

	if (k->size == 2)
		return *(const uint16_t *)p;
	if (k->size == -4)
		return *(const int32_t *)p;
	return *(const uint32_t *)p;
}

static int kcoll_ctl_config_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_nl_config c;
	struct kcoll_nl *nl;
	size_t i;
	int ret;

	if (argc)
		return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
					   "config show: unexpected argument \"%s\"", argv[0]);
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_nl_config_get(nl, &c);
	kcoll_nl_close(nl);
	if (ret)
		return kcoll_ctl_nl_err("config show", ret);
	if (ctl->json) {
		kcoll_ctl_json_begin(ctl);
		kcoll_jw_obj_open(&ctl->jw);
	}
	for (i = 0; i < KCOLL_CTL_NKEYS; i++) {
		const struct kcoll_ctl_cfg_key *k = &kcoll_ctl_cfg_keys[i];
		int64_t v = kcoll_ctl_cfg_get(&c, k);

		if (!(c.mask & k->bit))
			continue;
		if (ctl->json) {
			kcoll_jw_key(&ctl->jw, k->name);
			kcoll_jw_int(&ctl->jw, v);
		} else {
			printf("%s %" PRId64 "\n", k->name, v);
		}
	}
	if (ctl->json) {
		kcoll_jw_key(&ctl->jw, "algo");
		kcoll_jw_obj_open(&ctl->jw);
	}
	for (i = 0; kcoll_ctl_colls[i] && i < KCOLL_NL_MAX_COLLECTIVES; i++) {
		const char *a;

		if (!(c.algo_mask & (1u << i)))
			continue;
		a = c.algo[i] < KCOLL_NUM_ALGORITHMS ? kcoll_ctl_algos[c.algo[i]] : "unknown";
		if (ctl->json)
			kcoll_jw_kv_str(&ctl->jw, kcoll_ctl_colls[i], a);
		else
			printf("algo %s %s\n", kcoll_ctl_colls[i], a);
	}
	if (!ctl->json)
		return KCOLL_CTL_OK;
	kcoll_jw_obj_close(&ctl->jw);
	kcoll_jw_obj_close(&ctl->jw);
	return kcoll_ctl_json_end(ctl);
}

static int kcoll_ctl_config_set(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_nl_config c = { 0 };
	struct kcoll_nl *nl;
	int i, ret, coll, algo;
	size_t k;

	(void)ctl;
	if (!argc)
		return kcoll_ctl_usage_err(&kcoll_ctl_config_obj, "config set: nothing to set");
	for (i = 0; i < argc; i += 2) {
		if (!strcmp(argv[i], "algo")) {
			if (i + 2 >= argc)
				return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
							   "config set: algo needs COLL ALGO");
			coll = kcoll_ctl_lookup(kcoll_ctl_colls, argv[i + 1]);
			algo = kcoll_ctl_lookup(kcoll_ctl_algos, argv[i + 2]);
			if (coll < 0 || algo < 0)
				return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
							   "config set: unknown %s \"%s\"",
							   coll < 0 ? "collective" : "algorithm",
							   coll < 0 ? argv[i + 1] : argv[i + 2]);
			c.mask |= KCOLL_NL_CFG_ALGO;
			c.algo_mask |= 1u << coll;
			c.algo[coll] = algo;
			i++;
			continue;
		}
		for (k = 0; k < KCOLL_CTL_NKEYS; k++) {
			if (!strcmp(argv[i], kcoll_ctl_cfg_keys[k].name))
				break;
		}
		if (k == KCOLL_CTL_NKEYS)
			return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
						   "config set: unknown key \"%s\"", argv[i]);
		if (i + 1 >= argc)
			return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
						   "config set: %s needs a value", argv[i]);
		{
			const struct kcoll_ctl_cfg_key *key = &kcoll_ctl_cfg_keys[k];
			char *p = (char *)&c + key->off, *end;
			long long v;

			if (key->size == -4 && !strcmp(argv[i + 1], "default")) {
				v = -1;
			} else {
				errno = 0;
				v = strtoll(argv[i + 1], &end, 0);
				/* Range checks are the kernel's; only reject what does not fit. */
				if (errno || !*argv[i + 1] || *end || v < INT32_MIN ||
				    v > UINT32_MAX || (key->size == 2 && (v < 0 || v > 65535)))
					return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
								   "config set: bad %s \"%s\"",
								   key->name, argv[i + 1]);
			}
			if (key->size == 2)
				*(uint16_t *)p = (uint16_t)v;
			else if (key->size == -4)
				*(int32_t *)p = (int32_t)v;
			else
				*(uint32_t *)p = (uint32_t)v;
			c.mask |= key->bit;
		}
	}
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_nl_config_set(nl, &c);
	kcoll_nl_close(nl);
	if (ret)
		return kcoll_ctl_nl_err("config set", ret);
	return KCOLL_CTL_OK;
}

static const struct kcoll_ctl_cmd kcoll_ctl_config_cmds[] = {
	{ "show",	kcoll_ctl_config_show },
	{ "set",	kcoll_ctl_config_set },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_config_obj = {
	.name		= "config",
	.summary	= "module configuration (timeouts, port, tos, collective tuning)",
	.cmds		= kcoll_ctl_config_cmds,
	.usage		= kcoll_ctl_config_usage,
};

/* ---- stats --------------------------------------------------------------------------------- */

static void kcoll_ctl_stats_usage(FILE *f)
{
	fputs("Usage: kcollctl stats [ show ]\n"
	      "       kcollctl stats help\n"
	      "Traffic counters of every communicator on the node, and their totals.\n", f);
}

static int kcoll_ctl_stats_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	uint64_t tx = 0, rx = 0, txo = 0, rxo = 0;
	struct kcoll_nl_comm *comms;
	struct kcoll_nl *nl;
	char id[40];
	size_t n, i;
	int ret;

	if (argc)
		return kcoll_ctl_usage_err(&kcoll_ctl_stats_obj,
					   "stats show: unexpected argument \"%s\"", argv[0]);
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_nl_comm_list(nl, &comms, &n);
	kcoll_nl_close(nl);
	if (ret)
		return kcoll_ctl_nl_err("stats show", ret);
	if (ctl->json) {
		kcoll_ctl_json_begin(ctl);
		kcoll_jw_obj_open(&ctl->jw);
		kcoll_jw_key(&ctl->jw, "comms");
		kcoll_jw_arr_open(&ctl->jw);
	}
	for (i = 0; i < n; i++) {
		const struct kcoll_nl_comm *c = &comms[i];

		snprintf(id, sizeof(id), "%016" PRIx64 "-%" PRIu32, c->comm_id, c->rank);
		tx += c->tx_bytes;
		rx += c->rx_bytes;
		txo += c->tx_ops;
		rxo += c->rx_ops;
		if (ctl->json) {
			kcoll_jw_obj_open(&ctl->jw);
			kcoll_jw_kv_str(&ctl->jw, "name", id);
			kcoll_jw_kv_uint(&ctl->jw, "tx_bytes", c->tx_bytes);
			kcoll_jw_kv_uint(&ctl->jw, "rx_bytes", c->rx_bytes);
			kcoll_jw_kv_uint(&ctl->jw, "tx_ops", c->tx_ops);
			kcoll_jw_kv_uint(&ctl->jw, "rx_ops", c->rx_ops);
			kcoll_jw_obj_close(&ctl->jw);
		} else {
			printf("%s: tx %" PRIu64 "B/%" PRIu64 " rx %" PRIu64 "B/%" PRIu64 "\n", id,
			       c->tx_bytes, c->tx_ops, c->rx_bytes, c->rx_ops);
		}
	}
	kcoll_nl_comm_list_free(comms, n);
	if (!ctl->json) {
		printf("total: comms %zu tx %" PRIu64 "B/%" PRIu64 " rx %" PRIu64 "B/%" PRIu64 "\n",
		       n, tx, txo, rx, rxo);
		return KCOLL_CTL_OK;
	}
	kcoll_jw_arr_close(&ctl->jw);
	kcoll_jw_kv_uint(&ctl->jw, "ncomms", n);
	kcoll_jw_kv_uint(&ctl->jw, "tx_bytes", tx);
	kcoll_jw_kv_uint(&ctl->jw, "rx_bytes", rx);
	kcoll_jw_kv_uint(&ctl->jw, "tx_ops", txo);
	kcoll_jw_kv_uint(&ctl->jw, "rx_ops", rxo);
	kcoll_jw_obj_close(&ctl->jw);
	return kcoll_ctl_json_end(ctl);
}

static const struct kcoll_ctl_cmd kcoll_ctl_stats_cmds[] = {
	{ "show",	kcoll_ctl_stats_show },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_stats_obj = {
	.name		= "stats",
	.summary	= "traffic counters of the communicators",
	.cmds		= kcoll_ctl_stats_cmds,
	.usage		= kcoll_ctl_stats_usage,
};

/* ---- monitor ------------------------------------------------------------------------------- */

static void kcoll_ctl_monitor_usage(FILE *f)
{
	fputs("Usage: kcollctl monitor [ show ] [ count N ] [ timeout SECONDS ]\n"
	      "       kcollctl monitor help\n"
	      "Print kcoll events (communicators created, destroyed, failed, peers lost,\n"
	      "devices added and removed) as they happen; with -j one JSON object per line.\n"
	      "Stops after N events, or after SECONDS (exit status 1 if fewer than N came).\n",
	      f);
}

static const char *const kcoll_ctl_ev_states[] = {
	"creating", "connecting", "ready", "error", "aborted", "destroyed",
};

static void kcoll_ctl_event_print(struct kcoll_ctl *ctl, const struct kcoll_nl_event *ev)
{
	const char *name = kcoll_nl_event_str(ev->cmd);
	bool dev = ev->cmd == KCOLL_CMD_DEV_ADDED_NTF || ev->cmd == KCOLL_CMD_DEV_REMOVED_NTF;
	bool engine = ev->cmd == KCOLL_CMD_ENGINE_REGISTERED_NTF;
	const char *state = ev->state < 6 ? kcoll_ctl_ev_states[ev->state] : "unknown";
	char id[20];

	snprintf(id, sizeof(id), "%016" PRIx64, ev->comm_id);
	if (!ctl->json) {
		printf("%s", name ? name : "unknown");
		if (dev)
			printf(" dev %s", ev->dev_name);
		else if (engine)
			printf(" engine %s priority %" PRIu32, ev->engine, ev->priority);
		else
			printf(" comm %s-%" PRIu32 " nranks %" PRIu32, id, ev->rank, ev->nranks);
		if (ev->cmd != KCOLL_CMD_PEER_LOST_NTF && !dev && !engine)
			printf(" state %s", state);
		if (ev->peer_rank != UINT32_MAX)
			printf(" peer %" PRIu32, ev->peer_rank);
		if (ev->error)
			printf(" error %" PRId32 " (%s)", ev->error, strerror(-ev->error));
		putchar('\n');
		fflush(stdout);
		return;
	}
	kcoll_ctl_json_begin(ctl);
	kcoll_jw_obj_open(&ctl->jw);
	kcoll_jw_kv_str(&ctl->jw, "event", name ? name : "unknown");
	if (dev) {
		kcoll_jw_kv_str(&ctl->jw, "dev", ev->dev_name);
	} else if (engine) {
		kcoll_jw_kv_str(&ctl->jw, "engine", ev->engine);
		kcoll_jw_kv_uint(&ctl->jw, "priority", ev->priority);
	} else {
		kcoll_jw_kv_str(&ctl->jw, "comm_id", id);
		kcoll_jw_kv_uint(&ctl->jw, "rank", ev->rank);
		kcoll_jw_kv_uint(&ctl->jw, "nranks", ev->nranks);
		kcoll_jw_kv_uint(&ctl->jw, "netns", ev->netns);
		if (ev->cmd != KCOLL_CMD_PEER_LOST_NTF)
			kcoll_jw_kv_str(&ctl->jw, "state", state);
		if (ev->peer_rank != UINT32_MAX)
			kcoll_jw_kv_uint(&ctl->jw, "peer", ev->peer_rank);
		if (ev->failed_rank != UINT32_MAX)
			kcoll_jw_kv_uint(&ctl->jw, "failed_rank", ev->failed_rank);
		kcoll_jw_key(&ctl->jw, "error");
		kcoll_jw_int(&ctl->jw, ev->error);
	}
	kcoll_jw_obj_close(&ctl->jw);
	kcoll_ctl_json_end(ctl);
	fflush(stdout);
}

static int kcoll_ctl_monitor(struct kcoll_ctl *ctl, int argc, char **argv)
{
	long count = 0, timeout = -1, got = 0;
	struct kcoll_nl_event ev;
	struct timespec t0, t;
	struct kcoll_nl *nl;
	int i, ret, wait;
	char *end;

	if (argc && !strcmp(argv[0], "show")) {
		argc--;
		argv++;
	}
	for (i = 0; i < argc; i += 2) {
		long *v = !strcmp(argv[i], "count") ? &count :
			  !strcmp(argv[i], "timeout") ? &timeout : NULL;

		if (!v || i + 1 >= argc)
			return kcoll_ctl_usage_err(&kcoll_ctl_monitor_obj,
						   "monitor: bad argument \"%s\"", argv[i]);
		errno = 0;
		*v = strtol(argv[i + 1], &end, 10);
		if (errno || *end || !*argv[i + 1] || *v < 0 || *v > 86400 * 365)
			return kcoll_ctl_usage_err(&kcoll_ctl_monitor_obj,
						   "monitor: bad %s \"%s\"", argv[i], argv[i + 1]);
	}
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_nl_monitor(nl);
	if (ret) {
		kcoll_nl_close(nl);
		return kcoll_ctl_nl_err("monitor", ret);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		wait = -1;
		if (timeout >= 0) {
			long ms;

			clock_gettime(CLOCK_MONOTONIC, &t);
			ms = timeout * 1000 - ((t.tv_sec - t0.tv_sec) * 1000 +
					       (t.tv_nsec - t0.tv_nsec) / 1000000);
			if (ms <= 0)
				break;
			wait = (int)ms;
		}
		ret = kcoll_nl_event_next(nl, &ev, wait);
		if (ret == -EAGAIN)
			break;
		if (ret == -ENOBUFS) {
			fprintf(stderr, "kcollctl: monitor: events were lost\n");
			continue;
		}
		if (ret)
			break;
		kcoll_ctl_event_print(ctl, &ev);
		if (count && ++got >= count)
			break;
	}
	kcoll_nl_close(nl);
	if (ret && ret != -EAGAIN)
		return kcoll_ctl_nl_err("monitor", ret);
	return count && got < count ? KCOLL_CTL_ERR : KCOLL_CTL_OK;
}

static const struct kcoll_ctl_cmd kcoll_ctl_monitor_cmds[] = {
	{ "show",	kcoll_ctl_monitor },
	{ NULL,		NULL },
};

/* "kcollctl monitor count 3": the arguments go to the default command. */
const struct kcoll_ctl_obj kcoll_ctl_monitor_obj = {
	.name		= "monitor",
	.summary	= "print kcoll events as they happen",
	.cmds		= kcoll_ctl_monitor_cmds,
	.usage		= kcoll_ctl_monitor_usage,
	.default_takes_args = true,
};
