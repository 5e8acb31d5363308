// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll-sim's node resources against closed forms: the host resource (--host-bw), one
 * capacity a node's sends and receives share, and the capacity the whole cluster shares
 * (--shared-bw).  The closed forms of test_kcoll_sim.c hold with them unset.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kcoll_sim_test.h"

/* ---- the host resource (--host-bw): a node's sends and receives share one capacity -------- */

/* Relative error within 1 %: the bound for the host closed forms (the model is exact). */
#define EXPECT_WITHIN_1PC(want, got) EXPECT_LE(fabs((got) - (want)), 0.01 * fabs(want)) { \
	TH_LOG("want %.12g s, got %.12g s", (double)(want), (double)(got)); }

/*
 * A 2-rank broadcast is one message one way: its sender's host carries it out, the
 * receiver's in, neither both, so it moves at min(L, H) whichever is smaller.
 */
TEST(host_one_way_broadcast)
{
	static const double hosts[] = { 4e9, 25e9 };	/* below and above the link's 10 GB/s */
	const uint64_t S = 16 << 20;
	struct simnet_cfg c;
	struct simnet_result r;
	size_t i;

	for (i = 0; i < 2; i++) {
		double H = hosts[i], rate = fmin(BW, H);

		base_cfg(&c, 2);
		c.fab.host_bw = H;
		c.args.coll = KCOLL_BROADCAST;
		c.args.in_place = true;
		c.args.count = S / 4;
		c.algo = KCOLL_ALG_BINOMIAL;
		ASSERT_EQ(0, simnet_run(&c, &r)) TH_LOG("%s", r.err);
		/* CTS, data, delivery, acknowledgement */
		EXPECT_WITHIN_1PC(3 * LAT + S / rate, r.time);
		EXPECT_CLOSE(3 * LAT + S / rate, r.time);
		EXPECT_EQ(2 * 2 + 2 + 2, r.nlinks);	/* NICs, memory links, hosts */
		EXPECT_STREQ(H < BW ? "node0.host" : "node0.nic0.up", r.busiest);
		simnet_result_free(&r);
	}
}

/*
 * A 2-rank ring all-reduce sends and receives at once: each host carries both directions,
 * so each direction gets min(L, H/2): 2 stages of 3 lat + (S/2) / min(L, H/2).
 */
TEST(host_ring_both_directions)
{
	static const double hosts[] = { 10e9, 12e9, 40e9 };	/* H/2 < L, H/2 < L, H/2 > L */
	const uint64_t S = 8 << 20;
	struct simnet_cfg c;
	struct simnet_result r;
	size_t i;

	for (i = 0; i < 3; i++) {
		double H = hosts[i], rate = fmin(BW, H / 2), want = 2 * (3 * LAT + S / 2 / rate);

		base_cfg(&c, 2);
		c.fab.host_bw = H;
		c.args.coll = KCOLL_ALLREDUCE;
		c.args.count = S / 4;
		c.algo = KCOLL_ALG_RING;
		c.chunk_bytes = 0;
		ASSERT_EQ(0, simnet_run(&c, &r)) TH_LOG("%s", r.err);
		EXPECT_WITHIN_1PC(want, r.time);
		EXPECT_CLOSE(want, r.time);
		if (H / 2 < BW) {	/* node 0's host carries S out and S in */
			EXPECT_STREQ("node0.host", r.busiest);
			EXPECT_CLOSE(2.0 * S, r.busiest_bytes);
		} else {
			EXPECT_STREQ("node0.nic0.up", r.busiest);
		}
		simnet_result_free(&r);
	}
}

/*
 * One host a node, whatever the rails: two ranks of a node sending on two rails share it.
 * Same-node messages do not cross it (the memory link is their bound).
 */
TEST(host_per_node_not_per_rail)
{
	const uint64_t S = 4 << 20;
	const struct tmsg m[] = { { 0, 0, 2, S }, { 0, 1, 3, S } };
	const struct tmsg local[] = { { 0, 0, 1, S } };
	struct simnet_cfg c;
	struct simnet_result r;

	base_cfg(&c, 4);
	c.fab.ranks_per_node = 2;
	c.fab.rails = 2;
	c.fab.host_bw = BW;
	ASSERT_EQ(0, run_msgs(&c, m, 2, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(3 * LAT + 2 * S / BW, r.time);	/* 2 S through node 0's host at B */
	EXPECT_STREQ("node0.host", r.busiest);
	simnet_result_free(&r);

	base_cfg(&c, 2);
	c.fab.ranks_per_node = 2;
	c.fab.mem_bw = 40e9;
	c.fab.shm_lat = 0.25e-6;
	c.fab.host_bw = 1e6;	/* would take 4 s if it counted */
	ASSERT_EQ(0, run_msgs(&c, local, 1, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(3 * 0.25e-6 + S / 40e9, r.time);
	EXPECT_STREQ("node0.mem", r.busiest);
	simnet_result_free(&r);
}

/*
 * Without a host bandwidth nothing changes: no host links, the star's 3 links a node; and a
 * host too fast to matter gives the same times on every fabric.
 */
TEST(host_unlimited_is_default)
{
	static const enum simnet_topo topos[] = { SIMNET_STAR, SIMNET_LEAFSPINE, SIMNET_FATTREE };
	struct simnet_cfg c;
	struct simnet_result r[2];
	size_t t;
	int i;

	for (t = 0; t < 3; t++) {
		for (i = 0; i < 2; i++) {
			base_cfg(&c, 16);
			c.overhead = 1e-6;
			c.red_bw = 8e9;
			c.fab.topo = topos[t];
			c.fab.hosts_per_leaf = 4;
			c.fab.spines = 2;
			c.fab.oversub = 2;
			c.fab.ranks_per_node = 2;
			c.fab.host_bw = i ? 1e30 : 0;
			c.args.coll = KCOLL_ALLREDUCE;
			c.args.count = 1 << 20;
			c.algo = KCOLL_ALG_DBTREE;
			c.chunk_bytes = 64 << 10;
			ASSERT_EQ(0, simnet_run(&c, &r[i])) TH_LOG("%s", r[i].err);
		}
		EXPECT_EQ(r[0].nlinks + 8, r[1].nlinks);	/* 8 nodes, 8 hosts */
		if (topos[t] == SIMNET_STAR)
			EXPECT_EQ(3 * 8, r[0].nlinks);
		EXPECT_CLOSE(r[0].time, r[1].time);
		EXPECT_EQ(NULL, strstr(r[0].busiest, "host"));
		simnet_result_free(&r[0]);
		simnet_result_free(&r[1]);
	}
}

/*
 * --shared-bw C: one capacity for what all nodes move between them.  Two disjoint one-way
 * messages (0 -> 1, 2 -> 3) share it: each gets min(B, H, C/2); a chain broadcast over 4
 * nodes moves 3 S through it, a 4-rank ring all-reduce 6 S, whatever the nodes.
 */
TEST(shared_capacity)
{
	const uint64_t S = 4 << 20;
	const struct tmsg m[] = { { 0, 0, 1, S }, { 0, 2, 3, S } };
	const struct tmsg local[] = { { 0, 0, 1, S } };
	static const double shared[] = { 4e9, 30e9 };
	struct simnet_cfg c;
	struct simnet_result r;
	size_t i;

	for (i = 0; i < 2; i++) {
		double C = shared[i], rate = fmin(BW, C / 2);

		base_cfg(&c, 4);
		c.fab.shared_bw = C;
		ASSERT_EQ(0, run_msgs(&c, m, 2, &r)) TH_LOG("%s", r.err);
		EXPECT_CLOSE(3 * LAT + S / rate, r.time);
		EXPECT_EQ(3 * 4 + 1, r.nlinks);
		EXPECT_STREQ(C / 2 < BW ? "shared" : "node0.nic0.up", r.busiest);
		simnet_result_free(&r);
	}
	/* with hosts too: the smallest of the three */
	base_cfg(&c, 4);
	c.fab.shared_bw = 30e9;
	c.fab.host_bw = 6e9;
	ASSERT_EQ(0, run_msgs(&c, m, 2, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(3 * LAT + S / 6e9, r.time);
	simnet_result_free(&r);
	/* same-node messages do not cross it */
	base_cfg(&c, 2);
	c.fab.ranks_per_node = 2;
	c.fab.mem_bw = 40e9;
	c.fab.shm_lat = 0.25e-6;
	c.fab.shared_bw = 1e6;
	ASSERT_EQ(0, run_msgs(&c, local, 1, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(3 * 0.25e-6 + S / 40e9, r.time);
	simnet_result_free(&r);
}

TEST_HARNESS_MAIN
