// SPDX-License-Identifier: GPL-2.0
/*
 * The one function per state machine that changes its state, in the shape of
 * rtrs_clt_change_state(): the communicator, a connection, a point-to-point request, a
 * collective.  Each asks its legality table (kcoll_state.h), asserts comm->lock (which
 * guards all four) and traces the change.  An illegal transition is refused, not a bug:
 * the state stays, the caller learns it from the return value, pr_debug() says so.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "kcoll.h"
#include "kcoll_trace.h"

/*
 * Move *@state to @new_state if @legal allows it; already there: no change.  @what and
 * @which name the object for the refusal's pr_debug().
 */
static bool kcoll_state_move(int *state, int new_state, int (*legal)(int old, int new),
			     struct kcoll_comm *comm, const char *what, u32 which)
{
	int old = *state;

	if (old == new_state)
		return false;
	if (!legal(old, new_state)) {
		pr_debug("comm %llx rank %u: %s %u: illegal state change %d -> %d\n",
			 comm->comm_id, comm->rank, what, which, old, new_state);
		return false;
	}
	WRITE_ONCE(*state, new_state);
	return true;
}

/**
 * kcoll_comm_change_state - move @comm to @new_state, if that is a legal transition
 * @comm:	the communicator
 * @new_state:	KCOLL_COMM_*
 * @err:	the error that goes with it, for the trace (0 if none)
 *
 * The one place comm->state changes (kcoll_comm_state_legal()).  A change is traced
 * (kcoll_comm_state).
 *
 * Return: true if the state changed.  Context: comm->lock held.
 */
bool kcoll_comm_change_state(struct kcoll_comm *comm, int new_state, int err)
{
	int old = comm->state;

	lockdep_assert_held(&comm->lock);
	/* DESTROYED again is a change (traced): the table says so, not a shortcut. */
	if (!kcoll_comm_state_legal(old, new_state)) {
		pr_debug("comm %llx rank %u: illegal state change %d -> %d\n", comm->comm_id,
			 comm->rank, old, new_state);
		return false;
	}
	WRITE_ONCE(comm->state, new_state);
	trace_kcoll_comm_state(comm->comm_id, comm->rank, comm->nranks, old, new_state, err);
	return true;
}

/**
 * kcoll_conn_change_state - move @conn to @new_state, if that is a legal transition
 * @conn:	the connection
 * @new_state:	enum kcoll_conn_state
 *
 * The one place conn->state changes (kcoll_conn_state_legal()); a connection already in
 * @new_state stays, silently.  A change is traced (kcoll_conn_state).
 *
 * Return: true if the state changed.  Context: comm->lock held.
 */
bool kcoll_conn_change_state(struct kcoll_conn *conn, int new_state)
{
	struct kcoll_comm *comm = conn->comm;
	int old = conn->state;

	lockdep_assert_held(&comm->lock);
	if (!kcoll_state_move(&conn->state, new_state, kcoll_conn_state_legal, comm, "peer",
			      conn->peer))
		return false;
	if (conn->peer != comm->rank)
		trace_kcoll_conn_state(comm->comm_id, comm->rank, conn->peer, old, new_state);
	return true;
}

/**
 * kcoll_req_change_state - move @req to @new_state, if that is a legal transition
 * @req:	the point-to-point request
 * @new_state:	enum kcoll_req_state
 *
 * The one place req->state changes once the request exists (kcoll_req_state_legal()); a
 * request already in @new_state stays.  Its start and finish are traced where they
 * happen (kcoll_p2p_start, kcoll_p2p_finish).
 *
 * Return: true if the state changed.  Context: comm->lock held.
 */
bool kcoll_req_change_state(struct kcoll_req *req, int new_state)
{
	lockdep_assert_held(&req->comm->lock);
	return kcoll_state_move(&req->state, new_state, kcoll_req_state_legal, req->comm,
				"request", req->seq);
}

/**
 * kcoll_op_change_state - move @op to @new_state, if that is a legal transition
 * @op:		the collective
 * @new_state:	enum kcoll_op_state
 *
 * The one place op->state changes after the op is created (kcoll_op_state_legal()); an
 * op already in @new_state stays.  Its start and finish are traced where they happen
 * (kcoll_op_start, kcoll_op_finish).
 *
 * Return: true if the state changed.  Context: comm->lock held.
 */
bool kcoll_op_change_state(struct kcoll_op *op, int new_state)
{
	lockdep_assert_held(&op->comm->lock);
	return kcoll_state_move(&op->state, new_state, kcoll_op_state_legal, op->comm,
				"collective", (u32)(op->tag >> 32));
}

/* What failing a communicator needs of the control plane above (struct kcoll_comm_upcalls). */
const struct kcoll_comm_upcalls *kcoll_comm_up;

/**
 * kcoll_comm_set_upcalls - the control plane says how the layers below reach it
 * @up:	its callbacks, all set; static, it lives as long as the module
 *
 * Context: module load, before any communicator exists.
 */
void kcoll_comm_set_upcalls(const struct kcoll_comm_upcalls *up)
{
	kcoll_comm_up = up;
}
