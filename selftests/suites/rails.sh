#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Rails (suite rails2, by name only): 2 VMs with two NICs each (rig/cluster.sh --nics 2;
# rxe0 on eth0, rxe1 on eth1, separate segments), two ranks a VM.  With KCOLL_IFNAME=eth0,eth1
# local rank i of every node must use rail i (kcoll_rail_test: the comm end's device, and a
# right all-reduce), and the seed example must print 10; with KCOLL_IFNAME=eth0 both local
# ranks use rxe0.  TAP per case in $RIG_DIR/tap/.
. rig/guest/lib.sh
. selftests/lib/seed.sh
rig_suite_up
k=build/selftests/kernel
root=$(rig_ip 0)

# rail_case NAME IFNAME DEV0 DEV1: ranks 2*node (local rank 0, must use DEV0) and 2*node+1
# (local rank 1, DEV1) of 4, both on this node, at once.
rail_case() {
	for l in 0 1; do
		dev=$3
		[ $l -eq 1 ] && dev=$4
		KCOLL_RANK=$((2 * RIG_NODE + l)) KCOLL_NRANKS=4 KCOLL_LOCAL_RANK=$l \
			KCOLL_BOOTSTRAP_ADDR=$root KCOLL_IFNAME=$2 KCOLL_TEST_DEV=$dev \
			timeout 180 "$k/kcoll_rail_test" >"$tap/$1_local$l.tap" 2>&1 &
	done
	wait
}

echo "node$RIG_NODE: rails"
rail_case rails eth0,eth1 rxe0 rxe1
rig_barrier rails-done 300
rail_case one_ifname eth0 rxe0 rxe0
rig_barrier one-ifname-done 300

# The seed example over both rails: every rank prints n(n+1)/2 = 10.
for l in 0 1; do
	(
		export KCOLL_IFNAME=eth0,eth1 KCOLL_LOCAL_RANK=$l
		seed_tap $((2 * RIG_NODE + l)) 4 "$root" >"$tap/allreduce_seed_rails_local$l.tap"
	) &
done
wait
rig_barrier seed-done 300
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"
modprobe -r kcoll
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
