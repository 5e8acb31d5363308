// SPDX-License-Identifier: GPL-2.0
/*
 * One RC connection to a peer rank: rdma_cm connect (active side) or accept (passive side),
 * the QP and its CQ, and the control messages that travel on it.
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

#include "kcoll.h"
#include "kcoll_nl.h"
#include "transport/rdma.h"

/* Retry a refused or unreachable connect this often until the comm's deadline. */
#define KCOLL_RETRY_MS		200
#define KCOLL_RESOLVE_MS	2000

static void kcoll_conn_tx_done(struct ib_cq *cq, struct ib_wc *wc);
static void kcoll_conn_rx_done(struct ib_cq *cq, struct ib_wc *wc);

static void kcoll_conn_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kcoll_conn *conn = container_of(wc->wr_cqe, struct kcoll_conn, wr_cqe);
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	kcoll_conn_sq_give(conn, wc->status == IB_WC_SUCCESS);
	if (wc->status == IB_WC_SUCCESS)
		conn->last_ok = jiffies;
	spin_unlock_bh(&comm->lock);
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_err_ratelimited("comm %llx: rank %u: write to rank %u failed: %s\n",
					   comm->comm_id, comm->rank, conn->peer,
					   ib_wc_status_msg(wc->status));
		kcoll_comm_fail(comm, -ECONNRESET, conn->peer);
		return;
	}
	kcoll_transport_up->progress(conn);
}

static void kcoll_conn_free_ctrl(struct kcoll_conn *conn)
{
	struct ib_device *ibdev = conn->comm->dev->ibdev;
	int i;

	for (i = 0; conn->rx && i < KCOLL_RX_DEPTH; i++) {
		if (conn->rx[i].msg) {
			ib_dma_unmap_single(ibdev, conn->rx[i].dma, KCOLL_WIRE_MSG_SIZE,
					    DMA_FROM_DEVICE);
			kfree(conn->rx[i].msg);
		}
	}
	for (i = 0; conn->tx && i < KCOLL_TX_CTRL; i++) {
		/*
		 * A message whose completion never came still holds its request: Soft-iWARP
		 * can complete a WR it was processing after the drain's marker, and freeing
		 * the CQ drops that late completion.
		 */
		if (conn->tx[i].req) {
			kcoll_transport_up->put(conn->tx[i].req);
			conn->tx[i].req = NULL;
		}
		if (conn->tx[i].msg) {
			ib_dma_unmap_single(ibdev, conn->tx[i].dma, KCOLL_WIRE_MSG_SIZE,
					    DMA_TO_DEVICE);
			kfree(conn->tx[i].msg);
		}
	}
	kfree(conn->rx);
	kfree(conn->tx);
	conn->rx = NULL;
	conn->tx = NULL;
}

static int kcoll_ctrl_init(struct kcoll_conn *conn, struct kcoll_ctrl *c,
			   enum dma_data_direction dir)
{
	struct ib_device *ibdev = conn->comm->dev->ibdev;

	c->conn = conn;
	c->msg = kcoll_fi(ALLOC, NULL, kzalloc(KCOLL_WIRE_MSG_SIZE, GFP_KERNEL));
	if (!c->msg)
		return -ENOMEM;
	c->dma = ib_dma_map_single(ibdev, c->msg, KCOLL_WIRE_MSG_SIZE, dir);
	if (ib_dma_mapping_error(ibdev, c->dma)) {
		kfree(c->msg);
		c->msg = NULL;
		return -ENOMEM;
	}
	c->cqe.done = dir == DMA_TO_DEVICE ? kcoll_conn_tx_done : kcoll_conn_rx_done;
	return 0;
}

static int kcoll_conn_post_rx(struct kcoll_conn *conn, struct kcoll_ctrl *c)
{
	struct ib_sge sge = {
		.addr = c->dma,
		.length = KCOLL_WIRE_MSG_SIZE,
		.lkey = conn->comm->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &c->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(conn->comm->dev->ibdev, c->dma, KCOLL_WIRE_MSG_SIZE,
				      DMA_FROM_DEVICE);
	return kcoll_fi(POST, -ENOMEM, ib_post_recv(conn->qp, &wr, NULL));
}

/* CQ, QP and control buffers on @id, which is bound to the comm's device. */
static int kcoll_conn_create_qp(struct kcoll_conn *conn, struct rdma_cm_id *id)
{
	struct kcoll_comm *comm = conn->comm;
	struct ib_device *ibdev = comm->dev->ibdev;
	struct ib_qp_init_attr attr = {};
	int i, ret;

	/*
	 * One more send and receive slot than kcoll ever fills, and their two CQ entries:
	 * ib_drain_qp() posts one work request on each queue and WARNs when it cannot (rxe
	 * rounds queues up to a power of two and hides this; mlx5 does not).
	 */
	conn->cq = kcoll_fi(CQ, ERR_PTR(-ENOMEM),
			    ib_alloc_cq(ibdev, conn, KCOLL_SQ_DEPTH + KCOLL_RX_DEPTH + 2,
					conn->peer % ibdev->num_comp_vectors, IB_POLL_WORKQUEUE));
	if (IS_ERR(conn->cq)) {
		ret = PTR_ERR(conn->cq);
		conn->cq = NULL;
		return ret;
	}
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = KCOLL_SQ_DEPTH + 1;
	attr.cap.max_recv_wr = KCOLL_RX_DEPTH + 1;
	attr.cap.max_send_sge = min_t(u32, ibdev->attrs.max_send_sge, 16);
	attr.cap.max_recv_sge = 1;
	ret = kcoll_fi(QP, -ENOMEM, rdma_create_qp(id, comm->pd, &attr));
	if (ret)
		goto out_free_cq;
	conn->qp = id->qp;

	conn->rx = kcoll_fi(ALLOC, NULL, kcalloc(KCOLL_RX_DEPTH, sizeof(*conn->rx), GFP_KERNEL));
	conn->tx = kcoll_fi(ALLOC, NULL, kcalloc(KCOLL_TX_CTRL, sizeof(*conn->tx), GFP_KERNEL));
	if (!conn->rx || !conn->tx) {
		ret = -ENOMEM;
		goto out_free_ctrl;
	}
	for (i = 0; i < KCOLL_RX_DEPTH; i++) {
		ret = kcoll_ctrl_init(conn, &conn->rx[i], DMA_FROM_DEVICE);
		if (ret)
			goto out_free_ctrl;
		ret = kcoll_conn_post_rx(conn, &conn->rx[i]);
		if (ret)
			goto out_free_ctrl;
	}
	/* Allocation sleeps: done before the lock, which only publishes the free list. */
	for (i = 0; i < KCOLL_TX_CTRL; i++) {
		ret = kcoll_ctrl_init(conn, &conn->tx[i], DMA_TO_DEVICE);
		if (ret)
			goto out_free_ctrl;
	}
	spin_lock_bh(&comm->lock);
	INIT_LIST_HEAD(&conn->tx_free);
	for (i = 0; i < KCOLL_TX_CTRL; i++)
		list_add_tail(&conn->tx[i].list, &conn->tx_free);
	conn->sq_free = KCOLL_SQ_DEPTH;
	conn->wr_cqe.done = kcoll_conn_wr_done;
	spin_unlock_bh(&comm->lock);
	return 0;

out_free_ctrl:
	/* Posted receives are flushed by destroying the QP before their buffers go. */
	rdma_destroy_qp(id);
	conn->qp = NULL;
	kcoll_conn_free_ctrl(conn);
out_free_cq:
	ib_free_cq(conn->cq);
	conn->cq = NULL;
	return ret;
}

/* Destroy QP, CQ and control buffers; the QP must be drained (or never connected). */
static void kcoll_conn_destroy_qp(struct kcoll_conn *conn, struct rdma_cm_id *id)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (conn->qp) {
		/*
		 * Error state first, even for a QP that never came up: rxe 6.1 queues
		 * arriving packets on the QP with a reference each and drains them only from
		 * its tasks in error state (rxe_qp_error() runs them) -- destroying a QP that
		 * still holds some waits 50 s for them in __rxe_cleanup() and WARNs.  Packets
		 * that arrive after this are dropped.  Failure is harmless: destroy follows.
		 */
		ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
		rdma_destroy_qp(id);
		conn->qp = NULL;
	}
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	kcoll_conn_free_ctrl(conn);
}

/**
 * kcoll_conn_sq_take - account one work request posted on @conn's send queue
 * @conn:	the connection
 *
 * Context: comm->lock held.
 */
void kcoll_conn_sq_take(struct kcoll_conn *conn)
{
	lockdep_assert_held(&conn->comm->lock);
	if (conn->sq_free == KCOLL_SQ_DEPTH)
		conn->sq_moved = jiffies;	/* the wait for this one starts now */
	conn->sq_free--;
	conn->last_tx = jiffies;
}

/**
 * kcoll_conn_sq_give - account the completion of one of @conn's send work requests
 * @conn:	the connection
 * @ok:		it succeeded: the queue moves (and for a SEND or WRITE the peer answered)
 *
 * Context: comm->lock held.
 */
void kcoll_conn_sq_give(struct kcoll_conn *conn, bool ok)
{
	lockdep_assert_held(&conn->comm->lock);
	conn->sq_free++;
	if (ok)
		conn->sq_moved = jiffies;
}

/**
 * kcoll_ctrl_get - a free control send buffer and a send queue slot, or NULL
 * @conn:	the connection
 *
 * Context: comm->lock held.
 */
struct kcoll_ctrl *kcoll_ctrl_get(struct kcoll_conn *conn)
{
	struct kcoll_ctrl *c;

	lockdep_assert_held(&conn->comm->lock);
	if (conn->state != KCOLL_CONN_UP || conn->sq_free < 1 || list_empty(&conn->tx_free))
		return NULL;
	c = list_first_entry(&conn->tx_free, struct kcoll_ctrl, list);
	list_del_init(&c->list);
	memset(c->msg, 0, KCOLL_WIRE_FIXED_SIZE);
	c->req = NULL;
	return c;
}

/**
 * kcoll_ctrl_post - SEND a control message filled in by the caller
 * @conn:	the connection
 * @c:		buffer from kcoll_ctrl_get(), message body filled in
 * @len:	bytes to send
 *
 * Context: comm->lock held; on failure the buffer is back in the free list.
 */
int kcoll_ctrl_post(struct kcoll_conn *conn, struct kcoll_ctrl *c, size_t len)
{
	struct ib_sge sge = {
		.addr = c->dma,
		.length = len,
		.lkey = conn->comm->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &c->cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct kcoll_wire_hdr *hdr = c->msg;
	int ret;

	lockdep_assert_held(&conn->comm->lock);
	hdr->magic = cpu_to_be32(KCOLL_WIRE_MAGIC);
	ib_dma_sync_single_for_device(conn->comm->dev->ibdev, c->dma, len, DMA_TO_DEVICE);
	ret = kcoll_fi(POST, -ENOMEM, ib_post_send(conn->qp, &wr, NULL));
	if (ret) {
		list_add(&c->list, &conn->tx_free);
		return ret;
	}
	kcoll_conn_sq_take(conn);
	return 0;
}

/**
 * kcoll_ctrl_signal - SEND a message whose type is all it says (NOP, READY, BYE)
 * @conn:	the connection
 * @c:		buffer from kcoll_ctrl_get()
 * @type:	KCOLL_MSG_NOP, KCOLL_MSG_READY or KCOLL_MSG_BYE
 *
 * Context: comm->lock held; on failure the buffer is back in the free list.
 */
int kcoll_ctrl_signal(struct kcoll_conn *conn, struct kcoll_ctrl *c, u8 type)
{
	struct kcoll_wire_signal *m = c->msg;

	m->hdr.type = type;
	return kcoll_ctrl_post(conn, c, sizeof(*m));
}

/* ctrl_put: a slot from kcoll_ctrl_get() goes back unused.  Context: comm->lock held. */
void kcoll_ctrl_put(struct kcoll_conn *conn, struct kcoll_ctrl *c)
{
	lockdep_assert_held(&conn->comm->lock);
	list_add(&c->list, &conn->tx_free);
}

/* ctrl_free: a control buffer and a send queue slot are free.  Context: comm->lock held. */
bool kcoll_ctrl_free(struct kcoll_conn *conn)
{
	lockdep_assert_held(&conn->comm->lock);
	return !list_empty(&conn->tx_free) && conn->sq_free >= 1;
}

/* tx_room: @n more work requests fit on the send queue.  Context: comm->lock held. */
bool kcoll_conn_tx_room(struct kcoll_conn *conn, unsigned int n)
{
	lockdep_assert_held(&conn->comm->lock);
	return conn->sq_free >= (int)n;
}

/*
 * tx_stalled: work requests are outstanding and the send queue has not moved for
 * @timeout: the peer talks but takes none of our messages (it posts no receive, so our
 * SEND meets RNR NAKs that some drivers retry for ever).  Context: comm->lock held.
 */
bool kcoll_conn_tx_stalled(struct kcoll_conn *conn, unsigned long timeout)
{
	lockdep_assert_held(&conn->comm->lock);
	return conn->sq_free < KCOLL_SQ_DEPTH && time_after(jiffies, conn->sq_moved + timeout);
}

/**
 * kcoll_rdma_write - write: one RDMA WRITE of a range of @r into the peer's segment
 * @conn:	an established connection
 * @r:		the local region, DMA mapped
 * @off:	first byte of the range of @r
 * @len:	its bytes; at most KCOLL_MAX_WR_BYTES and KCOLL_MAX_SGE entries of it go in
 *		this work request
 * @seg:	the peer's registered segment (from its CTS), big endian
 * @seg_off:	where in @seg the range lands
 * @bytes:	out: bytes this work request moves
 *
 * Return: 0, or -EIO if the post failed (nothing posted).  Context: comm->lock held; the
 * caller checked kcoll_conn_tx_room().
 */
int kcoll_rdma_write(struct kcoll_conn *conn, struct kcoll_region *r, u64 off, u64 len,
		     const struct kcoll_wire_seg *seg, u64 seg_off, u64 *bytes)
{
	struct kcoll_comm *comm = conn->comm;
	u32 max_sge = min_t(u32, comm->dev->ibdev->attrs.max_send_sge, KCOLL_MAX_SGE);
	struct ib_sge sges[KCOLL_MAX_SGE];
	struct ib_rdma_wr wr = {};

	lockdep_assert_held(&comm->lock);
	wr.wr.num_sge = kcoll_rdma_mr_sges(r, off, min_t(u64, len, KCOLL_MAX_WR_BYTES), sges,
					   max_sge, comm->pd->local_dma_lkey, bytes);
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.wr_cqe = &conn->wr_cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = sges;
	wr.remote_addr = be64_to_cpu(seg->addr) + seg_off;
	wr.rkey = be32_to_cpu(seg->rkey);
	if (kcoll_fi(POST, -ENOMEM, ib_post_send(conn->qp, &wr.wr, NULL)))
		return -EIO;
	kcoll_conn_sq_take(conn);
	return 0;
}

static void kcoll_conn_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kcoll_ctrl *c = container_of(wc->wr_cqe, struct kcoll_ctrl, cqe);
	struct kcoll_conn *conn = c->conn;
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_req *req;

	spin_lock_bh(&comm->lock);
	kcoll_conn_sq_give(conn, wc->status == IB_WC_SUCCESS);
	if (wc->status == IB_WC_SUCCESS) {
		conn->last_ok = jiffies;
		if (((struct kcoll_wire_hdr *)c->msg)->type == KCOLL_MSG_BYE) {
			comm->nbye_acked++;
			wake_up_all(&comm->wq);
		}
	}
	req = c->req;
	c->req = NULL;
	list_add(&c->list, &conn->tx_free);
	if (atomic_read(&comm->ctrl_waiters))	/* a buffer's announcement waits for a slot */
		wake_up_all(&comm->wq);
	if (req && wc->status == IB_WC_SUCCESS)
		kcoll_transport_up->acked(req);
	spin_unlock_bh(&comm->lock);
	if (req)
		kcoll_transport_up->put(req);	/* the EAGER's, DONE's or CTS's reference */
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_err_ratelimited("comm %llx: rank %u: send to rank %u failed: %s\n",
					   comm->comm_id, comm->rank, conn->peer,
					   ib_wc_status_msg(wc->status));
		kcoll_comm_fail(comm, -ECONNRESET, conn->peer);
		return;
	}
	kcoll_transport_up->progress(conn);
}

static void kcoll_conn_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kcoll_ctrl *c = container_of(wc->wr_cqe, struct kcoll_ctrl, cqe);
	struct kcoll_conn *conn = c->conn;
	struct kcoll_comm *comm = conn->comm;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			kcoll_comm_fail(comm, -ECONNRESET, conn->peer);
		return;
	}
	ib_dma_sync_single_for_cpu(comm->dev->ibdev, c->dma, KCOLL_WIRE_MSG_SIZE,
				   DMA_FROM_DEVICE);
	spin_lock_bh(&comm->lock);
	conn->last_ok = jiffies;
	spin_unlock_bh(&comm->lock);
	kcoll_transport_up->rx(conn, c->msg, wc->byte_len);
	if (kcoll_conn_post_rx(conn, c))
		kcoll_comm_fail(comm, -ECONNRESET, conn->peer);
	kcoll_transport_up->progress(conn);
}

static void kcoll_conn_param(struct kcoll_conn *conn, struct rdma_conn_param *p)
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
	conn->accepting = false;
	wake_up_all(&comm->wq);
	spin_unlock_bh(&comm->lock);
}

/**
 * kcoll_wire_mac - a connect MAC: SipHash-2-4 keyed with the communicator's secret
 * @comm:	the communicator
 * @h:		the hello the MAC is about
 * @tag:	KCOLL_WIRE_TAG_HELLO (the hello's own) or KCOLL_WIRE_TAG_ACCEPT (the answer's)
 */
u64 kcoll_wire_mac(const struct kcoll_comm *comm, const struct kcoll_wire_hello *h, u32 tag)
{
	u8 in[KCOLL_WIRE_MAC_LEN];

	kcoll_wire_mac_input(h, tag, in);
	return siphash(in, sizeof(in), &comm->secret);
}

/* The hello we send to (and whose answer we expect from) @conn's peer. */
static void kcoll_conn_hello(struct kcoll_conn *conn, struct kcoll_wire_hello *h)
{
	struct kcoll_comm *comm = conn->comm;

	*h = (struct kcoll_wire_hello) {
		.magic = cpu_to_be32(KCOLL_WIRE_MAGIC),
		.version = kcoll_proto_version,
		.comm_id = cpu_to_be64(comm->comm_id),
		.src_rank = cpu_to_be32(comm->rank),
		.dst_rank = cpu_to_be32(conn->peer),
		.nranks = cpu_to_be32(comm->nranks),
	};
	h->mac = cpu_to_be64(kcoll_wire_mac(comm, h, KCOLL_WIRE_TAG_HELLO));
}

/*
 * Active side, connection established: did the accepting side prove the secret too?  An
 * impostor listener (another program on the peer's port) could accept without knowing it.
 */
static bool kcoll_conn_accept_ok(struct kcoll_conn *conn, struct rdma_cm_event *ev)
{
	const struct kcoll_wire_accept *acc = ev->param.conn.private_data;
	struct kcoll_wire_hello h;
	__be64 want;

	if (!acc || ev->param.conn.private_data_len < sizeof(*acc) ||
	    be32_to_cpu(acc->magic) != KCOLL_WIRE_MAGIC)
		return false;
	kcoll_conn_hello(conn, &h);
	want = cpu_to_be64(kcoll_wire_mac(conn->comm, &h, KCOLL_WIRE_TAG_ACCEPT));
	return !crypto_memneq(&want, &acc->mac, sizeof(want));
}

/*
 * Passive side: called by the listener for a request that named this comm, from the
 * right address, with the right MAC.
 *
 * Only a connecting comm accepts: a failed or shut down one (whose device and PD are gone)
 * is refused before anything of it is looked at.  conn->accepting, set with that check under
 * comm->lock, makes teardown wait (kcoll_conn_teardown()) until the QP and CQ built here on
 * the comm's PD are either published in conn->cm_id or destroyed again, so shutdown cannot
 * free the PD or drop the device under them.  (Not teardown_mutex: this runs under the
 * listener's rdma_cm handler lock, which teardown takes inside that mutex.)
 */
int kcoll_conn_accept(struct kcoll_comm *comm, struct rdma_cm_id *id,
		      const struct kcoll_wire_hello *h)
{
	u32 src = be32_to_cpu(h->src_rank), nranks = be32_to_cpu(h->nranks);
	struct kcoll_wire_accept acc = {
		.magic = cpu_to_be32(KCOLL_WIRE_MAGIC),
		.version = kcoll_proto_version,
		.mac = cpu_to_be64(kcoll_wire_mac(comm, h, KCOLL_WIRE_TAG_ACCEPT)),
	};
	struct rdma_conn_param param;
	struct kcoll_conn *conn;
	int ret;

	if (nranks != comm->nranks || src >= nranks || src <= comm->rank)
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
	kcoll_conn_set_state(conn, KCOLL_CONN_CONNECTING);
	conn->accepting = true;
	spin_unlock_bh(&comm->lock);

	ret = kcoll_conn_create_qp(conn, id);
	if (ret)
		goto out_idle;
	/*
	 * Teardown finds the connection through conn->cm_id: publish it only while the comm
	 * still connects, or teardown may already have passed this connection by.
	 */
	spin_lock_bh(&comm->lock);
	if (comm->state == KCOLL_COMM_CONNECTING)
		conn->cm_id = id;
	spin_unlock_bh(&comm->lock);
	if (!conn->cm_id) {
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
		conn->cm_id = NULL;
		spin_unlock_bh(&comm->lock);
		id->context = NULL;
		id->event_handler = NULL;
		goto out_idle;
	}
	kcoll_conn_accept_done(conn);
	return 0;

out_idle:
	spin_lock_bh(&comm->lock);
	kcoll_conn_set_state(conn, KCOLL_CONN_IDLE);
	spin_unlock_bh(&comm->lock);
	kcoll_conn_accept_done(conn);
	pr_warn_ratelimited("comm %llx: rank %u: cannot accept rank %u: %d\n",
			    comm->comm_id, comm->rank, src, ret);
	return KCOLL_REJ_STATE;
}

/*
 * Active side: start (or restart) connecting to conn->peer.
 *
 * Context: comm->teardown_mutex held, so teardown cannot run between the state check and
 * publishing conn->cm_id.
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
	conn->cm_id = id;
	kcoll_conn_set_state(conn, KCOLL_CONN_CONNECTING);
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
		conn->cm_id = NULL;
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
	id = conn->cm_id;
	conn->cm_id = NULL;
	was_up = conn->state == KCOLL_CONN_UP;
	spin_unlock_bh(&comm->lock);
	if (!id)
		return;
	rdma_lock_handler(id);
	rdma_disconnect(id);
	/*
	 * Every posted send completes (flushed) before its memory is released.  A QP that
	 * never came up has only receives posted, which destroying it discards; it may not
	 * even accept the drain's WR (rxe refuses sends before RTS).
	 */
	if (conn->qp && was_up)
		ib_drain_qp(conn->qp);
	kcoll_conn_destroy_qp(conn, id);
	rdma_unlock_handler(id);
	rdma_destroy_id(id);
}

static void kcoll_conn_retry_later(struct kcoll_conn *conn, int err)
{
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	conn->last_err = err;
	if (comm->state == KCOLL_COMM_CONNECTING && conn->state == KCOLL_CONN_CONNECTING) {
		kcoll_conn_set_state(conn, KCOLL_CONN_RETRY);
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
		kcoll_teardown_unlock(comm);
		return;
	}
	spin_unlock_bh(&comm->lock);
	/* The refused attempt's id and QP go first: never destroy an id in its handler. */
	kcoll_conn_release_id(conn);
	if (conn->peer > comm->rank) {
		/* Passive side: the attempt failed half-way; wait for the peer's next one. */
		spin_lock_bh(&comm->lock);
		if (conn->state == KCOLL_CONN_RETRY)
			kcoll_conn_set_state(conn, KCOLL_CONN_IDLE);
		spin_unlock_bh(&comm->lock);
		kcoll_teardown_unlock(comm);
		return;
	}
	ret = kcoll_conn_connect(conn);
	kcoll_teardown_unlock(comm);
	if (ret)
		kcoll_conn_retry_later(conn, ret);
}

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
	c = kcoll_ctrl_get(conn);
	if (!c) {
		kcoll_comm_set_error_locked(comm, -ENOMEM, conn->peer);
		return;
	}
	if (kcoll_ctrl_signal(conn, c, KCOLL_MSG_READY)) {
		kcoll_comm_set_error_locked(comm, -EIO, conn->peer);
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
		c = kcoll_ctrl_get(conn);
		if (!c)
			continue;
		if (kcoll_ctrl_signal(conn, c, KCOLL_MSG_NOP))
			kcoll_comm_set_error_locked(comm, -EIO, i);
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
 * Context: process, in the id's cm handler (its handler lock keeps conn->qp), and without
 * comm->lock: query_qp may sleep (rxe's calls cond_resched(), hardware drivers wait for a
 * firmware command).
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
	if (!conn->qp || rdma_protocol_iwarp(id->device, id->port_num))
		return 0;	/* iWARP: the address is all there is, no GID */
	ret = ib_query_qp(conn->qp, &attr, IB_QP_AV, &init_attr);
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
 * The connection is up: record its source GID, enforce the device's GID selection, count
 * it.  A connection that breaks the selection fails the comm (EADDRNOTAVAIL) before it is
 * counted or used: nothing was sent on it, so teardown need not drain it.
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
			kcoll_comm_set_error_locked(comm, -EADDRNOTAVAIL, conn->peer);
			spin_unlock_bh(&comm->lock);
			kcoll_conn_gid_warn(conn, id, want, &g, err);
			return;
		}
		kcoll_conn_set_state(conn, KCOLL_CONN_UP);
		conn->last_ok = jiffies;
		conn->last_tx = jiffies;
		comm->nup++;
		wake_up_all(&comm->wq);
		if (comm->nup == comm->nranks - 1) {
			kcoll_comm_send_ready(comm);
			kcoll_comm_check_ready(comm);
		}
	}
	spin_unlock_bh(&comm->lock);
}

/*
 * The peer destroyed its end in order: what we had pending with it and it never took fails
 * with ECONNRESET (upcalls peer_left), the rest of the communicator goes on.  The memory
 * of those requests is released once the disconnect that follows has drained the QP.
 */
static void kcoll_conn_peer_left(struct kcoll_conn *conn)
{
	struct kcoll_comm *comm = conn->comm;

	spin_lock_bh(&comm->lock);
	conn->peer_left = true;
	if (conn->state == KCOLL_CONN_UP)
		kcoll_conn_set_state(conn, KCOLL_CONN_DOWN);
	kcoll_transport_up->peer_left(conn);
	spin_unlock_bh(&comm->lock);
	kcoll_nl_event_peer_lost(comm, conn->peer, -ECONNRESET);
}

/* After a departed peer's disconnect drained the QP: its failed requests may let go. */
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

/* BYE: the peer leaves in order (kcoll_conn_peer_left()). */
static void kcoll_conn_bye_rx(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len)
{
	kcoll_conn_peer_left(conn);
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

int kcoll_conn_rx_init(void)
{
	return kcoll_rx_register_handlers(kcoll_conn_rx_handlers,
					  ARRAY_SIZE(kcoll_conn_rx_handlers));
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
	stale = id != conn->cm_id;
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
			kcoll_comm_fail(comm, -EHOSTUNREACH, conn->peer);
			return 0;
		}
		ret = kcoll_fi(CM, -ENOMEM, rdma_resolve_route(id, KCOLL_RESOLVE_MS));
		if (ret)
			kcoll_conn_retry_later(conn, -EHOSTUNREACH);
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = kcoll_conn_create_qp(conn, id);
		if (ret) {
			kcoll_comm_fail(comm, ret, conn->peer);
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
			kcoll_comm_fail(comm, -EACCES, conn->peer);
			return 0;
		}
		kcoll_conn_established(conn, id);
		return 0;
	case RDMA_CM_EVENT_REJECTED:
		ret = kcoll_reject_errno(ev, &retry);
		if (retry)
			kcoll_conn_retry_later(conn, ret);
		else
			kcoll_comm_fail(comm, ret, conn->peer);
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
				kcoll_conn_set_state(conn, KCOLL_CONN_DOWN);
			spin_unlock_bh(&comm->lock);
			ib_drain_qp(conn->qp);
			/* A BYE may have been among the completions just processed. */
			if (READ_ONCE(conn->peer_left))
				kcoll_conn_release_reqs(conn);
			else
				kcoll_comm_fail(comm, -ECONNRESET, conn->peer);
		} else {
			kcoll_conn_retry_later(conn, ev->event == RDMA_CM_EVENT_DISCONNECTED ?
					       -ECONNRESET : -ETIMEDOUT);
		}
		return 0;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* kcoll's ib_client remove() shuts comms down before rdma_cm gets here. */
		kcoll_comm_fail(comm, -ENODEV, conn->peer);
		return 0;
	default:
		return 0;
	}
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
	/* An accept in progress builds on the PD: let it publish or undo its work first. */
	wait_event(conn->comm->wq, !READ_ONCE(conn->accepting));
	kcoll_conn_release_id(conn);
	spin_lock_bh(&conn->comm->lock);
	kcoll_conn_set_state(conn, KCOLL_CONN_DOWN);
	spin_unlock_bh(&conn->comm->lock);
}
