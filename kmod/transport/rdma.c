// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll RDMA transport: its operations table.  One reliable-connected queue pair per
 * peer (rdma_qp.c), set up with rdma_cm (rdma_conn.c, rdma_cm.c, rdma_listen.c) on the
 * devices the ib_client tracks (rdma_dev.c); control messages are SENDs, data moves by
 * RDMA WRITE into the peer's FRWR registrations (rdma_mr.c).
 */
#include "../kcoll.h"
#include "rdma.h"

const struct kcoll_transport kcoll_rdma_transport = {
	.name		= "rdma",
	.attach		= kcoll_rdma_attach,
	.detach		= kcoll_rdma_detach,
	.connect	= kcoll_conn_connect,
	.teardown	= kcoll_conn_teardown,
	.ctrl_get	= kcoll_ctrl_get,
	.ctrl_put	= kcoll_ctrl_put,
	.ctrl_post	= kcoll_ctrl_post,
	.ctrl_free	= kcoll_ctrl_free,
	.tx_room	= kcoll_conn_tx_room,
	.tx_stalled	= kcoll_conn_tx_stalled,
	.write		= kcoll_rdma_write,
	.mem		= &kcoll_rdma_mem_ops,
};
