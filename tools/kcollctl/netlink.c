// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl over the "kcoll" generic netlink family (libkcoll's kcoll_nl_*): dev show/set and
 * comm show/abort when the family is there, and the objects that exist only through it:
 * config, engine, stats, monitor.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include <libkcoll.h>

#include "kcollctl.h"

/* ---- names of the family's enums ----------------------------------------------------------- */

#define KCOLL_CTL_NAME_OF(tbl, v)						\
	((size_t)(v) < sizeof(tbl) / sizeof((tbl)[0]) && (tbl)[v] ? (tbl)[v] : "unknown")

static const char *const kcoll_ctl_node_types[] = {
	"unknown", "InfiniBand", "RoCE", "iWARP",
};
static const char *const kcoll_ctl_port_states[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};
static const char *const kcoll_ctl_gid_types[] = { "ib", "roce-v1", "roce-v2" };
static const char *const kcoll_ctl_comm_states[] = {
	"creating", "connecting", "ready", "error", "aborted", "destroyed",
};
static const char *const kcoll_ctl_peer_states[] = {
	"idle", "connecting", "retry", "up", "down",
};
static const char *const kcoll_ctl_op_types[] = { "none", "send", "recv", "coll" };

const char *const kcoll_ctl_colls[] = {
	"broadcast", "scatter", "gather", "reduce", "allreduce", "allgather",
	"reduce_scatter", "alltoall", "barrier", "allgatherv", "alltoallv",
	"reduce_scatterv", NULL,
};
const char *const kcoll_ctl_algos[] = {
	"auto", "ring", "recdbl", "rabenseifner", "binomial", "dbtree", "chain", "pairwise",
	"bruck", NULL,
};

/* Index of @name in a NULL-terminated table, or -1. */
int kcoll_ctl_lookup(const char *const *tbl, const char *name)
{
	int i;

	for (i = 0; tbl[i]; i++) {
		if (!strcmp(tbl[i], name))
			return i;
	}
	return -1;
}

/*
 * Open the family.  Returns 0, or -1 when the family is absent and the caller may fall back
 * to sysfs (@quiet), or an exit code after an error message.
 */
int kcoll_ctl_nl_open(struct kcoll_nl **nl, bool quiet)
{
	int err = kcoll_nl_open(nl);

	if (!err)
		return 0;
	if (quiet && (err == -ENOENT || err == -EPROTONOSUPPORT || err == -EAFNOSUPPORT))
		return -1;
	return kcoll_ctl_err("%s%s", kcoll_last_error(), kcoll_ctl_hint(-err));
}

/*
 * A netlink command failed: the kernel's message (extack) when it gave one, which says
 * enough; the errno with a hint otherwise.
 */
int kcoll_ctl_nl_err(const char *what, int err)
{
	const char *msg = kcoll_last_error();

	if (msg[0] && strcmp(msg, strerror(-err)))
		return kcoll_ctl_err("%s: %s", what, msg);
	return kcoll_ctl_err("%s: %s%s", what, strerror(-err), kcoll_ctl_hint(-err));
}

/* ---- dev ----------------------------------------------------------------------------------- */

static void kcoll_ctl_guid_str(uint64_t guid, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned int)(guid >> 48) & 0xffff,
		 (unsigned int)(guid >> 32) & 0xffff, (unsigned int)(guid >> 16) & 0xffff,
		 (unsigned int)guid & 0xffff);
}

static void kcoll_ctl_gid_str(const uint8_t *gid, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, len))
		snprintf(buf, len, "?");
}

static void kcoll_ctl_dev_json(struct kcoll_jw *jw, const struct kcoll_nl_dev *d)
{
	char guid[20], gid[INET6_ADDRSTRLEN];
	size_t i, j;

	kcoll_ctl_guid_str(d->node_guid, guid, sizeof(guid));
	kcoll_jw_obj_open(jw);
	kcoll_jw_kv_str(jw, "name", d->name);
	kcoll_jw_kv_str(jw, "node_type", KCOLL_CTL_NAME_OF(kcoll_ctl_node_types, d->node_type));
	kcoll_jw_kv_uint(jw, "ports", d->nports);
	kcoll_jw_kv_bool(jw, "allowed", d->allowed);
	kcoll_jw_kv_str(jw, "node_guid", guid);
	kcoll_jw_key(jw, "tos");
	kcoll_jw_int(jw, d->tos);
	kcoll_jw_key(jw, "gid_index");
	kcoll_jw_int(jw, d->gid_index);
	kcoll_jw_kv_uint(jw, "comms", d->ncomms);
	kcoll_jw_key(jw, "port");
	kcoll_jw_arr_open(jw);
	for (i = 0; i < d->nports; i++) {
		const struct kcoll_nl_port *p = &d->ports[i];

		kcoll_jw_obj_open(jw);
		kcoll_jw_kv_uint(jw, "index", p->index);
		kcoll_jw_kv_str(jw, "state", KCOLL_CTL_NAME_OF(kcoll_ctl_port_states, p->state));
		kcoll_jw_kv_uint(jw, "active_mtu", p->active_mtu);
		kcoll_jw_key(jw, "gids");
		kcoll_jw_arr_open(jw);
		for (j = 0; j < p->ngids; j++) {
			kcoll_ctl_gid_str(p->gids[j].gid, gid, sizeof(gid));
			kcoll_jw_obj_open(jw);
			kcoll_jw_kv_uint(jw, "index", p->gids[j].index);
			kcoll_jw_kv_str(jw, "gid", gid);
			kcoll_jw_kv_str(jw, "type",
					KCOLL_CTL_NAME_OF(kcoll_ctl_gid_types, p->gids[j].type));
			if (p->gids[j].netdev[0])
				kcoll_jw_kv_str(jw, "netdev", p->gids[j].netdev);
			kcoll_jw_obj_close(jw);
		}
		kcoll_jw_arr_close(jw);
		kcoll_jw_obj_close(jw);
	}
	kcoll_jw_arr_close(jw);
	kcoll_jw_obj_close(jw);
}

static void kcoll_ctl_dev_plain(const struct kcoll_nl_dev *d)
{
	char guid[20], gid[INET6_ADDRSTRLEN];
	size_t i, j;

	kcoll_ctl_guid_str(d->node_guid, guid, sizeof(guid));
	printf("%s: node_type %s ports %zu allowed %s node_guid %s tos ", d->name,
	       KCOLL_CTL_NAME_OF(kcoll_ctl_node_types, d->node_type), d->nports,
	       d->allowed ? "yes" : "no", guid);
	if (d->tos < 0)
		printf("default");
	else
		printf("%" PRId32, d->tos);
	if (d->gid_index < 0)
		printf(" gid auto");
	else
		printf(" gid %" PRId32, d->gid_index);
	printf(" comms %" PRIu32 "\n", d->ncomms);
	for (i = 0; i < d->nports; i++) {
		const struct kcoll_nl_port *p = &d->ports[i];

		printf("    port %" PRIu32 " state %s active_mtu %" PRIu32 "\n", p->index,
		       KCOLL_CTL_NAME_OF(kcoll_ctl_port_states, p->state), p->active_mtu);
		for (j = 0; j < p->ngids; j++) {
			kcoll_ctl_gid_str(p->gids[j].gid, gid, sizeof(gid));
			printf("        gid %" PRIu32 " %s %s%s%s\n", p->gids[j].index, gid,
			       KCOLL_CTL_NAME_OF(kcoll_ctl_gid_types, p->gids[j].type),
			       p->gids[j].netdev[0] ? " netdev " : "", p->gids[j].netdev);
		}
	}
}

/* dev show over netlink; -1: the family is not there (use sysfs). */
int kcoll_ctl_nl_dev_show(struct kcoll_ctl *ctl, const char *name)
{
	struct kcoll_nl_dev *devs;
	struct kcoll_nl *nl;
	size_t n, i;
	int ret;

	ret = kcoll_ctl_nl_open(&nl, true);
	if (ret)
		return ret;
	ret = kcoll_nl_dev_list(nl, name, &devs, &n);
	kcoll_nl_close(nl);
	if (ret == -ENODEV)
		return kcoll_ctl_err("dev %s: no such device", name);
	if (ret)
		return kcoll_ctl_nl_err("dev show", ret);
	if (ctl->json) {
		kcoll_ctl_json_begin(ctl);
		kcoll_jw_arr_open(&ctl->jw);
	}
	for (i = 0; i < n; i++) {
		if (ctl->json)
			kcoll_ctl_dev_json(&ctl->jw, &devs[i]);
		else
			kcoll_ctl_dev_plain(&devs[i]);
	}
	kcoll_nl_dev_list_free(devs, n);
	if (!ctl->json)
		return KCOLL_CTL_OK;
	kcoll_jw_arr_close(&ctl->jw);
	return kcoll_ctl_json_end(ctl);
}

static bool kcoll_ctl_parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 0);
	return !errno && *s && !*end && *v >= lo && *v <= hi;
}

/* dev set DEV [ allowed { yes | no } ] [ tos { N | default } ] [ gid { N | auto } ] */
int kcoll_ctl_nl_dev_set(struct kcoll_ctl *ctl, int argc, char **argv)
{
	int allowed = -1, set_tos = 0, set_gid = 0, ret = 0, i;
	long tos = -1, gid = -1;
	struct kcoll_nl *nl;

	(void)ctl;
	if (argc < 1)
		return kcoll_ctl_usage_err(&kcoll_ctl_dev_obj, "dev set: which device?");
	for (i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			return kcoll_ctl_usage_err(&kcoll_ctl_dev_obj,
						   "dev set: \"%s\" needs a value", argv[i]);
		if (!strcmp(argv[i], "allowed")) {
			if (!strcmp(argv[i + 1], "yes") || !strcmp(argv[i + 1], "1"))
				allowed = 1;
			else if (!strcmp(argv[i + 1], "no") || !strcmp(argv[i + 1], "0"))
				allowed = 0;
			else
				return kcoll_ctl_usage_err(&kcoll_ctl_dev_obj,
							   "dev set: allowed is yes or no");
		} else if (!strcmp(argv[i], "tos")) {
			set_tos = 1;
			if (strcmp(argv[i + 1], "default") &&
			    !kcoll_ctl_parse_long(argv[i + 1], -1, 255, &tos))
				return kcoll_ctl_usage_err(&kcoll_ctl_dev_obj,
							   "dev set: tos is 0 to 255 or default");
		} else if (!strcmp(argv[i], "gid")) {
			set_gid = 1;
			if (strcmp(argv[i + 1], "auto") &&
			    !kcoll_ctl_parse_long(argv[i + 1], -1, INT32_MAX, &gid))
				return kcoll_ctl_usage_err(&kcoll_ctl_dev_obj,
							   "dev set: gid is a GID index or auto");
		} else {
			return kcoll_ctl_usage_err(&kcoll_ctl_dev_obj,
						   "dev set: unknown attribute \"%s\"", argv[i]);
		}
	}
	if (allowed < 0 && !set_tos && !set_gid)
		return kcoll_ctl_usage_err(&kcoll_ctl_dev_obj,
					   "dev set: nothing to set (allowed, tos, gid)");
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	/* The GID first: the kernel checks it against the GID table, a refusal sets nothing. */
	if (set_gid)
		ret = kcoll_nl_dev_set_gid(nl, argv[0], (int32_t)gid);
	if (!ret && (allowed >= 0 || set_tos))
		ret = kcoll_nl_dev_set(nl, argv[0], allowed, set_tos, (int32_t)tos);
	kcoll_nl_close(nl);
	if (ret)
		return kcoll_ctl_nl_err("dev set", ret);
	return KCOLL_CTL_OK;
}

/* ---- comm ---------------------------------------------------------------------------------- */

/* The sysfs directory name of a comm, which "comm show" accepts back. */
static void kcoll_ctl_comm_name(const struct kcoll_nl_comm *c, char *buf, size_t len)
{
	static uint32_t own_ns;
	struct stat st;

	if (!own_ns && !stat("/proc/self/ns/net", &st))
		own_ns = (uint32_t)st.st_ino;
	if (!own_ns || c->netns == own_ns)
		snprintf(buf, len, "%016" PRIx64 "-%" PRIu32, c->comm_id, c->rank);
	else
		snprintf(buf, len, "%016" PRIx64 "-%" PRIu32 "-ns%" PRIu32, c->comm_id, c->rank,
			 c->netns);
}

static void kcoll_ctl_comm_json(struct kcoll_jw *jw, const struct kcoll_nl_comm *c)
{
	char name[64], id[20];
	size_t i;

	kcoll_ctl_comm_name(c, name, sizeof(name));
	snprintf(id, sizeof(id), "%016" PRIx64, c->comm_id);
	kcoll_jw_obj_open(jw);
	kcoll_jw_kv_str(jw, "name", name);
	kcoll_jw_kv_str(jw, "comm_id", id);
	kcoll_jw_kv_uint(jw, "rank", c->rank);
	kcoll_jw_kv_uint(jw, "nranks", c->nranks);
	kcoll_jw_kv_str(jw, "state", KCOLL_CTL_NAME_OF(kcoll_ctl_comm_states, c->state));
	kcoll_jw_key(jw, "error");
	kcoll_jw_int(jw, c->error);
	if (c->failed_rank != UINT32_MAX)
		kcoll_jw_kv_uint(jw, "failed_rank", c->failed_rank);
	kcoll_jw_kv_uint(jw, "owner_pid", c->owner_pid);
	kcoll_jw_kv_uint(jw, "owner_uid", c->owner_uid);
	if (c->dev_name[0])
		kcoll_jw_kv_str(jw, "dev", c->dev_name);
	kcoll_jw_kv_uint(jw, "netns", c->netns);
	kcoll_jw_kv_uint(jw, "peers_connected", c->peers_up);
	kcoll_jw_kv_uint(jw, "tx_bytes", c->tx_bytes);
	kcoll_jw_kv_uint(jw, "rx_bytes", c->rx_bytes);
	kcoll_jw_kv_uint(jw, "tx_ops", c->tx_ops);
	kcoll_jw_kv_uint(jw, "rx_ops", c->rx_ops);
	if (c->op.type) {
		kcoll_jw_key(jw, "op");
		kcoll_jw_obj_open(jw);
		kcoll_jw_kv_str(jw, "type", KCOLL_CTL_NAME_OF(kcoll_ctl_op_types, c->op.type));
		kcoll_jw_kv_uint(jw, "id", c->op.id);
		if (c->op.type == 3)
			kcoll_jw_kv_str(jw, "coll", KCOLL_CTL_NAME_OF(kcoll_ctl_colls, c->op.coll));
		kcoll_jw_kv_uint(jw, "bytes", c->op.bytes);
		kcoll_jw_kv_uint(jw, "step", c->op.step);
		kcoll_jw_kv_uint(jw, "nsteps", c->op.nsteps);
		if (c->op.wait_peer != UINT32_MAX)
			kcoll_jw_kv_uint(jw, "wait_peer", c->op.wait_peer);
		kcoll_jw_obj_close(jw);
	}
	if (c->peers_truncated)
		kcoll_jw_kv_bool(jw, "peers_truncated", true);
	kcoll_jw_key(jw, "peers");
	kcoll_jw_arr_open(jw);
	for (i = 0; i < c->npeers; i++) {
		const struct kcoll_nl_peer *p = &c->peers[i];

		kcoll_jw_obj_open(jw);
		kcoll_jw_kv_uint(jw, "rank", p->rank);
		kcoll_jw_kv_str(jw, "state", KCOLL_CTL_NAME_OF(kcoll_ctl_peer_states, p->state));
		kcoll_jw_kv_bool(jw, "ready", p->ready);
		kcoll_jw_kv_bool(jw, "left", p->left);
		kcoll_jw_key(jw, "last_err");
		kcoll_jw_int(jw, p->last_err);
		kcoll_jw_kv_uint(jw, "pending_sends", p->pending_sends);
		kcoll_jw_kv_uint(jw, "pending_recvs", p->pending_recvs);
		kcoll_jw_kv_uint(jw, "idle_ms", p->idle_ms);
		if (p->sgid_index >= 0)
			kcoll_jw_kv_uint(jw, "sgid_index", p->sgid_index);
		if (p->gid_type >= 0)
			kcoll_jw_kv_str(jw, "gid_type",
					KCOLL_CTL_NAME_OF(kcoll_ctl_gid_types, p->gid_type));
		kcoll_jw_obj_close(jw);
	}
	kcoll_jw_arr_close(jw);
	kcoll_jw_obj_close(jw);
}

static void kcoll_ctl_comm_plain(const struct kcoll_nl_comm *c)
{
	char name[64];
	size_t i;

	kcoll_ctl_comm_name(c, name, sizeof(name));
	printf("%s: state %s nranks %" PRIu32 " peers %" PRIu32 " pid %" PRIu32
	       " tx %" PRIu64 "B/%" PRIu64 " rx %" PRIu64 "B/%" PRIu64, name,
	       KCOLL_CTL_NAME_OF(kcoll_ctl_comm_states, c->state), c->nranks, c->peers_up,
	       c->owner_pid, c->tx_bytes, c->tx_ops, c->rx_bytes, c->rx_ops);
	if (c->dev_name[0])
		printf(" dev %s", c->dev_name);
	if (c->error)
		printf(" error %" PRId32 " (%s)", c->error, strerror(-c->error));
	if (c->failed_rank != UINT32_MAX)
		printf(" failed_rank %" PRIu32, c->failed_rank);
	putchar('\n');
	if (c->op.type) {
		printf("    op %s id %" PRIu64 " bytes %" PRIu64, KCOLL_CTL_NAME_OF(kcoll_ctl_op_types,
									   c->op.type),
		       c->op.id, c->op.bytes);
		if (c->op.type == 3)
			printf(" coll %s step %" PRIu32 "/%" PRIu32,
			       KCOLL_CTL_NAME_OF(kcoll_ctl_colls, c->op.coll), c->op.step,
			       c->op.nsteps);
		if (c->op.wait_peer != UINT32_MAX)
			printf(" waiting for rank %" PRIu32, c->op.wait_peer);
		putchar('\n');
	}
	for (i = 0; i < c->npeers; i++) {
		const struct kcoll_nl_peer *p = &c->peers[i];

		printf("    peer %" PRIu32 " %s%s%s sends %" PRIu32 " recvs %" PRIu32
		       " idle %" PRIu32 "ms", p->rank,
		       KCOLL_CTL_NAME_OF(kcoll_ctl_peer_states, p->state),
		       p->ready ? " ready" : "", p->left ? " left" : "", p->pending_sends,
		       p->pending_recvs, p->idle_ms);
		if (p->last_err)
			printf(" last_err %" PRId32, p->last_err);
		if (p->sgid_index >= 0)
			printf(" sgid %" PRId32, p->sgid_index);
		if (p->gid_type >= 0)
			printf(" %s", KCOLL_CTL_NAME_OF(kcoll_ctl_gid_types, p->gid_type));
		putchar('\n');
	}
	if (c->peers_truncated)
		printf("    (peers left out; kcollctl comm show %s lists them)\n", name);
}

/* "show ID": every rank of a comm id (hex), or one directory name ID-RANK[-nsN]. */
static bool kcoll_ctl_comm_sel(const struct kcoll_nl_comm *c, const char *arg)
{
	char name[64], *end;
	uint64_t id;

	if (!arg)
		return true;
	kcoll_ctl_comm_name(c, name, sizeof(name));
	if (!strcmp(name, arg))
		return true;
	errno = 0;
	id = strtoull(arg, &end, 16);
	return !errno && *arg && !*end && strlen(arg) <= 18 && id == c->comm_id;
}

/* comm show over netlink; -1: the family is not there (use sysfs). */
int kcoll_ctl_nl_comm_show(struct kcoll_ctl *ctl, const char *arg)
{
	struct kcoll_nl_comm *comms;
	struct kcoll_nl *nl;
	size_t n, i, shown = 0;
	int ret;

	ret = kcoll_ctl_nl_open(&nl, true);
	if (ret)
		return ret;
	ret = kcoll_nl_comm_list(nl, &comms, &n);
	kcoll_nl_close(nl);
	if (ret)
		return kcoll_ctl_nl_err("comm show", ret);
	for (i = 0; i < n; i++)
		shown += kcoll_ctl_comm_sel(&comms[i], arg);
	if (arg && !shown) {
		kcoll_nl_comm_list_free(comms, n);
		return kcoll_ctl_err("comm %s: no such communicator", arg);
	}
	if (ctl->json) {
		kcoll_ctl_json_begin(ctl);
		kcoll_jw_arr_open(&ctl->jw);
	}
	for (i = 0; i < n; i++) {
		if (!kcoll_ctl_comm_sel(&comms[i], arg))
			continue;
		if (ctl->json)
			kcoll_ctl_comm_json(&ctl->jw, &comms[i]);
		else
			kcoll_ctl_comm_plain(&comms[i]);
	}
	kcoll_nl_comm_list_free(comms, n);
	if (!ctl->json)
		return KCOLL_CTL_OK;
	kcoll_jw_arr_close(&ctl->jw);
	return kcoll_ctl_json_end(ctl);
}

/* ID-RANK (a sysfs name) or ID RANK. */
static int kcoll_ctl_comm_key(int argc, char **argv, uint64_t *id, uint32_t *rank)
{
	unsigned long long v;
	unsigned long r;
	char *end;

	if (argc < 1 || argc > 2)
		return -1;
	errno = 0;
	v = strtoull(argv[0], &end, 16);
	if (errno || end == argv[0] || !v)
		return -1;
	if (argc == 1) {
		if (*end != '-')
			return -1;
		r = strtoul(end + 1, &end, 10);
	} else {
		if (*end)
			return -1;
		r = strtoul(argv[1], &end, 10);
	}
	if (errno || *end || r >= KCOLL_MAX_RANKS)
		return -1;
	*id = v;
	*rank = (uint32_t)r;
	return 0;
}

int kcoll_ctl_nl_comm_abort(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_nl *nl;
	uint32_t rank;
	uint64_t id;
	int ret;

	(void)ctl;
	if (kcoll_ctl_comm_key(argc, argv, &id, &rank))
		return kcoll_ctl_usage_err(&kcoll_ctl_comm_obj,
					   "comm abort: give ID-RANK or ID RANK");
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_nl_comm_abort(nl, id, rank);
	kcoll_nl_close(nl);
	if (ret)
		return kcoll_ctl_nl_err("comm abort", ret);
	return KCOLL_CTL_OK;
}
