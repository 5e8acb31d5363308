// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane: the "kcoll" generic netlink family through libmnl.
 *
 * One request at a time per handle: send, then read until the kernel's ACK, error or end of
 * dump.  Errors carry the kernel's extended ACK message into kcoll_last_error().
 * This file: the handle, requests and answers, the family lookup (nl_internal.h lists the
 * others).
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

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK		11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK		10
#endif

/* ---- plumbing ---------------------------------------------------------------------------- */

/* The text of an extended ACK after an error or an end of dump, else strerror(). */
static void kcoll_nl_extack(const struct nlmsghdr *nlh, const void *tlvs, int err)
{
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	const struct nlattr *attr;
	const char *msg = NULL;

	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && (const char *)tlvs < end) {
		size_t len = end - (const char *)tlvs;

		mnl_attr_for_each_payload(tlvs, len) {
			if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
			    !mnl_attr_validate(attr, MNL_TYPE_NUL_STRING))
				msg = mnl_attr_get_str(attr);
		}
	}
	kcoll_set_error("%s", msg ? msg : strerror(-err));
}

static int kcoll_nl_cb_error(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const char *tlvs;

	(void)data;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!e->error)
		return MNL_CB_STOP;
	tlvs = (const char *)e + sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		tlvs += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	kcoll_nl_extack(nlh, tlvs, e->error);
	errno = -e->error;
	return MNL_CB_ERROR;
}

static int kcoll_nl_cb_done(const struct nlmsghdr *nlh, void *data)
{
	int err;

	(void)data;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(int))
		return MNL_CB_STOP;
	err = *(const int *)mnl_nlmsg_get_payload(nlh);
	if (!err)
		return MNL_CB_STOP;
	kcoll_nl_extack(nlh, (const char *)mnl_nlmsg_get_payload(nlh) + sizeof(int), err);
	errno = -err;
	return MNL_CB_ERROR;
}

static int kcoll_nl_cb_noop(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static mnl_cb_t kcoll_nl_ctl_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_NOOP]	= kcoll_nl_cb_noop,
	[NLMSG_ERROR]	= kcoll_nl_cb_error,
	[NLMSG_DONE]	= kcoll_nl_cb_done,
};

struct nlmsghdr *kcoll_nl_req(struct kcoll_nl *nl, uint16_t type, uint16_t flags,
			      uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

/* Send @nlh and process the answers with @cb until the ACK or end of dump. */
int kcoll_nl_talk(struct kcoll_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	uint32_t seq = nlh->nlmsg_seq;
	ssize_t n;
	int ret;

	kcoll_clear_error();
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return kcoll_fail(-errno, "netlink send: %s", strerror(errno));
	do {
		n = mnl_socket_recvfrom(nl->sock, nl->buf, nl->bufsz);
		if (n < 0)
			return kcoll_fail(-errno, "netlink receive: %s", strerror(errno));
		ret = mnl_cb_run2(nl->buf, n, seq, nl->portid, cb, data, kcoll_nl_ctl_cbs,
				  NLMSG_MIN_TYPE);
	} while (ret == MNL_CB_OK);
	if (ret < 0) {
		int err = errno ? errno : EIO;

		if (!kcoll_last_error()[0])
			kcoll_set_error("%s", strerror(err));
		return kcoll_err(-err);
	}
	return 0;
}

/* ---- family lookup ----------------------------------------------------------------------- */

static int kcoll_nl_grp_cb(const struct nlattr *attr, struct kcoll_nl *nl)
{
	const struct nlattr *a;
	const char *name = NULL;
	uint32_t id = 0;

	mnl_attr_for_each_nested(a, attr) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME &&
		    !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
			name = mnl_attr_get_str(a);
		else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID &&
			 !mnl_attr_validate(a, MNL_TYPE_U32))
			id = mnl_attr_get_u32(a);
	}
	if (name && !strcmp(name, KCOLL_MCGRP_EVENTS))
		nl->events_grp = id;
	return MNL_CB_OK;
}

static int kcoll_nl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl *nl = data;
	const struct nlattr *a, *g;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			if (!mnl_attr_validate(a, MNL_TYPE_U16))
				nl->family = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			mnl_attr_for_each_nested(g, a)
				kcoll_nl_grp_cb(g, nl);
			break;
		}
	}
	return MNL_CB_OK;
}

int kcoll_nl_open(struct kcoll_nl **out)
{
	struct kcoll_nl *nl;
	struct nlmsghdr *nlh;
	int one = 1, ret;

	if (!out)
		return kcoll_fail(-EINVAL, "kcoll_nl_open: no handle pointer");
	*out = NULL;
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return kcoll_fail(-ENOMEM, "out of memory");
	nl->bufsz = MNL_SOCKET_BUFFER_SIZE < 32768 ? 32768 : MNL_SOCKET_BUFFER_SIZE;
	nl->buf = malloc(nl->bufsz);
	nl->sock = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!nl->buf || !nl->sock) {
		ret = kcoll_fail(nl->buf ? -errno : -ENOMEM, "netlink socket: %s",
				 strerror(nl->buf ? errno : ENOMEM));
		goto out_free;
	}
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = kcoll_fail(-errno, "netlink bind: %s", strerror(errno));
		goto out_free;
	}
	/* Extended ACKs, and errors without a copy of our request. */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (uint32_t)time(NULL);

	nlh = kcoll_nl_req(nl, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, KCOLL_FAMILY_NAME);
	ret = kcoll_nl_talk(nl, nlh, kcoll_nl_family_cb, nl);
	if (ret == -ENOENT)
		kcoll_set_error("no generic netlink family \"%s\"",
				KCOLL_FAMILY_NAME);
	if (ret)
		goto out_free;
	if (!nl->family) {
		ret = kcoll_fail(-EBADMSG, "generic netlink: no id for family \"%s\"",
				 KCOLL_FAMILY_NAME);
		goto out_free;
	}
	*out = nl;
	return 0;

out_free:
	kcoll_nl_close(nl);
	return kcoll_err(ret);
}

void kcoll_nl_close(struct kcoll_nl *nl)
{
	if (!nl)
		return;
	if (nl->sock)
		mnl_socket_close(nl->sock);
	free(nl->buf);
	free(nl);
}

int kcoll_nl_fd(struct kcoll_nl *nl)
{
	return nl ? mnl_socket_get_fd(nl->sock) : kcoll_err(-EINVAL);
}

/* ---- helpers of the object files ----------------------------------------------------------- */

/* ---- a growing array --------------------------------------------------------------------- */

void *kcoll_nl_grow(void **arr, size_t *n, size_t size)
{
	void *p = realloc(*arr, (*n + 1) * size);

	if (!p)
		return NULL;
	*arr = p;
	p = (char *)p + *n * size;
	memset(p, 0, size);
	(*n)++;
	return p;
}

void kcoll_nl_strcpy(char *dst, size_t len, const struct nlattr *a)
{
	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
		return;
	snprintf(dst, len, "%s", mnl_attr_get_str(a));
}
