#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# make bench's cluster sizes: 2 to 8 VMs (BENCH_NODES, e.g. "2 4 8" for kcoll-sim's 8-VM
# validation), and the runs BENCH_ONLY picks (the hierarchical run: 2 VMs x 2 vCPUs x 2
# ranks), checked through bench/run.sh -p (the plan, nothing booted).  TAP.
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
n=0 fail=0
t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
echo "TAP version 13"
echo "1..11"
out=$(cd "$top" && BENCH_MEM_MB=1024 bench/run.sh -p -n "2 4 8" 2>&1)
t $? "bench/run.sh -p -n '2 4 8' accepts 8 VMs"
echo "$out" | grep -q "^bench plan: 8 VMs x 1024 MiB = 8192 MiB .* deadline 14400 s$"
t $? "the 8-VM plan: 8 GiB of guest memory, 4 h deadline"
(cd "$top" && bench/run.sh -p -n "4 9" >/dev/null 2>&1)
[ $? -ne 0 ]
t $? "9 VMs are refused"
def=$(cd "$top" && make -s --no-print-directory -f Makefile \
	--eval 'bench-nodes: ; @echo $(BENCH_NODES)' bench-nodes 2>/dev/null)
[ "$def" = "2 4" ]
t $? "make bench's default sizes are 2 and 4 VMs (got '$def')"
grep -q 'bench/run.sh -n "$(BENCH_NODES)"' "$top/Makefile"
t $? "make bench passes BENCH_NODES to bench/run.sh"
hier='^bench plan: hierarchical: 2 VMs x 2 vCPUs x 2 ranks x 2 NICs, 2 x 1024 MiB = 2048 MiB .* deadline 3600 s$'
out=$(cd "$top" && BENCH_MEM_MB=1024 BENCH_ONLY=hier bench/run.sh -p 2>&1)
[ "$(echo "$out" | grep -c .)" = 1 ] && echo "$out" | grep -q "$hier"
t $? "BENCH_ONLY=hier plans the hierarchical run alone (got '$out')"
out=$(cd "$top" && BENCH_MEM_MB=1024 bench/run.sh -p 2>&1)
echo "$out" | grep -q "$hier" && echo "$out" | grep -q "^bench plan: same host" &&
	echo "$out" | grep -q "^bench plan: 4 VMs"
t $? "the whole bench plans the clusters, the same host and the hierarchical run"
out=$(cd "$top" && BENCH_ONLY=tcp bench/run.sh -p 2>&1)
! echo "$out" | grep -q "hierarchical\|same host"
t $? "BENCH_ONLY=tcp leaves the same-host and hierarchical runs out"
out=$(cd "$top" && BENCH_ONLY=sim bench/run.sh -p -n 8 2>&1)
[ "$(echo "$out" | grep -c .)" = 1 ] && echo "$out" | grep -q "^bench plan: 8 VMs"
t $? "BENCH_ONLY=sim plans the clusters alone (got '$out')"
out=$(cd "$top" && BENCH_ONLY=cluster bench/run.sh -p -n 2 2>&1)
[ "$(echo "$out" | grep -c .)" = 1 ] && echo "$out" | grep -q "^bench plan: 2 VMs"
t $? "BENCH_ONLY=cluster plans the clusters alone (got '$out')"
out=$(cd "$top" && BENCH_ONLY=flat bench/run.sh -p 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "BENCH_ONLY is tcp, local, hier, sim or cluster, not 'flat'"
t $? "an unknown BENCH_ONLY is refused with the values it takes"
exit $fail
