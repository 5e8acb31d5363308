#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# make bench's cluster sizes: 2 to 8 VMs (BENCH_NODES, e.g. "2 4 8" for kcoll-sim's 8-VM
# validation), checked through bench/run.sh -p (the plan, nothing booted).  TAP.
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
n=0 fail=0
t() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
echo "TAP version 13"
echo "1..5"
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
exit $fail
