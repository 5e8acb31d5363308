#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The single-node suite, run inside one rig VM: kcoll.ko against its uAPI, the module life
# cycle and RDMA device tracking.  Each test's TAP goes to $RIG_DIR/tap/<test>.tap.
. rig/guest/lib.sh
. selftests/lib/seed.sh
rig_net_up
modprobe rdma_rxe

tap=$RIG_DIR/tap
mkdir -p "$tap"
run() {		# run NAME CMD...
	name=$1
	shift
	echo "node$RIG_NODE: $name"
	"$@" >"$tap/$name.tap" 2>&1
}

k=build/selftests/kernel
run kcoll_module sh selftests/kernel/kcoll_module.sh
run kcoll_rxe sh selftests/kernel/kcoll_rxe.sh
modprobe kcoll
# First, before any communicator: the node's port is kcoll's from load on.
run kcoll_listen $k/kcoll_listen_test
run kcoll_info $k/kcoll_info_test
run kcoll_open $k/kcoll_open_test
# The control plane: netlink family, kcollctl over it, events, tracepoints.
sh selftests/kernel/kcoll_trace.sh start
run kcoll_nl $k/kcoll_nl_test
run kcoll_trace sh selftests/kernel/kcoll_trace.sh check
run kcoll_bpf sh selftests/kernel/kcoll_bpf.sh
# One-rank communicators (no device): every collective, buffers, point-to-point, and the
# object lifetimes and limits a local process reaches.
run kcoll_single $k/kcoll_single_test
run kcoll_limits $k/kcoll_limits_test
run kcoll_badarg $k/kcoll_badarg_test
run kcoll_coll_1rank $k/kcoll_coll_test
run allreduce_seed_1rank seed_tap 0 1
# Two ranks on the loopback transport: no RDMA device exists here (kcoll_rxe.sh left none).
run kcoll_loop $k/kcoll_loop_test
# Four ranks of this node over kernel TCP (links that stay in this kernel): memory reused at
# once after each call, and barrier-then-destroy cycles.
run kcoll_tcp_local $k/kcoll_tcp_local_test
# Four ranks that share a host (or two): groups in sysfs, the hierarchical choice.
run kcoll_locality $k/kcoll_locality_test
# Four loopback ranks: small all-reduces meet in kernel memory (the same-host path).
run kcoll_local $k/kcoll_local_test
# Fault injection needs the debug kernel, where it has a suite of its own (failnth.sh); here
# it proves that it skips cleanly.
[ "$RIG_FLAVOUR" = debug ] || run kcoll_failnth $k/kcoll_failnth_test
run kcoll_failpoint $k/kcoll_failpoint_test
modprobe -r kcoll
modprobe -r rdma_rxe
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
