// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl config: the module's configuration store, read and set through the "kcoll"
 * generic netlink family.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "kcollctl.h"

static void kcoll_ctl_config_usage(FILE *f)
{
	fputs("Usage: kcollctl config [ show ]\n"
	      "       kcollctl config set { KEY VALUE | algo COLL ALGO } ...\n"
	      "       kcollctl config help\n"
	      "where  KEY := { listen_port | connect_timeout_ms | op_timeout_ms | tos |\n"
	      "                chunk_bytes | small_bytes | medium_bytes | tree_ranks |\n"
	      "                transport | tcp_port }\n"
	      "       tos VALUE := { 0..255 | default }\n"
	      "       transport VALUE := { auto | rdma | tcp }\n"
	      "       COLL := { broadcast | scatter | gather | reduce | allreduce | allgather |\n"
	      "                 reduce_scatter | alltoall | barrier | allgatherv | alltoallv |\n"
	      "                 reduce_scatterv }\n"
	      "       ALGO := { auto | ring | recdbl | rabenseifner | binomial | dbtree | chain |\n"
	      "                 pairwise | bruck | hier }\n"
	      "config set needs CAP_NET_ADMIN; the kernel checks every value.\n", f);
}

struct kcoll_ctl_cfg_key {
	const char *name;
	uint32_t bit;
	size_t off;
	int size;	/* 1: u8 transport (a name), 2: u16, 4: u32, -4: s32 */
};

#define KCOLL_CTL_CFG(n, b, f, s) { n, b, offsetof(struct kcoll_nl_config_opts, f), s }

static const struct kcoll_ctl_cfg_key kcoll_ctl_cfg_keys[] = {
	KCOLL_CTL_CFG("listen_port", KCOLL_NL_CFG_LISTEN_PORT, listen_port, 2),
	KCOLL_CTL_CFG("connect_timeout_ms", KCOLL_NL_CFG_CONNECT_TIMEOUT, connect_timeout_ms, 4),
	KCOLL_CTL_CFG("op_timeout_ms", KCOLL_NL_CFG_OP_TIMEOUT, op_timeout_ms, 4),
	KCOLL_CTL_CFG("tos", KCOLL_NL_CFG_TOS, tos, -4),
	KCOLL_CTL_CFG("chunk_bytes", KCOLL_NL_CFG_CHUNK_BYTES, chunk_bytes, 4),
	KCOLL_CTL_CFG("small_bytes", KCOLL_NL_CFG_SMALL_BYTES, small_bytes, 4),
	KCOLL_CTL_CFG("medium_bytes", KCOLL_NL_CFG_MEDIUM_BYTES, medium_bytes, 4),
	KCOLL_CTL_CFG("tree_ranks", KCOLL_NL_CFG_TREE_RANKS, tree_ranks, 4),
	KCOLL_CTL_CFG("transport", KCOLL_NL_CFG_TRANSPORT, transport, 1),
	KCOLL_CTL_CFG("tcp_port", KCOLL_NL_CFG_TCP_PORT, tcp_port, 2),
};

#define KCOLL_CTL_NKEYS	(sizeof(kcoll_ctl_cfg_keys) / sizeof(kcoll_ctl_cfg_keys[0]))

static int64_t kcoll_ctl_cfg_get(const struct kcoll_nl_config_opts *c,
				 const struct kcoll_ctl_cfg_key *k)
{
	const char *p = (const char *)c + k->off;

	if (k->size == 1)
		return *(const uint8_t *)p;
	if (k->size == 2)
		return *(const uint16_t *)p;
	if (k->size == -4)
		return *(const int32_t *)p;
	return *(const uint32_t *)p;
}

static int kcoll_ctl_config_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	KCOLL_OPTS(kcoll_nl_config_opts, c);
	struct kcoll_nl *nl;
	size_t i;
	int ret;

	if (argc)
		return kcoll_ctl_extra_arg(&kcoll_ctl_config_obj, "config show", argv[0]);
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_ctl_nl_done(nl, "config show", kcoll_nl_config_get_opts(nl, &c));
	if (ret)
		return ret;
	kcoll_ctl_doc_begin(ctl, false);
	for (i = 0; i < KCOLL_CTL_NKEYS; i++) {
		const struct kcoll_ctl_cfg_key *k = &kcoll_ctl_cfg_keys[i];

		if (!(c.mask & k->bit))
			continue;
		kcoll_ctl_text(ctl, "%s", k->name);
		if (k->size == 1) {
			const char *t = kcoll_transport_str((int)c.transport);

			kcoll_ctl_str(ctl, KCOLL_CTL_ANY, k->name, " %s\n", t ? t : "unknown");
			continue;
		}
		kcoll_ctl_int(ctl, KCOLL_CTL_ANY, k->name, " %" PRId64 "\n",
			      kcoll_ctl_cfg_get(&c, k));
	}
	kcoll_ctl_obj_begin(ctl, "algo");
	for (i = 0; i < KCOLL_NUM_COLLECTIVES && i < KCOLL_NL_MAX_COLLECTIVES; i++) {
		const char *coll = kcoll_collective_str((int)i);
		const char *a = kcoll_algorithm_str((int)c.algo[i]);

		if (!(c.algo_mask & (1u << i)))
			continue;
		kcoll_ctl_text(ctl, "algo %s", coll);
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, coll, " %s\n", a ? a : "unknown");
	}
	kcoll_ctl_obj_end(ctl);
	return kcoll_ctl_doc_end(ctl);
}

static int kcoll_ctl_config_set(struct kcoll_ctl *ctl, int argc, char **argv)
{
	KCOLL_OPTS(kcoll_nl_config_opts, c);
	struct kcoll_nl *nl;
	int i, ret, coll, algo;
	size_t k;

	(void)ctl;
	if (!argc)
		return kcoll_ctl_usage_err(&kcoll_ctl_config_obj, "config set: nothing to set");
	for (i = 0; i < argc; i += 2) {
		if (!strcmp(argv[i], "algo")) {
			if (i + 2 >= argc)
				return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
							   "config set: algo needs COLL ALGO");
			coll = kcoll_collective_from_str(argv[i + 1]);
			algo = kcoll_algorithm_from_str(argv[i + 2]);
			if (coll < 0 || algo < 0)
				return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
							   "config set: unknown %s \"%s\"",
							   coll < 0 ? "collective" : "algorithm",
							   coll < 0 ? argv[i + 1] : argv[i + 2]);
			c.mask |= KCOLL_NL_CFG_ALGO;
			c.algo_mask |= 1u << coll;
			c.algo[coll] = algo;
			i++;
			continue;
		}
		for (k = 0; k < KCOLL_CTL_NKEYS; k++) {
			if (!strcmp(argv[i], kcoll_ctl_cfg_keys[k].name))
				break;
		}
		if (k == KCOLL_CTL_NKEYS)
			return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
						   "config set: unknown key \"%s\"", argv[i]);
		if (i + 1 >= argc)
			return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
						   "config set: %s needs a value", argv[i]);
		{
			const struct kcoll_ctl_cfg_key *key = &kcoll_ctl_cfg_keys[k];
			char *p = (char *)&c + key->off, *end;
			long long v;

			if (key->size == -4 && !strcmp(argv[i + 1], "default")) {
				v = -1;
			} else if (key->size == 1) {
				v = kcoll_transport_from_str(argv[i + 1]);
				if (v < 0)
					return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
								   "config set: bad transport \"%s\" (auto, rdma or tcp)",
								   argv[i + 1]);
			} else {
				errno = 0;
				v = strtoll(argv[i + 1], &end, 0);
				/* Range checks are the kernel's; only reject what does not fit. */
				if (errno || !*argv[i + 1] || *end || v < INT32_MIN ||
				    v > UINT32_MAX || (key->size == 2 && (v < 0 || v > 65535)))
					return kcoll_ctl_usage_err(&kcoll_ctl_config_obj,
								   "config set: bad %s \"%s\"",
								   key->name, argv[i + 1]);
			}
			if (key->size == 1)
				*(uint8_t *)p = (uint8_t)v;
			else if (key->size == 2)
				*(uint16_t *)p = (uint16_t)v;
			else if (key->size == -4)
				*(int32_t *)p = (int32_t)v;
			else
				*(uint32_t *)p = (uint32_t)v;
			c.mask |= key->bit;
		}
	}
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	return kcoll_ctl_nl_done(nl, "config set", kcoll_nl_config_set_opts(nl, &c));
}

static const struct kcoll_ctl_cmd kcoll_ctl_config_cmds[] = {
	{ "show",	kcoll_ctl_config_show },
	{ "set",	kcoll_ctl_config_set },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_config_obj = {
	.name		= "config",
	.summary	= "module configuration (timeouts, ports, tos, transport, collective tuning)",
	.cmds		= kcoll_ctl_config_cmds,
	.usage		= kcoll_ctl_config_usage,
};
