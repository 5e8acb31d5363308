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

#define EV(kind, m, ...)	KCOLL_NL_F(kind, struct kcoll_nl_event, m, __VA_ARGS__)

/* Attribute sets differ by event: devices, engines, or communicators. */
static const struct kcoll_nl_attr kcoll_nl_ev_dev_attrs[] = {
	[KCOLL_A_DEV_NAME]	= EV(STR, dev_name),
	[KCOLL_A_DEV_NODE_TYPE]	= EV(U8, node_type),
	[KCOLL_A_DEV_ALLOWED]	= EV(U8, allowed, .dflt = -1),
};

static const struct kcoll_nl_attr kcoll_nl_ev_engine_attrs[] = {
	[KCOLL_A_ENGINE_NAME]		= EV(STR, engine),
	[KCOLL_A_ENGINE_PRIORITY]	= EV(U32, priority),
};

static const struct kcoll_nl_attr kcoll_nl_ev_comm_attrs[] = {
	[KCOLL_A_COMM_ID]		= EV(U64, comm_id),
	[KCOLL_A_COMM_RANK]		= EV(U32, rank),
	[KCOLL_A_COMM_NRANKS]		= EV(U32, nranks),
	[KCOLL_A_COMM_NETNS]		= EV(U32, netns),
	[KCOLL_A_COMM_OWNER_PID]	= EV(U32, owner_pid),
	[KCOLL_A_COMM_STATE]		= EV(U8, state),
	[KCOLL_A_COMM_ERROR]		= EV(U32, error),
	[KCOLL_A_COMM_FAILED_RANK]	= EV(U32, failed_rank, .dflt = UINT32_MAX),
	[KCOLL_A_COMM_PEER_RANK]	= EV(U32, peer_rank, .dflt = UINT32_MAX),
};

static const struct kcoll_nl_obj kcoll_nl_ev_objs[] = {
	KCOLL_NL_OBJ(struct kcoll_nl_event, kcoll_nl_ev_dev_attrs),
	KCOLL_NL_OBJ(struct kcoll_nl_event, kcoll_nl_ev_engine_attrs),
	KCOLL_NL_OBJ(struct kcoll_nl_event, kcoll_nl_ev_comm_attrs),
};

/* @ev from one message of the events group; ev->cmd stays 0 for any other message. */
int kcoll_nl_event_parse(const struct nlmsghdr *nlh, uint16_t family, struct kcoll_nl_event *ev)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const struct kcoll_nl_obj *o = &kcoll_nl_ev_objs[2];
	size_t i;

	if (nlh->nlmsg_type != family || mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return MNL_CB_OK;
	if (g->cmd == KCOLL_CMD_DEV_ADDED_NTF || g->cmd == KCOLL_CMD_DEV_REMOVED_NTF)
		o = &kcoll_nl_ev_objs[0];
	else if (g->cmd == KCOLL_CMD_ENGINE_REGISTERED_NTF)
		o = &kcoll_nl_ev_objs[1];
	/* Every event has every default, whatever its set. */
	memset(ev, 0, sizeof(*ev));
	for (i = 0; i < sizeof(kcoll_nl_ev_objs) / sizeof(kcoll_nl_ev_objs[0]); i++)
		kcoll_nl_init(&kcoll_nl_ev_objs[i], ev);
	ev->cmd = g->cmd;
	kcoll_nl_parse_msg(o, nlh, ev);
	return MNL_CB_STOP;	/* one event per call */
}

struct kcoll_nl_event_ctx {
	struct kcoll_nl_event *ev;
	uint16_t family;
};

static int kcoll_nl_event_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl_event_ctx *ctx = data;

	return kcoll_nl_event_parse(nlh, ctx->family, ctx->ev);
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
