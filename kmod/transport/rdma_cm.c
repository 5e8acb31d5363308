// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll RDMA transport: the rdma_cm events of a connection (kcoll_cm_handler()): why a
 * connect was rejected, the checks when it is established (source GID), disconnects.
 *
 * Every callback here runs in process context: rdma_cm handlers in its work queue, CQ
 * completions in ib_comp_wq (IB_POLL_WORKQUEUE).  State is guarded by comm->lock; nothing
 * sleeps under it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "../kcoll.h"
#include "../kcoll_nl.h"
#include "rdma.h"

static int kcoll_reject_errno(struct rdma_cm_event *ev, bool *retry)
{
	const struct kcoll_wire_reject *rej = ev->param.conn.private_data;

	/*
	 * Our reason travels in the private data; the status differs by transport (IB CM:
	 * consumer defined; iWARP: -ECONNREFUSED), so it is not looked at.
	 */
	*retry = false;
	if (!rej || ev->param.conn.private_data_len < sizeof(*rej) ||
	    be32_to_cpu(rej->magic) != KCOLL_WIRE_MAGIC) {
		/* No kcoll listening there (yet): the peer has not created its comm. */
		*retry = true;
		return -ETIMEDOUT;
	}
	switch (rej->reason) {
	case KCOLL_REJ_VERSION:
		return -EPROTONOSUPPORT;
	case KCOLL_REJ_AUTH:
		return -EACCES;
	case KCOLL_REJ_NOT_YET:
	case KCOLL_REJ_DUPLICATE:	/* the peer still holds a failed attempt of ours */
		*retry = true;
		return -ETIMEDOUT;
	default:
		return -ECONNREFUSED;
	}
}

/**
 * struct kcoll_conn_gid - the source GID of an established connection, as its QP has it
 * @index:	source GID index, -1: not known (iWARP, or a path without a GRH)
 * @type:	enum ib_gid_type of that entry, -1: not known
 * @gid:	the entry's GID, valid when @type is known
 */
struct kcoll_conn_gid {
	int index;
	int type;
	union ib_gid gid;
};

/* Names of enum ib_gid_type for messages (ib_cache_gid_type_str() is core-private). */
static const char *kcoll_gid_type_str(int type)
{
	switch (type) {
	case IB_GID_TYPE_IB:
		return "IB";
	case IB_GID_TYPE_ROCE:
		return "RoCE v1";
	case IB_GID_TYPE_ROCE_UDP_ENCAP:
		return "RoCE v2";
	default:
		return "unknown";
	}
}

/*
 * Read the source GID index of an established connection from its QP's address vector:
 * 6.1's rdma_cm chose it (from the source address and the port's default_roce_mode) and
 * keeps it nowhere a ULP may read.  ib_query_qp() returns no sgid_attr (rxe even leaves a
 * stale pointer there), so the type comes from the GID table.  Returns 0, or the error of
 * ib_query_qp(): then the index is not known although there is one to know.
 *
 * Context: process, in the id's cm handler (its handler lock keeps kcoll_rdma(conn)->qp),
 * and without comm->lock: query_qp may sleep (rxe's calls cond_resched(), hardware drivers
 * wait for a firmware command).
 */
static int kcoll_conn_read_gid(struct kcoll_conn *conn, struct rdma_cm_id *id,
			       struct kcoll_conn_gid *g)
{
	const struct ib_global_route *grh;
	struct ib_qp_init_attr init_attr;
	const struct ib_gid_attr *ga;
	struct ib_qp_attr attr;
	int ret;

	might_sleep();
	g->index = -1;
	g->type = -1;
	if (!kcoll_rdma(conn)->qp || rdma_protocol_iwarp(id->device, id->port_num))
		return 0;	/* iWARP: the address is all there is, no GID */
	ret = ib_query_qp(kcoll_rdma(conn)->qp, &attr, IB_QP_AV, &init_attr);
	if (ret)
		return ret;
	/* InfiniBand within a subnet: routed by LID, no source GID on the wire. */
	if (!(rdma_ah_get_ah_flags(&attr.ah_attr) & IB_AH_GRH))
		return 0;
	grh = rdma_ah_read_grh(&attr.ah_attr);
	g->index = grh->sgid_index;
	ga = rdma_get_gid_attr(id->device, id->port_num, g->index);
	if (IS_ERR(ga))
		return 0;	/* the entry went away since: its type is not known */
	g->type = ga->gid_type;
	g->gid = ga->gid;
	rdma_put_gid_attr(ga);
	return 0;
}

/*
 * Explain why a connection broke the device's GID selection.  Context: process, without
 * comm->lock (the GID table is read).
 */
static void kcoll_conn_gid_warn(struct kcoll_conn *conn, struct rdma_cm_id *id, int want,
				const struct kcoll_conn_gid *g, int err)
{
	struct kcoll_comm *comm = conn->comm;
	const char *dev = dev_name(&comm->dev->ibdev->dev);
	const struct ib_gid_attr *ga;

	if (err) {
		pr_warn_ratelimited("comm %llx: rank %u: %s selects GID index %d but the source GID of the connection to rank %u cannot be read (%d)\n",
				    comm->comm_id, comm->rank, dev, want, conn->peer, err);
		return;
	}
	ga = rdma_get_gid_attr(id->device, id->port_num, want);
	if (!IS_ERR(ga) && g->type >= 0 && !memcmp(&ga->gid, &g->gid, sizeof(g->gid))) {
		pr_warn_ratelimited("comm %llx: rank %u: %s selects GID index %d (%pI6 %s) but the connection to rank %u uses index %d, the same GID as %s: rdma_cm's default_roce_mode (configfs) decides the GID type\n",
				    comm->comm_id, comm->rank, dev, want, ga->gid.raw,
				    kcoll_gid_type_str(ga->gid_type), conn->peer, g->index,
				    kcoll_gid_type_str(g->type));
	} else {
		pr_warn_ratelimited("comm %llx: rank %u: %s selects GID index %d but the connection to rank %u uses index %d: the rank's address in the peer table must be the selected GID's address\n",
				    comm->comm_id, comm->rank, dev, want, conn->peer, g->index);
	}
	if (!IS_ERR(ga))
		rdma_put_gid_attr(ga);
}

/*
 * The connection is up: record its source GID, enforce the device's GID selection, report
 * it up (link upcall up).  A connection that breaks the selection fails the comm
 * (EADDRNOTAVAIL) before it is counted or used: nothing was sent on it, so teardown need
 * not drain it.
 */
static void kcoll_conn_established(struct kcoll_conn *conn, struct rdma_cm_id *id)
{
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_conn_gid g;
	int want, err;

	/* Before the lock: reading the QP may sleep. */
	err = kcoll_conn_read_gid(conn, id, &g);
	want = READ_ONCE(comm->dev->gid_index);

	spin_lock_bh(&comm->lock);
	if (conn->state == KCOLL_CONN_CONNECTING && comm->state == KCOLL_COMM_CONNECTING) {
		conn->sgid_index = g.index;
		conn->gid_type = g.type;
		if (want >= 0 && (err || (g.index >= 0 && g.index != want))) {
			kcoll_transport_up->fail(conn, -EADDRNOTAVAIL);
			spin_unlock_bh(&comm->lock);
			kcoll_conn_gid_warn(conn, id, want, &g, err);
			return;
		}
		kcoll_transport_link->up(conn);
	}
	spin_unlock_bh(&comm->lock);
}

/* Events of a connection's cm_id (active ids, and accepted ids via the listener). */
int kcoll_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kcoll_conn *conn = id->context;
	struct kcoll_comm *comm = conn->comm;
	struct rdma_conn_param param;
	struct kcoll_wire_hello hello;
	bool retry, stale, connecting, up;
	int ret;

	/*
	 * Events of an id the connection no longer uses (a failed attempt being released)
	 * are ignored.  Teardown holds this handler's lock while it releases the current id;
	 * after that, the comm is not connecting and the id is stale.
	 */
	spin_lock_bh(&comm->lock);
	stale = id != kcoll_rdma(conn)->cm_id;
	connecting = comm->state == KCOLL_COMM_CONNECTING;
	up = conn->state == KCOLL_CONN_UP;
	spin_unlock_bh(&comm->lock);
	if (stale)
		return 0;
	if (!connecting && (ev->event == RDMA_CM_EVENT_ADDR_RESOLVED ||
			    ev->event == RDMA_CM_EVENT_ROUTE_RESOLVED))
		return 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (id->device != comm->dev->ibdev) {
			kcoll_transport_fail(conn, -EHOSTUNREACH);
			return 0;
		}
		ret = kcoll_fi(CM, -ENOMEM, rdma_resolve_route(id, KCOLL_RESOLVE_MS));
		if (ret)
			kcoll_conn_retry_later(conn, -EHOSTUNREACH);
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = kcoll_conn_create_qp(conn, id);
		if (ret) {
			kcoll_transport_fail(conn, ret);
			return 0;
		}
		kcoll_conn_hello(conn, &hello);
		kcoll_conn_param(conn, &param);
		param.private_data = &hello;
		param.private_data_len = sizeof(hello);
		ret = kcoll_fi(CM, -ENOMEM, rdma_connect_locked(id, &param));
		if (ret)
			kcoll_conn_retry_later(conn, ret);
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* We connected (to a lower rank): the answer must prove the secret. */
		if (conn->peer < comm->rank && !kcoll_conn_accept_ok(conn, ev)) {
			pr_warn_ratelimited("comm %llx rank %u: rank %u accepted without proving the communicator's secret\n",
					    comm->comm_id, comm->rank, conn->peer);
			kcoll_transport_fail(conn, -EACCES);
			return 0;
		}
		kcoll_conn_established(conn, id);
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		ret = kcoll_reject_errno(ev, &retry);
		if (retry)
			kcoll_conn_retry_later(conn, ret);
		else
			kcoll_transport_fail(conn, ret);
		return 0;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		kcoll_conn_retry_later(conn, -EHOSTUNREACH);
		return 0;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * Before it is up, a connection that breaks is tried again (the passive side
		 * waits for the peer's next attempt); once up, losing it fails the comm --
		 * but only after the completions already in the CQ are processed: the peer
		 * may have acknowledged our last DONE, or sent us its own, just before it
		 * left, and those operations did succeed.
		 */
		if (up || READ_ONCE(conn->peer_left)) {
			/*
			 * Nothing may post while the drain runs (its work request must be
			 * the last): every post path checks for an up connection under the
			 * lock.
			 */
			spin_lock_bh(&comm->lock);
			if (conn->state == KCOLL_CONN_UP)
				kcoll_conn_change_state(conn, KCOLL_CONN_DOWN);
			spin_unlock_bh(&comm->lock);
			ib_drain_qp(kcoll_rdma(conn)->qp);
			kcoll_transport_link->down(conn);
		} else {
			kcoll_conn_retry_later(conn, ev->event == RDMA_CM_EVENT_DISCONNECTED ?
					       -ECONNRESET : -ETIMEDOUT);
		}
		return 0;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* kcoll's ib_client remove() shuts comms down before rdma_cm gets here. */
		kcoll_transport_fail(conn, -ENODEV);
		return 0;
	default:
		return 0;
	}
}
