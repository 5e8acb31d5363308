// SPDX-License-Identifier: GPL-2.0
/*
 * The kcoll:* tracepoints are defined here (kcoll_trace.h), with the small helpers that
 * trace state changes of objects whose structure other files own.
 */
#include "kcoll.h"
#include "kcoll_nl.h"

#define CREATE_TRACE_POINTS
#include "kcoll_trace.h"

/**
 * kcoll_conn_set_state - change a connection's state, tracing the change
 * @conn:	the connection
 * @state:	enum kcoll_conn_state
 *
 * Context: comm->lock held (it guards conn->state).
 */
void kcoll_conn_set_state(struct kcoll_conn *conn, int state)
{
	struct kcoll_comm *comm = conn->comm;

	lockdep_assert_held(&comm->lock);
	if (conn->state != state && conn->peer != comm->rank)
		trace_kcoll_conn_state(comm->comm_id, comm->rank, conn->peer, conn->state, state);
	conn->state = state;
}

/* Trace a communicator state change; the caller changes comm->state itself. */
void kcoll_trace_comm_state(struct kcoll_comm *comm, int old_state, int new_state, int err)
{
	trace_kcoll_comm_state(comm->comm_id, comm->rank, comm->nranks, old_state, new_state,
			       err);
}
