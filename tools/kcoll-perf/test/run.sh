#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# kcoll-perf's whole run on the host against a one-rank mock of libkcoll (test/mock.c): every
# collective, datatype, op, placement, memory kind and mode; the table, JSON lines and CSV
# are well formed; #wrong is 0, and counts the corruption KCOLL_MOCK_CORRUPT=1 injects.  TAP.
# Usage: tools/kcoll-perf/test/run.sh MOCK_BINARY
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0
t() {	# t DESCRIPTION CMD...
	local what=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/out" 2>&1; then
		echo "ok $n $what"
	else
		echo "not ok $n $what"
		sed 's/^/# /' "$tmp/out" | tail -n 20
		fail=1
	fi
}
all=(-C all -d all -o all -p both -m both -B both -a 3 -b 1 -e 4K -f 8 -w 1 -n 2 -q)
echo "TAP version 13"
t "every collective, dtype, op, placement, memory, mode: exit 0" \
	"$bin" "${all[@]}" -J "$tmp/all.json" -S "$tmp/all.csv"
t "the table ends with 0 wrong elements" \
	sh -c "'$bin' ${all[*]} | grep -q '^# Out of bounds values : 0 OK'"
t "JSON lines parse, #wrong 0, every collective, dtype and op present" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows and all(r["wrong"] == 0 for r in rows), "wrong"
assert len({r["coll"] for r in rows}) == 12, {r["coll"] for r in rows}
assert len({r["dtype"] for r in rows}) == 10
assert {r["op"] for r in rows} == {"sum", "prod", "min", "max", "avg", "none"}
assert {(r["place"], r["mem"], r["mode"]) for r in rows if r["coll"] == "allreduce"} == \
	{(p, m, b) for p in ("in", "out") for m in ("user", "kbuf") for b in ("blocking", "nonblocking")}
assert not any(r["dtype"].startswith(("int", "uint")) and r["op"] == "avg" for r in rows)
assert all(r["checked"] == (r["coll"] != "barrier") for r in rows)
plain = ("broadcast", "scatter", "gather", "allgather", "alltoall", "barrier", "allgatherv", "alltoallv")
assert all(r["op"] == "none" for r in rows if r["coll"] in plain), "a collective that reduces nothing ran with an op"
' "$tmp/all.json"
t "JSON rows say the algorithm the library reported: blocking only, -A given or chosen" sh -c \
	"'$bin' -C allreduce -B both -b 64 -e 64 -n 1 -w 0 -J - -q >'$tmp/a1' &&
	 '$bin' -C allreduce -A hier -b 64 -e 64 -n 1 -w 0 -J - -q >'$tmp/a2' &&
	 python3 -c 'import json,sys
u = {(r[\"mode\"], r[\"algo\"], r[\"algo_used\"]) for f in sys.argv[1:] for r in map(json.loads, open(f))}
assert u == {(\"blocking\", \"auto\", \"ring\"), (\"nonblocking\", \"auto\", \"unknown\"),
             (\"blocking\", \"hier\", \"hier\")}, u' '$tmp/a1' '$tmp/a2'"
t "CSV has a header and one line per JSON line" sh -c \
	"head -n 1 '$tmp/all.csv' | grep -q '^system,coll,nranks,' &&
	 [ \$((\$(wc -l <'$tmp/all.csv') - 1)) -eq \$(wc -l <'$tmp/all.json') ]"
t "a corrupted result counts in #wrong and fails the run" sh -c \
	"! KCOLL_MOCK_CORRUPT=1 '$bin' -C allreduce,allgather -b 64 -e 64 -n 1 -w 0 -J - -q >'$tmp/bad' &&
	 python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; assert r and all(x[\"wrong\"] == 1 for x in r), r' '$tmp/bad'"
# The table and the progress lines share one file (as in `make demo`): each table's header
# comes right before its own rows, and every table has rows, whatever the buffering.
t "stdout and stderr in one file: each table header right before its rows" sh -c \
	"'$bin' -C allreduce,allgather,broadcast -b 8 -e 1K -f 4 -w 1 -n 1 -P >'$tmp/both' 2>&1 &&
	 awk '/^# [a-z_]+  datatype/ { if (hdr && !rows) bad = 1; hdr = 1; rows = 0; next }
	      /^ +[0-9]/ { if (!hdr) bad = 1; rows++ }
	      END { exit bad || !hdr || !rows }' '$tmp/both'"
t "--help exits 0 and documents -C" sh -c "'$bin' --help | grep -q -- '-C, --coll'"
# --hold: the run ends once the file exists; without it, at the timeout, said on stderr.
t "--hold FILE: waits until FILE exists, then exit 0" sh -c \
	"('$bin' -C allreduce -b 4 -e 4 -n 1 -q --hold '$tmp/go' >/dev/null 2>&1; echo \$? >'$tmp/rc') &
	 sleep 0.5; [ ! -e '$tmp/rc' ] && touch '$tmp/go' &&
	 for i in \$(seq 100); do [ -s '$tmp/rc' ] && break; sleep 0.1; done;
	 [ \"\$(cat '$tmp/rc')\" = 0 ]"
t "--hold FILE never created: exit 0 at the timeout, which stderr names" sh -c \
	"'$bin' -C allreduce -b 4 -e 4 -n 1 -q -t 300 --hold '$tmp/never' 2>&1 >/dev/null |
	 grep -q 'never did not appear within 300 ms'"
t "a usage error exits 2" sh -c "'$bin' -n 0; [ \$? -eq 2 ]"
echo "1..$n"
exit $fail
