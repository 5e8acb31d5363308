/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll_failnth_test.c: the generic netlink commands under test, through libkcoll, and the
 * checks of a successful call.  Included once, by kcoll_failnth_test.c.
 */
#ifndef KCOLL_FAILNTH_NL_H
#define KCOLL_FAILNTH_NL_H

#include "kcoll_failnth.h"

/* ---- netlink commands ------------------------------------------------------------------------ */

static int call_nl_dev_get(struct fn *f)
{
	struct kcoll_nl_dev *d = NULL;
	size_t n = 0;
	int ret = kcoll_nl_dev_list(f->nlt, RXE, &d, &n);

	if (!ret && (n != 1 || strcmp(d[0].name, RXE) || !d[0].nports))
		ret = BADRESULT;
	kcoll_nl_dev_list_free(d, n);
	return ret;
}

static int call_nl_dev_dump(struct fn *f)
{
	struct kcoll_nl_dev *d = NULL;
	size_t n = 0, i;
	int ret = kcoll_nl_dev_list(f->nlt, NULL, &d, &n);

	if (!ret) {
		for (i = 0; i < n && strcmp(d[i].name, RXE); i++)
			;
		if (i == n)
			ret = BADRESULT;
	}
	kcoll_nl_dev_list_free(d, n);
	return ret;
}

static int call_nl_dev_set(struct fn *f) { return kcoll_nl_dev_set(f->nlt, RXE, 1, 1, -1); }
static int call_nl_dev_set_gid(struct fn *f) { return kcoll_nl_dev_set_gid(f->nlt, RXE, -1); }

static int check_dev(struct fn *f)
{
	struct kcoll_nl_dev *d = NULL;
	size_t n = 0;
	int ret = kcoll_nl_dev_list(f->nl, RXE, &d, &n);

	if (!ret && (n != 1 || d[0].allowed != 1 || d[0].tos != -1 || d[0].gid_index != -1))
		ret = BADRESULT;
	kcoll_nl_dev_list_free(d, n);
	return ret;
}

static int call_nl_comm_get(struct fn *f)
{
	struct kcoll_nl_comm *c = NULL;
	int ret = kcoll_nl_comm_get(f->nlt, f->id, 0, &c);

	if (!ret && (c->comm_id != f->id || c->nranks != 1))
		ret = BADRESULT;
	if (c)
		kcoll_nl_comm_list_free(c, 1);
	return ret;
}

static int call_nl_comm_dump(struct fn *f)
{
	struct kcoll_nl_comm *c = NULL;
	size_t n = 0, i;
	int ret = kcoll_nl_comm_list(f->nlt, &c, &n);

	if (!ret) {
		for (i = 0; i < n && c[i].comm_id != f->id; i++)
			;
		if (i == n)
			ret = BADRESULT;
	}
	kcoll_nl_comm_list_free(c, n);
	return ret;
}

static int call_nl_comm_abort(struct fn *f) { return kcoll_nl_comm_abort(f->nlt, f->id, 0); }

static int call_nl_config_get(struct fn *f)
{
	struct kcoll_nl_config c = { 0 };
	int ret = kcoll_nl_config_get(f->nlt, &c);

	if (!ret && (!c.op_timeout_ms || !c.chunk_bytes))
		ret = BADRESULT;
	return ret;
}

/* Set every parameter to what it is. */
static int prep_config(struct fn *f) { return prep_nl(f) ?: kcoll_nl_config_get(f->nl, &f->cfg); }
static int call_nl_config_set(struct fn *f) { return kcoll_nl_config_set(f->nlt, &f->cfg); }

static int check_config(struct fn *f)
{
	struct kcoll_nl_config c = { 0 };

	if (kcoll_nl_config_get(f->nl, &c))
		return BADRESULT;
	return memcmp(&c, &f->cfg, sizeof(c)) ? BADRESULT : 0;
}

static int call_nl_engine_get(struct fn *f)
{
	struct kcoll_nl_engine *e = NULL;
	size_t n = 0;
	int ret = kcoll_nl_engine_list(f->nlt, &e, &n);

	if (!ret && (!n || !e[0].npairs))
		ret = BADRESULT;
	kcoll_nl_engine_list_free(e, n);
	return ret;
}

static int prep_engine(struct fn *f)
{
	struct kcoll_nl_engine *e = NULL;
	size_t n = 0;
	int ret = prep_nl(f) ?: kcoll_nl_engine_list(f->nl, &e, &n);

	if (!ret && n)
		snprintf(f->engine, sizeof(f->engine), "%s", e[0].name);
	kcoll_nl_engine_list_free(e, n);
	return ret ?: (n ? 0 : -ENOENT);
}

static int call_nl_engine_set(struct fn *f)
{
	return kcoll_nl_engine_set(f->nlt, f->engine, KCOLL_INT32, KCOLL_SUM);
}

#endif /* KCOLL_FAILNTH_NL_H */
