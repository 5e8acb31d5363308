// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane: the "kcoll" generic netlink family through libmnl.
 *
 * One request at a time per handle: send, then read until the kernel's ACK, error or end of
 * dump.  Errors carry the kernel's extended ACK message into kcoll_last_error().
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

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK		11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK		10
#endif

struct kcoll_nl {
	struct mnl_socket *sock;
	uint16_t family;
	uint32_t events_grp;	/* 0: the family has no events group */
	uint32_t portid;
	uint32_t seq;
	char *buf;		/* MNL_SOCKET_BUFFER_SIZE bytes, at least 8 KiB */
	size_t bufsz;
};

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

static struct nlmsghdr *kcoll_nl_req(struct kcoll_nl *nl, uint16_t type, uint16_t flags,
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
static int kcoll_nl_talk(struct kcoll_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
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

/* ---- a growing array --------------------------------------------------------------------- */

static void *kcoll_nl_grow(void **arr, size_t *n, size_t size)
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

/* ---- devices ----------------------------------------------------------------------------- */

struct kcoll_nl_devs {
	struct kcoll_nl_dev *devs;
	size_t n;
	int err;
};

static void kcoll_nl_strcpy(char *dst, size_t len, const struct nlattr *a)
{
	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
		return;
	snprintf(dst, len, "%s", mnl_attr_get_str(a));
}

static int kcoll_nl_parse_gid(const struct nlattr *nest, struct kcoll_nl_port *p)
{
	struct kcoll_nl_gid *g = kcoll_nl_grow((void **)&p->gids, &p->ngids, sizeof(*g));
	const struct nlattr *a;

	if (!g)
		return -ENOMEM;
	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_GID_INDEX:
			g->index = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_GID_GID:
			if (mnl_attr_get_payload_len(a) == sizeof(g->gid))
				memcpy(g->gid, mnl_attr_get_payload(a), sizeof(g->gid));
			break;
		case KCOLL_A_GID_TYPE:
			g->type = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_GID_NETDEV:
			kcoll_nl_strcpy(g->netdev, sizeof(g->netdev), a);
			break;
		}
	}
	return 0;
}

static int kcoll_nl_parse_port(const struct nlattr *nest, struct kcoll_nl_dev *d)
{
	struct kcoll_nl_port *p = kcoll_nl_grow((void **)&d->ports, &d->nports, sizeof(*p));
	const struct nlattr *a;

	if (!p)
		return -ENOMEM;
	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_PORT_INDEX:
			p->index = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PORT_STATE:
			p->state = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_PORT_ACTIVE_MTU:
			p->active_mtu = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PORT_GID:
			if (kcoll_nl_parse_gid(a, p))
				return -ENOMEM;
			break;
		}
	}
	return 0;
}

static int kcoll_nl_dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl_devs *l = data;
	struct kcoll_nl_dev *d;
	const struct nlattr *a;

	d = kcoll_nl_grow((void **)&l->devs, &l->n, sizeof(*d));
	if (!d)
		goto nomem;
	d->tos = -1;
	d->gid_index = -1;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_DEV_NAME:
			kcoll_nl_strcpy(d->name, sizeof(d->name), a);
			break;
		case KCOLL_A_DEV_NODE_TYPE:
			d->node_type = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_DEV_NODE_GUID:
			d->node_guid = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_DEV_ALLOWED:
			d->allowed = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_DEV_TOS:
			d->tos = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_DEV_GID_INDEX:
			d->gid_index = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_DEV_NCOMMS:
			d->ncomms = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_DEV_PORT:
			if (kcoll_nl_parse_port(a, d))
				goto nomem;
			break;
		}
	}
	return MNL_CB_OK;
nomem:
	l->err = -ENOMEM;
	errno = ENOMEM;
	return MNL_CB_ERROR;
}

void kcoll_nl_dev_list_free(struct kcoll_nl_dev *devs, size_t n)
{
	size_t i, j;

	for (i = 0; devs && i < n; i++) {
		for (j = 0; j < devs[i].nports; j++)
			free(devs[i].ports[j].gids);
		free(devs[i].ports);
	}
	free(devs);
}

int kcoll_nl_dev_list(struct kcoll_nl *nl, const char *name, struct kcoll_nl_dev **devs,
		      size_t *n)
{
	struct kcoll_nl_devs l = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	if (!nl || !devs || !n)
		return kcoll_fail(-EINVAL, "kcoll_nl_dev_list: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, name ? 0 : NLM_F_DUMP, KCOLL_CMD_DEV_GET,
			   KCOLL_FAMILY_VERSION);
	if (name)
		mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, name);
	ret = kcoll_nl_talk(nl, nlh, kcoll_nl_dev_cb, &l);
	if (ret) {
		kcoll_nl_dev_list_free(l.devs, l.n);
		return ret;
	}
	*devs = l.devs;
	*n = l.n;
	return 0;
}

int kcoll_nl_dev_set(struct kcoll_nl *nl, const char *name, int allowed, int set_tos,
		     int32_t tos)
{
	struct nlmsghdr *nlh;

	if (!nl || !name)
		return kcoll_fail(-EINVAL, "kcoll_nl_dev_set: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_DEV_SET, KCOLL_FAMILY_VERSION);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, name);
	if (allowed >= 0)
		mnl_attr_put_u8(nlh, KCOLL_A_DEV_ALLOWED, allowed);
	if (set_tos)
		mnl_attr_put_u32(nlh, KCOLL_A_DEV_TOS, (uint32_t)tos);
	return kcoll_nl_talk(nl, nlh, NULL, NULL);
}

int kcoll_nl_dev_set_gid(struct kcoll_nl *nl, const char *name, int32_t gid_index)
{
	struct nlmsghdr *nlh;

	if (!nl || !name)
		return kcoll_fail(-EINVAL, "kcoll_nl_dev_set_gid: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_DEV_SET, KCOLL_FAMILY_VERSION);
	mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, name);
	mnl_attr_put_u32(nlh, KCOLL_A_DEV_GID_INDEX, (uint32_t)gid_index);
	return kcoll_nl_talk(nl, nlh, NULL, NULL);
}

/* ---- engines ------------------------------------------------------------------------------ */

struct kcoll_nl_engines {
	struct kcoll_nl_engine *engines;
	size_t n;
};

static int kcoll_nl_engine_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl_engines *l = data;
	struct kcoll_nl_engine *e;
	const struct nlattr *a, *b;

	e = kcoll_nl_grow((void **)&l->engines, &l->n, sizeof(*e));
	if (!e)
		return MNL_CB_ERROR;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		struct kcoll_nl_engine_pair *p;

		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_ENGINE_NAME:
			kcoll_nl_strcpy(e->name, sizeof(e->name), a);
			break;
		case KCOLL_A_ENGINE_PRIORITY:
			e->priority = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_ENGINE_SERVES:
			p = kcoll_nl_grow((void **)&e->pairs, &e->npairs, sizeof(*p));
			if (!p)
				return MNL_CB_ERROR;
			mnl_attr_for_each_nested(b, a) {
				switch (mnl_attr_get_type(b)) {
				case KCOLL_A_ENGINE_PAIR_DTYPE:
					p->dtype = mnl_attr_get_u32(b);
					break;
				case KCOLL_A_ENGINE_PAIR_OP:
					p->op = mnl_attr_get_u32(b);
					break;
				case KCOLL_A_ENGINE_PAIR_ACTIVE:
					p->active = mnl_attr_get_u8(b);
					break;
				}
			}
			break;
		}
	}
	return MNL_CB_OK;
}

void kcoll_nl_engine_list_free(struct kcoll_nl_engine *engines, size_t n)
{
	size_t i;

	for (i = 0; engines && i < n; i++)
		free(engines[i].pairs);
	free(engines);
}

int kcoll_nl_engine_list(struct kcoll_nl *nl, struct kcoll_nl_engine **engines, size_t *n)
{
	struct kcoll_nl_engines l = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	if (!nl || !engines || !n)
		return kcoll_fail(-EINVAL, "kcoll_nl_engine_list: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, NLM_F_DUMP, KCOLL_CMD_ENGINE_GET,
			   KCOLL_FAMILY_VERSION);
	ret = kcoll_nl_talk(nl, nlh, kcoll_nl_engine_cb, &l);
	if (ret) {
		kcoll_nl_engine_list_free(l.engines, l.n);
		return ret;
	}
	*engines = l.engines;
	*n = l.n;
	return 0;
}

int kcoll_nl_engine_set(struct kcoll_nl *nl, const char *name, int dtype, int op)
{
	struct nlmsghdr *nlh;

	if (!nl || !name || dtype < 0 || op < 0)
		return kcoll_fail(-EINVAL, "kcoll_nl_engine_set: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_ENGINE_SET, KCOLL_FAMILY_VERSION);
	mnl_attr_put_strz(nlh, KCOLL_A_ENGINE_NAME, name);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_DTYPE, (uint32_t)dtype);
	mnl_attr_put_u32(nlh, KCOLL_A_ENGINE_OP, (uint32_t)op);
	return kcoll_nl_talk(nl, nlh, NULL, NULL);
}

/* ---- communicators ----------------------------------------------------------------------- */

struct kcoll_nl_comms {
	struct kcoll_nl_comm *comms;
	size_t n;
};

static int kcoll_nl_parse_peer(const struct nlattr *nest, struct kcoll_nl_comm *c)
{
	struct kcoll_nl_peer *p = kcoll_nl_grow((void **)&c->peers, &c->npeers, sizeof(*p));
	const struct nlattr *a;

	if (!p)
		return -ENOMEM;
	p->sgid_index = -1;
	p->gid_type = -1;
	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_PEER_RANK:
			p->rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_STATE:
			p->state = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_PEER_READY:
			p->ready = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_PEER_LEFT:
			p->left = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_PEER_LAST_ERR:
			p->last_err = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_PENDING_SENDS:
			p->pending_sends = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_PENDING_RECVS:
			p->pending_recvs = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_IDLE_MS:
			p->idle_ms = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_SGID_INDEX:
			p->sgid_index = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_GID_TYPE:
			p->gid_type = mnl_attr_get_u8(a);
			break;
		}
	}
	return 0;
}

static void kcoll_nl_parse_op(const struct nlattr *nest, struct kcoll_nl_op *op)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_OP_TYPE:
			op->type = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_OP_ID:
			op->id = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_OP_COLL:
			op->coll = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_OP_BYTES:
			op->bytes = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_OP_STEP:
			op->step = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_OP_NSTEPS:
			op->nsteps = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_OP_WAIT_PEER:
			op->wait_peer = mnl_attr_get_u32(a);
			break;
		}
	}
}

static int kcoll_nl_comm_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl_comms *l = data;
	struct kcoll_nl_comm *c;
	const struct nlattr *a;

	c = kcoll_nl_grow((void **)&l->comms, &l->n, sizeof(*c));
	if (!c)
		goto nomem;
	c->failed_rank = UINT32_MAX;
	c->op.wait_peer = UINT32_MAX;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_COMM_ID:
			c->comm_id = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_RANK:
			c->rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_NRANKS:
			c->nranks = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_OWNER_PID:
			c->owner_pid = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_OWNER_UID:
			c->owner_uid = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_STATE:
			c->state = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_COMM_ERROR:
			c->error = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_FAILED_RANK:
			c->failed_rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_DEV_NAME:
			kcoll_nl_strcpy(c->dev_name, sizeof(c->dev_name), a);
			break;
		case KCOLL_A_COMM_NETNS:
			c->netns = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_TX_BYTES:
			c->tx_bytes = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_RX_BYTES:
			c->rx_bytes = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_TX_OPS:
			c->tx_ops = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_RX_OPS:
			c->rx_ops = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_PEERS_UP:
			c->peers_up = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_PEER:
			if (kcoll_nl_parse_peer(a, c))
				goto nomem;
			break;
		case KCOLL_A_COMM_PEERS_TRUNCATED:
			c->peers_truncated = 1;
			break;
		case KCOLL_A_COMM_OP:
			kcoll_nl_parse_op(a, &c->op);
			break;
		}
	}
	return MNL_CB_OK;
nomem:
	errno = ENOMEM;
	return MNL_CB_ERROR;
}

void kcoll_nl_comm_list_free(struct kcoll_nl_comm *comms, size_t n)
{
	size_t i;

	for (i = 0; comms && i < n; i++)
		free(comms[i].peers);
	free(comms);
}

int kcoll_nl_comm_list(struct kcoll_nl *nl, struct kcoll_nl_comm **comms, size_t *n)
{
	struct kcoll_nl_comms l = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	if (!nl || !comms || !n)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_list: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, NLM_F_DUMP, KCOLL_CMD_COMM_GET, KCOLL_FAMILY_VERSION);
	ret = kcoll_nl_talk(nl, nlh, kcoll_nl_comm_cb, &l);
	if (ret) {
		kcoll_nl_comm_list_free(l.comms, l.n);
		return ret;
	}
	*comms = l.comms;
	*n = l.n;
	return 0;
}

int kcoll_nl_comm_get(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank,
		      struct kcoll_nl_comm **comm)
{
	struct kcoll_nl_comms l = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	if (!nl || !comm)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_get: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_COMM_GET, KCOLL_FAMILY_VERSION);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, comm_id);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, rank);
	ret = kcoll_nl_talk(nl, nlh, kcoll_nl_comm_cb, &l);
	if (!ret && l.n != 1)
		ret = kcoll_fail(-EBADMSG, "comm-get: %zu answers instead of one", l.n);
	if (ret) {
		kcoll_nl_comm_list_free(l.comms, l.n);
		return ret;
	}
	*comm = l.comms;
	return 0;
}

int kcoll_nl_comm_abort(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank)
{
	struct nlmsghdr *nlh;

	if (!nl)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_abort: no handle");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_COMM_ABORT, KCOLL_FAMILY_VERSION);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, comm_id);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, rank);
	return kcoll_nl_talk(nl, nlh, NULL, NULL);
}

/* ---- configuration ----------------------------------------------------------------------- */

static int kcoll_nl_config_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl_config *c = data;
	const struct nlattr *a, *b;
	uint32_t coll, algo;
	bool has_coll, has_algo;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_CONFIG_LISTEN_PORT:
			c->listen_port = mnl_attr_get_u16(a);
			c->mask |= KCOLL_NL_CFG_LISTEN_PORT;
			break;
		case KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS:
			c->connect_timeout_ms = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_CONNECT_TIMEOUT;
			break;
		case KCOLL_A_CONFIG_OP_TIMEOUT_MS:
			c->op_timeout_ms = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_OP_TIMEOUT;
			break;
		case KCOLL_A_CONFIG_TOS:
			c->tos = (int32_t)mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_TOS;
			break;
		case KCOLL_A_CONFIG_CHUNK_BYTES:
			c->chunk_bytes = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_CHUNK_BYTES;
			break;
		case KCOLL_A_CONFIG_SMALL_BYTES:
			c->small_bytes = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_SMALL_BYTES;
			break;
		case KCOLL_A_CONFIG_MEDIUM_BYTES:
			c->medium_bytes = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_MEDIUM_BYTES;
			break;
		case KCOLL_A_CONFIG_TREE_RANKS:
			c->tree_ranks = mnl_attr_get_u32(a);
			c->mask |= KCOLL_NL_CFG_TREE_RANKS;
			break;
		case KCOLL_A_CONFIG_ALGO:
			has_coll = has_algo = false;
			coll = algo = 0;
			mnl_attr_for_each_nested(b, a) {
				if (mnl_attr_get_type(b) == KCOLL_A_ALGO_COLL) {
					coll = mnl_attr_get_u32(b);
					has_coll = true;
				} else if (mnl_attr_get_type(b) == KCOLL_A_ALGO_ALGORITHM) {
					algo = mnl_attr_get_u32(b);
					has_algo = true;
				}
			}
			if (has_coll && has_algo && coll < KCOLL_NL_MAX_COLLECTIVES) {
				c->algo[coll] = algo;
				c->algo_mask |= 1u << coll;
				c->mask |= KCOLL_NL_CFG_ALGO;
			}
			break;
		}
	}
	return MNL_CB_OK;
}

int kcoll_nl_config_get(struct kcoll_nl *nl, struct kcoll_nl_config *cfg)
{
	struct nlmsghdr *nlh;

	if (!nl || !cfg)
		return kcoll_fail(-EINVAL, "kcoll_nl_config_get: missing argument");
	memset(cfg, 0, sizeof(*cfg));
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_CONFIG_GET, KCOLL_FAMILY_VERSION);
	return kcoll_nl_talk(nl, nlh, kcoll_nl_config_cb, cfg);
}

int kcoll_nl_config_set(struct kcoll_nl *nl, const struct kcoll_nl_config *c)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	uint32_t i;

	if (!nl || !c)
		return kcoll_fail(-EINVAL, "kcoll_nl_config_set: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_CONFIG_SET, KCOLL_FAMILY_VERSION);
	if (c->mask & KCOLL_NL_CFG_LISTEN_PORT)
		mnl_attr_put_u16(nlh, KCOLL_A_CONFIG_LISTEN_PORT, c->listen_port);
	if (c->mask & KCOLL_NL_CFG_CONNECT_TIMEOUT)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS, c->connect_timeout_ms);
	if (c->mask & KCOLL_NL_CFG_OP_TIMEOUT)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_OP_TIMEOUT_MS, c->op_timeout_ms);
	if (c->mask & KCOLL_NL_CFG_TOS)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_TOS, (uint32_t)c->tos);
	if (c->mask & KCOLL_NL_CFG_CHUNK_BYTES)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_CHUNK_BYTES, c->chunk_bytes);
	if (c->mask & KCOLL_NL_CFG_SMALL_BYTES)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_SMALL_BYTES, c->small_bytes);
	if (c->mask & KCOLL_NL_CFG_MEDIUM_BYTES)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_MEDIUM_BYTES, c->medium_bytes);
	if (c->mask & KCOLL_NL_CFG_TREE_RANKS)
		mnl_attr_put_u32(nlh, KCOLL_A_CONFIG_TREE_RANKS, c->tree_ranks);
	for (i = 0; (c->mask & KCOLL_NL_CFG_ALGO) && i < KCOLL_NL_MAX_COLLECTIVES; i++) {
		if (!(c->algo_mask & (1u << i)))
			continue;
		nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
		mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, i);
		mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, c->algo[i]);
		mnl_attr_nest_end(nlh, nest);
	}
	return kcoll_nl_talk(nl, nlh, NULL, NULL);
}

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
