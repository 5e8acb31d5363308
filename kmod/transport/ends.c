// SPDX-License-Identifier: GPL-2.0
/*
 * A transport's per-peer ends and the control slots of the copying transports (ends.h).
 * The transport frees what it allocated here: the slots' messages with
 * kcoll_ctrl_slots_free(), then the end with kvfree().
 */
#include <linux/slab.h>

#include "../kcoll.h"
#include "ends.h"

/**
 * kcoll_tp_ends_alloc - give every peer of @comm a zeroed end of @size bytes
 * @comm:	a communicator being attached, not listed yet
 * @size:	the transport's struct for one peer
 * @init:	sets up one end just published in @conn->tp_priv
 *
 * Return: 0, or a negative errno (-ENOMEM, or what @init returned) with the ends made so
 * far left in conn->tp_priv for the transport's free (it must take a partly set-up end).
 * Context: process.
 */
int kcoll_tp_ends_alloc(struct kcoll_comm *comm, size_t size,
			int (*init)(struct kcoll_conn *conn, void *end))
{
	u32 i;
	int ret;

	for (i = 0; i < comm->nranks; i++) {
		void *end;

		if (i == comm->rank)
			continue;
		end = kcoll_fi(ALLOC, NULL, kvzalloc(size, GFP_KERNEL_ACCOUNT));
		if (!end)
			return -ENOMEM;
		comm->conns[i].tp_priv = end;
		ret = init(&comm->conns[i], end);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * kcoll_ctrl_slots_init - give @n zeroed slots of @conn their messages, onto @free
 * @conn:	the connection the slots send on
 * @ctrl:	the slots (zeroed memory of the peer end)
 * @n:		their number
 * @free:	the end's list of unused slots
 *
 * Return: 0, or -ENOMEM with the messages allocated so far left for
 * kcoll_ctrl_slots_free().  Context: process.
 */
int kcoll_ctrl_slots_init(struct kcoll_conn *conn, struct kcoll_ctrl *ctrl, unsigned int n,
			  struct list_head *free)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		ctrl[i].conn = conn;
		ctrl[i].msg = kcoll_fi(ALLOC, NULL,
				       kzalloc(KCOLL_WIRE_MSG_SIZE, GFP_KERNEL_ACCOUNT));
		if (!ctrl[i].msg)
			return -ENOMEM;
		list_add_tail(&ctrl[i].list, free);
	}
	return 0;
}

/* Free the messages of @n slots (some may never have been allocated). */
void kcoll_ctrl_slots_free(struct kcoll_ctrl *ctrl, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		kfree(ctrl[i].msg);
}
