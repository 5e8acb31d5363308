// SPDX-License-Identifier: GPL-2.0
/*
 * Grouped operations over real RDMA (kcoll_group_start()/kcoll_group_end() in libkcoll),
 * run by every node of a cluster suite as one rank of a communicator made from the
 * environment (KCOLL_RANK, KCOLL_NRANKS, KCOLL_BOOTSTRAP_ADDR, as the seed example):
 *  1. eight small fp32 all-reduces in a group (fused by the library into one kernel call)
 *     give bit for bit what the same eight give as separate calls, and the closed form;
 *  2. a group mixing int32 MAX and fp64 SUM all-reduces with a ring exchange (isend to the
 *     next rank, irecv from the previous one) gives the right reductions and messages;
 *  3. a call refused inside a group fails the group and leaves the communicator usable.
 * The fusing itself (one KCOLL_IOC_COLL) is counted by the host test test_group.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "kselftest.h"

#define NOPS	8
#define MAXN	64

static int rank, size;

static void fill(float v[NOPS][MAXN])
{
	for (int i = 0; i < NOPS; i++)
		for (int k = 0; k < MAXN; k++)
			v[i][k] = (float)((rank + 1) * (i * MAXN + k));
}

/* 1: eight all-reduces, grouped and not: the same results, and n(n+1)/2 * x. */
static bool eight_allreduces(struct kcoll_comm *c)
{
	static const size_t counts[NOPS] = { 1, 3, 64, 2, 17, 5, 33, 8 };
	static float want[NOPS][MAXN], got[NOPS][MAXN];
	float tri = (float)size * (size + 1) / 2;
	int err, i;

	fill(want);
	fill(got);
	for (i = 0; i < NOPS; i++) {
		err = kcoll_allreduce(c, want[i], want[i], counts[i], KCOLL_FP32, KCOLL_SUM, NULL);
		if (err) {
			ksft_print_msg("separate all-reduce %d: %s\n", i, kcoll_last_error());
			return false;
		}
	}
	kcoll_group_start();
	for (i = 0; i < NOPS; i++)
		kcoll_allreduce(c, got[i], got[i], counts[i], KCOLL_FP32, KCOLL_SUM, NULL);
	err = kcoll_group_end();
	if (err) {
		ksft_print_msg("group: %s\n", kcoll_last_error());
		return false;
	}
	if (memcmp(want, got, sizeof(got))) {
		ksft_print_msg("grouped results differ from separate ones\n");
		return false;
	}
	for (i = 0; i < NOPS; i++)
		for (size_t k = 0; k < counts[i]; k++)
			if (got[i][k] != tri * (float)(i * MAXN + k)) {
				ksft_print_msg("op %d [%zu]: %g, want %g\n", i, k, got[i][k],
					       tri * (float)(i * MAXN + k));
				return false;
			}
	return true;
}

/* 2: two runs of different types around a ring exchange. */
static bool mixed_with_ring(struct kcoll_comm *c)
{
	int32_t mx[2][4], out[16], in[16];
	double sum[3][5];
	struct kcoll_request rs, rr;
	int next = (rank + 1) % size, prev = (rank + size - 1) % size, err;

	for (int k = 0; k < 16; k++) {
		out[k] = rank * 1000 + k;
		in[k] = -1;
	}
	for (int k = 0; k < 4; k++)
		mx[0][k] = mx[1][k] = rank * 10 + k;
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 5; k++)
			sum[i][k] = 0.5 * (i + k);
	kcoll_group_start();
	kcoll_allreduce(c, mx[0], mx[0], 4, KCOLL_INT32, KCOLL_MAX, NULL);
	if (size > 1)
		kcoll_isend(c, out, sizeof(out), next, NULL, &rs);
	kcoll_allreduce(c, mx[1], mx[1], 4, KCOLL_INT32, KCOLL_MAX, NULL);
	for (int i = 0; i < 3; i++)
		kcoll_allreduce(c, sum[i], sum[i], 5, KCOLL_FP64, KCOLL_SUM, NULL);
	if (size > 1)
		kcoll_irecv(c, in, sizeof(in), prev, NULL, &rr);
	err = kcoll_group_end();
	if (err) {
		ksft_print_msg("group: %s\n", kcoll_last_error());
		return false;
	}
	for (int k = 0; k < 4; k++)
		if (mx[0][k] != (size - 1) * 10 + k || mx[1][k] != mx[0][k]) {
			ksft_print_msg("max [%d]: %d %d\n", k, mx[0][k], mx[1][k]);
			return false;
		}
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 5; k++)
			if (sum[i][k] != size * 0.5 * (i + k)) {
				ksft_print_msg("sum %d [%d]: %g\n", i, k, sum[i][k]);
				return false;
			}
	for (int k = 0; size > 1 && k < 16; k++)
		if (in[k] != prev * 1000 + k) {
			ksft_print_msg("ring [%d]: %d, want %d\n", k, in[k], prev * 1000 + k);
			return false;
		}
	return true;
}

/* 3: a barrier is refused in a group; the group fails, the communicator still works. */
static bool refused_then_usable(struct kcoll_comm *c)
{
	float x = 1;
	int err;

	kcoll_group_start();
	kcoll_allreduce(c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, NULL);
	err = kcoll_barrier(c, NULL);
	if (err != -EINVAL || !strstr(kcoll_last_error(), "kcoll_group_start")) {
		ksft_print_msg("barrier in a group: %d (%s)\n", err, kcoll_last_error());
		kcoll_group_end();
		return false;
	}
	err = kcoll_group_end();
	if (err != -EINVAL || x != 1) {
		ksft_print_msg("group end: %d, x %g\n", err, x);
		return false;
	}
	err = kcoll_allreduce(c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, NULL);
	if (err || x != size) {
		ksft_print_msg("all-reduce after: %d (%s), x %g\n", err, kcoll_last_error(), x);
		return false;
	}
	return true;
}

int main(void)
{
	struct kcoll_handle *h;
	struct kcoll_comm *c;
	int err;

	ksft_print_header();
	ksft_set_plan(3);
	err = kcoll_open(NULL, &h);
	if (err)
		ksft_exit_fail_msg("kcoll_open: %s\n", strerror(-err));
	err = kcoll_comm_init_env(h, NULL, &c);
	if (err)
		ksft_exit_fail_msg("kcoll_comm_init_env: %s\n", kcoll_last_error());
	rank = kcoll_comm_rank(c);
	size = kcoll_comm_size(c);
	ksft_test_result(eight_allreduces(c), "group of 8 all-reduces equals 8 calls\n");
	ksft_test_result(mixed_with_ring(c), "group of all-reduces and a ring exchange\n");
	ksft_test_result(refused_then_usable(c), "refused call fails the group only\n");
	/* Nobody destroys before everyone is done with the last collective. */
	kcoll_barrier(c, NULL);
	kcoll_comm_destroy(c);
	kcoll_close(h);
	ksft_finished();
}
