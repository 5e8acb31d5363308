/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tools/kcoll-sim/simnet.h - a timed, data-less model of kcoll collectives on a fabric.
 *
 * Every rank's schedule is the module's own (core/kcoll_sched.c, built with the same
 * kcoll_sched_build() the kernel calls); no payload is allocated.  Ranks execute their
 * schedules as kmod/kcoll_coll.c does: a stage starts when every step of the previous one is
 * done; its local steps run first, in order, on the rank's CPU, then its transfers are posted
 * (each costing the per-message overhead); a received chunk to reduce is reduced on the CPU
 * when it arrives, one at a time.
 *
 * Messages follow the wire protocol (Documentation/wire.rst): up to eager_max bytes go at
 * once (the send completes when the receiver's CTS and the data's acknowledgement are back),
 * larger ones wait for the receiver's CTS (one latency after the receive is posted), then
 * move as a flow.  A flow crosses the links of its path (NIC up, switch links, NIC down; a
 * node's memory "link" between ranks of one node; with host_bw, the sending and the
 * receiving node's host resource around the NICs) and gets a max-min fair share of every
 * link, recomputed when flows start or end (only over the flows connected to the links that
 * changed, at most sharing_limit flows; see Documentation/sim.rst).  The data is delivered one
 * path latency after its last byte left.
 */
#ifndef _KCOLL_SIMNET_H
#define _KCOLL_SIMNET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../core/kcoll_sched.h"

enum simnet_topo { SIMNET_STAR, SIMNET_LEAFSPINE, SIMNET_FATTREE };

struct simnet_fabric {
	enum simnet_topo topo;
	uint32_t ranks_per_node;	/* >= 1 */
	uint32_t rails;			/* NICs per node, >= 1; each rail is its own fabric */
	double link_bw;			/* bytes/s of a NIC and of every switch port */
	double mem_bw;			/* bytes/s of a node's memory link (same-node messages) */
	double host_bw;			/* bytes/s a node's host moves through its NICs, sent
					 * plus received (a software NIC's CPU); 0: unlimited */
	double shared_bw;		/* bytes/s all nodes together move between nodes (VMs
					 * emulated on one machine's cores); 0: unlimited */
	double lat;			/* s, one message end to end through one switch */
	double hop_lat;			/* s, each further switch on the path */
	double shm_lat;			/* s, a same-node message */
	/* leaf-spine */
	uint32_t leaves, spines;	/* leaves 0: enough for hosts_per_leaf */
	uint32_t hosts_per_leaf;	/* 0: nodes / leaves, rounded up */
	double oversub;			/* downlink / uplink capacity of a leaf, >= 1 usually */
	/* fat-tree */
	uint32_t k;			/* even, >= 2; 0: the smallest that holds the nodes */
};

struct simnet_cfg {
	struct simnet_fabric fab;
	struct kcoll_coll_args args;	/* rank ignored */
	enum kcoll_algorithm algo;		/* not AUTO (use kcoll_sched_choose() first) */
	uint64_t chunk_bytes;
	double overhead;		/* s of CPU per posted transfer (LogP o) */
	double red_bw;			/* bytes/s of a reduction; 0: free */
	double copy_bw;			/* bytes/s of a local COPY; 0: mem_bw */
	uint64_t eager_max;		/* messages up to this size go without waiting for a CTS */
	uint32_t sharing_limit;		/* flows re-solved per change (0: 128) */
	int32_t trace_rank;		/* rank whose stages are summarised (-1: the last to end) */
	uint64_t mem_limit;		/* bytes for schedules; 0: 4 GiB */
	/* tests: schedules of their own instead of kcoll_sched_build()'s (same contract) */
	int (*build)(void *ctx, const struct kcoll_coll_args *a, struct kcoll_step *steps,
		     uint32_t max_steps, struct kcoll_sched_info *info);
	void *ctx;
};

/* A run of consecutive stages of the traced rank with the same shape. */
struct simnet_phase {
	uint32_t first_stage, nstages;
	uint32_t sends, recvs, recv_reduces, locals;	/* per stage */
	uint64_t bytes;					/* per stage, sent + received */
	double start, time;				/* s */
};

struct simnet_result {
	double time;			/* s: the last rank's end */
	double first_end;		/* s: the first rank's end */
	uint64_t messages, bytes, flows_resolved, events;
	uint32_t unique_scheds;		/* distinct schedules (ranks with equal relative ones share) */
	uint64_t sched_steps;		/* steps of all ranks */
	/* the busiest link (or host resource): most bytes for its capacity */
	char busiest[64];
	double busiest_bytes, busiest_util;	/* util = bytes / (capacity * time) */
	uint32_t nlinks;
	/* the traced rank */
	uint32_t trace_rank;
	double t_reduce, t_local, t_overhead;	/* CPU time of the traced rank */
	struct simnet_phase *phases;
	uint32_t nphases;
	char err[256];
};

/* Fill the defaults: RDMA-like, 100 Gb/s, star, one rank per node. */
void simnet_cfg_default(struct simnet_cfg *c);
/* Transport presets: "rdma", "tcp", "same-host".  -1 if unknown. */
int simnet_transport(struct simnet_cfg *c, const char *name);

/* Check the fabric and size it for nranks; 0 or -1 with a message in err. */
int simnet_fabric_check(struct simnet_fabric *f, uint32_t nranks, char *err, size_t errlen);

/* Run the model: 0, or -1 with res->err set.  Free res with simnet_result_free(). */
int simnet_run(const struct simnet_cfg *cfg, struct simnet_result *res);
void simnet_result_free(struct simnet_result *res);

/* Fabric paths (fabric.c): the links a message from rank a to rank b crosses. */
#define SIMNET_MAX_HOPS	9	/* fat-tree's 6, the two hosts, the shared one */
struct simnet_topo_info {
	struct simnet_fabric f;
	uint32_t nranks, nodes;
	uint32_t nlinks;
	uint32_t node_links_end;	/* links below: NIC up/down, memory */
	uint32_t host_links;		/* from here: one host resource a node (host_bw) */
	uint32_t shared_link;		/* after them, with shared_bw: the cluster's one */
	uint32_t L, H, M, K;		/* leaves, hosts per leaf, spines, fat-tree k */
};
int simnet_topo_init(struct simnet_topo_info *t, const struct simnet_fabric *f, uint32_t nranks,
		     char *err, size_t errlen);
/* Path from a to b (a != b): link ids, count returned; *lat the message latency. */
int simnet_path(const struct simnet_topo_info *t, uint32_t a, uint32_t b, uint32_t *links,
		double *lat);
double simnet_link_cap(const struct simnet_topo_info *t, uint32_t link);
void simnet_link_name(const struct simnet_topo_info *t, uint32_t link, char *buf, size_t len);

#endif /* _KCOLL_SIMNET_H */
