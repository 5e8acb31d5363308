// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane (nl_core.c): devices: list (with ports and GIDs) and set.
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

/* ---- devices ----------------------------------------------------------------------------- */

struct kcoll_nl_devs {
	struct kcoll_nl_dev *devs;
	size_t n;
	int err;
};

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
