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
# reads.  BENCH_SMOKE=1: tiny sizes (the sanity test).  BENCH_BIN: where mpi_timing is.
# BENCH_ONLY=tcp: only what runs over TCP (iperf3, kcoll over TCP, Open MPI over TCP, Gloo).
. rig/guest/lib.sh

R=/run/rig/results
S=/run/rig/ssh
N=$RIG_NODE
NN=$RIG_NNODES
BIN=${BENCH_BIN:-$RIG_TOP/build/bench}
mkdir -p "$R/perftest"
log() { echo "bench: node$N: $(date +%T) $*"; }

if [ "${BENCH_SMOKE:-0}" = 1 ]; then
	SWEEP="-b 4 -e 4K -f 4 -w 1 -n 3"
	BW_RUNS="65536:200"
	LAT_ITERS=200
	IPERF_SECS=2
	STEP_TIMEOUT=900
else
	SWEEP="-b 4 -e 16M -f 2 -w 5 -n 20 -I 32M"
	# SIZE:ITERATIONS, about 32-128 MiB per run (a fixed duration gives too few
	# iterations of large messages at TCG's rate)
	BW_RUNS="4096:2000 65536:500 1048576:64 8388608:16"
	LAT_ITERS=1000
	IPERF_SECS=10
	STEP_TIMEOUT=3600
fi
rdma=1
[ "${BENCH_ONLY:-}" = tcp ] && rdma=0

rig_net_up
rig_rxe_up || log "rdma_rxe failed"
modprobe kcoll || log "modprobe kcoll failed"

if [ "$N" = 0 ]; then
	mtu=$(ibv_devinfo -d rxe0 2>/dev/null | awk '/active_mtu/ { print $2; exit }')
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	mem=$(awk '/^MemTotal/ { printf "%d", $2 / 1024 }' /proc/meminfo)
	cat >"$R/meta.json" <<EOF
{"nodes": $NN, "vcpus": $(nproc), "mem_mb": $mem, "kernel": "$(uname -r)",
 "cpu_model": "$cpu", "rxe_active_mtu": "${mtu:-?}", "smoke": ${BENCH_SMOKE:-0},
 "sweep": "$SWEEP", "link_runs": "$BW_RUNS", "lat_iters": $LAT_ITERS}
EOF
	# Keys for mpirun's ssh, on the writable share: fresh for every run.
	mkdir -p "$S"
	ssh-keygen -q -t ed25519 -N '' -C rig-host -f "$S/ssh_host_ed25519_key"
	ssh-keygen -q -t ed25519 -N '' -C rig-mpirun -f "$S/id_ed25519"
	cp "$S/id_ed25519.pub" "$S/authorized_keys"
	cat >"$S/sshd_config" <<EOF
HostKey $S/ssh_host_ed25519_key
AuthorizedKeysFile $S/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile /run/sshd.pid
EOF
fi
rig_barrier keys 300

# sshd on the rig segment only; root's client key and config in the VM's tmpfs /root.
mkdir -p /run/sshd /root/.ssh
chmod 755 /run/sshd
chmod 700 /root/.ssh
cp "$S/id_ed25519" /root/.ssh/id_ed25519
chmod 600 /root/.ssh/id_ed25519
printf 'Host *\n\tStrictHostKeyChecking no\n\tUserKnownHostsFile /dev/null\n\tLogLevel ERROR\n\tIdentityFile /root/.ssh/id_ed25519\n\tBatchMode yes\n' \
	>/root/.ssh/config
/usr/sbin/sshd -f "$S/sshd_config" -o "ListenAddress=$(rig_ip "$N")" -E "$RIG_DIR/sshd.log" ||
	log "sshd failed to start"

# Every node answers before anything is measured.
i=0
while [ $i -lt "$NN" ]; do
	t=0
	until ping -c 1 -W 1 "$(rig_ip $i)" >/dev/null 2>&1; do
		t=$((t + 1))
		[ $t -ge 60 ] && { log "node$i does not answer ping"; break; }
	done
	i=$((i + 1))
done
rig_barrier up 300

# ---- 1. perftest -------------------------------------------------------------------------

# The GID index of this node's RoCE v2 IPv4 address.
gid_index() {
	d=/sys/class/infiniband/rxe0/ports/1
	for f in $(grep -l '^0000:0000:0000:0000:0000:ffff:' $d/gids/* 2>/dev/null); do
		i=${f##*/}
		if [ "$(cat "$d/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ]; then
			echo "$i"
			return
		fi
	done
	echo 1
}

# pt NAME PORT CMD...: node0 serves, node1 connects (retrying until the server listens).
pt() {
	name=$1
	port=$2
	shift 2
	if [ "$N" = 0 ]; then
		timeout 300 "$@" -p "$port" >"$R/perftest/$name-server.txt" 2>&1
	else
		k=0
		until timeout 300 "$@" -p "$port" "$(rig_ip 0)" >"$R/perftest/$name.txt" 2>&1; do
			k=$((k + 1))
			[ $k -ge 30 ] && { log "$name failed"; break; }
			sleep 1
		done
	fi
}

if [ $rdma = 1 ] && [ "$N" -le 1 ] && [ "$NN" -ge 2 ]; then
	gid=$(gid_index)
	log "perftest (gid index $gid)"
	port=18600
	for run in $BW_RUNS; do
		size=${run%%:*}
		iters=${run##*:}
		pt "bw-uni-$size" $port ib_write_bw -d rxe0 -x "$gid" -F --report_gbits -s "$size" \
			-n "$iters"
		port=$((port + 1))
		pt "bw-bi-$size" $port ib_write_bw -d rxe0 -x "$gid" -F --report_gbits -s "$size" \
			-n "$iters" -b
		port=$((port + 1))
	done
	pt lat-8 $port ib_write_lat -d rxe0 -x "$gid" -F -s 8 -n "$LAT_ITERS"
	log "perftest done"
fi
rig_barrier perftest $STEP_TIMEOUT

# The TCP link limit between the same two VMs: iperf3, one stream, one way and both ways.
# node0 serves one test at a time (-1); node1 retries until the server listens again.
mkdir -p "$R/iperf3"
if [ "$N" -le 1 ] && [ "$NN" -ge 2 ]; then
	log "iperf3"
	for run in uni bidir; do
		bidir=
		[ $run = bidir ] && bidir=--bidir
		if [ "$N" = 0 ]; then
			timeout 300 iperf3 -s -1 -p 18690 >"$R/iperf3/$run-server.txt" 2>&1
		else
			k=0
			# With -J, a refused connection may still exit 0: the JSON's "error" says so.
			until timeout 300 iperf3 -c "$(rig_ip 0)" -p 18690 -t "$IPERF_SECS" -J $bidir \
				>"$R/iperf3/$run.json" 2>&1 &&
				! grep -q '"error"' "$R/iperf3/$run.json"; do
				k=$((k + 1))
				[ $k -ge 30 ] && { log "iperf3 $run failed"; break; }
				sleep 1
			done
		fi
	done
	log "iperf3 done"
fi
rig_barrier iperf3 $STEP_TIMEOUT

# ---- 2. kcoll ----------------------------------------------------------------------------

# kperf NAME TRANSPORT ARGS...: kcoll-perf on every node over KCOLL_TRANSPORT=TRANSPORT;
# node0 writes NAME.json and NAME.rc.
kperf() {
	name=$1
	transport=$2
	shift 2
	log "kcoll-perf ($name)"
	json=
	[ "$N" = 0 ] && json="-J $R/$name.json"
	# shellcheck disable=SC2086
	KCOLL_TRANSPORT=$transport KCOLL_RANK=$N KCOLL_NRANKS=$NN \
		KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0) \
		timeout $STEP_TIMEOUT tools/kcoll-perf/kcoll-perf "$@" $SWEEP -P $json \
		>"$R/$name-node$N.out" 2>&1
	rc=$?
	if [ "$N" = 0 ]; then echo $rc >"$R/$name.rc"; else echo $rc >"$R/$name-node$N.rc"; fi
	log "kcoll-perf ($name) exit status $rc"
	rig_barrier "$name" $STEP_TIMEOUT
}
[ $rdma = 1 ] && kperf kcoll auto -C allreduce,allgather,reduce_scatter,broadcast,alltoall
# The same VMs, the kernel's TCP transport instead of Soft-RoCE (issue 14's comparison).
kperf kcoll-tcp tcp -C allreduce -p out

# ---- 3. Open MPI over UCX and over TCP, launched from node0 through ssh -------------------

if [ "$N" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
	hosts=
	i=0
	while [ $i -lt "$NN" ]; do
		hosts="$hosts${hosts:+,}$(rig_ip $i):1"
		i=$((i + 1))
	done
	common="-np $NN --host $hosts --mca plm_rsh_agent ssh --mca oob_tcp_if_include eth0
		--mca btl_tcp_if_include eth0 --bind-to none"
	if [ $rdma = 1 ]; then
		log "mpirun over UCX"
		# shellcheck disable=SC2086
		timeout $STEP_TIMEOUT mpirun $common --mca pml ucx --mca btl ^openib,tcp,uct \
			-x UCX_NET_DEVICES=rxe0:1 -x UCX_UD_VERBS_ETH_DGID_CHECK=n \
			"$BIN/mpi_timing" $SWEEP -L mpi-ucx -J "$R/mpi-ucx.json" \
			>"$R/mpi-ucx.out" 2>&1
		echo $? >"$R/mpi-ucx.rc"
		log "mpirun over UCX: exit status $(cat "$R/mpi-ucx.rc")"
	fi
	log "mpirun over TCP"
	# shellcheck disable=SC2086
	timeout $STEP_TIMEOUT mpirun $common --mca pml ob1 --mca btl tcp,self \
		"$BIN/mpi_timing" $SWEEP -L mpi-tcp -J "$R/mpi-tcp.json" >"$R/mpi-tcp.out" 2>&1
	echo $? >"$R/mpi-tcp.rc"
	log "mpirun over TCP: exit status $(cat "$R/mpi-tcp.rc")"
fi
rig_barrier mpi $((3 * STEP_TIMEOUT))

# ---- 4. PyTorch: Gloo, kcoll, kcoll over its TCP transport --------------------------------

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
rig_barrier gloo $STEP_TIMEOUT

[ -f /run/sshd.pid ] && kill "$(cat /run/sshd.pid)" 2>/dev/null
modprobe -r kcoll 2>/dev/null
rig_barrier done 300
log "done"
