// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl comm: the communicators on this node, from /sys/kernel/kcoll/comms.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkcoll.h>

#include "kcollctl.h"

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

static bool kcoll_ctl_comm_match(const struct kcoll_ctl_comm_filter *f,
				 const struct kcoll_comm_entry *c)
{
	if (!f->arg)
		return true;
	if (f->by_id)
		return c->comm_id == f->comm_id;
	return !strcmp(c->name, f->arg);
}

static void kcoll_ctl_comm_json_one(struct kcoll_jw *jw, const struct kcoll_comm_entry *c)
{
	char id[20];

	snprintf(id, sizeof(id), "%016" PRIx64, c->comm_id);
	kcoll_jw_obj_open(jw);
	kcoll_jw_kv_str(jw, "name", c->name);
	kcoll_jw_kv_str(jw, "comm_id", id);
	kcoll_jw_kv_uint(jw, "rank", c->rank);
	kcoll_jw_kv_uint(jw, "nranks", c->nranks);
	kcoll_jw_kv_str(jw, "state", c->state);
	kcoll_jw_key(jw, "error");
	kcoll_jw_int(jw, c->error);
	kcoll_jw_kv_uint(jw, "owner_pid", c->owner_pid);
	kcoll_jw_kv_uint(jw, "peers_connected", c->peers_connected);
	kcoll_jw_kv_uint(jw, "tx_bytes", c->tx_bytes);
	kcoll_jw_kv_uint(jw, "rx_bytes", c->rx_bytes);
	kcoll_jw_kv_uint(jw, "tx_ops", c->tx_ops);
	kcoll_jw_kv_uint(jw, "rx_ops", c->rx_ops);
	kcoll_jw_obj_close(jw);
}

/* One line per rank; the label is the directory name, which "comm show" accepts back. */
static void kcoll_ctl_comm_plain_one(const struct kcoll_comm_entry *c)
{
	printf("%s: state %s nranks %" PRIu32 " peers %" PRIu32 " pid %" PRIu32
	       " tx %" PRIu64 "B/%" PRIu64 " rx %" PRIu64 "B/%" PRIu64, c->name, c->state,
	       c->nranks, c->peers_connected, c->owner_pid, c->tx_bytes, c->tx_ops,
	       c->rx_bytes, c->rx_ops);
	if (c->error)
		printf(" error %" PRId32 " (%s)", c->error, strerror(-c->error));
	putchar('\n');
}

/* Print the communicators @f selects; JSON is always an array, as in rdma(8). */
static int kcoll_ctl_comm_print(struct kcoll_ctl *ctl, const struct kcoll_comm_entry *comms,
				size_t n, const struct kcoll_ctl_comm_filter *f)
{
	size_t i;

	if (ctl->json) {
		kcoll_ctl_json_begin(ctl);
		kcoll_jw_arr_open(&ctl->jw);
	}
	for (i = 0; i < n; i++) {
		if (!kcoll_ctl_comm_match(f, &comms[i]))
			continue;
		if (ctl->json)
			kcoll_ctl_comm_json_one(&ctl->jw, &comms[i]);
		else
			kcoll_ctl_comm_plain_one(&comms[i]);
	}
	if (!ctl->json)
		return KCOLL_CTL_OK;
	kcoll_jw_arr_close(&ctl->jw);
	return kcoll_ctl_json_end(ctl);
}

static bool kcoll_ctl_comm_any(const struct kcoll_comm_entry *comms, size_t n,
			       const struct kcoll_ctl_comm_filter *f)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (kcoll_ctl_comm_match(f, &comms[i]))
			return true;
	}
	return false;
}

static int kcoll_ctl_comm_list_err(int err)
{
	const char *root = kcoll_sysfs_root(), *what = strerror(err), *hint;

	if (err == EBADMSG)
		what = "unexpected content (kcollctl and the module disagree on the sysfs layout)";
	hint = kcoll_ctl_hint(err);
	/* The module is there but predates communicators. */
	if (err == ENOENT && !access(root, F_OK))
		hint = " (does the loaded kcoll module support communicators?)";
	return kcoll_ctl_err("cannot read %s/comms: %s%s", root, what, hint);
}

static int kcoll_ctl_comm_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_ctl_comm_filter f;
	struct kcoll_comm_entry *comms;
	size_t n;
	int err, ret;

	if (argc > 1)
		return kcoll_ctl_usage_err(&kcoll_ctl_comm_obj,
					   "comm show: unexpected argument \"%s\"", argv[1]);
	kcoll_ctl_comm_filter_init(&f, argc ? argv[0] : NULL);
	/* Netlink has peers and the op in flight; sysfs (or KCOLL_SYSFS_ROOT) the fallback. */
	if (!getenv(KCOLL_SYSFS_ROOT_ENV)) {
		ret = kcoll_ctl_nl_comm_show(ctl, f.arg);
		if (ret >= 0)
			return ret;
	}
	err = kcoll_comm_list(NULL, &comms, &n);
	if (err)
		return kcoll_ctl_comm_list_err(-err);
	if (f.arg && !kcoll_ctl_comm_any(comms, n, &f))
		ret = kcoll_ctl_err("comm %s: no such communicator", f.arg);
	else
		ret = kcoll_ctl_comm_print(ctl, comms, n, &f);
	kcoll_comm_list_free(comms);
	return ret;
}

static const struct kcoll_ctl_cmd kcoll_ctl_comm_cmds[] = {
	{ "show",	kcoll_ctl_comm_show },
	{ "list",	kcoll_ctl_comm_show },
	{ "abort",	kcoll_ctl_nl_comm_abort },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_comm_obj = {
	.name		= "comm",
	.summary	= "communicators on this node",
	.cmds		= kcoll_ctl_comm_cmds,
	.usage		= kcoll_ctl_comm_usage,
};
