/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A transport's end of each peer (conn->tp_priv, its own struct): allocated at attach by
 * kcoll_tp_ends_alloc(), freed by the transport's detach.  The transports that send from
 * plain kernel memory (loop, TCP) give each end a fixed array of control slots whose
 * messages are kmalloc'ed once (kcoll_ctrl_slots_init()); RDMA's are DMA mapped (rdma_qp.c).
 */
#ifndef _KCOLL_TRANSPORT_ENDS_H
#define _KCOLL_TRANSPORT_ENDS_H

#include <linux/list.h>

struct kcoll_comm;
struct kcoll_conn;
struct kcoll_ctrl;

int kcoll_tp_ends_alloc(struct kcoll_comm *comm, size_t size,
			int (*init)(struct kcoll_conn *conn, void *end));

int kcoll_ctrl_slots_init(struct kcoll_conn *conn, struct kcoll_ctrl *ctrl, unsigned int n,
			  struct list_head *free);
void kcoll_ctrl_slots_free(struct kcoll_ctrl *ctrl, unsigned int n);

#endif /* _KCOLL_TRANSPORT_ENDS_H */
