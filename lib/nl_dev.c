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

#define GID(kind, m, ...)	KCOLL_NL_F(kind, struct kcoll_nl_gid, m, __VA_ARGS__)
#define PORT(kind, m, ...)	KCOLL_NL_F(kind, struct kcoll_nl_port, m, __VA_ARGS__)
#define DEV(kind, m, ...)	KCOLL_NL_F(kind, struct kcoll_nl_dev, m, __VA_ARGS__)

static const struct kcoll_nl_attr kcoll_nl_gid_attrs[] = {
	[KCOLL_A_GID_INDEX]	= GID(U32, index),
	[KCOLL_A_GID_GID]	= GID(BIN, gid),
	[KCOLL_A_GID_TYPE]	= GID(U8, type),
	[KCOLL_A_GID_NETDEV]	= GID(STR, netdev),
};

static const struct kcoll_nl_obj kcoll_nl_gid_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_gid, kcoll_nl_gid_attrs);

static const struct kcoll_nl_attr kcoll_nl_port_attrs[] = {
	[KCOLL_A_PORT_INDEX]	  = PORT(U32, index),
	[KCOLL_A_PORT_STATE]	  = PORT(U8, state),
	[KCOLL_A_PORT_ACTIVE_MTU] = PORT(U32, active_mtu),
	[KCOLL_A_PORT_GID]	  = KCOLL_NL_ARRAY_OF(struct kcoll_nl_port, gids, ngids,
						      &kcoll_nl_gid_obj),
};

static const struct kcoll_nl_obj kcoll_nl_port_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_port, kcoll_nl_port_attrs);

static const struct kcoll_nl_attr kcoll_nl_dev_attrs[] = {
	[KCOLL_A_DEV_NAME]	= DEV(STR, name),
	[KCOLL_A_DEV_NODE_TYPE]	= DEV(U8, node_type),
	[KCOLL_A_DEV_NODE_GUID]	= DEV(U64, node_guid),
	[KCOLL_A_DEV_ALLOWED]	= DEV(U8, allowed),
	[KCOLL_A_DEV_TOS]	= DEV(U32, tos, .dflt = -1),
	[KCOLL_A_DEV_GID_INDEX]	= DEV(U32, gid_index, .dflt = -1),
	[KCOLL_A_DEV_NCOMMS]	= DEV(U32, ncomms),
	[KCOLL_A_DEV_PORT]	= KCOLL_NL_ARRAY_OF(struct kcoll_nl_dev, ports, nports,
						    &kcoll_nl_port_obj),
};

const struct kcoll_nl_obj kcoll_nl_dev_obj = KCOLL_NL_OBJ(struct kcoll_nl_dev, kcoll_nl_dev_attrs);

void kcoll_nl_dev_list_free(struct kcoll_nl_dev *devs, size_t n)
{
	kcoll_nl_free(&kcoll_nl_dev_obj, devs, n);
}

int kcoll_nl_dev_list(struct kcoll_nl *nl, const char *name, struct kcoll_nl_dev **devs,
		      size_t *n)
{
	struct nlmsghdr *nlh;

	if (!nl || !devs || !n)
		return kcoll_fail(-EINVAL, "kcoll_nl_dev_list: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, name ? 0 : NLM_F_DUMP, KCOLL_CMD_DEV_GET,
			   KCOLL_FAMILY_VERSION);
	if (name)
		mnl_attr_put_strz(nlh, KCOLL_A_DEV_NAME, name);
	return kcoll_nl_list(nl, nlh, &kcoll_nl_dev_obj, (void **)devs, n);
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
