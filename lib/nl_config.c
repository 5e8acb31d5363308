// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane (nl_core.c): the configuration: get and set.
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

/* ---- configuration ----------------------------------------------------------------------- */

/* A KCOLL_A_CONFIG_ALGO nest, on the decoder's stack: counts only with both attributes. */
struct kcoll_nl_algo {
	uint32_t coll, algo;
	uint32_t seen;		/* 1: coll, 2: algo */
};

#define ALGO(m, bit_)	KCOLL_NL_F(U32, struct kcoll_nl_algo, m, \
				   .seen = offsetof(struct kcoll_nl_algo, seen), .bit = (bit_))

static const struct kcoll_nl_attr kcoll_nl_algo_attrs[] = {
	[KCOLL_A_ALGO_COLL]		= ALGO(coll, 1),
	[KCOLL_A_ALGO_ALGORITHM]	= ALGO(algo, 2),
};

static const struct kcoll_nl_obj kcoll_nl_algo_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_algo, kcoll_nl_algo_attrs);

static int kcoll_nl_config_algo(const struct nlattr *nest, void *obj)
{
	struct kcoll_nl_config_opts *c = obj;
	struct kcoll_nl_algo p = { 0 };

	kcoll_nl_parse_nest(&kcoll_nl_algo_obj, nest, &p);
	if (p.seen == 3 && p.coll < KCOLL_NL_MAX_COLLECTIVES) {
		c->algo[p.coll] = p.algo;
		c->algo_mask |= 1u << p.coll;
		c->mask |= KCOLL_NL_CFG_ALGO;
	}
	return 0;
}

/* Each attribute present sets its bit of kcoll_nl_config_opts.mask. */
#define CFG(kind, m, bit_)	KCOLL_NL_F(kind, struct kcoll_nl_config_opts, m, \
					   .seen = offsetof(struct kcoll_nl_config_opts, mask), \
					   .bit = (bit_))

static const struct kcoll_nl_attr kcoll_nl_config_attrs[] = {
	[KCOLL_A_CONFIG_LISTEN_PORT]	   = CFG(U16, listen_port, KCOLL_NL_CFG_LISTEN_PORT),
	[KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS] = CFG(U32, connect_timeout_ms,
						  KCOLL_NL_CFG_CONNECT_TIMEOUT),
	[KCOLL_A_CONFIG_OP_TIMEOUT_MS]	   = CFG(U32, op_timeout_ms, KCOLL_NL_CFG_OP_TIMEOUT),
	[KCOLL_A_CONFIG_TOS]		   = CFG(U32, tos, KCOLL_NL_CFG_TOS),
	[KCOLL_A_CONFIG_CHUNK_BYTES]	   = CFG(U32, chunk_bytes, KCOLL_NL_CFG_CHUNK_BYTES),
	[KCOLL_A_CONFIG_SMALL_BYTES]	   = CFG(U32, small_bytes, KCOLL_NL_CFG_SMALL_BYTES),
	[KCOLL_A_CONFIG_MEDIUM_BYTES]	   = CFG(U32, medium_bytes, KCOLL_NL_CFG_MEDIUM_BYTES),
	[KCOLL_A_CONFIG_TREE_RANKS]	   = CFG(U32, tree_ranks, KCOLL_NL_CFG_TREE_RANKS),
	[KCOLL_A_CONFIG_ALGO]		   = { .kind = KCOLL_NL_CALL,
					       .call = kcoll_nl_config_algo },
	[KCOLL_A_CONFIG_TRANSPORT]	   = CFG(U8, transport, KCOLL_NL_CFG_TRANSPORT),
	[KCOLL_A_CONFIG_TCP_PORT]	   = CFG(U16, tcp_port, KCOLL_NL_CFG_TCP_PORT),
};

const struct kcoll_nl_obj kcoll_nl_config_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_config_opts, kcoll_nl_config_attrs);

static int kcoll_nl_config_cb(const struct nlmsghdr *nlh, void *data)
{
	kcoll_nl_parse_msg(&kcoll_nl_config_obj, nlh, data);
	return MNL_CB_OK;
}

/*
 * The size of struct kcoll_nl_config_opts in libkcoll 0.7, its first: a caller's @sz must
 * cover it.  Settings added later are read and written only as far as @sz reaches.
 */
#define KCOLL_NL_CONFIG_OPTS_SZ_VER0	offsetofend(struct kcoll_nl_config_opts, tcp_port)

/* The mask bits struct kcoll_nl_config (0.3) has: the settings before transport. */
#define KCOLL_NL_CFG_V3	(KCOLL_NL_CFG_TRANSPORT - 1)
#define KCOLL_NL_CFG_ALL	(KCOLL_NL_CFG_V3 | KCOLL_NL_CFG_TRANSPORT | KCOLL_NL_CFG_TCP_PORT)

/* The arguments' checks of both: @opts first, so that a bad @sz is told as such. */
static int kcoll_nl_config_opts_ok(const char *fn, const struct kcoll_nl *nl,
				   const struct kcoll_nl_config_opts *opts)
{
	int err;

	if (!opts)
		return kcoll_fail(-EINVAL, "%s: missing argument", fn);
	err = OPTS_VALID(opts, kcoll_nl_config_opts, tcp_port, KCOLL_NL_CONFIG_OPTS_SZ_VER0);
	if (err)
		return kcoll_fail(err, "%s: opts->sz %zu: %s", fn, opts->sz,
				  err == -E2BIG ? "fields this libkcoll does not know are set" :
				  "below the first struct kcoll_nl_config_opts");
	if (!nl)
		return kcoll_fail(-EINVAL, "%s: missing argument", fn);
	return 0;
}

int kcoll_nl_config_get_opts(struct kcoll_nl *nl, struct kcoll_nl_config_opts *opts)
{
	struct kcoll_nl_config_opts c = { 0 };
	struct nlmsghdr *nlh;
	int err;

	err = kcoll_nl_config_opts_ok("kcoll_nl_config_get_opts", nl, opts);
	if (err)
		return err;
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_CONFIG_GET, KCOLL_FAMILY_VERSION);
	err = kcoll_nl_talk(nl, nlh, kcoll_nl_config_cb, &c);
	if (err)
		return err;
	/* Everything after @sz that this library knows; the caller's larger tail is zero. */
	memcpy(&opts->mask, &c.mask, sizeof(c) - offsetof(struct kcoll_nl_config_opts, mask));
	return 0;
}

int kcoll_nl_config_set_opts(struct kcoll_nl *nl, const struct kcoll_nl_config_opts *opts)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	uint32_t i;
	int err;

	err = kcoll_nl_config_opts_ok("kcoll_nl_config_set_opts", nl, opts);
	if (err)
		return err;
	if (opts->mask & ~KCOLL_NL_CFG_ALL)
		return kcoll_fail(-EINVAL, "kcoll_nl_config_set_opts: unknown mask bits %#x",
				  opts->mask & ~KCOLL_NL_CFG_ALL);
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_CONFIG_SET, KCOLL_FAMILY_VERSION);
	kcoll_nl_put_fields(nlh, &kcoll_nl_config_obj, opts, opts->mask);
	for (i = 0; (opts->mask & KCOLL_NL_CFG_ALGO) && i < KCOLL_NL_MAX_COLLECTIVES; i++) {
		if (!(opts->algo_mask & (1u << i)))
			continue;
		nest = mnl_attr_nest_start(nlh, KCOLL_A_CONFIG_ALGO);
		mnl_attr_put_u32(nlh, KCOLL_A_ALGO_COLL, i);
		mnl_attr_put_u32(nlh, KCOLL_A_ALGO_ALGORITHM, opts->algo[i]);
		mnl_attr_nest_end(nlh, nest);
	}
	return kcoll_nl_talk(nl, nlh, NULL, NULL);
}

/* The fields both layouts have, from @mask to @algo, in the same order and types. */
#define KCOLL_NL_CONFIG_COMMON(dst, src) do {				\
	(dst)->mask = (src)->mask & KCOLL_NL_CFG_V3;			\
	(dst)->listen_port = (src)->listen_port;			\
	(dst)->connect_timeout_ms = (src)->connect_timeout_ms;		\
	(dst)->op_timeout_ms = (src)->op_timeout_ms;			\
	(dst)->tos = (src)->tos;					\
	(dst)->chunk_bytes = (src)->chunk_bytes;			\
	(dst)->small_bytes = (src)->small_bytes;			\
	(dst)->medium_bytes = (src)->medium_bytes;			\
	(dst)->tree_ranks = (src)->tree_ranks;				\
	(dst)->algo_mask = (src)->algo_mask;				\
	memcpy((dst)->algo, (src)->algo, sizeof((dst)->algo));		\
} while (0)

int kcoll_nl_config_get(struct kcoll_nl *nl, struct kcoll_nl_config *cfg)
{
	KCOLL_OPTS(kcoll_nl_config_opts, opts);
	int err;

	if (!nl || !cfg)
		return kcoll_fail(-EINVAL, "kcoll_nl_config_get: missing argument");
	memset(cfg, 0, sizeof(*cfg));
	err = kcoll_nl_config_get_opts(nl, &opts);
	if (!err)
		KCOLL_NL_CONFIG_COMMON(cfg, &opts);
	return err;
}

int kcoll_nl_config_set(struct kcoll_nl *nl, const struct kcoll_nl_config *c)
{
	KCOLL_OPTS(kcoll_nl_config_opts, opts);

	if (!nl || !c)
		return kcoll_fail(-EINVAL, "kcoll_nl_config_set: missing argument");
	KCOLL_NL_CONFIG_COMMON(&opts, c);
	return kcoll_nl_config_set_opts(nl, &opts);
}
