// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_comm_split() over real RDMA, run by every node of a cluster suite as one rank of a
 * communicator made from the environment (KCOLL_RANK, KCOLL_NRANKS, KCOLL_BOOTSTRAP_ADDR):
 *  1. one color, keys reversing the order: the child ranks the parent's ranks backwards
 *     (an all-gather of parent ranks in the child says so) and all-reduces;
 *  2. colors rank % 2 (on 2 ranks: two 1-rank children) while child 1 lives: each child
 *     all-reduces over its own ranks only, and child 1 still works afterwards;
 *  3. the last rank passes KCOLL_SPLIT_UNDEFINED: it gets no communicator, the others a child;
 *  4. the parent still works.
 * The ranking itself is table-tested on the host (selftests/host/test_split.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "kselftest.h"

#define MAXR	64

static int rank, size;

/* The sum of (r + 1) over the parent ranks r of @color (rank % 2 == color; -1: every rank). */
static int want_sum(int color, int skip)
{
	int s = 0;

	for (int r = 0; r < size; r++)
		if ((color < 0 || r % 2 == color) && r != skip)
			s += r + 1;
	return s;
}

/* An all-reduce of (parent rank + 1) in @c equals @want. */
static bool sums_to(struct kcoll_comm *c, int want, const char *what)
{
	int32_t x = rank + 1;
	int err = kcoll_allreduce(c, &x, &x, 1, KCOLL_INT32, KCOLL_SUM, NULL);

	if (err || x != want) {
		ksft_print_msg("%s: all-reduce %d (%s): %d, want %d\n", what, err,
			       kcoll_last_error(), x, want);
		return false;
	}
	return true;
}

static bool split(struct kcoll_comm *p, int color, int key, struct kcoll_comm **c)
{
	int err = kcoll_comm_split(p, color, key, NULL, c);

	if (err)
		ksft_print_msg("split (color %d, key %d): %d: %s\n", color, key, err,
			       kcoll_last_error());
	return !err;
}

/* 1: the child ranks by key; its id differs from the parent's. */
static bool reversed(struct kcoll_comm *p, struct kcoll_comm **c)
{
	int32_t mine = rank, all[MAXR];

	if (!split(p, 0, size - 1 - rank, c) || !*c)
		return false;
	if (kcoll_comm_size(*c) != size || kcoll_comm_rank(*c) != size - 1 - rank ||
	    kcoll_comm_id(*c) == kcoll_comm_id(p)) {
		ksft_print_msg("child: rank %d of %d\n", kcoll_comm_rank(*c), kcoll_comm_size(*c));
		return false;
	}
	if (kcoll_allgather(*c, &mine, all, 1, KCOLL_INT32, NULL)) {
		ksft_print_msg("child all-gather: %s\n", kcoll_last_error());
		return false;
	}
	for (int i = 0; i < size; i++)
		if (all[i] != size - 1 - i) {
			ksft_print_msg("child rank %d is parent rank %d\n", i, all[i]);
			return false;
		}
	return sums_to(*c, want_sum(-1, -1), "reversed child");
}

/* 2: two colors, while the first child lives. */
static bool two_colors(struct kcoll_comm *p, struct kcoll_comm *first)
{
	struct kcoll_comm *c = NULL;
	bool ok;

	if (!split(p, rank % 2, rank, &c) || !c)
		return false;
	ok = kcoll_comm_size(c) == (size + 1 - rank % 2) / 2 && kcoll_comm_rank(c) == rank / 2;
	if (!ok)
		ksft_print_msg("color %d: rank %d of %d\n", rank % 2, kcoll_comm_rank(c),
			       kcoll_comm_size(c));
	ok = ok && sums_to(c, want_sum(rank % 2, -1), "color child");
	ok = ok && sums_to(first, want_sum(-1, -1), "first child afterwards");
	kcoll_comm_destroy(c);
	return ok;
}

/* 3: the last rank joins nothing. */
static bool undefined(struct kcoll_comm *p)
{
	int color = rank == size - 1 ? KCOLL_SPLIT_UNDEFINED : 7;
	struct kcoll_comm *c = (struct kcoll_comm *)p;
	bool ok;

	if (!split(p, color, 0, &c))
		return false;
	if (color == KCOLL_SPLIT_UNDEFINED) {
		if (c)
			ksft_print_msg("an undefined color got a communicator\n");
		return !c;
	}
	ok = c && kcoll_comm_size(c) == size - 1 && sums_to(c, want_sum(-1, size - 1), "rest");
	kcoll_comm_destroy(c);
	return ok;
}

int main(void)
{
	struct kcoll_comm *p, *first = NULL;
	struct kcoll_handle *h;
	int err;

	ksft_print_header();
	ksft_set_plan(4);
	err = kcoll_open(NULL, &h);
	if (err)
		ksft_exit_fail_msg("kcoll_open: %s\n", strerror(-err));
	err = kcoll_comm_init_env(h, NULL, &p);
	if (err)
		ksft_exit_fail_msg("kcoll_comm_init_env: %s\n", kcoll_last_error());
	rank = kcoll_comm_rank(p);
	size = kcoll_comm_size(p);
	if (size > MAXR)
		ksft_exit_fail_msg("%d ranks: at most %d\n", size, MAXR);
	ksft_test_result(reversed(p, &first), "one color, keys reverse the ranks\n");
	ksft_test_result(first && two_colors(p, first), "two colors beside a live child\n");
	ksft_test_result(undefined(p), "KCOLL_SPLIT_UNDEFINED gets no communicator\n");
	ksft_test_result(sums_to(p, want_sum(-1, -1), "parent"), "the parent still works\n");
	/* Nobody destroys before everyone is done with the last collective. */
	kcoll_barrier(p, NULL);
	kcoll_comm_destroy(first);
	kcoll_comm_destroy(p);
	kcoll_close(h);
	ksft_finished();
}
