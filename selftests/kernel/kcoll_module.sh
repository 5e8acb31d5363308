#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kcoll.ko as a module: load/unload cycles, rmmod refused while /dev/kcoll is open, and the
# devices= parameter.  Needs rdma_rxe loaded and eth0 up; adds rxe0 for the test and deletes
# it after; leaves kcoll unloaded.
. "$(dirname "$0")/../lib/ktap.sh"

SYS=/sys/kernel/kcoll

unloaded() { [ ! -e /sys/module/kcoll ] && [ ! -e /dev/kcoll ] && [ ! -e $SYS ]; }

load_unload_cycles() {
	i=1
	while [ $i -le 20 ]; do
		modprobe kcoll || fail "cycle $i: modprobe failed"
		[ -c /dev/kcoll ] || fail "cycle $i: no /dev/kcoll" || return 1
		[ "$(cat $SYS/version)" != "" ] || fail "cycle $i: no $SYS/version" || return 1
		modprobe -r kcoll || fail "cycle $i: modprobe -r failed" || return 1
		unloaded || fail "cycle $i: leftovers after unload" || return 1
		i=$((i + 1))
	done
}

rmmod_refused_while_open() {
	modprobe kcoll || return 1
	exec 3<>/dev/kcoll
	if rmmod kcoll 2>/dev/null; then
		exec 3>&-
		fail "rmmod succeeded while /dev/kcoll was open"
		return 1
	fi
	[ -e /sys/module/kcoll ] || fail "module gone after a refused rmmod" || return 1
	exec 3>&-
	rmmod kcoll || fail "rmmod failed after the last close" || return 1
	unloaded
}

parameter_documented() {
	modinfo -F parm kcoll | grep -q '^devices:' || fail "modinfo lists no devices= parameter"
}

allowed_is() {	# allowed_is PARAM EXPECTED
	modprobe kcoll ${1:+devices=$1} || return 1
	wait_for 5 test -e $SYS/devices/rxe0/allowed || fail "rxe0 not tracked" || return 1
	got=$(cat $SYS/devices/rxe0/allowed)
	[ "$(cat /sys/module/kcoll/parameters/devices)" = "${1:-(null)}" ] ||
		fail "parameters/devices reads $(cat /sys/module/kcoll/parameters/devices)" ||
		return 1
	modprobe -r kcoll
	[ "$got" = "$2" ] || fail "devices=$1: rxe0 allowed=$got, want $2"
}

devices_parameter() {
	allowed_is "" 1 && allowed_is "nope" 0 && allowed_is "nope,rxe0" 1 &&
		allowed_is "rxe0" 1 && allowed_is "rxe" 0 && allowed_is "rxe00,xrxe0" 0
}

ktap_begin
modprobe -r kcoll 2>/dev/null
rdma link add rxe0 type rxe netdev eth0 || echo "# rdma link add rxe0 failed"
ktap_test "20 load/unload cycles leave nothing behind" load_unload_cycles
ktap_test "rmmod is refused while /dev/kcoll is open, succeeds after close" \
	rmmod_refused_while_open
ktap_test "modinfo documents the devices= parameter" parameter_documented
ktap_test "devices= selects which RDMA devices kcoll may use" devices_parameter
rdma link delete rxe0
ktap_end
