// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll RDMA transport: one RC connection to a peer rank, its life: rdma_cm connect
 * (active side) and retry, accept (passive side), teardown.  What is not RDMA's (READY,
 * BYE, counting connections up) is kcoll_conn.c's.
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

void kcoll_conn_param(struct kcoll_conn *conn, struct rdma_conn_param *p)
{
	struct ib_device *ibdev = conn->comm->dev->ibdev;

	memset(p, 0, sizeof(*p));
	p->responder_resources = min_t(int, 16, ibdev->attrs.max_qp_rd_atom);
	p->initiator_depth = min_t(int, 16, ibdev->attrs.max_qp_init_rd_atom);
	p->retry_count = 7;
	/*
	 * Not 7, which is infinite: a peer that never posts receives would stall the send
	 * queue for ever.  Six RNR retries at the CM's timer (up to 655 ms each) ride out a
	 * receiver briefly short of buffers, then the work request fails.
	 */
	p->rnr_retry_count = 6;
	p->flow_control = 1;
}

/* The accept of @conn is over (accepted or given up): teardown may now go on. */
static void kcoll_conn_accept_done(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	kcoll_rdma(conn)->accepting = false;
	wake_up_all(&comm->wq);
	spin_unlock_bh(&comm->lock);
}

/*
 * Active side, connection established: did the accepting side prove the secret too?  An
 * impostor listener (another program on the peer's port) could accept without knowing it.
 */
bool kcoll_conn_accept_ok(struct kcoll_conn *conn, struct rdma_cm_event *ev)
{
	return kcoll_auth_accept_ok(conn, ev->param.conn.private_data,
				    ev->param.conn.private_data_len);
}

/*
 * Passive side: called by the listener for a request that named this comm, from the
 * right address, with the right MAC.
 *
 * Only a connecting comm that reaches the peer over RDMA accepts: a failed or shut down one
 * (whose device and PD are gone), or one on another transport (no device), is refused
 * before anything of it is looked at.  kcoll_rdma(conn)->accepting, set with that check
 * under comm->lock, makes teardown wait (kcoll_conn_teardown()) until the QP and CQ built
 * here on the comm's PD are either published in kcoll_rdma(conn)->cm_id or destroyed again,
 * so shutdown cannot free the PD or drop the device under them.  (Not teardown_mutex: this
 * runs under the listener's rdma_cm handler lock, which teardown takes inside that mutex.)
 */
int kcoll_conn_accept(struct kcoll_comm *comm, struct rdma_cm_id *id,
		      const struct kcoll_wire_hello *h)
{
	u32 src = be32_to_cpu(h->src_rank), nranks = be32_to_cpu(h->nranks);
	struct kcoll_wire_accept acc;
	struct rdma_conn_param param;
	struct kcoll_conn *conn;
	int ret;

	kcoll_auth_accept_msg(comm, h, &acc);
	/*
	 * Only a peer this comm reaches over RDMA: a comm on another transport has no device
	 * (comm->dev) and no QP for it.  The peer chose another transport than we did.
	 */
	if (nranks != comm->nranks || src >= nranks || src <= comm->rank ||
	    comm->conns[src].tp != &kcoll_rdma_transport)
		return KCOLL_REJ_MISMATCH;
	conn = &comm->conns[src];
	spin_lock_bh(&comm->lock);
	if (comm->state != KCOLL_COMM_CONNECTING) {
		spin_unlock_bh(&comm->lock);
		return KCOLL_REJ_STATE;
	}
	/* Connecting: the device is held until teardown, which waits for us. */
	if (id->device != comm->dev->ibdev) {
		spin_unlock_bh(&comm->lock);
		return KCOLL_REJ_DEVICE;
	}
	if (conn->state != KCOLL_CONN_IDLE) {
		spin_unlock_bh(&comm->lock);
		return KCOLL_REJ_DUPLICATE;
	}
	kcoll_conn_change_state(conn, KCOLL_CONN_CONNECTING);
	kcoll_rdma(conn)->accepting = true;
	spin_unlock_bh(&comm->lock);

	ret = kcoll_conn_create_qp(conn, id);
	if (ret)
		goto out_idle;
	/*
	 * Teardown finds the connection through kcoll_rdma(conn)->cm_id: publish it only while
	 * the comm still connects, or teardown may already have passed this connection by.
	 */
	spin_lock_bh(&comm->lock);
	if (comm->state == KCOLL_COMM_CONNECTING)
		kcoll_rdma(conn)->cm_id = id;
	spin_unlock_bh(&comm->lock);
	if (!kcoll_rdma(conn)->cm_id) {
		kcoll_conn_destroy_qp(conn, id);
		kcoll_conn_accept_done(conn);
		return KCOLL_REJ_STATE;
	}
	id->context = conn;
	id->event_handler = kcoll_cm_handler;
	kcoll_conn_param(conn, &param);
	param.private_data = &acc;
	param.private_data_len = sizeof(acc);
	/* Teardown waits for this handler (rdma_lock_handler) before it touches the QP. */
	ret = kcoll_fi(CM, -ENOMEM, rdma_accept(id, &param));
	if (ret) {
		kcoll_conn_destroy_qp(conn, id);
		spin_lock_bh(&comm->lock);
		kcoll_rdma(conn)->cm_id = NULL;
		spin_unlock_bh(&comm->lock);
		id->context = NULL;
		id->event_handler = NULL;
		goto out_idle;
	}
	kcoll_conn_accept_done(conn);
	return 0;

out_idle:
	spin_lock_bh(&comm->lock);
	kcoll_conn_change_state(conn, KCOLL_CONN_IDLE);
	spin_unlock_bh(&comm->lock);
	kcoll_conn_accept_done(conn);
	pr_warn_ratelimited("comm %llx: rank %u: cannot accept rank %u: %d\n",
			    comm->comm_id, comm->rank, src, ret);
	/*
	 * Our own resource failed, as on the connecting side: fail with it now.  The peer
	 * sees the refusal; we would otherwise wait out the timeout for a connection that
	 * cannot come and report -ETIMEDOUT.
	 */
	kcoll_transport_fail(conn, ret);
	return KCOLL_REJ_STATE;
}

/*
 * Active side: start (or restart) connecting to conn->peer.
 *
 * Context: comm->teardown_mutex held, so teardown cannot run between the state check and
 * publishing kcoll_rdma(conn)->cm_id.
 */
int kcoll_conn_connect(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct sockaddr_storage src;
	struct rdma_cm_id *id;
	int ret, tos;

	lockdep_assert_held(&comm->teardown_mutex);
	id = kcoll_fi(CM, ERR_PTR(-ENOMEM),
		      rdma_create_id(comm->net, kcoll_cm_handler, conn, RDMA_PS_TCP, IB_QPT_RC));
	if (IS_ERR(id))
		return PTR_ERR(id);
	/* comm->dev only changes under teardown_mutex (shutdown clears it): held here. */
	tos = comm->dev ? READ_ONCE(comm->dev->tos) : -1;
	if (tos < 0)
		tos = READ_ONCE(kcoll_tos);
	if (tos >= 0)
		rdma_set_service_type(id, min(tos, 255));
	spin_lock_bh(&comm->lock);
	if (comm->state != KCOLL_COMM_CONNECTING) {
		spin_unlock_bh(&comm->lock);
		rdma_destroy_id(id);
		return 0;
	}
	kcoll_rdma(conn)->cm_id = id;
	kcoll_conn_change_state(conn, KCOLL_CONN_CONNECTING);
	spin_unlock_bh(&comm->lock);

	/* Our own address, any port: the connection leaves from this rank's device. */
	src = comm->addrs[comm->rank];
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	ret = kcoll_fi(CM, -ENOMEM, rdma_resolve_addr(id, (struct sockaddr *)&src,
						      (struct sockaddr *)&comm->addrs[conn->peer],
						      KCOLL_RESOLVE_MS));
	if (ret) {
		spin_lock_bh(&comm->lock);
		kcoll_rdma(conn)->cm_id = NULL;
		spin_unlock_bh(&comm->lock);
		rdma_destroy_id(id);
	}
	return ret;
}

/* Schedule the next attempt, or give up once the comm's deadline has passed. */
/*
 * Disconnect, drain and destroy the connection's QP, CQ and cm_id.  The id's handler lock
 * keeps its handlers (which create the QP) out meanwhile; a handler that runs after finds
 * the comm no longer connecting and does nothing.
 *
 * Context: comm->teardown_mutex held.
 */
static void kcoll_conn_release_id(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct rdma_cm_id *id;
	bool was_up;

	lockdep_assert_held(&comm->teardown_mutex);
	spin_lock_bh(&comm->lock);
	id = kcoll_rdma(conn)->cm_id;
	kcoll_rdma(conn)->cm_id = NULL;
	was_up = conn->state == KCOLL_CONN_UP;
	spin_unlock_bh(&comm->lock);
	if (!id)
		return;
	rdma_lock_handler(id);
	/*
	 * Only a connection that came up is disconnected; destroying the id ends one still
	 * connecting.  On iWARP, rdma_disconnect() of an id whose connect is in flight waits
	 * (iw_cm_disconnect(), IWCM_F_CONNECT_WAIT) for the connect reply to be handled, and
	 * that handler needs the lock held here: a ~27 s stall until the reply timed out.
	 */
	if (was_up)
		rdma_disconnect(id);
	/*
	 * Every posted send completes (flushed) before its memory is released.  A QP that
	 * never came up has only receives posted, which destroying it discards; it may not
	 * even accept the drain's WR (rxe refuses sends before RTS).
	 */
	if (kcoll_rdma(conn)->qp && was_up)
		ib_drain_qp(kcoll_rdma(conn)->qp);
	kcoll_conn_destroy_qp(conn, id);
	rdma_unlock_handler(id);
	rdma_destroy_id(id);
}

void kcoll_conn_retry_later(struct kcoll_conn *conn, int err)
{
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	conn->last_err = err;
	if (comm->state == KCOLL_COMM_CONNECTING && conn->state == KCOLL_CONN_CONNECTING) {
		kcoll_conn_change_state(conn, KCOLL_CONN_RETRY);
		queue_delayed_work(kcoll_wq, &conn->retry_work, msecs_to_jiffies(KCOLL_RETRY_MS));
	}
	spin_unlock_bh(&comm->lock);
}

void kcoll_conn_retry_work(struct work_struct *work)
{
	struct kcoll_conn *conn = container_of(to_delayed_work(work), struct kcoll_conn,
					       retry_work);
	struct kcoll_comm *comm = conn->comm;
	int ret;

	mutex_lock(&comm->teardown_mutex);
	spin_lock_bh(&comm->lock);
	if (comm->state != KCOLL_COMM_CONNECTING || conn->state != KCOLL_CONN_RETRY) {
		spin_unlock_bh(&comm->lock);
		kcoll_comm_up->teardown_unlock(comm);
		return;
	}
	spin_unlock_bh(&comm->lock);
	/* The refused attempt's id and QP go first: never destroy an id in its handler. */
	kcoll_conn_release_id(conn);
	if (conn->peer > comm->rank) {
		/* Passive side: the attempt failed half-way; wait for the peer's next one. */
		spin_lock_bh(&comm->lock);
		if (conn->state == KCOLL_CONN_RETRY)
			kcoll_conn_change_state(conn, KCOLL_CONN_IDLE);
		spin_unlock_bh(&comm->lock);
		kcoll_comm_up->teardown_unlock(comm);
		return;
	}
	ret = kcoll_conn_connect(conn);
	kcoll_comm_up->teardown_unlock(comm);
	if (ret)
		kcoll_conn_retry_later(conn, ret);
}

/**
 * kcoll_conn_teardown - disconnect, drain and free everything of a connection
 * @conn:	the connection
 *
 * Context: comm->teardown_mutex held; the comm is no longer connecting, so no retry can be
 * queued, and the caller cancelled any before taking the mutex (retry_work takes it too).
 */
void kcoll_conn_teardown(struct kcoll_conn *conn)
{
	struct kcoll_rdma_conn *rc = kcoll_rdma(conn);

	/* None for our own rank, or when attach failed: nothing was ever connected. */
	if (rc) {
		/* An accept in progress builds on the PD: let it publish or undo its work. */
		wait_event(conn->comm->wq, !READ_ONCE(rc->accepting));
		kcoll_conn_release_id(conn);
	}
	spin_lock_bh(&conn->comm->lock);
	kcoll_conn_change_state(conn, KCOLL_CONN_DOWN);
	spin_unlock_bh(&conn->comm->lock);
}
