// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane (nl_core.c): reduction engines: list and choose.
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

/* ---- engines ------------------------------------------------------------------------------ */

#define PAIR(kind, m)		KCOLL_NL_F(kind, struct kcoll_nl_engine_pair, m)

static const struct kcoll_nl_attr kcoll_nl_pair_attrs[] = {
	[KCOLL_A_ENGINE_PAIR_DTYPE]	= PAIR(U32, dtype),
	[KCOLL_A_ENGINE_PAIR_OP]	= PAIR(U32, op),
	[KCOLL_A_ENGINE_PAIR_ACTIVE]	= PAIR(U8, active),
};

static const struct kcoll_nl_obj kcoll_nl_pair_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_engine_pair, kcoll_nl_pair_attrs);

static const struct kcoll_nl_attr kcoll_nl_engine_attrs[] = {
	[KCOLL_A_ENGINE_NAME]	  = KCOLL_NL_F(STR, struct kcoll_nl_engine, name),
	[KCOLL_A_ENGINE_PRIORITY] = KCOLL_NL_F(U32, struct kcoll_nl_engine, priority),
	[KCOLL_A_ENGINE_SERVES]	  = KCOLL_NL_ARRAY_OF(struct kcoll_nl_engine, pairs, npairs,
						      &kcoll_nl_pair_obj),
};

const struct kcoll_nl_obj kcoll_nl_engine_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_engine, kcoll_nl_engine_attrs);

void kcoll_nl_engine_list_free(struct kcoll_nl_engine *engines, size_t n)
{
	kcoll_nl_free(&kcoll_nl_engine_obj, engines, n);
}

int kcoll_nl_engine_list(struct kcoll_nl *nl, struct kcoll_nl_engine **engines, size_t *n)
{
	struct nlmsghdr *nlh;

	if (!nl || !engines || !n)
		return kcoll_fail(-EINVAL, "kcoll_nl_engine_list: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, NLM_F_DUMP, KCOLL_CMD_ENGINE_GET,
			   KCOLL_FAMILY_VERSION);
	return kcoll_nl_list(nl, nlh, &kcoll_nl_engine_obj, (void **)engines, n);
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
