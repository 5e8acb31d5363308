/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll_evil_test's cases: what the victim does while the hostile rank acts, and the
 * hostile rank's actions (the messages it sends), built on kcoll_evil_peer.h.
 */
#ifndef KCOLL_EVIL_CASES_H
#define KCOLL_EVIL_CASES_H

#include "kcoll_evil_peer.h"

#define SMALL		64		/* an eager-only receive */
#define BIG		65536		/* a rendezvous receive */

/* What the victim does while the hostile rank acts. */
enum vact { V_RECV_SMALL, V_RECV_BIG, V_SEND_SMALL, V_SEND_BIG, V_BUF, V_BCAST_SMALL,
	    V_BCAST_BIG, V_NONE };

/* After the verdict: nothing, or the hostile rank connects again (finding 2). */
enum vafter { AFTER_NONE, AFTER_RECONNECT, AFTER_ABORT_RECONNECT };

struct evil_case;
typedef void (*attack_fn)(struct evil_conn *e, const struct evil_case *c,
			  const struct kcoll_wire_cts *cts);

struct evil_case {
	const char *name;
	enum vact v;
	attack_fn pre;		/* before READY (hello and READY cases) */
	attack_fn attack;	/* once the victim's call is pending */
	int no_ready;		/* the hostile rank never says READY */
	int create_ms;		/* COMM_CREATE timeout (default 60 s) */
	int create_err;		/* what COMM_CREATE returns */
	int status;		/* what the pending call ends with */
	int status_alt;		/* ... or this (when both are defined outcomes) */
	int iwarp_ok;		/* iWARP: the call may also succeed (see victim()) */
	int drop;		/* ignored: the call stays pending, then completes */
	int any;		/* any defined outcome (bounded, no splat) will do */
	int proto;		/* a protocol error must be counted */
	int mem_kb;		/* MemAvailable may drop at most this while the comm lives */
	enum vafter after;
	int rej;		/* the reject reason the hostile connect expects */
	int rej_alt;		/* ... or this one (IB CM pads a short hello with zeros) */
	/* the generic message (a_msg) */
	uint8_t type;
	uint32_t seq;
	uint64_t len;
	uint32_t wstatus;
	uint16_t nsegs;
	uint64_t r1;
	int r1_tag;		/* w64: the tag of the victim's CTS */
	uint32_t bytes;		/* SEND length; 0: header + nsegs segments (+ len for EAGER) */
	int repeat;
	int seq_step;
	int magic_bad;
	int deaf;		/* the hostile rank posts no receive (kcoll_evil_peer.h) */
};

/* The hostile rank's actions --------------------------------------------------------- */

static const struct kcoll_wire_cts no_cts;

/* Fill slot @m with the case's message number @k; return its length. */
static uint32_t build(const struct evil_case *c, uint8_t *buf, int k,
		      const struct kcoll_wire_cts *cts)
{
	struct ev_wire *m = (void *)buf;
	uint32_t i, n;

	memset(buf, 0, EV_SLOT);
	*m = ev_msg(c->type, c->seq + k * c->seq_step, c->len);
	if (c->magic_bad)
		m->hdr.magic = htonl(0x12345678);
	m->w32 = htonl(c->wstatus);
	m->hdr.nsegs = htons(c->nsegs);
	m->w64 = htobe64(c->r1_tag ? be64toh(cts->tag) : c->r1);
	for (i = 0; i < c->nsegs && i < KCOLL_WIRE_MAX_SEGS; i++) {
		m->segs[i].addr = htobe64(0x1000 * (i + 1));
		m->segs[i].rkey = htonl(0x1234);
		m->segs[i].len = htonl(4096);
	}
	if (c->type == KCOLL_MSG_EAGER)
		for (i = 0; i < KCOLL_WIRE_EAGER_MAX; i++)
			((uint8_t *)m->segs)[i] = (uint8_t)(i * 7 + 1);
	n = c->bytes;
	if (!n) {
		n = sizeof(*m) + c->nsegs * sizeof(struct kcoll_wire_seg);
		if (c->type == KCOLL_MSG_EAGER)
			n = sizeof(*m) + c->len;
	}
	return n > EV_SLOT ? EV_SLOT : n;
}

/* The generic attack: the case's message, @repeat times.  Send errors (the victim hung up
 * on us after the first bad one) end it. */
static void a_msg(struct evil_conn *e, const struct evil_case *c, const struct kcoll_wire_cts *cts)
{
	static uint8_t buf[EV_SLOT];
	int k, n = c->repeat ? c->repeat : 1;

	for (k = 0; k < n; k++) {
		uint32_t len = build(c, buf, k, cts);

		if (ev_send(e, buf, len))
			break;
	}
}

/* Send what the victim's call needs to complete properly. */
static void a_finish(struct evil_conn *e, enum vact v, const struct kcoll_wire_cts *cts)
{
	struct { struct ev_wire m; uint8_t data[SMALL]; } x = {};

	switch (v) {
	case V_RECV_SMALL:
		x.m = ev_msg(KCOLL_MSG_EAGER, 0, SMALL);
		x.m.w64 = cts->tag;
		memset(x.data, 0x5a, SMALL);
		ev_send(e, &x, sizeof(x));
		break;
	case V_SEND_SMALL:
		x.m = ev_msg(KCOLL_MSG_CTS, 0, SMALL);
		ev_send(e, &x.m, sizeof(x.m));
		break;
	default:
		break;
	}
}

/* Valid rendezvous into the victim's receive, optionally short: write, then DONE. */
static void rdv_into(struct evil_conn *e, const struct kcoll_wire_cts *cts, uint64_t bytes,
		     uint64_t done_len)
{
	struct ev_wire d;
	uint64_t off = 0;
	uint16_t i;

	memset(ev_data(e), 0x6b, bytes);
	for (i = 0; i < ntohs(cts->hdr.nsegs) && off < bytes; i++) {
		uint32_t l = ntohl(cts->segs[i].len);

		if (l > bytes - off)
			l = bytes - off;
		if (ev_write(e, off, l, be64toh(cts->segs[i].addr), ntohl(cts->segs[i].rkey)))
			return;
		off += l;
	}
	d = ev_msg(KCOLL_MSG_DONE, ntohl(cts->seq), done_len);
	ev_send(e, &d, sizeof(d));
}

static void a_rdv_ok(struct evil_conn *e, const struct evil_case *c,
		     const struct kcoll_wire_cts *cts)
{
	rdv_into(e, cts, be64toh(cts->capacity), be64toh(cts->capacity));
}

static void a_rdv_short(struct evil_conn *e, const struct evil_case *c,
			const struct kcoll_wire_cts *cts)
{
	rdv_into(e, cts, 8192, 8192);
}

/* A DONE repeated after a proper rendezvous. */
static void a_rdv_twice(struct evil_conn *e, const struct evil_case *c,
			const struct kcoll_wire_cts *cts)
{
	struct ev_wire d = ev_msg(KCOLL_MSG_DONE, 0, BIG);

	rdv_into(e, cts, BIG, BIG);
	usleep(200000);
	ev_send(e, &d, sizeof(d));
}

/* EAGER for a collective step, @len bytes with the step's tag. */
static void eager_tagged(struct evil_conn *e, const struct kcoll_wire_cts *cts, uint64_t len)
{
	static uint8_t buf[EV_SLOT];
	struct ev_wire *m = (void *)buf;

	*m = ev_msg(KCOLL_MSG_EAGER, ntohl(cts->seq), len);
	m->w64 = cts->tag;
	memset(m->segs, 0x33, len);
	ev_send(e, buf, sizeof(*m) + len);
}

static void a_eager_ok(struct evil_conn *e, const struct evil_case *c,
		       const struct kcoll_wire_cts *cts)
{
	eager_tagged(e, cts, be64toh(cts->capacity));
}

static void a_eager_short(struct evil_conn *e, const struct evil_case *c,
			  const struct kcoll_wire_cts *cts)
{
	eager_tagged(e, cts, be64toh(cts->capacity) / 2);
}

/* A proper EAGER, then the same again (a receive already completed: seq 0 is old). */
static void a_eager_replay(struct evil_conn *e, const struct evil_case *c,
			   const struct kcoll_wire_cts *cts)
{
	eager_tagged(e, cts, SMALL);
	usleep(300000);
	eager_tagged(e, cts, SMALL);
}

/* The victim's send of BIG: a CTS announcing our memory (valid or not). */
static void cts_for_send(struct evil_conn *e, uint32_t rkey_delta, uint64_t addr_delta)
{
	struct { struct ev_wire m; struct kcoll_wire_seg s; } x = {};

	x.m = ev_msg(KCOLL_MSG_CTS, 0, BIG);
	x.m.hdr.nsegs = htons(1);
	x.s.addr = htobe64((uintptr_t)ev_data(e) + addr_delta);
	x.s.rkey = htonl(e->mr->rkey + rkey_delta);
	x.s.len = htonl(BIG);
	ev_send(e, &x, sizeof(x));
}

static void a_cts_send_ok(struct evil_conn *e, const struct evil_case *c,
			  const struct kcoll_wire_cts *cts)
{
	cts_for_send(e, 0, 0);
}

static void a_cts_bad_rkey(struct evil_conn *e, const struct evil_case *c,
			   const struct kcoll_wire_cts *cts)
{
	cts_for_send(e, 0x100, 0);
}

static void a_cts_wrap_addr(struct evil_conn *e, const struct evil_case *c,
			    const struct kcoll_wire_cts *cts)
{
	cts_for_send(e, 0, 0ULL - (uintptr_t)ev_data(e) - 16);
}

/* A proper BUF announcement of our BIG buffer: 16 segments of one page. */
static void buf_announce(struct evil_conn *e, uint32_t seq, uint16_t first, uint16_t n,
			 uint64_t total, uint64_t len)
{
	static uint8_t buf[EV_SLOT];
	struct ev_wire *m = (void *)buf;
	uint16_t i;

	*m = ev_msg(KCOLL_MSG_BUF, seq, len);
	m->w32 = htonl(first);
	m->w64 = htobe64(total);
	m->hdr.nsegs = htons(n);
	for (i = 0; i < n; i++) {
		m->segs[i].addr = htobe64((uintptr_t)ev_data(e) + 4096 * (first + i));
		m->segs[i].rkey = htonl(e->mr->rkey);
		m->segs[i].len = htonl(4096);
	}
	ev_send(e, buf, sizeof(*m) + n * sizeof(struct kcoll_wire_seg));
}

static void a_buf_ok(struct evil_conn *e, const struct evil_case *c,
		     const struct kcoll_wire_cts *cts)
{
	buf_announce(e, 0, 0, 16, 16, BIG);
}

static void a_buf_parts(struct evil_conn *e, const struct evil_case *c,
			const struct kcoll_wire_cts *cts)
{
	buf_announce(e, 0, 0, 254, 300, BIG);
	buf_announce(e, 0, 254, 46, 300, BIG);
}

static void a_buf_future(struct evil_conn *e, const struct evil_case *c,
			 const struct kcoll_wire_cts *cts)
{
	buf_announce(e, 1, 0, 16, 16, BIG);
	buf_announce(e, 0, 0, 16, 16, BIG);
}

static void a_buf_out_of_order(struct evil_conn *e, const struct evil_case *c,
			       const struct kcoll_wire_cts *cts)
{
	buf_announce(e, 0, 8, 8, 16, BIG);
	buf_announce(e, 0, 0, 8, 16, BIG);
}

static void a_buf_dup_part(struct evil_conn *e, const struct evil_case *c,
			   const struct kcoll_wire_cts *cts)
{
	buf_announce(e, 0, 0, 8, 16, BIG);
	buf_announce(e, 0, 0, 8, 16, BIG);
}

static void a_buf_contradict(struct evil_conn *e, const struct evil_case *c,
			     const struct kcoll_wire_cts *cts)
{
	buf_announce(e, 0, 0, 8, 16, BIG);
	buf_announce(e, 0, 8, 8, 17, BIG);
}

static void a_buf_len(struct evil_conn *e, const struct evil_case *c,
		      const struct kcoll_wire_cts *cts)
{
	buf_announce(e, 0, 0, 16, 16, 2 * BIG);
}

/* BYE, then more. */
static void a_bye_then(struct evil_conn *e, const struct evil_case *c,
		       const struct kcoll_wire_cts *cts)
{
	struct ev_wire m = ev_msg(KCOLL_MSG_BYE, 0, 0);

	ev_send(e, &m, sizeof(m));
	a_msg(e, c, cts);
}

/* Disconnect without BYE. */
static void a_vanish(struct evil_conn *e, const struct evil_case *c,
		     const struct kcoll_wire_cts *cts)
{
	rdma_disconnect(e->id);
	e->established = 0;
}

/* Before READY: a second connect of the same rank while the first is up. */
static void p_duplicate(struct evil_conn *e, const struct evil_case *c,
			const struct kcoll_wire_cts *cts);

/* Hello cases: a bad connect first, whose refusal must carry c->rej. */
struct hello_bad {
	int len;		/* private data bytes; 0: none */
	uint32_t magic;
	uint8_t version;
	uint64_t comm_delta;
	uint32_t src, dst, nranks;
	uint32_t reserved;
	int mac_bad;		/* a MAC under another secret than the communicator's */
};

static uint64_t cur_id;
static int last_rej;

static void bad_hello(const struct hello_bad *b)
{
	struct kcoll_sockaddr a0 = kt_addr(0), a1 = kt_addr(1);
	struct kcoll_wire_hello h = ev_hello(cur_id + b->comm_delta);
	struct evil_conn x;

	if (b->magic)
		h.magic = htonl(b->magic);
	if (b->version)
		h.version = b->version;
	h.src_rank = htonl(b->src);
	h.dst_rank = htonl(b->dst);
	h.nranks = htonl(b->nranks);
	h.reserved1 = htonl(b->reserved);
	/* A rank holding the secret MACs what it sends: only the field under test is wrong. */
	ev_hello_seal(&h, cur_id);
	if (b->mac_bad)
		h.mac ^= htobe64(1);
	last_rej = ev_connect(&x, &a1, &a0, &h, b->len);
	ev_close(&x);
}

#define HELLO(fn, ...)								\
static void fn(struct evil_conn *e, const struct evil_case *c,			\
	       const struct kcoll_wire_cts *cts)				\
{										\
	static const struct hello_bad b = { __VA_ARGS__ };			\
	bad_hello(&b);								\
}

HELLO(h_none, .len = 0, .src = 1, .nranks = 2)
HELLO(h_short, .len = 8, .src = 1, .nranks = 2)
HELLO(h_magic, .len = KCOLL_WIRE_HELLO_SIZE, .magic = 0x4b434f4d, .src = 1, .nranks = 2)
HELLO(h_version1, .len = KCOLL_WIRE_HELLO_SIZE, .version = 1, .src = 1, .nranks = 2)
HELLO(h_version255, .len = KCOLL_WIRE_HELLO_SIZE, .version = 255, .src = 1, .nranks = 2)
HELLO(h_comm, .len = KCOLL_WIRE_HELLO_SIZE, .comm_delta = 1, .src = 1, .nranks = 2)
HELLO(h_nranks, .len = KCOLL_WIRE_HELLO_SIZE, .src = 1, .nranks = 3)
HELLO(h_src_self, .len = KCOLL_WIRE_HELLO_SIZE, .src = 0, .nranks = 2)
HELLO(h_src_big, .len = KCOLL_WIRE_HELLO_SIZE, .src = 7, .nranks = 2)
HELLO(h_src_max, .len = KCOLL_WIRE_HELLO_SIZE, .src = 0xffffffff, .nranks = 2)
HELLO(h_dst, .len = KCOLL_WIRE_HELLO_SIZE, .src = 1, .dst = 1, .nranks = 2)
HELLO(h_nranks0, .len = KCOLL_WIRE_HELLO_SIZE, .src = 1, .nranks = 0)
HELLO(h_mac, .len = KCOLL_WIRE_HELLO_SIZE, .src = 1, .nranks = 2, .mac_bad = 1)
HELLO(h_v2_length, .len = 32, .src = 1, .nranks = 2)

static void p_duplicate(struct evil_conn *e, const struct evil_case *c,
			const struct kcoll_wire_cts *cts)
{
	static const struct hello_bad b = { .len = KCOLL_WIRE_HELLO_SIZE, .src = 1, .nranks = 2 };

	bad_hello(&b);
}

/* READY cases: messages before the READY that completes the comm. */
static void p_msg(struct evil_conn *e, const struct evil_case *c,
		  const struct kcoll_wire_cts *cts)
{
	a_msg(e, c, &no_cts);
}

#endif /* KCOLL_EVIL_CASES_H */
