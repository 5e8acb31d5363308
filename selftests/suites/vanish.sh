#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Two nodes; node 1 powers its VM off in the middle of an all-reduce (no BYE, no
# disconnect) and node 0 checks that its pending operations fail within the bound.  Node 1
# leaves a "vanished" marker, which rig/check.sh counts instead of a finished job.
. rig/guest/lib.sh
rig_suite_up
if [ "$RIG_NODE" -eq 1 ]; then
	# Never returns: the VM is gone.  Its output is kept for debugging only.
	RIG_DIR=$RIG_DIR build/selftests/kernel/kcoll_vanish_test >"$RIG_DIR/vanish.log" 2>&1
	exit 1
fi
build/selftests/kernel/kcoll_vanish_test >"$tap/kcoll_vanish_test.tap" 2>&1
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"
modprobe -r kcoll
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
