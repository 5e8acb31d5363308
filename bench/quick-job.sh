#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A quick look, not the benchmark: perftest (ib_write_bw -b at 1 and 16 MiB, ib_write_lat 8 B)
# then kcoll-perf all-reduce 8 B..8 MiB, in place, user memory and zero-copy buffers, in one
# 2-VM job.  Results in RUNDIR/node*/ (bwbi*.txt, lat.txt, kperf.txt).  Build first with
# `make all kcoll-perf`, then:
#   rig/prepare.sh stock kmod/kcoll.ko && rig/cluster.sh -n 2 -t 900 -o build/quick -- sh bench/quick-job.sh
# For the real comparison use `make bench` (Documentation/perf.rst).
. rig/guest/lib.sh
rig_net_up; rig_rxe_up; modprobe kcoll
N=$RIG_NODE
for i in 0 1; do n=0; while ! ping -c 1 -W 1 "$(rig_ip $i)" >/dev/null 2>&1 && [ $n -lt 60 ]; do n=$((n+1)); done; done
gid=$(ibv_devinfo -v -d rxe0 | awk '/GID\[/ && /::ffff:169/ {gsub(/[^0-9]/,"",$1); print $1; exit}')
[ -n "$gid" ] || gid=1
rig_barrier up 120
pt() { name=$1; shift; if [ $N = 0 ]; then timeout 200 "$@" >$RIG_DIR/$name-srv.txt 2>&1; else k=0; until timeout 200 "$@" $(rig_ip 0) >$RIG_DIR/$name.txt 2>&1; do k=$((k+1)); [ $k -ge 20 ] && break; sleep 1; done; fi; }
pt bwbi ib_write_bw -d rxe0 -x $gid -F --report_gbits -s 1048576 -n 100 -b -p 18700
rig_barrier bw 300
pt bwbi16 ib_write_bw -d rxe0 -x $gid -F --report_gbits -s 16777216 -n 10 -b -p 18701
rig_barrier bw16 300
pt lat ib_write_lat -d rxe0 -x $gid -F -s 8 -n 200 -p 18702
rig_barrier lat 300
export KCOLL_RANK=$N KCOLL_NRANKS=$RIG_NNODES KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0)
tools/kcoll-perf/kcoll-perf -C allreduce -b 8 -e 16M -f 4 -w 2 -n 10 -I 64M -m both -p in -q > $RIG_DIR/kperf.txt 2>&1
rig_barrier done 600
