// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl's access to the "kcoll" generic netlink family (libkcoll's kcoll_nl_*), the names
 * of the family's enums, and the one place that decides where a show command reads from:
 * netlink when the family is there, else sysfs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkcoll.h>

#include "kcollctl.h"

/*
 * Names of the family's own enums; the uAPI's (collectives, algorithms, datatypes, ops) are
 * libkcoll's kcoll_*_str().
 */
const char *const kcoll_ctl_node_types[] = {
	"unknown", "InfiniBand", "RoCE", "iWARP", NULL,
};
const char *const kcoll_ctl_gid_types[] = { "ib", "roce-v1", "roce-v2", NULL };
const char *const kcoll_ctl_comm_states[] = {
	"creating", "connecting", "ready", "error", "aborted", "destroyed", NULL,
};

const char *kcoll_ctl_name_of(const char *const *tbl, unsigned int v)
{
	unsigned int i;

	for (i = 0; tbl[i]; i++) {
		if (i == v)
			return tbl[i];
	}
	return "unknown";
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

int kcoll_ctl_nl_done(struct kcoll_nl *nl, const char *what, int ret)
{
	kcoll_nl_close(nl);
	return ret ? kcoll_ctl_nl_err(what, ret) : KCOLL_CTL_OK;
}

/*
 * Netlink has more (ports and GIDs, peers and the operation in flight); sysfs is the fallback
 * without the family, and what a fake tree (KCOLL_SYSFS_ROOT, the host tests) stands for.
 */
int kcoll_ctl_source(struct kcoll_nl **nl)
{
	if (getenv(KCOLL_SYSFS_ROOT_ENV))
		return KCOLL_CTL_SYSFS;
	return kcoll_ctl_nl_open(nl, true);
}

int kcoll_ctl_sysfs_err(const char *what, int err)
{
	const char *root = kcoll_sysfs_root(), *why = strerror(err), *hint;

	/* "Bad message" alone would not tell an admin anything. */
	if (err == EBADMSG)
		why = "unexpected content (kcollctl and the module disagree on the sysfs layout)";
	hint = kcoll_ctl_hint(err);
	/* The module is there but predates this directory. */
	if (err == ENOENT && !strcmp(what, "comms") && !access(root, F_OK))
		hint = " (does the loaded kcoll module support communicators?)";
	return kcoll_ctl_err("cannot read %s/%s: %s%s", root, what, why, hint);
}
