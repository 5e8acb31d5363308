#!/bin/bash
# Boot a virtual cluster: N QEMU (TCG) VMs, one per node, each with the host root read-only
# over 9p, a writable run directory shared with the host and the other nodes, and one NIC on a
# private L2 segment: a bridge inside a network namespace this script creates and deletes.
#
# Usage: rig/cluster.sh [-f stock|debug] [-n NODES] [-c CPUS] [-t TIMEOUT] [-m MEM_MB]
#                       [--nics 1|2] -o RUNDIR -- JOB
#   -c CPUS   vCPUs per VM, 1 to 4 (default 1); more than one adds tsc=reliable to the
#             guest kernel line, so the TSC stays its clocksource
#   --nics 2  a second NIC per VM on a second bridge (two rails); the namespace routes
#             between the two segments (Documentation/testing.rst, Rails)
#
# JOB is a shell command line run by every node from the repository top, with RIG_NODE,
# RIG_NNODES, RIG_NICS, RIG_CPUS, RIG_MODROOT, RIG_TOP, RIG_KVER in its environment (source
# rig/guest/lib.sh).
# Per node, RUNDIR/nodeI/ gets console.log, job.log, job.rc and dmesg.txt.
# Exit status: 0 when every node ran its job to the end (whatever the job's own result).
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=stock nodes=1 cpus=1 timeout=300 mem=1024 rundir="" nics=1
# --nics N is -N N for getopts.
args=()
for a in "$@"; do
	[ "$a" = --nics ] && a=-N
	args+=("$a")
done
set -- "${args[@]}"
while getopts "f:n:c:t:m:o:N:h" opt; do
	case $opt in
	f) flavour=$OPTARG ;;
	n) nodes=$OPTARG ;;
	c) cpus=$OPTARG ;;
	t) timeout=$OPTARG ;;
	m) mem=$OPTARG ;;
	o) rundir=$OPTARG ;;
	N) nics=$OPTARG ;;
	*) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
job="$*"
[ -n "$job" ] && [ -n "$rundir" ] || { sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 2; }
[ "$nodes" -ge 1 ] && [ "$nodes" -le 8 ] || rig_die "-n takes 1 to 8 nodes"
[[ $cpus =~ ^[1-4]$ ]] || rig_die "-c takes 1 to 4 vCPUs"
[[ $nics =~ ^[12]$ ]] || rig_die "--nics takes 1 or 2"
env=$RIG_BUILD/$flavour/env
[ -f "$env" ] || rig_die "$env missing: run rig/prepare.sh $flavour first"
. "$env"

rm -rf "$rundir"
mkdir -p "$rundir"
rundir=$(cd "$rundir" && pwd)

ns=kcoll-rig-$$
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# segment BRIDGE TAP: a bridge at MTU 9000 in the namespace with tap TAP<I> of every VM on it.
segment() {
	ip -n "$ns" link add "$1" type bridge
	ip -n "$ns" link set "$1" mtu 9000 up
	for ((i = 0; i < nodes; i++)); do
		ip -n "$ns" tuntap add dev "$2$i" mode tap
		ip -n "$ns" link set "$2$i" mtu 9000 master "$1" up
	done
}

ip netns add "$ns"
segment br0 tap
# Two rails: br1 with a second tap per VM.  A rank of rail 0 must still reach a rank of rail 1
# on another node (every pair of a communicator connects), as a real rail fabric routes
# between rails: the namespace routes between the two segments (.254 on each, the guests'
# gateway; rig/guest/lib.sh).  Forwarding is the namespace's own setting.
if [ "$nics" -eq 2 ]; then
	segment br1 tapb
	ip -n "$ns" addr add 169.254.77.254/24 dev br0
	ip -n "$ns" addr add 169.254.78.254/24 dev br1
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
fi

# start_vm I: boot node I (again); its console log starts afresh.
start_vm() {
	local i=$1 d=$rundir/node$1 append initrd
	mkdir -p "$d"
	cat >"$d/job.env" <<EOT
RIG_NNODES=$nodes
RIG_NICS=$nics
RIG_MODROOT=$MODROOT
RIG_KVER=$KVER
RIG_TOP=$RIG_TOP
RIG_FLAVOUR=$flavour
RIG_CPUS=$cpus
RIG_JOB=$(printf %q "$job")
export RIG_NNODES RIG_NICS RIG_MODROOT RIG_KVER RIG_TOP RIG_FLAVOUR RIG_CPUS
EOT
	# no_timer_check: a host loaded with other VMs can make the emulated guest miss the
	# early IO-APIC timer test, which then panics ("IO-APIC + timer doesn't work!").
	append="console=ttyS0 panic=-1 panic_on_warn=1 oops=panic net.ifnames=0 no_timer_check"
	# Several vCPUs under TCG: the boot-time TSC sync check sees the vCPUs' TSCs apart (a
	# vCPU thread waits for a host core), marks the TSC unstable and the guest runs on HPET,
	# whose every read is an emulated MMIO access (clock_gettime() becomes a system call).
	# QEMU's TSC is one host clock for all vCPUs: tell the guest it is reliable.
	[ "$cpus" -gt 1 ] && append+=" tsc=reliable"
	append+=" $APPEND"
	append+=" rig_node=$i"
	if [ -n "$INITRD" ]; then
		append+=" rig_init=$RIG_TOP/rig/guest/init.sh"
		initrd=(-initrd "$INITRD")
	else
		append+=" init=$RIG_TOP/rig/guest/init.sh"
		initrd=()
	fi
	nic2=()
	[ "$nics" -eq 2 ] && nic2=(
		-netdev tap,id=n1,ifname="tapb$i",script=no,downscript=no
		-device virtio-net-pci,netdev=n1,mac=52:54:00:77:01:$(printf %02x "$i"))
	ip netns exec "$ns" qemu-system-x86_64 \
		-machine q35,accel=tcg -cpu "${CPU:-max}" -smp "$cpus" -m "$mem" \
		-nodefaults -no-user-config -no-reboot -display none -monitor none \
		-serial "file:$d/console.log" \
		-kernel "$VMLINUZ" "${initrd[@]}" -append "$append" \
		-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=root,mount_tag=root \
		-fsdev local,id=rig,path="$rundir",security_model=none,multidevs=remap \
		-device virtio-9p-pci,fsdev=rig,mount_tag=rig \
		-netdev tap,id=n0,ifname="tap$i",script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac=52:54:00:77:00:$(printf %02x "$i") \
		"${nic2[@]}" \
		>"$d/qemu.log" 2>&1 &
	pids[$i]=$!
	booted[$i]=$SECONDS
}

booted=()
for ((i = 0; i < nodes; i++)); do
	start_vm "$i"
done

# A VM that has not reached its job after boot_timeout seconds, or that died before it, is
# restarted (twice at most): the emulated kernel now and then stalls or panics in early boot
# under host load, before any kcoll code has run.
boot_timeout=${RIG_BOOT_TIMEOUT:-$([ "$flavour" = debug ] && echo 300 || echo 120)}
restarts=()
boot_watch() {
	local i
	for ((i = 0; i < nodes; i++)); do
		grep -q "rig: node$i running" "$rundir/node$i/console.log" 2>/dev/null && continue
		# Still booting within the timeout; or gone before its job (a panic in early
		# boot, which is the emulator's, not kcoll's: kcoll is not loaded yet).
		if kill -0 "${pids[$i]}" 2>/dev/null; then
			[ $((SECONDS - booted[i])) -lt "$boot_timeout" ] && continue
		fi
		[ "${restarts[$i]:-0}" -ge 2 ] && continue
		restarts[$i]=$((${restarts[$i]:-0} + 1))
		rig_log "node$i: no job after $((SECONDS - booted[i]))s of boot (stalled or died); restarting it"
		kill "${pids[$i]}" 2>/dev/null || true
		wait "${pids[$i]}" 2>/dev/null || true
		mv "$rundir/node$i/console.log" "$rundir/node$i/console.log.stalled-${restarts[$i]}"
		start_vm "$i"
		# The restarted VM gets the whole timeout from now: the stalled boot is the
		# emulator's time, not the job's (a job sized to its timeout failed otherwise).
		[ $((SECONDS + timeout)) -le "${deadline:-0}" ] || deadline=$((SECONDS + timeout))
	done
}

# Wait for every VM to power off, or kill the rest at the deadline (moved on by a restart,
# boot_watch).  boot_watch runs first each time, so a VM that died in early boot is
# restarted before "all gone" counts.
deadline=$((SECONDS + timeout))
status=0
while :; do
	boot_watch
	alive=()
	for ((i = 0; i < nodes; i++)); do
		kill -0 "${pids[$i]}" 2>/dev/null && alive+=("$i")
	done
	[ ${#alive[@]} -eq 0 ] && break
	if [ $SECONDS -ge $deadline ]; then
		for i in "${alive[@]}"; do
			rig_log "node$i: timed out after ${timeout}s; killing it (see $rundir/node$i/console.log)"
			kill "${pids[$i]}" 2>/dev/null || true
			echo timeout >"$rundir/node$i/vm.timeout"
		done
		status=1
		break
	fi
	sleep 1
done
wait 2>/dev/null || true
for ((i = 0; i < nodes; i++)); do
	[ -f "$rundir/node$i/job.rc" ] || status=1
done
exit $status
