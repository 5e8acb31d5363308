/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints kcoll:* (perf list 'kcoll:*', /sys/kernel/tracing/events/kcoll/).
 *
 * Arguments are plain values, not kcoll structures, so BPF programs (raw_tp/tp_btf) and
 * users of the format files do not depend on kcoll's private layout.  One translation unit
 * (kcoll_trace.c) defines CREATE_TRACE_POINTS; every other file just includes this header
 * and calls trace_kcoll_*().  Documented in Documentation/admin-guide.rst (Tracing).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kcoll

#if !defined(_KCOLL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KCOLL_TRACE_H

#include <linux/tracepoint.h>

/*
 * The two state events share their first fields (@who: the comm's size, or the peer), so
 * a BPF reader finds comm_id, rank and the two states at the same offsets in both.
 */
#define KCOLL_TP_STATE_FIELDS(who)						\
	__field(u64, comm_id) __field(u32, rank) __field(u32, who)		\
	__field(int, old_state) __field(int, new_state)
#define KCOLL_TP_STATE_ASSIGN(who)						\
	__entry->comm_id = comm_id; __entry->rank = rank; __entry->who = who;	\
	__entry->old_state = old_state; __entry->new_state = new_state;

/* A communicator changed state (KCOLL_COMM_* values); err: its sticky error. */
TRACE_EVENT(kcoll_comm_state,
	    TP_PROTO(u64 comm_id, u32 rank, u32 nranks, int old_state, int new_state, int err),
	    TP_ARGS(comm_id, rank, nranks, old_state, new_state, err),
	    TP_STRUCT__entry(KCOLL_TP_STATE_FIELDS(nranks) __field(int, err)),
	    TP_fast_assign(KCOLL_TP_STATE_ASSIGN(nranks) __entry->err = err;),
	    TP_printk("comm=%016llx rank=%u nranks=%u state=%d->%d err=%d", __entry->comm_id,
		      __entry->rank, __entry->nranks, __entry->old_state, __entry->new_state,
		      __entry->err));

/* This rank's connection to @peer changed state (enum kcoll_conn_state). */
TRACE_EVENT(kcoll_conn_state,
	    TP_PROTO(u64 comm_id, u32 rank, u32 peer, int old_state, int new_state),
	    TP_ARGS(comm_id, rank, peer, old_state, new_state),
	    TP_STRUCT__entry(KCOLL_TP_STATE_FIELDS(peer)),
	    TP_fast_assign(KCOLL_TP_STATE_ASSIGN(peer)),
	    TP_printk("comm=%016llx rank=%u peer=%u state=%d->%d", __entry->comm_id, __entry->rank,
		      __entry->peer, __entry->old_state, __entry->new_state));

DECLARE_EVENT_CLASS(kcoll_p2p_class,
		    TP_PROTO(u64 comm_id, u32 rank, u32 peer, bool send, u32 seq, u64 bytes,
			     int status),
		    TP_ARGS(comm_id, rank, peer, send, seq, bytes, status),
		    TP_STRUCT__entry(__field(u64, comm_id)
				     __field(u64, bytes)
				     __field(u32, rank)
				     __field(u32, peer)
				     __field(u32, seq)
				     __field(bool, send)
				     __field(int, status)),
		    TP_fast_assign(__entry->comm_id = comm_id;
				   __entry->bytes = bytes;
				   __entry->rank = rank;
				   __entry->peer = peer;
				   __entry->seq = seq;
				   __entry->send = send;
				   __entry->status = status;),
		    TP_printk("comm=%016llx rank=%u %s peer=%u seq=%u bytes=%llu status=%d",
			      __entry->comm_id, __entry->rank, __entry->send ? "send" : "recv",
			      __entry->peer, __entry->seq, __entry->bytes, __entry->status));

/* A point-to-point operation was queued (bytes: its length or receive capacity). */
DEFINE_EVENT(kcoll_p2p_class,
	     kcoll_p2p_start,
	     TP_PROTO(u64 comm_id, u32 rank, u32 peer, bool send, u32 seq, u64 bytes, int status),
	     TP_ARGS(comm_id, rank, peer, send, seq, bytes, status));

/* A point-to-point operation completed (bytes: moved; status: 0 or negative errno). */
DEFINE_EVENT(kcoll_p2p_class,
	     kcoll_p2p_finish,
	     TP_PROTO(u64 comm_id, u32 rank, u32 peer, bool send, u32 seq, u64 bytes, int status),
	     TP_ARGS(comm_id, rank, peer, send, seq, bytes, status));

/*
 * Collectives.  op_id: the operation's sequence number on the communicator; coll: enum
 * kcoll_collective; algo: enum kcoll_algorithm; bytes: payload per rank.  Every collective
 * event starts with the same fields, in the same order, and prints them the same way.
 */
#define KCOLL_TP_OP_FIELDS							\
	__field(u64, comm_id) __field(u64, op_id) __field(u64, bytes)		\
	__field(u32, rank) __field(u32, coll)
#define KCOLL_TP_OP_ASSIGN							\
	__entry->comm_id = comm_id; __entry->op_id = op_id;			\
	__entry->bytes = bytes; __entry->rank = rank; __entry->coll = coll;
#define KCOLL_TP_OP_FMT		"comm=%016llx rank=%u op=%llu coll=%u "
#define KCOLL_TP_OP_PRINT	__entry->comm_id, __entry->rank, __entry->op_id, __entry->coll

TRACE_EVENT(kcoll_op_start,
	    TP_PROTO(u64 comm_id, u32 rank, u64 op_id, u32 coll, u32 algo, u64 bytes, u32 nsteps),
	    TP_ARGS(comm_id, rank, op_id, coll, algo, bytes, nsteps),
	    TP_STRUCT__entry(KCOLL_TP_OP_FIELDS __field(u32, algo) __field(u32, nsteps)),
	    TP_fast_assign(KCOLL_TP_OP_ASSIGN __entry->algo = algo; __entry->nsteps = nsteps;),
	    TP_printk(KCOLL_TP_OP_FMT "algo=%u bytes=%llu nsteps=%u", KCOLL_TP_OP_PRINT,
		      __entry->algo, __entry->bytes, __entry->nsteps));

TRACE_EVENT(kcoll_op_finish,
	    TP_PROTO(u64 comm_id, u32 rank, u64 op_id, u32 coll, u64 bytes, int status),
	    TP_ARGS(comm_id, rank, op_id, coll, bytes, status),
	    TP_STRUCT__entry(KCOLL_TP_OP_FIELDS __field(int, status)),
	    TP_fast_assign(KCOLL_TP_OP_ASSIGN __entry->status = status;),
	    TP_printk(KCOLL_TP_OP_FMT "bytes=%llu status=%d", KCOLL_TP_OP_PRINT, __entry->bytes,
		      __entry->status));

/* A collective moved to schedule step @step, exchanging @bytes with @peer (-1: none). */
TRACE_EVENT(kcoll_step,
	    TP_PROTO(u64 comm_id, u32 rank, u64 op_id, u32 coll, u32 step, s32 peer, u64 bytes),
	    TP_ARGS(comm_id, rank, op_id, coll, step, peer, bytes),
	    TP_STRUCT__entry(KCOLL_TP_OP_FIELDS __field(u32, step) __field(s32, peer)),
	    TP_fast_assign(KCOLL_TP_OP_ASSIGN __entry->step = step; __entry->peer = peer;),
	    TP_printk(KCOLL_TP_OP_FMT "step=%u peer=%d bytes=%llu", KCOLL_TP_OP_PRINT,
		      __entry->step, __entry->peer, __entry->bytes));

#endif /* _KCOLL_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kcoll_trace
#include <trace/define_trace.h>
