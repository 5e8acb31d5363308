#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# One node of `make bench` (bench/run.sh), inside a rig VM: Soft-RoCE, kcoll, sshd for
# mpirun, then in turn, with a barrier between steps so that nothing overlaps:
#   1. perftest between node0 (server) and node1: ib_write_bw, ib_write_bw -b, ib_write_lat;
#      then the TCP link: iperf3 between the same two, one way and both ways (--bidir)
#   2. kcoll-perf on every node (all-reduce, all-gather, reduce-scatter, broadcast, all-to-all);
#      then kcoll over kernel TCP (KCOLL_TRANSPORT=tcp): all-reduce, out of place
#   3. Open MPI from node0: bench/mpi_timing over UCX (rxe0:1), then over TCP
#   4. PyTorch: bench/gloo_bench.py on every node, init_method=tcp://node0, Gloo, kcoll's
#      backend (python/kcoll) and kcoll's backend on its TCP transport, in one process
# Results go to /run/rig/results/ (the run directory on the host), which bench/report.py
# reads; the steps are bench/guest-lib.sh's.  BENCH_SMOKE=1: tiny sizes (the sanity test).
# BENCH_BIN: where mpi_timing is.  BENCH_ONLY=tcp: only what runs over TCP (iperf3, kcoll
# over TCP, Open MPI over TCP, Gloo).  BENCH_ONLY=sim: only what kcoll-sim's calibration reads
# (perftest and kcoll-perf over RDMA; bench/calibrate.py), for the 8-VM validation.
. bench/guest-lib.sh

rdma=1 others=1 place=both
case "${BENCH_ONLY:-}" in
tcp) rdma=0 ;;
sim)
	# What calibrate.py reads (out of place), and fewer iterations: 8 VMs of TCG on 2 cores
	# run kcoll-perf at a quarter of a core each.
	others=0 place=out
	[ "${BENCH_SMOKE:-0}" = 1 ] || SWEEP="-b 4 -e 16M -f 2 -w 2 -n 10 -I 16M"
	;;
esac

rig_net_up
rig_rxe_up || log "rdma_rxe failed"
modprobe kcoll || log "modprobe kcoll failed"
[ "$N" = 0 ] && bench_meta
bench_ssh_up
bench_nodes_up

# ---- 1. the RDMA link (perftest) and the TCP link (iperf3) ----------------------------------

[ $rdma = 1 ] && bench_perftest
[ $others = 1 ] && bench_iperf3

# ---- 2. kcoll ----------------------------------------------------------------------------

[ $rdma = 1 ] && bench_kperf kcoll auto 1 "$(rig_ip 0)" \
	-C allreduce,allgather,reduce_scatter,broadcast,alltoall -p $place
# The same VMs, the kernel's TCP transport instead of Soft-RoCE (issue 14's comparison).
[ $others = 1 ] && bench_kperf kcoll-tcp tcp 1 "$(rig_ip 0)" -C allreduce -p out

# ---- 3. Open MPI over UCX and over TCP, launched from node0 through ssh -------------------

if [ "$N" = 0 ] && [ $others = 1 ]; then
	[ $rdma = 1 ] && bench_mpi mpi-ucx 1 --mca pml ucx --mca btl ^openib,tcp,uct \
		-x UCX_NET_DEVICES=rxe0:1 -x UCX_UD_VERBS_ETH_DGID_CHECK=n --
	bench_mpi mpi-tcp 1 --mca pml ob1 --mca btl tcp,self --
fi
rig_barrier mpi $((3 * STEP_TIMEOUT))

# ---- 4. PyTorch: Gloo, kcoll, kcoll over its TCP transport --------------------------------

if [ $others = 1 ]; then
	# One process per node for the three backends (one `import torch`), each size timed on each
	# backend in turn (bench/gloo_bench.py).
	log "torch: gloo, kcoll, kcoll-tcp (import torch takes a while under TCG)"
	json=
	[ "$N" = 0 ] && json="-J $R/%s.json"
	# shellcheck disable=SC2086
	PYTHONPATH="$RIG_TOP/python" LD_LIBRARY_PATH="$RIG_TOP/lib" GLOO_SOCKET_IFNAME=eth0 \
		timeout $STEP_TIMEOUT /usr/bin/python3 bench/gloo_bench.py --rank "$N" --world "$NN" \
		--master "$(rig_ip 0):29510" --backend gloo,kcoll,kcoll-tcp $SWEEP $json \
		>"$R/gloo-node$N.out" 2>&1
	rc=$?
	for s in gloo torch-kcoll torch-kcoll-tcp; do
		if [ "$N" = 0 ]; then echo $rc >"$R/$s.rc"; else echo $rc >"$R/$s-node$N.rc"; fi
	done
	log "torch exit status $rc"
fi
rig_barrier gloo $STEP_TIMEOUT

[ -f /run/sshd.pid ] && kill "$(cat /run/sshd.pid)" 2>/dev/null
modprobe -r kcoll 2>/dev/null
rig_barrier done 300
log "done"
