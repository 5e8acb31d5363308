/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state machines of kmod's objects and their legal transitions, in one place.
 *
 * Each machine has one function that changes its state (kcoll_state.c, in the shape of
 * rtrs_clt_change_state()): it asks kcoll_*_state_legal() below, asserts the lock that
 * guards the state and traces the change.  The tables are plain C, without kernel types,
 * so that selftests/host/test_states.c checks them on the host.  A state set when an
 * object is created, before anyone else can see it, is its initial state, not a
 * transition.  Documentation/design.rst ("State machines") draws them.
 */
#ifndef _KCOLL_STATE_H
#define _KCOLL_STATE_H

#include <linux/kcoll.h>	/* KCOLL_COMM_*: the communicator's states are uAPI */

/* A connection to one peer (kcoll_conn.state, guarded by comm->lock). */
enum kcoll_conn_state {
	KCOLL_CONN_IDLE,	/* nothing yet (passive side waits for the peer) */
	KCOLL_CONN_CONNECTING,	/* resolving or connecting (active), accepting (passive) */
	KCOLL_CONN_RETRY,	/* refused for now or unreachable: retry_work will try again */
	KCOLL_CONN_UP,		/* established */
	KCOLL_CONN_DOWN,	/* disconnected, failed or torn down */
	KCOLL_CONN_NSTATES
};

/* A point-to-point request (kcoll_req.state, guarded by comm->lock). */
enum kcoll_req_state {
	KCOLL_REQ_QUEUED,	/* waiting for its turn (window) */
	KCOLL_REQ_ACTIVE,	/* recv: CTS sent; send: CTS received, writing */
	KCOLL_REQ_DONE,		/* complete (successfully or not) */
	KCOLL_REQ_NSTATES
};

/* A collective operation (kcoll_op.state, guarded by comm->lock). */
enum kcoll_op_state {
	KCOLL_OP_QUEUED,	/* behind another collective of its comm */
	KCOLL_OP_STARTING,	/* its turn: getting scratch memory (teardown_mutex) */
	KCOLL_OP_RUNNING,
	KCOLL_OP_DONE,
	KCOLL_OP_NSTATES
};

#define KCOLL_COMM_NSTATES	(KCOLL_COMM_DESTROYED + 1)

#define KCOLL_ST(s)		(1U << (s))

/*
 * Each table: for every state, the set of states it may move to.  The change functions
 * treat a move to the state an object is in as no change, except for the communicator,
 * whose table says it (DESTROYED again).
 */
static inline int kcoll_state_legal(const unsigned int *next, int nstates, int old, int new)
{
	if (old < 0 || old >= nstates || new < 0 || new >= nstates)
		return 0;
	return !!(next[old] & KCOLL_ST(new));
}

/*
 * Communicator: CREATING -> CONNECTING (several ranks) or READY (one); CONNECTING ->
 * READY; any state before ERROR -> ERROR or ABORTED (the first failure stays); any state
 * -> DESTROYED, also again (destroy does not look first).
 */
static inline int kcoll_comm_state_legal(int old, int new)
{
	static const unsigned int next[KCOLL_COMM_NSTATES] = {
		[KCOLL_COMM_CREATING]	= KCOLL_ST(KCOLL_COMM_CONNECTING) |
					  KCOLL_ST(KCOLL_COMM_READY) | KCOLL_ST(KCOLL_COMM_ERROR) |
					  KCOLL_ST(KCOLL_COMM_ABORTED) |
					  KCOLL_ST(KCOLL_COMM_DESTROYED),
		[KCOLL_COMM_CONNECTING]	= KCOLL_ST(KCOLL_COMM_READY) | KCOLL_ST(KCOLL_COMM_ERROR) |
					  KCOLL_ST(KCOLL_COMM_ABORTED) |
					  KCOLL_ST(KCOLL_COMM_DESTROYED),
		[KCOLL_COMM_READY]	= KCOLL_ST(KCOLL_COMM_ERROR) |
					  KCOLL_ST(KCOLL_COMM_ABORTED) |
					  KCOLL_ST(KCOLL_COMM_DESTROYED),
		[KCOLL_COMM_ERROR]	= KCOLL_ST(KCOLL_COMM_DESTROYED),
		[KCOLL_COMM_ABORTED]	= KCOLL_ST(KCOLL_COMM_DESTROYED),
		[KCOLL_COMM_DESTROYED]	= KCOLL_ST(KCOLL_COMM_DESTROYED),
	};

	return kcoll_state_legal(next, KCOLL_COMM_NSTATES, old, new);
}

/*
 * Connection: IDLE -> CONNECTING (connect, accept); CONNECTING -> UP (link up), RETRY
 * (refused, unreachable) or IDLE (accepting failed); RETRY -> CONNECTING (active side
 * tries again) or IDLE (passive side waits again); any state -> DOWN; DOWN is final.
 */
static inline int kcoll_conn_state_legal(int old, int new)
{
	static const unsigned int next[KCOLL_CONN_NSTATES] = {
		[KCOLL_CONN_IDLE]	= KCOLL_ST(KCOLL_CONN_CONNECTING) |
					  KCOLL_ST(KCOLL_CONN_DOWN),
		[KCOLL_CONN_CONNECTING]	= KCOLL_ST(KCOLL_CONN_IDLE) | KCOLL_ST(KCOLL_CONN_RETRY) |
					  KCOLL_ST(KCOLL_CONN_UP) | KCOLL_ST(KCOLL_CONN_DOWN),
		[KCOLL_CONN_RETRY]	= KCOLL_ST(KCOLL_CONN_IDLE) |
					  KCOLL_ST(KCOLL_CONN_CONNECTING) |
					  KCOLL_ST(KCOLL_CONN_DOWN),
		[KCOLL_CONN_UP]		= KCOLL_ST(KCOLL_CONN_DOWN),
		[KCOLL_CONN_DOWN]	= 0,
	};

	return kcoll_state_legal(next, KCOLL_CONN_NSTATES, old, new);
}

/* Request: QUEUED -> ACTIVE; QUEUED or ACTIVE -> DONE; DONE is final. */
static inline int kcoll_req_state_legal(int old, int new)
{
	static const unsigned int next[KCOLL_REQ_NSTATES] = {
		[KCOLL_REQ_QUEUED]	= KCOLL_ST(KCOLL_REQ_ACTIVE) | KCOLL_ST(KCOLL_REQ_DONE),
		[KCOLL_REQ_ACTIVE]	= KCOLL_ST(KCOLL_REQ_DONE),
		[KCOLL_REQ_DONE]	= 0,
	};

	return kcoll_state_legal(next, KCOLL_REQ_NSTATES, old, new);
}

/* Collective: QUEUED -> STARTING -> RUNNING, each in turn; any state -> DONE (final). */
static inline int kcoll_op_state_legal(int old, int new)
{
	static const unsigned int next[KCOLL_OP_NSTATES] = {
		[KCOLL_OP_QUEUED]	= KCOLL_ST(KCOLL_OP_STARTING) | KCOLL_ST(KCOLL_OP_DONE),
		[KCOLL_OP_STARTING]	= KCOLL_ST(KCOLL_OP_RUNNING) | KCOLL_ST(KCOLL_OP_DONE),
		[KCOLL_OP_RUNNING]	= KCOLL_ST(KCOLL_OP_DONE),
		[KCOLL_OP_DONE]		= 0,
	};

	return kcoll_state_legal(next, KCOLL_OP_NSTATES, old, new);
}

#ifdef __KERNEL__
struct kcoll_comm;
struct kcoll_conn;
struct kcoll_req;
struct kcoll_op;

/* kcoll_state.c: the one place each state changes.  Context: comm->lock held. */
bool kcoll_comm_change_state(struct kcoll_comm *comm, int new_state, int err);
bool kcoll_conn_change_state(struct kcoll_conn *conn, int new_state);
bool kcoll_req_change_state(struct kcoll_req *req, int new_state);
bool kcoll_op_change_state(struct kcoll_op *op, int new_state);
#endif

#endif /* _KCOLL_STATE_H */
