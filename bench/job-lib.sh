# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the looks at one run (bench/quick-job.sh, bench/profile-job.sh,
# bench/profile-local.sh), not by `make bench`.
. rig/guest/lib.sh

# Soft-RoCE and kcoll up, both nodes reachable; sets N (this node) and gid (the index of the
# RoCE v2 GID of the node's IPv4 address, for perftest's -x).
bench_job_up() {
	rig_net_up; rig_rxe_up; modprobe kcoll
	N=$RIG_NODE
	for i in 0 1; do
		n=0
		while ! ping -c 1 -W 1 "$(rig_ip $i)" >/dev/null 2>&1 && [ $n -lt 60 ]; do
			n=$((n + 1))
		done
	done
	gid=$(ibv_devinfo -v -d rxe0 |
	      awk '/GID\[/ && /::ffff:169/ {gsub(/[^0-9]/,"",$1); print $1; exit}')
	[ -n "$gid" ] || gid=1
	rig_barrier up 120
}

# pt NAME CMD...: a perftest pair; node0 serves (NAME-srv.txt), node1 connects to it,
# retrying until the server listens (NAME.txt), both in RIG_DIR.
pt() {
	name=$1
	shift
	if [ "$N" = 0 ]; then
		timeout 200 "$@" >"$RIG_DIR/$name-srv.txt" 2>&1
	else
		k=0
		until timeout 200 "$@" "$(rig_ip 0)" >"$RIG_DIR/$name.txt" 2>&1; do
			k=$((k + 1)); [ $k -ge 20 ] && break; sleep 1
		done
	fi
}

# trace_start [EVENT...]: tracefs emptied and on, recording the kcoll:* events, kcoll-perf's
# ioctl system calls and each EVENT given (e.g. sched/sched_switch).
trace_start() {
	T=/sys/kernel/tracing
	[ -d $T/events ] || mount -t tracefs nodev $T
	echo 0 >"$T/tracing_on"
	echo >$T/trace
	echo 16384 >$T/buffer_size_kb
	echo 1 >$T/events/kcoll/enable
	for e in "$@"; do
		echo 1 >"$T/events/$e/enable"
	done
	for e in sys_enter_ioctl sys_exit_ioctl; do
		echo 'comm == "kcoll-perf"' >$T/events/syscalls/$e/filter
		echo 1 >$T/events/syscalls/$e/enable
	done
	echo 1 >$T/tracing_on
}

# trace_stop FILE: tracing off, the trace saved in FILE.
trace_stop() {
	echo 0 >"$T/tracing_on"
	cat "$T/trace" >"$1"
}
