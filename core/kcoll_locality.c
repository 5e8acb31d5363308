// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_locality.c - host, NIC and leaf groups from the ranks' locality table.
 *
 * O(n log n) without allocation (a heap sort of rank indexes in the caller's scratch), as the
 * table has up to KCOLL_MAX_RANKS entries and the kernel derives it in COMM_CREATE.
 */
#include "kcoll_locality.h"

#define LOC_KEY(loc, r, off)	(*(const u64 *)((const u8 *)&(loc)[r] + (off)))

/* Order of rank indexes a, b: by key, then by rank. */
static bool loc_less(const struct kcoll_rank_locality *loc, size_t off, u32 a, u32 b)
{
	u64 ka = LOC_KEY(loc, a, off), kb = LOC_KEY(loc, b, off);

	return ka < kb || (ka == kb && a < b);
}

static void loc_sift(const struct kcoll_rank_locality *loc, size_t off, u32 *idx, u32 i,
		     u32 n)
{
	u32 c, t;

	for (; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && loc_less(loc, off, idx[c], idx[c + 1]))
			c++;
		if (!loc_less(loc, off, idx[i], idx[c]))
			break;
		t = idx[i];
		idx[i] = idx[c];
		idx[c] = t;
	}
}

/* @group[r]: index of r's group by the key at @off; returns the number of groups. */
static u32 loc_group(const struct kcoll_rank_locality *loc, u32 n, size_t off, u32 *group,
		     u32 *idx)
{
	u32 i, r, t, lead = 0, ngroups = 0;

	for (i = 0; i < n; i++)
		idx[i] = i;
	for (i = n / 2; i-- > 0;)
		loc_sift(loc, off, idx, i, n);
	for (i = n; i-- > 1;) {
		t = idx[0];
		idx[0] = idx[i];
		idx[i] = t;
		loc_sift(loc, off, idx, 0, i);
	}
	/* Sorted by (key, rank): a run of one key starts with its lowest rank, the leader. */
	for (i = 0; i < n; i++) {
		r = idx[i];
		if (!i || !LOC_KEY(loc, r, off) ||
		    LOC_KEY(loc, r, off) != LOC_KEY(loc, lead, off))
			lead = r;
		group[r] = lead;
	}
	/* Number the leaders in rank order; a leader precedes the members of its group. */
	for (r = 0; r < n; r++) {
		if (group[r] == r)
			idx[r] = ngroups++;
		group[r] = idx[group[r]];
	}
	return ngroups;
}

/* Every group of @group (ngroups) has one value of the key at @off; @first: ngroups. */
static int loc_depends(const struct kcoll_rank_locality *loc, u32 n, const u32 *group,
		       u32 ngroups, size_t off, u32 *first)
{
	u32 r, f;

	for (r = 0; r < ngroups; r++)
		first[r] = (u32)~0U;
	for (r = 0; r < n; r++) {
		f = first[group[r]];
		if (f == (u32)~0U)
			first[group[r]] = r;
		else if (LOC_KEY(loc, f, off) != LOC_KEY(loc, r, off))
			return -EINVAL;
	}
	return 0;
}

int kcoll_loc_derive(const struct kcoll_rank_locality *loc, u32 n, u32 rank,
		     struct kcoll_loc_groups *g, u32 *scratch)
{
	static const size_t host_deps[] = {
		offsetof(struct kcoll_rank_locality, leaf),
		offsetof(struct kcoll_rank_locality, rack),
		offsetof(struct kcoll_rank_locality, pod),
	};
	u32 r, nknown = 0;
	size_t i;
	int ret;

	if (!n || rank >= n)
		return -EINVAL;
	for (r = 0; r < n; r++) {
		if (loc[r].reserved || loc[r].numa_node < -1)
			return -EINVAL;
		nknown += loc[r].host != 0;
	}
	/* Half a table would put the unknown ranks on hosts of their own: say so instead. */
	if (nknown && nknown != n)
		return -EINVAL;
	g->nhosts = loc_group(loc, n, offsetof(struct kcoll_rank_locality, host), g->host,
			      scratch);
	g->nnics = loc_group(loc, n, offsetof(struct kcoll_rank_locality, nic), g->nic,
			     scratch);
	g->nleaves = loc_group(loc, n, offsetof(struct kcoll_rank_locality, leaf), g->leaf,
			       scratch);
	/* A NIC sits in one host (a NIC known on a host not known is a contradiction too). */
	ret = loc_depends(loc, n, g->nic, g->nnics, offsetof(struct kcoll_rank_locality, host),
			  scratch);
	for (r = 0; !ret && r < n; r++) {
		if (loc[r].nic && !loc[r].host)
			ret = -EINVAL;
	}
	for (i = 0; !ret && i < sizeof(host_deps) / sizeof(host_deps[0]); i++)
		ret = loc_depends(loc, n, g->host, g->nhosts, host_deps[i], scratch);
	if (ret)
		return ret;

	g->local_rank = 0;
	g->local_size = 0;
	for (r = 0; r < n; r++) {
		if (g->host[r] != g->host[rank])
			continue;
		g->local_rank += r < rank;
		g->local_size++;
	}
	g->block = 0;
	if (g->nhosts < n && n % g->nhosts == 0) {
		u32 b = n / g->nhosts;

		for (r = 0; r < n && g->host[r] == r / b; r++)
			;
		if (r == n)
			g->block = b;
	}
	return 0;
}
