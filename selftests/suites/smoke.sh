#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Cluster smoke test, run on every node of a multi-VM rig: each node brings up Soft-RoCE,
# loads kcoll, sees its device, and reaches every other node over RDMA (rping, verified data).
. rig/guest/lib.sh
. selftests/lib/ktap.sh

tap=$RIG_DIR/tap
mkdir -p "$tap"
exec >"$tap/smoke.tap" 2>&1

sees_device() {
	wait_for 5 test -d /sys/kernel/kcoll/devices/rxe0 ||
		fail "kcoll does not track rxe0: $(ls /sys/kernel/kcoll/devices)"
}

reach_ip() {	# reach_ip NODE: the peer answers on the cluster segment
	wait_for 60 ping -c 1 -W 1 "$(rig_ip "$1")" || fail "node$1 unreachable"
}

rping_peer() {	# rping_peer NODE: RDMA send + read + write, data verified
	rping -c -a "$(rig_ip "$1")" -C 3 -S 4096 -V
}

ktap_begin
ktap_test "Soft-RoCE rxe0 comes up on eth0 (MTU 9000)" sh -c '. rig/guest/lib.sh; rig_net_up && rig_rxe_up'
ktap_test "rxe0 port is ACTIVE with active MTU 4096" sh -c \
	'ibv_devinfo -d rxe0 | grep -q "PORT_ACTIVE" && ibv_devinfo -d rxe0 | grep -q "active_mtu:.*4096"'
ktap_test "modprobe kcoll" modprobe kcoll
ktap_test "kcoll tracks rxe0" sees_device
rping -s -P -a "$(rig_ip "$RIG_NODE")" >/dev/null 2>&1 &
server=$!
# The barrier below promises peers a listening server, not just a started process: rping's
# own listening cm_id (kcoll's listener is there from modprobe on and does not count).
wait_for 30 sh -c 'rdma resource show cm_id | grep LISTEN | grep -q rping' ||
	echo "# rping server on node$RIG_NODE is not listening"
rig_barrier servers-up 180
i=0
while [ $i -lt "$RIG_NNODES" ]; do
	if [ $i -ne "$RIG_NODE" ]; then
		ktap_test "node$i reachable over IP" reach_ip $i
		ktap_test "RDMA (rping, verified) to node$i" rping_peer $i
	fi
	i=$((i + 1))
done
rig_barrier clients-done 300
kill $server 2>/dev/null
wait $server 2>/dev/null
ktap_test "modprobe -r kcoll" modprobe -r kcoll
ktap_end
exit 0
