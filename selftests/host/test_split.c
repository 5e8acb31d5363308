// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll_comm_split(): the child's members and ranks derived from every parent rank's
 * (color, key) (kcoll_split_members(), pure), and the refusals that need no kernel.  The
 * exchange over the parent and the child's creation run in the cluster suites
 * (selftests/kernel/kcoll_split_test.c).
 */
#include <errno.h>
#include <string.h>

#include "../../lib/libkcoll_internal.h"

#include "kselftest_harness.h"

#define U	KCOLL_SPLIT_UNDEFINED

static const struct split_case {
	const char *name;
	int nranks;
	int32_t ck[8][2];		/* per parent rank: color, key */
	int size[8];			/* per parent rank: its child's size (0: none) */
	int child_rank[8];		/* per parent rank: its rank in the child (-1: none) */
	int members[8][8];		/* per parent rank: the child's parent ranks, in order */
} cases[] = {
	{ "one color, keys in rank order", 3, { { 0, 0 }, { 0, 1 }, { 0, 2 } },
	  { 3, 3, 3 }, { 0, 1, 2 }, { { 0, 1, 2 }, { 0, 1, 2 }, { 0, 1, 2 } } },
	{ "keys reverse the order", 3, { { 5, 2 }, { 5, 1 }, { 5, 0 } },
	  { 3, 3, 3 }, { 2, 1, 0 }, { { 2, 1, 0 }, { 2, 1, 0 }, { 2, 1, 0 } } },
	{ "equal keys keep parent order", 4, { { 1, 7 }, { 1, 7 }, { 1, -3 }, { 1, 7 } },
	  { 4, 4, 4, 4 }, { 1, 2, 0, 3 },
	  { { 2, 0, 1, 3 }, { 2, 0, 1, 3 }, { 2, 0, 1, 3 }, { 2, 0, 1, 3 } } },
	{ "two colors interleaved", 4, { { 0, 0 }, { 1, 0 }, { 0, 0 }, { 1, 0 } },
	  { 2, 2, 2, 2 }, { 0, 0, 1, 1 }, { { 0, 2 }, { 1, 3 }, { 0, 2 }, { 1, 3 } } },
	{ "undefined joins nothing", 3, { { 0, 0 }, { U, 0 }, { 0, 0 } },
	  { 2, 0, 2 }, { 0, -1, 1 }, { { 0, 2 }, { 0 }, { 0, 2 } } },
	{ "every rank alone", 3, { { 3, 0 }, { 2, 0 }, { 1, 0 } },
	  { 1, 1, 1 }, { 0, 0, 0 }, { { 0 }, { 1 }, { 2 } } },
	{ "all undefined", 2, { { U, 0 }, { U, 1 } }, { 0, 0 }, { -1, -1 }, { { 0 }, { 0 } } },
	{ "extreme keys", 3, { { 0, INT32_MAX }, { 0, INT32_MIN }, { 0, 0 } },
	  { 3, 3, 3 }, { 2, 0, 1 }, { { 1, 2, 0 }, { 1, 2, 0 }, { 1, 2, 0 } } },
	{ "large color", 2, { { INT32_MAX, 1 }, { INT32_MAX, 0 } },
	  { 2, 2 }, { 1, 0 }, { { 1, 0 }, { 1, 0 } } },
};

TEST(members_table)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct split_case *t = &cases[c];

		for (int r = 0; r < t->nranks; r++) {
			int members[8], child_rank = 42;
			int n;

			memset(members, 0xff, sizeof(members));
			n = kcoll_split_members(&t->ck[0][0], t->nranks, r, members, &child_rank);
			EXPECT_EQ(t->size[r], n) TH_LOG("%s: rank %d", t->name, r);
			EXPECT_EQ(t->child_rank[r], child_rank) TH_LOG("%s: rank %d", t->name, r);
			for (int k = 0; k < n && k < 8; k++) {
				EXPECT_EQ(t->members[r][k], members[k])
					TH_LOG("%s: rank %d, member %d", t->name, r, k);
			}
		}
	}
}

TEST(refusals)
{
	struct kcoll_comm *child = (struct kcoll_comm *)1;
	struct kcoll_comm fake = { .nranks = 2 };
	struct { struct kcoll_split_opts o; unsigned int extra; } big;

	EXPECT_EQ(-EINVAL, kcoll_comm_split(&fake, 0, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, kcoll_comm_split(NULL, 0, 0, NULL, &child));
	EXPECT_EQ(NULL, child);
	EXPECT_EQ(-EINVAL, kcoll_comm_split(&fake, -2, 0, NULL, &child));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_SPLIT_UNDEFINED"));
	{
		KCOLL_OPTS(kcoll_split_opts, o, .flags = 1);

		EXPECT_EQ(-EINVAL, kcoll_comm_split(&fake, 0, 0, &o, &child));
		EXPECT_NE(NULL, strstr(kcoll_last_error(), "flags"));
	}
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.extra = 1;
	EXPECT_EQ(-E2BIG, kcoll_comm_split(&fake, 0, 0, &big.o, &child));
	EXPECT_EQ(0, kcoll_group_start());
	EXPECT_EQ(-EINVAL, kcoll_comm_split(&fake, 0, 0, NULL, &child));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "kcoll_comm_split"));
	kcoll_group_end();
}

TEST_HARNESS_MAIN
