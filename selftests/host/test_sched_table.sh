#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# AUTO's selection table, core/kcoll_sched_table.h, is what kcoll-sim's model derives today
# (regenerated and compared), and its picks, through core's kcoll_sched_select(), are within
# 1.05 times the fastest algorithm on the model's grid and 1.25 times between its sizes and
# rank counts (kcoll-sim --check-table).  The same check of the threshold rules (what an admin
# who sets small_bytes gets) must fail: the check can tell a bad choice.  TAP.
#
# By default (make check) the grid up to 64 ranks only, a few seconds: the header's rows that
# hold from 64 ranks down are exactly what kcoll-sim --max-ranks 64 prints (a row's "from"
# lies above the class's previous grid point, and the points after 64, 96 and 128, start at
# 68 and 91).  --full (make check-sched-table): every row, the whole grid.
# Documentation/scale.rst, "Where the module's thresholds come from".
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
sim="$top/tools/kcoll-sim/kcoll-sim"
max=64
[ "$1" = --full ] && max=
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
echo "1..5"
"$sim" --derive-thresholds datacentre ${max:+--max-ranks $max} -q >"$tmp/table.h" \
	2>"$tmp/derive.err"
rc=$?
# the header without the rows of more than $max ranks: "\t{ KCOLL_X, local, pow2, from, {"
# to "\t} },"
awk -v max="${max:-0}" '
	/^\t\{ KCOLL_/ {
		v = $0; sub(/,[^,]*$/, "", v); sub(/.*, /, "", v); keep = !max || v + 0 <= max
	}
	/^\t/ { if (keep) print; next }
	{ print }' "$top/core/kcoll_sched_table.h" >"$tmp/want.h"
if [ $rc = 0 ] && cmp -s "$tmp/table.h" "$tmp/want.h"; then
	rows=${max:+ (rows up to $max ranks)}
	ok 0 "core/kcoll_sched_table.h is what kcoll-sim --derive-thresholds datacentre prints$rows"
else
	diff -u "$tmp/want.h" "$tmp/table.h" | head -40 | sed 's/^/# /'
	sed 's/^/# /' "$tmp/derive.err"
	ok 1 "core/kcoll_sched_table.h is what kcoll-sim prints (make sched-table regenerates it)"
fi

"$sim" --derive-thresholds datacentre --check-table ${max:+--max-ranks $max} >"$tmp/check" 2>&1
rc=$?
sed 's/^/# /' "$tmp/check"
ok $rc "the table's picks${max:+ up to $max ranks}: $(tail -n 1 "$tmp/check")"

"$sim" --derive-thresholds datacentre --check-table ${max:+--max-ranks $max} --small-bytes 2M \
	>"$tmp/rules" 2>&1
rc=$?
sed 's/^/# /' "$tmp/rules"
[ $rc = 3 ]
ok $? "the rules (small_bytes 2M) fail the same check: $(tail -n 1 "$tmp/rules")"

# The check runs on another fabric (the table is derived on one switch, so it may miss
# there: exit 0 or 3, never a refusal or a model failure); deriving stays one switch only.
"$sim" --derive-thresholds datacentre --check-table --max-ranks 16 -F leaf-spine \
	--hosts-per-leaf 4 --oversub 4 >"$tmp/fabric" 2>&1
rc=$?
sed 's/^/# /' "$tmp/fabric"
[ $rc = 0 ] || [ $rc = 3 ] && grep -q '^worst: ' "$tmp/fabric"
ok $? "the check on a 4:1 leaf-spine up to 16 ranks runs (exit $rc)"
"$sim" --derive-thresholds datacentre -F leaf-spine -q >/dev/null 2>&1
[ $? = 2 ]
ok $? "deriving on a leaf-spine is refused (exit 2)"
exit $fail
