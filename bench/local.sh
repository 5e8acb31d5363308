#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The same-host part of `make bench` (issue 15), inside one rig VM with several vCPUs
# (bench/run.sh boots it with rig/cluster.sh -c 2): NRANKS ranks on this one node, then
#   1. kcoll-perf -C allreduce -p out -m both in NRANKS processes bootstrapped on 127.0.0.1,
#      so that every peer address is a loopback one and the kernel links the ranks with its
#      loop transport; `kcollctl -j comm show`, taken while they run, records each peer's
#      transport (comm-show.json);
#   2. bench/mpi_timing -C allreduce under mpirun -np NRANKS on this node, Open MPI's
#      shared-memory path: ob1, btl vader,self, single copy by CMA, yielding when idle (the
#      ranks outnumber the vCPUs).
# Both with the sweep of bench/node.sh (bench/guest-lib.sh) up to 320 MiB a row.  Results in
# /run/rig/results/ (local-kcoll.json, local-mpi.json, comm-show.json, meta.json, *.rc,
# *.out), read by bench/report_local.py.
# BENCH_SMOKE=1: tiny sizes.  BENCH_BIN: where mpi_timing is.  BENCH_LOCAL_RANKS (default 4).
BENCH_TAG=local
. bench/guest-lib.sh

NR=${BENCH_LOCAL_RANKS:-4}
# 20 timed iterations up to 16 MiB (-I 320M): a same-host row is not bound by a slow link, and
# with the clusters' 32 MiB budget the 16 MiB row had 2 and swung by 2-3x
[ "${BENCH_SMOKE:-0}" = 1 ] || SWEEP="-b 4 -e 16M -f 2 -w 5 -n 20 -I 320M"

modprobe kcoll || log "modprobe kcoll failed"
bench_meta "\"ranks\": $NR"

# ---- 1. kcoll: NRANKS kcoll-perf processes on 127.0.0.1 --------------------------------

# The listing names every rank's every peer's transport (comm-show.json).
bench_kperf -s "$R/comm-show" local-kcoll auto "$NR" 127.0.0.1 -C allreduce -p out -m both

# ---- 2. Open MPI's shared-memory path: vader + CMA ----------------------------------------

bench_mpi local-mpi "$NR" --mca pml ob1 --mca btl vader,self \
	--mca btl_vader_single_copy_mechanism cma --mca mpi_yield_when_idle 1 -- -C allreduce

modprobe -r kcoll 2>/dev/null
log "done"
