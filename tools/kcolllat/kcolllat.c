// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kcolllat - live latency histograms and throughput of kcoll operations, by kind (send,
 * receive, each collective) and message size, from the kcoll:* tracepoints through BPF.
 *
 *	kcolllat [-j] [-p] [-c COMM_ID] [-P PID] [-i SECONDS] [-d SECONDS]
 *
 * Every interval prints, per kind and power-of-two size bucket, the operations completed,
 * errors, bytes, throughput, mean latency and a log2 histogram of latencies (microseconds),
 * then starts over.  Exit status: 0, 1 on a runtime error (not root, module not loaded, BPF
 * unavailable), 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <libkcoll.h>

#include "json_writer.h"
#include "kcolllat.h"
#include "kcolllat.skel.h"

/* send, recv, then the collectives by libkcoll's names (lib/names.c); NULL if unknown. */
static const char *kind_name(unsigned int kind)
{
	if (kind == KCOLLLAT_SEND)
		return "send";
	if (kind == KCOLLLAT_RECV)
		return "recv";
	return kind < KCOLLLAT_NKINDS ? kcoll_collective_str((int)(kind - KCOLLLAT_COLL0)) : NULL;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fputs("Usage: kcolllat [ -j ] [ -p ] [ -c COMM_ID ] [ -P PID ] [ -i SECONDS ] [ -d SECONDS ]\n"
	      "  -j          JSON, one object per interval\n"
	      "  -p          indent the JSON\n"
	      "  -c COMM_ID  only this communicator (hexadecimal, as kcollctl comm show)\n"
	      "  -P PID      only operations started by this process\n"
	      "  -i SECONDS  print every SECONDS (default 1)\n"
	      "  -d SECONDS  stop after SECONDS (default: at SIGINT)\n"
	      "Latency histograms (log2 microseconds) and throughput of kcoll operations per\n"
	      "kind (send, recv, each collective) and message size; needs root.\n", f);
}

/* libbpf speaks only with KCOLLLAT_DEBUG set: the tool reports failures itself. */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !getenv("KCOLLLAT_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

struct entry {
	__u32 key;
	struct kcolllat_hist h;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

/* Read and clear the histograms; returns the number of entries in *out. */
static int collect(int fd, struct entry **out, size_t *n)
{
	struct entry *e = NULL, *p;
	__u32 key, next, *prev = NULL;
	size_t cnt = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		p = realloc(e, (cnt + 1) * sizeof(*e));
		if (!p) {
			free(e);
			return -ENOMEM;
		}
		e = p;
		e[cnt].key = next;
		if (!bpf_map_lookup_elem(fd, &next, &e[cnt].h))
			cnt++;
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < cnt; i++)
		bpf_map_delete_elem(fd, &e[i].key);
	qsort(e, cnt, sizeof(*e), cmp_entry);
	*out = e;
	*n = cnt;
	return 0;
}

static void size_str(unsigned int lg, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = lg / 10;

	if (u > 4)
		u = 4;
	snprintf(buf, len, "%llu%s", 1ULL << (lg - 10 * u), units[u]);
}

static void print_plain(const struct entry *e, size_t n, double secs)
{
	char t[32], lo[32], hi[32];
	time_t now = time(NULL);
	size_t i;
	int j, top;

	strftime(t, sizeof(t), "%H:%M:%S", localtime(&now));
	printf("%s: %zu bucket(s) in %.1f s\n", t, n, secs);
	for (i = 0; i < n; i++) {
		unsigned int kind = e[i].key >> 8, lg = e[i].key & 0xff;
		const struct kcolllat_hist *h = &e[i].h;
		__u64 max = 0;

		size_str(lg, lo, sizeof(lo));
		size_str(lg + 1, hi, sizeof(hi));
		printf("%-15s %7s-%-7s ops %" PRIu64 " errors %" PRIu64 " bytes %" PRIu64
		       " %.2f MB/s avg %.1f us\n", kind_name(kind) ?: "?",
		       lo, hi, (uint64_t)h->ops, (uint64_t)h->errors, (uint64_t)h->bytes,
		       h->bytes / secs / 1e6, h->ops ? h->ns / 1e3 / h->ops : 0.0);
		for (j = 0, top = -1; j < KCOLLLAT_NLAT; j++) {
			if (h->lat[j])
				top = j;
			if (h->lat[j] > max)
				max = h->lat[j];
		}
		for (j = 0; j <= top; j++) {
			int w = max ? (int)(h->lat[j] * 40 / max) : 0;

			printf("    %10llu -> %-10llu us : %-8" PRIu64 " |%-40.*s|\n",
			       j ? 1ULL << j : 0ULL, (1ULL << (j + 1)) - 1, (uint64_t)h->lat[j], w,
			       "****************************************");
		}
	}
	fflush(stdout);
}

static void print_json(const struct entry *e, size_t n, double secs, bool pretty)
{
	struct kcoll_jw jw;
	size_t i;
	int j;

	kcoll_jw_init(&jw, stdout, pretty);
	kcoll_jw_obj_open(&jw);
	kcoll_jw_kv_uint(&jw, "time", (uint64_t)time(NULL));
	kcoll_jw_key(&jw, "interval_ms");
	kcoll_jw_uint(&jw, (uint64_t)(secs * 1000));
	kcoll_jw_key(&jw, "ops");
	kcoll_jw_arr_open(&jw);
	for (i = 0; i < n; i++) {
		unsigned int kind = e[i].key >> 8, lg = e[i].key & 0xff;
		const struct kcolllat_hist *h = &e[i].h;

		kcoll_jw_obj_open(&jw);
		kcoll_jw_kv_str(&jw, "kind", kind_name(kind) ?: "unknown");
		kcoll_jw_kv_uint(&jw, "size_min", lg ? 1ULL << lg : 0);
		kcoll_jw_kv_uint(&jw, "size_max", (1ULL << (lg + 1)) - 1);
		kcoll_jw_kv_uint(&jw, "count", h->ops);
		kcoll_jw_kv_uint(&jw, "errors", h->errors);
		kcoll_jw_kv_uint(&jw, "bytes", h->bytes);
		kcoll_jw_kv_uint(&jw, "bytes_per_s", (uint64_t)(h->bytes / secs));
		kcoll_jw_kv_uint(&jw, "avg_ns", h->ops ? h->ns / h->ops : 0);
		kcoll_jw_key(&jw, "latency_us");
		kcoll_jw_arr_open(&jw);
		for (j = 0; j < KCOLLLAT_NLAT; j++) {
			if (!h->lat[j])
				continue;
			kcoll_jw_obj_open(&jw);
			kcoll_jw_kv_uint(&jw, "min", j ? 1ULL << j : 0);
			kcoll_jw_kv_uint(&jw, "max", (1ULL << (j + 1)) - 1);
			kcoll_jw_kv_uint(&jw, "count", h->lat[j]);
			kcoll_jw_obj_close(&jw);
		}
		kcoll_jw_arr_close(&jw);
		kcoll_jw_obj_close(&jw);
	}
	kcoll_jw_arr_close(&jw);
	kcoll_jw_obj_close(&jw);
	kcoll_jw_finish(&jw);
	fflush(stdout);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	bool json = false, pretty = false;
	unsigned long long comm = 0;
	struct kcolllat_bpf *skel;
	long pid = 0, interval = 1, duration = 0;
	double t0, last;
	char *end;
	int c, err, ret = 1;

	while ((c = getopt(argc, argv, "jpc:P:i:d:h")) != -1) {
		errno = 0;
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			pretty = true;
			break;
		case 'c':
			comm = strtoull(optarg, &end, 16);
			if (errno || *end || !*optarg || !comm)
				goto bad;
			break;
		case 'P':
			pid = strtol(optarg, &end, 10);
			if (errno || *end || pid <= 0 || pid > 0x3fffffff)
				goto bad;
			break;
		case 'i':
		case 'd':
			*(c == 'i' ? &interval : &duration) = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || (c == 'i' ? interval <= 0 : duration < 0) ||
			    interval > 86400 || duration > 86400 * 365)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kcolllat: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	libbpf_set_print(libbpf_quiet);
	skel = kcolllat_bpf__open();
	if (!skel) {
		fprintf(stderr, "kcolllat: cannot open the BPF program: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->filter_comm = comm;
	skel->rodata->filter_pid = (__u32)pid;
	err = kcolllat_bpf__load(skel);
	if (err) {
		fprintf(stderr, "kcolllat: cannot load the BPF program: %s%s\n", strerror(-err),
			-err == EPERM ? " (try as root)" : "");
		goto out;
	}
	err = kcolllat_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "kcolllat: cannot attach to the kcoll:* tracepoints: %s%s\n",
			strerror(-err), -err == ENOENT ? " (is the kcoll module loaded?)" : "");
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* Also with -j (its objects go to stdout): scripts wait for this line. */
	fprintf(stderr, "kcolllat: tracing kcoll operations%s; Ctrl-C to stop\n",
		comm || pid ? " (filtered)" : "");

	t0 = last = mono();
	while (!stop) {
		double now, wait = interval;
		struct entry *e;
		size_t n;

		if (duration && t0 + duration - last < wait)
			wait = t0 + duration - last;
		if (wait > 0)
			usleep((useconds_t)(wait * 1e6));
		now = mono();
		if (collect(bpf_map__fd(skel->maps.hists), &e, &n)) {
			fprintf(stderr, "kcolllat: out of memory\n");
			goto out;
		}
		if (json)
			print_json(e, n, now - last, pretty);
		else
			print_plain(e, n, now - last);
		free(e);
		last = now;
		if (duration && now - t0 >= duration - 0.01)
			break;
	}
	ret = 0;
out:
	kcolllat_bpf__destroy(skel);
	return ret;

bad:
	fprintf(stderr, "kcolllat: bad value \"%s\" for -%c\n", optarg, c);
	usage(stderr);
	return 2;
}
