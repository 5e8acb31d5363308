// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll RDMA transport: the queue pair of one peer's RC connection, its CQ, its control
 * message buffers and what is posted on it (SEND, RDMA WRITE) and completes from it.
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

static void kcoll_conn_tx_done(struct ib_cq *cq, struct ib_wc *wc);
static void kcoll_conn_rx_done(struct ib_cq *cq, struct ib_wc *wc);

static void kcoll_conn_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kcoll_conn *conn = container_of(wc->wr_cqe, struct kcoll_rdma_conn, wr_cqe)->conn;
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
		kcoll_transport_fail(conn, -ECONNRESET);
		return;
	}
	kcoll_transport_up->progress(conn);
}

static void kcoll_conn_free_ctrl(struct kcoll_conn *conn)
{
	struct ib_device *ibdev = conn->comm->dev->ibdev;
	int i;

	for (i = 0; kcoll_rdma(conn)->rx && i < KCOLL_RX_DEPTH; i++) {
		if (kcoll_rdma(conn)->rx[i].msg) {
			ib_dma_unmap_single(ibdev, kcoll_rdma(conn)->rx[i].dma, KCOLL_WIRE_MSG_SIZE,
					    DMA_FROM_DEVICE);
			kfree(kcoll_rdma(conn)->rx[i].msg);
		}
	}
	for (i = 0; kcoll_rdma(conn)->tx && i < KCOLL_TX_CTRL; i++) {
		/*
		 * A message whose completion never came still holds its request: Soft-iWARP
		 * can complete a WR it was processing after the drain's marker, and freeing
		 * the CQ drops that late completion.
		 */
		if (kcoll_rdma(conn)->tx[i].req) {
			kcoll_transport_up->put(kcoll_rdma(conn)->tx[i].req);
			kcoll_rdma(conn)->tx[i].req = NULL;
		}
		if (kcoll_rdma(conn)->tx[i].msg) {
			ib_dma_unmap_single(ibdev, kcoll_rdma(conn)->tx[i].dma, KCOLL_WIRE_MSG_SIZE,
					    DMA_TO_DEVICE);
			kfree(kcoll_rdma(conn)->tx[i].msg);
		}
	}
	kfree(kcoll_rdma(conn)->rx);
	kfree(kcoll_rdma(conn)->tx);
	kcoll_rdma(conn)->rx = NULL;
	kcoll_rdma(conn)->tx = NULL;
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
	return kcoll_fi(POST, -ENOMEM, ib_post_recv(kcoll_rdma(conn)->qp, &wr, NULL));
}

/* CQ, QP and control buffers on @id, which is bound to the comm's device. */
int kcoll_conn_create_qp(struct kcoll_conn *conn, struct rdma_cm_id *id)
{
	struct kcoll_comm *comm = conn->comm;
	struct ib_device *ibdev = comm->dev->ibdev;
	struct kcoll_rdma_conn *rc = kcoll_rdma(conn);
	struct ib_qp_init_attr attr = {};
	int i, ret;

	/*
	 * One more send and receive slot than kcoll ever fills, and their two CQ entries:
	 * ib_drain_qp() posts one work request on each queue and WARNs when it cannot (rxe
	 * rounds queues up to a power of two and hides this; mlx5 does not).
	 */
	rc->cq = kcoll_fi(CQ, ERR_PTR(-ENOMEM),
			  ib_alloc_cq(ibdev, conn, KCOLL_SQ_DEPTH + KCOLL_RX_DEPTH + 2,
				      conn->peer % ibdev->num_comp_vectors, IB_POLL_WORKQUEUE));
	if (IS_ERR(rc->cq)) {
		ret = PTR_ERR(rc->cq);
		rc->cq = NULL;
		return ret;
	}
	attr.send_cq = rc->cq;
	attr.recv_cq = rc->cq;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = KCOLL_SQ_DEPTH + 1;
	attr.cap.max_recv_wr = KCOLL_RX_DEPTH + 1;
	attr.cap.max_send_sge = min_t(u32, ibdev->attrs.max_send_sge, 16);
	attr.cap.max_recv_sge = 1;
	ret = kcoll_fi(QP, -ENOMEM, rdma_create_qp(id, comm->pd, &attr));
	if (ret)
		goto out_free_cq;
	rc->qp = id->qp;

	rc->rx = kcoll_fi(ALLOC, NULL, kcalloc(KCOLL_RX_DEPTH, sizeof(*rc->rx), GFP_KERNEL));
	rc->tx = kcoll_fi(ALLOC, NULL, kcalloc(KCOLL_TX_CTRL, sizeof(*rc->tx), GFP_KERNEL));
	if (!rc->rx || !rc->tx) {
		ret = -ENOMEM;
		goto out_free_ctrl;
	}
	for (i = 0; i < KCOLL_RX_DEPTH; i++) {
		ret = kcoll_ctrl_init(conn, &rc->rx[i], DMA_FROM_DEVICE);
		if (ret)
			goto out_free_ctrl;
		ret = kcoll_conn_post_rx(conn, &rc->rx[i]);
		if (ret)
			goto out_free_ctrl;
	}
	/* Allocation sleeps: done before the lock, which only publishes the free list. */
	for (i = 0; i < KCOLL_TX_CTRL; i++) {
		ret = kcoll_ctrl_init(conn, &rc->tx[i], DMA_TO_DEVICE);
		if (ret)
			goto out_free_ctrl;
	}
	spin_lock_bh(&comm->lock);
	INIT_LIST_HEAD(&conn->tx_free);
	for (i = 0; i < KCOLL_TX_CTRL; i++)
		list_add_tail(&rc->tx[i].list, &conn->tx_free);
	rc->sq_free = KCOLL_SQ_DEPTH;
	rc->wr_cqe.done = kcoll_conn_wr_done;
	spin_unlock_bh(&comm->lock);
	return 0;

out_free_ctrl:
	/* Posted receives are flushed by destroying the QP before their buffers go. */
	rdma_destroy_qp(id);
	rc->qp = NULL;
	kcoll_conn_free_ctrl(conn);
out_free_cq:
	ib_free_cq(rc->cq);
	rc->cq = NULL;
	return ret;
}

/* Destroy QP, CQ and control buffers; the QP must be drained (or never connected). */
void kcoll_conn_destroy_qp(struct kcoll_conn *conn, struct rdma_cm_id *id)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (kcoll_rdma(conn)->qp) {
		/*
		 * Error state first, even for a QP that never came up: rxe 6.1 queues
		 * arriving packets on the QP with a reference each and drains them only from
		 * its tasks in error state (rxe_qp_error() runs them) -- destroying a QP that
		 * still holds some waits 50 s for them in __rxe_cleanup() and WARNs.  Packets
		 * that arrive after this are dropped.  Failure is harmless: destroy follows.
		 */
		ib_modify_qp(kcoll_rdma(conn)->qp, &attr, IB_QP_STATE);
		rdma_destroy_qp(id);
		kcoll_rdma(conn)->qp = NULL;
	}
	if (kcoll_rdma(conn)->cq) {
		ib_free_cq(kcoll_rdma(conn)->cq);
		kcoll_rdma(conn)->cq = NULL;
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
	if (kcoll_rdma(conn)->sq_free == KCOLL_SQ_DEPTH)
		conn->sq_moved = jiffies;	/* the wait for this one starts now */
	kcoll_rdma(conn)->sq_free--;
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
	kcoll_rdma(conn)->sq_free++;
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
	if (conn->state != KCOLL_CONN_UP || kcoll_rdma(conn)->sq_free < 1 ||
	    list_empty(&conn->tx_free))
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
	ret = kcoll_fi(POST, -ENOMEM, ib_post_send(kcoll_rdma(conn)->qp, &wr, NULL));
	if (ret) {
		list_add(&c->list, &conn->tx_free);
		return ret;
	}
	kcoll_conn_sq_take(conn);
	return 0;
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
	return kcoll_rdma(conn) && !list_empty(&conn->tx_free) && kcoll_rdma(conn)->sq_free >= 1;
}

/* tx_room: @n more work requests fit on the send queue.  Context: comm->lock held. */
bool kcoll_conn_tx_room(struct kcoll_conn *conn, unsigned int n)
{
	lockdep_assert_held(&conn->comm->lock);
	return kcoll_rdma(conn) && kcoll_rdma(conn)->sq_free >= (int)n;
}

/*
 * tx_stalled: work requests are outstanding and the send queue has not moved for
 * @timeout: the peer talks but takes none of our messages (it posts no receive, so our
 * SEND meets RNR NAKs that some drivers retry for ever).  Context: comm->lock held.
 */
bool kcoll_conn_tx_stalled(struct kcoll_conn *conn, unsigned long timeout)
{
	struct kcoll_rdma_conn *rc = kcoll_rdma(conn);

	lockdep_assert_held(&conn->comm->lock);
	return rc && rc->sq_free < KCOLL_SQ_DEPTH && time_after(jiffies, conn->sq_moved + timeout);
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
	wr.wr.wr_cqe = &kcoll_rdma(conn)->wr_cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = sges;
	wr.remote_addr = be64_to_cpu(seg->addr) + seg_off;
	wr.rkey = be32_to_cpu(seg->rkey);
	if (kcoll_fi(POST, -ENOMEM, ib_post_send(kcoll_rdma(conn)->qp, &wr.wr, NULL)))
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
		kcoll_transport_fail(conn, -ECONNRESET);
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
			kcoll_transport_fail(conn, -ECONNRESET);
		return;
	}
	ib_dma_sync_single_for_cpu(comm->dev->ibdev, c->dma, KCOLL_WIRE_MSG_SIZE,
				   DMA_FROM_DEVICE);
	spin_lock_bh(&comm->lock);
	conn->last_ok = jiffies;
	spin_unlock_bh(&comm->lock);
	kcoll_transport_up->rx(conn, c->msg, wc->byte_len);
	if (kcoll_conn_post_rx(conn, c))
		kcoll_transport_fail(conn, -ECONNRESET);
	kcoll_transport_up->progress(conn);
}
