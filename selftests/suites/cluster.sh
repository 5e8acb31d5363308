#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The multi-node suite, run on every node of a 2- or 4-VM rig: communicators and
# point-to-point over Soft-RoCE.  TAP per test binary in $RIG_DIR/tap/.
. rig/guest/lib.sh
. selftests/lib/seed.sh
rig_suite_up
k=build/selftests/kernel
for t in kcoll_comm_test kcoll_p2p_test kcoll_buf_test kcoll_coll_test kcoll_engine_test; do
	echo "node$RIG_NODE: $t"
	"$k/$t" >"$tap/$t.tap" 2>&1
	rig_barrier "$t-done" 600
done
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"

# The seed example through libkcoll's env bootstrap: every rank prints n(n+1)/2.
seed_tap "$RIG_NODE" "$RIG_NNODES" "$(rig_ip 0)" >"$tap/allreduce_seed.tap"
rig_barrier seed-done 300

# Two ranks a VM (2-VM suite only, a few seconds): libkcoll reports that they share a host,
# so the kernel's AUTO all-reduce is hierarchical (kcoll_op_start's algo 9, HIER).
if [ "$RIG_NNODES" -eq 2 ]; then
	seed_local_tap "$RIG_NODE" "$(rig_ip 0)" >"$tap/allreduce_seed_2x2.tap"
fi
rig_barrier seed2x2-done 300

# Grouped all-reduces and point-to-point (kcoll_group_start/end), bootstrapped the same way.
KCOLL_RANK=$RIG_NODE KCOLL_NRANKS=$RIG_NNODES KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0) \
	timeout 180 "$k/kcoll_group_test" >"$tap/kcoll_group_test.tap" 2>&1
rig_barrier group-done 300

# Communicator split over the parent (kcoll_comm_split), no new rendezvous.
KCOLL_RANK=$RIG_NODE KCOLL_NRANKS=$RIG_NNODES KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0) \
	timeout 180 "$k/kcoll_split_test" >"$tap/kcoll_split_test.tap" 2>&1
rig_barrier split-done 300

# Node 1 turns hostile: it speaks kcoll's wire protocol by hand to node 0's communicators
# (kcoll_evil_test.c); node 0 must fail each case cleanly and keep serving.  Two nodes are
# all it needs: the 2-VM suites run it (about 90 s), the larger ones do not repeat it.
if [ "$RIG_NNODES" -eq 2 ] && [ "$RIG_NODE" -le 1 ]; then
	echo "node$RIG_NODE: kcoll_evil_test"
	"$k/kcoll_evil_test" >"$tap/kcoll_evil_test.tap" 2>&1
fi
rig_barrier evil-done 900

# Node 1 speaks protocol version 2 for one test; everyone else stays as they are.
if [ "$RIG_NODE" -eq 1 ]; then
	modprobe -r kcoll && modprobe kcoll proto_version=1
fi
rig_barrier version-loaded 120
if [ "$RIG_NODE" -le 1 ]; then
	"$k/kcoll_version_test" >"$tap/kcoll_version_test.tap" 2>&1
fi
rig_barrier version-done 300
modprobe -r kcoll
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
