#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Where a same-host 8-byte all-reduce's time goes: NRANKS ranks of kcoll-perf in one VM on
# 127.0.0.1 (the loop transport), untraced for the figures (2 ranks, NRANKS ranks on plain
# memory and on kcoll buffers), then once more with the kcoll:* tracepoints, the scheduler's
# switches and wake-ups, the kcoll work items and kcoll-perf's ioctl system calls traced
# (tracefs).  bench/trace_local.py reads the trace.  Build first with `make all`, then:
#   rig/prepare.sh stock kmod/kcoll.ko &&
#   rig/cluster.sh -n 1 -c 2 -t 1500 -o build/profile-local -- sh bench/profile-local.sh &&
#   python3 bench/trace_local.py build/profile-local/node0/trace.txt
# Per node directory: two-r*.txt, ranks-r*.txt, kbuf-r*.txt, traced-r*.txt (kcoll-perf's
# tables) and trace.txt.  PROFILE_RANKS (default 4), PROFILE_ITERS (default 200).
. bench/job-lib.sh
modprobe kcoll || exit 1
NR=${PROFILE_RANKS:-4}
ITERS=${PROFILE_ITERS:-200}

# run NRANKS TAG [kcoll-perf options]: NRANKS ranks of an 8-byte in-place all-reduce
run() {
	nr=$1 tag=$2 r=0 pids=
	shift 2
	while [ $r -lt "$nr" ]; do
		(KCOLL_RANK=$r KCOLL_NRANKS=$nr KCOLL_BOOTSTRAP_ADDR=127.0.0.1 \
			timeout 600 tools/kcoll-perf/kcoll-perf -C allreduce -b 8 -e 8 -w 10 \
			-n "$ITERS" -p in -q "$@" >"$RIG_DIR/$tag-r$r.txt" 2>&1) &
		pids="$pids $!"
		r=$((r + 1))
	done
	# shellcheck disable=SC2086
	wait $pids
}

run 2 two
run "$NR" ranks
run "$NR" kbuf -m kbuf

trace_start sched/sched_switch sched/sched_wakeup workqueue/workqueue_queue_work \
	workqueue/workqueue_execute_start
run "$NR" traced
trace_stop "$RIG_DIR/trace.txt"
