#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The fault-injection suite of the debug tier, in one rig VM: every ioctl and netlink command
# with its n-th allocation failed, n = 1, 2, ... (selftests/kernel/kcoll_failnth_test.c),
# then kmemleak.  The stock kernel has no fault injection: there node.sh runs the test, which
# skips.
. rig/guest/lib.sh
rig_net_up
modprobe rdma_rxe
modprobe kcoll

tap=$RIG_DIR/tap
mkdir -p "$tap"
echo "node$RIG_NODE: kcoll_failnth"
build/selftests/kernel/kcoll_failnth_test >"$tap/kcoll_failnth.tap" 2>&1
modprobe -r kcoll
modprobe -r rdma_rxe
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
