// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll-sim's model (tools/kcoll-sim/simnet.c) against closed forms, and the CLI as a user
 * runs it (a subprocess: exit status, stdout, stderr).
 *
 * Closed forms, with lat the one-switch latency, B the link bandwidth, no CPU overhead and
 * free reductions: a message larger than the eager limit waits for the receiver's CTS (lat),
 * moves at its max-min share, is delivered lat after its last byte left, and the sender's
 * step completes lat later (the acknowledgement).  So one rendezvous message of S bytes ends
 * on the receiver at 2 lat + S/B and on the sender at 3 lat + S/B, an eager one at lat + S/B
 * and 2 lat + S/B, and a ring all-reduce of S bytes on n ranks (one piece per block) takes
 * 2(n-1) stages of 3 lat + S/(nB): 2(n-1)/n * S/B + 2(n-1) * 3 lat.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kcoll_sim_test.h"

/* ---- closed forms ------------------------------------------------------------------------ */

TEST(one_message_rendezvous)
{
	const uint64_t S = 1 << 20;
	const struct tmsg m[] = { { 0, 0, 1, S } };
	struct simnet_cfg c;
	struct simnet_result r;

	base_cfg(&c, 2);
	ASSERT_EQ(0, run_msgs(&c, m, 1, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(2 * LAT + S / BW, r.first_end);	/* the receiver */
	EXPECT_CLOSE(3 * LAT + S / BW, r.time);		/* the sender, acknowledged */
	EXPECT_EQ(1, r.messages);
	EXPECT_STREQ("node0.nic0.up", r.busiest);
	simnet_result_free(&r);
}

TEST(one_message_eager)
{
	const uint64_t S = 4000;
	const struct tmsg m[] = { { 0, 0, 1, S } };
	struct simnet_cfg c;
	struct simnet_result r;

	base_cfg(&c, 2);
	ASSERT_EQ(0, run_msgs(&c, m, 1, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(LAT + S / BW, r.first_end);
	EXPECT_CLOSE(2 * LAT + S / BW, r.time);
	simnet_result_free(&r);
}

/* The real schedule: a 2-rank in-place broadcast is one message, and overhead adds up. */
TEST(broadcast_two_ranks_overhead)
{
	const uint64_t S = 1 << 20;
	struct simnet_cfg c;
	struct simnet_result r;

	base_cfg(&c, 2);
	c.overhead = 1e-6;
	c.args.coll = KCOLL_BROADCAST;
	c.args.in_place = true;
	c.args.count = S / 4;
	c.algo = KCOLL_ALG_BINOMIAL;
	ASSERT_EQ(0, simnet_run(&c, &r)) TH_LOG("%s", r.err);
	/* both post after 1 us; CTS, data, delivery, acknowledgement */
	EXPECT_CLOSE(1e-6 + 3 * LAT + S / BW, r.time);
	simnet_result_free(&r);
}

static void ring_case(struct __test_metadata *_metadata, uint32_t n, uint64_t S)
{
	struct simnet_cfg c;
	struct simnet_result r;
	double blk = (double)S / n, stage = blk > 4064 ? 3 * LAT : 2 * LAT;

	base_cfg(&c, n);
	c.args.coll = KCOLL_ALLREDUCE;
	c.args.count = S / 4;
	c.algo = KCOLL_ALG_RING;
	c.chunk_bytes = 0;
	ASSERT_EQ(0, simnet_run(&c, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(2.0 * (n - 1) / n * S / BW + 2.0 * (n - 1) * stage, r.time);
	EXPECT_EQ(2ULL * n * (n - 1), r.messages);
	EXPECT_EQ(1, r.unique_scheds);	/* equal relative schedules are shared */
	/* every NIC is busy 2(n-1)/n * S / B of the time */
	EXPECT_LE(fabs(r.busiest_util - 2.0 * (n - 1) / n * S / BW / r.time), 1e-9);
	ASSERT_EQ(2, r.nphases);	/* reduce-scatter, all-gather */
	EXPECT_EQ(n - 1, r.phases[0].nstages);
	EXPECT_EQ(1, r.phases[0].recv_reduces);
	EXPECT_EQ(1, r.phases[1].recvs);
	simnet_result_free(&r);
}

TEST(ring_allreduce_star_closed_form)
{
	ring_case(_metadata, 8, 8ULL << 20);
	ring_case(_metadata, 5, 5ULL << 20);
	ring_case(_metadata, 64, 64 * 1024);	/* 1 KiB blocks: eager */
	ring_case(_metadata, 250, 250ULL * 8192);
}

/* Two flows into one NIC: each gets half. */
TEST(two_flows_share_a_link)
{
	const uint64_t S = 1 << 20;
	const struct tmsg m[] = { { 0, 1, 0, S }, { 0, 2, 0, S } };
	struct simnet_cfg c;
	struct simnet_result r;

	base_cfg(&c, 3);
	ASSERT_EQ(0, run_msgs(&c, m, 2, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(2 * LAT + 2 * S / BW, r.first_end);
	EXPECT_CLOSE(3 * LAT + 2 * S / BW, r.time);
	EXPECT_STREQ("node0.nic0.down", r.busiest);
	simnet_result_free(&r);
}

/*
 * Max-min, not "each flow gets its smallest fair share": 1->0, 3->0, 4->0 share node 0's
 * NIC (B/3 each); 1->2 shares rank 1's NIC with 1->0 only, so it gets the 2B/3 left.
 */
TEST(max_min_fairness)
{
	const uint64_t S = 3 << 20;
	const struct tmsg m[] = { { 0, 1, 0, S }, { 0, 1, 2, S }, { 0, 3, 0, S }, { 0, 4, 0, S } };
	struct simnet_cfg c;
	struct simnet_result r;

	base_cfg(&c, 5);
	ASSERT_EQ(0, run_msgs(&c, m, 4, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(2 * LAT + S / (2 * BW / 3), r.first_end);	/* rank 2 */
	EXPECT_CLOSE(3 * LAT + S / (BW / 3), r.time);
	simnet_result_free(&r);
}

/* A cross-leaf message over a 2:1 oversubscribed uplink moves at half the speed. */
TEST(leaf_spine_oversubscription)
{
	const uint64_t S = 8 << 20;
	const struct tmsg m[] = { { 0, 0, 1, S } };
	double lat = LAT + 2 * 0.5e-6, t[2];
	struct simnet_cfg c;
	struct simnet_result r;
	int i;

	for (i = 0; i < 2; i++) {
		base_cfg(&c, 2);
		c.fab.topo = SIMNET_LEAFSPINE;
		c.fab.hosts_per_leaf = 1;
		c.fab.spines = 1;
		c.fab.oversub = i ? 2 : 1;
		ASSERT_EQ(0, run_msgs(&c, m, 1, &r)) TH_LOG("%s", r.err);
		t[i] = r.time;
		EXPECT_CLOSE(3 * lat + (i ? 2 : 1) * S / BW, r.time);
		if (i)
			EXPECT_STREQ("rail0.leaf0->spine0", r.busiest);
		simnet_result_free(&r);
	}
	EXPECT_CLOSE(2.0, (t[1] - 3 * lat) / (t[0] - 3 * lat));
}

/* Same leaf: one switch, no uplink. Same node: the memory link. */
TEST(paths_and_latencies)
{
	const uint64_t S = 1 << 20;
	const struct tmsg m[] = { { 0, 0, 1, S } };
	struct simnet_cfg c;
	struct simnet_result r;

	base_cfg(&c, 2);
	c.fab.topo = SIMNET_LEAFSPINE;
	c.fab.hosts_per_leaf = 2;
	c.fab.oversub = 4;
	ASSERT_EQ(0, run_msgs(&c, m, 1, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(3 * LAT + S / BW, r.time);
	simnet_result_free(&r);

	base_cfg(&c, 2);
	c.fab.ranks_per_node = 2;
	c.fab.mem_bw = 40e9;
	c.fab.shm_lat = 0.25e-6;
	ASSERT_EQ(0, run_msgs(&c, m, 1, &r)) TH_LOG("%s", r.err);
	EXPECT_CLOSE(3 * 0.25e-6 + S / 40e9, r.time);
	EXPECT_STREQ("node0.mem", r.busiest);
	simnet_result_free(&r);

	/* fat-tree k=4: 4 hosts a pod, 2 an edge; 0 -> 5 crosses pods: 5 switches */
	base_cfg(&c, 6);
	c.fab.topo = SIMNET_FATTREE;
	c.fab.k = 4;
	{
		const struct tmsg m2[] = { { 0, 0, 5, S } };

		ASSERT_EQ(0, run_msgs(&c, m2, 1, &r)) TH_LOG("%s", r.err);
		EXPECT_CLOSE(3 * (LAT + 4 * 0.5e-6) + S / BW, r.time);
		simnet_result_free(&r);
	}
}

/* Two ranks of a node sending out: one NIC shares, two rails do not. */
TEST(multi_rail)
{
	const uint64_t S = 4 << 20;
	const struct tmsg m[] = { { 0, 0, 2, S }, { 0, 1, 3, S } };
	struct simnet_cfg c;
	struct simnet_result r;
	uint32_t rails;

	for (rails = 1; rails <= 2; rails++) {
		base_cfg(&c, 4);
		c.fab.ranks_per_node = 2;
		c.fab.rails = rails;
		ASSERT_EQ(0, run_msgs(&c, m, 2, &r)) TH_LOG("%s", r.err);
		EXPECT_CLOSE(3 * LAT + (rails == 1 ? 2 : 1) * S / BW, r.time);
		simnet_result_free(&r);
	}
}

/* Reductions cost bytes / red_bw on the receiving rank, after the data. */
TEST(reduction_cost)
{
	const uint64_t S = 8 << 20;
	struct simnet_cfg c;
	struct simnet_result r;

	base_cfg(&c, 2);
	c.red_bw = 5e9;
	c.args.coll = KCOLL_ALLREDUCE;
	c.args.count = S / 4;
	c.algo = KCOLL_ALG_RING;
	c.chunk_bytes = 0;
	ASSERT_EQ(0, simnet_run(&c, &r)) TH_LOG("%s", r.err);
	/*
	 * stage 1: half the data arrives (2 lat + S/2B) and is reduced, which outlasts the
	 * sender's acknowledgement; stage 2: the other half, no reduction
	 */
	EXPECT_CLOSE(2 * LAT + S / 2 / BW + S / 2 / 5e9 + 3 * LAT + S / 2 / BW, r.time);
	EXPECT_CLOSE(S / 2 / 5e9, r.t_reduce);
	simnet_result_free(&r);
}

/* Every algorithm x collective the module has runs to the end, one message per SEND step. */
TEST(all_schedules_complete)
{
	static const uint32_t sizes[] = { 1, 2, 3, 5, 8, 13, 16, 17 };
	unsigned int coll, algo, i, runs = 0;

	for (coll = 0; coll < KCOLL_NUM_COLLECTIVES; coll++) {
		for (algo = 1; algo < KCOLL_NUM_ALGORITHMS; algo++) {
			if (!kcoll_sched_supports(algo, coll, false))
				continue;
			for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
				uint32_t n = sizes[i], j, q;
				uint64_t cnt[17], dsp[17], sends = 0;
				struct simnet_cfg c;
				struct simnet_result r;

				base_cfg(&c, n);
				c.overhead = 1e-6;
				c.red_bw = 10e9;
				c.fab.ranks_per_node = 2;
				c.fab.topo = SIMNET_LEAFSPINE;
				c.fab.hosts_per_leaf = 2;
				c.fab.spines = 2;
				c.fab.oversub = 2;
				c.args.coll = coll;
				c.args.count = 1000 + 7 * n;
				c.chunk_bytes = 1024;
				for (j = 0; j < n; j++) {
					cnt[j] = 1000 + j;
					dsp[j] = j ? dsp[j - 1] + cnt[j - 1] : 0;
				}
				c.args.counts = c.args.send_counts = cnt;
				c.args.displs = c.args.send_displs = dsp;
				c.algo = algo;
				ASSERT_EQ(0, simnet_run(&c, &r)) {
					TH_LOG("%s %s n=%u: %s", kcoll_coll_name(coll),
					       kcoll_algo_name(algo), n, r.err);
				}
				for (q = 0; q < n; q++) {
					struct kcoll_coll_args a = c.args;
					struct kcoll_sched_info info;
					struct kcoll_step *st;

					a.rank = q;
					ASSERT_EQ(0, kcoll_sched_build(&a, algo, 1024, NULL, 0, &info));
					st = calloc(info.nsteps + 1, sizeof(*st));
					ASSERT_NE(NULL, st);
					ASSERT_EQ(0, kcoll_sched_build(&a, algo, 1024, st, info.nsteps,
								       &info));
					for (j = 0; j < info.nsteps; j++)
						sends += st[j].op == KCOLL_STEP_SEND;
					free(st);
				}
				EXPECT_EQ(sends, r.messages);
				if (n > 1 && coll != KCOLL_BARRIER)
					EXPECT_LT(0, r.time);
				simnet_result_free(&r);
				runs++;
			}
		}
	}
	EXPECT_LT(100, runs);
}

TEST(deterministic)
{
	struct simnet_cfg c;
	struct simnet_result r[2];
	int i;

	for (i = 0; i < 2; i++) {
		base_cfg(&c, 96);
		c.overhead = 1e-6;
		c.red_bw = 8e9;
		c.fab.topo = SIMNET_FATTREE;
		c.fab.ranks_per_node = 2;
		c.args.coll = KCOLL_ALLREDUCE;
		c.args.count = 1 << 20;
		c.algo = KCOLL_ALG_DBTREE;
		c.chunk_bytes = 64 << 10;
		ASSERT_EQ(0, simnet_run(&c, &r[i])) TH_LOG("%s", r[i].err);
	}
	EXPECT_EQ(0, memcmp(&r[0].time, &r[1].time, sizeof(double)));
	EXPECT_EQ(r[0].events, r[1].events);
	EXPECT_EQ(r[0].flows_resolved, r[1].flows_resolved);
	EXPECT_STREQ(r[0].busiest, r[1].busiest);
	simnet_result_free(&r[0]);
	simnet_result_free(&r[1]);
}

TEST(bad_fabrics)
{
	struct simnet_fabric f;
	char err[200];

	memset(&f, 0, sizeof(f));
	f.ranks_per_node = 1;
	f.rails = 1;
	f.link_bw = f.mem_bw = 1e9;
	f.topo = SIMNET_FATTREE;
	f.k = 4;	/* holds 16 nodes */
	EXPECT_EQ(0, simnet_fabric_check(&f, 16, err, sizeof(err)));
	EXPECT_EQ(-1, simnet_fabric_check(&f, 17, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "holds 16 nodes"));
	f.k = 3;
	EXPECT_EQ(-1, simnet_fabric_check(&f, 4, err, sizeof(err)));
	f.topo = SIMNET_LEAFSPINE;
	f.spines = 0;
	EXPECT_EQ(-1, simnet_fabric_check(&f, 4, err, sizeof(err)));
	f.spines = 2;
	f.oversub = 1;
	f.leaves = 2;
	f.hosts_per_leaf = 2;
	EXPECT_EQ(-1, simnet_fabric_check(&f, 5, err, sizeof(err)));
	f.link_bw = 0;
	EXPECT_EQ(-1, simnet_fabric_check(&f, 4, err, sizeof(err)));
	f.link_bw = 1e9;
	EXPECT_EQ(0, simnet_fabric_check(&f, 4, err, sizeof(err)));
	f.host_bw = -1;
	EXPECT_EQ(-1, simnet_fabric_check(&f, 4, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "host bandwidth"));
	f.host_bw = NAN;
	EXPECT_EQ(-1, simnet_fabric_check(&f, 4, err, sizeof(err)));
	f.host_bw = 2e9;
	EXPECT_EQ(0, simnet_fabric_check(&f, 4, err, sizeof(err)));
	f.shared_bw = -1;
	EXPECT_EQ(-1, simnet_fabric_check(&f, 4, err, sizeof(err)));
	f.shared_bw = INFINITY;
	EXPECT_EQ(-1, simnet_fabric_check(&f, 4, err, sizeof(err)));
	f.shared_bw = 1e9;
	EXPECT_EQ(0, simnet_fabric_check(&f, 4, err, sizeof(err)));
}

/* ---- the command line ---------------------------------------------------------------------- */

static const char *sim_path(void)
{
	const char *p = getenv("KCOLL_SIM");

	return p ? p : KCOLL_SIM_BUILD_PATH;
}

#define SIM(proc, ...) sim_run((proc), (const char *[]){ sim_path(), __VA_ARGS__, NULL })

static int sim_run(struct kcoll_test_proc *proc, const char **argv)
{
	struct kcoll_test_cmd cmd = { .argv = argv };

	return kcoll_test_run(&cmd, proc);
}

TEST(cli_usage_errors)
{
	static const char *const cases[][4] = {
		{ "--bogus", NULL, NULL, "unknown option '--bogus'" },
		{ "-n", "0", NULL, "--nranks: '0'" },
		{ "-n", "x", NULL, "--nranks: 'x'" },
		{ "-s", "12Q", NULL, "bad size '12Q'" },
		{ "-c", "allfoo", NULL, "unknown collective 'allfoo'" },
		{ "-a", "quick", NULL, "unknown algorithm 'quick'" },
		{ "-F", "torus", NULL, "unknown fabric 'torus'" },
		{ "-k", "5", NULL, "--k: '5'" },
		{ "--bw", "-3", NULL, "'-3' is not a positive number" },
		{ "--host-bw", "0", NULL, "--host-bw: '0' is not a positive number" },
		{ "--host-bw", "-2", NULL, "--host-bw: '-2' is not a positive number" },
		{ "--host-bw", "fast", NULL, "--host-bw: 'fast' is not a positive number" },
		{ "--host-bw", "nan", NULL, "--host-bw: 'nan' is not a positive number" },
		{ "--host-bw", NULL, NULL, "needs a value" },
		{ "--shared-bw", "0", NULL, "--shared-bw: '0' is not a positive number" },
		{ "--shared-bw", "-1", NULL, "--shared-bw: '-1' is not a positive number" },
		{ "--shared-bw", "lots", NULL, "--shared-bw: 'lots' is not a positive number" },
		{ "-T", "udp", NULL, "unknown transport 'udp'" },
		{ "stray", NULL, NULL, "unexpected argument 'stray'" },
		{ "-n", NULL, NULL, "needs a value" },
		{ "--tree-ranks", "1", NULL, "--tree-ranks: '1'" },
		{ "--small-bytes", "1Q", NULL, "bad size '1Q'" },
		{ "--derive-thresholds", "lab", NULL, "unknown parameter set 'lab'" },
	};
	struct kcoll_test_proc *p = malloc(sizeof(*p));
	size_t i;

	ASSERT_NE(NULL, p);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const *c = cases[i];

		int ret = c[1] ? SIM(p, c[0], c[1]) : SIM(p, c[0]);

		ASSERT_EQ(0, ret);
		EXPECT_EQ(2, p->status) TH_LOG("%s: status %d", c[0], p->status);
		EXPECT_STREQ("", p->out);
		EXPECT_NE(NULL, strstr(p->err, c[3])) TH_LOG("%s: stderr %s", c[0], p->err);
		EXPECT_NE(NULL, strstr(p->err, "--help"));
	}
	/* a fat-tree too small for the nodes, a rooted forced algorithm that cannot */
	ASSERT_EQ(0, SIM(p, "-n", "17", "-F", "fat-tree", "-k", "4"));
	EXPECT_EQ(2, p->status);
	EXPECT_NE(NULL, strstr(p->err, "holds 16 nodes")) TH_LOG("%s", p->err);
	ASSERT_EQ(0, SIM(p, "-c", "broadcast", "-a", "ring"));
	EXPECT_EQ(2, p->status);
	EXPECT_NE(NULL, strstr(p->err, "does not implement")) TH_LOG("%s", p->err);
	/* hier: whole nodes only */
	ASSERT_EQ(0, SIM(p, "-a", "hier", "-n", "12", "-N", "8"));
	EXPECT_EQ(2, p->status);
	EXPECT_NE(NULL, strstr(p->err, "multiple of --ranks-per-node")) TH_LOG("%s", p->err);
	/* the derivation's grid is one switch, one rail, its own ranks a node */
	ASSERT_EQ(0, SIM(p, "--derive-thresholds", "rig", "-F", "leaf-spine"));
	EXPECT_EQ(2, p->status);
	EXPECT_NE(NULL, strstr(p->err, "one switch")) TH_LOG("%s", p->err);
	ASSERT_EQ(0, SIM(p, "--derive-thresholds", "datacentre", "-N", "4"));
	EXPECT_EQ(2, p->status);
	EXPECT_STREQ("", p->out);
	free(p);
}

TEST(cli_help_and_run)
{
	struct kcoll_test_proc *p = malloc(sizeof(*p));

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, SIM(p, "--help"));
	EXPECT_EQ(0, p->status);
	EXPECT_NE(NULL, strstr(p->out, "Usage: kcoll-sim"));
	/* auto = the module's own choice: double binary tree from 16 ranks above 16 KiB */
	ASSERT_EQ(0, SIM(p, "-n", "32", "-s", "1M", "-j", "-q", "--small-bytes", "16K",
			 "--tree-ranks", "16"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_NE(NULL, strstr(p->out, "\"algo\": \"dbtree\"")) TH_LOG("%s", p->out);
	EXPECT_NE(NULL, strstr(p->out, "\"busbw_gbs\": "));
	EXPECT_NE(NULL, strstr(p->out, "\"phases\": ["));
	/* a sweep in kcoll-perf's JSON-lines form: one row per size */
	ASSERT_EQ(0, SIM(p, "-S", "-j", "-n", "4", "-b", "1K", "-e", "4K", "-f", "2"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	{
		const char *s = p->out;
		int rows = 0;

		while ((s = strstr(s, "\"system\": \"kcoll-sim\"")) != NULL) {
			rows++;
			s++;
		}
		EXPECT_EQ(3, rows) TH_LOG("%s", p->out);
	}
	/* --host-bw: in the fabric, and a 2-rank ring's busiest resource is a host */
	ASSERT_EQ(0, SIM(p, "-n", "2", "-s", "1M", "-j", "-q", "--bw", "10", "--host-bw", "5"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_NE(NULL, strstr(p->out, "\"host_gbs\": 5")) TH_LOG("%s", p->out);
	EXPECT_NE(NULL, strstr(p->out, "\"name\": \"node0.host\"")) TH_LOG("%s", p->out);
	ASSERT_EQ(0, SIM(p, "-n", "2", "-s", "1M", "-q"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_EQ(NULL, strstr(p->out, "host")) TH_LOG("%s", p->out);
	free(p);
}

/* --choose: the selection only, with the thresholds config-set would give the module */
TEST(cli_choose)
{
	static const struct {
		const char *size, *small, *medium, *tree, *want;
	} cases[] = {
		{ "1M", "16K", "1M", "16", "1048576 dbtree\n" },
		{ "1M", "16K", "1M", "64", "1048576 rabenseifner\n" },
		{ "1M", "16K", "512K", "64", "1048576 ring\n" },
		{ "1M", "1M", "1M", "16", "1048576 recdbl\n" },
		{ "16K", "16K", "1M", "16", "16384 recdbl\n" },
		{ "32K", "16K", "1M", "16", "32768 dbtree\n" },
	};
	struct kcoll_test_proc *p = malloc(sizeof(*p));
	size_t i;

	ASSERT_NE(NULL, p);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, SIM(p, "--choose", "-n", "32", "-s", cases[i].size, "--small-bytes",
				 cases[i].small, "--medium-bytes", cases[i].medium, "--tree-ranks",
				 cases[i].tree));
		EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
		EXPECT_STREQ(cases[i].want, p->out);
	}
	/* a sweep: one line a size, nothing else */
	ASSERT_EQ(0, SIM(p, "--choose", "-S", "-n", "8", "-b", "1K", "-e", "4K", "--small-bytes",
			 "2K", "--tree-ranks", "16"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_STREQ("1024 recdbl\n2048 recdbl\n4096 rabenseifner\n", p->out);
	/*
	 * The schedules know the node shape, unless --no-locality: the derived table (no
	 * --small-bytes) takes hier up to 1 MiB there; the rules up to small_bytes.
	 */
	ASSERT_EQ(0, SIM(p, "--choose", "-S", "-n", "64", "-N", "8", "-b", "1M", "-e", "4M"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_STREQ("1048576 hier\n2097152 ring\n4194304 ring\n", p->out);
	ASSERT_EQ(0, SIM(p, "--choose", "-S", "-n", "64", "-N", "8", "-b", "1M", "-e", "4M",
			 "--small-bytes", "2M"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_STREQ("1048576 hier\n2097152 hier\n4194304 rabenseifner\n", p->out);
	ASSERT_EQ(0, SIM(p, "--choose", "-n", "64", "-N", "8", "-s", "1M", "--no-locality"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_STREQ("1048576 rabenseifner\n", p->out);
	ASSERT_EQ(0, SIM(p, "--choose", "-n", "64", "-N", "8", "-s", "1M", "--no-locality",
			 "--small-bytes", "2M"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_STREQ("1048576 recdbl\n", p->out);
	/* and the model runs it */
	ASSERT_EQ(0, SIM(p, "-n", "16", "-N", "4", "-s", "64K", "-a", "hier", "-q"));
	EXPECT_EQ(0, p->status) TH_LOG("%s", p->err);
	EXPECT_NE(NULL, strstr(p->out, "algorithm hier")) TH_LOG("%s", p->out);
	free(p);
}

TEST_HARNESS_MAIN
