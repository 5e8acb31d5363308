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
# With two NICs a VM (bench/run.sh boots them with --nics 2), the rails (issue 15 item 4):
#   1b. the RDMA link limit of each rail alone and of both at once (ib_write_bw -b on rxe0
#      and rxe1 together), perftest/rails-*.txt;
#   2b. kcoll-perf -A hier with KCOLL_IFNAME=eth0,eth1 (hier-kcoll-rails: local rank i on
#      rail i, the inter-node step of local rank i on rail i); steps 2 run with
#      KCOLL_IFNAME=eth0, one rail;
#   4. the profile at 16 MiB (4 KiB in a smoke run): ring and hier on one rail, hier on two,
#      each alone for a few iterations with every node's /proc/stat before and after
#      (prof-kcoll-NAME.json, prof-NAME-nodeI.stat): how busy the vCPUs were, and with what.
# All with the sweep of bench/node.sh (bench/guest-lib.sh) up to 128 MiB a row: 8 timed
# iterations at 16 MiB, the target's size.  Results in /run/rig/results/ (hier-kcoll-*.json,
# hier-mpi.json, perftest/, iperf3/, meta.json, *.rc, *.out), read by bench/report_hier.py
# and bench/report_rails.py.
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
RAILS=${RIG_NICS:-1}
[ "$N" = 0 ] && bench_meta "\"ranks\": $((NN * RPN)), \"ranks_per_node\": $RPN, \"nics\": $RAILS"
bench_ssh_up
bench_nodes_up

# ---- 1. the link limits -----------------------------------------------------------------

bench_perftest
bench_iperf3

# rails_perftest: ib_write_bw -b between node0 and node1 on rxe0 alone, on rxe1 alone, then on
# both at once (two pairs of processes, two ports), RAILS_BW (SIZE:ITERATIONS) each.
if [ "${BENCH_SMOKE:-0}" = 1 ]; then RAILS_BW=65536:200; else RAILS_BW=8388608:16; fi
rails_bw() {
	[ "$1" = rxe0 ] || { PT_ADDR=$(rig_ip1 0); export PT_ADDR; }
	pt "$2" "$3" ib_write_bw -d "$1" -x "$(gid_index "$1")" -F --report_gbits \
		-s "${RAILS_BW%%:*}" -n "${RAILS_BW##*:}" -b
	unset PT_ADDR
}
rails_perftest() {
	[ "$RAILS" = 2 ] && [ "$N" -le 1 ] || return 0
	log "perftest, two rails"
	rails_bw rxe0 rails-bi-rxe0-alone 18630
	rails_bw rxe1 rails-bi-rxe1-alone 18631
	rails_bw rxe0 rails-bi-rxe0 18632 &
	rails_bw rxe1 rails-bi-rxe1 18633 &
	wait
	log "perftest, two rails, done"
}
rails_perftest
rig_barrier rails-perftest $STEP_TIMEOUT

# ---- 2. kcoll: hierarchical, flat ring, the module's choice ------------------------------

KCOLL_IFNAME=eth0
export KCOLL_IFNAME
for algo in hier ring auto; do
	bench_kperf -s "$R/hier-comm-$algo-node$N" "hier-kcoll-$algo" auto "$RPN" "$(rig_ip 0)" \
		-C allreduce -p out -A $algo
done
if [ "$RAILS" = 2 ]; then
	KCOLL_IFNAME=eth0,eth1
	bench_kperf -s "$R/hier-comm-rails-node$N" hier-kcoll-rails auto "$RPN" "$(rig_ip 0)" \
		-C allreduce -p out -A hier
	KCOLL_IFNAME=eth0
fi

# ---- 3. Open MPI: shared memory inside a node, TCP between nodes ---------------------------

[ "$N" = 0 ] && bench_mpi hier-mpi "$RPN" --mca pml ob1 --mca btl tcp,vader,self \
	--mca btl_vader_single_copy_mechanism cma -- -C allreduce
rig_barrier mpi $((2 * STEP_TIMEOUT))

# ---- 4. the profile at 16 MiB ------------------------------------------------------------

# prof NAME IFNAME ALGO: kcoll-perf at 16 MiB alone, this node's /proc/stat around it.
prof() {
	KCOLL_IFNAME=$2
	bench_kperf -p "$R/prof-$1-node$N.stat" "prof-kcoll-$1" auto "$RPN" "$(rig_ip 0)" \
		-C allreduce -p out -A "$3"
	KCOLL_IFNAME=eth0
}
# (the smoke run at 4 KiB: the same files, no measurement)
if [ "${BENCH_SMOKE:-0}" = 1 ]; then SWEEP="-b 4K -e 4K -w 1 -n 4"; else
	SWEEP="-b 16M -e 16M -w 1 -n 4 -I 128M"; fi
prof ring eth0 ring
prof hier eth0 hier
[ "$RAILS" = 2 ] && prof rails eth0,eth1 hier

[ -f /run/sshd.pid ] && kill "$(cat /run/sshd.pid)" 2>/dev/null
modprobe -r kcoll 2>/dev/null
rig_barrier done 300
log "done"
