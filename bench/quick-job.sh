#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A quick look, not the benchmark: perftest (ib_write_bw -b at 1 and 16 MiB, ib_write_lat 8 B)
# then kcoll-perf all-reduce 8 B..8 MiB, in place, user memory and zero-copy buffers, in one
# 2-VM job.  Results in RUNDIR/node*/ (bwbi*.txt, lat.txt, kperf.txt).  Build first with
# `make all kcoll-perf`, then:
#   rig/prepare.sh stock kmod/kcoll.ko && rig/cluster.sh -n 2 -t 900 -o build/quick -- sh bench/quick-job.sh
# For the real comparison use `make bench` (Documentation/perf.rst).
. bench/job-lib.sh
bench_job_up
pt bwbi ib_write_bw -d rxe0 -x $gid -F --report_gbits -s 1048576 -n 100 -b -p 18700
rig_barrier bw 300
pt bwbi16 ib_write_bw -d rxe0 -x $gid -F --report_gbits -s 16777216 -n 10 -b -p 18701
rig_barrier bw16 300
pt lat ib_write_lat -d rxe0 -x $gid -F -s 8 -n 200 -p 18702
rig_barrier lat 300
export KCOLL_RANK=$N KCOLL_NRANKS=$RIG_NNODES KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0)
tools/kcoll-perf/kcoll-perf -C allreduce -b 8 -e 16M -f 4 -w 2 -n 10 -I 64M -m both -p in -q > $RIG_DIR/kperf.txt 2>&1
rig_barrier done 600
