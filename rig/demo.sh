#!/bin/bash
# make demo: boot a 4-node virtual cluster (QEMU, Soft-RoCE) and show kcoll running on it.
# Each node loads kcoll, the admin's view (kcollctl, sysfs) is printed, and the nodes reach
# each other over RDMA.  Logs stay in build/demo/nodeI/.
set -euo pipefail
. "$(dirname "$0")/common.sh"
cd "$RIG_TOP"
nodes=${DEMO_NODES:-4}
rig/prepare.sh stock kmod/kcoll.ko
echo "demo: booting $nodes VMs (TCG emulation: about a minute)..."
status=0
rig/cluster.sh -n "$nodes" -t 900 -o build/demo -- sh rig/guest/demo-node.sh || status=$?
for ((i = 0; i < nodes; i++)); do
	echo
	echo "================================ node$i ================================"
	cat "build/demo/node$i/demo.out" 2>/dev/null || echo "(no output: see build/demo/node$i/console.log)"
done
for ((i = 0; i < nodes; i++)); do
	if ! rig/dmesg-check.sh "build/demo/node$i/dmesg.txt" "build/demo/node$i/console.log"; then
		echo "demo: node$i's kernel log shows a problem" >&2
		status=1
	fi
done
exit $status
