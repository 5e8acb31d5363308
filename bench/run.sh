#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench: boot a virtual cluster of 2, then of 4 VMs (rig/cluster.sh) and, in one run per
# cluster size, measure the RDMA link (perftest) and the TCP link (iperf3), kcoll (kcoll-perf)
# over RDMA and over kernel TCP, Open MPI over UCX and over TCP (bench/mpi_timing) and PyTorch
# Gloo (bench/gloo_bench.py); then boot one VM with 2 vCPUs for the same-host comparison
# (4 ranks of kcoll on its loop transport against Open MPI's shared memory, bench/local.sh),
# then 2 VMs with 2 vCPUs, 2 ranks and 2 NICs each for the hierarchical one (kcoll's
# hierarchical all-reduce against its flat ring and Open MPI, and on two rails against one,
# bench/hier.sh); add the host benchmark of the reduction kernels (bench/reduce_bench); write
# OUT/report.md, report.json, busbw.png (bench/report.py).  The guest side of a cluster run is bench/node.sh.
#
# Usage: bench/run.sh [-n "2 4"] [-o bench/out] [-s] [-p]
#   -n NODES   cluster sizes, one run each, 2 to 8 VMs (default "2 4"; make bench takes
#              BENCH_NODES, e.g. "2 4 8" for kcoll-sim's 8-VM validation)
#   -o OUT     output directory, emptied first (default bench/out)
#   -s         smoke run: tiny sizes, 2 VMs unless -n says otherwise (selftests/bench/smoke.sh)
#   -p         print the plan (per run: VMs, memory, deadline) and exit
# Environment: BENCH_MEM_MB (VM memory, default 1536), BENCH_NICE (nice level of the VMs,
# default 0: the host is shared), BENCH_ONLY=tcp (only what runs over TCP: iperf3, kcoll over
# TCP, Open MPI over TCP, Gloo; the report marks the rest not measured), BENCH_ONLY=local (only
# the same-host VM, no cluster and no reduction kernels), BENCH_ONLY=hier (only the
# hierarchical run's 2 VMs, likewise), BENCH_ONLY=sim (what bench/calibrate.py reads: perftest,
# kcoll-perf over RDMA and the reduction kernels; for kcoll-sim's 8-VM validation),
# BENCH_ONLY=cluster (the clusters and the reduction kernels, no same-host or hierarchical run).
# Needs root (network namespace, taps), like make check.  Exit status 0 when a report was
# written, whatever it says.
set -euo pipefail
. "$(dirname "$0")/../rig/common.sh"
cd "$RIG_TOP"

usage() { sed -n '3,28s/^# \{0,1\}//p' "$0"; }

nodes_list= out=bench/out smoke=0 plan=0
while getopts "n:o:sph" opt; do
	case $opt in
	n) nodes_list=$OPTARG ;;
	o) out=$OPTARG ;;
	s) smoke=1 ;;
	p) plan=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
[ -n "$nodes_list" ] || nodes_list=$([ $smoke = 1 ] && echo 2 || echo "2 4")
for n in $nodes_list; do
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 8 ] ||
		rig_die "bench: cluster sizes are 2 to 8 nodes, not '$n'"
done
mem=${BENCH_MEM_MB:-1536}
nice_level=${BENCH_NICE:-0}
only=${BENCH_ONLY:-}
case $only in
"" | tcp | local | hier | sim | cluster) ;;
*) rig_die "bench: BENCH_ONLY is tcp, local, hier, sim or cluster, not '$only'" ;;
esac
# The same-host run: one VM, 2 vCPUs, 4 ranks (issue 15); the hierarchical run: 2 VMs,
# 2 vCPUs, 2 ranks and 2 NICs each, over Soft-RoCE.  BENCH_ONLY=local or hier: that run alone.
local_cpus=2
hier_nodes=2 hier_cpus=2 hier_rpn=2
run_local=1 run_hier=1
case $only in
tcp | sim | cluster) run_local=0 run_hier=0 ;;
local) nodes_list= run_hier=0 ;;
hier) nodes_list= run_local=0 ;;
esac

# The VMs' deadline: 30 minutes a node (25 for the smoke run).
deadline_of() { if [ $smoke = 1 ]; then echo 1500; else echo $((1800 * $1)); fi; }

if [ $plan = 1 ]; then
	avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
	for n in $nodes_list; do
		echo "bench plan: $n VMs x $mem MiB = $((n * mem)) MiB of guest memory" \
			"(host: $avail MiB available), deadline $(deadline_of "$n") s"
		[ $((n * mem)) -le "$avail" ] ||
			echo "bench plan: $n VMs do not fit now: set BENCH_MEM_MB lower"
	done
	[ $run_local = 0 ] || echo "bench plan: same host: 1 VM x $local_cpus vCPUs x $mem MiB," \
		"deadline $(deadline_of 1) s"
	[ $run_hier = 0 ] || echo "bench plan: hierarchical: $hier_nodes VMs x $hier_cpus vCPUs" \
		"x $hier_rpn ranks x 2 NICs, $hier_nodes x $mem MiB = $((hier_nodes * mem)) MiB of" \
		"guest memory, deadline $(deadline_of $hier_nodes) s"
	exit 0
fi

log() { echo "bench: $(date +%T) $*"; }

# Build what the VMs run: the module, libkcoll, kcoll-perf, the MPI timing program.
command -v mpicc >/dev/null || rig_die "bench: mpicc missing: rig/deps.sh bench"
command -v iperf3 >/dev/null || rig_die "bench: iperf3 missing: rig/deps.sh bench"
log "building"
make -s all >/dev/null
make -s -C tools/kcoll-perf
mkdir -p build/bench
mpicc -std=gnu11 -O2 -Wall -Wextra -Werror -o build/bench/mpi_timing bench/mpi_timing.c

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

qemu_ver=$(qemu-system-x86_64 --version | head -n 1)
cat >"$out/host.json" <<EOF
{"cpus": $(nproc), "host_kernel": "$(uname -r)", "qemu": "$qemu_ver", "accel": "tcg",
 "commit": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)",
 "date": "$(date -u +%FT%TZ)", "loadavg": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "vm_mem_mb": $mem, "smoke": $smoke, "cluster_sizes": [$(echo $nodes_list | tr ' ' ',')],
 "bench_only": "$only", "same_host": $run_local, "hier": $run_hier}
EOF

# 3. The reduction kernels on the host (no VM): GB/s next to memcpy.
if [ "$only" != local ] && [ "$only" != hier ]; then
	log "reduction kernels (bench/reduce_bench)"
	make -s -C bench reduce_bench
	if [ $smoke = 1 ]; then
		bench/reduce_bench --json --size 1048576 --runs 3 >"$out/reduce_bench.json"
	else
		bench/reduce_bench --json >"$out/reduce_bench.json"
	fi
fi

rig/prepare.sh stock kmod/kcoll.ko

# run_vms WHAT DIR NODES CPUS JOB [NICS]: NODES VMs of CPUS vCPUs and NICS NICs (1 or 2;
# rig/cluster.sh, run directory OUT/DIR) run JOB; then every VM's kernel log is checked.
status=0
run_vms() {
	local what=$1 dir=$2 n=$3 cpus=$4 job=$5 nics=${6:-1} i
	log "$what: $n VM(s), $cpus vCPU(s) each (deadline $(deadline_of "$n")s; logs in" \
		"$out/$dir/node*/)"
	# n VMs boot at once on the host's cores: a boot takes about n/cores times as long
	# (8 VMs on 2 cores passed rig/cluster.sh's 120 s and were restarted, again at once).
	local boot=$((n * 120 / $(nproc)))
	[ "$boot" -ge 120 ] || boot=120
	RIG_BOOT_TIMEOUT=${RIG_BOOT_TIMEOUT:-$boot} \
	nice -n "$nice_level" rig/cluster.sh -n "$n" -c "$cpus" --nics "$nics" -m "$mem" \
		-t "$(deadline_of "$n")" \
		-o "$out/$dir" -- "BENCH_SMOKE=$smoke BENCH_BIN=$RIG_TOP/build/bench $job" ||
		{ log "$what: a VM did not run its job to the end"; status=1; }
	for ((i = 0; i < n; i++)); do
		rig/dmesg-check.sh "$out/$dir/node$i/dmesg.txt" "$out/$dir/node$i/console.log" ||
			log "$what: node$i's kernel log shows a problem"
	done
	log "$what done"
}

for n in $nodes_list; do
	run_vms "cluster of $n" "n$n" "$n" 1 "BENCH_ONLY=${BENCH_ONLY:-} sh bench/node.sh"
done

# The same host: 4 ranks in one VM with 2 vCPUs, kcoll's loop transport against Open MPI's
# shared memory (bench/local.sh); its own run directory, beside the clusters'.
[ $run_local = 0 ] || run_vms "same host" local 1 $local_cpus "sh bench/local.sh"

# The hierarchical comparison: 2 VMs with 2 vCPUs, 2 ranks each (bench/hier.sh), and two
# NICs each for the rails' run.
[ $run_hier = 0 ] || run_vms hierarchical hier $hier_nodes $hier_cpus \
	"BENCH_HIER_RPN=$hier_rpn sh bench/hier.sh" 2

python3 bench/report.py "$out"
[ $status = 0 ] || log "some VM did not finish: the report says which parts are missing"
exit 0
