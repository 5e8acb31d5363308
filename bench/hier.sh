#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The hierarchical part of `make bench` (issue 15), inside each of 2 rig VMs with 2 vCPUs
# (bench/run.sh boots them with rig/cluster.sh -n 2 -c 2): RPN ranks on every node, node I
# holding ranks I * RPN .. I * RPN + RPN - 1, so that the kernel sees hosts of consecutive
# ranks (the hierarchical schedules' shape).  In turn, a barrier between steps:
#   1. the link limits, as bench/node.sh measures them: perftest between node0 and node1,
#      then iperf3;
#   2. kcoll-perf -C allreduce -p out over Soft-RoCE with -A hier, -A ring (the flat ring)
#      and -A auto; every row says the algorithm the kernel ran (algo_used), and each node's
#      `kcollctl -j comm show`, taken while kcoll-perf runs, records every rank's locality
#      (hier-comm-ALGO-nodeI.json): the report counts a hierarchical row only with both;
#   3. Open MPI from node0: bench/mpi_timing -C allreduce, RPN ranks a node, ob1 with btl
#      tcp,vader,self (shared memory with CMA inside a node, TCP between nodes).
# All with the sweep of bench/node.sh (bench/guest-lib.sh) up to 128 MiB a row: 8 timed
# iterations at 16 MiB, the target's size.  Results in /run/rig/results/ (hier-kcoll-*.json,
# hier-mpi.json, perftest/, iperf3/, meta.json, *.rc, *.out), read by bench/report_hier.py.
# BENCH_SMOKE=1: tiny sizes, 60 iterations.  BENCH_BIN: where mpi_timing is.  BENCH_HIER_RPN (default 2).
. bench/guest-lib.sh

RPN=${BENCH_HIER_RPN:-2}
if [ "${BENCH_SMOKE:-0}" = 1 ]; then
	# 60 iterations of the tiny sizes: with 3 the ranks ended within seconds, between two
	# listings (kcollctl takes seconds under TCG), and no locality was on record
	SWEEP="-b 4 -e 4K -f 4 -w 1 -n 60"
else
	SWEEP="-b 4 -e 16M -f 2 -w 5 -n 20 -I 128M"
fi

rig_net_up
rig_rxe_up || log "rdma_rxe failed"
modprobe kcoll || log "modprobe kcoll failed"
[ "$N" = 0 ] && bench_meta "\"ranks\": $((NN * RPN)), \"ranks_per_node\": $RPN"
bench_ssh_up
bench_nodes_up

# ---- 1. the link limits -----------------------------------------------------------------

bench_perftest
bench_iperf3

# ---- 2. kcoll: hierarchical, flat ring, the module's choice ------------------------------

for algo in hier ring auto; do
	bench_kperf -s "$R/hier-comm-$algo-node$N" "hier-kcoll-$algo" auto "$RPN" "$(rig_ip 0)" \
		-C allreduce -p out -A $algo
done

# ---- 3. Open MPI: shared memory inside a node, TCP between nodes ---------------------------

[ "$N" = 0 ] && bench_mpi hier-mpi "$RPN" --mca pml ob1 --mca btl tcp,vader,self \
	--mca btl_vader_single_copy_mechanism cma -- -C allreduce
rig_barrier mpi $((2 * STEP_TIMEOUT))

[ -f /run/sshd.pid ] && kill "$(cat /run/sshd.pid)" 2>/dev/null
modprobe -r kcoll 2>/dev/null
rig_barrier done 300
log "done"
