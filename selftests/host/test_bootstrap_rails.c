// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkcoll rails (lib/boot_rail.c): KCOLL_IFNAME (or the ifname option) naming several
 * interfaces gives the rank the one of rail (local rank mod rails); every name is checked,
 * and an empty, overlong or unknown name, too many names or an unknown local rank fail
 * with a message.  One name keeps the single-interface path.  Only "lo" is assumed to
 * exist; a second interface of the host, when there is one, shows that rail 1 is taken.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap_test.h"
#include "../../lib/bootstrap.h"

#include "kselftest_harness.h"

/* kcoll_boot_self() with $KCOLL_IFNAME = @list, for @local of 4 ranks. */
static int self_of(const char *list, int local, struct kcoll_sockaddr *self)
{
	bool set;

	clear_env();
	setenv("KCOLL_IFNAME", list, 1);
	return kcoll_boot_self(NULL, 4, local, self, &set);
}

static bool is_loopback(const struct kcoll_sockaddr *k)
{
	return k->family == AF_INET && *(const uint32_t *)k->addr == htonl(INADDR_LOOPBACK);
}

TEST(rails_bad_lists)
{
	static const struct {
		const char *list;
		int err;
		const char *msg;
	} cases[] = {
		{ "lo,", -EINVAL, "KCOLL_IFNAME \"lo,\": empty interface name" },
		{ ",lo", -EINVAL, "empty interface name" },
		{ "lo,,lo", -EINVAL, "empty interface name" },
		{ "lo,kcollnosuch0", -ENODEV, "there is no interface kcollnosuch0" },
		{ "kcollnosuch0,lo", -ENODEV, "there is no interface kcollnosuch0" },
		{ "lo,abcdefghijklmnopq", -EINVAL, "\"abcdefghijklmnopq\" is longer than an "
		  "interface name (15 characters)" },
		{ "lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo", -EINVAL,
		  "more than 16 interfaces" },
	};
	struct kcoll_sockaddr self;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Local rank 0 too: a bad name of another rail fails every rank alike. */
		EXPECT_EQ(cases[i].err, self_of(cases[i].list, 0, &self)) {
			TH_LOG("%s", cases[i].list);
		}
		EXPECT_NE(NULL, strstr(kcoll_last_error(), cases[i].msg)) {
			TH_LOG("\"%s\" lacks \"%s\"", kcoll_last_error(), cases[i].msg);
		}
	}
	/* Sixteen are fine. */
	EXPECT_EQ(0, self_of("lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo,lo", 15, &self));
	clear_env();
}

TEST(rails_local_rank)
{
	struct kcoll_sockaddr self;
	bool set;

	/* Without a launcher's local rank a list cannot pick a rail. */
	EXPECT_EQ(-EINVAL, self_of("lo,lo", -1, &self));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_IFNAME names 2 interfaces (rails), "
			       "but this rank's local rank is unknown: set KCOLL_LOCAL_RANK"));
	/* kcoll_comm_init_rank() looks it up: the first launcher variable set. */
	EXPECT_EQ(-EINVAL, self_of("lo,lo", KCOLL_LOCAL_RANK_LOOKUP, &self));
	setenv("KCOLL_IFNAME", "lo,lo", 1);
	setenv("SLURM_LOCALID", "1", 1);
	EXPECT_EQ(0, kcoll_boot_self(NULL, 4, KCOLL_LOCAL_RANK_LOOKUP, &self, &set));
	EXPECT_TRUE(set && is_loopback(&self));
	setenv("LOCAL_RANK", "4", 1);	/* wins over SLURM_LOCALID, and is out of range */
	EXPECT_EQ(-EINVAL, kcoll_boot_self(NULL, 4, KCOLL_LOCAL_RANK_LOOKUP, &self, &set));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "LOCAL_RANK=\"4\""));

	/* One name: the single-interface path, no local rank needed, its own message. */
	EXPECT_EQ(0, self_of("lo", -1, &self));
	EXPECT_TRUE(is_loopback(&self));
	EXPECT_EQ(-ENODEV, self_of("kcollnosuch0", -1, &self));
	EXPECT_STREQ("cannot advertise an address of interface kcollnosuch0: there is no such "
		     "interface", kcoll_last_error());

	/* The option wins over the environment, and is a list the same way. */
	{
		KCOLL_OPTS(kcoll_comm_opts, opts, .ifname = "lo,kcollnosuch1");

		clear_env();
		setenv("KCOLL_IFNAME", "lo", 1);
		EXPECT_EQ(-ENODEV, kcoll_boot_self(&opts, 4, 0, &self, &set));
		EXPECT_NE(NULL, strstr(kcoll_last_error(), "ifname option \"lo,kcollnosuch1\""));
	}
	clear_env();
}

/* Local rank i takes name (i mod n): with "lo,X", ranks 0 and 2 lo, ranks 1 and 3 X. */
TEST(rails_placement)
{
	struct if_nameindex *names, *n;
	struct kcoll_sockaddr self;
	char list[64], other[IF_NAMESIZE] = "";
	int err, local;

	names = if_nameindex();
	ASSERT_NE(NULL, names);
	for (n = names; n->if_index; n++) {
		if (strcmp(n->if_name, "lo")) {
			snprintf(other, sizeof(other), "%s", n->if_name);
			break;
		}
	}
	if_freenameindex(names);
	if (!other[0])
		SKIP(return, "no interface besides lo");
	snprintf(list, sizeof(list), "lo,%s", other);
	for (local = 0; local < 4; local++) {
		memset(&self, 0, sizeof(self));
		err = self_of(list, local, &self);
		if (local % 2 == 0) {
			EXPECT_EQ(0, err);
			EXPECT_TRUE(is_loopback(&self)) TH_LOG("local rank %d", local);
			continue;
		}
		/* Rail 1: its address, or its own "no IP address" message; never lo's. */
		if (err) {
			EXPECT_EQ(-EADDRNOTAVAIL, err);
			EXPECT_NE(NULL, strstr(kcoll_last_error(), other));
		} else {
			EXPECT_FALSE(is_loopback(&self)) TH_LOG("local rank %d", local);
		}
	}
	clear_env();
}

TEST_HARNESS_MAIN
