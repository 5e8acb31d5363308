// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane (nl_core.c): the events group: join it, read events.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/kcoll_netlink.h>

#include "libkcoll_internal.h"
#include "nl_internal.h"

/* ---- events ------------------------------------------------------------------------------ */

static const char *const kcoll_nl_event_names[] = {
	[KCOLL_CMD_COMM_CREATED_NTF]		= "comm-created",
	[KCOLL_CMD_COMM_DESTROYED_NTF]		= "comm-destroyed",
	[KCOLL_CMD_COMM_FAILED_NTF]		= "comm-failed",
	[KCOLL_CMD_PEER_LOST_NTF]		= "peer-lost",
	[KCOLL_CMD_DEV_ADDED_NTF]		= "dev-added",
	[KCOLL_CMD_DEV_REMOVED_NTF]		= "dev-removed",
	[KCOLL_CMD_ENGINE_REGISTERED_NTF]	= "engine-registered",
};

const char *kcoll_nl_event_str(unsigned int cmd)
{
	if (cmd >= sizeof(kcoll_nl_event_names) / sizeof(kcoll_nl_event_names[0]))
		return NULL;
	return kcoll_nl_event_names[cmd];
}

int kcoll_nl_monitor(struct kcoll_nl *nl)
{
	int grp;

	if (!nl)
		return kcoll_fail(-EINVAL, "kcoll_nl_monitor: no handle");
	if (!nl->events_grp)
		return kcoll_fail(-EOPNOTSUPP, "the kcoll family has no events group");
	grp = (int)nl->events_grp;
	if (mnl_socket_setsockopt(nl->sock, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)) < 0)
		return kcoll_fail(-errno, "cannot join the events group: %s", strerror(errno));
	return 0;
}

struct kcoll_nl_event_ctx {
	struct kcoll_nl_event *ev;
	uint16_t family;
};

static int kcoll_nl_event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct kcoll_nl_event_ctx *ctx = data;
	struct kcoll_nl_event *ev = ctx->ev;
	const struct nlattr *a;
	bool dev, engine;

	if (nlh->nlmsg_type != ctx->family ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return MNL_CB_OK;
	/* Attribute sets differ by event: devices and engines, or communicators. */
	dev = g->cmd == KCOLL_CMD_DEV_ADDED_NTF || g->cmd == KCOLL_CMD_DEV_REMOVED_NTF;
	engine = g->cmd == KCOLL_CMD_ENGINE_REGISTERED_NTF;
	memset(ev, 0, sizeof(*ev));
	ev->cmd = g->cmd;
	ev->failed_rank = UINT32_MAX;
	ev->peer_rank = UINT32_MAX;
	ev->allowed = -1;
	mnl_attr_for_each(a, nlh, sizeof(*g)) {
		int t = mnl_attr_get_type(a);

		if (dev) {
			if (t == KCOLL_A_DEV_NAME)
				kcoll_nl_strcpy(ev->dev_name, sizeof(ev->dev_name), a);
			else if (t == KCOLL_A_DEV_NODE_TYPE)
				ev->node_type = mnl_attr_get_u8(a);
			else if (t == KCOLL_A_DEV_ALLOWED)
				ev->allowed = mnl_attr_get_u8(a);
			continue;
		}
		if (engine) {
			if (t == KCOLL_A_ENGINE_NAME)
				kcoll_nl_strcpy(ev->engine, sizeof(ev->engine), a);
			else if (t == KCOLL_A_ENGINE_PRIORITY)
				ev->priority = mnl_attr_get_u32(a);
			continue;
		}
		switch (t) {
		case KCOLL_A_COMM_ID:
			ev->comm_id = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_RANK:
			ev->rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_NRANKS:
			ev->nranks = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_NETNS:
			ev->netns = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_OWNER_PID:
			ev->owner_pid = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_STATE:
			ev->state = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_COMM_ERROR:
			ev->error = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_FAILED_RANK:
			ev->failed_rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_PEER_RANK:
			ev->peer_rank = mnl_attr_get_u32(a);
			break;
		}
	}
	return MNL_CB_STOP;	/* one event per call */
}

int kcoll_nl_event_next(struct kcoll_nl *nl, struct kcoll_nl_event *ev, int timeout_ms)
{
	struct kcoll_nl_event_ctx ctx = { .ev = ev };
	struct pollfd pfd;
	ssize_t n;
	int ret;

	if (!nl || !ev)
		return kcoll_fail(-EINVAL, "kcoll_nl_event_next: missing argument");
	ctx.family = nl->family;
	pfd.fd = mnl_socket_get_fd(nl->sock);
	pfd.events = POLLIN;
	for (;;) {
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0 && errno == EINTR)
			return kcoll_err(-EINTR);
		if (ret < 0)
			return kcoll_fail(-errno, "poll: %s", strerror(errno));
		if (!ret)
			return kcoll_err(-EAGAIN);
		/* One datagram holds one event: the kernel sends each on its own. */
		n = recv(pfd.fd, nl->buf, nl->bufsz, MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n < 0 && errno == ENOBUFS)
			return kcoll_fail(-ENOBUFS, "events were lost (receive buffer overflow)");
		if (n < 0)
			return kcoll_fail(-errno, "netlink receive: %s", strerror(errno));
		ev->cmd = 0;
		ret = mnl_cb_run(nl->buf, n, 0, 0, kcoll_nl_event_cb, &ctx);
		if (ret < 0)
			return kcoll_fail(-errno, "malformed event: %s", strerror(errno));
		if (ev->cmd && ev->cmd != KCOLL_CMD_UNSPEC)
			return 0;
	}
}
