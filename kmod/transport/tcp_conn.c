// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll TCP transport: a link's life (the io is tcp.c's).  The higher rank connects from
 * its own table address and sends a HELLO frame; the lower rank's listener (tcp_listen.c)
 * checks it as the RDMA listener checks rdma_cm's private data (auth.c) and answers ACCEPT,
 * which proves the secret too, or REJECT with the RDMA reasons.  The active side dials from
 * conn->retry_work, blocking at most KCOLL_TCP_DIAL_MS per step, and tries again every
 * KCOLL_TCP_RETRY_MS while the comm connects, as the RDMA transport does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/ip6_fib.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/rtnetlink.h>
#include <net/sock.h>

#include "../kcoll.h"
#include "../kcoll_nl.h"
#include "auth.h"
#include "ends.h"
#include "keyed_mem.h"
#include "tcp.h"

/**
 * kcoll_tcp_tune - the options of every kcoll TCP socket
 * @sock:	a new socket, not yet connected or just accepted
 *
 * No Nagle: a control message goes out at once.  User timeout and keepalive from the op
 * timeout: a peer whose host vanished (no RST) fails the connection in about that long,
 * even while nothing is pending.  The IP TOS from the tos setting (traffic separation).
 * Context: process, the socket not locked.
 */
static void kcoll_tcp_tune(struct socket *sock)
{
	struct sock *sk = sock->sk;
	u32 ms = READ_ONCE(kcoll_op_timeout_ms);
	int tos = READ_ONCE(kcoll_tos);
	int idle = max_t(int, 1, ms / 4000);

	tcp_sock_set_nodelay(sk);
	tcp_sock_set_user_timeout(sk, ms);
	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, idle);
	tcp_sock_set_keepintvl(sk, idle);
	tcp_sock_set_keepcnt(sk, 3);
	if (tos >= 0 && sk->sk_family == AF_INET)
		ip_sock_set_tos(sk, tos);
}

/*
 * Blocking helpers of the handshake (bounded by the socket's timeouts, KCOLL_TCP_DIAL_MS).
 * Return: 0 or a negative errno; a short transfer is -EPROTO or -ETIMEDOUT.
 */
int kcoll_tcp_send_frame(struct socket *sock, u8 type, const void *payload, u32 len)
{
	struct kcoll_wire_tcp_frame f = {
		.magic = cpu_to_be32(KCOLL_WIRE_MAGIC),
		.type = type,
		.len = cpu_to_be32(len),
	};
	struct kvec v[2] = { { &f, sizeof(f) }, { (void *)payload, len } };
	struct msghdr msg = { .msg_flags = MSG_NOSIGNAL };
	int ret;

	ret = kernel_sendmsg(sock, &msg, v, 2, sizeof(f) + len);
	if (ret < 0)
		return ret;
	return ret == sizeof(f) + len ? 0 : -ETIMEDOUT;
}

static int kcoll_tcp_recv_all(struct socket *sock, void *buf, size_t len)
{
	struct kvec v = { buf, len };
	struct msghdr msg = {};
	int ret;

	ret = kernel_recvmsg(sock, &msg, &v, 1, len, MSG_WAITALL);
	if (ret < 0)
		return ret == -EAGAIN ? -ETIMEDOUT : ret;
	return ret == len ? 0 : -ECONNRESET;
}

/* Receive one handshake frame of at most @max payload bytes. */
int kcoll_tcp_recv_frame(struct socket *sock, u8 *type, void *payload, u32 max, u32 *len)
{
	struct kcoll_wire_tcp_frame f;
	int ret;

	ret = kcoll_tcp_recv_all(sock, &f, sizeof(f));
	if (ret)
		return ret;
	*len = be32_to_cpu(f.len);
	if (be32_to_cpu(f.magic) != KCOLL_WIRE_MAGIC || *len > max || f.key || f.off ||
	    memchr_inv(f.reserved, 0, sizeof(f.reserved)))
		return -EPROTO;
	*type = f.type;
	return kcoll_tcp_recv_all(sock, payload, *len);
}

/* Connection life --------------------------------------------------------------------- */

static void kcoll_tcp_free(struct kcoll_comm *comm)
{
	u32 i;

	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_tcp_conn *tc = comm->conns[i].tp_priv;

		if (!tc || i == comm->rank)
			continue;
		comm->conns[i].tp_priv = NULL;
		kcoll_ctrl_slots_free(tc->ctrl, KCOLL_TX_CTRL);
		kfree(tc->rx_msg);
		kvfree(tc);
	}
}

static void kcoll_tcp_retry(struct work_struct *work);

/*
 * Can this rank connect from its table address?  It must be an address of this namespace
 * (bound to), and not a loopback one: those reach no other host (a comm of loopback
 * addresses only uses the loop transport).  Return: 0 or -EADDRNOTAVAIL.
 */
static int kcoll_tcp_own_ok(struct kcoll_comm *comm)
{
	struct sockaddr_storage own = comm->addrs[comm->rank];
	struct socket *sock;
	int ret;

	if (own.ss_family == AF_INET) {
		if (ipv4_is_loopback(((struct sockaddr_in *)&own)->sin_addr.s_addr))
			return -EADDRNOTAVAIL;
		((struct sockaddr_in *)&own)->sin_port = 0;
	} else {
		if (ipv6_addr_loopback(&((struct sockaddr_in6 *)&own)->sin6_addr))
			return -EADDRNOTAVAIL;
		((struct sockaddr_in6 *)&own)->sin6_port = 0;
	}
	ret = sock_create_kern(comm->net, own.ss_family, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (ret)
		return ret;
	ret = kernel_bind(sock, (struct sockaddr *)&own, sizeof(own));
	sock_release(sock);
	return ret ? -EADDRNOTAVAIL : 0;
}

/* One end: its queue items, receive buffer and control slots.  Context: process. */
static int kcoll_tcp_end_init(struct kcoll_conn *conn, void *end)
{
	struct kcoll_tcp_conn *tc = end;
	u32 j;

	tc->conn = conn;
	INIT_WORK(&tc->io, kcoll_tcp_io);
	INIT_LIST_HEAD(&tc->unsent);
	INIT_LIST_HEAD(&tc->inflight);
	INIT_LIST_HEAD(&tc->free);
	INIT_LIST_HEAD(&tc->tx_free);
	for (j = 0; j < KCOLL_SQ_DEPTH; j++)
		list_add_tail(&tc->items[j].list, &tc->free);
	tc->nfree = KCOLL_SQ_DEPTH;
	INIT_DELAYED_WORK(&conn->retry_work, kcoll_tcp_retry);
	tc->rx_msg = kcoll_fi(ALLOC, NULL, kzalloc(KCOLL_WIRE_MSG_SIZE, GFP_KERNEL_ACCOUNT));
	if (!tc->rx_msg)
		return -ENOMEM;
	return kcoll_ctrl_slots_init(conn, tc->ctrl, KCOLL_TX_CTRL, &tc->tx_free);
}

/* attach: the listener, and one end per peer.  Context: process, the comm not listed. */
static int kcoll_tcp_attach(struct kcoll_comm *comm)
{
	int ret;

	ret = kcoll_tcp_own_ok(comm);
	if (ret)
		return ret;
	ret = kcoll_tp_ends_alloc(comm, sizeof(struct kcoll_tcp_conn), kcoll_tcp_end_init);
	if (!ret)
		ret = kcoll_tcp_listen_get(comm);
	if (ret)
		kcoll_tcp_free(comm);
	return ret;
}

/* detach: every peer torn down.  Context: process, teardown_mutex held. */
static void kcoll_tcp_detach(struct kcoll_comm *comm)
{
	lockdep_assert_held(&comm->teardown_mutex);
	kcoll_tcp_listen_put(comm);
	kcoll_tcp_free(comm);
}

/*
 * Does the route of connected @sock stay in this kernel?  Then the peer's socket queues our
 * skbs, pages and all, and its TCP acknowledges them before its reader copied them out: a
 * send completed on that ACK would let our pages be reused under the peer's reader.  Local
 * are a local destination, the loopback device, a veth and a bridge (whose ports may be
 * veths); macvlan, ipvlan and tunnels over them are not recognised.  No route cached:
 * local, the safe side (a copy costs speed, not data).  Context: process.
 */
static bool kcoll_tcp_route_local(struct socket *sock)
{
	struct dst_entry *dst = sk_dst_get(sock->sk);
	const struct net_device *dev;
	bool local = true;

	if (!dst)
		return true;
	dev = dst->dev;
	if (dst->ops->family == AF_INET)
		local = ((struct rtable *)dst)->rt_type == RTN_LOCAL;
	else if (dst->ops->family == AF_INET6)
		local = ((struct rt6_info *)dst)->rt6i_flags & RTF_LOCAL;
	if (dev && ((dev->flags & IFF_LOOPBACK) || netif_is_bridge_master(dev) ||
		    (dev->rtnl_link_ops && !strcmp(dev->rtnl_link_ops->kind, "veth"))))
		local = true;
	dst_release(dst);
	return local;
}

/*
 * @sock is connected to @conn's peer and authenticated both ways: make it the link, if
 * the comm still connects and @conn waits for one.  Return: false if @sock was not taken.
 */
static bool kcoll_tcp_link(struct kcoll_conn *conn, struct socket *sock)
{
	struct kcoll_tcp_conn *tc = kcoll_tcp(conn);
	struct kcoll_comm *comm = conn->comm;
	bool local = kcoll_tcp_route_local(sock);
	bool ok;

	spin_lock_bh(&comm->lock);
	ok = comm->state == KCOLL_COMM_CONNECTING && conn->state == KCOLL_CONN_IDLE && !tc->sock;
	if (ok) {
		tc->sock = sock;
		tc->dead = false;
		tc->copy = local;
		tc->rx_got = 0;
		kcoll_tcp_set_callbacks(tc, sock);
		kcoll_conn_change_state(conn, KCOLL_CONN_CONNECTING);
		kcoll_transport_link->up(conn);
		/* What arrived before the callbacks were ours raised no data_ready. */
		queue_work(kcoll_wq, &tc->io);
	}
	spin_unlock_bh(&comm->lock);
	return ok;
}

/*
 * kcoll_tcp_accept - passive side: the listener's socket whose HELLO named @comm, from
 * the right address with the right MAC (auth.c).  Answers ACCEPT and takes the socket.
 * Return: 0 (taken), or the enum kcoll_wire_reject_reason to refuse with.
 */
int kcoll_tcp_accept(struct kcoll_comm *comm, struct socket *sock,
		     const struct kcoll_wire_hello *h)
{
	u32 src = be32_to_cpu(h->src_rank), nranks = be32_to_cpu(h->nranks);
	struct kcoll_wire_accept acc;
	struct kcoll_conn *conn;
	bool idle;

	kcoll_auth_accept_msg(comm, h, &acc);
	if (nranks != comm->nranks || src >= nranks || src <= comm->rank ||
	    comm->conns[src].tp != &kcoll_tcp_transport)
		return KCOLL_REJ_MISMATCH;
	conn = &comm->conns[src];
	if (!kcoll_tcp(conn))
		return KCOLL_REJ_MISMATCH;
	spin_lock_bh(&comm->lock);
	idle = comm->state == KCOLL_COMM_CONNECTING && conn->state == KCOLL_CONN_IDLE;
	spin_unlock_bh(&comm->lock);
	if (!idle)
		return comm->state == KCOLL_COMM_CONNECTING ? KCOLL_REJ_DUPLICATE : KCOLL_REJ_STATE;
	kcoll_tcp_tune(sock);
	/* Our ACCEPT goes before any frame of the link: the peer's READY waits for it. */
	if (kcoll_tcp_send_frame(sock, KCOLL_TCP_ACCEPT, &acc, sizeof(acc)))
		return KCOLL_REJ_STATE;
	return kcoll_tcp_link(conn, sock) ? 0 : KCOLL_REJ_DUPLICATE;
}

/*
 * Active side: connect from our table address to the peer's, say HELLO, read the answer.
 * Return: the socket, or an ERR_PTR; *@retry: the peer may answer later.
 */
static struct socket *kcoll_tcp_dial(struct kcoll_conn *conn, bool *retry)
{
	struct kcoll_comm *comm = conn->comm;
	struct sockaddr_storage own = comm->addrs[comm->rank], dst = comm->addrs[conn->peer];
	u16 port = kcoll_tcp_port_get();
	union {
		struct kcoll_wire_accept acc;
		struct kcoll_wire_reject rej;
	} ans;
	struct kcoll_wire_hello h;
	struct socket *sock;
	u32 len;
	u8 type;
	int ret;

	*retry = true;
	if (own.ss_family == AF_INET) {
		((struct sockaddr_in *)&own)->sin_port = 0;
		((struct sockaddr_in *)&dst)->sin_port = htons(port);
	} else {
		((struct sockaddr_in6 *)&own)->sin6_port = 0;
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(port);
	}
	ret = sock_create_kern(comm->net, own.ss_family, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (ret)
		return ERR_PTR(ret);
	sock->sk->sk_sndtimeo = msecs_to_jiffies(KCOLL_TCP_CONNECT_MS);
	sock->sk->sk_rcvtimeo = msecs_to_jiffies(KCOLL_TCP_DIAL_MS);
	kcoll_tcp_tune(sock);
	/* From our own table address: the listener checks the source is the rank's. */
	ret = kernel_bind(sock, (struct sockaddr *)&own, sizeof(own));
	if (ret) {
		ret = -EADDRNOTAVAIL;
		*retry = false;
		goto out;
	}
	ret = kernel_connect(sock, (struct sockaddr *)&dst, sizeof(dst), 0);
	if (ret) {
		ret = ret == -ENETUNREACH || ret == -EHOSTUNREACH ? -EHOSTUNREACH : -ETIMEDOUT;
		goto out;
	}
	sock->sk->sk_sndtimeo = msecs_to_jiffies(KCOLL_TCP_DIAL_MS);
	kcoll_conn_hello(conn, &h);
	ret = kcoll_tcp_send_frame(sock, KCOLL_TCP_HELLO, &h, sizeof(h));
	if (!ret)
		ret = kcoll_tcp_recv_frame(sock, &type, &ans, sizeof(ans), &len);
	if (ret) {
		ret = -ETIMEDOUT;	/* no kcoll there yet, or it went away: as RDMA's */
		goto out;
	}
	*retry = false;
	if (type == KCOLL_TCP_ACCEPT) {
		if (!kcoll_auth_accept_ok(conn, &ans.acc, len)) {
			pr_warn_ratelimited("comm %llx rank %u: rank %u accepted without proving the communicator's secret\n",
					    comm->comm_id, comm->rank, conn->peer);
			ret = -EACCES;
			goto out;
		}
		sock->sk->sk_sndtimeo = MAX_SCHEDULE_TIMEOUT;
		sock->sk->sk_rcvtimeo = MAX_SCHEDULE_TIMEOUT;
		return sock;
	}
	ret = -ECONNREFUSED;
	if (type != KCOLL_TCP_REJECT || len < sizeof(ans.rej) ||
	    be32_to_cpu(ans.rej.magic) != KCOLL_WIRE_MAGIC)
		goto out;
	switch (ans.rej.reason) {
	case KCOLL_REJ_VERSION:
		ret = -EPROTONOSUPPORT;
		break;
	case KCOLL_REJ_AUTH:
		ret = -EACCES;
		break;
	case KCOLL_REJ_NOT_YET:
	case KCOLL_REJ_DUPLICATE:
		*retry = true;
		ret = -ETIMEDOUT;
		break;
	}
out:
	sock_release(sock);
	return ERR_PTR(ret);
}

/* The active side's attempt: dial, link, or try again later.  Context: conn->retry_work. */
static void kcoll_tcp_retry(struct work_struct *work)
{
	struct kcoll_conn *conn = container_of(to_delayed_work(work), struct kcoll_conn,
					       retry_work);
	struct kcoll_comm *comm = conn->comm;
	struct socket *sock;
	bool retry;

	if (READ_ONCE(comm->state) != KCOLL_COMM_CONNECTING)
		return;
	sock = kcoll_tcp_dial(conn, &retry);
	if (!IS_ERR(sock)) {
		if (!kcoll_tcp_link(conn, sock))
			sock_release(sock);
		return;
	}
	if (!retry) {
		kcoll_transport_fail(conn, PTR_ERR(sock));
		return;
	}
	spin_lock_bh(&comm->lock);
	conn->last_err = PTR_ERR(sock);
	if (comm->state == KCOLL_COMM_CONNECTING)
		queue_delayed_work(kcoll_wq, &conn->retry_work,
				   msecs_to_jiffies(KCOLL_TCP_RETRY_MS));
	spin_unlock_bh(&comm->lock);
}

/* connect: the active side dials from its retry work.  Context: teardown_mutex held. */
static int kcoll_tcp_connect(struct kcoll_conn *conn)
{
	lockdep_assert_held(&conn->comm->teardown_mutex);
	conn->last_err = -ETIMEDOUT;
	queue_delayed_work(kcoll_wq, &conn->retry_work, 0);
	return 0;
}

/*
 * teardown: restore the callbacks (no new io work after that), wait for the io work, close
 * the socket and drop what is queued.  Context: process, teardown_mutex held, retry_work
 * cancelled by the caller.
 */
static void kcoll_tcp_teardown(struct kcoll_conn *conn)
{
	struct kcoll_tcp_conn *tc = kcoll_tcp(conn);
	struct kcoll_comm *comm = conn->comm;
	struct socket *sock;

	/* Our own rank's tp_priv is the listener (kcoll_tcp_listen_get()), not an end. */
	if (!tc || conn->peer == comm->rank)
		return;
	spin_lock_bh(&comm->lock);
	kcoll_conn_change_state(conn, KCOLL_CONN_DOWN);	/* nothing more is posted */
	sock = tc->sock;
	spin_unlock_bh(&comm->lock);
	if (sock)
		kcoll_tcp_restore_callbacks(tc, sock);
	cancel_work_sync(&tc->io);
	if (sock) {
		kernel_sock_shutdown(sock, SHUT_RDWR);
		spin_lock_bh(&comm->lock);
		tc->sock = NULL;
		spin_unlock_bh(&comm->lock);
		sock_release(sock);
	}
	/* What was queued never completes now: give its slots and references back. */
	tc->dead = true;
	kcoll_tcp_drop(tc);
}

const struct kcoll_transport kcoll_tcp_transport = {
	.name		= "tcp",
	.attach		= kcoll_tcp_attach,
	.detach		= kcoll_tcp_detach,
	.connect	= kcoll_tcp_connect,
	.teardown	= kcoll_tcp_teardown,
	.ctrl_get	= kcoll_tcp_ctrl_get,
	.ctrl_put	= kcoll_tcp_ctrl_put,
	.ctrl_post	= kcoll_tcp_ctrl_post,
	.ctrl_free	= kcoll_tcp_ctrl_free,
	.tx_room	= kcoll_tcp_tx_room,
	.tx_stalled	= kcoll_tcp_tx_stalled,
	.write		= kcoll_tcp_write,
	.mem		= &kcoll_kmem_ops,
};
