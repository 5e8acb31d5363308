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
# Both with the sweep of bench/node.sh.  Results in /run/rig/results/ (local-kcoll.json,
# local-mpi.json, comm-show.json, meta.json, *.rc, *.out), read by bench/report_local.py.
# BENCH_SMOKE=1: tiny sizes.  BENCH_BIN: where mpi_timing is.  BENCH_LOCAL_RANKS (default 4).
. rig/guest/lib.sh

R=/run/rig/results
NR=${BENCH_LOCAL_RANKS:-4}
BIN=${BENCH_BIN:-$RIG_TOP/build/bench}
mkdir -p "$R"
log() { echo "bench: local: $(date +%T) $*"; }

if [ "${BENCH_SMOKE:-0}" = 1 ]; then
	SWEEP="-b 4 -e 4K -f 4 -w 1 -n 3"
	STEP_TIMEOUT=900
else
	# 20 timed iterations up to 16 MiB (-I 320M): a same-host row is not bound by a slow
	# link, and with the clusters' 32 MiB budget the 16 MiB row had 2 and swung by 2-3x
	SWEEP="-b 4 -e 16M -f 2 -w 5 -n 20 -I 320M"
	STEP_TIMEOUT=3600
fi

modprobe kcoll || log "modprobe kcoll failed"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mem=$(awk '/^MemTotal/ { printf "%d", $2 / 1024 }' /proc/meminfo)
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
cat >"$R/meta.json" <<EOF
{"nodes": 1, "ranks": $NR, "vcpus": $(nproc), "mem_mb": $mem, "kernel": "$(uname -r)",
 "cpu_model": "$cpu", "clocksource": "${cs:-?}", "smoke": ${BENCH_SMOKE:-0},
 "sweep": "$SWEEP"}
EOF

# ---- 1. kcoll: NRANKS kcoll-perf processes on 127.0.0.1 --------------------------------

log "kcoll-perf, $NR ranks on 127.0.0.1"
pids=
r=0
while [ $r -lt "$NR" ]; do
	json=
	[ $r = 0 ] && json="-J $R/local-kcoll.json"
	# shellcheck disable=SC2086
	(KCOLL_RANK=$r KCOLL_NRANKS=$NR KCOLL_BOOTSTRAP_ADDR=127.0.0.1 \
		timeout $STEP_TIMEOUT tools/kcoll-perf/kcoll-perf -C allreduce -p out -m both \
		$SWEEP -P $json >"$R/local-kcoll-rank$r.out" 2>&1
	 echo $? >"$R/local-kcoll-rank$r.rc") &
	pids="$pids $!"
	r=$((r + 1))
done

# While they run: the first listing that names a transport for every rank's every peer
# (a listing is a snapshot; ranks and links come up one by one), polled until the ranks end.
want=$((NR * (NR - 1)))
ready=0
while [ $ready = 0 ] && [ "$(ls "$R"/local-kcoll-rank*.rc 2>/dev/null | wc -l)" -lt "$NR" ]; do
	tools/kcollctl/kcollctl -j comm show >"$R/comm-show.tmp" 2>&1
	if [ "$(grep -o '"transport":"[a-z]*"' "$R/comm-show.tmp" | wc -l)" -ge $want ]; then
		mv "$R/comm-show.tmp" "$R/comm-show.json"
		ready=1
	else
		sleep 0.5
	fi
done
if [ $ready = 0 ]; then
	log "no listing named every peer's transport"
	mv "$R/comm-show.tmp" "$R/comm-show.last" 2>/dev/null
fi
# shellcheck disable=SC2086
wait $pids
cp "$R/local-kcoll-rank0.rc" "$R/local-kcoll.rc"
log "kcoll-perf done, exit status $(cat "$R/local-kcoll.rc")"

# ---- 2. Open MPI's shared-memory path: vader + CMA ----------------------------------------

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log "mpirun -np $NR, btl vader (CMA)"
# shellcheck disable=SC2086
timeout $STEP_TIMEOUT mpirun -np "$NR" --oversubscribe --bind-to none \
	--mca pml ob1 --mca btl vader,self --mca btl_vader_single_copy_mechanism cma \
	--mca mpi_yield_when_idle 1 \
	"$BIN/mpi_timing" -C allreduce $SWEEP -L local-mpi -J "$R/local-mpi.json" \
	>"$R/local-mpi.out" 2>&1
echo $? >"$R/local-mpi.rc"
log "mpirun: exit status $(cat "$R/local-mpi.rc")"

modprobe -r kcoll 2>/dev/null
log "done"
