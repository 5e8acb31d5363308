// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: the transport-neutral half of a connection's life.  A transport only reports a
 * link to a peer up (kcoll_conn_up()) or, once up, down and drained (kcoll_conn_down()),
 * through the upcalls registered here (struct kcoll_link_upcalls); this file counts the
 * links up (comm->nup), exchanges READY and BYE and their receive handlers, decides when
 * the communicator is ready and handles a peer that left in order.
 *
 * State is guarded by comm->lock; nothing sleeps under it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>

#include "kcoll.h"
#include "kcoll_nl.h"

/* Ready once every connection is up and every peer said READY. Context: comm->lock. */
static void kcoll_comm_check_ready(struct kcoll_comm *comm)
{
	lockdep_assert_held(&comm->lock);
	if (comm->state == KCOLL_COMM_CONNECTING && comm->nup == comm->nranks - 1 &&
	    comm->nready == comm->nranks - 1) {
		kcoll_comm_change_state(comm, KCOLL_COMM_READY, 0);
		comm->was_ready = true;
		wake_up_all(&comm->wq);
	}
}

/*
 * Tell one peer that all our connections are up.  On a connection we accepted, only once
 * the peer's READY has arrived: iWARP's MPA (RFC 5044) forbids the responder to send before
 * the initiator's first FPDU (siw resets the connection when data follows its MPA reply), so
 * the passive side always speaks second, on every transport.  The active side never waits,
 * so this cannot deadlock (the highest rank accepts nothing).  Context: comm->lock.
 */
static void kcoll_conn_send_ready(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_ctrl *c;

	lockdep_assert_held(&comm->lock);
	if (conn->ready_sent || (conn->peer > comm->rank && !conn->peer_ready))
		return;
	c = conn->tp->ctrl_get(conn);
	if (!c) {
		kcoll_transport_up->fail(conn, -ENOMEM);
		return;
	}
	if (kcoll_tp_signal(conn, c, KCOLL_MSG_READY)) {
		kcoll_transport_up->fail(conn, -EIO);
		return;
	}
	conn->ready_sent = true;
}

/**
 * kcoll_comm_nudge - send a NOP after our READY where the peer's READY is overdue
 * @comm:	a connecting communicator
 *
 * Soft-iWARP (6.1) can miss the first message after its MPA reply: data that arrives
 * before siw hands the socket from its connection manager to the QP raises no second
 * wake-up, so our READY may sit unread in the peer's socket until more data comes.  The
 * creating thread calls this every KCOLL_NUDGE_MS while it waits; a NOP (ignored by the
 * receiver) is that more data.  Only the active side may send first, so only it nudges.
 *
 * Context: process context, comm->lock not held.
 */
void kcoll_comm_nudge(struct kcoll_comm *comm)
{
	struct kcoll_ctrl *c;
	u32 i;

	spin_lock_bh(&comm->lock);
	for (i = 0; i < comm->rank && comm->state == KCOLL_COMM_CONNECTING; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		if (conn->state != KCOLL_CONN_UP || !conn->ready_sent || conn->peer_ready)
			continue;
		c = conn->tp->ctrl_get(conn);
		if (!c)
			continue;
		if (kcoll_tp_signal(conn, c, KCOLL_MSG_NOP))
			kcoll_transport_up->fail(conn, -EIO);
	}
	spin_unlock_bh(&comm->lock);
}

/* All our connections are up: tell every peer that may hear it now.  Context: comm->lock. */
static void kcoll_comm_send_ready(struct kcoll_comm *comm)
{
	u32 i;

	for (i = 0; i < comm->nranks; i++) {
		if (i == comm->rank)
			continue;
		kcoll_conn_send_ready(&comm->conns[i]);
		if (comm->state != KCOLL_COMM_CONNECTING)
			return;
	}
}

/*
 * The peer destroyed its end in order, having taken our sends numbered below @taken: what
 * we had pending with it is settled (upcalls peer_left), the rest of the communicator goes
 * on.  The memory of the requests that failed is released once the transport reports the
 * link down, drained (kcoll_conn_down()).
 */
static void kcoll_conn_peer_left(struct kcoll_conn *conn, u32 taken)
{
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	conn->peer_left = true;
	if (conn->state == KCOLL_CONN_UP)
		kcoll_conn_change_state(conn, KCOLL_CONN_DOWN);
	kcoll_transport_up->peer_left(conn, taken);
	wake_up_all(&comm->wq);		/* a same-host rendezvous waits for it there */
	spin_unlock_bh(&comm->lock);
	kcoll_nl_event_peer_lost(comm, conn->peer, -ECONNRESET);
}

/* After a departed peer's link was drained: its failed requests may let go. */
static void kcoll_conn_release_reqs(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_req *req;

	spin_lock_bh(&comm->lock);
	list_for_each_entry(req, &comm->reqs, all) {
		if (req->conn == conn && req->state == KCOLL_REQ_DONE && !req->hw_queued) {
			req->hw_queued = true;
			queue_work(kcoll_wq, &req->hw_work);
		}
	}
	spin_unlock_bh(&comm->lock);
}

/*
 * upcalls up: @conn's link to its peer is established.  Counted once, while the comm
 * connects; the last one sends our READYs.  Context: comm->lock held.
 */
static void kcoll_conn_up(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	lockdep_assert_held(&comm->lock);
	if (conn->state != KCOLL_CONN_CONNECTING || comm->state != KCOLL_COMM_CONNECTING)
		return;
	kcoll_conn_change_state(conn, KCOLL_CONN_UP);
	conn->last_ok = jiffies;
	conn->last_tx = jiffies;
	comm->nup++;
	wake_up_all(&comm->wq);
	if (comm->nup == comm->nranks - 1) {
		kcoll_comm_send_ready(comm);
		kcoll_comm_check_ready(comm);
	}
}

/*
 * upcalls down: the link of an up @conn broke and the transport drained it (every
 * completion that was coming has run).  After the peer's BYE that is its orderly exit:
 * what waited for an acknowledgment is settled (upcalls peer_gone).  Otherwise the comm
 * fails, unless we said our own BYE already: a peer that had our BYE closes its end
 * without one (kcoll_comm_say_bye() skips ranks that left), and failing now would end our
 * wait for the other peers' acknowledgements and drop our BYEs to them.
 * Nothing more is posted after our BYE, and destroy aborts what is still pending.
 * Context: process, comm->lock not held.
 */
static void kcoll_conn_down(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	/* A BYE may have been among the completions just processed. */
	if (READ_ONCE(conn->peer_left)) {
		spin_lock_bh(&comm->lock);
		kcoll_transport_up->peer_gone(conn);
		spin_unlock_bh(&comm->lock);
		kcoll_conn_release_reqs(conn);
		return;
	}
	/* Under the lock: our BYE and the leaving flag are set under it together. */
	spin_lock_bh(&comm->lock);
	if (!comm->leaving)
		kcoll_transport_up->fail(conn, -ECONNRESET);
	spin_unlock_bh(&comm->lock);
}

/* BYE: the peer leaves in order (kcoll_conn_peer_left()). */
static void kcoll_conn_bye_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len)
{
	const struct kcoll_wire_bye *msg = (const void *)hdr;

	kcoll_conn_peer_left(conn, be32_to_cpu(msg->taken));
}

/* READY: the peer has all its connections up; a repeated one is ignored. */
static void kcoll_conn_ready_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr,
				u32 len)
{
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	if (!conn->peer_ready) {
		conn->peer_ready = true;
		comm->nready++;
		/* Our READY on an accepted connection waited for this one. */
		if (comm->state == KCOLL_COMM_CONNECTING && comm->nup == comm->nranks - 1)
			kcoll_conn_send_ready(conn);
		kcoll_comm_check_ready(comm);
	}
	spin_unlock_bh(&comm->lock);
}

/* The connection layer's own messages: they count even after the peer's BYE. */
static const struct kcoll_rx_handler kcoll_conn_rx_handlers[] = {
	{ .type = KCOLL_MSG_BYE, .handler = kcoll_conn_bye_rx, .after_bye = true },
	{ .type = KCOLL_MSG_READY, .handler = kcoll_conn_ready_rx, .after_bye = true },
};

static const struct kcoll_link_upcalls kcoll_conn_link = {
	.up	= kcoll_conn_up,
	.down	= kcoll_conn_down,
	.find_get = kcoll_comm_find_get,
	.comm_put = kcoll_comm_put,
};

/* At load: the transports' up and down reach this file; READY and BYE are its messages. */
int kcoll_conn_init(void)
{
	kcoll_transport_set_link(&kcoll_conn_link);
	return kcoll_rx_register_handlers(kcoll_conn_rx_handlers,
					  ARRAY_SIZE(kcoll_conn_rx_handlers));
}
