// SPDX-License-Identifier: GPL-2.0-only
/*
 * Locality: the groups the kernel derives from the ranks' table (core/kcoll_locality.c) on a
 * table of shapes, the bootstrap's locality record (lib/boot_loc.c: encoding, bad lengths,
 * truncation, unknown version), the topology file and KCOLL_TOPO, and a rendezvous of
 * threads in this process that hands every rank the same table.
 *
 * Linked against libkcoll.a (the record's codec is internal); the core file is compiled in.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/libkcoll_internal.h"
#include "../../core/kcoll_locality.c"

#include "kselftest_harness.h"

#define MAXR	16

/* A shape: per rank host/nic/leaf keys (small numbers, 0 = unknown) and what to expect. */
struct shape {
	const char *name;
	u32 n;
	u64 host[MAXR], nic[MAXR], leaf[MAXR], rack[MAXR];
	int err;
	u32 nhosts, nnics, nleaves, block;
	u32 host_group[MAXR];
	u32 local_size0;		/* of rank 0 */
};

static const struct shape loc_shapes[] = {
	{ "one host", 4, { 7, 7, 7, 7 }, { 1, 1, 1, 1 }, {}, {}, 0, 1, 1, 4, 4,
	  { 0, 0, 0, 0 }, 4 },
	{ "all different", 4, { 1, 2, 3, 4 }, {}, {}, {}, 0, 4, 4, 4, 0, { 0, 1, 2, 3 }, 1 },
	{ "unknown", 3, {}, {}, {}, {}, 0, 3, 3, 3, 0, { 0, 1, 2 }, 1 },
	{ "2x2", 4, { 9, 9, 5, 5 }, { 1, 2, 3, 3 }, { 1, 1, 2, 2 }, {}, 0, 2, 3, 2, 2,
	  { 0, 0, 1, 1 }, 2 },
	{ "2x2 interleaved", 4, { 9, 5, 9, 5 }, {}, {}, {}, 0, 2, 4, 4, 0, { 0, 1, 0, 1 }, 2 },
	{ "uneven 3+1", 4, { 3, 3, 3, 8 }, {}, {}, {}, 0, 2, 4, 4, 0, { 0, 0, 0, 1 }, 3 },
	{ "3x3 labels", 9, { 1, 1, 1, 2, 2, 2, 3, 3, 3 }, {},
	  { 4, 4, 4, 4, 4, 4, 6, 6, 6 }, { 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 0, 3, 9, 2, 3,
	  { 0, 0, 0, 1, 1, 1, 2, 2, 2 }, 3 },
	{ "one rank", 1, { 5 }, {}, {}, {}, 0, 1, 1, 1, 0, { 0 }, 1 },
	{ "half known", 3, { 1, 1, 0 }, {}, {}, {}, -EINVAL, 0, 0, 0, 0, {}, 0 },
	{ "nic on two hosts", 2, { 1, 2 }, { 3, 3 }, {}, {}, -EINVAL, 0, 0, 0, 0, {}, 0 },
	{ "nic without host", 2, {}, { 3, 4 }, {}, {}, -EINVAL, 0, 0, 0, 0, {}, 0 },
	{ "host in two leaves", 2, { 1, 1 }, {}, { 1, 2 }, {}, -EINVAL, 0, 0, 0, 0, {}, 0 },
	{ "host in two racks", 2, { 1, 1 }, {}, {}, { 1, 0 }, -EINVAL, 0, 0, 0, 0, {}, 0 },
};

TEST(shapes)
{
	struct kcoll_rank_locality loc[MAXR];
	u32 host[MAXR], nic[MAXR], leaf[MAXR], scratch[MAXR], i, r;

	for (i = 0; i < sizeof(loc_shapes) / sizeof(loc_shapes[0]); i++) {
		const struct shape *s = &loc_shapes[i];
		struct kcoll_loc_groups g = { .host = host, .nic = nic, .leaf = leaf };
		int err;

		memset(loc, 0, sizeof(loc));
		for (r = 0; r < s->n; r++) {
			loc[r].host = s->host[r];
			loc[r].nic = s->nic[r];
			loc[r].leaf = s->leaf[r];
			loc[r].rack = s->rack[r];
			loc[r].numa_node = -1;
		}
		err = kcoll_loc_derive(loc, s->n, 0, &g, scratch);
		EXPECT_EQ(s->err, err) TH_LOG("%s", s->name);
		if (err || s->err)
			continue;
		EXPECT_EQ(s->nhosts, g.nhosts) TH_LOG("%s", s->name);
		EXPECT_EQ(s->nnics, g.nnics) TH_LOG("%s", s->name);
		EXPECT_EQ(s->nleaves, g.nleaves) TH_LOG("%s", s->name);
		EXPECT_EQ(s->block, g.block) TH_LOG("%s", s->name);
		EXPECT_EQ(s->local_size0, g.local_size) TH_LOG("%s", s->name);
		EXPECT_EQ(0, g.local_rank) TH_LOG("%s", s->name);
		for (r = 0; r < s->n; r++)
			EXPECT_EQ(s->host_group[r], host[r]) TH_LOG("%s rank %u", s->name, r);
		/* The last rank's view: the same groups, its own local rank. */
		err = kcoll_loc_derive(loc, s->n, s->n - 1, &g, scratch);
		EXPECT_EQ(0, err);
		for (r = 0; r < s->n; r++)
			EXPECT_EQ(s->host_group[r], host[r]) TH_LOG("%s rank %u", s->name, r);
	}
}

TEST(bad_fields)
{
	struct kcoll_rank_locality loc[2] = { { .host = 1, .numa_node = 0 },
					      { .host = 1, .numa_node = -1 } };
	u32 host[2], nic[2], leaf[2], scratch[2];
	struct kcoll_loc_groups g = { .host = host, .nic = nic, .leaf = leaf };

	EXPECT_EQ(0, kcoll_loc_derive(loc, 2, 1, &g, scratch));
	EXPECT_EQ(1, g.local_rank);
	EXPECT_EQ(2, g.local_size);
	EXPECT_EQ(-EINVAL, kcoll_loc_derive(loc, 2, 2, &g, scratch));
	EXPECT_EQ(-EINVAL, kcoll_loc_derive(loc, 0, 0, &g, scratch));
	loc[1].numa_node = -2;
	EXPECT_EQ(-EINVAL, kcoll_loc_derive(loc, 2, 0, &g, scratch));
	loc[1].numa_node = 0;
	loc[1].reserved = 1;
	EXPECT_EQ(-EINVAL, kcoll_loc_derive(loc, 2, 0, &g, scratch));
}

/* The largest communicator, blocks of 8: block 8, every rank's group r / 8. */
TEST(large)
{
	static struct kcoll_rank_locality loc[KCOLL_MAX_RANKS];
	static u32 host[KCOLL_MAX_RANKS], nic[KCOLL_MAX_RANKS], leaf[KCOLL_MAX_RANKS],
		scratch[KCOLL_MAX_RANKS];
	struct kcoll_loc_groups g = { .host = host, .nic = nic, .leaf = leaf };
	u32 r;

	for (r = 0; r < KCOLL_MAX_RANKS; r++) {
		/* Keys in no particular order: the groups still follow the ranks. */
		loc[r].host = 0x9e3779b97f4a7c15ULL * (r / 8 + 1);
		loc[r].nic = loc[r].host + r % 2;
		loc[r].numa_node = r % 2;
	}
	ASSERT_EQ(0, kcoll_loc_derive(loc, KCOLL_MAX_RANKS, 4000, &g, scratch));
	EXPECT_EQ(KCOLL_MAX_RANKS / 8, g.nhosts);
	EXPECT_EQ(KCOLL_MAX_RANKS / 4, g.nnics);
	EXPECT_EQ(8, g.block);
	EXPECT_EQ(0, g.local_rank);
	EXPECT_EQ(8, g.local_size);
	for (r = 0; r < KCOLL_MAX_RANKS; r++)
		ASSERT_EQ(r / 8, host[r]);
}

/* ---- the record on the wire ------------------------------------------------------------ */

TEST(codec)
{
	struct kcoll_rank_locality in = { .host = 0x0102030405060708ULL, .nic = 42,
					   .leaf = 7, .rack = 8, .pod = 9, .numa_node = -1 };
	struct kcoll_rank_locality out;
	unsigned char p[KCOLL_BOOT_LOC_LEN + 8];
	size_t len;

	kcoll_loc_put(p, &in);
	EXPECT_EQ(0, kcoll_loc_get(p, KCOLL_BOOT_LOC_LEN, &out));
	EXPECT_EQ(0, memcmp(&in, &out, sizeof(in)));
	EXPECT_EQ(0, p[0]);
	EXPECT_EQ(KCOLL_BOOT_LOC_VERSION, p[1]);
	EXPECT_EQ(8, p[15]);	/* big-endian */
	/* Truncated, at every length. */
	for (len = 0; len < KCOLL_BOOT_LOC_LEN; len++)
		EXPECT_EQ(-EPROTO, kcoll_loc_get(p, len, &out)) TH_LOG("length %zu", len);
	/* Another version. */
	p[1] = 2;
	EXPECT_EQ(-EPROTONOSUPPORT, kcoll_loc_get(p, KCOLL_BOOT_LOC_LEN, &out));
	p[1] = 0;
	EXPECT_EQ(-EPROTONOSUPPORT, kcoll_loc_get(p, KCOLL_BOOT_LOC_LEN, &out));
	p[1] = KCOLL_BOOT_LOC_VERSION;
	/* A length field other than the record's. */
	p[3] = KCOLL_BOOT_LOC_LEN - 1;
	EXPECT_EQ(-EPROTO, kcoll_loc_get(p, sizeof(p), &out));
	p[3] = KCOLL_BOOT_LOC_LEN + 8;
	EXPECT_EQ(-EPROTO, kcoll_loc_get(p, sizeof(p), &out));
	p[3] = KCOLL_BOOT_LOC_LEN;
	/* Reserved bytes. */
	p[KCOLL_BOOT_LOC_LEN - 1] = 1;
	EXPECT_EQ(-EPROTO, kcoll_loc_get(p, KCOLL_BOOT_LOC_LEN, &out));
	p[KCOLL_BOOT_LOC_LEN - 1] = 0;
	/* A NUMA node below -1, a NIC without a host. */
	in.numa_node = -2;
	kcoll_loc_put(p, &in);
	EXPECT_EQ(-EPROTO, kcoll_loc_get(p, KCOLL_BOOT_LOC_LEN, &out));
	EXPECT_EQ(0, out.host);
	in.numa_node = 3;
	in.host = 0;
	kcoll_loc_put(p, &in);
	EXPECT_EQ(-EPROTO, kcoll_loc_get(p, KCOLL_BOOT_LOC_LEN, &out));
	in.nic = 0;
	kcoll_loc_put(p, &in);
	EXPECT_EQ(0, kcoll_loc_get(p, KCOLL_BOOT_LOC_LEN, &out));
	EXPECT_EQ(3, out.numa_node);
}

/* ---- labels: topology file and KCOLL_TOPO ---------------------------------------------- */

static char *topo_file(const char *text)
{
	static char path[] = "/tmp/kcoll-topo-XXXXXX";
	int fd;

	strcpy(path, "/tmp/kcoll-topo-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return NULL;
	close(fd);
	return path;
}

struct label_case {
	const char *file;	/* NULL: no file given */
	const char *env;
	int err;
	const char *msg;	/* in the error message */
	const char *same_leaf_as_env;	/* env whose leaf must equal this case's */
};

static const struct label_case label_cases[] = {
	{ "leaf=a\nrack=r1\n", NULL, 0, NULL, "leaf=a" },
	{ "# comment\n\n  leaf = a\t\npod=p\n", NULL, -EINVAL, "unknown key", NULL },
	{ "  leaf=a  \n# x\n\npod=p", NULL, 0, NULL, "leaf=a" },
	{ "leaf=a\n", "leaf=b", 0, NULL, "leaf=b" },
	{ NULL, "leaf=a,rack=b,pod=c", 0, NULL, "leaf=a" },
	{ "switch=x\n", NULL, -EINVAL, "unknown key", NULL },
	{ "leaf\n", NULL, -EINVAL, "not key=value", NULL },
	{ "leaf=\n", NULL, -EINVAL, "bad leaf label", NULL },
	{ "leaf=a b\n", NULL, -EINVAL, "bad leaf label", NULL },
	{ NULL, "leaf=a,,", -EINVAL, "KCOLL_TOPO", NULL },
	{ NULL, "rack=" "0123456789012345678901234567890123456789012345678901234567890123",
	  -EINVAL, "bad rack label", NULL },
};

TEST(labels)
{
	struct kcoll_rank_locality l, ref;
	size_t i;
	char *path;

	for (i = 0; i < sizeof(label_cases) / sizeof(label_cases[0]); i++) {
		const struct label_case *c = &label_cases[i];

		path = c->file ? topo_file(c->file) : NULL;
		ASSERT_TRUE(!c->file || path);
		memset(&l, 0, sizeof(l));
		EXPECT_EQ(c->err, kcoll_loc_labels(path ? path : "/dev/null", c->env, &l))
			TH_LOG("case %zu: %s", i, kcoll_last_error());
		if (c->msg)
			EXPECT_NE(NULL, strstr(kcoll_last_error(), c->msg))
				TH_LOG("case %zu: %s", i, kcoll_last_error());
		if (c->same_leaf_as_env && !c->err) {
			memset(&ref, 0, sizeof(ref));
			ASSERT_EQ(0, kcoll_loc_labels("/dev/null", c->same_leaf_as_env, &ref));
			EXPECT_EQ(ref.leaf, l.leaf) TH_LOG("case %zu", i);
			EXPECT_NE(0, l.leaf);
			EXPECT_EQ(0, l.host);
		}
		if (path)
			unlink(path);
	}
	/* A file named explicitly must exist; the default one may be absent. */
	EXPECT_EQ(-ENOENT, kcoll_loc_labels("/nonexistent/kcoll-topology", NULL, &l));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "/nonexistent/kcoll-topology"));
	/* Labels of different keys never collide: leaf=a is not rack=a. */
	memset(&l, 0, sizeof(l));
	ASSERT_EQ(0, kcoll_loc_labels("/dev/null", "leaf=a,rack=a", &l));
	EXPECT_NE(l.leaf, l.rack);
	/* A line longer than the limit. */
	{
		char big[400];

		memset(big, 'a', sizeof(big));
		memcpy(big, "leaf=", 5);
		big[sizeof(big) - 1] = '\0';
		path = topo_file(big);
		ASSERT_NE(NULL, path);
		EXPECT_EQ(-EINVAL, kcoll_loc_labels(path, NULL, &l));
		EXPECT_NE(NULL, strstr(kcoll_last_error(), "line longer"));
		unlink(path);
	}
}

/* ---- a rendezvous hands every rank the same table -------------------------------------- */

struct rank_arg {
	struct kcoll_unique_id id;
	int rank, nranks, err;
	struct kcoll_rank_locality *loc;
	char msg[KCOLL_ERRMSG_MAX];
};

static void *rank_main(void *p)
{
	struct rank_arg *a = p;
	KCOLL_OPTS(kcoll_comm_opts, opts, .addr = "127.0.0.1", .bootstrap_timeout_ms = 20000);
	struct kcoll_sockaddr *table = NULL;
	unsigned char secret[KCOLL_SECRET_LEN];
	uint64_t comm_id;

	a->err = kcoll_bootstrap_rank_loc(&a->id, a->nranks, a->rank, &opts, &comm_id, secret,
					  &table, &a->loc);
	snprintf(a->msg, sizeof(a->msg), "%s", kcoll_last_error());
	free(table);
	return NULL;
}

TEST(rendezvous)
{
	struct rank_arg a[4];
	pthread_t t[4];
	int i, r;

	KCOLL_OPTS(kcoll_uid_opts, uo, .addr = "127.0.0.1", .timeout_ms = 20000);
	ASSERT_EQ(0, setenv("KCOLL_TOPO", "leaf=l1,pod=p", 1));
	ASSERT_EQ(0, setenv("KCOLL_TOPO_FILE", "/dev/null", 1));
	memset(a, 0, sizeof(a));
	ASSERT_EQ(0, kcoll_get_unique_id(&a[0].id, &uo)) TH_LOG("%s", kcoll_last_error());
	for (i = 0; i < 4; i++) {
		a[i].id = a[0].id;
		a[i].rank = i;
		a[i].nranks = 4;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, rank_main, &a[i]));
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, a[i].err) TH_LOG("rank %d: %s", i, a[i].msg);
		ASSERT_NE(NULL, a[i].loc);
		/* The same table everywhere; one process: one host, one NIC (lo). */
		EXPECT_EQ(0, memcmp(a[0].loc, a[i].loc, 4 * sizeof(*a[i].loc)));
		for (r = 0; r < 4; r++) {
			EXPECT_NE(0, a[i].loc[r].host);
			EXPECT_EQ(a[i].loc[0].host, a[i].loc[r].host);
			EXPECT_NE(0, a[i].loc[r].nic);
			EXPECT_NE(0, a[i].loc[r].leaf);
			EXPECT_NE(0, a[i].loc[r].pod);
			EXPECT_EQ(0, a[i].loc[r].rack);
			EXPECT_LE(-1, a[i].loc[r].numa_node);
		}
	}
	for (i = 0; i < 4; i++)
		free(a[i].loc);
	/* A bad KCOLL_TOPO fails the rank at once, before it reaches any root. */
	ASSERT_EQ(0, setenv("KCOLL_TOPO", "leaf", 1));
	a[0].rank = 0;
	a[0].nranks = 1;
	a[0].loc = (void *)a;	/* must be cleared */
	rank_main(&a[0]);
	EXPECT_EQ(-EINVAL, a[0].err);
	EXPECT_NE(NULL, strstr(a[0].msg, "KCOLL_TOPO")) TH_LOG("%s", a[0].msg);
	EXPECT_EQ(NULL, a[0].loc);
	unsetenv("KCOLL_TOPO");
	unsetenv("KCOLL_TOPO_FILE");
	kcoll_bootstrap_root_join(0, true, NULL, 0);
}

TEST_HARNESS_MAIN
