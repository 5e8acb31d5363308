// SPDX-License-Identifier: GPL-2.0
/*
 * Rails (several NICs a node, Documentation/design.rst): one rank of a communicator made
 * from the environment (KCOLL_RANK, KCOLL_NRANKS, KCOLL_LOCAL_RANK, KCOLL_BOOTSTRAP_ADDR and
 * KCOLL_IFNAME, a list for rails), run by selftests/suites/rails.sh on 2 VMs with two NICs:
 *  1. an fp32 all-reduce of 1 MiB is right (every rank's value, the closed form);
 *  2. the kernel's comm end uses the RDMA device $KCOLL_TEST_DEV (netlink comm-get, as
 *     `kcollctl comm show` prints it): the rail that libkcoll chose is the one connected.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "kselftest.h"

#define COUNT	(256 * 1024)

/* 1: x[k] = (rank + 1) * (k mod 251) sums to n(n+1)/2 * (k mod 251), exactly in fp32. */
static bool allreduce_right(struct kcoll_comm *c, int rank, int size)
{
	float tri = (float)size * (size + 1) / 2;
	float *x = malloc(COUNT * sizeof(*x));
	bool ok = x != NULL;
	int err;

	for (int k = 0; ok && k < COUNT; k++)
		x[k] = (float)((rank + 1) * (k % 251));
	err = ok ? kcoll_allreduce(c, x, x, COUNT, KCOLL_FP32, KCOLL_SUM, NULL) : -ENOMEM;
	if (err) {
		ksft_print_msg("all-reduce: %s\n", kcoll_last_error());
		ok = false;
	}
	for (int k = 0; ok && k < COUNT; k++)
		if (x[k] != tri * (float)(k % 251)) {
			ksft_print_msg("[%d]: %g, want %g\n", k, x[k], tri * (float)(k % 251));
			ok = false;
		}
	free(x);
	return ok;
}

/* 2: the device the kernel shows for this comm end, against @want. */
static bool device_is(struct kcoll_comm *c, int rank, const char *want)
{
	struct kcoll_nl_comm *nc;
	struct kcoll_nl *nl;
	bool ok;
	int err;

	err = kcoll_nl_open(&nl);
	if (err) {
		ksft_print_msg("kcoll_nl_open: %s\n", kcoll_last_error());
		return false;
	}
	err = kcoll_nl_comm_get(nl, kcoll_comm_id(c), (uint32_t)rank, &nc);
	if (err) {
		ksft_print_msg("comm get: %s\n", kcoll_last_error());
		kcoll_nl_close(nl);
		return false;
	}
	ksft_print_msg("rank %d: local_rank %u of %u, dev %s\n", rank, nc->local_rank,
		       nc->local_size, nc->dev_name);
	ok = !strcmp(nc->dev_name, want);
	kcoll_nl_comm_list_free(nc, 1);
	kcoll_nl_close(nl);
	return ok;
}

int main(void)
{
	const char *want = getenv("KCOLL_TEST_DEV");
	struct kcoll_handle *h;
	struct kcoll_comm *c;
	int err, rank, size;

	ksft_print_header();
	ksft_set_plan(2);
	err = kcoll_open(NULL, &h);
	if (err)
		ksft_exit_fail_msg("kcoll_open: %s\n", strerror(-err));
	err = kcoll_comm_init_env(h, NULL, &c);
	if (err)
		ksft_exit_fail_msg("kcoll_comm_init_env: %s\n", kcoll_last_error());
	rank = kcoll_comm_rank(c);
	size = kcoll_comm_size(c);
	ksft_test_result(allreduce_right(c, rank, size), "1 MiB fp32 all-reduce is right\n");
	if (want)
		ksft_test_result(device_is(c, rank, want), "comm end uses device %s\n", want);
	else
		ksft_test_result_skip("comm end's device (no KCOLL_TEST_DEV)\n");
	/* Nobody destroys before everyone is done with the last collective. */
	kcoll_barrier(c, NULL);
	kcoll_comm_destroy(c);
	kcoll_close(h);
	ksft_finished();
}
