#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The kcoll:* tracepoints (kmod/kcoll_trace.h).
#   kcoll_trace.sh start	enable every kcoll:* event (before the tests that make traffic)
#   kcoll_trace.sh check	TAP: the events exist, and the tests in between hit them
. "$(dirname "$0")/../lib/ktap.sh"

T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null

if [ "$1" = start ]; then
	echo 0 >$T/tracing_on
	: >$T/trace
	echo 8192 >$T/buffer_size_kb
	echo 1 >$T/events/kcoll/enable
	echo 1 >$T/tracing_on
	exit 0
fi

events_exist() {
	for e in kcoll_comm_state kcoll_conn_state kcoll_p2p_start kcoll_p2p_finish \
		 kcoll_op_start kcoll_op_finish kcoll_step; do
		[ -f $T/events/kcoll/$e/format ] || fail "no tracepoint kcoll:$e" || return 1
	done
}

# trace_has EVENT PATTERN: the trace buffer holds EVENT with PATTERN in its fields.
trace_has() {
	grep "$1:" $T/trace | grep -q -- "$2" ||
		fail "no $1 matching '$2' in the trace ($(grep -c kcoll_ $T/trace) kcoll lines)"
}

ktap_begin
ktap_test "tracepoints kcoll:* exist" events_exist
echo 0 >$T/tracing_on
ktap_test "comm state changes are traced (connecting -> ready)" \
	trace_has kcoll_comm_state "state=1->2"
ktap_test "comm destruction is traced" trace_has kcoll_comm_state "->5"
ktap_test "connection state changes are traced (-> up)" trace_has kcoll_conn_state "->3"
ktap_test "p2p operations are traced when queued" trace_has kcoll_p2p_start "recv peer=0"
ktap_test "p2p operations are traced when finished" trace_has kcoll_p2p_finish "status=-"
echo 0 >$T/events/kcoll/enable
: >$T/trace
ktap_end
