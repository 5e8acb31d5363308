#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The fault-injection suite of the debug tier, in one rig VM: every ioctl and netlink command
# with its n-th allocation failed, n = 1, 2, ... (selftests/kernel/kcoll_failnth_test.c),
# then kcoll's own fail points one class at a time (kmod/kcoll_fault.h), then kmemleak.  The
# stock kernel has no fault injection: there node.sh runs the test, which skips.
# FAILNTH_CLASSES, FAILNTH_CLASS_CASES, FAILNTH_ANY_CLASSES and FAILNTH_ANY_CASES choose the
# class runs;
# FAILNTH_CLASSES_ONLY=1 skips the fail-nth run.
. rig/guest/lib.sh
rig_net_up
modprobe rdma_rxe
modprobe kcoll

tap=$RIG_DIR/tap
mkdir -p "$tap"
t=build/selftests/kernel/kcoll_failnth_test
if [ -z "$FAILNTH_CLASSES_ONLY" ]; then
	echo "node$RIG_NODE: kcoll_failnth"
	$t >"$tap/kcoll_failnth.tap" 2>&1
fi
# kcoll's own fail points, class by class: the n-th point rank 0's thread reaches, over the
# calls that reach most (communicator set-up with one and two ranks, point-to-point, a
# buffer, a collective); then the n-th anywhere (rank 1, the rdma_cm's handlers, completion
# work), where QPs and CQs are made, over a two-rank set-up.
cases=${FAILNTH_CLASS_CASES:-"comm_create_1 comm_create_2 p2p_send_2 buf_create_2 allreduce_2"}
for c in ${FAILNTH_CLASSES:-alloc pin reg cm post}; do
	echo "node$RIG_NODE: kcoll_failnth, class $c"
	KT_FAILNTH_CLASS=$c KT_FAILNTH_CASES="$cases" $t >"$tap/kcoll_failnth_$c.tap" 2>&1
done
# Only qp and cq by default: a failure on rank 1's side before it connects leaves rank 0
# waiting for the 60 s create timeout, and set-up has a dozen cm points and 2 x 64 posts.
for c in ${FAILNTH_ANY_CLASSES:-qp cq}; do
	echo "node$RIG_NODE: kcoll_failnth, class $c, any context"
	KT_FAILNTH_CLASS=$c KT_FAILNTH_ANYWHERE=1 KT_FAILNTH_CASES="${FAILNTH_ANY_CASES:-comm_create_2}" \
		$t >"$tap/kcoll_failnth_${c}_any.tap" 2>&1
done
modprobe -r kcoll
modprobe -r rdma_rxe
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
