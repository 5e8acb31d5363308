#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Two nodes: device removal under load (kcoll_devremove_test).  By name only
# (rig/check.sh --suite devremove2): on a loaded host rdma_rxe 6.1 can keep references to a
# queue pair kcoll destroys after its peer's device went away, and WARNs after 50 s in
# __rxe_cleanup() (Documentation/testing.rst).
. rig/guest/lib.sh
rig_suite_up
# Steady traffic on eth0 while devices go (see Documentation/testing.rst, devremove2).
ping -q -i 0.2 "$(rig_ip $(( 1 - RIG_NODE )))" >/dev/null 2>&1 &
pinger=$!
build/selftests/kernel/kcoll_devremove_test >"$tap/kcoll_devremove_test.tap" 2>&1
kill $pinger
rig_barrier devremove-done 1500
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"
modprobe -r kcoll
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
