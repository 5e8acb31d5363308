// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll_locality.c - which ranks of a communicator share a host, a NIC, a leaf.
 *
 * COMM_CREATE may carry every rank's struct kcoll_rank_locality (libkcoll's bootstrap
 * gathers them, Documentation/design.rst "Locality").  The kernel checks the table for
 * contradictions and keeps the groups (core/kcoll_locality.c) in comm->loc: the schedules'
 * local_size (kcoll_comm_sched_local_size()) and, later, a per-peer transport choice
 * (comm->loc.host[peer] == comm->loc.host[comm->rank]: same host) read them.  Advice only:
 * nothing that protects one process from another depends on it.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kcoll.h"

/* Check the locality fields of @arg; 0 or -EINVAL/-E2BIG. */
int kcoll_comm_check_locality(const struct kcoll_comm_create *arg)
{
	if (arg->reserved2)
		return -EINVAL;
	if (!arg->locality)
		return arg->locality_size ? -EINVAL : 0;
	if (arg->locality_size < KCOLL_RANK_LOCALITY_SIZE_VER0)
		return -EINVAL;
	if (arg->locality_size > KCOLL_PEER_SIZE_MAX)
		return -E2BIG;
	return 0;
}

/**
 * kcoll_comm_read_locality - read, check and derive the ranks' locality of COMM_CREATE
 * @comm:	the communicator being created (comm->loc is empty)
 * @arg:	the checked argument (kcoll_comm_check_locality())
 *
 * Without a table comm->loc stays empty: every rank its own host.
 * Return: 0, -EFAULT, -E2BIG (an entry's unknown tail is not zero), -ENOMEM, -EINVAL (the
 * table contradicts itself, see kcoll_loc_derive()).
 */
int kcoll_comm_read_locality(struct kcoll_comm *comm, const struct kcoll_comm_create *arg)
{
	struct kcoll_rank_locality *tab;
	struct kcoll_loc_groups g = {};
	u32 n = comm->nranks, i, *groups, *scratch;
	int ret;

	if (!arg->locality)
		return 0;
	tab = kvmalloc_array(n, sizeof(*tab), GFP_KERNEL_ACCOUNT);
	scratch = kvmalloc_array(n, sizeof(*scratch), GFP_KERNEL_ACCOUNT);
	groups = kvmalloc_array(n, 3 * sizeof(*groups), GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!tab || !scratch || !groups)
		goto out;
	for (i = 0; i < n; i++) {
		ret = copy_struct_from_user(&tab[i], sizeof(tab[i]),
					    u64_to_user_ptr(arg->locality +
							    (u64)i * arg->locality_size),
					    arg->locality_size);
		if (ret)
			goto out;
		cond_resched();		/* up to KCOLL_MAX_RANKS entries */
	}
	g.host = groups;
	g.nic = groups + n;
	g.leaf = groups + 2 * n;
	ret = kcoll_loc_derive(tab, n, comm->rank, &g, scratch);
	if (ret)
		goto out;
	comm->loc = g;
	groups = NULL;		/* comm->loc owns it, freed by kcoll_comm_free_locality() */
out:
	kvfree(groups);
	kvfree(scratch);
	kvfree(tab);
	return ret;
}

void kcoll_comm_free_locality(struct kcoll_comm *comm)
{
	kvfree(comm->loc.host);		/* host, nic and leaf: one allocation */
	comm->loc.host = NULL;
}

/*
 * The schedules' local_size: ranks per host when the hosts hold equal blocks of consecutive
 * ranks, else 0 (flat).  Derived from the table every rank was given, so all ranks agree.
 */
u32 kcoll_comm_sched_local_size(const struct kcoll_comm *comm)
{
	return comm->loc.host ? comm->loc.block : 0;
}
