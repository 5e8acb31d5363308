// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile peers (Documentation/security.rst, "Hostile peers").  Run on nodes 0 and 1 of a
 * rig cluster: node 0 is the victim, a real kcoll communicator of two ranks through
 * /dev/kcoll; node 1 is the hostile rank 1, which creates no communicator but speaks
 * kcoll's wire protocol itself (kcoll_evil_peer.h) and sends, for each case of the table,
 * crafted messages: bad hellos, READY/NOP/CTS/EAGER/DONE/BUF/BYE of wrong lengths, counts,
 * offsets and sequence numbers, repeats, floods, unknown types, half-open connections.
 *
 * For every case the victim checks that its pending call ends with the defined error
 * within its timeout (or that a message that may be ignored was ignored, and the call
 * still completes), that a protocol error was counted (proto_errors in sysfs), that its
 * memory did not grow beyond a bound while the communicator lived; at the end that its
 * slab did not grow and that it still serves a communicator with a proper rank 1.  The
 * rig fails the run on any kernel splat (rig/dmesg-check.sh).
 *
 * The two nodes step through the cases together over a TCP connection (lines "<case>
 * <word>"), node 0 listening on EV_CTL_PORT.
 */
#include <netinet/in.h>
#include <poll.h>
#include <netinet/tcp.h>
#include <pthread.h>

#include "kcoll_test_comm.h"
#include "kcoll_evil_cases.h"
#include "kselftest_harness.h"

#define EV_CTL_PORT	18791

/* Control channel --------------------------------------------------------------------- */

static int ctl_fd = -1;
static long slab_start_kb;

static void ctl_put(const char *name, const char *word)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "%s %s\n", name, word);

	if (write(ctl_fd, line, n) != n)
		perror("ctl write");
}

/* The case whose "done" the other node sent (see ctl_done()); a case runs in its own child. */
static char done_seen[96];

/*
 * Wait for "<name> <word>"; lines of other cases are skipped.  0, or -1 on timeout or when
 * the other node said "done" (it has left the case: nothing more of it will come).
 */
static int ctl_get(const char *name, const char *word, char *got, size_t gotlen)
{
	char line[256];
	size_t n;

	for (;;) {
		n = 0;
		while (n < sizeof(line) - 1) {
			if (read(ctl_fd, line + n, 1) != 1)
				return -1;
			if (line[n] == '\n')
				break;
			n++;
		}
		line[n] = 0;
		if (!strncmp(line, name, strlen(name)) && line[strlen(name)] == ' ') {
			const char *w = line + strlen(name) + 1;

			if (!strcmp(w, "done") && (!word || strcmp(word, "done"))) {
				snprintf(done_seen, sizeof(done_seen), "%s", name);
				return -1;
			}
			if (!word || !strcmp(w, word)) {
				if (got)
					snprintf(got, gotlen, "%s", w);
				return 0;
			}
		}
	}
}

static int ctl_open(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(EV_CTL_PORT) };
	struct timeval tv = { .tv_sec = 60 };
	struct kcoll_sockaddr k0 = kt_addr(0);
	int fd, one = 1, i;

	if (kt_rank() == 0) {
		int l = socket(AF_INET, SOCK_STREAM, 0);

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			return -1;
		fd = accept(l, NULL, NULL);
		close(l);
	} else {
		memcpy(&a.sin_addr, k0.addr, 4);
		for (i = 0; i < 600; i++) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
				break;
			close(fd);
			fd = -1;
			usleep(100000);
		}
	}
	if (fd >= 0) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	return fd;
}

/*
 * ctl_get() with a longer read timeout: a flood the hostile rank sends at the pace of our
 * receive reposts takes minutes under KASAN and TCG on a loaded host.
 */
static int ctl_wait(const char *name, const char *word, int secs)
{
	struct timeval tv = { .tv_sec = secs }, old;
	socklen_t len = sizeof(old);
	int ret;

	if (getsockopt(ctl_fd, SOL_SOCKET, SO_RCVTIMEO, &old, &len))
		return -1;
	setsockopt(ctl_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ret = ctl_get(name, word, NULL, 0);
	setsockopt(ctl_fd, SOL_SOCKET, SO_RCVTIMEO, &old, sizeof(old));
	return ret;
}

/* A sysfs value of the victim's comm: a number, or -1 if it is not there. */
static long comm_attr(uint64_t id, const char *attr)
{
	char path[128], buf[64] = "";
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/kcoll/comms/%016llx-0/%s",
		 (unsigned long long)id, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		if (!strcmp(attr, "state"))
			v = !strncmp(buf, "ready", 5) ? 0 : 1;
		else
			v = strtol(buf, NULL, 10);
	}
	fclose(f);
	return v;
}

/* The table ------------------------------------------------------------------------- */

#define EP	.status = -EPROTO, .proto = 1
#define CASE(nm, ...)								\
	FIXTURE_VARIANT_ADD(evil, nm) { .c = { .name = #nm, __VA_ARGS__ } };

FIXTURE(evil) {
	int fd;
	bool met;	/* both nodes are at this case: they leave it together */
};

FIXTURE_VARIANT(evil) {
	struct evil_case c;
};

/* Hello: refused with the documented reason, and the communicator still forms after. */
CASE(hello_none, .v = V_NONE, .pre = h_none, .rej = KCOLL_REJ_BAD_HELLO)
CASE(hello_short, .v = V_NONE, .pre = h_short, .rej = KCOLL_REJ_NOT_YET,
     .rej_alt = KCOLL_REJ_BAD_HELLO)
CASE(hello_bad_magic, .v = V_NONE, .pre = h_magic, .rej = KCOLL_REJ_BAD_HELLO)
CASE(hello_version1, .v = V_NONE, .pre = h_version1, .rej = KCOLL_REJ_VERSION)
CASE(hello_version255, .v = V_NONE, .pre = h_version255, .rej = KCOLL_REJ_VERSION)
CASE(hello_unknown_comm, .v = V_NONE, .pre = h_comm, .rej = KCOLL_REJ_NOT_YET)
CASE(hello_nranks, .v = V_NONE, .pre = h_nranks, .rej = KCOLL_REJ_MISMATCH)
CASE(hello_src_is_dst, .v = V_NONE, .pre = h_src_self, .rej = KCOLL_REJ_MISMATCH)
CASE(hello_src_beyond, .v = V_NONE, .pre = h_src_big, .rej = KCOLL_REJ_MISMATCH)
CASE(hello_src_max, .v = V_NONE, .pre = h_src_max, .rej = KCOLL_REJ_MISMATCH)
CASE(hello_dst_absent, .v = V_NONE, .pre = h_dst, .rej = KCOLL_REJ_NOT_YET)
CASE(hello_nranks0, .v = V_NONE, .pre = h_nranks0, .rej = KCOLL_REJ_MISMATCH)
CASE(hello_wrong_mac, .v = V_NONE, .pre = h_mac, .rej = KCOLL_REJ_AUTH)
CASE(hello_without_mac, .v = V_NONE, .pre = h_v2_length, .rej = KCOLL_REJ_BAD_HELLO,
     .rej_alt = KCOLL_REJ_AUTH)
CASE(hello_duplicate, .v = V_NONE, .pre = p_duplicate, .rej = KCOLL_REJ_DUPLICATE)
/* Half-open: connected, never READY; or gone before READY. */
CASE(half_open_silent, .no_ready = 1, .create_ms = 15000, .create_err = -ETIMEDOUT)
CASE(half_open_vanish, .no_ready = 1, .pre = a_vanish, .create_ms = 30000,
     .create_err = -ECONNRESET)
/* Before READY. */
CASE(ready_truncated, .pre = p_msg, .type = KCOLL_MSG_READY, .bytes = 8,
     .create_err = -EPROTO)
CASE(ready_bad_magic, .pre = p_msg, .type = KCOLL_MSG_READY, .magic_bad = 1,
     .create_err = -EPROTO)
CASE(ready_twice, .pre = p_msg, .type = KCOLL_MSG_READY, .drop = 1)
CASE(nop_before_ready, .pre = p_msg, .type = KCOLL_MSG_NOP, .drop = 1)
CASE(garbage_before_ready, .pre = p_msg, .type = 99, .create_err = -EPROTO)
/* NOP and READY once ready: ignored. */
CASE(nop_flood, .attack = a_msg, .type = KCOLL_MSG_NOP, .repeat = 2000, .drop = 1)
CASE(nop_full_size, .attack = a_msg, .type = KCOLL_MSG_NOP, .bytes = EV_SLOT, .drop = 1)
CASE(nop_truncated, .attack = a_msg, .type = KCOLL_MSG_NOP, .bytes = 16, EP)
CASE(ready_again, .attack = a_msg, .type = KCOLL_MSG_READY, .repeat = 5, .drop = 1)
/* Unknown and malformed. */
CASE(type_zero, .attack = a_msg, .type = 0, EP)
CASE(type_next, .attack = a_msg, .type = 8, EP)
CASE(type_max, .attack = a_msg, .type = 255, EP)
CASE(bad_magic, .attack = a_msg, .type = KCOLL_MSG_DONE, .magic_bad = 1, EP)
CASE(empty_send, .attack = a_msg, .type = KCOLL_MSG_DONE, .bytes = 1, EP)
CASE(garbage_full, .attack = a_msg, .type = 0xee, .bytes = EV_SLOT, EP)
/* CTS, to the victim's send. */
CASE(cts_ok, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS, .len = SMALL)
CASE(cts_wrong_seq, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS, .seq = 5,
     .len = SMALL, EP)
CASE(cts_seq_wrapped, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS,
     .seq = 0xffffffff, .len = SMALL, EP)
CASE(cts_repeated, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS, .len = SMALL,
     .repeat = 2, .any = 1, .proto = 1)
CASE(cts_flood, .v = V_RECV_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS, .len = SMALL,
     .seq = 100, .seq_step = 1, .repeat = 300, EP, .mem_kb = 4096)
CASE(cts_too_many_segs, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS,
     .len = 300 * 4096, .nsegs = 300, .bytes = EV_SLOT, EP)
CASE(cts_truncated_segs, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS,
     .len = 10 * 4096, .nsegs = 10, .bytes = 48, EP)
CASE(cts_big_no_segs, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS,
     .len = BIG, EP)
CASE(cts_small_with_segs, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS,
     .len = 1000, .nsegs = 1, EP)
CASE(cts_segs_short, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS,
     .len = 3 * 4096 + 1, .nsegs = 3, EP)
CASE(cts_capacity_small, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS,
     .len = 16, .status = -EMSGSIZE)
CASE(cts_wrong_tag, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_CTS, .len = SMALL,
     .r1 = 0xdead0000beefULL, .status = -EPROTO)
CASE(cts_rendezvous_ok, .v = V_SEND_BIG, .attack = a_cts_send_ok)
CASE(cts_bad_rkey, .v = V_SEND_BIG, .attack = a_cts_bad_rkey, .status = -ECONNRESET,
     .iwarp_ok = 1)
CASE(cts_addr_wraps, .v = V_SEND_BIG, .attack = a_cts_wrap_addr, .status = -ECONNRESET,
     .iwarp_ok = 1)
/* EAGER, to the victim's receive. */
CASE(eager_ok, .attack = a_msg, .type = KCOLL_MSG_EAGER, .len = SMALL, .r1_tag = 1)
CASE(eager_zero, .attack = a_msg, .type = KCOLL_MSG_EAGER, .len = 0, .r1_tag = 1)
CASE(eager_too_long, .attack = a_msg, .type = KCOLL_MSG_EAGER, .len = 5000,
     .bytes = EV_SLOT, EP)
CASE(eager_len_huge, .attack = a_msg, .type = KCOLL_MSG_EAGER, .len = 1ULL << 63,
     .bytes = 64, EP)
CASE(eager_truncated, .attack = a_msg, .type = KCOLL_MSG_EAGER, .len = 100, .bytes = 40, EP)
CASE(eager_bigger_than_recv, .attack = a_msg, .type = KCOLL_MSG_EAGER, .len = 100,
     .r1_tag = 1, .status = -EMSGSIZE)
CASE(eager_wrong_tag, .attack = a_msg, .type = KCOLL_MSG_EAGER, .len = SMALL, .r1 = 77,
     .status = -EPROTO)
CASE(eager_repeated_early, .attack = a_msg, .type = KCOLL_MSG_EAGER, .seq = 3, .len = SMALL,
     .repeat = 2, EP)
CASE(eager_replayed, .attack = a_eager_replay, .any = 1, .proto = 1)
CASE(eager_far_future, .attack = a_msg, .type = KCOLL_MSG_EAGER, .seq = 0x7fffffff,
     .len = SMALL, .drop = 1)
CASE(eager_flood, .attack = a_msg, .type = KCOLL_MSG_EAGER, .seq = 100, .seq_step = 1,
     .len = KCOLL_WIRE_EAGER_MAX, .repeat = 300, EP, .mem_kb = 4096)
/* DONE, to the victim's rendezvous receive. */
CASE(done_rendezvous_ok, .v = V_RECV_BIG, .attack = a_rdv_ok)
CASE(done_no_recv, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE, .seq = 7,
     .len = BIG, EP)
CASE(done_over_capacity, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE,
     .len = BIG + 1, EP)
CASE(done_msgsize, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE,
     .wstatus = KCOLL_WIRE_STATUS_MSGSIZE, .status = -EMSGSIZE)
CASE(done_msgsize_with_len, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE,
     .wstatus = KCOLL_WIRE_STATUS_MSGSIZE, .len = 100, EP)
CASE(done_status_erestartsys, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE,
     .wstatus = 512, EP)
CASE(done_status_eintr, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE,
     .wstatus = EINTR, EP)
CASE(done_status_max, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE,
     .wstatus = 0xffffffff, EP)
CASE(done_short, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE, .len = 100, EP)
CASE(done_into_eager_recv, .attack = a_msg, .type = KCOLL_MSG_DONE, .len = 10, EP)
CASE(done_repeated, .v = V_RECV_BIG, .attack = a_rdv_twice, .any = 1, .proto = 1)
CASE(done_truncated, .v = V_RECV_BIG, .attack = a_msg, .type = KCOLL_MSG_DONE, .bytes = 20,
     EP)
/* BUF, to the victim's BUF_CREATE. */
CASE(buf_ok, .v = V_BUF, .attack = a_buf_ok)
CASE(buf_in_parts, .v = V_BUF, .attack = a_buf_parts)
CASE(buf_future_first, .v = V_BUF, .attack = a_buf_future)
CASE(buf_first_wraps, .v = V_BUF, .attack = a_msg, .type = KCOLL_MSG_BUF, .len = BIG,
     .wstatus = 0xffffffff, .nsegs = 2, .r1 = 2, EP)
CASE(buf_past_total, .v = V_BUF, .attack = a_msg, .type = KCOLL_MSG_BUF, .len = BIG,
     .wstatus = 1, .nsegs = 2, .r1 = 2, EP)
CASE(buf_total_zero, .v = V_BUF, .attack = a_msg, .type = KCOLL_MSG_BUF, .len = BIG,
     .nsegs = 1, .r1 = 0, EP)
CASE(buf_total_huge, .v = V_BUF, .attack = a_msg, .type = KCOLL_MSG_BUF, .len = BIG,
     .nsegs = 1, .r1 = 65536, EP)
CASE(buf_too_many_segs, .v = V_BUF, .attack = a_msg, .type = KCOLL_MSG_BUF, .len = BIG,
     .nsegs = 255, .r1 = 300, .bytes = EV_SLOT, EP)
CASE(buf_truncated, .v = V_BUF, .attack = a_msg, .type = KCOLL_MSG_BUF, .len = BIG,
     .nsegs = 10, .r1 = 10, .bytes = 48, EP)
CASE(buf_no_segs, .v = V_BUF, .attack = a_msg, .type = KCOLL_MSG_BUF, .len = BIG,
     .nsegs = 0, .r1 = 16, EP)
CASE(buf_total_max_flood, .v = V_BUF, .attack = a_msg, .type = KCOLL_MSG_BUF, .len = BIG,
     .seq = 10, .seq_step = 1, .nsegs = 1, .r1 = 65535, .repeat = 64, EP, .mem_kb = 8192)
CASE(buf_out_of_order, .v = V_BUF, .attack = a_buf_out_of_order, EP)
CASE(buf_part_repeated, .v = V_BUF, .attack = a_buf_dup_part, EP)
CASE(buf_total_changes, .v = V_BUF, .attack = a_buf_contradict, EP)
CASE(buf_other_length, .v = V_BUF, .attack = a_buf_len, .status = -EINVAL)
/* BYE. */
CASE(bye_fails_pending, .attack = a_msg, .type = KCOLL_MSG_BYE, .status = -ECONNRESET)
CASE(bye_then_eager, .attack = a_bye_then, .type = KCOLL_MSG_EAGER, .len = SMALL,
     .r1_tag = 1, .status = -ECONNRESET)
CASE(bye_twice, .attack = a_msg, .type = KCOLL_MSG_BYE, .repeat = 2, .status = -ECONNRESET)
CASE(bye_truncated, .attack = a_msg, .type = KCOLL_MSG_BYE, .bytes = 12, EP)
/* A BYE's count of our sends it took settles only sends that had their CTS. */
CASE(bye_overstates_taken, .v = V_SEND_BIG, .attack = a_msg, .type = KCOLL_MSG_BYE,
     .seq = 0xffffffff, .status = -ECONNRESET)
CASE(bye_takes_without_cts, .v = V_SEND_SMALL, .attack = a_msg, .type = KCOLL_MSG_BYE,
     .seq = 1, .status = -ECONNRESET)
CASE(vanish_pending, .attack = a_vanish, .status = -ECONNRESET)
/* Collectives: a broadcast from the hostile rank. */
CASE(bcast_ok, .v = V_BCAST_SMALL, .attack = a_eager_ok)
CASE(bcast_short_eager, .v = V_BCAST_SMALL, .attack = a_eager_short, EP)
CASE(bcast_rendezvous_ok, .v = V_BCAST_BIG, .attack = a_rdv_ok)
CASE(bcast_short_done, .v = V_BCAST_BIG, .attack = a_rdv_short, EP)
/* A failed or aborted communicator refuses a new connect (it has no device any more). */
CASE(reconnect_failed_comm, .attack = a_msg, .type = 99, EP, .after = AFTER_RECONNECT,
     .rej = KCOLL_REJ_STATE)
CASE(reconnect_aborted_comm, .v = V_NONE, .after = AFTER_ABORT_RECONNECT,
     .rej = KCOLL_REJ_STATE)
/*
 * A rank that never posts a receive but keeps talking (finding 6): the victim's READY
 * meets RNR NAKs (rxe 6.1 retries them for ever), its receive's CTS waits behind it, and
 * the liveness watchdog saw the NOPs: the receive never ended.  Now a send queue that has
 * not moved for op_timeout_ms fails the communicator.
 */
CASE(deaf_peer_stalls_send_queue, .v = V_RECV_BIG, .deaf = 1)

/* The victim ------------------------------------------------------------------------- */

struct vop {
	int fd;
	uint32_t comm;
	uint64_t req;
	int blocking_ret;	/* V_BUF */
	pthread_t thr;
	int has_thr;
	uint8_t *mem;
};

static void *buf_create_thread(void *arg)
{
	struct vop *o = arg;
	struct kcoll_buf_create b = {
		.size = sizeof(b), .comm = o->comm, .length = BIG,
	};

	o->blocking_ret = kt_ioctl(o->fd, KCOLL_IOC_BUF_CREATE, &b);
	return NULL;
}

static int victim_post(struct vop *o, enum vact v)
{
	struct kcoll_coll cl = {
		.size = sizeof(cl), .flags = KCOLL_COLL_NONBLOCK, .comm = o->comm,
		.coll = KCOLL_BROADCAST, .dtype = KCOLL_INT8, .root = 1,
	};
	int ret;

	o->mem = calloc(1, 2 * BIG);
	switch (v) {
	case V_RECV_SMALL:
		return kt_p2p(o->fd, o->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1, o->mem,
			      SMALL, &o->req);
	case V_RECV_BIG:
		return kt_p2p(o->fd, o->comm, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1, o->mem,
			      BIG, &o->req);
	case V_SEND_SMALL:
		return kt_p2p(o->fd, o->comm, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, 1, o->mem,
			      SMALL, &o->req);
	case V_SEND_BIG:
		return kt_p2p(o->fd, o->comm, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, 1, o->mem,
			      BIG, &o->req);
	case V_BUF:
		o->has_thr = !pthread_create(&o->thr, NULL, buf_create_thread, o);
		return o->has_thr ? 0 : -ENOMEM;
	case V_BCAST_SMALL:
	case V_BCAST_BIG:
		cl.count = v == V_BCAST_SMALL ? 1024 : BIG;
		cl.recvbuf = (uintptr_t)o->mem;
		ret = kt_ioctl(o->fd, KCOLL_IOC_COLL, &cl);
		o->req = cl.req;
		return ret;
	default:
		return 0;
	}
}

/* The outcome of the pending call within @ms: its status, or -EAGAIN if still pending. */
static int victim_outcome(struct vop *o, enum vact v, int ms)
{
	int status, ret;

	if (v == V_NONE)
		return 0;
	if (v == V_BUF) {
		double end = kt_now() + ms / 1000.0;

		/* The thread's ioctl ends by itself within op_timeout_ms at most. */
		while (kt_now() < end) {
			if (pthread_tryjoin_np(o->thr, NULL) == 0) {
				o->has_thr = 0;
				return o->blocking_ret;
			}
			usleep(10000);
		}
		return -EAGAIN;
	}
	ret = kt_wait(o->fd, o->comm, o->req, ms, &status, NULL);
	return ret ? ret : status;
}

/* The rig runs iWARP (siw) instead of RoCE: the same environment on both nodes. */
static bool iwarp(void)
{
	const char *r = getenv("RIG_RDMA");

	return r && !strcmp(r, "siw");
}

/* An error that says the peer is gone or broke the connection. */
static int lost_peer_errno(int err)
{
	return err == -ECONNRESET || err == -EIO || err == -ETIMEDOUT;
}

/*
 * The deaf-peer case: creation may already fail (its READY never delivered), else the
 * receive's registration, queued behind that READY, must fail; all within bounds.
 */
static void victim_deaf(struct __test_metadata *_metadata, const struct evil_case *c,
			const char *name, int fd)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(1) };
	struct vop o = { .fd = fd };
	double t0 = kt_now();
	int ret;

	ctl_put(name, "begin");
	ret = kt_comm_create(fd, cur_id, 0, 2, peers, 20000, &o.comm, NULL);
	ctl_put(name, "created");
	if (!ret) {
		ret = victim_post(&o, c->v);
		if (!ret)
			ret = victim_outcome(&o, c->v, 25000);
	}
	EXPECT_TRUE(lost_peer_errno(ret)) TH_LOG("%s: ended with %d", name, ret);
	TH_LOG("%s: %s after %.1f s: %d", name, o.comm ? "the receive ended" : "create ended",
	       kt_now() - t0, ret);
	/* The watchdog: op_timeout_ms (10 s) without our send queue moving, plus slack. */
	EXPECT_GT(40.0, kt_now() - t0) TH_LOG("%s: took %.1f s", name, kt_now() - t0);
	ctl_put(name, "end");
	if (o.comm)
		kt_comm_destroy(fd, o.comm);
	free(o.mem);
}

static void victim(struct __test_metadata *_metadata, const struct evil_case *c,
		   const char *name, int fd)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(1) };
	struct vop o = { .fd = fd };
	long avail0, avail1, perr;
	uint32_t failed = 0;
	int ret, out;

	avail0 = kt_proc_kb("/proc/meminfo", "MemAvailable");
	ctl_put(name, "begin");
	/* 60 s: the hostile rank connects when it gets there, on a loaded host too. */
	ret = kt_comm_create(fd, cur_id, 0, 2, peers, c->create_ms ? c->create_ms : 60000,
			     &o.comm, &failed);
	EXPECT_EQ(c->create_err, ret);
	ctl_put(name, "created");
	if (ret) {
		ctl_put(name, "end");
		return;
	}
	if (c->after == AFTER_ABORT_RECONNECT) {
		struct kcoll_comm_arg a = { .size = sizeof(a), .handle = o.comm };

		EXPECT_EQ(0, kt_ioctl(fd, KCOLL_IOC_COMM_ABORT, &a));
	}
	ret = victim_post(&o, c->v);
	EXPECT_EQ(0, ret);
	ctl_put(name, "posted");
	EXPECT_EQ(0, ctl_wait(name, "sent", 300));
	/* What the messages made us keep, before a failure would release it. */
	usleep(200000);
	avail1 = kt_proc_kb("/proc/meminfo", "MemAvailable");

	out = -EAGAIN;
	if (c->drop) {
		/*
		 * Ignored: the call is still pending, the comm ready; then it completes.  Over
		 * iWARP a flood may outrun the receives the victim reposts: iWARP has no RNR
		 * flow control, so that is a connection error by protocol (the call ends with
		 * a lost peer, a defined error) -- on a loaded host it happens.
		 */
		out = victim_outcome(&o, c->v, 500);
		if (!(iwarp() && c->repeat > 1 && lost_peer_errno(out))) {
			EXPECT_EQ(-EAGAIN, out);
			EXPECT_EQ(0, comm_attr(cur_id, "state"));
			out = -EAGAIN;
		} else {
			TH_LOG("%s: iWARP: the flood outran the receives: %d", name, out);
		}
		ctl_put(name, "finish");
		EXPECT_EQ(0, ctl_get(name, "finished", NULL, 0));
	}
	/* Unless it ended already (an iWARP flood above: a defined error, nothing to wait). */
	if (out == -EAGAIN) {
		out = victim_outcome(&o, c->v, 10000);
		if (!c->any) {
			if (c->status_alt && out == c->status_alt)
				out = c->status;
			/*
			 * An RDMA WRITE on iWARP completes once TCP took it: the peer's
			 * TERMINATE for a bad key may come after the send reported success.
			 * Nothing was written here, and the peer's own receive is its loss.
			 */
			if (c->iwarp_ok && iwarp() && !out) {
				TH_LOG("%s: iWARP: the WRITE completed before the peer objected",
				       name);
				out = c->status;
			}
			EXPECT_EQ(c->status, out) {
				TH_LOG("%s: the pending call ended with %d", name, out);
			}
		} else {
			EXPECT_NE(-EAGAIN, out);
		}
	}
	perr = comm_attr(cur_id, "proto_errors");
	if (c->proto) {
		/* The failure lands a moment after the call's end on a repeated DONE. */
		usleep(c->any ? 500000 : 0);
		perr = comm_attr(cur_id, "proto_errors");
		EXPECT_EQ(-EPROTO, (int)comm_attr(cur_id, "error"));
		if (perr < 0)
			TH_LOG("%s: this module counts no protocol errors", name);
		else
			EXPECT_LE(1, perr);
	}
	if (c->mem_kb)
		EXPECT_GE(c->mem_kb, avail0 - avail1) {
			TH_LOG("%s: MemAvailable dropped by %ld KiB", name, avail0 - avail1);
		}
	if (c->after != AFTER_NONE) {
		ctl_put(name, "reconnect");
		EXPECT_EQ(0, ctl_get(name, "reconnected", NULL, 0));
	}
	if (o.has_thr)
		pthread_join(o.thr, NULL);
	ctl_put(name, "end");
	kt_comm_destroy(fd, o.comm);
	free(o.mem);
}

/*
 * After our READY, what kcoll's own connecting side does (kcoll_comm_nudge()): Soft-iWARP
 * in 6.1 can miss the first message after its MPA reply until more data arrives, and then
 * the victim's create waits out its timeout for a READY that sits in its socket.  So send
 * a NOP every half second until the victim's READY (or anything after it) is here, or its
 * create has ended (a line on the control channel).  Only that READY is consumed.
 */
static void nudge_until_ready(struct evil_conn *e)
{
	struct ev_wire nop = ev_msg(KCOLL_MSG_NOP, 0, 0);
	double end = kt_now() + 120;
	int i;

	while (kt_now() < end && !e->broken) {
		struct pollfd pf = { .fd = ctl_fd, .events = POLLIN };

		for (i = 0; i < 5; i++) {
			ev_poll(e, 100);
			if (e->qhead != e->qtail) {
				const struct kcoll_wire_hdr *w = (void *)e->q[e->qhead % EV_QLEN].buf;

				if (w->type == KCOLL_MSG_READY)
					e->qhead++;
				return;
			}
		}
		if (poll(&pf, 1, 0) > 0)
			return;
		ev_send(e, &nop, sizeof(nop));
	}
}

/* The hostile rank's side of a case. */
static void hostile(struct __test_metadata *_metadata, const struct evil_case *c,
		    const char *name)
{
	struct kcoll_wire_hello h = ev_hello(cur_id);
	/* The victim's CTS, with its segments: a whole slot. */
	static uint8_t cts_buf[EV_SLOT];
	struct kcoll_wire_cts *cts = (void *)cts_buf, *m;
	struct evil_conn e = {};
	char word[32];
	int ret;

	memset(cts_buf, 0, sizeof(cts_buf));
	ASSERT_EQ(0, ctl_get(name, "begin", NULL, 0));
	if (c->rej && c->pre) {
		/* Let the victim's comm exist first: the refusal must come from it. */
		usleep(300000);
		if (c->pre != p_duplicate) {
			c->pre(&e, c, &no_cts);
			if (c->rej_alt && last_rej == c->rej_alt)
				last_rej = c->rej;
			EXPECT_EQ(c->rej, last_rej);
		}
	}
	ret = ev_join(&e, &h, sizeof(h), 60000);	/* as the victim's create */
	ASSERT_EQ(0, ret);
	if (c->rej && c->pre == p_duplicate) {
		c->pre(&e, c, &no_cts);
		EXPECT_EQ(c->rej, last_rej);
	} else if (c->pre && !c->rej) {
		c->pre(&e, c, &no_cts);
	}
	if (!c->no_ready) {
		struct ev_wire r = ev_msg(KCOLL_MSG_READY, 0, 0);

		ev_send(&e, &r, sizeof(r));
		if (!c->deaf)
			nudge_until_ready(&e);
	}
	ASSERT_EQ(0, ctl_get(name, "created", NULL, 0));
	if (c->deaf) {
		/*
		 * Deaf but not silent: a NOP every 300 ms keeps the victim's liveness
		 * watchdog quiet, so only a bounded send queue (finite RNR retries, a
		 * bounded registration wait) can end the victim's call.
		 */
		struct ev_wire nop = ev_msg(KCOLL_MSG_NOP, 0, 0);
		struct pollfd pf = { .fd = ctl_fd, .events = POLLIN };

		do
			ev_send(&e, &nop, sizeof(nop));
		while (poll(&pf, 1, 300) == 0);
		ctl_get(name, NULL, word, sizeof(word));
		ev_close(&e);
		return;
	}
	/* "end" when the victim's create failed (as expected or not). */
	if (ctl_get(name, NULL, word, sizeof(word)) || strcmp(word, "posted")) {
		ev_close(&e);
		return;
	}
	switch (c->v) {
	case V_RECV_SMALL:
	case V_RECV_BIG:
	case V_BCAST_SMALL:
	case V_BCAST_BIG:
		m = ev_expect(&e, KCOLL_MSG_CTS, 10000);
		EXPECT_NE(NULL, m);
		if (m)
			memcpy(cts, m, EV_SLOT);
		break;
	case V_SEND_SMALL:
		EXPECT_NE(NULL, ev_expect(&e, KCOLL_MSG_EAGER, 10000));
		break;
	case V_BUF:
		EXPECT_NE(NULL, ev_expect(&e, KCOLL_MSG_BUF, 10000));
		break;
	default:
		break;
	}
	if (c->attack)
		c->attack(&e, c, cts);
	ctl_put(name, "sent");
	for (;;) {
		if (ctl_get(name, NULL, word, sizeof(word)))
			break;
		if (!strcmp(word, "finish")) {
			a_finish(&e, c->v, cts);
			ctl_put(name, "finished");
		} else if (!strcmp(word, "reconnect")) {
			struct evil_conn x;
			struct kcoll_sockaddr a0 = kt_addr(0), a1 = kt_addr(1);

			ret = ev_connect(&x, &a1, &a0, &h, sizeof(h));
			ev_close(&x);
			EXPECT_EQ(c->rej, ret);
			ctl_put(name, "reconnected");
		} else if (!strcmp(word, "end")) {
			break;
		}
	}
	ev_close(&e);
}

/*
 * Both nodes start a case together ("at") and leave it together ("done"): a node that fell
 * behind (its create timed out on a loaded host, an assertion ended its side early) would
 * otherwise meet the other's next case with this case's communicator id, and every later
 * case would fail.  The control channel's reads time out after a minute: wait up to @secs.
 */
static int ctl_meet(const char *name, const char *word, int secs)
{
	double end = kt_now() + secs;

	ctl_put(name, word);
	if (!strcmp(word, "done") && !strcmp(done_seen, name))
		return 0;
	while (kt_now() < end)
		if (!ctl_get(name, word, NULL, 0))
			return 0;
	return -1;
}

/*
 * Whether this node takes part in @c (SKIP otherwise).  In the test body, not in the
 * fixture setup: this harness runs the body after a SKIP in the setup.
 */
static const char *evil_skip(const struct evil_case *c)
{
	const char *skip = getenv("EVIL_SKIP"), *only = getenv("EVIL_ONLY");
	char tok[96];

	if (kt_nranks() < 2 || kt_rank() > 1 || ctl_fd < 0)
		return "runs on nodes 0 and 1 of a cluster";
	/* EVIL_SKIP / EVIL_ONLY: comma-separated case names, for bisecting a run. */
	snprintf(tok, sizeof(tok), ",%s,", c->name);
	if (skip && strstr(skip, tok))
		return "in EVIL_SKIP";
	if (only && !strstr(only, tok))
		return "not in EVIL_ONLY";
	return NULL;
}

FIXTURE_SETUP(evil)
{
	self->fd = -1;
}

FIXTURE_TEARDOWN(evil)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->met)
		EXPECT_EQ(0, ctl_meet(variant->c.name, "done", 200));
}

TEST_F_TIMEOUT(evil, case, 450)
{
	const char *name = variant->c.name, *why = evil_skip(&variant->c);

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, ctl_meet(name, "at", 200));
	self->met = true;
	if (kt_rank() == 0) {
		self->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->fd);
	}
	cur_id = kt_comm_id(name, 11);
	ev_deaf = variant->c.deaf;
	if (kt_rank() == 0 && variant->c.deaf)
		victim_deaf(_metadata, &variant->c, name, self->fd);
	else if (kt_rank() == 0)
		victim(_metadata, &variant->c, name, self->fd);
	else
		hostile(_metadata, &variant->c, name);
}

/* After all that: the victim's slab is where it was, and it serves a proper rank 1. */
FIXTURE(zz_after) {
};

FIXTURE_SETUP(zz_after)
{
}

FIXTURE_TEARDOWN(zz_after)
{
}

TEST_F_TIMEOUT(zz_after, still_serves_and_slab_bounded, 120)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(1) };
	int fd, ret;
	uint32_t comm;
	long slab;

	if (kt_nranks() < 2 || kt_rank() > 1 || ctl_fd < 0)
		SKIP(return, "runs on nodes 0 and 1 of a cluster");
	fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ret = kt_comm_create(fd, kt_comm_id("evil-after", 11), kt_rank(), 2, peers, 60000,
			     &comm, NULL);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, kt_barrier(fd, comm));
	EXPECT_EQ(0, kt_barrier(fd, comm));
	kt_comm_destroy(fd, comm);
	close(fd);
	/* Freed objects may linger in per-CPU caches: allow a few MiB. */
	slab = kt_proc_kb("/proc/meminfo", "Slab");
	EXPECT_GE(16384, slab - slab_start_kb) {
		TH_LOG("Slab grew by %ld KiB over the run", slab - slab_start_kb);
	}
}

int main(int argc, char **argv)
{
	if (kt_nranks() >= 2 && kt_rank() <= 1)
		ctl_fd = ctl_open();
	slab_start_kb = kt_proc_kb("/proc/meminfo", "Slab");
	return test_harness_run(argc, argv);
}
