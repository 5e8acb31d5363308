// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll TCP transport: the listeners, one per (network namespace, address family, port), on
 * the store's tcp_port setting (kcoll_config.c), held by the communicators of that
 * namespace that use TCP and closed with the last one (a comm holds its namespace, so no
 * listener outlives it).
 *
 * Accepted sockets wait, at most KCOLL_TCP_PENDING_MAX of them and KCOLL_TCP_DIAL_MS each,
 * for their HELLO frame; then the hello is checked as the RDMA listener checks rdma_cm's
 * private data (auth.c) and the socket goes to its communicator (kcoll_tcp_accept()) or is
 * refused with a REJECT frame and closed.  One work item (kcoll_tcp_accept_work) does all
 * of it in process context: the listening socket's data_ready, which accepted children
 * inherit, only queues that work and dereferences nothing, so no callback can reach a
 * freed listener.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "../kcoll.h"
#include "auth.h"
#include "tcp.h"

/* Sockets accepted and not yet past their HELLO, over all listeners. */
#define KCOLL_TCP_PENDING_MAX	64

/**
 * struct kcoll_tcp_listener - a listening socket
 * @list:	in kcoll_tcp_listeners
 * @net:	the namespace it listens in
 * @family:	and the address family
 * @port:	and the port it is bound to (tcp_port when it was opened)
 * @users:	communicators using it
 * @sock:	the listening socket
 */
struct kcoll_tcp_listener {
	struct list_head list;
	struct net *net;
	int family;
	u16 port;
	unsigned int users;
	struct socket *sock;
};

/* An accepted socket waiting for its HELLO. */
struct kcoll_tcp_pending {
	struct list_head list;
	struct kcoll_tcp_listener *l;
	struct socket *sock;
	unsigned long deadline;
};

/* Everything here is guarded by kcoll_tcp_listen_mutex, taken only in process context. */
static LIST_HEAD(kcoll_tcp_listeners);
static LIST_HEAD(kcoll_tcp_pendings);
static unsigned int kcoll_tcp_npending;
static DEFINE_MUTEX(kcoll_tcp_listen_mutex);
static void kcoll_tcp_accept_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(kcoll_tcp_accept_work, kcoll_tcp_accept_fn);

/* The store's tcp_port (kcoll_config.c): module parameter and CONFIG_SET alike. */
u16 kcoll_tcp_port_get(void)
{
	return READ_ONCE(kcoll_tcp_port_cfg);
}

void kcoll_tcp_listen_data_ready(struct sock *sk)
{
	mod_delayed_work(kcoll_wq, &kcoll_tcp_accept_work, 0);
	kcoll_tcp_def_data_ready(sk);
}

/* Release a socket that still has the listener's data_ready (a child never handed over). */
static void kcoll_tcp_close_child(struct socket *sock)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = kcoll_tcp_def_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	sock_release(sock);
}

static void kcoll_tcp_pending_free(struct kcoll_tcp_pending *p)
{
	lockdep_assert_held(&kcoll_tcp_listen_mutex);
	list_del(&p->list);
	kcoll_tcp_npending--;
	if (p->sock)
		kcoll_tcp_close_child(p->sock);
	kfree(p);
}

static void kcoll_tcp_reject(struct socket *sock, u8 reason)
{
	struct kcoll_wire_reject rej;

	kcoll_auth_reject_msg(reason, &rej);

	kcoll_tcp_send_frame(sock, KCOLL_TCP_REJECT, &rej, sizeof(rej));
}

/*
 * @p's HELLO may have arrived: check it and hand the socket over, or refuse it.
 * Return: false while the hello is still incomplete.
 */
static bool kcoll_tcp_pending_try(struct kcoll_tcp_pending *p)
{
	struct {
		struct kcoll_wire_tcp_frame f;
		struct kcoll_wire_hello h;
	} __packed in;
	struct kvec v = { &in, sizeof(in) };
	struct sockaddr_storage from;
	struct kcoll_comm *comm;
	struct msghdr msg = {};
	int reason, ret;
	u32 len;
	u8 type;

	/* Nothing is taken off the socket until header and hello are both there. */
	ret = kernel_recvmsg(p->sock, &msg, &v, 1, sizeof(in), MSG_PEEK | MSG_DONTWAIT);
	if (ret == -EAGAIN)
		return false;
	if (ret <= 0)
		return true;	/* closed or failed: nothing to answer */
	if (ret < sizeof(in.f))
		return false;
	/* Anything but a HELLO first is refused at once (a frame before the hello). */
	if (be32_to_cpu(in.f.magic) != KCOLL_WIRE_MAGIC || in.f.type != KCOLL_TCP_HELLO ||
	    be32_to_cpu(in.f.len) != sizeof(in.h)) {
		reason = KCOLL_REJ_BAD_HELLO;
		goto reject;
	}
	if (ret < sizeof(in))
		return false;
	ret = kcoll_tcp_recv_frame(p->sock, &type, &in.h, sizeof(in.h), &len);
	if (ret) {
		reason = KCOLL_REJ_BAD_HELLO;
		goto reject;
	}
	reason = kcoll_auth_hello_ok(&in.h, len);
	if (reason)
		goto reject;
	if (kernel_getpeername(p->sock, (struct sockaddr *)&from) < 0)
		return true;
	comm = kcoll_transport_link->find_get(p->l->net, be64_to_cpu(in.h.comm_id),
					      be32_to_cpu(in.h.dst_rank));
	if (!comm) {
		reason = KCOLL_REJ_NOT_YET;
		goto reject;
	}
	reason = kcoll_auth_peer_ok(comm, &in.h, (struct sockaddr *)&from);
	if (!reason)
		reason = kcoll_tcp_accept(comm, p->sock, &in.h);
	kcoll_transport_link->comm_put(comm);
	if (!reason) {
		p->sock = NULL;	/* the connection's now */
		return true;
	}
reject:
	kcoll_tcp_reject(p->sock, reason);
	return true;
}

/* Accept what the listeners have, then serve the pending sockets. */
static void kcoll_tcp_accept_fn(struct work_struct *work)
{
	struct kcoll_tcp_pending *p, *tmp;
	struct kcoll_tcp_listener *l;
	struct socket *sock;

	mutex_lock(&kcoll_tcp_listen_mutex);
	list_for_each_entry(l, &kcoll_tcp_listeners, list) {
		while (!kernel_accept(l->sock, &sock, O_NONBLOCK)) {
			p = kzalloc(sizeof(*p), GFP_KERNEL);
			if (!p || kcoll_tcp_npending >= KCOLL_TCP_PENDING_MAX) {
				kfree(p);
				kcoll_tcp_close_child(sock);
				continue;
			}
			/* The hello's timeouts: a silent or slow peer holds a slot this long. */
			sock->sk->sk_sndtimeo = msecs_to_jiffies(KCOLL_TCP_DIAL_MS);
			sock->sk->sk_rcvtimeo = msecs_to_jiffies(KCOLL_TCP_DIAL_MS);
			p->l = l;
			p->sock = sock;
			p->deadline = jiffies + msecs_to_jiffies(KCOLL_TCP_DIAL_MS);
			list_add_tail(&p->list, &kcoll_tcp_pendings);
			kcoll_tcp_npending++;
		}
	}
	list_for_each_entry_safe(p, tmp, &kcoll_tcp_pendings, list) {
		if (kcoll_tcp_pending_try(p) || time_after(jiffies, p->deadline))
			kcoll_tcp_pending_free(p);
	}
	/* The deadlines of those left: look again (their data_ready queues us sooner). */
	if (kcoll_tcp_npending)
		mod_delayed_work(kcoll_wq, &kcoll_tcp_accept_work, HZ / 4);
	mutex_unlock(&kcoll_tcp_listen_mutex);
}

static int kcoll_tcp_listen_new(struct kcoll_tcp_listener *l)
{
	struct sockaddr_storage ss = {};
	struct socket *sock;
	struct sock *sk;
	int ret;

	ret = sock_create_kern(l->net, l->family, SOCK_STREAM, IPPROTO_TCP, &sock);
	if (ret)
		return ret;
	sk = sock->sk;
	sock_set_reuseaddr(sk);
	if (l->family == AF_INET6) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(l->port);
		sk->sk_ipv6only = true;
	} else {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(l->port);
	}
	ret = kernel_bind(sock, (struct sockaddr *)&ss, sizeof(ss));
	if (!ret)
		ret = kernel_listen(sock, 128);
	if (ret) {
		sock_release(sock);
		return ret;
	}
	write_lock_bh(&sk->sk_callback_lock);
	if (!kcoll_tcp_def_data_ready)
		kcoll_tcp_def_data_ready = sk->sk_data_ready;
	sk->sk_data_ready = kcoll_tcp_listen_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	l->sock = sock;
	return 0;
}

/*
 * Take the listener of @comm's namespace and family on the tcp_port setting (the tp_priv of
 * its own rank).  After a change of tcp_port a new comm opens one on the new port while
 * the older comms keep theirs, so a comm listens where its peers, which read the same
 * setting when they dial, will look.
 */
int kcoll_tcp_listen_get(struct kcoll_comm *comm)
{
	int family = comm->addrs[comm->rank].ss_family;
	u16 port = kcoll_tcp_port_get();
	struct kcoll_tcp_listener *l;
	int ret = 0;

	mutex_lock(&kcoll_tcp_listen_mutex);
	list_for_each_entry(l, &kcoll_tcp_listeners, list) {
		if (net_eq(l->net, comm->net) && l->family == family && l->port == port)
			goto found;
	}
	l = kcoll_fi(ALLOC, NULL, kzalloc(sizeof(*l), GFP_KERNEL));
	if (!l) {
		ret = -ENOMEM;
		goto out;
	}
	l->net = comm->net;
	l->family = family;
	l->port = port;
	ret = kcoll_tcp_listen_new(l);
	if (ret) {
		pr_err("cannot listen on TCP port %u: %d\n", port, ret);
		kfree(l);
		goto out;
	}
	list_add(&l->list, &kcoll_tcp_listeners);
found:
	l->users++;
	comm->conns[comm->rank].tp_priv = l;
out:
	mutex_unlock(&kcoll_tcp_listen_mutex);
	return ret;
}

/* Drop what kcoll_tcp_listen_get() took; the last user closes the listener. */
void kcoll_tcp_listen_put(struct kcoll_comm *comm)
{
	struct kcoll_tcp_listener *l = comm->conns[comm->rank].tp_priv;
	struct kcoll_tcp_pending *p, *tmp;

	if (!l)
		return;
	comm->conns[comm->rank].tp_priv = NULL;
	mutex_lock(&kcoll_tcp_listen_mutex);
	if (--l->users) {
		mutex_unlock(&kcoll_tcp_listen_mutex);
		return;
	}
	list_del(&l->list);
	list_for_each_entry_safe(p, tmp, &kcoll_tcp_pendings, list) {
		if (p->l == l)
			kcoll_tcp_pending_free(p);
	}
	/* Children still in its accept queue are closed with it, before the namespace goes. */
	kcoll_tcp_close_child(l->sock);
	mutex_unlock(&kcoll_tcp_listen_mutex);
	kfree(l);
}

/* Module exit: every comm is gone, so is every listener; the work must not run on. */
void kcoll_tcp_listen_exit(void)
{
	cancel_delayed_work_sync(&kcoll_tcp_accept_work);
}
