#!/bin/bash
# Rebuild kcoll's debug kernel (KASAN, lockdep, kmemleak, fault injection, siw) from Debian's
# linux-source-6.1, for machines without the prebuilt copy in shared/debug-kernel.
# About 45-70 minutes on 2 cores.  The result has the layout rig/prepare.sh expects:
#   OUT/vmlinuz-<ver>  OUT/lib/modules/<ver>/  OUT/linux-headers-<ver>_*.deb
# Usage: rig/debug-kernel.sh [OUT]   (default build/debug-kernel; point KCOLL_DEBUG_KERNEL at it)
set -euo pipefail
. "$(dirname "$0")/common.sh"
out=$(realpath -m "${1:-$RIG_TOP/build/debug-kernel}")
"$RIG_TOP/rig/deps.sh" build
for p in bc bison flex libssl-dev libelf-dev dwarves rsync; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		apt-get install -y -q --no-install-recommends "$p" >/dev/null
done
work=$RIG_TOP/build/debug-kernel-src
mkdir -p "$work" "$out"
if [ ! -d "$work/linux-source-6.1" ]; then
	tar -xf /usr/src/linux-source-6.1.tar.xz -C "$work"
fi
cd "$work/linux-source-6.1"
make -s defconfig
make -s kvm_guest.config
scripts/kconfig/merge_config.sh -m .config "$RIG_TOP/rig/debug-kernel.config" >/dev/null
make -s olddefconfig
make -s -j"$(nproc)" bzImage modules
ver=$(make -s kernelrelease)
cp arch/x86/boot/bzImage "$out/vmlinuz-$ver"
cp .config "$out/config-$ver"
rm -rf "$out/lib"
make -s INSTALL_MOD_PATH="$out" INSTALL_MOD_STRIP=1 modules_install
make -s -j"$(nproc)" bindeb-pkg DPKG_FLAGS=-d >/dev/null
mv ../linux-headers-"$ver"_*.deb "$out/"
rm -f ../linux-image-* ../linux-libc-dev_* ../linux-upstream_* 2>/dev/null || true
echo "debug kernel $ver in $out (use: KCOLL_DEBUG_KERNEL=$out make check-debug)"
