#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kcolllat, the libbpf tool: it attaches to the kcoll:* tracepoints and counts operations,
# by kind and size, filtered by communicator or process.  Two ranks of examples/p2p_ping on
# this node (one Soft-RoCE device on eth0) make the traffic: 10 round trips of 64 KiB.
. "$(dirname "$0")/../lib/ktap.sh"

LAT=tools/kcolllat/kcolllat
PING=examples/p2p_ping
RXE=kcoll_bpf0
D=${RIG_DIR:-/tmp}/kcolllat
mkdir -p "$D"

ktap_begin
if [ ! -x $LAT ] || [ ! -x $PING ]; then
	ktap_skip "kcolllat attaches to the kcoll tracepoints" "kcolllat or p2p_ping not built"
	ktap_end
	exit
fi
# A kernel without the bpf() system call (the debug tier's) cannot run the tool at all.
if $LAT -d 1 2>&1 | grep -q "cannot load the BPF program: Function not implemented"; then
	ktap_skip "kcolllat attaches to the kcoll tracepoints" "this kernel has no bpf() system call"
	ktap_end
	exit
fi

attaches() {
	# KCOLLLAT_DEBUG: libbpf's warnings (the verifier's log) end up in the TAP comments.
	KCOLLLAT_DEBUG=1 $LAT -j -d 1 >"$D/attach.json" || { fail "kcolllat -d 1 failed"; return 1; }
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' \
		"$D/attach.json" || { fail "not JSON: $(cat "$D/attach.json")"; return 1; }
	[ -s "$D/attach.json" ] || { fail "no output"; return 1; }
}

# count FILE KIND: operations of KIND in the 64 KiB bucket over every interval of FILE.
count() {
	python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    for o in json.loads(line)["ops"]:
        if o["kind"] == sys.argv[2] and o["size_min"] == 65536:
            n += o["count"]
print(n)' "$1" "$2"
}

run_traffic() {
	ip=$(ip -4 -o addr show eth0 | awk '{ print $4 }' | cut -d/ -f1)
	rdma link add $RXE type rxe netdev eth0 || { fail "cannot add $RXE"; return 1; }
	# Rank 1 waits for rank 0 while the three kcolllat load (slow under TCG on a busy host).
	export KCOLL_NRANKS=2 KCOLL_BOOTSTRAP_ADDR=$ip KCOLL_BOOTSTRAP_TIMEOUT_MS=300000
	KCOLL_RANK=1 $PING -n 10 64k >"$D/rank1.out" 2>&1 &
	p1=$!	# its own pid, for kcolllat -P: bounded by a watchdog, not by timeout(1)
	(n=0; while [ $n -lt 600 ] && kill -0 $p1 2>/dev/null; do sleep 1; n=$((n + 1)); done
	 kill $p1 2>/dev/null) &
	$LAT -j -i 3600 >"$D/all.json" 2>"$D/all.err" &
	l_all=$!
	$LAT -j -i 3600 -P $p1 >"$D/pid.json" 2>"$D/pid.err" &
	l_pid=$!
	$LAT -j -i 3600 -c 1 >"$D/none.json" 2>"$D/none.err" &
	l_none=$!
	# Traffic only once every kcolllat is attached: it says so on stderr (bounded wait).
	n=0
	while [ $n -lt 300 ] && [ "$(cat "$D/all.err" "$D/pid.err" "$D/none.err" 2>/dev/null |
				  grep -c 'tracing kcoll operations')" -lt 3 ]; do
		sleep 1
		n=$((n + 1))
	done
	KCOLL_RANK=0 timeout 300 $PING -n 10 64k >"$D/rank0.out" 2>&1
	r0=$?
	wait $p1
	r1=$?
	kill -INT $l_all $l_pid $l_none
	wait $l_all $l_pid $l_none
	rdma link delete $RXE
	[ $r0 -eq 0 ] && [ $r1 -eq 0 ] ||
		{ fail "p2p_ping failed: $(cat "$D/rank0.out" "$D/rank1.out")"; return 1; }
	[ -s "$D/all.json" ] || { fail "kcolllat printed nothing: $(cat "$D/all.err")"; return 1; }
}

counts_ops() {
	s=$(count "$D/all.json" send) r=$(count "$D/all.json" recv)
	[ "$s" -ge 20 ] && [ "$r" -ge 20 ] ||
		fail "want 20 sends and 20 receives of 64 KiB, got $s and $r: $(cat "$D/all.json")"
}

filters_by_pid() {
	s=$(count "$D/pid.json" send) r=$(count "$D/pid.json" recv)
	[ "$s" -eq 10 ] && [ "$r" -eq 10 ] ||
		fail "rank 1 alone: want 10 sends and 10 receives, got $s and $r: $(cat "$D/pid.json")"
}

filters_by_comm() {
	s=$(count "$D/none.json" send) r=$(count "$D/none.json" recv)
	[ -s "$D/none.json" ] || { fail "kcolllat -c printed nothing: $(cat "$D/none.err")"; return 1; }
	[ "$s" -eq 0 ] && [ "$r" -eq 0 ] || fail "communicator 1 does not exist, got $s and $r"
}

ktap_test "kcolllat attaches to the kcoll tracepoints and prints JSON" attaches
before=$KTAP_FAILED
ktap_test "two ranks of p2p_ping exchange 10 x 64 KiB while kcolllat runs" run_traffic
if [ "$KTAP_FAILED" -eq "$before" ]; then
	ktap_test "kcolllat counts every send and receive, in the 64 KiB bucket" counts_ops
	ktap_test "kcolllat -P PID counts only that process's operations" filters_by_pid
	ktap_test "kcolllat -c COMM_ID counts only that communicator" filters_by_comm
else
	ktap_skip "kcolllat counts every send and receive" "no traffic"
	ktap_skip "kcolllat -P PID counts only that process's operations" "no traffic"
	ktap_skip "kcolllat -c COMM_ID counts only that communicator" "no traffic"
fi
ktap_end
