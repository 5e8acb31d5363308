#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PyTorch on kcoll, one rank per VM (suites torch2 and torch4, by name only: `import torch`
# alone takes 40-120 s under TCG).  The seed example examples/allreduce_seed.py with
# backend="kcoll" must print n(n+1)/2 on every rank; then selftests/pytorch/torch_check.py
# checks every torch.distributed call against a reference and a DDP loop against Gloo.
# The package runs from the tree (python/) on the tree's libkcoll.
. rig/guest/lib.sh
rig_node_up

tap=$RIG_DIR/tap
mkdir -p "$tap"
rig_ping_all
rig_barrier net-up 120

export PYTHONPATH="$RIG_TOP/python" LD_LIBRARY_PATH="$RIG_TOP/lib" PYTHONDONTWRITEBYTECODE=1
export MASTER_ADDR="$(rig_ip 0)" RANK="$RIG_NODE" WORLD_SIZE="$RIG_NNODES"
export GLOO_SOCKET_IFNAME=eth0

want=$((RIG_NNODES * (RIG_NNODES + 1) / 2))
start=$(date +%s)
out=$(MASTER_PORT=29500 timeout 900 /usr/bin/python3 examples/allreduce_seed.py 2>&1)
rc=$?
{
	echo "TAP version 13"
	echo "1..1"
	echo "# $(($(date +%s) - start)) s, exit $rc"
	if [ $rc -eq 0 ] && echo "$out" | grep -qx "rank $RIG_NODE: $want"; then
		echo "ok 1 allreduce_seed.py on $RIG_NNODES rank(s) prints $want"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok 1 allreduce_seed.py on $RIG_NNODES rank(s) prints $want"
	fi
} >"$tap/allreduce_seed_py.tap"
rig_barrier seed-done 900

MASTER_PORT=29501 timeout 1500 /usr/bin/python3 selftests/pytorch/torch_check.py \
	>"$tap/torch_check.tap" 2>"$RIG_DIR/torch_check.stderr"
echo "torch_check exit $?" >>"$RIG_DIR/torch_check.stderr"
rig_barrier check-done 1500
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"
modprobe -r kcoll
exit 0
