// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl dev: the RDMA devices kcoll tracks (netlink, else /sys/kernel/kcoll/devices), and
 * their settings.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <libkcoll.h>

#include "kcollctl.h"

static const char *const kcoll_ctl_port_states[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", NULL,
};

static void kcoll_ctl_dev_usage(FILE *f)
{
	fputs("Usage: kcollctl dev [ { show | list } [ DEV ] ]\n"
	      "       kcollctl dev set DEV [ allowed { yes | no } ] [ tos { 0..255 | default } ]\n"
	      "                            [ gid { INDEX | auto } ]\n"
	      "       kcollctl dev help\n"
	      "where  DEV := RDMA device name, e.g. rxe0\n"
	      "dev show lists ports and GIDs when the kcoll netlink family is there (else it\n"
	      "reads sysfs); dev set needs it, and CAP_NET_ADMIN.  gid INDEX: every connection\n"
	      "on DEV must use that GID table entry (give each rank the entry's address), else\n"
	      "its comm fails with EADDRNOTAVAIL; auto: whatever the address picks.\n", f);
}

/*
 * A device as either source describes it: the fields both have, and the netlink
 * description for the rest (NULL from sysfs, which has no more).
 */
struct kcoll_ctl_dev_view {
	const char *name;
	const char *node_type;
	uint64_t node_guid;
	unsigned int ports;
	bool allowed;
	const struct kcoll_nl_dev *nl;
};

/* The GUID the way rdma(8) and ibstat print it: four groups of 16 bits. */
static void kcoll_ctl_guid_str(uint64_t guid, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned int)(guid >> 48) & 0xffff,
		 (unsigned int)(guid >> 32) & 0xffff, (unsigned int)(guid >> 16) & 0xffff,
		 (unsigned int)guid & 0xffff);
}

static void kcoll_ctl_port_print(struct kcoll_ctl *ctl, const struct kcoll_nl_port *p)
{
	char gid[INET6_ADDRSTRLEN];
	size_t j;

	kcoll_ctl_obj_begin(ctl, NULL);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "index", "    port %" PRIu64, p->index);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "state", " state %s",
		      kcoll_ctl_name_of(kcoll_ctl_port_states, p->state));
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "active_mtu", " active_mtu %" PRIu64, p->active_mtu);
	kcoll_ctl_nl(ctl);
	kcoll_ctl_arr_begin(ctl, "gids");
	for (j = 0; j < p->ngids; j++) {
		const struct kcoll_nl_gid *g = &p->gids[j];

		if (!inet_ntop(AF_INET6, g->gid, gid, sizeof(gid)))
			snprintf(gid, sizeof(gid), "?");
		kcoll_ctl_obj_begin(ctl, NULL);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "index", "        gid %" PRIu64, g->index);
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "gid", " %s", gid);
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "type", " %s",
			      kcoll_ctl_name_of(kcoll_ctl_gid_types, g->type));
		if (g->netdev[0])
			kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "netdev", " netdev %s", g->netdev);
		kcoll_ctl_nl(ctl);
		kcoll_ctl_obj_end(ctl);
	}
	kcoll_ctl_arr_end(ctl);
	kcoll_ctl_obj_end(ctl);
}

static void kcoll_ctl_dev_print(struct kcoll_ctl *ctl, const struct kcoll_ctl_dev_view *d)
{
	const struct kcoll_nl_dev *nl = d->nl;
	char guid[20];
	size_t i;

	kcoll_ctl_guid_str(d->node_guid, guid, sizeof(guid));
	kcoll_ctl_obj_begin(ctl, NULL);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "name", "%s:", d->name);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "node_type", " node_type %s", d->node_type);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "ports", " ports %" PRIu64, d->ports);
	kcoll_ctl_bool(ctl, KCOLL_CTL_ANY, "allowed", " allowed %s", d->allowed);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "node_guid", " node_guid %s", guid);
	if (nl) {
		/* -1 is "default" and "auto" as text, as dev set takes them back */
		kcoll_ctl_int(ctl, KCOLL_CTL_JSON, "tos", NULL, nl->tos);
		if (nl->tos < 0)
			kcoll_ctl_text(ctl, " tos default");
		else
			kcoll_ctl_text(ctl, " tos %" PRId32, nl->tos);
		kcoll_ctl_int(ctl, KCOLL_CTL_JSON, "gid_index", NULL, nl->gid_index);
		if (nl->gid_index < 0)
			kcoll_ctl_text(ctl, " gid auto");
		else
			kcoll_ctl_text(ctl, " gid %" PRId32, nl->gid_index);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "comms", " comms %" PRIu64, nl->ncomms);
	}
	kcoll_ctl_nl(ctl);
	if (nl) {
		kcoll_ctl_arr_begin(ctl, "port");
		for (i = 0; i < nl->nports; i++)
			kcoll_ctl_port_print(ctl, &nl->ports[i]);
		kcoll_ctl_arr_end(ctl);
	}
	kcoll_ctl_obj_end(ctl);
}

/* Over netlink: every device, or the one named (the kernel says if there is none). */
static int kcoll_ctl_dev_show_nl(struct kcoll_ctl *ctl, struct kcoll_nl *nl, const char *name)
{
	struct kcoll_nl_dev *devs;
	size_t n, i;
	int ret;

	ret = kcoll_nl_dev_list(nl, name, &devs, &n);
	kcoll_nl_close(nl);
	if (ret == -ENODEV)
		return kcoll_ctl_err("dev %s: no such device", name);
	if (ret)
		return kcoll_ctl_nl_err("dev show", ret);
	kcoll_ctl_doc_begin(ctl, true);
	for (i = 0; i < n; i++) {
		struct kcoll_ctl_dev_view v = {
			.name = devs[i].name, .node_guid = devs[i].node_guid,
			.node_type = kcoll_ctl_name_of(kcoll_ctl_node_types, devs[i].node_type),
			.ports = (unsigned int)devs[i].nports, .allowed = devs[i].allowed,
			.nl = &devs[i],
		};

		kcoll_ctl_dev_print(ctl, &v);
	}
	kcoll_nl_dev_list_free(devs, n);
	return kcoll_ctl_doc_end(ctl);
}

static int kcoll_ctl_dev_show_sysfs(struct kcoll_ctl *ctl, const char *name)
{
	struct kcoll_dev_entry *devs;
	size_t n, i, shown = 0;
	int err;

	err = kcoll_dev_list(NULL, &devs, &n);
	if (err)
		return kcoll_ctl_sysfs_err("devices", -err);
	for (i = 0; i < n; i++)
		shown += !name || !strcmp(devs[i].name, name);
	if (name && !shown) {
		kcoll_dev_list_free(devs);
		return kcoll_ctl_err("dev %s: no such device", name);
	}
	kcoll_ctl_doc_begin(ctl, true);
	for (i = 0; i < n; i++) {
		struct kcoll_ctl_dev_view v = {
			.name = devs[i].name, .node_type = devs[i].node_type,
			.node_guid = devs[i].node_guid, .ports = devs[i].ports,
			.allowed = devs[i].allowed,
		};

		if (!name || !strcmp(devs[i].name, name))
			kcoll_ctl_dev_print(ctl, &v);
	}
	kcoll_dev_list_free(devs);
	return kcoll_ctl_doc_end(ctl);
}

/* JSON is always an array, as in rdma(8). */
static int kcoll_ctl_dev_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	const char *name = argc ? argv[0] : NULL;
	struct kcoll_nl *nl;
	int ret;

	if (argc > 1)
		return kcoll_ctl_extra_arg(&kcoll_ctl_dev_obj, "dev show", argv[1]);
	ret = kcoll_ctl_source(&nl);
	if (ret == KCOLL_CTL_SYSFS)
		return kcoll_ctl_dev_show_sysfs(ctl, name);
	if (ret)
		return ret;
	return kcoll_ctl_dev_show_nl(ctl, nl, name);
}

static bool kcoll_ctl_parse_long(const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 0);
	return !errno && *s && !*end && *v >= lo && *v <= hi;
}

/* dev set DEV [ allowed { yes | no } ] [ tos { N | default } ] [ gid { N | auto } ] */
static int kcoll_ctl_dev_set(struct kcoll_ctl *ctl, int argc, char **argv)
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
	return kcoll_ctl_nl_done(nl, "dev set", ret);
}

static const struct kcoll_ctl_cmd kcoll_ctl_dev_cmds[] = {
	{ "show",	kcoll_ctl_dev_show },
	{ "list",	kcoll_ctl_dev_show },	/* devlink/rdma users type either */
	{ "set",	kcoll_ctl_dev_set },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_dev_obj = {
	.name		= "dev",
	.summary	= "RDMA devices tracked by kcoll",
	.cmds		= kcoll_ctl_dev_cmds,
	.usage		= kcoll_ctl_dev_usage,
};
