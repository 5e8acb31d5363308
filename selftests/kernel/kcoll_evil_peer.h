/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hostile rank of kcoll_evil_test: kcoll's wire protocol spoken by hand over librdmacm
 * and libibverbs (Documentation/wire.rst), so that any message, right or wrong, can be sent
 * to a real kcoll communicator.  One struct evil_conn is one rdma_cm connection; it keeps
 * its receives posted and the messages that arrive in a small queue.
 */
#ifndef KCOLL_EVIL_PEER_H
#define KCOLL_EVIL_PEER_H

#include <endian.h>
#include <poll.h>
#include <stddef.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../../kmod/kcoll_wire.h"
#include "../lib/kcoll_siphash.h"

#define EV_PORT		18600		/* kcoll's default listen_port */
#define EV_NRX		64
#define EV_NTX		64
#define EV_SLOT		4096
#define EV_DATA		(1 << 20)	/* memory the victim may write into, or we write from */
#define EV_QLEN		256

struct evil_msg {
	uint32_t len;
	uint8_t buf[EV_SLOT];
};

struct evil_conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;			/* EV_NRX receive slots, EV_NTX send slots, EV_DATA */
	unsigned int tx_next;
	int established;
	int broken;			/* a work request completed in error */
	struct evil_msg q[EV_QLEN];	/* arrived, not taken yet */
	unsigned int qhead, qtail;
};

static inline uint8_t *ev_rx_slot(struct evil_conn *e, int i) { return e->mem + i * EV_SLOT; }
static inline uint8_t *ev_tx_slot(struct evil_conn *e, int i)
{
	return e->mem + (EV_NRX + i) * EV_SLOT;
}
static inline uint8_t *ev_data(struct evil_conn *e) { return e->mem + (EV_NRX + EV_NTX) * EV_SLOT; }

/* The next rdma_cm event within @ms, or NULL. */
static struct rdma_cm_event *ev_cm_wait(struct evil_conn *e, int ms)
{
	struct pollfd p = { .fd = e->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, ms) <= 0)
		return NULL;
	if (rdma_get_cm_event(e->ch, &ev))
		return NULL;
	return ev;
}

static int ev_post_rx(struct evil_conn *e, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ev_rx_slot(e, i), .length = EV_SLOT, .lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(e->id->qp, &wr, &bad);
}

static void ev_close(struct evil_conn *e)
{
	if (!e->ch)
		return;
	if (e->established)
		rdma_disconnect(e->id);
	if (e->id && e->id->qp)
		rdma_destroy_qp(e->id);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->id)
		rdma_destroy_id(e->id);
	rdma_destroy_event_channel(e->ch);
	free(e->mem);
	memset(e, 0, sizeof(*e));
}

/* A message arrived: keep a copy in the queue (while there is room), repost its slot. */
static void ev_queue_rx(struct evil_conn *e, const struct ibv_wc *wc)
{
	if ((e->qtail - e->qhead) < EV_QLEN) {
		struct evil_msg *m = &e->q[e->qtail++ % EV_QLEN];

		m->len = wc->byte_len;
		memcpy(m->buf, ev_rx_slot(e, wc->wr_id), wc->byte_len);
	}
	ev_post_rx(e, wc->wr_id);
}

/*
 * A deaf rank posts no receive at all: every message sent to it meets an RNR NAK, so the
 * sender's send queue stalls until its RNR retries run out.
 */
static int ev_deaf;

/* Handle completions for up to @ms: arrived messages go to the queue. */
static void ev_poll(struct evil_conn *e, int ms)
{
	double end = kt_now() + ms / 1000.0;
	struct ibv_wc wc[16];
	int n, i;

	do {
		n = ibv_poll_cq(e->cq, 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				e->broken = 1;
				continue;
			}
			if (wc[i].opcode & IBV_WC_RECV)
				ev_queue_rx(e, &wc[i]);
		}
		if (n <= 0 && ms)
			usleep(200);
	} while (kt_now() < end);
}

/*
 * Connect to rank 0 at @dst with @hello (@hlen bytes, 0: no private data).  Returns 0 once
 * established, a positive kcoll reject reason (or 100: a reject without kcoll's data), or
 * -1 (timeout, error).
 */
static int ev_connect(struct evil_conn *e, const struct kcoll_sockaddr *src_a,
		      const struct kcoll_sockaddr *dst_a, const void *hello, int hlen)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	struct ibv_qp_init_attr qa = {};
	struct rdma_conn_param cp = {};
	struct rdma_cm_event *ev;
	int i, ret = -1;

	memset(e, 0, sizeof(*e));
	memcpy(&src.sin_addr, src_a->addr, 4);
	memcpy(&dst.sin_addr, dst_a->addr, 4);
	dst.sin_port = htons(EV_PORT);
	e->ch = rdma_create_event_channel();
	if (!e->ch || rdma_create_id(e->ch, &e->id, e, RDMA_PS_TCP))
		return -1;
	if (rdma_resolve_addr(e->id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000))
		return -1;
	ev = ev_cm_wait(e, 5000);
	if (!ev || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		goto out_ack;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(e->id, 2000))
		return -1;
	ev = ev_cm_wait(e, 5000);
	if (!ev || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		goto out_ack;
	rdma_ack_cm_event(ev);

	e->mem = aligned_alloc(4096, (EV_NRX + EV_NTX) * EV_SLOT + EV_DATA);
	if (!e->mem)
		return -1;
	memset(e->mem, 0, (EV_NRX + EV_NTX) * EV_SLOT + EV_DATA);
	e->pd = ibv_alloc_pd(e->id->verbs);
	e->cq = e->pd ? ibv_create_cq(e->id->verbs, 1024, NULL, NULL, 0) : NULL;
	if (!e->cq)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->mem, (EV_NRX + EV_NTX) * EV_SLOT + EV_DATA,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr)
		return -1;
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 512;
	qa.cap.max_recv_wr = EV_NRX;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(e->id, e->pd, &qa))
		return -1;
	for (i = 0; i < EV_NRX && !ev_deaf; i++)
		if (ev_post_rx(e, i))
			return -1;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	cp.flow_control = 1;
	cp.private_data = hlen ? hello : NULL;
	cp.private_data_len = hlen;
	if (rdma_connect(e->id, &cp))
		return -1;
	ev = ev_cm_wait(e, 10000);
	if (!ev)
		return -1;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
		e->established = 1;
		ret = 0;
	} else if (ev->event == RDMA_CM_EVENT_REJECTED) {
		const struct kcoll_wire_reject *rej = ev->param.conn.private_data;

		ret = 100;
		if (rej && ev->param.conn.private_data_len >= sizeof(*rej) &&
		    ntohl(rej->magic) == KCOLL_WIRE_MAGIC)
			ret = rej->reason;
	}
out_ack:
	if (ev)
		rdma_ack_cm_event(ev);
	return ret;
}

/* Seal @h with the MAC the tests' secret for @comm_id gives (kt_comm_secret()). */
static void ev_hello_seal(struct kcoll_wire_hello *h, uint64_t comm_id)
{
	unsigned char secret[KCOLL_SECRET_LEN];

	kt_comm_secret(comm_id, secret);
	h->mac = htobe64(kcoll_wire_mac_user(h, KCOLL_WIRE_TAG_HELLO, secret));
}

/* Rank 1's hello to rank 0 of a two-rank @comm_id: what a rank holding the secret sends. */
static struct kcoll_wire_hello ev_hello(uint64_t comm_id)
{
	struct kcoll_wire_hello h = {
		.magic = htonl(KCOLL_WIRE_MAGIC),
		.version = KCOLL_PROTO_VERSION,
		.comm_id = htobe64(comm_id),
		.src_rank = htonl(1),
		.dst_rank = htonl(0),
		.nranks = htonl(2),
	};

	ev_hello_seal(&h, comm_id);
	return h;
}

/* Connect as rank 1, retrying while rank 0 has not created the comm yet. */
static int ev_join(struct evil_conn *e, const void *hello, int hlen, int ms)
{
	struct kcoll_sockaddr a0 = kt_addr(0), a1 = kt_addr(1);
	double end = kt_now() + ms / 1000.0;
	int ret;

	for (;;) {
		ret = ev_connect(e, &a1, &a0, hello, hlen);
		if (ret == 0 || (ret != KCOLL_REJ_NOT_YET && ret != 100 && ret != -1) ||
		    kt_now() > end)
			return ret;
		ev_close(e);
		usleep(100000);
	}
}

/* SEND @len bytes of @msg; wait (briefly) for its completion.  0, or -1. */
static int ev_send(struct evil_conn *e, const void *msg, uint32_t len)
{
	unsigned int slot = e->tx_next++ % EV_NTX;
	struct ibv_sge sge = {
		.addr = (uintptr_t)ev_tx_slot(e, slot), .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1000 + slot, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	double end = kt_now() + 5;
	int n;

	if (e->broken)
		return -1;
	memcpy(ev_tx_slot(e, slot), msg, len);
	if (ibv_post_send(e->id->qp, &wr, &bad))
		return -1;
	/* Our sends complete in order: wait for this one, queueing what arrives. */
	while (kt_now() < end) {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n <= 0) {
			usleep(100);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			e->broken = 1;
			return -1;
		}
		if (wc.opcode & IBV_WC_RECV) {
			ev_queue_rx(e, &wc);
			continue;
		}
		if (wc.wr_id == wr.wr_id)
			return 0;
	}
	return -1;
}

/* RDMA WRITE @len bytes of our data region at @off to @addr/@rkey; wait for it. */
static int ev_write(struct evil_conn *e, uint64_t off, uint32_t len, uint64_t addr,
		    uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ev_data(e) + off, .length = len, .lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	double end = kt_now() + 5;

	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(e->id->qp, &wr, &bad))
		return -1;
	while (kt_now() < end) {
		if (ibv_poll_cq(e->cq, 1, &wc) <= 0) {
			usleep(100);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS)
			return -1;
		if (wc.opcode & IBV_WC_RECV) {
			ev_queue_rx(e, &wc);
			continue;
		}
		if (wc.wr_id == 7)
			return 0;
	}
	return -1;
}

/* The first queued message of @type within @ms (others of no interest are dropped). */
static void *ev_expect(struct evil_conn *e, uint8_t type, int ms)
{
	double end = kt_now() + ms / 1000.0;

	do {
		while (e->qhead != e->qtail) {
			struct evil_msg *m = &e->q[e->qhead % EV_QLEN];
			struct kcoll_wire_hdr *w = (void *)m->buf;

			e->qhead++;
			if (m->len >= KCOLL_WIRE_FIXED_SIZE && w->type == type)
				return w;
		}
		ev_poll(e, 10);
	} while (kt_now() < end);
	return NULL;
}

/*
 * The hostile rank forges every message type from one table row, also with fields a type
 * must not carry, so it writes the fixed part through this one view of the bytes of
 * kcoll_wire.h's typed messages (checked below): @seq is CTS/DONE/EAGER seq and BUF
 * buf_seq; @w32 DONE status and BUF first_seg; @len CTS capacity and DONE/EAGER/BUF len;
 * @w64 CTS/EAGER tag and BUF total_segs; @segs CTS/BUF segs and EAGER data.
 */
struct ev_wire {
	struct kcoll_wire_hdr hdr;
	uint32_t seq;
	uint32_t w32;
	uint64_t len;
	uint64_t w64;
	struct kcoll_wire_seg segs[];
};

#define EV_SAME(a, t, f)	_Static_assert(offsetof(struct ev_wire, a) == offsetof(t, f), #t "." #f)
EV_SAME(seq, struct kcoll_wire_cts, seq);
EV_SAME(seq, struct kcoll_wire_buf, buf_seq);
EV_SAME(w32, struct kcoll_wire_done, status);
EV_SAME(w32, struct kcoll_wire_buf, first_seg);
EV_SAME(len, struct kcoll_wire_cts, capacity);
EV_SAME(len, struct kcoll_wire_eager, len);
EV_SAME(w64, struct kcoll_wire_eager, tag);
EV_SAME(w64, struct kcoll_wire_buf, total_segs);
EV_SAME(segs, struct kcoll_wire_cts, segs);
EV_SAME(segs, struct kcoll_wire_eager, data);
_Static_assert(sizeof(struct ev_wire) == KCOLL_WIRE_FIXED_SIZE, "ev_wire");

/* A control message's fixed part. */
static struct ev_wire ev_msg(uint8_t type, uint32_t seq, uint64_t len)
{
	struct ev_wire m = {
		.hdr.magic = htonl(KCOLL_WIRE_MAGIC),
		.hdr.type = type,
		.seq = htonl(seq),
		.len = htobe64(len),
	};

	return m;
}

#endif /* KCOLL_EVIL_PEER_H */
