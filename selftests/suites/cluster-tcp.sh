#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The multi-node suite over kernel TCP: no RDMA device at all (rdma_rxe not loaded), so
# every communicator of several hosts takes the TCP transport (transport=auto); the same
# tests as cluster.sh where they are transport-neutral.  TAP per test binary in $RIG_DIR/tap/.
. rig/guest/lib.sh
. selftests/lib/seed.sh
export RIG_RDMA=none
rig_suite_up
k=build/selftests/kernel
echo "transport: $(cat /sys/module/kcoll/parameters/transport)" >"$RIG_DIR/transport.txt"
for t in kcoll_comm_test kcoll_p2p_test kcoll_buf_test kcoll_coll_test kcoll_engine_test; do
	echo "node$RIG_NODE: $t"
	"$k/$t" >"$tap/$t.tap" 2>&1
	rig_barrier "$t-done" 600
done
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"

# The seed example through libkcoll's env bootstrap: every rank prints n(n+1)/2.
seed_tap "$RIG_NODE" "$RIG_NNODES" "$(rig_ip 0)" >"$tap/allreduce_seed.tap"
rig_barrier seed-done 300

# Grouped all-reduces and point-to-point (kcoll_group_start/end), bootstrapped the same way.
KCOLL_RANK=$RIG_NODE KCOLL_NRANKS=$RIG_NNODES KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0) \
	timeout 180 "$k/kcoll_group_test" >"$tap/kcoll_group_test.tap" 2>&1
rig_barrier group-done 300

# A hostile rank speaks kcoll's TCP framing by hand from a second address of node 0
# (kcoll_tcp_evil_test.c): node 0 must refuse or fail each case cleanly with our errno.
if [ "$RIG_NODE" -eq 0 ]; then
	echo "node$RIG_NODE: kcoll_tcp_evil_test"
	"$k/kcoll_tcp_evil_test" >"$tap/kcoll_tcp_evil_test.tap" 2>&1
fi
rig_barrier evil-done 900
modprobe -r kcoll
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
