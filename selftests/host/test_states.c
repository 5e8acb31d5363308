// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmod/kcoll_state.h: the legal transitions of the communicator, connection, request and
 * collective state machines.  Every (old, new) pair of each machine is checked against
 * the list of edges below, written out by hand from Documentation/design.rst ("State
 * machines"): a table that grows an edge, or loses one, fails here.  States out of range
 * are never legal.
 */
#include <stdbool.h>
#include <stddef.h>

#include "kselftest_harness.h"
#include "../../kmod/kcoll_state.h"

struct edge {
	int from, to;
};

struct machine {
	const char *name;
	int nstates;
	int (*legal)(int old, int new);
	const struct edge *edges;
	size_t nedges;
};

static const struct edge comm_edges[] = {
	{ KCOLL_COMM_CREATING, KCOLL_COMM_CONNECTING },
	{ KCOLL_COMM_CREATING, KCOLL_COMM_READY },
	{ KCOLL_COMM_CREATING, KCOLL_COMM_ERROR },
	{ KCOLL_COMM_CREATING, KCOLL_COMM_ABORTED },
	{ KCOLL_COMM_CREATING, KCOLL_COMM_DESTROYED },
	{ KCOLL_COMM_CONNECTING, KCOLL_COMM_READY },
	{ KCOLL_COMM_CONNECTING, KCOLL_COMM_ERROR },
	{ KCOLL_COMM_CONNECTING, KCOLL_COMM_ABORTED },
	{ KCOLL_COMM_CONNECTING, KCOLL_COMM_DESTROYED },
	{ KCOLL_COMM_READY, KCOLL_COMM_ERROR },
	{ KCOLL_COMM_READY, KCOLL_COMM_ABORTED },
	{ KCOLL_COMM_READY, KCOLL_COMM_DESTROYED },
	{ KCOLL_COMM_ERROR, KCOLL_COMM_DESTROYED },
	{ KCOLL_COMM_ABORTED, KCOLL_COMM_DESTROYED },
	{ KCOLL_COMM_DESTROYED, KCOLL_COMM_DESTROYED },
};

static const struct edge conn_edges[] = {
	{ KCOLL_CONN_IDLE, KCOLL_CONN_CONNECTING },
	{ KCOLL_CONN_IDLE, KCOLL_CONN_DOWN },
	{ KCOLL_CONN_CONNECTING, KCOLL_CONN_IDLE },
	{ KCOLL_CONN_CONNECTING, KCOLL_CONN_RETRY },
	{ KCOLL_CONN_CONNECTING, KCOLL_CONN_UP },
	{ KCOLL_CONN_CONNECTING, KCOLL_CONN_DOWN },
	{ KCOLL_CONN_RETRY, KCOLL_CONN_IDLE },
	{ KCOLL_CONN_RETRY, KCOLL_CONN_CONNECTING },
	{ KCOLL_CONN_RETRY, KCOLL_CONN_DOWN },
	{ KCOLL_CONN_UP, KCOLL_CONN_DOWN },
};

static const struct edge req_edges[] = {
	{ KCOLL_REQ_QUEUED, KCOLL_REQ_ACTIVE },
	{ KCOLL_REQ_QUEUED, KCOLL_REQ_DONE },
	{ KCOLL_REQ_ACTIVE, KCOLL_REQ_DONE },
};

static const struct edge op_edges[] = {
	{ KCOLL_OP_QUEUED, KCOLL_OP_STARTING },
	{ KCOLL_OP_QUEUED, KCOLL_OP_DONE },
	{ KCOLL_OP_STARTING, KCOLL_OP_RUNNING },
	{ KCOLL_OP_STARTING, KCOLL_OP_DONE },
	{ KCOLL_OP_RUNNING, KCOLL_OP_DONE },
};

#define MACHINE(n, ns, e) { #n, ns, kcoll_##n##_state_legal, e, sizeof(e) / sizeof((e)[0]) }

static const struct machine machines[] = {
	MACHINE(comm, KCOLL_COMM_NSTATES, comm_edges),
	MACHINE(conn, KCOLL_CONN_NSTATES, conn_edges),
	MACHINE(req, KCOLL_REQ_NSTATES, req_edges),
	MACHINE(op, KCOLL_OP_NSTATES, op_edges),
};

static bool listed(const struct machine *m, int from, int to)
{
	size_t i;

	for (i = 0; i < m->nedges; i++)
		if (m->edges[i].from == from && m->edges[i].to == to)
			return true;
	return false;
}

TEST(every_pair_is_legal_exactly_when_listed)
{
	size_t i;
	int a, b;

	for (i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
		const struct machine *m = &machines[i];

		for (a = 0; a < m->nstates; a++)
			for (b = 0; b < m->nstates; b++) {
				int want = listed(m, a, b), got = !!m->legal(a, b);

				if (want != got)
					TH_LOG("%s: %d -> %d is %slegal", m->name, a, b,
					       got ? "" : "not ");
				EXPECT_EQ(want, got);
			}
	}
}

TEST(states_out_of_range_are_never_legal)
{
	size_t i;

	for (i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
		const struct machine *m = &machines[i];

		EXPECT_EQ(0, m->legal(-1, 0)) TH_LOG("%s", m->name);
		EXPECT_EQ(0, m->legal(0, -1)) TH_LOG("%s", m->name);
		EXPECT_EQ(0, m->legal(m->nstates, 0)) TH_LOG("%s", m->name);
		EXPECT_EQ(0, m->legal(0, m->nstates)) TH_LOG("%s", m->name);
		EXPECT_EQ(0, m->legal(m->nstates - 1, 31)) TH_LOG("%s", m->name);
	}
}

/* The final states: nothing leaves them (a destroyed comm may be destroyed again). */
TEST(final_states_stay)
{
	int s;

	for (s = 0; s < KCOLL_CONN_NSTATES; s++)
		EXPECT_EQ(0, kcoll_conn_state_legal(KCOLL_CONN_DOWN, s));
	for (s = 0; s < KCOLL_REQ_NSTATES; s++)
		EXPECT_EQ(0, kcoll_req_state_legal(KCOLL_REQ_DONE, s));
	for (s = 0; s < KCOLL_OP_NSTATES; s++)
		EXPECT_EQ(0, kcoll_op_state_legal(KCOLL_OP_DONE, s));
	for (s = 0; s < KCOLL_COMM_DESTROYED; s++)
		EXPECT_EQ(0, kcoll_comm_state_legal(KCOLL_COMM_DESTROYED, s));
}

TEST_HARNESS_MAIN
