#!/bin/bash
# Install the Debian packages kcoll's build, rig and tests need, if any is missing.
# Idempotent and quiet when everything is there; needs root (apt) only when something is missing.
# Usage: rig/deps.sh [build|rig|all|bench|launchers]
#   (default: all; bench is only for make bench, launchers for the slurm2 suite)
set -euo pipefail

build_pkgs=(gcc make libc6-dev pkg-config linux-headers-amd64 libmnl-dev libibverbs-dev
	    librdmacm-dev linux-source-6.1 xz-utils python3 python3-yaml groff-base sparse
	    clang bpftool libbpf-dev)
# python3-torch: the host test of the PyTorch backend (test_pytorch) and the torch2/torch4
# suites, whose guests run the host's /usr/bin/python3.
rig_pkgs=(qemu-system-x86 busybox-static kmod iproute2 cpio rdma-core ibverbs-utils
	  rdmacm-utils perftest iputils-ping python3-torch)
# make bench only (not part of all): the peers kcoll is compared with, the plot, mpirun's ssh.
bench_pkgs=(perftest openmpi-bin libopenmpi-dev python3-torch gnuplot-nox openssh-server
	    openssh-client iperf3)
# The slurm2 suite only (not part of all): Slurm's controller, node daemon, client and munge,
# which the guests run from the host's root; openmpi-bin (mpirun) for the torch suites too.
launcher_pkgs=(openmpi-bin slurm-client slurmctld slurmd munge)

case "${1:-all}" in
build)	want=("${build_pkgs[@]}") ;;
rig)	want=("${rig_pkgs[@]}") ;;
all)	want=("${build_pkgs[@]}" "${rig_pkgs[@]}") ;;
bench)	want=("${bench_pkgs[@]}") ;;
launchers) want=("${launcher_pkgs[@]}") ;;
*)	echo "usage: $0 [build|rig|all|bench|launchers]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages: ${missing[*]}" >&2
	echo "deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# munge, slurmctld and slurmd are daemons: the host must not start them (the guests do, with
# a configuration of their own).  policy-rc.d exiting 101 tells invoke-rc.d not to; one that
# is already there (a container's) is left as it is.
rc_policy=/usr/sbin/policy-rc.d
if [ ! -e $rc_policy ]; then
	printf '#!/bin/sh\n# rig/deps.sh: no daemon starts while it installs\nexit 101\n' >$rc_policy
	chmod 755 $rc_policy
	trap 'rm -f $rc_policy' EXIT
fi
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
