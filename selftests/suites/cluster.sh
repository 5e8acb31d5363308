#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The multi-node suite, run on every node of a 2-, 3- or 4-VM rig: communicators and
# point-to-point over Soft-RoCE (RIG_RDMA=siw: Soft-iWARP), or over kernel TCP with
# RIG_RDMA=none (no RDMA device at all, so every communicator of several hosts takes the
# TCP transport: transport=auto).  TAP per test binary in $RIG_DIR/tap/.
. rig/guest/lib.sh
. selftests/lib/seed.sh
# SMOKE=1 (make check's cluster4): the smoke test first, so it needs no boot of its own.
if [ "${SMOKE:-0}" -eq 1 ]; then
	sh selftests/suites/smoke.sh
	rig_suite_up --after-smoke
else
	rig_suite_up
fi
k=build/selftests/kernel
# Over TCP, only what is transport-neutral: no two ranks a VM (that comm would mix the loop
# and TCP transports), no split, no RDMA evil peer (kcoll_tcp_evil_test instead), no
# protocol version 1.
rdma=1
[ "${RIG_RDMA:-rxe}" = none ] && rdma=0
echo "transport: $(cat /sys/module/kcoll/parameters/transport)" >"$RIG_DIR/transport.txt"
# kcoll_comm_test's cases of two ranks are between nodes 0 and 1, the rest on each node
# alone: the 3- and 4-VM suites would only repeat the 2-VM suite's run.
for t in kcoll_comm_test kcoll_p2p_test kcoll_buf_test kcoll_coll_test kcoll_engine_test; do
	[ $t = kcoll_comm_test ] && [ "$RIG_NNODES" -gt 2 ] && continue
	echo "node$RIG_NODE: $t"
	"$k/$t" >"$tap/$t.tap" 2>&1
	rig_barrier "$t-done" 600
done
# Three ranks, on the 4-VM rig's nodes 0..2 (node 3 waits): the collectives' schedules on a
# number of ranks that is no power of two, without booting a 3-VM rig for it.  KT_RUN=2 keeps
# the comm ids and kt_meet()'s barriers apart from the 4-rank run's.
if [ "$RIG_NNODES" -eq 4 ]; then
	if [ "$RIG_NODE" -le 2 ]; then
		echo "node$RIG_NODE: kcoll_coll_test, 3 ranks"
		RIG_NNODES=3 KT_RUN=2 "$k/kcoll_coll_test" >"$tap/kcoll_coll_test_3ranks.tap" 2>&1
	fi
	rig_barrier coll3-done 600
fi
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"

# The seed example through libkcoll's env bootstrap: every rank prints n(n+1)/2.
seed_tap "$RIG_NODE" "$RIG_NNODES" "$(rig_ip 0)" >"$tap/allreduce_seed.tap"
rig_barrier seed-done 300

# Two ranks a VM (2-VM suite only, a few seconds): libkcoll reports that they share a host.
# The kernel's AUTO all-reduce is core's selection, the one kcoll-sim --choose runs: 4 ranks,
# 2 a node, one fp32 (the derived table).  Then under the threshold rules (an admin's
# small_bytes, on both VMs: every rank must select alike), it is hierarchical (HIER) with
# locality and not with one rank a VM, so libkcoll's locality does reach the kernel.
loc2=0
[ $rdma -eq 1 ] && [ "$RIG_NNODES" -eq 2 ] && loc2=1
if [ $loc2 -eq 1 ]; then
	want=$(tools/kcoll-sim/kcoll-sim --choose -c allreduce -d fp32 -n 4 -N 2 -s 4 |
		awk '{ print $2 }')
	seed_local_tap "$RIG_NODE" "$(rig_ip 0)" "$want" >"$tap/allreduce_seed_2x2.tap"
fi
rig_barrier seed2x2-done 300
[ $loc2 -eq 1 ] && tools/kcollctl/kcollctl config set small_bytes 2097152
rig_barrier seed2x2-rules 60
if [ $loc2 -eq 1 ]; then
	seed_local_tap "$RIG_NODE" "$(rig_ip 0)" hier >"$tap/allreduce_seed_2x2_rules.tap"
	rig_barrier seed2x2-rules-local 300
	seed_flat_tap "$RIG_NODE" 2 "$(rig_ip 0)" >"$tap/allreduce_seed_2x1_rules.tap"
fi
rig_barrier seed2x2-rules-done 300
[ $loc2 -eq 1 ] && tools/kcollctl/kcollctl config set small_bytes 0
rig_barrier seed2x2-rules-off 60

# Grouped all-reduces and point-to-point (kcoll_group_start/end), bootstrapped the same way;
# then a communicator split over the parent (kcoll_comm_split), no new rendezvous.
tests=kcoll_group_test
[ $rdma -eq 1 ] && tests="$tests kcoll_split_test"
for t in $tests; do
	KCOLL_RANK=$RIG_NODE KCOLL_NRANKS=$RIG_NNODES KCOLL_BOOTSTRAP_ADDR=$(rig_ip 0) \
		timeout 180 "$k/$t" >"$tap/$t.tap" 2>&1
	rig_barrier "$t-done" 300
done

# A hostile peer (two nodes are all it needs, so the larger suites do not repeat it).
# RDMA: node 1 speaks kcoll's wire protocol by hand to node 0's communicators
# (kcoll_evil_test.c, about 90 s).  TCP: node 0 speaks kcoll's TCP framing by hand to its own
# communicators from a second address (kcoll_tcp_evil_test.c).  Node 0 must fail or refuse
# each case cleanly, with our errno, and keep serving.
if [ $rdma -eq 1 ] && [ "$RIG_NNODES" -eq 2 ] && [ "$RIG_NODE" -le 1 ]; then
	echo "node$RIG_NODE: kcoll_evil_test"
	"$k/kcoll_evil_test" >"$tap/kcoll_evil_test.tap" 2>&1
elif [ $rdma -eq 0 ] && [ "$RIG_NODE" -eq 0 ]; then
	echo "node$RIG_NODE: kcoll_tcp_evil_test"
	"$k/kcoll_tcp_evil_test" >"$tap/kcoll_tcp_evil_test.tap" 2>&1
fi
rig_barrier evil-done 900

# Node 1 speaks protocol version 1 (before EAGER) for one test with node 0; everyone else
# stays as they are.  Two nodes are all it needs: the larger suites do not repeat it.
if [ $rdma -eq 1 ] && [ "$RIG_NNODES" -eq 2 ]; then
	[ "$RIG_NODE" -eq 1 ] && modprobe -r kcoll && modprobe kcoll proto_version=1
	rig_barrier version-loaded 120
	if [ "$RIG_NODE" -le 1 ]; then
		"$k/kcoll_version_test" >"$tap/kcoll_version_test.tap" 2>&1
	fi
	rig_barrier version-done 300
fi
modprobe -r kcoll
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
