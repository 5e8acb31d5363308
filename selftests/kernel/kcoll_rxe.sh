#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kcoll follows RDMA devices as they come and go: rdma link add/delete of a Soft-RoCE device,
# a device present before the module loads, renames, and the provider module going away.
# Needs eth0 up and no rxe link yet; leaves kcoll loaded and no rxe link.
. "$(dirname "$0")/../lib/ktap.sh"

SYS=/sys/kernel/kcoll
DEV=$SYS/devices

tracked() { [ -d "$DEV/$1" ]; }
ndevices() { ls "$DEV" | wc -l; }

add_seen() {
	[ "$(ndevices)" -eq 0 ] || fail "devices not empty before add: $(ls $DEV)" || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	wait_for 5 tracked rxe0 || fail "rxe0 did not appear in $DEV" || return 1
	[ "$(cat $DEV/rxe0/node_type)" = RoCE ] || fail "node_type $(cat $DEV/rxe0/node_type)" ||
		return 1
	[ "$(cat $DEV/rxe0/ports)" = 1 ] || fail "ports $(cat $DEV/rxe0/ports)" || return 1
	guid=$(tr -d ':' </sys/class/infiniband/rxe0/node_guid)
	[ "$(cat $DEV/rxe0/node_guid)" = "$guid" ] ||
		fail "node_guid $(cat $DEV/rxe0/node_guid), ib core says $guid"
}

delete_seen() {
	rdma link delete rxe0 || return 1
	wait_for 5 sh -c "! test -e $DEV/rxe0" || fail "rxe0 still in $DEV after delete" ||
		return 1
	[ "$(ndevices)" -eq 0 ] || fail "devices left: $(ls $DEV)"
}

add_delete_cycles() {
	i=1
	while [ $i -le 10 ]; do
		rdma link add rxe0 type rxe netdev eth0 || fail "cycle $i: add" || return 1
		wait_for 5 tracked rxe0 || fail "cycle $i: not tracked" || return 1
		rdma link delete rxe0 || fail "cycle $i: delete" || return 1
		wait_for 5 sh -c "! test -e $DEV/rxe0" || fail "cycle $i: still tracked" || return 1
		i=$((i + 1))
	done
}

rename_followed() {
	rdma link add rxe0 type rxe netdev eth0 || return 1
	wait_for 5 tracked rxe0 || return 1
	rdma dev set rxe0 name kcrxe || fail "rdma dev set name failed" || return 1
	wait_for 5 tracked kcrxe || fail "rename not followed: $(ls $DEV)" || return 1
	tracked rxe0 && fail "old name still present" && return 1
	rdma link delete kcrxe || return 1
	wait_for 5 sh -c "! test -e $DEV/kcrxe"
}

present_before_load() {
	modprobe -r kcoll || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	modprobe kcoll || return 1
	tracked rxe0 || fail "device added before load not tracked" || return 1
	rdma link delete rxe0
}

provider_unload() {
	rdma link add rxe0 type rxe netdev eth0 || return 1
	wait_for 5 tracked rxe0 || return 1
	modprobe -r rdma_rxe || fail "modprobe -r rdma_rxe failed" || return 1
	tracked rxe0 && fail "rxe0 still tracked after rdma_rxe unload" && return 1
	[ -e /sys/module/kcoll ] || fail "kcoll went away with rdma_rxe" || return 1
	modprobe rdma_rxe
}

info_counts_devices() {
	fd_info() { "$KCOLLCTL" -j info; }
	rdma link add rxe0 type rxe netdev eth0 || return 1
	wait_for 5 tracked rxe0 || return 1
	out=$(fd_info) || return 1
	echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["ndevices"] == 1 else 1)' ||
		fail "kcollctl -j info: $out" || return 1
	rdma link delete rxe0
}

KCOLLCTL=${KCOLLCTL:-$(dirname "$0")/../../tools/kcollctl/kcollctl}

ktap_begin
modprobe kcoll
ktap_test "rdma link add: the device appears in sysfs with its type, ports and GUID" add_seen
ktap_test "rdma link delete: the device disappears" delete_seen
ktap_test "10 add/delete cycles" add_delete_cycles
ktap_test "a renamed device keeps its sysfs directory under the new name" rename_followed
ktap_test "a device present before modprobe kcoll is tracked" present_before_load
ktap_test "unloading the provider (rdma_rxe) removes its devices cleanly" provider_unload
if [ -x "$KCOLLCTL" ]; then
	ktap_test "GET_INFO (kcollctl -j info) counts tracked devices" info_counts_devices
else
	ktap_skip "GET_INFO (kcollctl -j info) counts tracked devices" "no kcollctl built"
fi
ktap_end
