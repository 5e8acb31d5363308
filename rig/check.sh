#!/bin/bash
# The test run behind `make check` (and `make check-debug` with --debug): host unit tests,
# then the VM suites, then every VM's kernel log.  Ends with one line "N passed, N failed".
#
# Usage: rig/check.sh [--debug] [--no-host] [--suite NAME]... [--out DIR]
#   --suite NAME	run only the named VM suites (node, cluster2, cluster4, vanish2, fuzz1;
#			smoke, cluster3, fuzz2, devremove2, torch2, torch4, cluster2-tcp,
#			cluster3-tcp, vanish2-tcp, slurm2, rails2 and repeat2 only by name; debug:
#			node, smoke, cluster2, cluster2-siw, failnth, fuzz1; cluster2-tcp and
#			repeat2 by name)
#   --out DIR	results there instead of build/check[-debug] (make fuzz: build/fuzz)
# The stock run boots the node suite's VM with the host unit tests and then fuzz1 beside it
# (one host core each), the other suites one after the other.
# The fuzzer suites take FUZZ_SECONDS (default 120 s, debug 1200 s), FUZZ_SEED (default: the
# time), FUZZ_THREADS and FUZZ_AVOID from the environment; repeat2 REPEAT_TEST and REPEAT_N.
# Results: build/check[-debug]/<suite>/nodeI/{console.log,job.log,dmesg.txt,tap/*.tap}
set -uo pipefail
. "$(dirname "$0")/common.sh"
cd "$RIG_TOP"

flavour=stock host=1 only="" out=""
while [ $# -gt 0 ]; do
	case $1 in
	--debug) flavour=debug ;;
	--no-host) host=0 ;;
	--suite) only="$only ${2:?--suite needs a name}"; host=0; shift ;;
	--out) out=$(realpath -m "${2:?--out needs a directory}"); shift ;;
	*) echo "usage: $0 [--debug] [--no-host] [--suite NAME]... [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done

if [ -z "$out" ]; then
	out=$RIG_TOP/build/check
	[ "$flavour" = debug ] && out=$RIG_TOP/build/check-debug
fi
rm -rf "$out"
mkdir -p "$out"
passed=0 failed=0 skipped=0

result() {	# result OK|FAIL|SKIP NAME
	case $1 in
	OK) passed=$((passed + 1)) ;;
	SKIP) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)); echo "FAIL: $2" ;;
	esac
}

# Count one TAP stream; a stream without a complete plan (the VM died mid-test) is a failure.
tally_tap() {	# tally_tap FILE LABEL
	local f=$1 label=$2 line n=0 plan=""
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP"*) result SKIP "$label: ${line#ok }"; n=$((n + 1)) ;;
		"ok "*) result OK "$label: ${line#ok }"; n=$((n + 1)) ;;
		"not ok "*) result FAIL "$label: ${line#not ok }"; n=$((n + 1)) ;;
		1..*) plan=${line#1..}; plan=${plan%% *} ;;
		esac
	done <"$f"
	if [ -z "$plan" ] || [ "$plan" != "$n" ]; then
		result FAIL "$label: incomplete TAP (plan '${plan:-none}', $n results; see $f)"
	fi
}

# A suite whose name is in $by_name_only runs only when asked for with --suite.
by_name_only=" fuzz2 devremove2 torch2 torch4 cluster2-tcp cluster3-tcp vanish2-tcp slurm2 rails2 repeat2 "
# The stock run's cluster4 runs the smoke test and the 3-rank collectives (below).
[ "$flavour" = stock ] && by_name_only="$by_name_only smoke cluster3 "
wanted() {	# wanted NAME: whether this run runs suite NAME
	if [ -n "$only" ]; then
		[[ " $only " == *" $1 "* ]]
	else
		[[ "$by_name_only" != *" $1 "* ]]
	fi
}

# boot_suite NAME NODES TIMEOUT JOB [MEM_MB [NICS]]: boot the cluster and run its job.  It only
# writes files (and prints), so it may run in the background beside another suite.
boot_suite() {
	local name=$1 nodes=$2 timeout=$3 job=$4 mem=${5:-} nics=${6:-1}
	wanted "$name" || return 0
	echo "== suite $name: $nodes VM(s), $flavour kernel"
	rig/cluster.sh -f "$flavour" -n "$nodes" -t "$timeout" ${mem:+-m "$mem"} --nics "$nics" \
		-o "$out/$name" -- "$job"
}

# tally_suite NAME NODES: count a booted suite's TAP and kernel logs, per node.
tally_suite() {
	local name=$1 nodes=$2 d i t
	wanted "$name" || return 0
	for ((i = 0; i < nodes; i++)); do
		d=$out/$name/node$i
		for t in "$d"/tap/*.tap; do
			[ -e "$t" ] || continue
			tally_tap "$t" "$name/node$i/$(basename "$t" .tap)"
		done
		if [ -f "$d/job.rc" ]; then
			result OK "$name/node$i: VM ran its job to the end"
		elif [ -f "$d/vanished" ]; then
			result OK "$name/node$i: VM vanished on purpose (the test powered it off)"
		else
			result FAIL "$name/node$i: VM did not finish (see $d/console.log)"
			# The fuzzer logs each iteration's program before running it.
			[ -f "$d/fuzz.log" ] &&
				echo "    reproducer: $d/fuzz.log (kcoll_fuzz --replay FILE)"
		fi
		if rig/dmesg-check.sh "$d/dmesg.txt" "$d/console.log" >"$d/dmesg-check.txt"; then
			result OK "$name/node$i: kernel log clean"
		else
			result FAIL "$name/node$i: kernel log shows a problem (see $d/dmesg-check.txt)"
			sed 's/^/    /' "$d/dmesg-check.txt"
		fi
	done
}

run_suite() {	# run_suite NAME NODES TIMEOUT JOB [MEM_MB [NICS]]: boot, then tally
	boot_suite "$@"
	tally_suite "$1" "$2"
}

# The fuzzer for FUZZ_SECONDS (default $1) on 1 VM (fuzz1), and on 2 (fuzz2, by name only):
# every node of both gets the same seed.  FUZZ_AVOID steps around known crashes; its default
# is the list in selftests/fuzz/crashes/avoid (kernel bugs found and not fixed yet).
# FUZZ_REPLAY=FILE (FUZZ_REPEAT times) replays a logged program instead.
fuzz_setup() {
	local seed=${FUZZ_SEED:-$(date +%s)} avoid
	fuzz_secs=${FUZZ_SECONDS:-$1} fuzz_boot=300
	[ "$flavour" = debug ] && fuzz_boot=900
	avoid=${FUZZ_AVOID:-$(grep -v '^#' selftests/fuzz/crashes/avoid | paste -sd, -)}
	fuzz_env="FUZZ_SECONDS=$fuzz_secs FUZZ_SEED=$seed FUZZ_AVOID=${avoid:-none}"
	[ -n "${FUZZ_REPLAY:-}" ] &&
		fuzz_env="$fuzz_env FUZZ_REPLAY=$(realpath "$FUZZ_REPLAY") FUZZ_REPEAT=${FUZZ_REPEAT:-1}"
	if wanted fuzz1 || wanted fuzz2; then
		echo "== fuzzer: seed $seed, $fuzz_secs s (FUZZ_SEED=$seed reproduces the run)"
	fi
}

# boot_fuzz NAME NODES THREADS: fuzz2 has one thread a node by default, so both nodes make
# the same calls in the same order: their communicators connect and their collectives
# match (races: fuzz1, 3 threads).
boot_fuzz() {
	boot_suite "$1" "$2" $((fuzz_secs + fuzz_boot)) \
		"$fuzz_env FUZZ_THREADS=${FUZZ_THREADS:-$3} sh selftests/suites/fuzz.sh"
}

# One test REPEAT_N times on 2 VMs (repeat2, by name only): REPEAT_TEST=BINARY:FIXTURE.TEST,
# default the departure race of kcoll_coll_test; $1 scales the time allowed a run.
repeat_suite() {
	local t=${REPEAT_TEST:-kcoll_coll_test:world.leave_right_after_barrier} n=${REPEAT_N:-20}

	run_suite repeat2 2 $((300 + n * 180 * $1)) \
		"REPEAT_TEST=$t REPEAT_N=$n sh selftests/suites/repeat.sh"
}

# The host unit tests: host_run builds and runs them (files only: it may run beside a VM
# suite), host_tally counts them.  Each binary's own TAP is tallied, so every test case counts
# on its own.
host_tests() {
	sed -n 's/^TESTS := //p' selftests/host/Makefile
}

host_run() {
	echo "== host unit tests"
	if make -s -C selftests/host all >"$out/host-build.log" 2>&1; then
		touch "$out/host-built"
		for t in $(host_tests); do
			selftests/host/"$t" >"$out/host-$t.tap" 2>&1
		done
	else
		cat "$out/host-build.log"
	fi
	# kcoll-perf as a whole against a one-rank mock of libkcoll (tools/kcoll-perf/test/).
	if make -s -C tools/kcoll-perf test/kcoll-perf-mock >"$out/host-perf-mock.log" 2>&1; then
		touch "$out/host-perf-mock-built"
		tools/kcoll-perf/test/run.sh "$RIG_TOP/tools/kcoll-perf/test/kcoll-perf-mock" \
			>"$out/host-kcoll-perf-mock.tap" 2>&1
	else
		cat "$out/host-perf-mock.log"
	fi
	# The layer rule of kmod/ (Documentation/design.rst, "Layers"), by its call graph.
	selftests/host/check_layers.sh >"$out/host-check_layers.tap" 2>&1
}

host_tally() {
	local t
	if [ -f "$out/host-built" ]; then
		for t in $(host_tests); do
			tally_tap "$out/host-$t.tap" "host/$t"
		done
	else
		result FAIL "host: unit tests do not build (see $out/host-build.log)"
	fi
	if [ -f "$out/host-perf-mock-built" ]; then
		tally_tap "$out/host-kcoll-perf-mock.tap" "host/kcoll-perf-mock"
	else
		result FAIL "host: the kcoll-perf mock does not build (see $out/host-perf-mock.log)"
	fi
	tally_tap "$out/host-check_layers.tap" "host/check_layers"
}

if [ "$flavour" = stock ]; then
	rig/prepare.sh stock kmod/kcoll.ko selftests/kernel/engine/kcoll_test_engine.ko || exit 1
	fuzz_setup 120
	# The node suite's one VM keeps one host core busy; beside it, on the other, the host unit
	# tests and then the fuzzer's VM (a fixed time, whatever the load).  Their output follows
	# the node suite's.
	{
		[ $host -eq 1 ] && host_run
		boot_fuzz fuzz1 1 3
	} >"$out/beside-node.log" 2>&1 &
	beside=$!
	# A background job ignores SIGINT: an interrupted run stops it (cluster.sh's TERM trap
	# powers its VM off).
	trap 'pkill -TERM -P $beside; kill -TERM $beside' EXIT
	trap 'exit 130' INT TERM
	# The control plane tests (netlink, tracing, BPF) made it longer: about 4 min on a busy host.
	boot_suite node 1 900 "sh selftests/suites/node.sh"
	wait $beside
	trap - EXIT
	cat "$out/beside-node.log"
	tally_suite node 1
	[ $host -eq 1 ] && host_tally
	tally_suite fuzz1 1
	# By name only: smoke and cluster3 run inside cluster4 (the smoke test first, then the
	# collectives on 3 of its 4 nodes), which saves two boots.
	run_suite smoke 3 400 "sh selftests/suites/smoke.sh"
	run_suite cluster2 2 1200 "sh selftests/suites/cluster.sh"
	run_suite cluster3 3 1500 "sh selftests/suites/cluster.sh"
	run_suite cluster4 4 2100 "SMOKE=1 sh selftests/suites/cluster.sh"
	run_suite vanish2 2 600 "sh selftests/suites/vanish.sh"
	# Kernel TCP, no RDMA device at all: by name only for now.
	run_suite cluster2-tcp 2 1200 "RIG_RDMA=none sh selftests/suites/cluster.sh"
	run_suite cluster3-tcp 3 1500 "RIG_RDMA=none sh selftests/suites/cluster.sh"
	run_suite vanish2-tcp 2 600 "RIG_RDMA=none sh selftests/suites/vanish.sh"
	run_suite devremove2 2 1500 "sh selftests/suites/devremove.sh"
	# PyTorch (python3-torch): `import torch` takes 40-120 s per VM, so by name only.
	run_suite torch2 2 2400 "sh selftests/suites/torch.sh" 1536
	run_suite torch4 4 3000 "sh selftests/suites/torch.sh" 1536
	# srun across 2 VMs running munged, slurmctld and slurmd (rig/deps.sh launchers).
	run_suite slurm2 2 2400 "sh selftests/suites/slurm.sh" 1536
	# Two NICs a VM (two rails), two ranks a VM: rail-aligned placement.
	run_suite rails2 2 900 "sh selftests/suites/rails.sh" "" 2
	repeat_suite 2
	boot_fuzz fuzz2 2 1
	tally_suite fuzz2 2
else
	# The module is rebuilt against the debug kernel's headers, in a copy of the tree so the
	# stock build stays as it is.
	kd=$(rig_debug_dir)
	hdr=$RIG_BUILD/debug/headers
	if [ ! -d "$hdr/usr/src" ]; then
		deb=$(ls "$kd"/linux-headers-*.deb 2>/dev/null | head -n 1)
		[ -n "$deb" ] || rig_die "no headers .deb in $kd"
		mkdir -p "$hdr" && dpkg -x "$deb" "$hdr"
	fi
	kdir=$(ls -d "$hdr"/usr/src/linux-headers-* | head -n 1)
	src=$RIG_BUILD/debug/src
	rm -rf "$src" && mkdir -p "$src"
	mkdir -p "$src/selftests/kernel"
	cp -a Kbuild kmod core include "$src/"
	cp -a selftests/kernel/engine "$src/selftests/kernel/"
	make -s -C "$kdir" M="$src" KCOLL_TEST_ENGINE=y modules >"$out/build.log" 2>&1 ||
		{ cat "$out/build.log"; rig_die "module build against $kdir failed"; }
	rig/prepare.sh debug "$src/kmod/kcoll.ko" \
		"$src/selftests/kernel/engine/kcoll_test_engine.ko" || exit 1
	run_suite node 1 3000 "sh selftests/suites/node.sh"
	run_suite smoke 2 1500 "sh selftests/suites/smoke.sh"
	run_suite cluster2 2 4000 "sh selftests/suites/cluster.sh"
	# iWARP: the same suite over Soft-iWARP (no WRITE WITH IMMEDIATE on the wire).
	run_suite cluster2-siw 2 4000 "RIG_RDMA=siw sh selftests/suites/cluster.sh"
	run_suite cluster2-tcp 2 4000 "RIG_RDMA=none sh selftests/suites/cluster.sh"
	# Fault injection: fail-nth over every ioctl and netlink command, then kcoll's fail points
	# class by class (one VM, two ranks).
	run_suite failnth 1 5400 "sh selftests/suites/failnth.sh"
	repeat_suite 4
	fuzz_setup 1200
	boot_fuzz fuzz1 1 3
	tally_suite fuzz1 1
	boot_fuzz fuzz2 2 1
	tally_suite fuzz2 2
fi

echo "== results in $out"
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
