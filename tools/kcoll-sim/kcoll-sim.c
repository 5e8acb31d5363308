// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll-sim: predict the time of a kcoll collective on a fabric from the module's own
 * schedules (core/) and a flow model (simnet.c).  See man/man1/kcoll-sim.1 and
 * Documentation/sim.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simnet.h"
#include "derive.h"
#include "../kcoll-perf/perf_core.h"
#include "json_writer.h"

static const char *prog = "kcoll-sim";

struct opts {
	struct simnet_cfg cfg;
	int coll, dtype, algo;
	size_t size, minb, maxb;
	double factor;
	bool sweep, json, quiet, choose, no_locality, check_table;
	const char *csv;
	const char *derive;	/* --derive-thresholds: the parameter set */
	uint32_t nranks;
	/* the module's selection thresholds (kcollctl config-set names); 0: the default */
	uint64_t small_bytes, medium_bytes;
	uint32_t tree_ranks;
	uint32_t max_ranks;	/* --max-ranks: the grid of --derive-thresholds up to; 0: all */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: %s [OPTION]...\n"
"Predict the time of one kcoll collective (or a sweep of sizes) on a modelled fabric,\n"
"running every rank's schedule from core/ through a flow model.\n"
"\n"
"The call:\n"
"  -c, --coll NAME         collective (allreduce, allgather, reduce_scatter, broadcast,\n"
"                          reduce, alltoall, scatter, gather, barrier, ...): allreduce\n"
"  -s, --size SIZE         bytes as kcoll-perf counts them (4096, 64K, 1M, 1G): 1M\n"
"  -d, --dtype NAME        datatype: fp32\n"
"  -n, --nranks N          ranks: 8\n"
"  -a, --algo NAME         auto (the module's own choice), ring, recdbl, rabenseifner,\n"
"                          binomial, dbtree, chain, pairwise, bruck, hier (hierarchical:\n"
"                          needs --nranks a multiple of --ranks-per-node): auto\n"
"      --chunk SIZE        pipelining chunk of ring, dbtree and chain: 256K\n"
"      --small-bytes SIZE  auto: the module's small_bytes (config-set): 16K\n"
"      --medium-bytes SIZE auto: the module's medium_bytes: 1M\n"
"      --tree-ranks N      auto: the module's tree_ranks: 16\n"
"      --no-locality       the schedules are not told --ranks-per-node (a module without\n"
"                          the ranks' locality): auto stays flat, hier runs with one rank\n"
"                          per node\n"
"\n"
"The fabric:\n"
"  -F, --fabric NAME       star, leaf-spine or fat-tree: star\n"
"  -N, --ranks-per-node N  ranks on one node: 1\n"
"  -R, --rails N           NICs per node, each on its own copy of the fabric: 1\n"
"      --leaves N          leaf-spine: leaves (default: from --hosts-per-leaf, else 1)\n"
"      --hosts-per-leaf N  leaf-spine: nodes under one leaf\n"
"      --spines N          leaf-spine: spines: 1\n"
"      --oversub X         leaf-spine: downlink / uplink capacity of a leaf: 1\n"
"  -k, --k K               fat-tree: k (even); default the smallest that holds the nodes\n"
"  -T, --transport NAME    presets: rdma, tcp, same-host (every rank on one node): rdma\n"
"      --bw GBPS           NIC and switch port bandwidth, GB/s (1e9 B/s): 12.5\n"
"      --mem-bw GBPS       a node's memory link (same-node messages), GB/s: 20\n"
"      --host-bw GBPS      a node's host, shared by all it sends and receives over its\n"
"                          NICs (a software NIC's CPU), GB/s: unlimited\n"
"      --shared-bw GBPS    all nodes together, what they move between nodes (VMs emulated\n"
"                          on one machine's cores), GB/s: unlimited\n"
"      --red-bw GBPS       reduction speed, GB/s of reduced bytes (0: free): 10\n"
"      --lat US            one message through one switch, microseconds\n"
"      --hop-lat US        each further switch on the path, microseconds\n"
"      --shm-lat US        a same-node message, microseconds\n"
"      --overhead US       CPU time per posted transfer, microseconds\n"
"      --eager SIZE        largest message sent without waiting for a CTS: 4064\n"
"\n"
"Output:\n"
"  -j, --json              one JSON object (a sweep: one line per size, kcoll-perf's keys)\n"
"      --choose            print the algorithm only (size, algorithm; a line per size with\n"
"                          -S), without running the model\n"
"  -S, --sweep             sweep sizes -b..-e by -f, print kcoll-perf's table\n"
"  -b, --minbytes SIZE     sweep start: 4\n"
"  -e, --maxbytes SIZE     sweep end: 1M\n"
"  -f, --stepfactor F      sweep factor: 2\n"
"      --csv FILE          sweep rows also as kcoll-perf's CSV\n"
"      --trace-rank R      rank whose stages make the breakdown: 0\n"
"      --sharing-limit N   flows re-solved together per change: 128\n"
"  -q, --quiet             no breakdown\n"
"  -h, --help              this help\n"
"\n"
"Deriving the module's selection table (core/kcoll_sched_table.h):\n"
"      --derive-thresholds SET\n"
"                          run the grid of Documentation/scale.rst on the parameters SET\n"
"                          (datacentre or rig; --bw, --lat, --overhead, --red-bw, --mem-bw\n"
"                          given after it change them) and print the table as C; a\n"
"                          comparison with the threshold rules goes to stderr unless -q\n"
"      --check-table       with --derive-thresholds SET: instead, the module's choice (the\n"
"                          table; the rules with --small-bytes) against the fastest, on the\n"
"                          grid and between its points; exit 3 beyond 1.05 or 1.25 times;\n"
"                          -F and its options run that grid on another fabric\n"
"      --max-ranks N       with --derive-thresholds: the grid's rank counts up to N only\n"
"                          (up to 64: the table's rows that hold from 64 ranks down)\n"
"\n"
"Exit status: 0 done, 1 the model failed, 2 bad usage, 3 --check-table's bound exceeded.\n", prog);
}

enum {
	O_CHUNK = 256, O_LEAVES, O_HPL, O_SPINES, O_OVERSUB, O_BW, O_MEMBW, O_REDBW, O_LAT,
	O_HOPLAT, O_SHMLAT, O_OVH, O_EAGER, O_CSV, O_TRACE, O_SHARE, O_SMALL, O_MEDIUM,
	O_TREE, O_CHOOSE, O_NOLOC, O_DERIVE, O_CHECKTAB, O_MAXRANKS, O_HOSTBW,
	O_SHAREDBW,
};

/* a long option that takes an argument, and one that does not */
#define OPT_ARG(name, val)	{ name, required_argument, NULL, val }
#define OPT_FLAG(name, val)	{ name, no_argument, NULL, val }

/* grouped as --help lists them */
static const struct option long_opts[] = {
	OPT_ARG("coll", 'c'), OPT_ARG("size", 's'), OPT_ARG("dtype", 'd'),
	OPT_ARG("nranks", 'n'), OPT_ARG("algo", 'a'), OPT_ARG("chunk", O_CHUNK),
	OPT_ARG("small-bytes", O_SMALL), OPT_ARG("medium-bytes", O_MEDIUM),
	OPT_ARG("tree-ranks", O_TREE), OPT_FLAG("no-locality", O_NOLOC),

	OPT_ARG("fabric", 'F'), OPT_ARG("ranks-per-node", 'N'), OPT_ARG("rails", 'R'),
	OPT_ARG("leaves", O_LEAVES), OPT_ARG("hosts-per-leaf", O_HPL),
	OPT_ARG("spines", O_SPINES), OPT_ARG("oversub", O_OVERSUB), OPT_ARG("k", 'k'),
	OPT_ARG("transport", 'T'), OPT_ARG("bw", O_BW), OPT_ARG("mem-bw", O_MEMBW),
	OPT_ARG("host-bw", O_HOSTBW), OPT_ARG("red-bw", O_REDBW), OPT_ARG("lat", O_LAT),
	OPT_ARG("hop-lat", O_HOPLAT), OPT_ARG("shared-bw", O_SHAREDBW),
	OPT_ARG("shm-lat", O_SHMLAT), OPT_ARG("overhead", O_OVH), OPT_ARG("eager", O_EAGER),

	OPT_FLAG("json", 'j'), OPT_FLAG("choose", O_CHOOSE), OPT_FLAG("sweep", 'S'),
	OPT_ARG("minbytes", 'b'), OPT_ARG("maxbytes", 'e'), OPT_ARG("stepfactor", 'f'),
	OPT_ARG("csv", O_CSV), OPT_ARG("trace-rank", O_TRACE),
	OPT_ARG("sharing-limit", O_SHARE), OPT_FLAG("quiet", 'q'), OPT_FLAG("help", 'h'),

	OPT_ARG("derive-thresholds", O_DERIVE), OPT_FLAG("check-table", O_CHECKTAB),
	OPT_ARG("max-ranks", O_MAXRANKS),
	{ NULL, 0, NULL, 0 }
};

static int bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, " (see %s --help)\n", prog);
	return 2;
}

static int num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int unum(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	double v;

	if (num(s, lo, hi, &v) || v != floor(v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	struct simnet_cfg *c = &o->cfg;
	bool rpn_set = false, same_host = false;
	const char *name;
	int opt;
	double v;

	memset(o, 0, sizeof(*o));
	simnet_cfg_default(c);
	o->coll = KCOLL_ALLREDUCE;
	o->dtype = KCOLL_FP32;
	o->algo = KCOLL_ALG_AUTO;
	o->size = 1 << 20;
	o->minb = 4;
	o->maxb = 1 << 20;
	o->factor = 2;
	o->nranks = 8;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:s:d:n:a:F:N:R:k:T:jSb:e:f:qh", long_opts,
				  NULL)) != -1) {
		const char *a = optarg;

		switch (opt) {
		case 'c':
			o->coll = perf_coll_from_name(a);
			if (o->coll < 0)
				return bad("unknown collective '%s'%s", a, "");
			break;
		case 'd':
			o->dtype = perf_dtype_from_name(a);
			if (o->dtype < 0)
				return bad("unknown datatype '%s'%s", a, "");
			break;
		case 'a':
			o->algo = perf_algo_from_name(a);
			if (o->algo < 0)
				return bad("unknown algorithm '%s'%s", a, "");
			break;
		case 's':
		case 'b':
		case 'e':
		case O_CHUNK:
		case O_SMALL:
		case O_MEDIUM:
		case O_EAGER: {
			size_t z;

			if (perf_parse_size(a, &z))
				return bad("bad size '%s'%s (digits, then K, M or G)", a, "");
			if (opt == 's')
				o->size = z;
			else if (opt == 'b')
				o->minb = z;
			else if (opt == 'e')
				o->maxb = z;
			else if (opt == O_CHUNK)
				c->chunk_bytes = z;
			else if (opt == O_SMALL)
				o->small_bytes = z;
			else if (opt == O_MEDIUM)
				o->medium_bytes = z;
			else
				c->eager_max = z;
			break;
		}
		case O_TREE:
			if (unum(a, 2, 1 << 20, &o->tree_ranks))
				return bad("--tree-ranks: '%s' is not a whole number >= 2%s", a, "");
			break;
		case O_NOLOC:
			o->no_locality = true;
			break;
		case O_CHOOSE:
			o->choose = true;
			break;
		case O_CHECKTAB:
			o->check_table = true;
			break;
		case O_MAXRANKS:
			if (unum(a, 2, 1 << 20, &o->max_ranks))
				return bad("--max-ranks: '%s' is not a whole number >= 2%s", a, "");
			break;
		case O_DERIVE:
			if (derive_preset(c, a))
				return bad("unknown parameter set '%s'%s (datacentre, rig)", a, "");
			o->derive = a;
			break;
		case 'n':
			if (unum(a, 1, 1 << 20, &o->nranks))
				return bad("--nranks: '%s' is not a whole number from 1 to "
					   "1048576%s", a, "");
			break;
		case 'F':
			if (!strcmp(a, "star"))
				c->fab.topo = SIMNET_STAR;
			else if (!strcmp(a, "leaf-spine"))
				c->fab.topo = SIMNET_LEAFSPINE;
			else if (!strcmp(a, "fat-tree"))
				c->fab.topo = SIMNET_FATTREE;
			else
				return bad("unknown fabric '%s'%s (star, leaf-spine, fat-tree)", a,
					   "");
			break;
		case 'N':
			if (unum(a, 1, 1 << 20, &c->fab.ranks_per_node))
				return bad("--ranks-per-node: '%s' is not a whole number >= 1%s", a,
					   "");
			rpn_set = true;
			break;
		case 'R':
			if (unum(a, 1, 64, &c->fab.rails))
				return bad("--rails: '%s' is not a whole number from 1 to 64%s", a, "");
			break;
		case O_LEAVES:
			if (unum(a, 1, 1 << 20, &c->fab.leaves))
				return bad("--leaves: '%s' is not a whole number >= 1%s", a, "");
			break;
		case O_HPL:
			if (unum(a, 1, 1 << 20, &c->fab.hosts_per_leaf))
				return bad("--hosts-per-leaf: '%s' is not a whole number >= 1%s", a,
					   "");
			break;
		case O_SPINES:
			if (unum(a, 1, 1 << 16, &c->fab.spines))
				return bad("--spines: '%s' is not a whole number from 1 to 65536%s",
					   a, "");
			break;
		case 'k':
			if (unum(a, 2, 1024, &c->fab.k) || c->fab.k % 2)
				return bad("--k: '%s' is not an even number from 2 to 1024%s", a, "");
			break;
		case 'T':
			if (simnet_transport(c, a))
				return bad("unknown transport '%s'%s (rdma, tcp, same-host)", a, "");
			same_host = !strcmp(a, "same-host");
			break;
		case O_HOSTBW:	/* no 0 for "unlimited": leaving it out says that */
			if (num(a, 1e-9, 1e9, &v))
				return bad("--host-bw: '%s' is not a positive number of GB/s%s", a, "");
			c->fab.host_bw = v * 1e9;
			break;
		case O_SHAREDBW:
			if (num(a, 1e-9, 1e9, &v))
				return bad("--shared-bw: '%s' is not a positive number%s", a,
					   " of GB/s");
			c->fab.shared_bw = v * 1e9;
			break;
		case O_OVERSUB:
		case O_BW:
		case O_MEMBW:
		case O_REDBW:
		case O_LAT:
		case O_HOPLAT:
		case O_SHMLAT:
		case O_OVH: {
			bool rate = opt == O_BW || opt == O_MEMBW || opt == O_OVERSUB;

			if (num(a, rate ? 1e-9 : 0, 1e9, &v))
				return bad("'%s' is not a %s number", a, rate ? "positive" :
					   "non-negative");
			if (opt == O_OVERSUB)
				c->fab.oversub = v;
			else if (opt == O_BW)
				c->fab.link_bw = v * 1e9;
			else if (opt == O_MEMBW)
				c->fab.mem_bw = v * 1e9;
			else if (opt == O_REDBW)
				c->red_bw = v * 1e9;
			else if (opt == O_LAT)
				c->fab.lat = v * 1e-6;
			else if (opt == O_HOPLAT)
				c->fab.hop_lat = v * 1e-6;
			else if (opt == O_SHMLAT)
				c->fab.shm_lat = v * 1e-6;
			else
				c->overhead = v * 1e-6;
			break;
		}
		case 'f':
			if (num(a, 1.0001, 1024, &o->factor))
				return bad("--stepfactor: '%s' is not a number > 1 and <= 1024%s", a,
					   "");
			break;
		case 'j':
			o->json = true;
			break;
		case 'S':
			o->sweep = true;
			break;
		case O_CSV:
			o->csv = a;
			break;
		case O_TRACE:
			if (unum(a, 0, 1 << 20, (uint32_t *)&c->trace_rank))
				return bad("--trace-rank: '%s' is not a rank%s", a, "");
			break;
		case O_SHARE:
			if (unum(a, 1, 1 << 24, &c->sharing_limit))
				return bad("--sharing-limit: '%s' is not a whole number >= 1%s", a, "");
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case ':':
			name = argv[optind - 1];
			return bad("option '%s' needs a value%s", name, "");
		default:
			name = argv[optind - 1];
			return bad("unknown option '%s'%s", name, "");
		}
	}
	if (optind < argc)
		return bad("unexpected argument '%s'%s", argv[optind], "");
	if (o->check_table && !o->derive)
		return bad("--check-table needs --derive-thresholds SET%s%s", "", "");
	/* The table comes from one switch; checking it on another fabric tests how it holds. */
	if (o->derive && ((c->fab.topo != SIMNET_STAR && !o->check_table) || c->fab.rails != 1 ||
			  rpn_set || same_host))
		return bad("--derive-thresholds models one switch, one rail, its own ranks a node%s%s",
			   " (--check-table takes --fabric and its options)", "");
	if (same_host && !rpn_set)
		c->fab.ranks_per_node = o->nranks;
	if (o->algo == KCOLL_ALG_HIER && !o->no_locality && o->nranks % c->fab.ranks_per_node)
		return bad("hier needs --nranks a multiple of --ranks-per-node%s%s", "", "");
	if ((uint32_t)c->trace_rank >= o->nranks)
		return bad("--trace-rank: there are only %s ranks%s", "the", " --nranks");
	if (o->minb > o->maxb)
		return bad("--minbytes is larger than --maxbytes%s%s", "", "");
	{
		char err[200];

		if (simnet_fabric_check(&c->fab, o->nranks, err, sizeof(err)))
			return bad("%s%s", err, "");
	}
	if (!perf_op_valid(o->dtype, KCOLL_SUM) && perf_coll_is_reduction(o->coll))
		return bad("%s cannot be reduced%s", perf_dtype_name(o->dtype), "");
	return 0;
}

struct row {
	size_t bytes, count;
	int algo;
	struct simnet_result res;
	double wall;
};

/* One prediction of kcoll-perf's row for @bytes. */
static int run_row(struct opts *o, size_t bytes, struct row *w)
{
	struct simnet_cfg c = o->cfg;
	struct kcoll_sched_tuning tun;
	uint64_t *arr = NULL, payload;
	struct timespec t0, t1;
	int algo, ret;
	uint32_t i, p = o->nranks;

	memset(w, 0, sizeof(*w));
	w->count = perf_count(o->coll, bytes, o->dtype, (int)p, &w->bytes);
	c.args.coll = (enum kcoll_collective)o->coll;
	c.args.nranks = p;
	c.args.root = 0;
	c.args.count = w->count;
	c.args.elem_size = (uint32_t)perf_dtype_size(o->dtype);
	/* the schedules know the node shape unless told not to (the module does not yet) */
	if (!o->no_locality && c.fab.ranks_per_node > 1 && p % c.fab.ranks_per_node == 0)
		c.args.local_size = c.fab.ranks_per_node;
	payload = (uint64_t)w->count * c.args.elem_size;
	if (o->coll == KCOLL_ALLGATHERV || o->coll == KCOLL_REDUCE_SCATTERV ||
	    o->coll == KCOLL_ALLTOALLV) {
		arr = calloc(2 * (size_t)p, sizeof(*arr));
		if (!arr) {
			fprintf(stderr, "%s: out of memory\n", prog);
			return -1;
		}
		for (i = 0; i < p; i++) {
			arr[i] = w->count;
			arr[p + i] = (uint64_t)i * w->count;
		}
		c.args.counts = c.args.send_counts = arr;
		c.args.displs = c.args.send_displs = arr + p;
		payload *= p;
	}
	kcoll_sched_tuning_default(&tun);
	tun.chunk_bytes = c.chunk_bytes;
	if (o->small_bytes)
		tun.small_bytes = o->small_bytes;
	if (o->medium_bytes)
		tun.medium_bytes = o->medium_bytes;
	if (o->tree_ranks)
		tun.tree_ranks = o->tree_ranks;
	tun.local_size = c.args.local_size;
	/* the kernel's own choice, from the same function (kmod/kcoll_coll.c) */
	algo = kcoll_sched_choose(c.args.coll, p, payload, false, (enum kcoll_algorithm)o->algo, &tun);
	if (algo < 0) {
		fprintf(stderr, "%s: %s does not implement %s\n", prog, perf_algo_name(o->algo),
			perf_coll_name(o->coll));
		free(arr);
		return -2;
	}
	w->algo = algo;
	if (o->choose) {
		free(arr);
		return 0;
	}
	c.algo = (enum kcoll_algorithm)algo;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = simnet_run(&c, &w->res);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	w->wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	free(arr);
	if (ret) {
		fprintf(stderr, "%s: %s\n", prog, w->res.err);
		return -1;
	}
	return 0;
}

static const char *topo_name(enum simnet_topo t)
{
	return t == SIMNET_STAR ? "star" : t == SIMNET_LEAFSPINE ? "leaf-spine" : "fat-tree";
}

static void bws(const struct opts *o, const struct row *w, double *algbw, double *busbw)
{
	double t = w->res.time;

	*algbw = t > 0 ? w->bytes / t / 1e9 : 0;
	*busbw = *algbw * perf_busbw_factor(o->coll, (int)o->nranks);
}

static void print_one(const struct opts *o, const struct row *w)
{
	const struct simnet_cfg *c = &o->cfg;
	const struct simnet_result *r = &w->res;
	double algbw, busbw;
	uint32_t i;

	bws(o, w, &algbw, &busbw);
	if (o->json) {
		struct kcoll_jw jw;

		kcoll_jw_init(&jw, stdout, true);
		kcoll_jw_obj_open(&jw);
		kcoll_jw_kv_str(&jw, "coll", perf_coll_name(o->coll));
		kcoll_jw_kv_str(&jw, "dtype", perf_dtype_name(o->dtype));
		kcoll_jw_kv_uint(&jw, "nranks", o->nranks);
		kcoll_jw_kv_uint(&jw, "size", w->bytes);
		kcoll_jw_kv_uint(&jw, "count", w->count);
		kcoll_jw_kv_str(&jw, "algo", perf_algo_name(w->algo));
		kcoll_jw_kv_bool(&jw, "auto", o->algo == KCOLL_ALG_AUTO);
		kcoll_jw_key(&jw, "fabric");
		kcoll_jw_obj_open(&jw);
		kcoll_jw_kv_str(&jw, "topology", topo_name(c->fab.topo));
		kcoll_jw_kv_uint(&jw, "ranks_per_node", c->fab.ranks_per_node);
		kcoll_jw_kv_uint(&jw, "rails", c->fab.rails);
		kcoll_jw_kv_uint(&jw, "links", r->nlinks);
#define JNUM(key, v) do { kcoll_jw_key(&jw, key); kcoll_jw_double(&jw, (v)); } while (0)
		JNUM("link_gbs", c->fab.link_bw / 1e9);
		if (c->fab.host_bw > 0)
			JNUM("host_gbs", c->fab.host_bw / 1e9);
		if (c->fab.shared_bw > 0)
			JNUM("shared_gbs", c->fab.shared_bw / 1e9);
		JNUM("lat_us", c->fab.lat * 1e6);
		JNUM("overhead_us", c->overhead * 1e6);
		JNUM("red_gbs", c->red_bw / 1e9);
		kcoll_jw_obj_close(&jw);
		JNUM("time_us", r->time * 1e6);
		JNUM("first_end_us", r->first_end * 1e6);
		JNUM("algbw_gbs", algbw);
		JNUM("busbw_gbs", busbw);
		kcoll_jw_key(&jw, "busiest_link");
		kcoll_jw_obj_open(&jw);
		kcoll_jw_kv_str(&jw, "name", r->busiest);
		JNUM("bytes", r->busiest_bytes);
		JNUM("utilisation", r->busiest_util);
		kcoll_jw_obj_close(&jw);
		kcoll_jw_kv_uint(&jw, "messages", r->messages);
		kcoll_jw_kv_uint(&jw, "events", r->events);
		kcoll_jw_kv_uint(&jw, "schedule_steps", r->sched_steps);
		kcoll_jw_kv_uint(&jw, "unique_schedules", r->unique_scheds);
		JNUM("wall_s", w->wall);
		kcoll_jw_kv_uint(&jw, "trace_rank", r->trace_rank);
		JNUM("reduce_us", r->t_reduce * 1e6);
		JNUM("local_us", r->t_local * 1e6);
		JNUM("overhead_total_us", r->t_overhead * 1e6);
		kcoll_jw_key(&jw, "phases");
		kcoll_jw_arr_open(&jw);
		for (i = 0; i < r->nphases; i++) {
			const struct simnet_phase *ph = &r->phases[i];

			kcoll_jw_obj_open(&jw);
			kcoll_jw_kv_uint(&jw, "first_stage", ph->first_stage);
			kcoll_jw_kv_uint(&jw, "stages", ph->nstages);
			kcoll_jw_kv_uint(&jw, "sends", ph->sends);
			kcoll_jw_kv_uint(&jw, "recvs", ph->recvs);
			kcoll_jw_kv_uint(&jw, "recv_reduces", ph->recv_reduces);
			kcoll_jw_kv_uint(&jw, "locals", ph->locals);
			kcoll_jw_kv_uint(&jw, "bytes_per_stage", ph->bytes);
			JNUM("start_us", ph->start * 1e6);
			JNUM("time_us", ph->time * 1e6);
			kcoll_jw_obj_close(&jw);
		}
		kcoll_jw_arr_close(&jw);
#undef JNUM
		kcoll_jw_obj_close(&jw);
		kcoll_jw_finish(&jw);
		return;
	}
	printf("%s %s, %zu B (%zu x %s), %u ranks, %u per node, algorithm %s%s\n",
	       "kcoll-sim:", perf_coll_name(o->coll), w->bytes, w->count,
	       perf_dtype_name(o->dtype), o->nranks, c->fab.ranks_per_node,
	       perf_algo_name(w->algo), o->algo == KCOLL_ALG_AUTO ? " (auto)" : "");
	printf("fabric: %s, %u rail(s), %u links, %.3g GB/s, latency %.3g us, overhead %.3g us",
	       topo_name(c->fab.topo), c->fab.rails, r->nlinks, c->fab.link_bw / 1e9,
	       c->fab.lat * 1e6, c->overhead * 1e6);
	if (c->fab.host_bw > 0)
		printf(", hosts %.3g GB/s", c->fab.host_bw / 1e9);
	if (c->fab.shared_bw > 0)
		printf(", shared %.3g GB/s", c->fab.shared_bw / 1e9);
	printf("\n");
	printf("time      %12.3f us  (first rank done at %.3f us)\n", r->time * 1e6,
	       r->first_end * 1e6);
	printf("algbw     %12.4f GB/s\nbusbw     %12.4f GB/s\n", algbw, busbw);
	printf("busiest   %s: %.0f B, %.1f %% busy\n", r->busiest, r->busiest_bytes,
	       100 * r->busiest_util);
	printf("model     %llu messages, %llu events, %llu schedule steps (%u distinct), "
	       "%.2f s\n", (unsigned long long)r->messages, (unsigned long long)r->events,
	       (unsigned long long)r->sched_steps, r->unique_scheds, w->wall);
	if (o->quiet)
		return;
	printf("rank %u: cpu %.3f us reducing, %.3f us local copies/reductions, %.3f us "
	       "posting\n", r->trace_rank, r->t_reduce * 1e6, r->t_local * 1e6,
	       r->t_overhead * 1e6);
	printf("%8s %8s %5s %5s %5s %5s %12s %12s %12s\n", "stage", "stages", "send", "recv",
	       "rred", "local", "B/stage", "start(us)", "time(us)");
	for (i = 0; i < r->nphases && i < 40; i++) {
		const struct simnet_phase *ph = &r->phases[i];

		printf("%8u %8u %5u %5u %5u %5u %12llu %12.3f %12.3f\n", ph->first_stage,
		       ph->nstages, ph->sends, ph->recvs, ph->recv_reduces, ph->locals,
		       (unsigned long long)ph->bytes, ph->start * 1e6, ph->time * 1e6);
	}
	if (r->nphases > 40)
		printf("... %u more phases (-j lists them all)\n", r->nphases - 40);
}

/* kcoll-perf's row keys and CSV columns (tools/kcoll-perf/kcoll-perf.c), "system": "kcoll-sim". */
static void sweep_row(const struct opts *o, const struct row *w, FILE *csv)
{
	double algbw, busbw, us = w->res.time * 1e6;
	int root = perf_coll_has_root(o->coll) ? 0 : -1;
	const char *op = perf_coll_is_reduction(o->coll) ? "sum" : "none";

	bws(o, w, &algbw, &busbw);
	if (o->json)
		printf("{\"system\": \"kcoll-sim\", \"coll\": \"%s\", \"nranks\": %u, "
		       "\"dtype\": \"%s\", \"op\": \"%s\", \"root\": %d, \"place\": \"out\", "
		       "\"mem\": \"user\", \"mode\": \"blocking\", \"agg\": 1, \"algo\": \"%s\", "
		       "\"size\": %zu, \"count\": %zu, \"warmup\": 0, \"iters\": 1, "
		       "\"time_us\": %.3f, \"median_us\": %.3f, \"algbw_gbs\": %.9g, "
		       "\"busbw_gbs\": %.9g, \"wrong\": 0, \"checked\": false, "
		       "\"cpu_usr_us\": 0, \"cpu_sys_us\": 0, \"node_cpu_us\": 0, "
		       "\"model_algo\": \"%s\", \"busiest_util\": %.6g}\n",
		       perf_coll_name(o->coll), o->nranks, perf_dtype_name(o->dtype), op, root,
		       perf_algo_name(o->algo), w->bytes, w->count, us, us, algbw, busbw,
		       perf_algo_name(w->algo), w->res.busiest_util);
	else
		printf("%12zu %10zu %6s %6s %5d %9.2f %8.4f %8.4f %7s %12s\n", w->bytes, w->count,
		       perf_dtype_name(o->dtype), op, root, us, algbw, busbw, "-",
		       perf_algo_name(w->algo));
	if (csv)
		fprintf(csv, "kcoll-sim,%s,%u,%s,%s,%d,out,user,blocking,1,%s,%zu,%zu,0,1,%.3f,"
			"%.3f,%.9g,%.9g,0,0,0,0\n", perf_coll_name(o->coll), o->nranks,
			perf_dtype_name(o->dtype), op, root, perf_algo_name(o->algo), w->bytes,
			w->count, us, us, algbw, busbw);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct row w;
	FILE *csv = NULL;
	int ret;
	size_t b;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : 2;
	if (o.derive && o.check_table) {
		ret = derive_check(&o.cfg, o.small_bytes, o.max_ranks, stdout);
		return ret < 0 ? 1 : ret ? 3 : 0;
	}
	if (o.derive)
		return derive_thresholds(&o.cfg, o.derive, o.max_ranks, stdout,
					 o.quiet ? NULL : stderr) ? 1 : 0;
	if (!o.sweep) {
		ret = run_row(&o, o.size, &w);
		if (ret)
			return ret == -2 ? 2 : 1;
		if (o.choose) {
			printf("%zu %s\n", w.bytes, perf_algo_name(w.algo));
			return 0;
		}
		print_one(&o, &w);
		simnet_result_free(&w.res);
		return 0;
	}
	if (o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv) {
			fprintf(stderr, "%s: %s: %s\n", prog, o.csv, strerror(errno));
			return 2;
		}
		fprintf(csv, "system,coll,nranks,dtype,op,root,place,mem,mode,agg,algo,size,"
			"count,warmup,iters,time_us,median_us,algbw_gbs,busbw_gbs,wrong,"
			"cpu_usr_us,cpu_sys_us,node_cpu_us\n");
	}
	if (!o.json && !o.choose) {
		printf("# kcoll-sim: %s, %u ranks, %s fabric, sizes %zu..%zu B (factor %g)\n",
		       perf_coll_name(o.coll), o.nranks, topo_name(o.cfg.fab.topo), o.minb, o.maxb,
		       o.factor);
		printf("#%11s %10s %6s %6s %5s %9s %8s %8s %7s %12s\n", "size", "count", "type",
		       "redop", "root", "time", "algbw", "busbw", "#wrong", "algorithm");
		printf("#%11s %10s %6s %6s %5s %9s %8s %8s %7s %12s\n", "(B)", "(elements)", "",
		       "", "", "(us)", "(GB/s)", "(GB/s)", "", "");
	}
	ret = 0;
	for (b = o.minb; b <= o.maxb; ) {
		size_t next;

		ret = run_row(&o, b, &w);
		if (ret) {
			ret = ret == -2 ? 2 : 1;
			break;
		}
		if (o.choose)
			printf("%zu %s\n", w.bytes, perf_algo_name(w.algo));
		else
			sweep_row(&o, &w, csv);
		fflush(stdout);
		simnet_result_free(&w.res);
		next = (size_t)(b * o.factor);
		if (next <= b)
			next = b + 1;
		b = next;
	}
	if (csv && fclose(csv)) {
		fprintf(stderr, "%s: %s: %s\n", prog, o.csv, strerror(errno));
		ret = 1;
	}
	return ret;
}
