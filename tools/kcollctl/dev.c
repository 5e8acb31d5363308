// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl dev: the RDMA devices kcoll tracks, from /sys/kernel/kcoll/devices.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "kcollctl.h"

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

/* The GUID the way rdma(8) and ibstat print it: four groups of 16 bits. */
static void kcoll_ctl_guid_str(uint64_t guid, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x", (unsigned int)(guid >> 48) & 0xffff,
		 (unsigned int)(guid >> 32) & 0xffff, (unsigned int)(guid >> 16) & 0xffff,
		 (unsigned int)guid & 0xffff);
}

static void kcoll_ctl_dev_json_one(struct kcoll_jw *jw, const struct kcoll_dev_entry *d)
{
	char guid[20];

	kcoll_ctl_guid_str(d->node_guid, guid, sizeof(guid));
	kcoll_jw_obj_open(jw);
	kcoll_jw_kv_str(jw, "name", d->name);
	kcoll_jw_kv_str(jw, "node_type", d->node_type);
	kcoll_jw_kv_uint(jw, "ports", d->ports);
	kcoll_jw_kv_bool(jw, "allowed", d->allowed);
	kcoll_jw_kv_str(jw, "node_guid", guid);
	kcoll_jw_obj_close(jw);
}

static void kcoll_ctl_dev_plain_one(const struct kcoll_dev_entry *d)
{
	char guid[20];

	kcoll_ctl_guid_str(d->node_guid, guid, sizeof(guid));
	printf("%s: node_type %s ports %u allowed %s node_guid %s\n", d->name, d->node_type,
	       d->ports, d->allowed ? "yes" : "no", guid);
}

static bool kcoll_ctl_dev_match(const struct kcoll_dev_entry *d, const char *name)
{
	return !name || !strcmp(d->name, name);
}

/* Print the devices matching @name (all when NULL); JSON is always an array, as in rdma(8). */
static int kcoll_ctl_dev_print(struct kcoll_ctl *ctl, const struct kcoll_dev_entry *devs,
			       size_t n, const char *name)
{
	size_t i;

	if (ctl->json) {
		kcoll_ctl_json_begin(ctl);
		kcoll_jw_arr_open(&ctl->jw);
	}
	for (i = 0; i < n; i++) {
		if (!kcoll_ctl_dev_match(&devs[i], name))
			continue;
		if (ctl->json)
			kcoll_ctl_dev_json_one(&ctl->jw, &devs[i]);
		else
			kcoll_ctl_dev_plain_one(&devs[i]);
	}
	if (!ctl->json)
		return KCOLL_CTL_OK;
	kcoll_jw_arr_close(&ctl->jw);
	return kcoll_ctl_json_end(ctl);
}

static bool kcoll_ctl_dev_exists(const struct kcoll_dev_entry *devs, size_t n,
				 const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(devs[i].name, name))
			return true;
	}
	return false;
}

static int kcoll_ctl_dev_list_err(int err)
{
	const char *what = strerror(err);

	/* "Bad message" alone would not tell an admin anything. */
	if (err == EBADMSG)
		what = "unexpected content (kcollctl and the module disagree on the sysfs layout)";
	return kcoll_ctl_err("cannot read %s/devices: %s%s", kcoll_sysfs_root(), what,
			     kcoll_ctl_hint(err));
}

static int kcoll_ctl_dev_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_dev_entry *devs;
	const char *name = NULL;
	size_t n;
	int err, ret;

	if (argc > 1)
		return kcoll_ctl_usage_err(&kcoll_ctl_dev_obj,
					   "dev show: unexpected argument \"%s\"", argv[1]);
	if (argc)
		name = argv[0];
	/* Netlink has ports and GIDs; sysfs (or a fake tree, KCOLL_SYSFS_ROOT) is the fallback. */
	if (!getenv(KCOLL_SYSFS_ROOT_ENV)) {
		ret = kcoll_ctl_nl_dev_show(ctl, name);
		if (ret >= 0)
			return ret;
	}
	err = kcoll_dev_list(NULL, &devs, &n);
	if (err)
		return kcoll_ctl_dev_list_err(-err);
	if (name && !kcoll_ctl_dev_exists(devs, n, name))
		ret = kcoll_ctl_err("dev %s: no such device", name);
	else
		ret = kcoll_ctl_dev_print(ctl, devs, n, name);
	kcoll_dev_list_free(devs);
	return ret;
}

static const struct kcoll_ctl_cmd kcoll_ctl_dev_cmds[] = {
	{ "show",	kcoll_ctl_dev_show },
	{ "list",	kcoll_ctl_dev_show },	/* devlink/rdma users type either */
	{ "set",	kcoll_ctl_nl_dev_set },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_dev_obj = {
	.name		= "dev",
	.summary	= "RDMA devices tracked by kcoll",
	.cmds		= kcoll_ctl_dev_cmds,
	.usage		= kcoll_ctl_dev_usage,
};
