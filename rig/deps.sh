#!/bin/bash
# Install the Debian packages kcoll's build, rig and tests need, if any is missing.
# Idempotent and quiet when everything is there; needs root (apt) only when something is missing.
# Usage: rig/deps.sh [build|rig|all|bench]   (default: all; bench is only for make bench)
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

case "${1:-all}" in
build)	want=("${build_pkgs[@]}") ;;
rig)	want=("${rig_pkgs[@]}") ;;
all)	want=("${build_pkgs[@]}" "${rig_pkgs[@]}") ;;
bench)	want=("${bench_pkgs[@]}") ;;
*)	echo "usage: $0 [build|rig|all|bench]" >&2; exit 2 ;;
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
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
