/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll RDMA transport, private to kmod/transport/rdma*.c: the functions behind
 * kcoll_rdma_transport and those its files share.  Nothing above the transport includes
 * this header (selftests/host/check_layers.sh checks they call none of them).
 */
#ifndef _KCOLL_TRANSPORT_RDMA_H
#define _KCOLL_TRANSPORT_RDMA_H

#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "auth.h"

/* Largest RDMA WRITE and its scatter/gather entries (kcoll_rdma_write()). */
#define KCOLL_MAX_WR_BYTES	SZ_1M
#define KCOLL_MAX_SGE		16

/* Retry a refused or unreachable connect this often until the comm's deadline. */
#define KCOLL_RETRY_MS		200
#define KCOLL_RESOLVE_MS	2000

/**
 * struct kcoll_rdma_conn - the RDMA transport's end of one peer (conn->tp_priv)
 * @conn:	the peer it serves
 * @cm_id, @cq, @qp: set up by the connect path, torn down by kcoll_conn_teardown()
 * @rx, @tx:	control buffers (allocated once the QP exists)
 * @wr_cqe:	completion of data WRITEs and REG_MRs: only returns a send slot
 * @sq_free:	free send queue slots (comm->lock)
 * @accepting:	the passive side is setting this connection up (comm->lock); teardown
 *		waits until it is done (kcoll_conn_accept())
 *
 * Allocated by kcoll_rdma_attach() for every peer, freed by kcoll_rdma_detach() after
 * every peer's teardown.
 */
struct kcoll_rdma_conn {
	struct kcoll_conn *conn;
	struct rdma_cm_id *cm_id;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct kcoll_ctrl *rx;
	struct kcoll_ctrl *tx;
	struct ib_cqe wr_cqe;
	int sq_free;
	bool accepting;
};

/* @conn's RDMA end; NULL for the comm's own rank, and before attach or after detach. */
static inline struct kcoll_rdma_conn *kcoll_rdma(const struct kcoll_conn *conn)
{
	return conn->tp_priv;
}

/* rdma_dev.c */
int kcoll_rdma_attach(struct kcoll_comm *comm);
void kcoll_rdma_detach(struct kcoll_comm *comm);

/* rdma_mr.c */
extern const struct kcoll_mem_ops kcoll_rdma_mem_ops;
unsigned int kcoll_rdma_mr_sges(struct kcoll_region *r, u64 off, u64 bytes, struct ib_sge *sges,
				unsigned int max, u32 lkey, u64 *taken);

/* rdma_conn.c */
int kcoll_conn_connect(struct kcoll_conn *conn);
void kcoll_conn_teardown(struct kcoll_conn *conn);
void kcoll_conn_param(struct kcoll_conn *conn, struct rdma_conn_param *p);
bool kcoll_conn_accept_ok(struct kcoll_conn *conn, struct rdma_cm_event *ev);
void kcoll_conn_retry_later(struct kcoll_conn *conn, int err);

/* rdma_qp.c */
int kcoll_conn_create_qp(struct kcoll_conn *conn, struct rdma_cm_id *id);
void kcoll_conn_destroy_qp(struct kcoll_conn *conn, struct rdma_cm_id *id);
struct kcoll_ctrl *kcoll_ctrl_get(struct kcoll_conn *conn);
void kcoll_ctrl_put(struct kcoll_conn *conn, struct kcoll_ctrl *c);
int kcoll_ctrl_post(struct kcoll_conn *conn, struct kcoll_ctrl *c, size_t len);
bool kcoll_ctrl_free(struct kcoll_conn *conn);
bool kcoll_conn_tx_room(struct kcoll_conn *conn, unsigned int n);
bool kcoll_conn_tx_stalled(struct kcoll_conn *conn, unsigned long timeout);
int kcoll_rdma_write(struct kcoll_conn *conn, struct kcoll_region *r, u64 off, u64 len,
		     const struct kcoll_wire_seg *seg, u64 seg_off, u64 *bytes);
void kcoll_conn_sq_take(struct kcoll_conn *conn);
void kcoll_conn_sq_give(struct kcoll_conn *conn, bool ok);

#endif /* _KCOLL_TRANSPORT_RDMA_H */
