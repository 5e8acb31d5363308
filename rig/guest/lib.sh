# shellcheck shell=sh
# Helpers for jobs running inside a rig VM; sourced.  RIG_* come from job.env and init.sh.

# The cluster segment: private to the rig's network namespace, never routed anywhere.
RIG_SUBNET=169.254.77
rig_ip() { echo "$RIG_SUBNET.$(( $1 + 1 ))"; }
# The second rail (rig/cluster.sh --nics 2): eth1 on its own segment.
RIG_SUBNET1=169.254.78
rig_ip1() { echo "$RIG_SUBNET1.$(( $1 + 1 ))"; }

rig_net_up() {
	ip link set eth0 mtu 9000 up
	ip addr add "$(rig_ip "$RIG_NODE")/24" dev eth0
	[ "${RIG_NICS:-1}" -eq 2 ] || return 0
	ip link set eth1 mtu 9000 up
	ip addr add "$(rig_ip1 "$RIG_NODE")/24" dev eth1
	# The other rail's segment through the rig's router (.254), from each NIC: rdma_cm and
	# rxe look a route up bound to the rank's own NIC, so a rank of rail 0 reaches rail 1
	# of another node (or of its own: kcoll connects local ranks over RDMA too) through
	# eth0 and the router.  The reply comes back on the other NIC, and a packet between
	# the node's own two NICs has a local source: no reverse-path filter, accept_local.
	ip route add "$RIG_SUBNET1.0/24" via "$RIG_SUBNET.254" dev eth0 metric 100
	ip route add "$RIG_SUBNET.0/24" via "$RIG_SUBNET1.254" dev eth1 metric 100
	for f in all default eth0 eth1; do
		echo 0 >"/proc/sys/net/ipv4/conf/$f/rp_filter"
		echo 1 >"/proc/sys/net/ipv4/conf/$f/accept_local"
	done
}

# rig_node_up: the cluster segment, the RDMA device (rxe, or siw with RIG_RDMA=siw) and kcoll.
rig_node_up() {
	rig_net_up
	rig_rxe_up
	modprobe kcoll
}

# rig_suite_up [--after-smoke]: what every multi-node suite starts with: the node up
# (rig_node_up), $tap (the TAP directory) made, every node answering a ping, then a barrier
# so the first communicator is not made before the segment is up everywhere.  After the
# smoke test (selftests/suites/smoke.sh, which brings the segment and the device up as its
# own cases and unloads kcoll), only kcoll is loaded.
rig_suite_up() {
	if [ "${1:-}" = --after-smoke ]; then
		modprobe kcoll
	else
		rig_node_up
	fi
	tap=$RIG_DIR/tap
	mkdir -p "$tap"
	rig_ping_all
	[ "$RIG_NNODES" -le 1 ] || rig_barrier net-up 120
}

# rig_ping_all: wait (a minute at most per node) until every node answers a ping, so the
# first communicator is not made before the segment is up everywhere.  With two NICs, on
# both rails, and from eth0 to the other nodes' eth1 through the router.
rig_ping_all() {
	for i in $(seq 0 $((RIG_NNODES - 1))); do
		rig_ping_wait "$(rig_ip "$i")"
		[ "${RIG_NICS:-1}" -eq 2 ] || continue
		rig_ping_wait "$(rig_ip1 "$i")"
		[ "$i" -eq "$RIG_NODE" ] || rig_ping_wait "$(rig_ip1 "$i")" -I eth0
	done
}

# rig_ping_wait ADDR [PING_OPTION...]: a minute at most.
rig_ping_wait() {
	_a=$1
	shift
	n=0
	while ! ping -c 1 -W 1 "$@" "$_a" >/dev/null 2>&1 && [ $n -lt 60 ]; do
		n=$((n + 1))
	done
}

# Soft-RoCE on eth0 (and rxe1 on eth1 with two NICs); with MTU 9000 the rxe port runs at
# active MTU 4096.  RIG_RDMA=siw gives a Soft-iWARP device instead of Soft-RoCE (the debug
# kernel has siw), RIG_RDMA=none no RDMA device (the TCP suites).
rig_rxe_up() {
	if [ "${RIG_RDMA:-rxe}" = none ]; then
		return 0	# no RDMA device at all: kcoll runs over TCP
	elif [ "${RIG_RDMA:-rxe}" = siw ]; then
		modprobe siw &&
		rdma link add siw0 type siw netdev eth0 || return
		[ "${RIG_NICS:-1}" -eq 1 ] || rdma link add siw1 type siw netdev eth1
	else
		modprobe rdma_rxe &&
		rdma link add rxe0 type rxe netdev eth0 || return
		[ "${RIG_NICS:-1}" -eq 1 ] || rdma link add rxe1 type rxe netdev eth1
	fi
}


# rig_barrier NAME [TIMEOUT]: wait until every node has reached NAME (files on the shared
# run directory; 9p without cache sees the other nodes' files at once).
rig_barrier() {
	name=$1
	t=${2:-120}
	# The debug kernel is several times slower, and a stalled boot costs a restart.
	[ "$RIG_FLAVOUR" = debug ] && t=$((t * 5))
	mkdir -p "/run/rig/barrier"
	: >"/run/rig/barrier/$name.$RIG_NODE"
	while [ "$(ls /run/rig/barrier | grep -c "^$name\.")" -lt "$RIG_NNODES" ]; do
		t=$((t - 1))
		if [ $t -le 0 ]; then
			echo "rig: barrier $name timed out" >&2
			return 1
		fi
		sleep 1
	done
}

# rig_kmemleak_check: TAP for one test, "no unreferenced objects", on kernels with kmemleak
# (the debug tier); skipped elsewhere.  Two scans, since a fresh leak shows on the second.
rig_kmemleak_check() {
	echo "TAP version 13"
	k=/sys/kernel/debug/kmemleak
	if [ ! -e $k ]; then
		echo "ok 1 kmemleak reports no leak # SKIP kernel without kmemleak"
	else
		echo scan >$k; sleep 5; echo scan >$k
		if grep -q unreferenced $k; then
			sed 's/^/# /' $k
			echo "not ok 1 kmemleak reports no leak"
		else
			echo "ok 1 kmemleak reports no leak"
		fi
	fi
	echo "1..1"
}
