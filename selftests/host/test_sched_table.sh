#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# AUTO's selection table, core/kcoll_sched_table.h, is what kcoll-sim's model derives today
# (regenerated and compared), and its picks, through core's kcoll_sched_select(), are within
# 1.05 times the fastest algorithm on the model's grid and 1.25 times between its sizes and
# rank counts (kcoll-sim --check-table).  The same check of the threshold rules (what an admin
# who sets small_bytes gets) must fail: the check can tell a bad choice.  TAP.
# Documentation/scale.rst, "Where the module's thresholds come from".
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
sim="$top/tools/kcoll-sim/kcoll-sim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fail=1
	fi
}

echo "TAP version 13"
echo "1..3"
"$sim" --derive-thresholds datacentre -q >"$tmp/table.h" 2>"$tmp/derive.err"
rc=$?
if [ $rc = 0 ] && cmp -s "$tmp/table.h" "$top/core/kcoll_sched_table.h"; then
	ok 0 "core/kcoll_sched_table.h is what kcoll-sim --derive-thresholds datacentre prints"
else
	diff -u "$top/core/kcoll_sched_table.h" "$tmp/table.h" | head -40 | sed 's/^/# /'
	sed 's/^/# /' "$tmp/derive.err"
	ok 1 "core/kcoll_sched_table.h is what kcoll-sim prints (make sched-table regenerates it)"
fi

"$sim" --derive-thresholds datacentre --check-table >"$tmp/check" 2>&1
rc=$?
sed 's/^/# /' "$tmp/check"
ok $rc "the table's picks: $(tail -n 1 "$tmp/check")"

"$sim" --derive-thresholds datacentre --check-table --small-bytes 2M >"$tmp/rules" 2>&1
rc=$?
sed 's/^/# /' "$tmp/rules"
[ $rc = 3 ]
ok $? "the rules (small_bytes 2M) fail the same check: $(tail -n 1 "$tmp/rules")"
exit $fail
