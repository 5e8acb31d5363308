#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Where an 8-byte all-reduce's time goes, on 2 VMs: ib_write_lat 8 B for the reference, then
# kcoll-perf all-reduce 8 B with the kcoll:* tracepoints and the ioctl system calls of
# kcoll-perf traced (tracefs).  bench/trace_phases.py turns each node's trace into the time
# between the events of one call (setup, waiting for the peer, the send's acknowledgment,
# reduction and wake-up).  Build first with `make all kcoll-perf`, then:
#   rig/prepare.sh stock kmod/kcoll.ko &&
#   rig/cluster.sh -n 2 -t 900 -o build/profile -- sh bench/profile-job.sh &&
#   python3 bench/trace_phases.py build/profile/node0/trace.txt
. bench/job-lib.sh
bench_job_up
pt lat ib_write_lat -d rxe0 -x "$gid" -F -s 8 -n 1000 -p 18702
rig_barrier lat 300
trace_start
export KCOLL_RANK=$N KCOLL_NRANKS=$RIG_NNODES KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0)
tools/kcoll-perf/kcoll-perf -C allreduce -b 8 -e 8 -w 10 -n 300 -p in -q >"$RIG_DIR/kperf.txt" 2>&1
trace_stop "$RIG_DIR/trace.txt"
rig_barrier done 600
