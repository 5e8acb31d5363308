#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench-smoke: the benchmark's sanity test, not a timing.  A `make bench` run at tiny
# sizes on 2 VMs (bench/run.sh -s), then selftests/bench/check_report.py: the report is well
# formed and #wrong is 0 for every system.  Not in `make check` until kcoll's collectives
# exist; KCOLL_BENCH_ALLOW_MISSING=1 accepts a report that says kcoll is not available.
#
# Usage: selftests/bench/smoke.sh [OUT]   (default build/bench-smoke; TAP on stdout)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/build/bench-smoke}
cd "$top"
mkdir -p "$top/build"
if ! bench/run.sh -s -n 2 -o "$out" >"$top/build/bench-smoke.log" 2>&1; then
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 bench/run.sh -s wrote a report"
	sed 's/^/# /' "$top/build/bench-smoke.log" | tail -n 40
	exit 1
fi
python3 selftests/bench/check_report.py "$out"
