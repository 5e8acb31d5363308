// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll bootstrap: rails, several NICs a node (lib/bootstrap.c has the overview).
 *
 * When the interface setting (the ifname option or $KCOLL_IFNAME) names several interfaces,
 * "eth0,eth1", each is a rail and a rank advertises the address of rail (local rank mod
 * rails): local rank i of every node then talks over rail i, the same NIC index on every
 * node (rail-aligned placement).  The kernel takes the rank's RDMA device from that address
 * (rdma_cm), so nothing else changes.  The local rank is the launcher's (LOCAL_RANK,
 * SLURM_LOCALID, ...; KCOLL_LOCAL_RANK next to KCOLL_RANK), known before the rendezvous,
 * where the address must already be chosen.  One name: the single-interface path as before.
 */
#include "bootstrap.h"

/* Rails a node, at most: more names in the list is a mistake, not a machine. */
#define KCOLL_RAILS_MAX		16

/*
 * The first launcher local-rank variable that is set, for kcoll_comm_init_rank(), which has
 * no launcher of its own: a number below @nranks into *@out, else -1.
 */
static int kcoll_rail_env_local(int nranks, int *out)
{
	static const char *const vars[] = {
		"KCOLL_LOCAL_RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
		"MPI_LOCALRANKID", "SLURM_LOCALID",
	};
	unsigned long v;
	size_t i;
	bool set;
	int err;

	*out = -1;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		err = kcoll_env_ulong(vars[i], 0, (unsigned long)nranks - 1, &v, &set);
		if (err)
			return err;
		if (set) {
			*out = (int)v;
			return 0;
		}
	}
	return 0;
}

/*
 * @list (from @what, for messages) is a comma-separated list of interfaces: check every
 * name and copy rail (@local_rank mod the number of names) into @name.  @local_rank
 * KCOLL_LOCAL_RANK_LOOKUP: from the environment (kcoll_rail_env_local()).  -EINVAL for an
 * empty or overlong name, too many names or an unknown local rank, -ENODEV for a name that
 * is no interface here; each with a message.
 */
int kcoll_rail_pick(const char *list, const char *what, int local_rank, int nranks,
		    char name[IF_NAMESIZE])
{
	const char *s, *end;
	int n = 0, rail, err;
	size_t len;

	for (s = list;; s = end + 1) {
		end = strchr(s, ',');
		len = end ? (size_t)(end - s) : strlen(s);
		if (!len)
			return kcoll_fail(-EINVAL, "%s \"%.64s\": empty interface name in the list",
					  what, list);
		if (len >= IF_NAMESIZE)
			return kcoll_fail(-EINVAL, "%s \"%.64s\": \"%.*s\" is longer than an "
					  "interface name (%d characters)", what, list,
					  (int)(len > 32 ? 32 : len), s, IF_NAMESIZE - 1);
		if (++n > KCOLL_RAILS_MAX)
			return kcoll_fail(-EINVAL, "%s \"%.64s\": more than %d interfaces", what,
					  list, KCOLL_RAILS_MAX);
		memcpy(name, s, len);
		name[len] = '\0';
		/* Every name, not only this rank's: a typo fails every rank alike. */
		if (!if_nametoindex(name))
			return kcoll_fail(-ENODEV, "%s \"%.64s\": there is no interface %s", what,
					  list, name);
		if (!end)
			break;
	}
	if (local_rank == KCOLL_LOCAL_RANK_LOOKUP) {
		err = kcoll_rail_env_local(nranks, &local_rank);
		if (err)
			return err;
	}
	if (local_rank < 0)
		return kcoll_fail(-EINVAL, "%s names %d interfaces (rails), but this rank's local "
				  "rank is unknown: set KCOLL_LOCAL_RANK, or start under a launcher "
				  "that sets one (LOCAL_RANK, SLURM_LOCALID, "
				  "OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID)", what, n);
	/* The rail-th name, found again: the list was checked above. */
	rail = local_rank % n;
	for (s = list; rail; rail--)
		s = strchr(s, ',') + 1;
	len = strcspn(s, ",");
	memcpy(name, s, len);
	name[len] = '\0';
	return 0;
}
