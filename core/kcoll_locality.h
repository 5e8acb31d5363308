/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/kcoll_locality.h - which ranks share a host, a NIC, a leaf: groups derived from the
 * per-rank locality table (struct kcoll_rank_locality, uAPI) that the bootstrap hands every
 * rank alike, so every rank derives the same groups.  Advice for schedules, never trusted.
 */
#ifndef _KCOLL_CORE_LOCALITY_H
#define _KCOLL_CORE_LOCALITY_H

#include "kcoll_types.h"
#include "../include/uapi/linux/kcoll.h"

/*
 * Groups of one communicator.  The arrays (@host, @nic, @leaf: n entries each) belong to the
 * caller.  Group indexes count from 0 in the order of each group's lowest rank; a rank with
 * a zero key (unknown) is a group of its own.
 */
struct kcoll_loc_groups {
	u32 *host;		/* rank -> host group */
	u32 *nic;		/* rank -> NIC group (a NIC is on one host) */
	u32 *leaf;		/* rank -> leaf group */
	u32 nhosts, nnics, nleaves;
	u32 local_rank;		/* of the given rank: its index among its host's ranks */
	u32 local_size;		/* of the given rank: its host's ranks */
	/*
	 * Ranks per host when every host holds the same number of consecutive ranks (rank r
	 * on host r / block), more than one: the schedules' local_size.  Else 0 (flat).
	 */
	u32 block;
};

/*
 * Check @loc (n entries) and derive @g for @rank.  @scratch: n entries.  -EINVAL when the
 * table contradicts itself: a reserved field set, a NUMA node below -1, some ranks with a
 * host identity and others without, a NIC on two hosts, a host in two leaves, racks or pods.
 */
int kcoll_loc_derive(const struct kcoll_rank_locality *loc, u32 n, u32 rank,
		     struct kcoll_loc_groups *g, u32 *scratch);

#endif /* _KCOLL_CORE_LOCALITY_H */
