#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One kernel test, many times, on every node in step: REPEAT_TEST=BINARY:FIXTURE.TEST,
# REPEAT_N runs (default 20).  For a failure too rare for one full run to show
# (Documentation/testing.rst, "Repeating one test").  TAP per run in $RIG_DIR/tap/.
. rig/guest/lib.sh
rig_suite_up
k=build/selftests/kernel
# Not "name": rig/guest/lib.sh's functions set that one.
rep_bin=${REPEAT_TEST%%:*}
rep_test=${REPEAT_TEST#*:}
rep_n=${REPEAT_N:-20}
rep_i=0
while [ "$rep_i" -lt "$rep_n" ]; do
	echo "node$RIG_NODE: $rep_bin $rep_test, run $rep_i of $rep_n"
	KT_ONLY=$rep_test "$k/$rep_bin" >"$tap/$rep_bin-$rep_i.tap" 2>&1
	rig_barrier "repeat-$rep_i" 900
	rep_i=$((rep_i + 1))
done
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"
