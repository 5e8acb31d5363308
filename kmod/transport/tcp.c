// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll TCP transport: one kernel TCP socket per peer, in the communicator's network
 * namespace, in the shape of net/rds/tcp*.c.
 *
 * Connecting: the higher rank connects (from its own table address) and sends a HELLO
 * frame; the lower rank's listener (tcp_listen.c) checks it as the RDMA listener checks
 * rdma_cm private data (auth.c) and answers ACCEPT, proving the secret too, or REJECT.
 *
 * Each peer has one ordered queue of work items (struct kcoll_tcp_item): control messages
 * (MSG frames) and writes (DATA frames) in posting order.  TCP keeps that order, so a DONE
 * arrives after the data it follows, as RDMA's write-then-send placement guarantees.  One
 * work item per peer (kcoll_tcp_io()) sends the queue, receives frames and completes what
 * the peer acknowledged; the socket's data_ready, write_space and state_change callbacks
 * only queue it (no polling thread, nothing in softirq context).
 *
 * Completion: an item is complete when TCP's cumulative ACK (snd_una) covers its last
 * byte.  Then the peer's kernel holds the bytes and no retransmission can read the pages
 * again: DATA is sent with sendpage straight from the region's pages (zero copy), and the
 * pages may be reused or unpinned once the DONE behind them completed.  Until then the
 * socket holds its own page references, so not even an early unpin frees them under it.
 * Not on a link whose route stays in this kernel (loopback, veth, bridge): there the
 * peer's socket queues our very skbs and ACKs them before its reader copied our pages,
 * so DATA is copied into the socket (tc->copy, kcoll_tcp_route_local()).
 *
 * Receiving copies straight from the socket into the destination pages (a bvec iterator
 * over them), with no bounce buffer.  Every header field is the peer's: the type, length
 * and, for DATA, the region key and offset are checked against what this comm registered
 * for remote writes (keyed_mem.c), overflow-safe.  A peer that breaks the framing has its
 * connection closed and the comm fails with our EPROTO (ECONNRESET for a write outside
 * its memory, as on the other transports).
 *
 * Locking: comm->lock guards the queues and the socket pointer; the work sends and
 * receives without it.  Teardown restores the socket callbacks under sk_callback_lock,
 * then cancels the work: nothing runs after it returns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../kcoll.h"
#include "../kcoll_nl.h"
#include "auth.h"
#include "keyed_mem.h"
#include "tcp.h"

/* Frames one run of the work receives before it yields (a peer cannot monopolise it). */
#define KCOLL_TCP_RX_BUDGET	64
/* Pages one receive call copies into. */
#define KCOLL_TCP_RX_PAGES	16

/* The kernel's own data_ready of TCP sockets, for children that inherited the listener's. */
void (*kcoll_tcp_def_data_ready)(struct sock *sk);

/* Socket callbacks: softirq or process context, socket possibly locked: only queue. */
static struct kcoll_tcp_conn *kcoll_tcp_cb_begin(struct sock *sk)
{
	struct kcoll_tcp_conn *tc;

	read_lock_bh(&sk->sk_callback_lock);
	tc = sk->sk_user_data;
	if (tc)
		queue_work(kcoll_wq, &tc->io);
	return tc;
}

static void kcoll_tcp_data_ready(struct sock *sk)
{
	struct kcoll_tcp_conn *tc = kcoll_tcp_cb_begin(sk);
	void (*orig)(struct sock *sk) = tc ? tc->orig_data_ready : sk->sk_data_ready;

	read_unlock_bh(&sk->sk_callback_lock);
	if (orig != kcoll_tcp_data_ready)
		orig(sk);
}

static void kcoll_tcp_write_space(struct sock *sk)
{
	struct kcoll_tcp_conn *tc = kcoll_tcp_cb_begin(sk);
	void (*orig)(struct sock *sk) = tc ? tc->orig_write_space : sk->sk_write_space;

	read_unlock_bh(&sk->sk_callback_lock);
	if (orig != kcoll_tcp_write_space)
		orig(sk);
	/*
	 * TCP calls write_space on an ACK only while SOCK_NOSPACE is set (tcp_check_space()):
	 * set it again, every ACK may complete items (net/rds/tcp_send.c does the same).
	 */
	if (tc && sk->sk_socket)
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
}

static void kcoll_tcp_state_change(struct sock *sk)
{
	struct kcoll_tcp_conn *tc = kcoll_tcp_cb_begin(sk);
	void (*orig)(struct sock *sk) = tc ? tc->orig_state_change : sk->sk_state_change;

	read_unlock_bh(&sk->sk_callback_lock);
	if (orig != kcoll_tcp_state_change)
		orig(sk);
}

/* Point @sock's callbacks at @tc.  Context: process; @tc built, @sock not yet in use. */
void kcoll_tcp_set_callbacks(struct kcoll_tcp_conn *tc, struct socket *sock)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	tc->orig_data_ready = sk->sk_data_ready;
	/* An accepted socket inherited the listener's: restore the kernel's own later. */
	if (tc->orig_data_ready == kcoll_tcp_listen_data_ready)
		tc->orig_data_ready = kcoll_tcp_def_data_ready;
	tc->orig_write_space = sk->sk_write_space;
	tc->orig_state_change = sk->sk_state_change;
	sk->sk_user_data = tc;
	sk->sk_data_ready = kcoll_tcp_data_ready;
	sk->sk_write_space = kcoll_tcp_write_space;
	sk->sk_state_change = kcoll_tcp_state_change;
	set_bit(SOCK_NOSPACE, &sock->flags);
	write_unlock_bh(&sk->sk_callback_lock);
}

void kcoll_tcp_restore_callbacks(struct kcoll_tcp_conn *tc, struct socket *sock)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = tc->orig_data_ready;
	sk->sk_write_space = tc->orig_write_space;
	sk->sk_state_change = tc->orig_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* Sending ------------------------------------------------------------------------------ */

/*
 * Hand @len bytes at @off of @r's pages to the socket, copied when @copy (a link that stays
 * in this kernel, kcoll_tcp_route_local()).  Return: bytes taken or -errno.
 */
static int kcoll_tcp_send_pages(struct socket *sock, struct kcoll_region *r, u64 off, u64 len,
				bool last, bool copy)
{
	u64 pos = r->first_off + off;
	struct page *page = r->pages[pos >> PAGE_SHIFT];
	size_t n = min_t(u64, len, PAGE_SIZE - offset_in_page(pos));
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL;

	if (!last || n < len)
		flags |= MSG_MORE | MSG_SENDPAGE_NOTLAST;
	/*
	 * Not sendpage for what the network must not hold a reference to (net.h), nor where
	 * the peer's socket would hold it past the ACK that completes the send.
	 */
	if (copy || !sendpage_ok(page))
		return sock_no_sendpage(sock, page, offset_in_page(pos), n, flags);
	return kernel_sendpage(sock, page, offset_in_page(pos), n, flags);
}

/* Send what is left of @it.  Return: 0 (all of it sent), -EAGAIN (socket full), -errno. */
static int kcoll_tcp_send_item(struct kcoll_tcp_conn *tc, struct socket *sock,
			       struct kcoll_tcp_item *it)
{
	u32 len = be32_to_cpu(it->hdr.len);
	u64 total = sizeof(it->hdr) + len;
	int ret;

	while (it->done < total) {
		if (it->done < sizeof(it->hdr) || it->hdr.type == KCOLL_TCP_MSG) {
			/* The header and a message are copied: small, and slab memory. */
			struct kvec v[2] = {
				{ (u8 *)&it->hdr + min_t(u64, it->done, sizeof(it->hdr)),
				  sizeof(it->hdr) - min_t(u64, it->done, sizeof(it->hdr)) },
				{ NULL, 0 },
			};
			struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };

			if (it->hdr.type == KCOLL_TCP_MSG) {
				u64 p = it->done > sizeof(it->hdr) ? it->done - sizeof(it->hdr) : 0;

				v[1].iov_base = (u8 *)it->c->msg + p;
				v[1].iov_len = len - p;
			} else {
				msg.msg_flags |= MSG_MORE;
			}
			ret = kernel_sendmsg(sock, &msg, v, 2, v[0].iov_len + v[1].iov_len);
		} else {
			u64 p = it->done - sizeof(it->hdr);

			ret = kcoll_tcp_send_pages(sock, it->r, it->off + p, len - p, true,
						   tc->copy);
		}
		if (ret <= 0)
			return ret ? ret : -EAGAIN;
		it->done += ret;
	}
	return 0;
}

static void kcoll_tcp_send(struct kcoll_tcp_conn *tc, struct socket *sock)
{
	struct kcoll_comm *comm = tc->conn->comm;
	struct kcoll_tcp_item *it;
	int ret;

	for (;;) {
		spin_lock_bh(&comm->lock);
		it = list_first_entry_or_null(&tc->unsent, struct kcoll_tcp_item, list);
		spin_unlock_bh(&comm->lock);
		if (!it)
			return;
		/* Only this work sends and takes items off @unsent: @it stays ours. */
		ret = kcoll_tcp_send_item(tc, sock, it);
		if (ret == -EAGAIN) {
			set_bit(SOCK_NOSPACE, &sock->flags);
			return;
		}
		if (ret) {
			tc->dead = true;
			return;
		}
		spin_lock_bh(&comm->lock);
		it->end_seq = READ_ONCE(tcp_sk(sock->sk)->write_seq);
		list_move_tail(&it->list, &tc->inflight);
		spin_unlock_bh(&comm->lock);
	}
}

/*
 * Give back @it (sent and acknowledged, or dropped): its slot, and for a message the
 * request reference it held, returned for the caller to put without the lock.
 * Context: comm->lock held.
 */
static struct kcoll_req *kcoll_tcp_item_done(struct kcoll_tcp_conn *tc,
					     struct kcoll_tcp_item *it, bool ok)
{
	struct kcoll_comm *comm = tc->conn->comm;
	struct kcoll_req *req = NULL;

	lockdep_assert_held(&comm->lock);
	list_move(&it->list, &tc->free);
	tc->nfree++;
	if (it->hdr.type != KCOLL_TCP_MSG)
		return NULL;
	/*
	 * A BYE dropped with its link counts as acknowledged too: that peer cannot answer any
	 * more, and destroy need not wait out its timeout for it.
	 */
	if (((struct kcoll_wire_hdr *)it->c->msg)->type == KCOLL_MSG_BYE) {
		comm->nbye_acked++;
		wake_up_all(&comm->wq);
	}
	req = it->c->req;
	it->c->req = NULL;
	list_add(&it->c->list, &tc->tx_free);
	if (atomic_read(&comm->ctrl_waiters))
		wake_up_all(&comm->wq);
	if (req && ok)
		kcoll_transport_up->acked(req);
	return req;
}

/* Complete the items the peer's TCP acknowledged (see the top of the file). */
static bool kcoll_tcp_reap(struct kcoll_tcp_conn *tc, struct socket *sock)
{
	struct kcoll_comm *comm = tc->conn->comm;
	u32 una = READ_ONCE(tcp_sk(sock->sk)->snd_una);
	struct kcoll_tcp_item *it;
	struct kcoll_req *req;
	bool any = false;

	for (;;) {
		spin_lock_bh(&comm->lock);
		it = list_first_entry_or_null(&tc->inflight, struct kcoll_tcp_item, list);
		if (!it || before(una, it->end_seq)) {
			spin_unlock_bh(&comm->lock);
			return any;
		}
		tc->moved = jiffies;
		tc->conn->last_ok = jiffies;
		req = kcoll_tcp_item_done(tc, it, true);
		spin_unlock_bh(&comm->lock);
		if (req)
			kcoll_transport_up->put(req);	/* the EAGER's, DONE's or CTS's reference */
		any = true;
	}
}

/* Receiving ---------------------------------------------------------------------------- */

/* Receive into [@buf, @buf + @len).  Return: bytes, -EAGAIN (none yet) or -errno (0: EOF). */
static int kcoll_tcp_recv_buf(struct socket *sock, void *buf, size_t len)
{
	struct kvec v = { buf, len };
	struct msghdr msg = {};
	int ret;

	ret = kernel_recvmsg(sock, &msg, &v, 1, len, MSG_DONTWAIT);
	return ret ? ret : -ECONNRESET;
}

/*
 * Receive up to @len bytes of a DATA frame straight into the pages of region @key at @off,
 * looked up (and bounds checked) for this very copy, under the key lock: nothing lands in
 * memory revoked since.  Return: bytes, -EAGAIN, -EFAULT (no such memory) or -errno.
 */
static int kcoll_tcp_recv_data(struct kcoll_tcp_conn *tc, struct socket *sock, u32 key,
			       u64 off, u64 len)
{
	struct bio_vec bv[KCOLL_TCP_RX_PAGES];
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
	struct kcoll_region *r;
	unsigned int n = 0;
	u64 pos, bytes = 0;
	int ret;

	kcoll_kmem_lock();
	r = kcoll_kmem_find(key, tc->conn->comm, off, len);
	if (!r) {
		kcoll_kmem_unlock();
		return -EFAULT;
	}
	pos = r->first_off + off;
	while (bytes < len && n < ARRAY_SIZE(bv)) {
		u64 p = pos + bytes;
		u32 l = min_t(u64, len - bytes, PAGE_SIZE - offset_in_page(p));

		bv[n].bv_page = r->pages[p >> PAGE_SHIFT];
		bv[n].bv_offset = offset_in_page(p);
		bv[n].bv_len = l;
		bytes += l;
		n++;
	}
	iov_iter_bvec(&msg.msg_iter, ITER_DEST, bv, n, bytes);
	ret = sock_recvmsg(sock, &msg, MSG_DONTWAIT);
	kcoll_kmem_unlock();
	return ret ? ret : -ECONNRESET;
}

/* A frame header arrived: may it come now, is it in bounds?  Return: 0 or -EPROTO. */
static int kcoll_tcp_check_hdr(const struct kcoll_wire_tcp_frame *f)
{
	u32 len = be32_to_cpu(f->len);

	if (be32_to_cpu(f->magic) != KCOLL_WIRE_MAGIC ||
	    memchr_inv(f->reserved, 0, sizeof(f->reserved)))
		return -EPROTO;
	switch (f->type) {
	case KCOLL_TCP_MSG:
		return len && len <= KCOLL_WIRE_MSG_SIZE && !f->key && !f->off ? 0 : -EPROTO;
	case KCOLL_TCP_DATA:
		return len && len <= KCOLL_WIRE_TCP_DATA_MAX ? 0 : -EPROTO;
	default:	/* the handshake's frames, or none of ours, once connected */
		return -EPROTO;
	}
}

/*
 * Receive and process frames, at most KCOLL_TCP_RX_BUDGET.  Return: 0 (nothing more now),
 * -EAGAIN (budget spent, more may wait), or a negative errno that ends the connection.
 */
static int kcoll_tcp_recv(struct kcoll_tcp_conn *tc, struct socket *sock, bool *got)
{
	struct kcoll_conn *conn = tc->conn;
	const u32 hs = sizeof(tc->rx_hdr);
	unsigned int frames = 0;
	u32 len;
	int ret;

	while (frames < KCOLL_TCP_RX_BUDGET) {
		if (tc->rx_got < hs) {
			ret = kcoll_tcp_recv_buf(sock, (u8 *)&tc->rx_hdr + tc->rx_got,
						 hs - tc->rx_got);
			if (ret < 0)
				return ret == -EAGAIN ? 0 : ret;
			*got = true;
			tc->rx_got += ret;
			if (tc->rx_got < hs)
				continue;
			if (kcoll_tcp_check_hdr(&tc->rx_hdr))
				return -EPROTO;
		}
		len = be32_to_cpu(tc->rx_hdr.len);
		if (tc->rx_hdr.type == KCOLL_TCP_MSG) {
			ret = kcoll_tcp_recv_buf(sock, tc->rx_msg + (tc->rx_got - hs),
						 hs + len - tc->rx_got);
		} else {
			u64 p = tc->rx_got - hs;

			/* Offsets that wrap are refused by the lookup (kcoll_kmem_find()). */
			ret = kcoll_tcp_recv_data(tc, sock, be32_to_cpu(tc->rx_hdr.key),
						  be64_to_cpu(tc->rx_hdr.off) + p, len - p);
		}
		if (ret < 0)
			return ret == -EAGAIN ? 0 : ret;
		*got = true;
		tc->rx_got += ret;
		if (tc->rx_got < hs + len)
			continue;
		tc->rx_got = 0;
		frames++;
		if (tc->rx_hdr.type == KCOLL_TCP_MSG) {
			kcoll_transport_up->rx(conn, tc->rx_msg, len);
			kcoll_transport_up->progress(conn);
		}
	}
	return -EAGAIN;
}

/*
 * Give back every queued item: none completes now.  Return: @conn was up (and is down now).
 * Context: the io work, or teardown after it.
 */
bool kcoll_tcp_drop(struct kcoll_tcp_conn *tc)
{
	struct kcoll_conn *conn = tc->conn;
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_tcp_item *it;
	struct kcoll_req *req;
	bool up;

	for (;;) {
		spin_lock_bh(&comm->lock);
		it = list_first_entry_or_null(&tc->inflight, struct kcoll_tcp_item, list);
		if (!it)
			it = list_first_entry_or_null(&tc->unsent, struct kcoll_tcp_item, list);
		if (!it)
			break;	/* with the lock held */
		req = kcoll_tcp_item_done(tc, it, false);
		spin_unlock_bh(&comm->lock);
		if (req)
			kcoll_transport_up->put(req);
	}
	up = conn->state == KCOLL_CONN_UP;
	if (up)
		kcoll_conn_change_state(conn, KCOLL_CONN_DOWN);
	spin_unlock_bh(&comm->lock);
	return up;
}

/*
 * The link broke, or the peer broke the framing (@err): drop what is queued, then report
 * it down like RDMA's flushed queue, or fail the comm with @err.  Context: the io work.
 */
static void kcoll_tcp_lost(struct kcoll_tcp_conn *tc, int err)
{
	struct kcoll_conn *conn = tc->conn;
	struct kcoll_comm *comm = conn->comm;
	bool up = kcoll_tcp_drop(tc);

	if (err) {
		/* Counted as the layers above count theirs (sysfs proto_errors). */
		if (err == -EPROTO)
			atomic64_inc(&comm->proto_errors);
		pr_err_ratelimited("comm %llx: rank %u: rank %u broke the TCP framing or wrote outside its memory\n",
				   comm->comm_id, comm->rank, conn->peer);
		kcoll_transport_fail(conn, err);
	} else if (up || READ_ONCE(conn->peer_left)) {
		kcoll_transport_link->down(conn);
	}
}

void kcoll_tcp_io(struct work_struct *work)
{
	struct kcoll_tcp_conn *tc = container_of(work, struct kcoll_tcp_conn, io);
	struct kcoll_comm *comm = tc->conn->comm;
	struct socket *sock;
	bool got = false;
	int ret = 0;

	spin_lock_bh(&comm->lock);
	sock = tc->sock;
	spin_unlock_bh(&comm->lock);
	/* Teardown takes the socket only after cancelling this work: it stays. */
	if (!sock || tc->dead)
		return;
	kcoll_tcp_send(tc, sock);
	if (!tc->dead)
		ret = kcoll_tcp_recv(tc, sock, &got);
	if (got) {
		spin_lock_bh(&comm->lock);
		tc->conn->last_ok = jiffies;
		spin_unlock_bh(&comm->lock);
		/* Acknowledge now: the sender completes its items on our ACK. */
		tcp_sock_set_quickack(sock->sk, 1);
	}
	if (kcoll_tcp_reap(tc, sock))
		kcoll_transport_up->progress(tc->conn);
	if (ret == -EAGAIN) {
		queue_work(kcoll_wq, &tc->io);
		return;
	}
	if (!ret && !tc->dead)
		return;
	/* EPROTO and a write outside our memory are the peer's fault; the rest a loss. */
	tc->dead = true;
	kernel_sock_shutdown(sock, SHUT_RDWR);
	kcoll_tcp_lost(tc, ret == -EPROTO ? -EPROTO : ret == -EFAULT ? -ECONNRESET : 0);
}

/* Control slots and the queue, all under comm->lock ----------------------------------- */

struct kcoll_ctrl *kcoll_tcp_ctrl_get(struct kcoll_conn *conn)
{
	struct kcoll_tcp_conn *tc = kcoll_tcp(conn);
	struct kcoll_ctrl *c;

	lockdep_assert_held(&conn->comm->lock);
	if (conn->state != KCOLL_CONN_UP || !tc->nfree || list_empty(&tc->tx_free))
		return NULL;
	c = list_first_entry(&tc->tx_free, struct kcoll_ctrl, list);
	list_del_init(&c->list);
	memset(c->msg, 0, KCOLL_WIRE_FIXED_SIZE);
	c->req = NULL;
	return c;
}

void kcoll_tcp_ctrl_put(struct kcoll_conn *conn, struct kcoll_ctrl *c)
{
	lockdep_assert_held(&conn->comm->lock);
	list_add(&c->list, &kcoll_tcp(conn)->tx_free);
}

/* Queue a frame of @type and @len payload bytes and start the work.  Context: comm->lock. */
static struct kcoll_tcp_item *kcoll_tcp_queue(struct kcoll_conn *conn, u8 type, u32 len)
{
	struct kcoll_tcp_conn *tc = kcoll_tcp(conn);
	struct kcoll_tcp_item *it;

	lockdep_assert_held(&conn->comm->lock);
	if (conn->state != KCOLL_CONN_UP || !tc->nfree)
		return NULL;
	it = list_first_entry(&tc->free, struct kcoll_tcp_item, list);
	if (list_empty(&tc->unsent) && list_empty(&tc->inflight))
		tc->moved = jiffies;	/* the wait for this one starts now */
	list_move_tail(&it->list, &tc->unsent);
	tc->nfree--;
	memset(&it->hdr, 0, sizeof(it->hdr));
	it->hdr.magic = cpu_to_be32(KCOLL_WIRE_MAGIC);
	it->hdr.type = type;
	it->hdr.len = cpu_to_be32(len);
	it->done = 0;
	conn->last_tx = jiffies;
	queue_work(kcoll_wq, &tc->io);
	return it;
}

int kcoll_tcp_ctrl_post(struct kcoll_conn *conn, struct kcoll_ctrl *c, size_t len)
{
	struct kcoll_wire_hdr *hdr = c->msg;
	struct kcoll_tcp_item *it;

	lockdep_assert_held(&conn->comm->lock);
	hdr->magic = cpu_to_be32(KCOLL_WIRE_MAGIC);
	it = len <= KCOLL_WIRE_MSG_SIZE ? kcoll_tcp_queue(conn, KCOLL_TCP_MSG, len) : NULL;
	if (!it) {
		kcoll_tcp_ctrl_put(conn, c);
		return -EIO;
	}
	it->c = c;
	return 0;
}

bool kcoll_tcp_ctrl_free(struct kcoll_conn *conn)
{
	lockdep_assert_held(&conn->comm->lock);
	return !list_empty(&kcoll_tcp(conn)->tx_free) && kcoll_tcp(conn)->nfree;
}

bool kcoll_tcp_tx_room(struct kcoll_conn *conn, unsigned int n)
{
	lockdep_assert_held(&conn->comm->lock);
	return kcoll_tcp(conn)->nfree >= n;
}

/* tx_stalled: frames wait and the peer's TCP acknowledged none for @timeout. */
bool kcoll_tcp_tx_stalled(struct kcoll_conn *conn, unsigned long timeout)
{
	struct kcoll_tcp_conn *tc = kcoll_tcp(conn);

	lockdep_assert_held(&conn->comm->lock);
	return (!list_empty(&tc->unsent) || !list_empty(&tc->inflight)) &&
	       time_after(jiffies, tc->moved + timeout);
}

/* write: one DATA frame of at most KCOLL_WIRE_TCP_DATA_MAX bytes, in order with messages. */
int kcoll_tcp_write(struct kcoll_conn *conn, struct kcoll_region *r, u64 off, u64 len,
		    const struct kcoll_wire_seg *seg, u64 seg_off, u64 *bytes)
{
	struct kcoll_tcp_item *it;
	u64 dst;

	lockdep_assert_held(&conn->comm->lock);
	len = min_t(u64, len, KCOLL_WIRE_TCP_DATA_MAX);
	if (!len || off > kcoll_kmem_span(r) || len > kcoll_kmem_span(r) - off ||
	    check_add_overflow(be64_to_cpu(seg->addr), seg_off, &dst))
		return -EIO;
	it = kcoll_tcp_queue(conn, KCOLL_TCP_DATA, len);
	if (!it)
		return -EIO;
	it->hdr.key = seg->rkey;
	it->hdr.off = cpu_to_be64(dst);
	it->r = r;
	it->off = off;
	*bytes = len;
	return 0;
}

