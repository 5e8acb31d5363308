// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl engine: the reduction engines (built-in and registered by other modules), the
 * (dtype, op) pairs each declares and which one serves each pair; choosing one.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "kcollctl.h"

static void kcoll_ctl_engine_usage(FILE *f)
{
	fputs("Usage: kcollctl engine [ show ]\n"
	      "       kcollctl engine set NAME dtype DTYPE op OP\n"
	      "       kcollctl engine help\n"
	      "where  DTYPE := { int8 | uint8 | int32 | uint32 | int64 | uint64 | fp16 | bf16 |\n"
	      "                  fp32 | fp64 }\n"
	      "       OP := { sum | prod | min | max | avg }\n"
	      "show lists every engine (the built-in one first) with the pairs it declares; a\n"
	      "pair marked * is the one it serves now.  set makes NAME serve the pair (it must\n"
	      "declare it); needs CAP_NET_ADMIN.\n", f);
}

static int kcoll_ctl_engine_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_nl_engine *e;
	struct kcoll_nl *nl;
	size_t n, i, j;
	int ret;

	if (argc)
		return kcoll_ctl_extra_arg(&kcoll_ctl_engine_obj, "engine show", argv[0]);
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_ctl_nl_done(nl, "engine show", kcoll_nl_engine_list(nl, &e, &n));
	if (ret)
		return ret;
	kcoll_ctl_doc_begin(ctl, true);
	for (i = 0; i < n; i++) {
		kcoll_ctl_obj_begin(ctl, NULL);
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "name", "%s", e[i].name);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "priority", " priority %" PRIu64,
			       e[i].priority);
		kcoll_ctl_text(ctl, " serves");
		kcoll_ctl_arr_begin(ctl, "serves");
		for (j = 0; j < e[i].npairs; j++) {
			const char *dt = kcoll_datatype_str(e[i].pairs[j].dtype);
			const char *op = kcoll_red_op_str(e[i].pairs[j].op);

			/* As text dtype/op, with a * when the engine serves the pair now. */
			kcoll_ctl_obj_begin(ctl, NULL);
			kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "dtype", " %s", dt ? dt : "?");
			kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "op", "/%s", op ? op : "?");
			kcoll_ctl_bool(ctl, KCOLL_CTL_JSON, "active", NULL, e[i].pairs[j].active);
			if (e[i].pairs[j].active)
				kcoll_ctl_text(ctl, "*");
			kcoll_ctl_obj_end(ctl);
		}
		kcoll_ctl_arr_end(ctl);
		kcoll_ctl_nl(ctl);
		kcoll_ctl_obj_end(ctl);
	}
	kcoll_nl_engine_list_free(e, n);
	return kcoll_ctl_doc_end(ctl);
}

static int kcoll_ctl_engine_set(struct kcoll_ctl *ctl, int argc, char **argv)
{
	int i, dtype = -1, op = -1, ret;
	struct kcoll_nl *nl;

	(void)ctl;
	if (argc < 1)
		return kcoll_ctl_usage_err(&kcoll_ctl_engine_obj, "engine set: NAME missing");
	for (i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			return kcoll_ctl_usage_err(&kcoll_ctl_engine_obj,
						   "engine set: %s needs a value", argv[i]);
		if (!strcmp(argv[i], "dtype"))
			dtype = kcoll_datatype_from_str(argv[i + 1]);
		else if (!strcmp(argv[i], "op"))
			op = kcoll_red_op_from_str(argv[i + 1]);
		else
			return kcoll_ctl_usage_err(&kcoll_ctl_engine_obj,
						   "engine set: unknown key \"%s\"", argv[i]);
		if ((!strcmp(argv[i], "dtype") ? dtype : op) < 0)
			return kcoll_ctl_usage_err(&kcoll_ctl_engine_obj,
						   "engine set: unknown %s \"%s\"", argv[i],
						   argv[i + 1]);
	}
	if (dtype < 0 || op < 0)
		return kcoll_ctl_usage_err(&kcoll_ctl_engine_obj,
					   "engine set: both dtype and op are needed");
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	return kcoll_ctl_nl_done(nl, "engine set", kcoll_nl_engine_set(nl, argv[0], dtype, op));
}

static const struct kcoll_ctl_cmd kcoll_ctl_engine_cmds[] = {
	{ "show",	kcoll_ctl_engine_show },
	{ "set",	kcoll_ctl_engine_set },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_engine_obj = {
	.name		= "engine",
	.summary	= "reduction engines and the (dtype, op) pairs they serve",
	.cmds		= kcoll_ctl_engine_cmds,
	.usage		= kcoll_ctl_engine_usage,
};
