// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * p2p_ping: rank 0 sends SIZE bytes to rank 1, which checks them and sends them back; rank 0
 * checks the echo and prints the round-trip time.  Ranks 2 and up join the communicator and
 * wait.
 *
 * Every rank is one process, started with the environment of a launcher:
 *
 *	torchrun --nproc-per-node=1 --nnodes=2 ... p2p_ping 1M
 *	srun -N2 -n2 env KCOLL_BOOTSTRAP_ADDR=node0 p2p_ping 1M
 *	mpirun -np 2 -x KCOLL_BOOTSTRAP_ADDR=node0 p2p_ping 1M
 *	KCOLL_RANK=0 KCOLL_NRANKS=2 KCOLL_BOOTSTRAP_ADDR=10.0.0.1 p2p_ping 1M	(node 0)
 *	KCOLL_RANK=1 KCOLL_NRANKS=2 KCOLL_BOOTSTRAP_ADDR=10.0.0.1 p2p_ping 1M	(node 1)
 *
 * Usage: p2p_ping [-b] [-n ITERATIONS] [-d DEVICE] [-t TIMEOUT_MS] [SIZE[k|m|g]]
 *	-b	use zero-copy kcoll buffers (kcoll_buf_create) instead of malloc()ed memory
 *
 * Exit status: 0 when every message arrived intact, 1 on any error or mismatch, 2 on usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libkcoll.h>

static const char *prog = "p2p_ping";

static int fail(const char *what, int err)
{
	const char *why = kcoll_last_error();

	fprintf(stderr, "%s: %s: %s\n", prog, what, *why ? why : strerror(-err));
	return 1;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* "4096", "64k", "1M": digits and at most one suffix (binary multiples). */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || v > (1ULL << 40))
		return -1;
	*out = v;
	return 0;
}

static unsigned char pattern(size_t i, int iter)
{
	return (unsigned char)(i * 131 + (size_t)iter * 7 + 1);
}

static void fill(unsigned char *p, size_t len, int iter)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(i, iter);
}

/* Index of the first wrong byte, or len. */
static size_t check(const unsigned char *p, size_t len, int iter)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != pattern(i, iter))
			return i;
	}
	return len;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: %s [-b] [-n ITERATIONS] [-d DEVICE] [-t TIMEOUT_MS] "
		"[SIZE[k|m|g]]\n", prog);
}

int main(int argc, char **argv)
{
	KCOLL_OPTS(kcoll_open_opts, oopts);
	KCOLL_OPTS(kcoll_p2p_opts, popts);
	struct kcoll_handle *h = NULL;
	struct kcoll_comm *c = NULL;
	struct kcoll_buf *kb = NULL;
	unsigned char *sbuf = NULL, *rbuf = NULL;
	size_t size = 4096, got, bad;
	double t = 0, sum = 0, best = 0;
	int iters = 10, rank, nranks, it, err, opt, rc = 1;
	bool use_buf = false;

	while ((opt = getopt(argc, argv, "bn:d:t:h")) != -1) {
		switch (opt) {
		case 'b':
			use_buf = true;
			break;
		case 'n':
			iters = atoi(optarg);
			if (iters < 1) {
				usage(stderr);
				return 2;
			}
			break;
		case 'd':
			oopts.dev_path = optarg;
			break;
		case 't':
			popts.timeout_ms = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc && parse_size(argv[optind++], &size)) {
		usage(stderr);
		return 2;
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	err = kcoll_open(&oopts, &h);
	if (err)
		return fail("cannot open the kcoll device (is the module loaded?)", err);
	err = kcoll_comm_init_env(h, NULL, &c);
	if (err) {
		fail("kcoll_comm_init_env", err);
		goto out;
	}
	rank = kcoll_comm_rank(c);
	nranks = kcoll_comm_size(c);
	if (nranks < 2) {
		fprintf(stderr, "%s: needs at least 2 ranks, has %d\n", prog, nranks);
		goto out;
	}

	/* Two regions, so that the echo cannot be mistaken for what was sent. */
	if (use_buf) {
		/* Collective: every rank creates it, with the same size. */
		err = kcoll_buf_create(c, size ? 2 * size : 1, &kb);
		if (err) {
			fail("kcoll_buf_create", err);
			goto out;
		}
		sbuf = kcoll_buf_ptr(kb);
		rbuf = sbuf + size;
	} else {
		sbuf = malloc(size ? size : 1);
		rbuf = malloc(size ? size : 1);
		if (!sbuf || !rbuf) {
			fprintf(stderr, "%s: out of memory\n", prog);
			goto out;
		}
	}

	for (it = 0; it < iters && rank < 2; it++) {
		if (rank == 0) {
			fill(sbuf, size, it);
			memset(rbuf, 0, size);
			t = now_us();
			err = use_buf ? kcoll_send_buf(c, kb, 0, size, 1, &popts) :
					kcoll_send(c, sbuf, size, 1, &popts);
			if (err) {
				fail("send to rank 1", err);
				goto out;
			}
			err = use_buf ? kcoll_recv_buf(c, kb, size, size, 1, &got, &popts) :
					kcoll_recv(c, rbuf, size, 1, &got, &popts);
			if (err) {
				fail("receive from rank 1", err);
				goto out;
			}
			t = now_us() - t;
		} else {
			memset(rbuf, 0, size);
			err = use_buf ? kcoll_recv_buf(c, kb, size, size, 0, &got, &popts) :
					kcoll_recv(c, rbuf, size, 0, &got, &popts);
			if (err) {
				fail("receive from rank 0", err);
				goto out;
			}
		}
		if (got != size) {
			fprintf(stderr, "%s: rank %d, round %d: %zu bytes arrived, %zu expected\n",
				prog, rank, it, got, size);
			goto out;
		}
		bad = check(rbuf, size, it);
		if (bad != size) {
			fprintf(stderr, "%s: rank %d, round %d: byte %zu is 0x%02x, expected "
				"0x%02x\n", prog, rank, it, bad, rbuf[bad], pattern(bad, it));
			goto out;
		}
		if (rank == 1) {
			/* Echo what arrived. */
			if (use_buf)
				memcpy(sbuf, rbuf, size);
			err = use_buf ? kcoll_send_buf(c, kb, 0, size, 0, &popts) :
					kcoll_send(c, rbuf, size, 0, &popts);
			if (err) {
				fail("send to rank 0", err);
				goto out;
			}
		} else {
			sum += t;
			if (!it || t < best)
				best = t;
		}
	}
	if (rank == 0)
		printf("p2p_ping: %zu bytes, %d round trips (%s): avg %.1f us, best %.1f us, "
		       "%.1f MB/s\n", size, iters, use_buf ? "kcoll buffer" : "user memory",
		       sum / iters, best, best > 0 ? 2.0 * size / best : 0.0);
	rc = 0;
out:
	if (use_buf)
		kcoll_buf_destroy(kb);
	else {
		free(sbuf);
		free(rbuf);
	}
	kcoll_comm_destroy(c);
	kcoll_close(h);
	return rc;
}
