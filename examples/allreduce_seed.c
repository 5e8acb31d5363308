// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * allreduce_seed: the example the project started from.  N processes (4 in the seed), each
 * all-reduces the tensor [rank + 1] with SUM; every rank prints the result (10 with 4).
 *
 * Launch it like any distributed job: rank and size from the environment (KCOLL_RANK and
 * KCOLL_NRANKS, torchrun's RANK/WORLD_SIZE, Slurm or Open MPI) and the bootstrap root from
 * KCOLL_BOOTSTRAP_ADDR or MASTER_ADDR; see libkcoll(7).
 *
 *	KCOLL_RANK=$i KCOLL_NRANKS=4 KCOLL_BOOTSTRAP_ADDR=10.0.0.1 allreduce_seed
 *
 * Exit status: 0 when the result is the expected n(n+1)/2.
 */
#include <stdio.h>
#include <stdlib.h>

#include <libkcoll.h>

int main(void)
{
	struct kcoll_handle *h;
	struct kcoll_comm *c;
	float tensor[1];
	int err, rank, n;

	err = kcoll_open(NULL, &h);
	if (err) {
		fprintf(stderr, "allreduce_seed: cannot open /dev/kcoll: %s\n",
			kcoll_last_error()[0] ? kcoll_last_error() : "is kcoll.ko loaded?");
		return 1;
	}
	err = kcoll_comm_init_env(h, NULL, &c);
	if (err) {
		fprintf(stderr, "allreduce_seed: %s\n", kcoll_last_error());
		kcoll_close(h);
		return 1;
	}
	rank = kcoll_comm_rank(c);
	n = kcoll_comm_size(c);
	tensor[0] = (float)(rank + 1);
	err = kcoll_allreduce(c, tensor, tensor, 1, KCOLL_FP32, KCOLL_SUM, NULL);
	if (err)
		fprintf(stderr, "allreduce_seed: rank %d: all-reduce: %s\n", rank,
			kcoll_last_error()[0] ? kcoll_last_error() : "failed");
	else
		printf("rank %d: %g\n", rank, tensor[0]);
	/* Nobody leaves while another rank may still need it. */
	if (!err) {
		err = kcoll_barrier(c, NULL);
		if (err)
			fprintf(stderr, "allreduce_seed: rank %d: barrier: %s\n", rank,
				kcoll_last_error()[0] ? kcoll_last_error() : "failed");
	}
	kcoll_comm_destroy(c);
	kcoll_close(h);
	return err || tensor[0] != (float)(n * (n + 1) / 2);
}
