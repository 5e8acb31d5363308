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
