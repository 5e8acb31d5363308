// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll-perf's options: the defaults, the help text and the command line parser (pure, as
 * perf_core.c; tested by selftests/host/test_perf.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "perf_core.h"

/* ---- options ------------------------------------------------------------------------- */

void perf_opts_default(struct perf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->colls = 1U << KCOLL_ALLREDUCE;
	o->dtypes = 1U << KCOLL_FP32;
	o->ops = 1U << KCOLL_SUM;
	o->minbytes = 4;
	o->maxbytes = 16 << 20;
	o->stepfactor = 2;
	o->warmup = 5;
	o->iters = 20;
	o->check = true;
	o->place = PERF_PLACE_OUT | PERF_PLACE_IN;
	o->mem = PERF_MEM_USER;
	o->mode = PERF_MODE_BLOCKING;
	o->agg = 1;
	o->algo = KCOLL_ALG_AUTO;
	o->timeout_ms = 120000;
	o->progress = -1;
}

void perf_usage(FILE *f, const char *prog)
{
	fprintf(f,
"usage: %s [OPTION]...\n"
"Time kcoll collectives over a sweep of sizes (nccl-tests style) and check their results.\n"
"Every rank runs it; rank, size and bootstrap root come from the environment\n"
"(KCOLL_RANK/KCOLL_NRANKS/KCOLL_BOOTSTRAP_ADDR, torchrun, Slurm or Open MPI; see libkcoll(7)).\n"
"\n"
"  -C, --coll LIST        collectives, comma-separated, or all: broadcast scatter gather\n"
"                         reduce allreduce allgather reduce_scatter alltoall barrier\n"
"                         allgatherv alltoallv reduce_scatterv  (default allreduce)\n"
"  -b, --minbytes SIZE    smallest size (default 4); SIZE takes K, M, G suffixes\n"
"  -e, --maxbytes SIZE    largest size (default 16M)\n"
"  -f, --stepfactor F     multiply the size by F from one row to the next (default 2)\n"
"  -i, --stepbytes SIZE   add SIZE instead of multiplying\n"
"  -w, --warmup N         warm-up iterations per row (default 5)\n"
"  -n, --iters N          timed iterations per row (default 20)\n"
"  -I, --iter-bytes SIZE  at most SIZE / size timed iterations (at least 1), warm-up no more\n"
"                         than timed: bounds the time large rows take (default: no bound)\n"
"  -d, --datatype LIST    int8 uint8 int32 uint32 int64 uint64 fp16 bf16 fp32 fp64, or all\n"
"                         (default fp32)\n"
"  -o, --op LIST          sum prod min max avg, or all (default sum); avg: floats only\n"
"  -r, --root N           root of broadcast, scatter, gather, reduce (default 0)\n"
"  -p, --place WHICH      out, in or both: out-of-place and/or in-place (default both)\n"
"  -m, --mem WHICH        user (plain malloc'ed pointers), kbuf (zero-copy kcoll_buf_create()\n"
"                         buffers) or both (default user)\n"
"  -B, --mode WHICH       blocking, nonblocking or both (default blocking)\n"
"  -a, --agg N            non-blocking: N operations in flight, then wait for all (default 1)\n"
"  -A, --algo NAME        auto ring recdbl rabenseifner binomial dbtree chain pairwise bruck\n"
"                         hier\n"
"                         (default auto: the module chooses)\n"
"  -c, --check 0|1        check every row's result, counted in #wrong (default 1)\n"
"  -t, --timeout MS       blocking calls fail after MS ms (default 120000, 0: no limit)\n"
"  -J, --json FILE        also write one JSON object per row and placement to FILE\n"
"                         (- : standard output, instead of the table)\n"
"  -S, --csv FILE         the same as CSV (- : standard output, instead of the table)\n"
"  -P, --progress         a progress line on standard error even when it is not a terminal\n"
"  -q, --quiet            no progress line\n"
"  -D, --device PATH      kcoll device node (default /dev/kcoll)\n"
"      --hold FILE        after the last row, keep the communicator until FILE exists (at\n"
"                         most --timeout), so that a monitor can list it (kcollctl comm show)\n"
"  -h, --help             this text\n"
"\n"
"Columns: time = mean microseconds per operation (the slowest rank's), algbw = size / time,\n"
"busbw = algbw x the collective's bus factor (allreduce 2(n-1)/n; allgather, reduce_scatter,\n"
"alltoall, gather, scatter (n-1)/n; broadcast, reduce 1), #wrong = wrong result elements\n"
"summed over ranks, usr/sys = this process's CPU microseconds per operation (mean over ranks).\n"
"Exit status: 0 when every row ran and #wrong is 0 everywhere, 1 otherwise, 2 on usage.\n",
		prog);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	long v;
	char *end;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* "a,b,c" or "all" against a name lookup; bits of the values found. */
static int parse_list(const char *s, int (*lookup)(const char *), int n, unsigned int *bits,
		      char *bad, size_t badlen)
{
	char buf[256], *tok, *save = NULL;
	int v;

	if (!strcmp(s, "all")) {
		*bits = (n >= 32 ? ~0U : (1U << n) - 1);
		return 0;
	}
	if (strlen(s) >= sizeof(buf)) {
		snprintf(bad, badlen, "%.40s...", s);
		return -1;
	}
	strcpy(buf, s);
	*bits = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		v = lookup(tok);
		if (v < 0) {
			snprintf(bad, badlen, "%s", tok);
			return -1;
		}
		*bits |= 1U << v;
	}
	if (!*bits) {
		snprintf(bad, badlen, "%s", s);
		return -1;
	}
	return 0;
}

static int parse_which(const char *s, const char *a, const char *b, unsigned int *bits)
{
	if (!strcmp(s, a))
		*bits = 1U << 0;
	else if (!strcmp(s, b))
		*bits = 1U << 1;
	else if (!strcmp(s, "both") || !strcmp(s, "all"))
		*bits = 3;
	else
		return -1;
	return 0;
}

/* Long options without a short form: values above any character. */
#define PERF_OPT_HOLD	0x100

static const struct option long_opts[] = {
	{ "coll",	required_argument, NULL, 'C' },
	{ "minbytes",	required_argument, NULL, 'b' },
	{ "maxbytes",	required_argument, NULL, 'e' },
	{ "stepfactor",	required_argument, NULL, 'f' },
	{ "stepbytes",	required_argument, NULL, 'i' },
	{ "warmup",	required_argument, NULL, 'w' },
	{ "warmup_iters", required_argument, NULL, 'w' },
	{ "iters",	required_argument, NULL, 'n' },
	{ "iter-bytes",	required_argument, NULL, 'I' },
	{ "datatype",	required_argument, NULL, 'd' },
	{ "op",		required_argument, NULL, 'o' },
	{ "root",	required_argument, NULL, 'r' },
	{ "place",	required_argument, NULL, 'p' },
	{ "mem",	required_argument, NULL, 'm' },
	{ "mode",	required_argument, NULL, 'B' },
	{ "agg",	required_argument, NULL, 'a' },
	{ "algo",	required_argument, NULL, 'A' },
	{ "check",	required_argument, NULL, 'c' },
	{ "timeout",	required_argument, NULL, 't' },
	{ "json",	required_argument, NULL, 'J' },
	{ "csv",	required_argument, NULL, 'S' },
	{ "progress",	no_argument,       NULL, 'P' },
	{ "quiet",	no_argument,       NULL, 'q' },
	{ "device",	required_argument, NULL, 'D' },
	{ "hold",	required_argument, NULL, PERF_OPT_HOLD },
	{ "help",	no_argument,       NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

#define PERF_SHORT_OPTS	":C:b:e:f:i:w:n:I:d:o:r:p:m:B:a:A:c:t:J:S:PqD:h"

int perf_parse_args(int argc, char **argv, struct perf_opts *o, char *err, size_t errlen)
{
	char bad[64];
	size_t sizes[PERF_MAX_SIZES + 1];
	unsigned int bits;
	char *end;
	int opt, v;

	perf_opts_default(o);
	optind = 0;	/* GNU: start afresh (the unit test parses many command lines) */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, PERF_SHORT_OPTS, long_opts, NULL)) != -1) {
		switch (opt) {
		case 'C':
			if (parse_list(optarg, perf_coll_from_name, KCOLL_NUM_COLLECTIVES,
				       &o->colls, bad, sizeof(bad)))
				goto bad_name;
			break;
		case 'b':
		case 'e':
		case 'i':
		case 'I':
			if (perf_parse_size(optarg, opt == 'b' ? &o->minbytes :
					    opt == 'e' ? &o->maxbytes :
					    opt == 'i' ? &o->stepbytes : &o->iter_bytes)) {
				snprintf(err, errlen, "-%c: bad size '%s' (digits, then K, M or G)",
					 opt, optarg);
				return -1;
			}
			break;
		case 'f':
			errno = 0;
			o->stepfactor = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->stepfactor > 1.0) ||
			    o->stepfactor > 1024) {
				snprintf(err, errlen, "-f: step factor must be a number > 1 and "
					 "<= 1024, not '%s'", optarg);
				return -1;
			}
			break;
		case 'w':
		case 'n':
		case 'a':
			if (parse_int(optarg, opt == 'w' ? 0 : 1, 1000000,
				      opt == 'w' ? &o->warmup : opt == 'n' ? &o->iters : &o->agg)) {
				snprintf(err, errlen, "-%c: bad count '%s' (%s to 1000000)", opt,
					 optarg, opt == 'w' ? "0" : "1");
				return -1;
			}
			break;
		case 'd':
			if (parse_list(optarg, perf_dtype_from_name, KCOLL_NUM_DATATYPES,
				       &o->dtypes, bad, sizeof(bad)))
				goto bad_name;
			break;
		case 'o':
			if (parse_list(optarg, perf_op_from_name, KCOLL_NUM_RED_OPS, &o->ops, bad,
				       sizeof(bad)))
				goto bad_name;
			break;
		case 'r':
			if (parse_int(optarg, 0, KCOLL_MAX_RANKS - 1, &o->root)) {
				snprintf(err, errlen, "-r: bad root '%s'", optarg);
				return -1;
			}
			break;
		case 'p':
			if (parse_which(optarg, "out", "in", &o->place)) {
				snprintf(err, errlen, "-p: out, in or both, not '%s'", optarg);
				return -1;
			}
			break;
		case 'm':
			if (parse_which(optarg, "user", "kbuf", &o->mem)) {
				snprintf(err, errlen, "-m: user, kbuf or both, not '%s'", optarg);
				return -1;
			}
			break;
		case 'B':
			if (parse_which(optarg, "blocking", "nonblocking", &o->mode)) {
				snprintf(err, errlen, "-B: blocking, nonblocking or both, not '%s'",
					 optarg);
				return -1;
			}
			break;
		case 'A':
			v = perf_algo_from_name(optarg);
			if (v < 0) {
				snprintf(bad, sizeof(bad), "%s", optarg);
				goto bad_name;
			}
			o->algo = v;
			break;
		case 'c':
			if (parse_int(optarg, 0, 1, &v)) {
				snprintf(err, errlen, "-c: 0 or 1, not '%s'", optarg);
				return -1;
			}
			o->check = v;
			break;
		case 't':
			if (parse_int(optarg, 0, 86400000, &v)) {
				snprintf(err, errlen, "-t: bad timeout '%s' (milliseconds)",
					 optarg);
				return -1;
			}
			o->timeout_ms = v;
			break;
		case 'J':
			o->json_path = optarg;
			break;
		case 'S':
			o->csv_path = optarg;
			break;
		case 'P':
			o->progress = 1;
			break;
		case 'q':
			o->progress = 0;
			break;
		case 'D':
			o->dev_path = optarg;
			break;
		case PERF_OPT_HOLD:
			o->hold_path = optarg;
			break;
		case 'h':
			return 1;
		case ':':
			snprintf(err, errlen, "option '%s' needs an argument", argv[optind - 1]);
			return -1;
		default:
			if (optopt)
				snprintf(err, errlen, "unknown option '-%c'", optopt);
			else
				snprintf(err, errlen, "unknown option '%s'", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (o->minbytes > o->maxbytes) {
		snprintf(err, errlen, "-b %zu is larger than -e %zu", o->minbytes, o->maxbytes);
		return -1;
	}
	if (!o->stepbytes && !o->minbytes) {
		snprintf(err, errlen, "-b 0 needs -i (a factor never leaves 0)");
		return -1;
	}
	if (o->json_path && o->csv_path && !strcmp(o->json_path, "-") &&
	    !strcmp(o->csv_path, "-")) {
		snprintf(err, errlen, "only one of --json and --csv can be standard output");
		return -1;
	}
	/* Drop (dtype, op) pairs that cannot exist, but not all of them. */
	bits = 0;
	for (v = 0; v < KCOLL_NUM_DATATYPES; v++) {
		int op;

		for (op = 0; op < KCOLL_NUM_RED_OPS; op++) {
			if ((o->dtypes & (1U << v)) && (o->ops & (1U << op)) &&
			    perf_op_valid(v, op))
				bits |= 1U << op;
		}
	}
	if (!bits && (o->colls & ((1U << KCOLL_REDUCE) | (1U << KCOLL_ALLREDUCE) |
				  (1U << KCOLL_REDUCE_SCATTER) | (1U << KCOLL_REDUCE_SCATTERV)))) {
		snprintf(err, errlen, "no valid (datatype, op) pair: avg is for fp16, bf16, fp32 "
			 "and fp64 only");
		return -1;
	}
	if (perf_sizes(o, sizes, PERF_MAX_SIZES + 1) > PERF_MAX_SIZES) {
		snprintf(err, errlen, "the sweep has more than %d sizes: use a larger step",
			 PERF_MAX_SIZES);
		return -1;
	}
	return 0;

bad_name:
	snprintf(err, errlen, "-%c: unknown name '%s' (see --help)", opt, bad);
	return -1;
}
