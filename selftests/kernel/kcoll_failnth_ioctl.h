/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll_failnth_test.c: the ioctls (and mmap()) under test, rank 1's part and the checks of
 * a successful call.  Included once, by kcoll_failnth_test.c (the kselftest harness wants
 * every case of a fixture in one file).
 */
#ifndef KCOLL_FAILNTH_IOCTL_H
#define KCOLL_FAILNTH_IOCTL_H

#include "kcoll_failnth.h"

/* ---- the calls under test (rank 0) and rank 1's part ---------------------------------------- */

static int call_info(struct fn *f)
{
	struct kcoll_info i = { .size = sizeof(i) };
	int ret = kt_ioctl(f->fd0, KCOLL_IOC_GET_INFO, &i);

	if (!ret && (i.abi_version != KCOLL_ABI_VERSION || !(i.features & KCOLL_FEAT_COMM)))
		return BADRESULT;
	return ret;
}

static int call_create1(struct fn *f) { return create(f->fd0, f, 0, 1, &f->c0); }
static int call_create2(struct fn *f) { return create(f->fd0, f, 0, 2, &f->c0); }

/* The new communicator is ready, on both ranks when it has two. */
static int check_ready(struct fn *f)
{
	struct kcoll_comm_query q;

	if (query(f->fd0, f->c0, &q) || q.state != KCOLL_COMM_READY)
		return BADRESULT;
	if (f->c1 && (query(f->fd1, f->c1, &q) || q.state != KCOLL_COMM_READY))
		return BADRESULT;
	return 0;
}

static int call_destroy(struct fn *f)
{
	int ret = kt_comm_destroy(f->fd0, f->c0);

	if (!ret)
		f->c0 = 0;
	return ret;
}

static int check_destroyed(struct fn *f)
{
	char p[128];
	struct stat st;

	snprintf(p, sizeof(p), KT_SYS "comms/%016llx-0", (unsigned long long)f->id);
	return stat(p, &st) ? 0 : BADRESULT;
}

static int call_abort(struct fn *f)
{
	struct kcoll_comm_arg a = { .size = sizeof(a), .handle = f->c0 };

	return kt_ioctl(f->fd0, KCOLL_IOC_COMM_ABORT, &a);
}

static int check_aborted(struct fn *f)
{
	struct kcoll_comm_query q;

	if (query(f->fd0, f->c0, &q) || q.state != KCOLL_COMM_ABORTED || q.error != -ECONNABORTED)
		return BADRESULT;
	return 0;
}

static int call_query(struct fn *f)
{
	struct kcoll_comm_query q;
	int ret = query(f->fd0, f->c0, &q);

	if (!ret && (q.state != KCOLL_COMM_READY || q.comm_id != f->id || q.nranks != 1))
		return BADRESULT;
	return ret;
}

static int call_buf_create(struct fn *f) { return buf_create(f->fd0, f->c0, &f->b0, &f->off0); }

static int check_buf(struct fn *f)
{
	f->map0 = map(f->fd0, f->off0);
	if (!f->map0)
		return BADRESULT;
	memset(f->map0, 0x5a, BUFLEN);
	return 0;
}

/* Both buffers, rank 0's not mapped: munmap() in the call would take fault points. */
static int prep_bufs_unmapped(struct fn *f)
{
	int ret = prep_bufs(f);

	munmap(f->map0, BUFLEN);
	f->map0 = NULL;
	return ret;
}

static int call_buf_destroy(struct fn *f)
{
	int ret = buf_destroy(f->fd0, f->c0, f->b0);

	if (!ret)
		f->b0 = 0;
	return ret;
}

static int call_mmap(struct fn *f)
{
	f->map0 = map(f->fd0, f->off0);
	return f->map0 ? 0 : -errno;
}

static int check_mmap(struct fn *f)
{
	memset(f->map0, 0xa5, BUFLEN);
	return ((unsigned char *)f->map0)[BUFLEN - 1] == 0xa5 ? 0 : BADRESULT;
}

static void fill(struct fn *f)
{
	unsigned int i;

	for (i = 0; i < MSG; i++)
		f->m0[i] = kt_byte(0, MSG, i);
	memset(f->m1, 0, MSG);
}

static int call_send(struct fn *f)
{
	fill(f);
	return kt_p2p(f->fd0, f->c0, KCOLL_P2P_SEND, 1, f->m0, MSG, NULL);
}

static int peer_recv(struct fn *f)
{
	return kt_p2p(f->fd1, f->c1, KCOLL_P2P_RECV, 0, f->m1, MSG, NULL);
}

static int call_send_nb(struct fn *f)
{
	fill(f);
	return kt_p2p(f->fd0, f->c0, KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, 1, f->m0, MSG, &f->req);
}

/*
 * A non-blocking call may report the injected failure later, as its request's status (a
 * failed post breaks the comm after the call returned): that errno is judged like a call's.
 */
static int wait_req(struct fn *f)
{
	int status = 0, ret;

	if (!f->req)
		return 0;
	ret = kt_wait(f->fd0, f->c0, f->req, TMO, &status, NULL);
	return ret ? ret : status;
}

static int check_sent(struct fn *f)
{
	int ret = wait_req(f);

	if (ret)
		return ret;
	return memcmp(f->m0, f->m1, MSG) ? BADRESULT : 0;
}

static int peer_send(struct fn *f)
{
	unsigned int i;

	for (i = 0; i < MSG; i++)
		f->m1[i] = kt_byte(1, MSG, i);
	return kt_p2p(f->fd1, f->c1, KCOLL_P2P_SEND, 0, f->m1, MSG, NULL);
}

static int call_recv(struct fn *f)
{
	uint64_t got = 0;
	int ret;

	memset(f->m0, 0, MSG);
	ret = kt_p2p(f->fd0, f->c0, KCOLL_P2P_RECV, 1, f->m0, MSG, &got);
	return !ret && got != MSG ? BADRESULT : ret;
}

static int check_received(struct fn *f) { return memcmp(f->m0, f->m1, MSG) ? BADRESULT : 0; }

static int p2p_buf(int fd, uint32_t comm, uint32_t flags, unsigned int peer, uint32_t h)
{
	struct kcoll_p2p p = {
		.size = sizeof(p), .flags = flags | KCOLL_P2P_BUF, .comm = comm, .peer = peer,
		.len = MSG, .buf = h,
	};

	return kt_ioctl(fd, KCOLL_IOC_P2P, &p);
}

static int call_send_buf(struct fn *f)
{
	memset(f->map0, 0x3c, MSG);
	memset(f->map1, 0, MSG);
	return p2p_buf(f->fd0, f->c0, KCOLL_P2P_SEND, 1, f->b0);
}

static int peer_recv_buf(struct fn *f) { return p2p_buf(f->fd1, f->c1, KCOLL_P2P_RECV, 0, f->b1); }

static int check_sent_buf(struct fn *f) { return memcmp(f->map0, f->map1, MSG) ? BADRESULT : 0; }

/* WAIT: rank 0 posted a receive before; the call waits for it (rank 1 sends meanwhile). */
static int prep_wait(struct fn *f)
{
	memset(f->m0, 0, MSG);
	return kt_p2p(f->fd0, f->c0, KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, 1, f->m0, MSG, &f->req);
}

static int call_wait(struct fn *f)
{
	uint64_t got = 0;
	int status = 0, ret = kt_wait(f->fd0, f->c0, f->req, TMO, &status, &got);

	if (!ret && (status || got != MSG))
		return BADRESULT;
	return ret;
}

/* Collectives: rank r contributes (r + 1) * (i + 1). */
static int coll(int fd, uint32_t comm, uint8_t c, uint32_t flags, int32_t *snd, int32_t *rcv,
		struct fn *f, uint64_t *req)
{
	struct kcoll_coll a = {
		.size = sizeof(a), .flags = flags, .comm = comm, .coll = c, .dtype = KCOLL_INT32,
		.op = KCOLL_SUM, .count = COUNT, .sendbuf = (uintptr_t)snd,
		.recvbuf = (uintptr_t)rcv, .timeout_ms = TMO,
	};
	int ret;

	if (c == KCOLL_BARRIER) {
		a.count = 0;
		a.sendbuf = a.recvbuf = 0;
	} else if (c == KCOLL_ALLGATHERV) {
		a.count = 0;
		a.counts = (uintptr_t)f->counts;
		a.displs = (uintptr_t)f->displs;
	} else if (c == KCOLL_BROADCAST) {
		a.op = 0;	/* root 0 sends from snd; every rank receives in rcv */
	}
	ret = kt_ioctl(fd, KCOLL_IOC_COLL, &a);
	if (req)
		*req = a.req;
	return ret;
}

static void fill_coll(int32_t *snd, int32_t *rcv, unsigned int rank)
{
	unsigned int i;

	for (i = 0; i < COUNT; i++) {
		snd[i] = (rank + 1) * (i + 1);
		rcv[i] = -1;
	}
}

static int call_allreduce(struct fn *f)
{
	fill_coll(f->snd0, f->rcv0, 0);
	return coll(f->fd0, f->c0, KCOLL_ALLREDUCE, 0, f->snd0, f->rcv0, f, NULL);
}

static int call_allreduce_nb(struct fn *f)
{
	fill_coll(f->snd0, f->rcv0, 0);
	return coll(f->fd0, f->c0, KCOLL_ALLREDUCE, KCOLL_COLL_NONBLOCK, f->snd0, f->rcv0, f,
		    &f->req);
}

static int peer_allreduce(struct fn *f)
{
	fill_coll(f->snd1, f->rcv1, 1);
	return coll(f->fd1, f->c1, KCOLL_ALLREDUCE, 0, f->snd1, f->rcv1, f, NULL);
}

static int check_allreduce(struct fn *f)
{
	unsigned int i;
	int ret = wait_req(f);

	if (ret)
		return ret;
	for (i = 0; i < COUNT; i++)
		if (f->rcv0[i] != 3 * (int32_t)(i + 1) ||
		    (f->c1 && f->rcv1[i] != 3 * (int32_t)(i + 1)))
			return BADRESULT;
	return 0;
}

/* One rank: the sum is the rank's own contribution. */
static int check_allreduce1(struct fn *f)
{
	return memcmp(f->snd0, f->rcv0, sizeof(f->rcv0)) ? BADRESULT : 0;
}

static int call_bcast(struct fn *f)
{
	fill_coll(f->snd0, f->rcv0, 0);
	return coll(f->fd0, f->c0, KCOLL_BROADCAST, 0, f->snd0, f->rcv0, f, NULL);
}

static int peer_bcast(struct fn *f)
{
	memset(f->rcv1, 0, sizeof(f->rcv1));
	return coll(f->fd1, f->c1, KCOLL_BROADCAST, 0, NULL, f->rcv1, f, NULL);
}

static int check_bcast(struct fn *f)
{
	if (memcmp(f->snd0, f->rcv0, sizeof(f->rcv0)) || memcmp(f->snd0, f->rcv1, sizeof(f->rcv1)))
		return BADRESULT;
	return 0;
}

static int call_barrier(struct fn *f)
{
	return coll(f->fd0, f->c0, KCOLL_BARRIER, 0, NULL, NULL, f, NULL);
}

static int peer_barrier(struct fn *f)
{
	return coll(f->fd1, f->c1, KCOLL_BARRIER, 0, NULL, NULL, f, NULL);
}

/* ALLGATHERV: rank 0 gives the first COUNT / 2 elements, rank 1 the rest. */
static void v_layout(struct fn *f)
{
	f->counts[0] = COUNT / 2;
	f->counts[1] = COUNT - COUNT / 2;
	f->displs[0] = 0;
	f->displs[1] = COUNT / 2;
}

static int call_allgatherv(struct fn *f)
{
	v_layout(f);
	fill_coll(f->snd0, f->rcv0, 0);
	return coll(f->fd0, f->c0, KCOLL_ALLGATHERV, 0, f->snd0, f->rcv0, f, NULL);
}

static int peer_allgatherv(struct fn *f)
{
	fill_coll(f->snd1, f->rcv1, 1);
	return coll(f->fd1, f->c1, KCOLL_ALLGATHERV, 0, f->snd1, f->rcv1, f, NULL);
}

static int check_allgatherv(struct fn *f)
{
	unsigned int i;

	for (i = 0; i < COUNT; i++) {
		int32_t want = i < COUNT / 2 ? f->snd0[i] : f->snd1[i - COUNT / 2];

		if (f->rcv0[i] != want || f->rcv1[i] != want)
			return BADRESULT;
	}
	return 0;
}

/* An all-reduce from and into zero-copy buffers: send at offset 0, receive at BUFLEN / 2. */
static int coll_bufs(int fd, uint32_t comm, uint32_t h, int32_t *m, unsigned int rank)
{
	struct kcoll_coll a = {
		.size = sizeof(a), .comm = comm, .coll = KCOLL_ALLREDUCE, .dtype = KCOLL_INT32,
		.op = KCOLL_SUM, .count = COUNT, .timeout_ms = TMO,
		.flags = KCOLL_COLL_SEND_BUF | KCOLL_COLL_RECV_BUF,
		.sendbuf = 0, .recvbuf = BUFLEN / 2, .send_handle = h, .recv_handle = h,
	};

	fill_coll(m, m + BUFLEN / 2 / sizeof(*m), rank);
	return kt_ioctl(fd, KCOLL_IOC_COLL, &a);
}

static int call_allreduce_buf(struct fn *f) { return coll_bufs(f->fd0, f->c0, f->b0, f->map0, 0); }
static int peer_allreduce_buf(struct fn *f) { return coll_bufs(f->fd1, f->c1, f->b1, f->map1, 1); }

static int check_allreduce_buf(struct fn *f)
{
	int32_t *r0 = (int32_t *)f->map0 + BUFLEN / 2 / 4, *r1 = (int32_t *)f->map1 + BUFLEN / 2 / 4;
	unsigned int i;

	for (i = 0; i < COUNT; i++)
		if (r0[i] != 3 * (int32_t)(i + 1) || r1[i] != 3 * (int32_t)(i + 1))
			return BADRESULT;
	return 0;
}

#endif /* KCOLL_FAILNTH_IOCTL_H */
