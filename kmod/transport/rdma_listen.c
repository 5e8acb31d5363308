// SPDX-License-Identifier: GPL-2.0
/*
 * The rdma_cm listeners: one per (network namespace, port).
 *
 * The node's listener - the initial namespace's, on the configured listen_port - is kept
 * from module load (or the first communicator, if the port was busy then) until module
 * unload: were it to go between jobs, any local program could bind the port and collect
 * the hellos of peers connecting to this node (Documentation/security.rst).  It also never
 * goes while connect requests are in flight to it (Soft-iWARP in 6.1 can then free the
 * listener's endpoint under rdma_cm, KASAN: use-after-free in siw_destroy_listen()).
 *
 * Others - another namespace, or a port a peer table chose - are created by the first
 * communicator that needs them and destroyed KCOLL_LISTEN_LINGER_MS after the last one goes:
 * a listener holds its namespace (its cm_ids do), so one kept for the module's lifetime
 * would keep every namespace that ever had a communicator.  The linger is for jobs that
 * destroy one communicator and create the next.  Incoming requests are matched to a
 * communicator by the hello in their private data.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "../kcoll.h"
#include "auth.h"

/**
 * struct kcoll_listener - listening cm_ids of one namespace and port
 * @list:	in kcoll_listeners (kcoll_listeners_mutex)
 * @net:	the namespace (the cm_ids hold references to it)
 * @port:	the rdma_cm port
 * @users:	communicators using it (kcoll_listeners_mutex)
 * @kept:	the node's listener: stays while unused, until module exit or another port
 *		is configured (kcoll_listeners_mutex)
 * @id4:	IPv4 listening id
 * @id6:	IPv6 listening id, NULL without IPv6
 * @linger:	destroys it once unused for KCOLL_LISTEN_LINGER_MS; queued, and cancelled
 *		when it is taken off the list, under kcoll_listeners_mutex
 *
 * Freed by kcoll_listener_destroy(): from @linger, or at module exit.
 */
struct kcoll_listener {
	struct list_head list;
	struct net *net;
	u16 port;
	unsigned int users;
	bool kept;
	struct rdma_cm_id *id4;
	struct rdma_cm_id *id6;
	struct delayed_work linger;
};

/* How long an unused listener stays (a job's next communicator usually comes sooner). */
#define KCOLL_LISTEN_LINGER_MS	10000

static LIST_HEAD(kcoll_listeners);
static DEFINE_MUTEX(kcoll_listeners_mutex);

static void kcoll_listener_linger(struct work_struct *work);

/*
 * Listening ids get connect requests only (wildcard listeners are bound to no device); an
 * accepted id is switched to kcoll_cm_handler() before it can see any other event.
 */
static int kcoll_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return kcoll_listen_request(id, ev);
	return 0;
}

static struct rdma_cm_id *kcoll_listen_one(struct kcoll_listener *l, int family)
{
	struct sockaddr_storage ss = {};
	struct rdma_cm_id *id;
	int ret;

	id = kcoll_fi(CM, ERR_PTR(-ENOMEM),
		      rdma_create_id(l->net, kcoll_listen_handler, l, RDMA_PS_TCP, IB_QPT_RC));
	if (IS_ERR(id))
		return id;
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(l->port);
		ret = rdma_set_afonly(id, 1);
		if (ret)
			goto out_destroy;
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(l->port);
	}
	ret = kcoll_fi(CM, -ENOMEM, rdma_bind_addr(id, (struct sockaddr *)&ss));
	if (ret)
		goto out_destroy;
	ret = kcoll_fi(CM, -ENOMEM, rdma_listen(id, 128));
	if (ret)
		goto out_destroy;
	return id;

out_destroy:
	rdma_destroy_id(id);
	return ERR_PTR(ret);
}

/* The listener of @net and @port, created if there is none.  Context: the mutex held. */
static struct kcoll_listener *kcoll_listener_find_add(struct net *net, u16 port)
{
	struct kcoll_listener *l;
	struct rdma_cm_id *id;

	lockdep_assert_held(&kcoll_listeners_mutex);
	list_for_each_entry(l, &kcoll_listeners, list) {
		if (net_eq(l->net, net) && l->port == port)
			return l;
	}
	l = kcoll_fi(ALLOC, NULL, kzalloc(sizeof(*l), GFP_KERNEL));
	if (!l)
		return ERR_PTR(-ENOMEM);
	l->net = net;
	l->port = port;
	INIT_DELAYED_WORK(&l->linger, kcoll_listener_linger);
	id = kcoll_listen_one(l, AF_INET);
	if (IS_ERR(id)) {
		pr_err("cannot listen on rdma_cm port %u: %ld\n", port, PTR_ERR(id));
		kfree(l);
		return ERR_CAST(id);
	}
	l->id4 = id;
	/* IPv6 is optional: a kernel or namespace without it still serves IPv4. */
	id = kcoll_listen_one(l, AF_INET6);
	l->id6 = IS_ERR(id) ? NULL : id;
	/* The node's listener, if the first communicator creates it (the port was busy). */
	l->kept = net_eq(net, &init_net) && port == READ_ONCE(kcoll_listen_port);
	list_add(&l->list, &kcoll_listeners);
	return l;
}

/**
 * kcoll_listener_get - the listener of a namespace and port, created on first use
 * @net:	network namespace
 * @port:	rdma_cm port
 *
 * Return: the listener (drop with kcoll_listener_put()) or an ERR_PTR: -EADDRINUSE when
 * another rdma_cm user holds the port.
 */
struct kcoll_listener *kcoll_listener_get(struct net *net, u16 port)
{
	struct kcoll_listener *l;

	mutex_lock(&kcoll_listeners_mutex);
	l = kcoll_listener_find_add(net, port);
	if (!IS_ERR(l))
		l->users++;
	mutex_unlock(&kcoll_listeners_mutex);
	return l;
}

void kcoll_listener_put(struct kcoll_listener *l)
{
	mutex_lock(&kcoll_listeners_mutex);
	if (!--l->users && !l->kept)
		queue_delayed_work(kcoll_wq, &l->linger, msecs_to_jiffies(KCOLL_LISTEN_LINGER_MS));
	mutex_unlock(&kcoll_listeners_mutex);
}

/**
 * kcoll_listen_keep - make the initial namespace's listener on @port the node's listener
 * @port:	the configured listen_port
 *
 * At module load, and when the configuration changes the port: the listener of @port is
 * created now and kept until module exit; the one kept before lingers once unused.  Best
 * effort: when another rdma_cm user holds @port, the first communicator that needs it fails
 * with -EADDRINUSE (and creates and keeps it once the port is free).
 *
 * Context: process context.
 */
void kcoll_listen_keep(u16 port)
{
	struct kcoll_listener *l, *keep;

	mutex_lock(&kcoll_listeners_mutex);
	keep = kcoll_listener_find_add(&init_net, port);
	list_for_each_entry(l, &kcoll_listeners, list) {
		if (l == keep || !l->kept)
			continue;
		l->kept = false;
		if (!l->users)
			queue_delayed_work(kcoll_wq, &l->linger,
					   msecs_to_jiffies(KCOLL_LISTEN_LINGER_MS));
	}
	if (!IS_ERR(keep))
		keep->kept = true;
	mutex_unlock(&kcoll_listeners_mutex);
}

/* @l is off the list and its linger work cancelled or done: release it. */
static void kcoll_listener_destroy(struct kcoll_listener *l)
{
	/* Waits for handlers in progress, so no request can still reach a freed comm. */
	if (l->id6)
		rdma_destroy_id(l->id6);
	rdma_destroy_id(l->id4);
	kfree(l);
}

static void kcoll_listener_linger(struct work_struct *work)
{
	struct kcoll_listener *l = container_of(to_delayed_work(work), struct kcoll_listener,
					      linger);

	mutex_lock(&kcoll_listeners_mutex);
	/* Taken or kept again meanwhile, or already being released by module exit. */
	if (l->users || l->kept || list_empty(&l->list)) {
		mutex_unlock(&kcoll_listeners_mutex);
		return;
	}
	list_del_init(&l->list);
	/* A get and put since this run started may have queued it again: nothing may run. */
	cancel_delayed_work(&l->linger);
	mutex_unlock(&kcoll_listeners_mutex);
	kcoll_listener_destroy(l);
}

/**
 * kcoll_listeners_exit - release the node's listener and the lingering ones at module exit
 *
 * Context: no communicator is left (module exit), so every listener is unused.
 */
void kcoll_listeners_exit(void)
{
	struct kcoll_listener *l;

	for (;;) {
		mutex_lock(&kcoll_listeners_mutex);
		l = list_first_entry_or_null(&kcoll_listeners, struct kcoll_listener, list);
		if (l)
			list_del_init(&l->list);
		mutex_unlock(&kcoll_listeners_mutex);
		if (!l)
			break;
		/* A linger run now finds it off the list and leaves it alone. */
		cancel_delayed_work_sync(&l->linger);
		kcoll_listener_destroy(l);
	}
}

static void kcoll_listen_reject(struct rdma_cm_id *id, u8 reason)
{
	struct kcoll_wire_reject rej;

	kcoll_auth_reject_msg(reason, &rej);

	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
}

/*
 * A connect request on a listener.  Return non-zero to have rdma_cm destroy the new id
 * (after we rejected it).
 */
int kcoll_listen_request(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kcoll_listener *l = id->context;
	const struct kcoll_wire_hello *h = ev->param.conn.private_data;
	struct kcoll_comm *comm;
	int reason;

	/* rdma_cm REQ private data: at most 56 bytes on IB. */
	BUILD_BUG_ON(sizeof(*h) > 56);
	reason = kcoll_auth_hello_ok(h, ev->param.conn.private_data_len);
	if (reason)
		goto reject;
	comm = kcoll_transport_link->find_get(l->net, be64_to_cpu(h->comm_id),
					      be32_to_cpu(h->dst_rank));
	if (!comm) {
		reason = KCOLL_REJ_NOT_YET;
		goto reject;
	}
	reason = kcoll_auth_peer_ok(comm, h, (struct sockaddr *)&id->route.addr.dst_addr);
	if (reason) {
		kcoll_transport_link->comm_put(comm);
		goto reject;
	}
	reason = kcoll_conn_accept(comm, id, h);
	kcoll_transport_link->comm_put(comm);
	if (!reason)
		return 0;
reject:
	kcoll_listen_reject(id, reason);
	return 1;
}
