// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sched_hier.c: the hierarchical schedules executed by the simulator
 * (core/kcoll_sim.c) for all ranks together on real data, against references computed here.
 *
 * Shapes: every nranks up to 64 with every local_size 1..16 that divides it, and a sample of
 * multiples of each local_size near 128, 250 and 1,024.  Each shape runs ALLREDUCE,
 * BROADCAST, REDUCE and ALLGATHER once, the variant (in place, root, data kind, count,
 * chunking) rotating with the shape.  Data: uint64 sums and int32 max (exact, any order) and
 * fp32 sums checked bit for bit against the order kcoll_sched_hier.c documents; whole receive
 * buffers are compared and send buffers must be untouched.  The simulator checks the step
 * invariants: every send matches a receive of the same size, regions inside their buffers
 * (scratch inside info.scratch_bytes), no hazards within a stage, no deadlock.  A few large
 * cases take the bandwidth-bound rail algorithms (ring, chain: parts above 2 MiB).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

/*
 * shapes executes every rank's schedule for hundreds of shapes: about 8 s of CPU, which
 * took more than the harness's 30 s on a loaded 2-core host.  A bound, not a speed check.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600

#include "../../core/kcoll_reduce.c"
#include "../../core/kcoll_reduce_x86.c"
#include "../../core/kcoll_sched.c"
#include "../../core/kcoll_sched_select.c"
#include "../../core/kcoll_sched_ring.c"
#include "../../core/kcoll_sched_tree.c"
#include "../../core/kcoll_sched_a2a.c"
#include "../../core/kcoll_sched_hier.c"
#include "../../core/kcoll_sim.c"

#include "sched_ref.h"

enum dkind { DK_U64_SUM, DK_I32_MAX, DK_F32_SUM, DK_COUNT };

static const u32 dk_es[DK_COUNT] = { 8, 4, 4 };
static const enum kcoll_datatype dk_dtype[DK_COUNT] = {
	KCOLL_UINT64, KCOLL_INT32, KCOLL_FP32
};
static const enum kcoll_red_op dk_op[DK_COUNT] = {
	KCOLL_SUM, KCOLL_MAX, KCOLL_SUM
};

struct hcase {
	enum kcoll_collective coll;
	u32 p, L, root;
	u64 count;
	bool in_place;
	enum dkind dk;
	u64 chunk;
};

static const u8 **inp;		/* every rank's logical input */

static const u8 *in_ptr(const struct hcase *c, struct kcoll_sim_rank *k, u32 j)
{
	bool ip = c->in_place;

	switch (c->coll) {
	case KCOLL_BROADCAST:
	case KCOLL_REDUCE:
		return j == c->root && ip ? k->recv : k->send;
	case KCOLL_ALLGATHER:
		return ip ? k->recv + (u64)j * c->count * dk_es[c->dk] : k->send;
	default:
		return ip ? k->recv : k->send;
	}
}

/* fp32: part l reduced over each node in ring order (block l), then across the rail */
static float ref_f32(const struct hcase *c, u64 e)
{
	u32 L = c->L, N = c->p / L, l = part_of(c->count, L, e), n, j;
	u64 poff = 0, plen, i;
	float node[PMAX];

	for (i = 0; i < l; i++)
		poff += c->count / L + (i < c->count % L);
	plen = c->count / L + (l < c->count % L);
	for (n = 0; n < N; n++) {
		for (j = 0; j < L; j++)
			memcpy(&fx[j], inp[n * L + j] + e * 4, 4);
		node[n] = ord_ring(L, l);
	}
	memcpy(fx, node, N * sizeof(float));
	if (c->coll == KCOLL_ALLREDUCE)
		return plen * 4 <= KCOLL_SCHED_HIER_SMALL ? ord_recdbl(N) :
			ord_ring(N, part_of(plen, N, e - poff));
	if (plen * 4 <= KCOLL_SCHED_HIER_SMALL || N <= 2)
		return ord_binomial(N, c->root / L, 0);
	return ord_chain(N, c->root / L);
}

static void ref_elem(const struct hcase *c, u64 e, u8 *out)
{
	u32 j;

	if (c->dk == DK_U64_SUM) {
		u64 acc = 0, x;

		for (j = 0; j < c->p; j++) {
			memcpy(&x, inp[j] + e * 8, 8);
			acc += x;
		}
		memcpy(out, &acc, 8);
	} else if (c->dk == DK_I32_MAX) {
		s32 acc, x;

		memcpy(&acc, inp[0] + e * 4, 4);
		for (j = 1; j < c->p; j++) {
			memcpy(&x, inp[j] + e * 4, 4);
			acc = x > acc ? x : acc;
		}
		memcpy(out, &acc, 4);
	} else {
		float f = ref_f32(c, e);

		memcpy(out, &f, 4);
	}
}

static void fill(u8 *b, u64 len, enum dkind dk)
{
	u64 i;

	for (i = 0; i < len; i += 4) {
		u64 x = rnd();
		float f;

		if (dk == DK_F32_SUM && i + 4 <= len) {
			f = rnd_float();
			memcpy(b + i, &f, 4);
		} else {
			memcpy(b + i, &x, len - i < 4 ? len - i : 4);
		}
	}
}

/* Run one case; 0, or -1 with a message. */
static int run_case(const struct hcase *c, char *msg, size_t msz)
{
	u64 es = dk_es[c->dk], B = c->count * es, e, i;
	struct kcoll_sim_cfg cfg;
	struct kcoll_sim s;
	u8 **send0 = NULL, **recv0 = NULL, *ref = NULL, *exp = NULL;
	int ret = -1;
	u32 r;

	memset(&cfg, 0, sizeof(cfg));
	cfg.args.coll = c->coll;
	cfg.args.nranks = c->p;
	cfg.args.root = c->root;
	cfg.args.count = c->count;
	cfg.args.elem_size = (u32)es;
	cfg.args.in_place = c->in_place;
	cfg.args.local_size = c->L;
	cfg.algo = KCOLL_ALG_HIER;
	cfg.chunk_bytes = c->chunk;
	cfg.dtype = dk_dtype[c->dk];
	cfg.op = dk_op[c->dk];
	cfg.hazard_sample = 40;
	if (kcoll_sim_setup(&s, &cfg)) {
		snprintf(msg, msz, "setup: %s", s.err);
		kcoll_sim_free(&s);
		return -1;
	}
	send0 = calloc(c->p, sizeof(*send0));
	recv0 = calloc(c->p, sizeof(*recv0));
	inp = calloc(c->p, sizeof(*inp));
	ref = malloc(B + 1);
	exp = malloc((u64)c->p * B + 1);
	if (!send0 || !recv0 || !inp || !ref || !exp) {
		snprintf(msg, msz, "oom");
		goto out;
	}
	for (r = 0; r < c->p; r++) {
		struct kcoll_sim_rank *k = &s.rk[r];

		fill(k->send, k->send_len, c->dk);
		fill(k->recv, k->recv_len, c->dk);
		send0[r] = malloc(k->send_len + 1);
		recv0[r] = malloc(k->recv_len + 1);
		if (!send0[r] || !recv0[r]) {
			snprintf(msg, msz, "oom");
			goto out;
		}
		memcpy(send0[r], k->send, k->send_len);
		memcpy(recv0[r], k->recv, k->recv_len);
		inp[r] = in_ptr(c, k, r);
	}
	/* the inputs, in the copies (an in-place rank's empty send buffer may share an address) */
	for (r = 0; r < c->p; r++) {
		struct kcoll_sim_rank *k = &s.rk[r];

		if (inp[r] >= k->recv && inp[r] < k->recv + k->recv_len)
			inp[r] = recv0[r] + (inp[r] - k->recv);
		else
			inp[r] = send0[r];
	}
	if (kcoll_sim_run(&s)) {
		snprintf(msg, msz, "run: %s", s.err);
		goto out;
	}
	if (c->coll == KCOLL_ALLREDUCE || c->coll == KCOLL_REDUCE)
		for (e = 0; e < c->count; e++)
			ref_elem(c, e, ref + e * es);
	for (r = 0; r < c->p; r++) {
		struct kcoll_sim_rank *k = &s.rk[r];

		memcpy(exp, recv0[r], k->recv_len);
		switch (c->coll) {
		case KCOLL_BROADCAST:
			memcpy(exp, inp[c->root], B);
			break;
		case KCOLL_REDUCE:
			if (r == c->root)
				memcpy(exp, ref, B);
			break;
		case KCOLL_ALLREDUCE:
			memcpy(exp, ref, B);
			break;
		default:
			for (i = 0; i < c->p; i++)
				memcpy(exp + i * B, inp[i], B);
			break;
		}
		for (i = 0; i < k->recv_len; i++)
			if (k->recv[i] != exp[i])
				break;
		if (i < k->recv_len) {
			snprintf(msg, msz, "rank %u: receive byte %llu (element %llu) is 0x%02x, "
				 "expected 0x%02x", r, (unsigned long long)i,
				 (unsigned long long)(i / es), k->recv[i], exp[i]);
			goto out;
		}
		if (k->send_len && memcmp(k->send, send0[r], k->send_len)) {
			snprintf(msg, msz, "rank %u: send buffer modified", r);
			goto out;
		}
	}
	ret = 0;
out:
	for (r = 0; send0 && recv0 && r < c->p; r++) {
		free(send0[r]);
		free(recv0[r]);
	}
	free(send0);
	free(recv0);
	free(inp);
	free(ref);
	free(exp);
	kcoll_sim_free(&s);
	return ret;
}

static const enum kcoll_collective colls[] = {
	KCOLL_ALLREDUCE, KCOLL_BROADCAST, KCOLL_REDUCE, KCOLL_ALLGATHER
};

/* Variant vi of coll on p ranks, L per node. */
static void set_variant(struct hcase *c, u32 vi)
{
	static const u32 small[] = { 0, 1, 2, 7, 33, 5, 3, 13 };
	u32 p = c->p;

	c->in_place = vi & 1;
	switch (vi / 2 % 4) {
	case 0:
		c->root = 0;
		break;
	case 1:
		c->root = p - 1;
		break;
	case 2:
		c->root = (c->L + 1) % p;
		break;
	default:
		c->root = p / 2;
		break;
	}
	c->dk = (enum dkind)(vi % DK_COUNT);
	c->chunk = vi % 4 == 3 ? dk_es[c->dk] * (1 + vi % 3) : 0;
	if (c->coll == KCOLL_ALLGATHER)
		c->count = vi % 3;
	else if (vi % 5 < 2 || p > 300)
		c->count = small[vi % 8];
	else
		c->count = (u64)c->L * (1 + vi % 3) + vi % 7 + p / 4;
}

static int sweep(u64 *runs, char *msg, size_t msz)
{
	static const u32 far[] = { 128, 250, 1024 };
	u32 L, p, ci, f, vi = 0;
	struct hcase c;
	int err;

	for (L = 1; L <= 16; L++) {
		for (p = L; p <= 64 + 3 * 1024; p += L) {
			if (p > 64) {	/* beyond 64: the multiples of L at or below each far */
				for (f = 0; f < 3; f++)
					if (p <= far[f] && p + L > far[f])
						break;
				if (f == 3)
					continue;
			}
			if (p > 1024)
				break;
			for (ci = 0; ci < 4; ci++, vi++) {
				memset(&c, 0, sizeof(c));
				c.coll = colls[ci];
				c.p = p;
				c.L = L;
				trng = 0x9e3779b97f4a7c15ULL * (vi + 1);
				set_variant(&c, vi * 7 % 24);
				err = run_case(&c, msg + 120, msz - 120);
				if (err) {
					snprintf(msg, 120, "%s p=%u L=%u root=%u count=%llu "
						 "in_place=%d dk=%d chunk=%llu: ",
						 kcoll_coll_name(c.coll), p, L, c.root,
						 (unsigned long long)c.count, c.in_place, c.dk,
						 (unsigned long long)c.chunk);
					memmove(msg + strlen(msg), msg + 120, strlen(msg + 120) + 1);
					return -1;
				}
				(*runs)++;
			}
		}
	}
	return 0;
}

TEST(shapes)
{
	char msg[700] = "";
	u64 runs = 0;
	int err = sweep(&runs, msg, sizeof(msg));

	if (err)
		TH_LOG("%s", msg);
	ASSERT_EQ(0, err);
	ksft_print_msg("%llu hierarchical runs\n", (unsigned long long)runs);
	fflush(stdout);
}

/* Parts above KCOLL_SCHED_HIER_SMALL: ring all-reduce and chain broadcast/reduce on the rails. */
TEST(large_parts)
{
	static const struct hcase big[] = {
		{ KCOLL_ALLREDUCE, 6, 2, 0, 1100003, false, DK_F32_SUM, 256 << 10 },
		{ KCOLL_ALLREDUCE, 6, 2, 0, 1100003, true, DK_U64_SUM, 0 },
		{ KCOLL_BROADCAST, 6, 2, 3, 1100003, false, DK_U64_SUM, 256 << 10 },
		{ KCOLL_REDUCE, 6, 2, 5, 1100003, true, DK_F32_SUM, 256 << 10 },
		{ KCOLL_REDUCE, 6, 2, 2, 1100003, false, DK_I32_MAX, 0 },
	};
	char msg[600];
	unsigned int i;

	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		msg[0] = 0;
		if (run_case(&big[i], msg, sizeof(msg)))
			TH_LOG("case %u: %s", i, msg);
		EXPECT_EQ(0, msg[0]);
	}
}

TEST(arguments)
{
	struct kcoll_coll_args a;
	struct kcoll_sched_info info, flat;
	u32 c;

	memset(&a, 0, sizeof(a));
	a.coll = KCOLL_ALLREDUCE;
	a.nranks = 12;
	a.rank = 5;
	a.count = 100;
	a.elem_size = 4;
	for (c = 0; c < KCOLL_NUM_COLLECTIVES; c++) {
		bool want = c == KCOLL_ALLREDUCE || c == KCOLL_BROADCAST ||
			    c == KCOLL_REDUCE || c == KCOLL_ALLGATHER;

		EXPECT_EQ(want, kcoll_sched_supports(KCOLL_ALG_HIER, c, false));
		EXPECT_EQ(want, kcoll_sched_supports(KCOLL_ALG_HIER, c, true));
	}
	EXPECT_STREQ("hier", kcoll_algo_name(KCOLL_ALG_HIER));
	/* local_size must divide nranks and not exceed it: no short last node */
	a.local_size = 5;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_HIER, 0, NULL, 0, &info));
	a.local_size = 13;
	EXPECT_EQ(-EINVAL, kcoll_sched_build(&a, KCOLL_ALG_HIER, 0, NULL, 0, &info));
	a.local_size = 12;
	EXPECT_EQ(0, kcoll_sched_build(&a, KCOLL_ALG_HIER, 0, NULL, 0, &info));
	a.local_size = 4;
	EXPECT_EQ(0, kcoll_sched_build(&a, KCOLL_ALG_HIER, 0, NULL, 0, &info));
	/* flat algorithms ignore local_size */
	a.local_size = 0;
	ASSERT_EQ(0, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &flat));
	a.local_size = 5;
	ASSERT_EQ(0, kcoll_sched_build(&a, KCOLL_ALG_RING, 0, NULL, 0, &info));
	EXPECT_EQ(flat.nsteps, info.nsteps);
	/* 0 and 1 are both one rank per node */
	a.local_size = 0;
	ASSERT_EQ(0, kcoll_sched_build(&a, KCOLL_ALG_HIER, 0, NULL, 0, &flat));
	a.local_size = 1;
	ASSERT_EQ(0, kcoll_sched_build(&a, KCOLL_ALG_HIER, 0, NULL, 0, &info));
	EXPECT_EQ(flat.nsteps, info.nsteps);
	EXPECT_EQ(flat.scratch_bytes, info.scratch_bytes);
}

/*
 * The rules (an admin set small_bytes): AUTO picks HIER only with locality, more than one
 * whole node, up to small_bytes.
 */
TEST(selection)
{
	static const struct {
		u32 p, L;
		u64 bytes;
		bool hier;
	} m[] = {
		{ 64, 8, 1 << 20, true }, { 1024, 8, 2 << 20, true }, { 16, 2, 4, true },
		{ 64, 8, (2 << 20) + 1, false }, { 64, 0, 1 << 20, false },
		{ 64, 1, 1 << 20, false }, { 8, 8, 1 << 20, false }, { 12, 8, 1 << 20, false },
	};
	struct kcoll_sched_tuning t, flat;
	unsigned int i;
	u32 c;

	kcoll_sched_tuning_default(&flat);
	flat.small_bytes = KCOLL_SCHED_RULES_SMALL_BYTES;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		kcoll_sched_tuning_default(&t);
		t.small_bytes = KCOLL_SCHED_RULES_SMALL_BYTES;
		t.local_size = m[i].L;
		EXPECT_EQ(m[i].hier, kcoll_sched_select(KCOLL_ALLREDUCE, m[i].p, m[i].bytes,
							&t) == KCOLL_ALG_HIER);
		if (!m[i].hier)	/* otherwise the flat choice, as without locality */
			EXPECT_EQ(kcoll_sched_select(KCOLL_ALLREDUCE, m[i].p, m[i].bytes, &flat),
				  kcoll_sched_select(KCOLL_ALLREDUCE, m[i].p, m[i].bytes, &t));
		/* the other collectives are not chosen hierarchically (yet) */
		for (c = 0; c < KCOLL_NUM_COLLECTIVES; c++)
			if (c != KCOLL_ALLREDUCE)
				EXPECT_EQ(kcoll_sched_select(c, m[i].p, m[i].bytes, &flat),
					  kcoll_sched_select(c, m[i].p, m[i].bytes, &t));
	}
	/* a forced algorithm still wins */
	kcoll_sched_tuning_default(&t);
	t.local_size = 8;
	t.algo[KCOLL_ALLREDUCE] = KCOLL_ALG_RING;
	EXPECT_EQ(KCOLL_ALG_RING, kcoll_sched_select(KCOLL_ALLREDUCE, 64, 1024, &t));
}

/*
 * The derived table (small_bytes 0): HIER only with locality over more than one whole node,
 * and then for some all-reduce sizes (64 ranks, 8 a node: up to 1 MiB, scale.rst).
 */
TEST(table_locality)
{
	struct kcoll_sched_tuning t;
	u32 c, p, L;
	int shift;

	kcoll_sched_tuning_default(&t);
	ASSERT_EQ(0, t.small_bytes);
	for (c = 0; c < KCOLL_NUM_COLLECTIVES; c++)
		for (p = 1; p <= 130; p++)
			for (L = 0; L <= 16; L++)
				for (shift = 0; shift <= 26; shift += 2) {
					bool whole = L > 1 && p > L && p % L == 0;

					t.local_size = L;
					if (!whole)
						ASSERT_NE(KCOLL_ALG_HIER,
							  kcoll_sched_select(c, p, 1ULL << shift, &t));
				}
	t.local_size = 8;
	EXPECT_EQ(KCOLL_ALG_HIER, kcoll_sched_select(KCOLL_ALLREDUCE, 64, 1 << 20, &t));
	EXPECT_NE(KCOLL_ALG_HIER, kcoll_sched_select(KCOLL_ALLREDUCE, 64, 2 << 20, &t));
}

TEST_HARNESS_MAIN
