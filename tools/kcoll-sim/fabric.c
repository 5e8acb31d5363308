// SPDX-License-Identifier: GPL-2.0-only
/*
 * tools/kcoll-sim/fabric.c - fabrics of the model: which links a message crosses.
 *
 * Ranks fill nodes in order (rank r on node r / ranks_per_node); rank r's NIC is rail
 * (r % ranks_per_node) % rails, and each rail is a separate copy of the switch fabric (a
 * message uses the sender's rail on both ends).  Link ids:
 *   [0, 2*R*N)          NIC links: rail j, node n: up (node -> switch) 2(jN+n), down +1
 *   [2RN, 2RN+N)        memory link of node n (messages between ranks of one node)
 *   leaf-spine          rail j, leaf l, spine s: up (leaf -> spine), down (spine -> leaf)
 *   fat-tree            rail j, pod p, edge e, agg a: up/down; then agg a, core c: up/down
 *   host_bw > 0         then: node n's host resource, host_links + n
 *   shared_bw > 0       last: the cluster's shared resource, shared_link
 * Multipath (spine, aggregation and core switch) is chosen by a hash of (sender, receiver),
 * like ECMP on a flow's addresses: deterministic, collisions included.
 *
 * The host resource is one capacity a node, shared by everything the node sends or receives
 * through any of its NICs: where the NIC is software (Soft-RoCE, siw), the node's CPU pays
 * for both directions.  Same-node messages do not cross it: they are copies on the memory
 * link, which already bounds them, and never reach the NIC stack.  Its links are numbered
 * after every other, so without host_bw the ids, and the runs, are what they were.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "simnet.h"

static uint32_t div_up(uint32_t a, uint32_t b)
{
	return (a + b - 1) / b;
}

int simnet_topo_init(struct simnet_topo_info *t, const struct simnet_fabric *f, uint32_t nranks,
		     char *err, size_t errlen)
{
	uint64_t links;
	uint32_t N;

	memset(t, 0, sizeof(*t));
	t->f = *f;
	t->nranks = nranks;
	if (!nranks || !f->ranks_per_node || !f->rails) {
		snprintf(err, errlen, "ranks, ranks per node and rails must be at least 1");
		return -1;
	}
	if (!(f->link_bw > 0) || !(f->mem_bw > 0) || f->lat < 0 || f->hop_lat < 0 ||
	    f->shm_lat < 0) {
		snprintf(err, errlen, "bandwidths must be positive, latencies not negative");
		return -1;
	}
	if (!(f->host_bw >= 0) || isinf(f->host_bw)) {
		snprintf(err, errlen, "host bandwidth must be positive (0: unlimited)");
		return -1;
	}
	if (!(f->shared_bw >= 0) || isinf(f->shared_bw)) {
		snprintf(err, errlen, "shared bandwidth must be positive (0: unlimited)");
		return -1;
	}
	N = div_up(nranks, f->ranks_per_node);
	t->nodes = N;
	links = 2ULL * f->rails * N + N;
	t->node_links_end = (uint32_t)links;
	switch (f->topo) {
	case SIMNET_STAR:
		break;
	case SIMNET_LEAFSPINE:
		if (!f->spines || !(f->oversub > 0)) {
			snprintf(err, errlen, "leaf-spine needs spines >= 1 and an oversubscription "
				 "ratio > 0");
			return -1;
		}
		if (f->hosts_per_leaf) {
			t->H = f->hosts_per_leaf;
			t->L = div_up(N, t->H);
			if (f->leaves && f->leaves < t->L) {
				snprintf(err, errlen, "%u leaves of %u hosts hold %u nodes, not %u",
					 f->leaves, t->H, f->leaves * t->H, N);
				return -1;
			}
			if (f->leaves)
				t->L = f->leaves;
		} else {
			t->L = f->leaves ? f->leaves : 1;
			t->H = div_up(N, t->L);
		}
		t->M = f->spines;
		links += 2ULL * f->rails * t->L * t->M;
		break;
	case SIMNET_FATTREE: {
		uint32_t k = f->k;

		if (k && (k % 2 || k < 2)) {
			snprintf(err, errlen, "fat-tree k must be even and at least 2");
			return -1;
		}
		if (!k)
			for (k = 2; (uint64_t)k * k * k / 4 < N; k += 2)
				;
		if ((uint64_t)k * k * k / 4 < N) {
			snprintf(err, errlen, "a %u-ary fat-tree holds %llu nodes, not %u", k,
				 (unsigned long long)k * k * k / 4, N);
			return -1;
		}
		t->K = k;
		links += 4ULL * f->rails * k * (k / 2) * (k / 2);
		break;
	}
	default:
		snprintf(err, errlen, "unknown topology");
		return -1;
	}
	t->host_links = (uint32_t)(links < 0x7fffffffULL ? links : 0);
	if (f->host_bw > 0)
		links += N;
	t->shared_link = (uint32_t)(links < 0x7fffffffULL ? links : 0);
	if (f->shared_bw > 0)
		links++;
	if (links > 0x7fffffffULL) {
		snprintf(err, errlen, "too many links (%llu)", (unsigned long long)links);
		return -1;
	}
	t->nlinks = (uint32_t)links;
	return 0;
}

static uint32_t hash2(uint32_t a, uint32_t b)
{
	uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ULL;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return (uint32_t)h;
}

int simnet_path(const struct simnet_topo_info *t, uint32_t a, uint32_t b, uint32_t *links,
		double *lat)
{
	const struct simnet_fabric *f = &t->f;
	uint32_t rpn = f->ranks_per_node, R = f->rails, N = t->nodes;
	uint32_t na = a / rpn, nb = b / rpn, j = (a % rpn) % R, n = 0, hops = 1, h;

	if (na == nb) {
		links[0] = 2 * R * N + na;
		*lat = f->shm_lat;
		return 1;
	}
	h = hash2(a, b);
	if (f->host_bw > 0)
		links[n++] = t->host_links + na;
	links[n++] = 2 * (j * N + na);
	if (f->topo == SIMNET_LEAFSPINE) {
		uint32_t la = na / t->H, lb = nb / t->H, s = h % t->M;
		uint32_t base = t->node_links_end;

		if (la != lb) {
			links[n++] = base + ((j * t->L + la) * t->M + s) * 2;
			links[n++] = base + ((j * t->L + lb) * t->M + s) * 2 + 1;
			hops = 3;
		}
	} else if (f->topo == SIMNET_FATTREE) {
		uint32_t k = t->K, hk = k / 2, per_pod = hk * hk;
		uint32_t pa = na / per_pod, pb = nb / per_pod;
		uint32_t ea = (na / hk) % hk, eb = (nb / hk) % hk;
		uint32_t ag = h % hk, c = (h / hk) % hk;
		uint32_t b1 = t->node_links_end, b2 = b1 + 2 * R * k * hk * hk;

		if (pa != pb || ea != eb) {
			links[n++] = b1 + (((j * k + pa) * hk + ea) * hk + ag) * 2;
			hops = 3;
			if (pa != pb) {
				links[n++] = b2 + (((j * k + pa) * hk + ag) * hk + c) * 2;
				links[n++] = b2 + (((j * k + pb) * hk + ag) * hk + c) * 2 + 1;
				hops = 5;
			}
			links[n++] = b1 + (((j * k + pb) * hk + eb) * hk + ag) * 2 + 1;
		}
	}
	links[n++] = 2 * (j * N + nb) + 1;
	if (f->host_bw > 0)
		links[n++] = t->host_links + nb;
	if (f->shared_bw > 0)
		links[n++] = t->shared_link;
	*lat = f->lat + (hops - 1) * f->hop_lat;
	return (int)n;
}

double simnet_link_cap(const struct simnet_topo_info *t, uint32_t link)
{
	const struct simnet_fabric *f = &t->f;

	if (link < 2 * f->rails * t->nodes)
		return f->link_bw;
	if (link < t->node_links_end)
		return f->mem_bw;
	if (f->shared_bw > 0 && link == t->shared_link)
		return f->shared_bw;
	if (f->host_bw > 0 && link >= t->host_links)
		return f->host_bw;
	if (f->topo == SIMNET_LEAFSPINE)	/* H ports down, M up: H*B / (M*uplink) = oversub */
		return t->H * f->link_bw / (t->M * f->oversub);
	return f->link_bw;
}

void simnet_link_name(const struct simnet_topo_info *t, uint32_t link, char *buf, size_t len)
{
	const struct simnet_fabric *f = &t->f;
	uint32_t R = f->rails, N = t->nodes, x;

	if (link < 2 * R * N) {
		x = link / 2;
		snprintf(buf, len, "node%u.nic%u.%s", x % N, x / N, link % 2 ? "down" : "up");
	} else if (link < t->node_links_end) {
		snprintf(buf, len, "node%u.mem", link - 2 * R * N);
	} else if (f->shared_bw > 0 && link == t->shared_link) {
		snprintf(buf, len, "shared");
	} else if (f->host_bw > 0 && link >= t->host_links) {
		snprintf(buf, len, "node%u.host", link - t->host_links);
	} else if (f->topo == SIMNET_LEAFSPINE) {
		x = (link - t->node_links_end) / 2;
		snprintf(buf, len, "rail%u.leaf%u%sspine%u", x / (t->L * t->M), x / t->M % t->L,
			 (link - t->node_links_end) % 2 ? "<-" : "->", x % t->M);
	} else {
		uint32_t k = t->K, hk = k / 2, e1 = 2 * R * k * hk * hk;

		const char *dir;

		x = link - t->node_links_end;
		dir = x % 2 ? "<-" : "->";
		if (x < e1) {
			x /= 2;
			snprintf(buf, len, "rail%u.pod%u.edge%u%sagg%u", x / (k * hk * hk),
				 x / (hk * hk) % k, x / hk % hk, dir, x % hk);
		} else {
			x = (x - e1) / 2;
			snprintf(buf, len, "rail%u.pod%u.agg%u%score%u", x / (k * hk * hk),
				 x / (hk * hk) % k, x / hk % hk, dir, x / hk % hk * hk + x % hk);
		}
	}
}
