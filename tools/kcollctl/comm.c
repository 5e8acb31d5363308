// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl comm: the communicators on this node (netlink, else /sys/kernel/kcoll/comms), and
 * the administrator's abort.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libkcoll.h>

#include "kcollctl.h"

static const char *const kcoll_ctl_peer_states[] = {
	"idle", "connecting", "retry", "up", "down", NULL,
};
static const char *const kcoll_ctl_op_types[] = { "none", "send", "recv", "coll", NULL };

static void kcoll_ctl_comm_usage(FILE *f)
{
	fputs("Usage: kcollctl comm [ { show | list } [ ID ] ]\n"
	      "       kcollctl comm abort { NAME | COMM_ID RANK }\n"
	      "       kcollctl comm help\n"
	      "where  ID := { COMM_ID | NAME }\n"
	      "       COMM_ID := communicator id in hex, e.g. 908c115900303fc2 (all its ranks)\n"
	      "       NAME := one rank's sysfs directory, e.g. 908c115900303fc2-0\n"
	      "comm show lists peers and the operation in flight when the kcoll netlink family\n"
	      "is there (else it reads sysfs, which is root's): a user sees their own comms,\n"
	      "CAP_NET_ADMIN everyone's; comm abort needs it, and the owner or CAP_NET_ADMIN.\n", f);
}

/* What "show ID" selects: every rank of one comm id, or one directory by name. */
struct kcoll_ctl_comm_filter {
	const char *arg;	/* NULL: everything */
	bool by_id;
	uint64_t comm_id;
};

/* A comm id is 1 to 16 hex digits, "0x" allowed; anything else is taken as a name. */
static void kcoll_ctl_comm_filter_init(struct kcoll_ctl_comm_filter *f, const char *arg)
{
	const char *hex = arg;
	size_t i, len;

	memset(f, 0, sizeof(*f));
	f->arg = arg;
	if (!arg)
		return;
	if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
		hex += 2;
	len = strlen(hex);
	if (!len || len > 16)
		return;
	for (i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)hex[i]))
			return;
	}
	f->by_id = true;
	f->comm_id = strtoull(hex, NULL, 16);
}

static bool kcoll_ctl_comm_match(const struct kcoll_ctl_comm_filter *f, const char *name,
				 uint64_t comm_id)
{
	if (!f->arg)
		return true;
	if (f->by_id)
		return comm_id == f->comm_id;
	return !strcmp(name, f->arg);
}

/*
 * A communicator as either source describes it: the fields both have, and the netlink
 * description for the rest (NULL from sysfs, which has no more).
 */
struct kcoll_ctl_comm_view {
	char name[64];		/* the sysfs directory name, which "comm show" accepts back */
	uint64_t comm_id;
	uint32_t rank, nranks;
	const char *state;
	int32_t error;
	uint32_t owner_pid;
	uint32_t peers_connected;
	struct kcoll_ctl_traffic traffic;
	const struct kcoll_nl_comm *nl;
};

static void kcoll_ctl_comm_view_sysfs(struct kcoll_ctl_comm_view *v,
				      const struct kcoll_comm_entry *c)
{
	*v = (struct kcoll_ctl_comm_view){
		.comm_id = c->comm_id, .rank = c->rank, .nranks = c->nranks, .state = c->state,
		.error = c->error, .owner_pid = c->owner_pid,
		.peers_connected = c->peers_connected,
		.traffic = { c->tx_bytes, c->tx_ops, c->rx_bytes, c->rx_ops },
	};
	snprintf(v->name, sizeof(v->name), "%s", c->name);
}

static void kcoll_ctl_comm_view_nl(struct kcoll_ctl_comm_view *v, const struct kcoll_nl_comm *c)
{
	static uint32_t own_ns;
	struct stat st;

	*v = (struct kcoll_ctl_comm_view){
		.comm_id = c->comm_id, .rank = c->rank, .nranks = c->nranks,
		.state = kcoll_ctl_name_of(kcoll_ctl_comm_states, c->state),
		.error = c->error, .owner_pid = c->owner_pid, .peers_connected = c->peers_up,
		.traffic = { c->tx_bytes, c->tx_ops, c->rx_bytes, c->rx_ops }, .nl = c,
	};
	/* The name sysfs gives it: -ns<inode> for a comm of another network namespace. */
	if (!own_ns && !stat("/proc/self/ns/net", &st))
		own_ns = (uint32_t)st.st_ino;
	if (!own_ns || c->netns == own_ns)
		snprintf(v->name, sizeof(v->name), "%016" PRIx64 "-%" PRIu32, c->comm_id, c->rank);
	else
		snprintf(v->name, sizeof(v->name), "%016" PRIx64 "-%" PRIu32 "-ns%" PRIu32,
			 c->comm_id, c->rank, c->netns);
}

static void kcoll_ctl_op_print(struct kcoll_ctl *ctl, const struct kcoll_nl_op *op)
{
	bool coll = op->type == KCOLL_OP_TYPE_COLL;
	const char *coll_name = kcoll_collective_str((int)op->coll);

	kcoll_ctl_obj_begin(ctl, "op");
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "type", "    op %s",
		      kcoll_ctl_name_of(kcoll_ctl_op_types, op->type));
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "id", " id %" PRIu64, op->id);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "bytes", " bytes %" PRIu64, op->bytes);
	if (coll)
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "coll", " coll %s",
			      coll_name ? coll_name : "unknown");
	kcoll_ctl_uint(ctl, coll ? KCOLL_CTL_ANY : KCOLL_CTL_JSON, "step", " step %" PRIu64,
		       op->step);
	kcoll_ctl_uint(ctl, coll ? KCOLL_CTL_ANY : KCOLL_CTL_JSON, "nsteps", "/%" PRIu64,
		       op->nsteps);
	if (op->wait_peer != UINT32_MAX)
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "wait_peer", " waiting for rank %" PRIu64,
			       op->wait_peer);
	kcoll_ctl_nl(ctl);
	kcoll_ctl_obj_end(ctl);
}

static void kcoll_ctl_peer_print(struct kcoll_ctl *ctl, const struct kcoll_nl_peer *p)
{
	kcoll_ctl_obj_begin(ctl, NULL);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "rank", "    peer %" PRIu64, p->rank);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "state", " %s",
		      kcoll_ctl_name_of(kcoll_ctl_peer_states, p->state));
	if (p->transport[0])
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "transport", " %s", p->transport);
	/* As text, a flag is its name when set. */
	kcoll_ctl_bool(ctl, KCOLL_CTL_JSON, "ready", NULL, p->ready);
	if (p->ready)
		kcoll_ctl_text(ctl, " ready");
	kcoll_ctl_bool(ctl, KCOLL_CTL_JSON, "left", NULL, p->left);
	if (p->left)
		kcoll_ctl_text(ctl, " left");
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "pending_sends", " sends %" PRIu64, p->pending_sends);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "pending_recvs", " recvs %" PRIu64, p->pending_recvs);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "idle_ms", " idle %" PRIu64 "ms", p->idle_ms);
	kcoll_ctl_int(ctl, p->last_err ? KCOLL_CTL_ANY : KCOLL_CTL_JSON, "last_err",
		      " last_err %" PRId64, p->last_err);
	if (p->sgid_index >= 0)
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "sgid_index", " sgid %" PRIu64, p->sgid_index);
	if (p->gid_type >= 0)
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "gid_type", " %s",
			      kcoll_ctl_name_of(kcoll_ctl_gid_types, p->gid_type));
	if (p->host != UINT32_MAX) {
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "host", " host %" PRIu64, p->host);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "nic", " nic %" PRIu64, p->nic);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "leaf", " leaf %" PRIu64, p->leaf);
	}
	kcoll_ctl_nl(ctl);
	kcoll_ctl_obj_end(ctl);
}

/* The ranks of host group @g as "0,1,5": this rank and its peers. */
static void kcoll_ctl_host_group(struct kcoll_ctl *ctl, const struct kcoll_nl_comm *nl,
				 uint32_t g)
{
	uint32_t r, i = 0, n = 0;

	kcoll_ctl_arr_begin(ctl, NULL);
	kcoll_ctl_text(ctl, " %" PRIu32 ":", g);
	/* Peers come in rank order without this rank: merge it in. */
	for (r = 0; r < nl->nranks; r++) {
		uint32_t host;

		if (r == nl->rank) {
			host = nl->host;
		} else {
			while (i < nl->npeers && nl->peers[i].rank < r)
				i++;
			if (i == nl->npeers || nl->peers[i].rank != r)
				continue;
			host = nl->peers[i].host;
		}
		if (host != g)
			continue;
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, NULL, n++ ? ",%" PRIu64 : "%" PRIu64, r);
	}
	kcoll_ctl_arr_end(ctl);
}

/*
 * Locality (netlink): this rank's place, then, when the kernel was given the ranks' table
 * and every peer is listed, the host groups: "hosts 0:0,1 1:2,3".
 */
static void kcoll_ctl_comm_loc_print(struct kcoll_ctl *ctl, const struct kcoll_nl_comm *nl)
{
	uint32_t g;

	kcoll_ctl_obj_begin(ctl, "locality");
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "local_rank", "    locality local_rank %" PRIu64,
		       nl->local_rank);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "local_size", " local_size %" PRIu64,
		       nl->local_size);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "hosts", " hosts %" PRIu64, nl->hosts);
	kcoll_ctl_bool(ctl, KCOLL_CTL_JSON, "known", NULL, nl->loc_known);
	if (!nl->loc_known)
		kcoll_ctl_text(ctl, " (no locality given)");
	if (nl->loc_known) {
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "nics", " nics %" PRIu64, nl->nics);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "leaves", " leaves %" PRIu64, nl->leaves);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "host", " host %" PRIu64, nl->host);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "nic", " nic %" PRIu64, nl->nic);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "leaf", " leaf %" PRIu64, nl->leaf);
	}
	kcoll_ctl_nl(ctl);
	if (nl->loc_known && !nl->peers_truncated) {
		kcoll_ctl_arr_begin(ctl, "host_groups");
		kcoll_ctl_text(ctl, "    host_groups");
		for (g = 0; g < nl->hosts; g++)
			kcoll_ctl_host_group(ctl, nl, g);
		kcoll_ctl_arr_end(ctl);
		kcoll_ctl_nl(ctl);
	}
	kcoll_ctl_obj_end(ctl);
}

/* One line per rank, then (from netlink) its operation in flight and one line per peer. */
static void kcoll_ctl_comm_print(struct kcoll_ctl *ctl, const struct kcoll_ctl_comm_view *v)
{
	const struct kcoll_nl_comm *nl = v->nl;
	char id[20];
	size_t i;

	snprintf(id, sizeof(id), "%016" PRIx64, v->comm_id);
	kcoll_ctl_obj_begin(ctl, NULL);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "name", "%s:", v->name);
	kcoll_ctl_str(ctl, KCOLL_CTL_JSON, "comm_id", NULL, id);
	kcoll_ctl_uint(ctl, KCOLL_CTL_JSON, "rank", NULL, v->rank);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "state", " state %s", v->state);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "nranks", " nranks %" PRIu64, v->nranks);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "peers_connected", " peers %" PRIu64,
		       v->peers_connected);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "owner_pid", " pid %" PRIu64, v->owner_pid);
	if (nl)
		kcoll_ctl_uint(ctl, KCOLL_CTL_JSON, "owner_uid", NULL, nl->owner_uid);
	kcoll_ctl_traffic(ctl, &v->traffic);
	if (nl && nl->dev_name[0])
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "dev", " dev %s", nl->dev_name);
	if (nl)
		kcoll_ctl_uint(ctl, KCOLL_CTL_JSON, "netns", NULL, nl->netns);
	kcoll_ctl_int(ctl, v->error ? KCOLL_CTL_ANY : KCOLL_CTL_JSON, "error",
		      " error %" PRId64, v->error);
	if (v->error)
		kcoll_ctl_text(ctl, " (%s)", strerror(-v->error));
	if (nl && nl->failed_rank != UINT32_MAX)
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "failed_rank", " failed_rank %" PRIu64,
			       nl->failed_rank);
	kcoll_ctl_nl(ctl);
	if (nl) {
		kcoll_ctl_comm_loc_print(ctl, nl);
		if (nl->op.type)
			kcoll_ctl_op_print(ctl, &nl->op);
		kcoll_ctl_arr_begin(ctl, "peers");
		for (i = 0; i < nl->npeers; i++)
			kcoll_ctl_peer_print(ctl, &nl->peers[i]);
		kcoll_ctl_arr_end(ctl);
		if (nl->peers_truncated) {
			kcoll_ctl_bool(ctl, KCOLL_CTL_JSON, "peers_truncated", NULL, true);
			kcoll_ctl_text(ctl, "    (peers left out; kcollctl comm show %s lists them)\n",
				       v->name);
		}
	}
	kcoll_ctl_obj_end(ctl);
}

static int kcoll_ctl_comm_show_nl(struct kcoll_ctl *ctl, struct kcoll_nl *nl,
				  const struct kcoll_ctl_comm_filter *f)
{
	struct kcoll_ctl_comm_view *v;
	struct kcoll_nl_comm *comms;
	size_t n, i, shown = 0;
	int ret;

	ret = kcoll_ctl_nl_done(nl, "comm show", kcoll_nl_comm_list(nl, &comms, &n));
	if (ret)
		return ret;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		kcoll_nl_comm_list_free(comms, n);
		return kcoll_ctl_err("comm show: %s", strerror(ENOMEM));
	}
	for (i = 0; i < n; i++) {
		kcoll_ctl_comm_view_nl(&v[i], &comms[i]);
		shown += kcoll_ctl_comm_match(f, v[i].name, v[i].comm_id);
	}
	if (f->arg && !shown) {
		ret = kcoll_ctl_err("comm %s: no such communicator", f->arg);
	} else {
		kcoll_ctl_doc_begin(ctl, true);
		for (i = 0; i < n; i++) {
			if (kcoll_ctl_comm_match(f, v[i].name, v[i].comm_id))
				kcoll_ctl_comm_print(ctl, &v[i]);
		}
		ret = kcoll_ctl_doc_end(ctl);
	}
	free(v);
	kcoll_nl_comm_list_free(comms, n);
	return ret;
}

static int kcoll_ctl_comm_show_sysfs(struct kcoll_ctl *ctl,
				     const struct kcoll_ctl_comm_filter *f)
{
	struct kcoll_comm_entry *comms;
	struct kcoll_ctl_comm_view v;
	size_t n, i, shown = 0;
	int err, ret;

	err = kcoll_comm_list(NULL, &comms, &n);
	if (err)
		return kcoll_ctl_sysfs_err("comms", -err);
	for (i = 0; i < n; i++)
		shown += kcoll_ctl_comm_match(f, comms[i].name, comms[i].comm_id);
	if (f->arg && !shown) {
		ret = kcoll_ctl_err("comm %s: no such communicator", f->arg);
	} else {
		kcoll_ctl_doc_begin(ctl, true);
		for (i = 0; i < n; i++) {
			if (!kcoll_ctl_comm_match(f, comms[i].name, comms[i].comm_id))
				continue;
			kcoll_ctl_comm_view_sysfs(&v, &comms[i]);
			kcoll_ctl_comm_print(ctl, &v);
		}
		ret = kcoll_ctl_doc_end(ctl);
	}
	kcoll_comm_list_free(comms);
	return ret;
}

/* JSON is always an array, as in rdma(8). */
static int kcoll_ctl_comm_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_ctl_comm_filter f;
	struct kcoll_nl *nl;
	int ret;

	if (argc > 1)
		return kcoll_ctl_extra_arg(&kcoll_ctl_comm_obj, "comm show", argv[1]);
	kcoll_ctl_comm_filter_init(&f, argc ? argv[0] : NULL);
	ret = kcoll_ctl_source(&nl);
	if (ret == KCOLL_CTL_SYSFS)
		return kcoll_ctl_comm_show_sysfs(ctl, &f);
	if (ret)
		return ret;
	return kcoll_ctl_comm_show_nl(ctl, nl, &f);
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

static int kcoll_ctl_comm_abort(struct kcoll_ctl *ctl, int argc, char **argv)
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
	return kcoll_ctl_nl_done(nl, "comm abort", kcoll_nl_comm_abort(nl, id, rank));
}

static const struct kcoll_ctl_cmd kcoll_ctl_comm_cmds[] = {
	{ "show",	kcoll_ctl_comm_show },
	{ "list",	kcoll_ctl_comm_show },
	{ "abort",	kcoll_ctl_comm_abort },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_comm_obj = {
	.name		= "comm",
	.summary	= "communicators on this node",
	.cmds		= kcoll_ctl_comm_cmds,
	.usage		= kcoll_ctl_comm_usage,
};
