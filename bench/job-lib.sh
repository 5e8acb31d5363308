# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the 2-VM looks (bench/quick-job.sh, bench/profile-job.sh), not by `make bench`.
. rig/guest/lib.sh

# Soft-RoCE and kcoll up, both nodes reachable; sets N (this node) and gid (the index of the
# RoCE v2 GID of the node's IPv4 address, for perftest's -x).
bench_job_up() {
	rig_net_up; rig_rxe_up; modprobe kcoll
	N=$RIG_NODE
	for i in 0 1; do
		n=0
		while ! ping -c 1 -W 1 "$(rig_ip $i)" >/dev/null 2>&1 && [ $n -lt 60 ]; do
			n=$((n + 1))
		done
	done
	gid=$(ibv_devinfo -v -d rxe0 |
	      awk '/GID\[/ && /::ffff:169/ {gsub(/[^0-9]/,"",$1); print $1; exit}')
	[ -n "$gid" ] || gid=1
	rig_barrier up 120
}

# pt NAME CMD...: a perftest pair; node0 serves (NAME-srv.txt), node1 connects to it,
# retrying until the server listens (NAME.txt), both in RIG_DIR.
pt() {
	name=$1
	shift
	if [ "$N" = 0 ]; then
		timeout 200 "$@" >"$RIG_DIR/$name-srv.txt" 2>&1
	else
		k=0
		until timeout 200 "$@" "$(rig_ip 0)" >"$RIG_DIR/$name.txt" 2>&1; do
			k=$((k + 1)); [ $k -ge 20 ] && break; sleep 1
		done
	fi
}
