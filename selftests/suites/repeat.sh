#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One kernel test, many times, on every node in step: REPEAT_TEST=BINARY:FIXTURE.TEST,
# REPEAT_N runs (default 20).  For a failure too rare for one full run to show
# (Documentation/testing.rst, "Repeating one test").  TAP per run in $RIG_DIR/tap/.
. rig/guest/lib.sh
rig_suite_up
k=build/selftests/kernel
bin=${REPEAT_TEST%%:*}
name=${REPEAT_TEST#*:}
n=${REPEAT_N:-20}
i=0
while [ "$i" -lt "$n" ]; do
	echo "node$RIG_NODE: $bin $name, run $i of $n"
	KT_ONLY=$name "$k/$bin" >"$tap/$bin-$i.tap" 2>&1
	rig_barrier "repeat-$i" 900
	i=$((i + 1))
done
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"
