# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the guest jobs of `make bench` (bench/node.sh, bench/local.sh, bench/hier.sh),
# inside a rig VM: the sweep, the run's meta.json, the SSH that mpirun starts its ranks
# through, the link limits (perftest, iperf3), kcoll-perf with one or several ranks a node
# and Open MPI's mpirun.  Results go to $R, the run directory on the host.
# BENCH_SMOKE=1: tiny sizes.  BENCH_BIN: where mpi_timing is.  BENCH_TAG: log lines' tag.
. rig/guest/lib.sh

R=/run/rig/results
S=/run/rig/ssh
N=$RIG_NODE
NN=$RIG_NNODES
BIN=${BENCH_BIN:-$RIG_TOP/build/bench}
mkdir -p "$R"
log() { echo "bench: ${BENCH_TAG:-node$N}: $(date +%T) $*"; }

if [ "${BENCH_SMOKE:-0}" = 1 ]; then
	SWEEP="-b 4 -e 4K -f 4 -w 1 -n 3"
	BW_RUNS="65536:200"
	LAT_ITERS=200
	IPERF_SECS=2
	STEP_TIMEOUT=900
else
	SWEEP="-b 4 -e 16M -f 2 -w 5 -n 20 -I 32M"
	# SIZE:ITERATIONS, about 32-128 MiB per run (a fixed duration gives too few
	# iterations of large messages at TCG's rate)
	BW_RUNS="4096:2000 65536:500 1048576:64 8388608:16"
	LAT_ITERS=1000
	IPERF_SECS=10
	STEP_TIMEOUT=3600
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	OMPI_MCA_rmaps_base_oversubscribe=1

# bench_meta [EXTRA]: meta.json (the VMs, the sweep), with EXTRA ('"key": value, ...') in it.
bench_meta() {
	mtu=$(ibv_devinfo -d rxe0 2>/dev/null | awk '/active_mtu/ { print $2; exit }')
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	mem=$(awk '/^MemTotal/ { printf "%d", $2 / 1024 }' /proc/meminfo)
	cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
	cat >"$R/meta.json" <<EOF
{"nodes": $NN, ${1:+$1, }"vcpus": $(nproc), "mem_mb": $mem, "kernel": "$(uname -r)",
 "cpu_model": "$cpu", "clocksource": "${cs:-?}", "rxe_active_mtu": "${mtu:-?}",
 "smoke": ${BENCH_SMOKE:-0}, "sweep": "$SWEEP", "link_runs": "$BW_RUNS",
 "lat_iters": $LAT_ITERS}
EOF
}

# bench_ssh_up: sshd on the rig segment with keys made fresh by node0 on the shared run
# directory, root's client key and config in the VM's tmpfs /root: mpirun's launcher.
bench_ssh_up() {
	if [ "$N" = 0 ]; then
		mkdir -p "$S"
		ssh-keygen -q -t ed25519 -N '' -C rig-host -f "$S/ssh_host_ed25519_key"
		ssh-keygen -q -t ed25519 -N '' -C rig-mpirun -f "$S/id_ed25519"
		cp "$S/id_ed25519.pub" "$S/authorized_keys"
		cat >"$S/sshd_config" <<EOF
HostKey $S/ssh_host_ed25519_key
AuthorizedKeysFile $S/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile /run/sshd.pid
EOF
	fi
	rig_barrier keys 300
	mkdir -p /run/sshd /root/.ssh
	chmod 755 /run/sshd
	chmod 700 /root/.ssh
	cp "$S/id_ed25519" /root/.ssh/id_ed25519
	chmod 600 /root/.ssh/id_ed25519
	printf 'Host *\n\tStrictHostKeyChecking no\n\tUserKnownHostsFile /dev/null\n\tLogLevel ERROR\n\tIdentityFile /root/.ssh/id_ed25519\n\tBatchMode yes\n' \
		>/root/.ssh/config
	/usr/sbin/sshd -f "$S/sshd_config" -o "ListenAddress=$(rig_ip "$N")" \
		-E "$RIG_DIR/sshd.log" || log "sshd failed to start"
}

# bench_nodes_up: every node answers a ping before anything is measured.
bench_nodes_up() {
	i=0
	while [ $i -lt "$NN" ]; do
		t=0
		until ping -c 1 -W 1 "$(rig_ip $i)" >/dev/null 2>&1; do
			t=$((t + 1))
			[ $t -ge 60 ] && { log "node$i does not answer ping"; break; }
		done
		i=$((i + 1))
	done
	rig_barrier up 300
}

# gid_index [DEV]: the GID index of this node's RoCE v2 IPv4 address on DEV (rxe0).
gid_index() {
	d=/sys/class/infiniband/${1:-rxe0}/ports/1
	for f in $(grep -l '^0000:0000:0000:0000:0000:ffff:' $d/gids/* 2>/dev/null); do
		i=${f##*/}
		if [ "$(cat "$d/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ]; then
			echo "$i"
			return
		fi
	done
	echo 1
}

# pt NAME PORT CMD...: node0 serves, node1 connects (retrying until the server listens) to
# node0's address PT_ADDR (default its first NIC's).
pt() {
	name=$1
	port=$2
	shift 2
	if [ "$N" = 0 ]; then
		timeout 300 "$@" -p "$port" >"$R/perftest/$name-server.txt" 2>&1
	else
		k=0
		until timeout 300 "$@" -p "$port" "${PT_ADDR:-$(rig_ip 0)}" \
			>"$R/perftest/$name.txt" 2>&1; do
			k=$((k + 1))
			# a run that failed after connecting says why only here: keep it
			cp "$R/perftest/$name.txt" "$R/perftest/$name.try$k.txt"
			[ $k -ge 30 ] && { log "$name failed"; break; }
			sleep 1
		done
	fi
}

# bench_perftest: the RDMA link limit between node0 and node1, ib_write_bw one way and both
# ways (-b) for each of BW_RUNS, ib_write_lat 8 B; results in $R/perftest/.
bench_perftest() {
	mkdir -p "$R/perftest"
	if [ "$N" -le 1 ] && [ "$NN" -ge 2 ]; then
		gid=$(gid_index)
		log "perftest (gid index $gid)"
		port=18600
		for run in $BW_RUNS; do
			size=${run%%:*}
			iters=${run##*:}
			pt "bw-uni-$size" $port ib_write_bw -d rxe0 -x "$gid" -F --report_gbits \
				-s "$size" -n "$iters"
			port=$((port + 1))
			pt "bw-bi-$size" $port ib_write_bw -d rxe0 -x "$gid" -F --report_gbits \
				-s "$size" -n "$iters" -b
			port=$((port + 1))
		done
		pt lat-8 $port ib_write_lat -d rxe0 -x "$gid" -F -s 8 -n "$LAT_ITERS"
		log "perftest done"
	fi
	rig_barrier perftest $STEP_TIMEOUT
}

# bench_iperf3: the TCP link limit between the same two VMs: iperf3, one stream, one way
# and both ways.  node0 serves one test at a time (-1); node1 retries until it listens again.
bench_iperf3() {
	mkdir -p "$R/iperf3"
	if [ "$N" -le 1 ] && [ "$NN" -ge 2 ]; then
		log "iperf3"
		for run in uni bidir; do
			bidir=
			[ $run = bidir ] && bidir=--bidir
			if [ "$N" = 0 ]; then
				timeout 300 iperf3 -s -1 -p 18690 >"$R/iperf3/$run-server.txt" 2>&1
			else
				k=0
				# With -J, a refused connection may still exit 0: the JSON's "error"
				# says so.
				until timeout 300 iperf3 -c "$(rig_ip 0)" -p 18690 -t "$IPERF_SECS" -J \
					$bidir >"$R/iperf3/$run.json" 2>&1 &&
					! grep -q '"error"' "$R/iperf3/$run.json"; do
					k=$((k + 1))
					[ $k -ge 30 ] && { log "iperf3 $run failed"; break; }
					sleep 1
				done
			fi
		done
		log "iperf3 done"
	fi
	rig_barrier iperf3 $STEP_TIMEOUT
}

# bench_comm_show BASE WANT: while this node's ranks ($pids) run, `kcollctl -j comm show`
# until a listing names a transport for WANT peers (a listing is a snapshot; ranks and links
# come up one by one), kept as BASE.json; else the fullest one seen as BASE.last.  The ranks
# run with --hold BASE.release: they keep their communicators after the last row until this
# creates that file, so a short run cannot end between two listings.
bench_comm_show() {
	best=-1
	while :; do
		tools/kcollctl/kcollctl -j comm show >"$1.tmp" 2>&1
		k=$(grep -o '"transport":"[a-z]*"' "$1.tmp" | wc -l)
		if [ "$k" -gt $best ]; then
			best=$k
			mv "$1.tmp" "$1.best"
		fi
		[ "$k" -ge "$2" ] && break
		running=0
		for p in $pids; do
			kill -0 "$p" 2>/dev/null && running=1
		done
		[ $running = 0 ] && break
		sleep 0.2
	done
	rm -f "$1.tmp"
	touch "$1.release"	# the ranks' --hold ends
	if [ $best -ge "$2" ]; then
		mv "$1.best" "$1.json"
	else
		log "no listing named every peer's transport"
		mv "$1.best" "$1.last"
	fi
}

# bench_kperf [-s BASE] [-p BASE] NAME TRANSPORT RPN BOOT ARGS...: kcoll-perf ARGS $SWEEP in RPN
# processes on every node (ranks N * RPN + 0..RPN-1, so each node holds consecutive ranks),
# KCOLL_TRANSPORT=TRANSPORT, bootstrapped on BOOT, each with its local rank (KCOLL_LOCAL_RANK:
# the rail it takes when KCOLL_IFNAME lists several interfaces).  Rank r writes
# NAME-rankR.out and .rc; rank 0 NAME.json and NAME.rc.  -s: the ranks' listing (bench_comm_show BASE), taken
# while they run (they hold their communicators until it is taken).  -p BASE: this node's
# /proc/stat, with the time first, in BASE.0 before the ranks start and BASE.1 when the last
# has ended (before the barrier).  A barrier NAME follows.
bench_kperf() {
	show= stat=
	while :; do
		case $1 in
		-s) show=$2 ;;
		-p) stat=$2 ;;
		*) break ;;
		esac
		shift 2
	done
	[ -z "$stat" ] || { echo "time $(date +%s.%N)"; cat /proc/stat; } >"$stat.0"
	name=$1
	transport=$2
	rpn=$3
	boot=$4
	shift 4
	hold=
	[ -z "$show" ] || { rm -f "$show.release"; hold="--hold $show.release"; }
	log "kcoll-perf ($name, $rpn rank(s) a node)"
	pids=
	l=0
	while [ $l -lt "$rpn" ]; do
		r=$((N * rpn + l))
		json=
		[ $r = 0 ] && json="-J $R/$name.json"
		# shellcheck disable=SC2086
		(KCOLL_TRANSPORT=$transport KCOLL_RANK=$r KCOLL_NRANKS=$((NN * rpn)) KCOLL_LOCAL_RANK=$l \
			KCOLL_BOOTSTRAP_ADDR=$boot \
			timeout $STEP_TIMEOUT tools/kcoll-perf/kcoll-perf "$@" $SWEEP -P $json $hold \
			>"$R/$name-rank$r.out" 2>&1
		 echo $? >"$R/$name-rank$r.rc") &
		pids="$pids $!"
		l=$((l + 1))
	done
	[ -z "$show" ] || bench_comm_show "$show" $((rpn * (NN * rpn - 1)))
	# shellcheck disable=SC2086
	wait $pids
	[ -z "$stat" ] || { echo "time $(date +%s.%N)"; cat /proc/stat; } >"$stat.1"
	[ "$N" = 0 ] && cp "$R/$name-rank0.rc" "$R/$name.rc"
	log "kcoll-perf ($name) exit status $(cat "$R/$name-rank$((N * rpn)).rc")"
	rig_barrier "$name" $STEP_TIMEOUT
}

# bench_mpi NAME SLOTS MPIRUN_ARGS... -- TIMING_ARGS...: bench/mpi_timing TIMING_ARGS $SWEEP
# in SLOTS ranks on every node under mpirun (from node0, through ssh when there are
# several nodes); NAME.json, NAME.out and NAME.rc.
bench_mpi() {
	name=$1
	np=$(($2 * NN))
	hosts=
	i=0
	while [ "$NN" -gt 1 ] && [ $i -lt "$NN" ]; do
		hosts="$hosts${hosts:+,}$(rig_ip $i):$2"
		i=$((i + 1))
	done
	shift 2
	margs=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		margs="$margs $1"
		shift
	done
	shift
	[ -z "$hosts" ] || margs="--host $hosts --mca plm_rsh_agent ssh
		--mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0 $margs"
	log "mpirun ($name, $np ranks)"
	# shellcheck disable=SC2086
	timeout $STEP_TIMEOUT mpirun -np $np --bind-to none $margs \
		"$BIN/mpi_timing" "$@" $SWEEP -L "$name" -J "$R/$name.json" >"$R/$name.out" 2>&1
	echo $? >"$R/$name.rc"
	log "mpirun ($name): exit status $(cat "$R/$name.rc")"
}
