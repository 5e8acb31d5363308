// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll_comm_list() and "kcollctl comm" against fake /sys/kernel/kcoll/comms trees built in
 * a temporary directory.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkcoll.h>

#include "kselftest_harness.h"
#include "kcoll_test.h"

#ifndef LIBKCOLL_SO_PATH
#error "LIBKCOLL_SO_PATH must name the libkcoll.so.0 of this tree"
#endif

/* One comms/<name>/ directory, attribute values as the module prints them; NULL: left out. */
struct kcoll_test_comm {
	const char *name;
	const char *state;
	const char *error;
	const char *rank;
	const char *nranks;
	const char *owner_pid;
	const char *peers_connected;
	const char *tx_bytes;
	const char *rx_bytes;
	const char *tx_ops;
	const char *rx_ops;
};

static const struct kcoll_test_comm kcoll_c1 = {
	"86e20c1d95477967-1", "ready\n", "0\n", "1\n", "3\n", "191\n", "2\n",
	"19922944\n", "19922943\n", "19\n", "18\n",
};

static const struct kcoll_test_comm kcoll_c0 = {
	"86e20c1d95477967-0", "ready\n", "0\n", "0\n", "3\n", "190\n", "2\n",
	"1\n", "2\n", "3\n", "4\n",
};

/* A smaller id than the two above, in error. */
static const struct kcoll_test_comm kcoll_err = {
	"0000000000abcdef-3", "error\n", "-104\n", "3\n", "4\n", "4242\n", "0\n",
	"0\n", "0\n", "0\n", "0\n",
};

/* The same id and rank as kcoll_c1, in another network namespace. */
static const struct kcoll_test_comm kcoll_c1_ns = {
	"86e20c1d95477967-1-ns4026532565", "connecting\n", "0\n", "1\n", "3\n", "77\n", "1\n",
	"0\n", "0\n", "0\n", "0\n",
};

static int kcoll_test_comm_attr(const char *root, const char *comm, const char *attr,
				const char *val)
{
	char rel[PATH_MAX];

	if (!val)
		return 0;
	snprintf(rel, sizeof(rel), "comms/%s/%s", comm, attr);
	return kcoll_test_write(root, rel, val);
}

static int kcoll_test_add_comm(const char *root, const struct kcoll_test_comm *c)
{
	const char *const attrs[] = {
		"state", "error", "rank", "nranks", "owner_pid", "peers_connected",
		"tx_bytes", "rx_bytes", "tx_ops", "rx_ops",
	};
	const char *const vals[] = {
		c->state, c->error, c->rank, c->nranks, c->owner_pid, c->peers_connected,
		c->tx_bytes, c->rx_bytes, c->tx_ops, c->rx_ops,
	};
	char rel[PATH_MAX];
	size_t i;
	int err;

	snprintf(rel, sizeof(rel), "comms/%s", c->name);
	err = kcoll_test_mkdir(root, rel);
	for (i = 0; !err && i < sizeof(attrs) / sizeof(attrs[0]); i++)
		err = kcoll_test_comm_attr(root, c->name, attrs[i], vals[i]);
	return err;
}

/* An empty module tree: the top-level files and an empty comms/. */
static void kcoll_fake_root(struct __test_metadata *_metadata, char *root, size_t len)
{
	ASSERT_EQ(0, kcoll_test_mkdtemp(root, len));
	ASSERT_EQ(0, kcoll_test_write(root, "version", "0.1.0\n"));
	ASSERT_EQ(0, kcoll_test_mkdir(root, "devices"));
	ASSERT_EQ(0, kcoll_test_mkdir(root, "comms"));
	/* Make sure no test reads the real tree by accident. */
	unsetenv(KCOLL_SYSFS_ROOT_ENV);
}

static int kcoll_list(const char *root, struct kcoll_comm_entry **comms, size_t *n)
{
	KCOLL_OPTS(kcoll_comm_list_opts, opts, .sysfs_root = root);

	return kcoll_comm_list(&opts, comms, n);
}

FIXTURE(comms) {
	char root[256];	/* mkdtemp() under $TMPDIR */
	struct kcoll_comm_entry *comms;
	size_t n;
};

FIXTURE_SETUP(comms)
{
	kcoll_fake_root(_metadata, self->root, sizeof(self->root));
}

FIXTURE_TEARDOWN(comms)
{
	kcoll_comm_list_free(self->comms);
	kcoll_test_rmtree(self->root);
}

TEST_F(comms, none)
{
	ASSERT_EQ(0, kcoll_list(self->root, &self->comms, &self->n));
	EXPECT_EQ(0, self->n);
	EXPECT_EQ(NULL, self->comms);
}

/* Sorted by id, then rank, whatever the directory order; every field read. */
TEST_F(comms, two_comms_sorted)
{
	const struct kcoll_comm_entry *c;

	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c1));
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_err));
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c0));
	ASSERT_EQ(0, kcoll_list(self->root, &self->comms, &self->n));
	ASSERT_EQ(3, self->n);

	c = &self->comms[0];
	EXPECT_STREQ("0000000000abcdef-3", c->name);
	EXPECT_EQ(0xabcdefULL, c->comm_id);
	EXPECT_EQ(3, c->rank);
	EXPECT_EQ(4, c->nranks);
	EXPECT_STREQ("error", c->state);
	EXPECT_EQ(-104, c->error);
	EXPECT_EQ(4242, c->owner_pid);
	EXPECT_EQ(0, c->peers_connected);

	c = &self->comms[1];
	EXPECT_STREQ("86e20c1d95477967-0", c->name);
	EXPECT_EQ(0x86e20c1d95477967ULL, c->comm_id);
	EXPECT_EQ(0, c->rank);
	EXPECT_EQ(190, c->owner_pid);

	c = &self->comms[2];
	EXPECT_STREQ("86e20c1d95477967-1", c->name);
	EXPECT_EQ(0x86e20c1d95477967ULL, c->comm_id);
	EXPECT_EQ(1, c->rank);
	EXPECT_EQ(3, c->nranks);
	EXPECT_STREQ("ready", c->state);
	EXPECT_EQ(0, c->error);
	EXPECT_EQ(191, c->owner_pid);
	EXPECT_EQ(2, c->peers_connected);
	EXPECT_EQ(19922944, c->tx_bytes);
	EXPECT_EQ(19922943, c->rx_bytes);
	EXPECT_EQ(19, c->tx_ops);
	EXPECT_EQ(18, c->rx_ops);
}

/* Ranks compare as numbers (2 before 10), and the array grows more than once. */
TEST_F(comms, many_ranks_sorted)
{
	struct kcoll_test_comm c = kcoll_c0;
	char name[32], rank[16];
	int i;

	c.nranks = "20\n";
	for (i = 19; i >= 0; i--) {
		snprintf(name, sizeof(name), "00000000000000ff-%d", i);
		snprintf(rank, sizeof(rank), "%d\n", i);
		c.name = name;
		c.rank = rank;
		ASSERT_EQ(0, kcoll_test_add_comm(self->root, &c));
	}
	ASSERT_EQ(0, kcoll_list(self->root, &self->comms, &self->n));
	ASSERT_EQ(20, self->n);
	for (i = 0; i < 20; i++) {
		EXPECT_EQ(0xff, self->comms[i].comm_id);
		EXPECT_EQ(i, self->comms[i].rank);
	}
}

/* Equal id and rank in two network namespaces: both listed, the initial one first. */
TEST_F(comms, netns_suffix)
{
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c1_ns));
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c1));
	ASSERT_EQ(0, kcoll_list(self->root, &self->comms, &self->n));
	ASSERT_EQ(2, self->n);
	EXPECT_STREQ("86e20c1d95477967-1", self->comms[0].name);
	EXPECT_STREQ("86e20c1d95477967-1-ns4026532565", self->comms[1].name);
	EXPECT_EQ(0x86e20c1d95477967ULL, self->comms[1].comm_id);
	EXPECT_EQ(1, self->comms[1].rank);
	EXPECT_STREQ("connecting", self->comms[1].state);
}

/* Without opts the library takes $KCOLL_SYSFS_ROOT. */
TEST_F(comms, env_root)
{
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c0));
	ASSERT_EQ(0, setenv(KCOLL_SYSFS_ROOT_ENV, self->root, 1));
	ASSERT_EQ(0, kcoll_comm_list(NULL, &self->comms, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_STREQ("86e20c1d95477967-0", self->comms[0].name);
}

/* No trailing newline, the largest values, a stray file and every state name are fine. */
TEST_F(comms, lenient_where_harmless)
{
	static const char *const states[] = {
		"creating", "connecting", "ready", "error", "aborted", "destroyed",
	};
	struct kcoll_test_comm c = {
		"ffffffffffffffff-4294967294", "aborted", "-4095", "4294967294", "4294967295",
		"4294967295", "4294967295", "18446744073709551615", "0", "18446744073709551615",
		"0",
	};
	size_t i;

	ASSERT_EQ(0, kcoll_test_write(self->root, "comms/not-a-comm", "x\n"));
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		c.state = states[i];
		ASSERT_EQ(0, kcoll_test_add_comm(self->root, &c));
		ASSERT_EQ(0, kcoll_list(self->root, &self->comms, &self->n));
		ASSERT_EQ(1, self->n);
		EXPECT_STREQ(states[i], self->comms[0].state);
		EXPECT_EQ(~0ULL, self->comms[0].comm_id);
		EXPECT_EQ(4294967294u, self->comms[0].rank);
		EXPECT_EQ(-4095, self->comms[0].error);
		EXPECT_EQ(~0ULL, self->comms[0].tx_bytes);
		EXPECT_EQ(~0ULL, self->comms[0].tx_ops);
		kcoll_comm_list_free(self->comms);
		self->comms = NULL;
	}
}

/*
 * A communicator destroyed between readdir() and open(): a dangling link stands in for the
 * directory that is gone.  It is left out, the others are listed.
 */
TEST_F(comms, vanished_skipped)
{
	char path[PATH_MAX];

	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c0));
	snprintf(path, sizeof(path), "%s/comms/86e20c1d95477967-2", self->root);
	ASSERT_EQ(0, symlink("/nonexistent-kcoll-test", path));
	ASSERT_EQ(0, kcoll_list(self->root, &self->comms, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_STREQ("86e20c1d95477967-0", self->comms[0].name);
}

TEST_F(comms, missing_root)
{
	KCOLL_OPTS(kcoll_comm_list_opts, opts, .sysfs_root = "/nonexistent-kcoll-test");

	errno = 0;
	EXPECT_EQ(-ENOENT, kcoll_comm_list(&opts, &self->comms, &self->n));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(NULL, self->comms);
	EXPECT_EQ(0, self->n);
}

TEST_F(comms, missing_comms_dir)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/comms", self->root);
	ASSERT_EQ(0, rmdir(dir));
	EXPECT_EQ(-ENOENT, kcoll_list(self->root, &self->comms, &self->n));
}

TEST_F(comms, null_args)
{
	EXPECT_EQ(-EINVAL, kcoll_comm_list(NULL, NULL, &self->n));
	EXPECT_EQ(-EINVAL, kcoll_comm_list(NULL, &self->comms, NULL));
}

TEST_F(comms, opts_validation)
{
	struct {
		struct kcoll_comm_list_opts base;
		long future;
	} next;
	struct kcoll_comm_list_opts small = { .sz = sizeof(size_t) };

	EXPECT_EQ(-EINVAL, kcoll_comm_list(&small, &self->comms, &self->n));
	memset(&next, 0, sizeof(next));
	next.base.sz = sizeof(next);
	next.base.sysfs_root = self->root;
	next.future = 7;
	EXPECT_EQ(-E2BIG, kcoll_comm_list(&next.base, &self->comms, &self->n));
	next.future = 0;
	EXPECT_EQ(0, kcoll_comm_list(&next.base, &self->comms, &self->n));
}

/*
 * One malformed attribute (or directory name) of a communicator per variant, next to a good
 * one: the whole listing fails with EBADMSG rather than returning a partial or guessed list.
 */
FIXTURE(bad_comm) {
	char root[256];
	struct kcoll_comm_entry *comms;
	size_t n;
};

FIXTURE_SETUP(bad_comm)
{
	kcoll_fake_root(_metadata, self->root, sizeof(self->root));
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c0));
}

FIXTURE_TEARDOWN(bad_comm)
{
	kcoll_comm_list_free(self->comms);
	kcoll_test_rmtree(self->root);
}

FIXTURE_VARIANT(bad_comm) {
	const char *name;	/* NULL: kcoll_c1's */
	const char *attr;	/* NULL: all attributes good */
	const char *value;	/* NULL: the attribute is missing */
};

#define KCOLL_BAD_ATTR(id, a, v) \
	FIXTURE_VARIANT_ADD(bad_comm, id) { .attr = a, .value = v }
#define KCOLL_BAD_NAME(id, n) \
	FIXTURE_VARIANT_ADD(bad_comm, id) { .name = n }

KCOLL_BAD_ATTR(state_unknown, "state", "running\n");
KCOLL_BAD_ATTR(state_upper, "state", "READY\n");
KCOLL_BAD_ATTR(state_empty, "state", "\n");
KCOLL_BAD_ATTR(state_too_long, "state", "connectingconnecting\n");
KCOLL_BAD_ATTR(state_missing, "state", NULL);
KCOLL_BAD_ATTR(error_positive, "error", "104\n");
KCOLL_BAD_ATTR(error_minus_zero, "error", "-0\n");
KCOLL_BAD_ATTR(error_word, "error", "ECONNRESET\n");
KCOLL_BAD_ATTR(error_range, "error", "-4096\n");
KCOLL_BAD_ATTR(error_missing, "error", NULL);
KCOLL_BAD_ATTR(rank_mismatch, "rank", "2\n");
KCOLL_BAD_ATTR(rank_negative, "rank", "-1\n");
KCOLL_BAD_ATTR(nranks_not_above_rank, "nranks", "1\n");
KCOLL_BAD_ATTR(nranks_overflow, "nranks", "4294967296\n");
KCOLL_BAD_ATTR(pid_space, "owner_pid", " 191\n");
KCOLL_BAD_ATTR(peers_two_lines, "peers_connected", "2\n2\n");
KCOLL_BAD_ATTR(tx_bytes_overflow, "tx_bytes", "18446744073709551616\n");
KCOLL_BAD_ATTR(rx_bytes_hex, "rx_bytes", "0x10\n");
KCOLL_BAD_ATTR(tx_ops_empty, "tx_ops", "");
KCOLL_BAD_ATTR(rx_ops_missing, "rx_ops", NULL);
KCOLL_BAD_NAME(name_upper_hex, "86E20C1D95477967-1");
KCOLL_BAD_NAME(name_short_id, "86e20c1d9547796-1");
KCOLL_BAD_NAME(name_no_rank, "86e20c1d95477967-");
KCOLL_BAD_NAME(name_rank_word, "86e20c1d95477967-one");
KCOLL_BAD_NAME(name_ns_empty, "86e20c1d95477967-1-ns");
KCOLL_BAD_NAME(name_ns_word, "86e20c1d95477967-1-nsx");
KCOLL_BAD_NAME(name_trailer, "86e20c1d95477967-1-x");

TEST_F(bad_comm, rejected)
{
	struct kcoll_test_comm c = kcoll_c1;
	char path[PATH_MAX];

	if (variant->name)
		c.name = variant->name;
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &c));
	/* Braces: the harness's ASSERT_*() are not single statements. */
	if (variant->attr && variant->value) {
		ASSERT_EQ(0, kcoll_test_comm_attr(self->root, c.name, variant->attr,
						  variant->value));
	} else if (variant->attr) {
		snprintf(path, sizeof(path), "%s/comms/%s/%s", self->root, c.name,
			 variant->attr);
		ASSERT_EQ(0, unlink(path));
	}
	errno = 0;
	EXPECT_EQ(-EBADMSG, kcoll_list(self->root, &self->comms, &self->n));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(NULL, self->comms);
	EXPECT_EQ(0, self->n);
}

TEST(free_null)
{
	kcoll_comm_list_free(NULL);
}

TEST(exported_0_2)
{
	void *so = dlopen(LIBKCOLL_SO_PATH, RTLD_NOW | RTLD_LOCAL);

	ASSERT_NE(NULL, so) {
		TH_LOG("dlopen: %s", dlerror());
	}
	EXPECT_NE(NULL, dlvsym(so, "kcoll_comm_list", "KCOLL_0.2"));
	EXPECT_NE(NULL, dlvsym(so, "kcoll_comm_list_free", "KCOLL_0.2"));
	EXPECT_EQ(NULL, dlvsym(so, "kcoll_comm_list", "KCOLL_0.1"));
	dlclose(so);
}

/* kcollctl comm ---------------------------------------------------------------------------- */

#define KCOLL_LOAD_HINT	" (is the kcoll module loaded? try: modprobe kcoll)\n"
#define KCOLL_LAYOUT	"unexpected content (kcollctl and the module disagree on the sysfs layout)"

/* Run kcollctl with up to 7 arguments; env entries as in struct kcoll_test_cmd. */
#define KCOLLCTL(proc, env, ...)					\
	kcoll_ctl_run((proc), (env), (const char *[]){ kcoll_test_kcollctl(), __VA_ARGS__, NULL })

static int kcoll_ctl_run(struct kcoll_test_proc *proc, const char *const *env,
			 const char **argv)
{
	struct kcoll_test_cmd cmd = { .argv = argv, .env = env };

	return kcoll_test_run(&cmd, proc);
}

FIXTURE(ctl) {
	char root[256];
	char env[PATH_MAX + 32];
	const char *envv[2];
};

FIXTURE_SETUP(ctl)
{
	kcoll_fake_root(_metadata, self->root, sizeof(self->root));
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c1));
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_c0));
	ASSERT_EQ(0, kcoll_test_add_comm(self->root, &kcoll_err));
	snprintf(self->env, sizeof(self->env), KCOLL_SYSFS_ROOT_ENV "=%s", self->root);
	self->envv[0] = self->env;
	self->envv[1] = NULL;
}

FIXTURE_TEARDOWN(ctl)
{
	kcoll_test_rmtree(self->root);
}

#define KCOLL_PLAIN_ERR	"0000000000abcdef-3: state error nranks 4 peers 0 pid 4242 " \
			"tx 0B/0 rx 0B/0 error -104 (Connection reset by peer)\n"
#define KCOLL_PLAIN_C0	"86e20c1d95477967-0: state ready nranks 3 peers 2 pid 190 " \
			"tx 1B/3 rx 2B/4\n"
#define KCOLL_PLAIN_C1	"86e20c1d95477967-1: state ready nranks 3 peers 2 pid 191 " \
			"tx 19922944B/19 rx 19922943B/18\n"

TEST_F(ctl, show_plain)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "show"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ(KCOLL_PLAIN_ERR KCOLL_PLAIN_C0 KCOLL_PLAIN_C1, p.out);
	EXPECT_STREQ("", p.err);
}

/* "kcollctl comm" defaults to show, "list" is its synonym. */
TEST_F(ctl, default_command_and_list)
{
	struct kcoll_test_proc dflt, list;

	ASSERT_EQ(0, KCOLLCTL(&dflt, self->envv, "comm"));
	ASSERT_EQ(0, KCOLLCTL(&list, self->envv, "comm", "list"));
	EXPECT_EQ(0, dflt.status);
	EXPECT_EQ(0, list.status);
	EXPECT_STREQ(KCOLL_PLAIN_ERR KCOLL_PLAIN_C0 KCOLL_PLAIN_C1, dflt.out);
	EXPECT_STREQ(dflt.out, list.out);
}

/* ID: a comm id selects all its ranks (with or without 0x and leading zeros), a name one. */
TEST_F(ctl, show_filter)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "show", "86e20c1d95477967"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ(KCOLL_PLAIN_C0 KCOLL_PLAIN_C1, p.out);
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "show", "0xABCDEF"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ(KCOLL_PLAIN_ERR, p.out);
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "list", "86e20c1d95477967-1"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ(KCOLL_PLAIN_C1, p.out);
}

TEST_F(ctl, show_json_exact)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "comm", "show", "0000000000abcdef-3"));
	EXPECT_EQ(0, p.status);
	/* The keys in the order of the text's fields: one print call per field writes both. */
	EXPECT_STREQ("[{\"name\":\"0000000000abcdef-3\",\"comm_id\":\"0000000000abcdef\","
		     "\"rank\":3,\"state\":\"error\",\"nranks\":4,\"peers_connected\":0,"
		     "\"owner_pid\":4242,\"tx_bytes\":0,\"tx_ops\":0,\"rx_bytes\":0,"
		     "\"rx_ops\":0,\"error\":-104}]\n", p.out);
	EXPECT_STREQ("", p.err);
}

/* An independent parser agrees that the output is JSON with the expected content. */
static const char kcoll_py_check[] =
	"import json, sys\n"
	"d = json.load(sys.stdin)\n"
	"assert isinstance(d, list), d\n"
	"assert [x['name'] for x in d] == ['0000000000abcdef-3', '86e20c1d95477967-0',\n"
	"                                  '86e20c1d95477967-1'], d\n"
	"keys = {'name', 'comm_id', 'rank', 'nranks', 'state', 'error', 'owner_pid',\n"
	"        'peers_connected', 'tx_bytes', 'rx_bytes', 'tx_ops', 'rx_ops'}\n"
	"for x in d:\n"
	"    assert set(x) == keys, x\n"
	"    for k in keys - {'name', 'comm_id', 'state'}:\n"
	"        assert type(x[k]) is int, (k, x)\n"
	"    assert x['name'].startswith(x['comm_id'] + '-%d' % x['rank']), x\n"
	"    assert len(x['comm_id']) == 16 and int(x['comm_id'], 16) >= 0, x\n"
	"e, c0, c1 = d\n"
	"assert (e['state'], e['error'], e['nranks'], e['owner_pid']) == ('error', -104, 4, 4242), e\n"
	"assert (c0['rank'], c0['tx_bytes'], c0['rx_bytes'], c0['tx_ops'], c0['rx_ops']) == \\\n"
	"       (0, 1, 2, 3, 4), c0\n"
	"assert (c1['comm_id'], c1['state'], c1['error'], c1['peers_connected']) == \\\n"
	"       ('86e20c1d95477967', 'ready', 0, 2), c1\n"
	"assert (c1['tx_bytes'], c1['rx_bytes']) == (19922944, 19922943), c1\n";

/* 0: valid; -1: python3 missing; else python3's exit status. */
static int kcoll_py_validate(const char *json, char *err, size_t len)
{
	const char *argv[] = { "python3", "-c", kcoll_py_check, NULL };
	struct kcoll_test_cmd cmd = { .argv = argv, .input = json };
	struct kcoll_test_proc p;

	if (kcoll_test_run(&cmd, &p))
		return 126;
	/* strncpy: gcc does not know that p.err is usually short */
	strncpy(err, p.err, len - 1);
	err[len - 1] = '\0';
	return p.status == 127 ? -1 : p.status;
}

TEST_F(ctl, show_json_parses)
{
	struct kcoll_test_proc p;
	char err[2048];
	int ret;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "comm", "show"));
	ASSERT_EQ(0, p.status);
	ret = kcoll_py_validate(p.out, err, sizeof(err));
	if (ret < 0)
		SKIP(return, "python3 not found");
	EXPECT_EQ(0, ret) {
		TH_LOG("python3: %s", err);
	}
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "--json", "--pretty", "comm"));
	ASSERT_EQ(0, p.status);
	EXPECT_NE(NULL, strstr(p.out, "\n    {\n        \"name\": "));
	EXPECT_EQ(0, kcoll_py_validate(p.out, err, sizeof(err))) {
		TH_LOG("python3: %s", err);
	}
}

/* The validator itself must be able to fail, or the test above proves nothing. */
TEST_F(ctl, json_validator_rejects)
{
	struct kcoll_test_proc p;
	char err[2048], *s;
	int ret;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "comm", "show"));
	ASSERT_EQ(0, p.status);
	/* error as a string instead of a number */
	s = strstr(p.out, "\"error\":-104");
	ASSERT_NE(NULL, s);
	memcpy(s, "\"error\":\"-1\"", 12);
	ret = kcoll_py_validate(p.out, err, sizeof(err));
	if (ret < 0)
		SKIP(return, "python3 not found");
	EXPECT_NE(0, ret);
	EXPECT_NE(0, kcoll_py_validate("[]", err, sizeof(err)));
}

TEST_F(ctl, empty)
{
	char dir[PATH_MAX];
	struct kcoll_test_proc p;

	snprintf(dir, sizeof(dir), "%s/comms", self->root);
	ASSERT_EQ(0, kcoll_test_rmtree(dir));
	ASSERT_EQ(0, kcoll_test_mkdir(self->root, "comms"));
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "comm", "show"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ("[]\n", p.out);
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "show"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ("", p.out);
	EXPECT_STREQ("", p.err);
}

TEST_F(ctl, show_unknown)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "show", "nosuch"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	EXPECT_STREQ("kcollctl: comm nosuch: no such communicator\n", p.err);
	/* A well-formed id or name that is not there, in JSON mode: no output either. */
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "comm", "show", "1234"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	EXPECT_STREQ("kcollctl: comm 1234: no such communicator\n", p.err);
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "show", "86e20c1d95477967-2"));
	EXPECT_EQ(1, p.status);
}

static void kcoll_expect_usage(struct __test_metadata *_metadata,
			       const struct kcoll_test_proc *p, const char *msg)
{
	EXPECT_EQ(2, p->status);
	EXPECT_STREQ("", p->out);
	EXPECT_STREQ(msg, p->err);
}

TEST_F(ctl, usage_errors)
{
	static const char *const no_sysfs[] = {
		KCOLL_SYSFS_ROOT_ENV "=/nonexistent-kcoll-test", NULL,
	};
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "show", "a", "b"));
	kcoll_expect_usage(_metadata, &p, "kcollctl: comm show: unexpected argument \"b\"\n"
				      "Try \"kcollctl comm help\".\n");
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "bogus"));
	kcoll_expect_usage(_metadata, &p, "kcollctl: comm: unknown command \"bogus\"\n"
				      "Try \"kcollctl comm help\".\n");
	/* Usage is checked before sysfs is read. */
	ASSERT_EQ(0, KCOLLCTL(&p, no_sysfs, "comm", "list", "a", "b"));
	EXPECT_EQ(2, p.status);
}

TEST_F(ctl, help)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "comm", "help"));
	EXPECT_EQ(0, p.status);
	EXPECT_EQ(0, strncmp(p.out, "Usage: kcollctl comm ", 21)) {
		TH_LOG("stdout: %s", p.out);
	}
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "--help"));
	EXPECT_EQ(0, p.status);
	EXPECT_NE(NULL, strstr(p.out, "\n  comm     communicators on this node\n"));
}

TEST_F(ctl, malformed_tree)
{
	struct kcoll_test_proc p;
	char want[PATH_MAX + 160];

	ASSERT_EQ(0, kcoll_test_comm_attr(self->root, kcoll_c0.name, "state", "running\n"));
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "comm", "show"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	snprintf(want, sizeof(want), "kcollctl: cannot read %s/comms: " KCOLL_LAYOUT "\n",
		 self->root);
	EXPECT_STREQ(want, p.err);
}

TEST_F(ctl, missing_file)
{
	struct kcoll_test_proc p;
	char path[PATH_MAX], want[PATH_MAX + 160];

	snprintf(path, sizeof(path), "%s/comms/%s/tx_ops", self->root, kcoll_c1.name);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm", "show", "0000000000abcdef-3"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	snprintf(want, sizeof(want), "kcollctl: cannot read %s/comms: " KCOLL_LAYOUT "\n",
		 self->root);
	EXPECT_STREQ(want, p.err);
}

/* The module is there but has no comms/ (older than communicators). */
TEST_F(ctl, missing_comms_dir)
{
	struct kcoll_test_proc p;
	char dir[PATH_MAX], want[PATH_MAX + 160];

	snprintf(dir, sizeof(dir), "%s/comms", self->root);
	ASSERT_EQ(0, kcoll_test_rmtree(dir));
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "comm"));
	EXPECT_EQ(1, p.status);
	snprintf(want, sizeof(want), "kcollctl: cannot read %s/comms: No such file or "
		 "directory (does the loaded kcoll module support communicators?)\n", self->root);
	EXPECT_STREQ(want, p.err);
}

TEST(ctl_no_sysfs)
{
	static const char *const env[] = {
		KCOLL_SYSFS_ROOT_ENV "=/nonexistent-kcoll-test", NULL,
	};
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, env, "comm", "show"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	EXPECT_STREQ("kcollctl: cannot read /nonexistent-kcoll-test/comms: "
		     "No such file or directory" KCOLL_LOAD_HINT, p.err);
}

TEST_HARNESS_MAIN
