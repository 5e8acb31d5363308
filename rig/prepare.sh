#!/bin/bash
# Prepare a guest kernel for the rig and stage kcoll's modules next to its own.
#
# Usage: rig/prepare.sh stock|debug KO...
#
# Writes $RIG_BUILD/<flavour>/env with VMLINUZ, INITRD (stock only), KVER, MODROOT and
# APPEND.  The staged module directory MODROOT is what guests pass to `modprobe -d`, so
# kcoll.ko loads by name with its dependencies (ib_core, ...) resolved by depmod.
#
# stock: Debian's linux-image matching the headers in KDIR.  If the image package is not
#        installed, it is downloaded and unpacked under build/ (not installed system-wide).
#        A busybox initramfs loads virtio + 9p and switch_roots to the host root.
# debug: the KASAN/lockdep/kmemleak kernel from shared/debug-kernel (or $KCOLL_DEBUG_KERNEL),
#        which has virtio and 9p built in and boots the 9p root directly.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:?usage: $0 stock|debug KO...}
shift
out=$RIG_BUILD/$flavour
mkdir -p "$out"

stage_modules() {	# stage_modules SRC_MODULES_DIR KVER KO...
	local src=$1 kver=$2
	shift 2
	local root=$out/modroot
	local dst=$root/lib/modules/$kver
	if [ ! -d "$dst/kernel" ]; then
		rm -rf "$root"
		mkdir -p "$root/lib/modules"
		cp -al "$src" "$dst" 2>/dev/null || cp -a "$src" "$dst"
		rm -f "$dst"/modules.dep* "$dst"/modules.alias* "$dst"/modules.symbols*
	fi
	rm -rf "$dst/extra"
	mkdir -p "$dst/extra"
	local ko
	for ko in "$@"; do
		cp "$ko" "$dst/extra/"
	done
	depmod -b "$root" "$kver"
}

make_initramfs() {	# make_initramfs KVER
	local kver=$1 root=$out/modroot
	local img=$out/initramfs.cpio.gz
	local stamp=$out/initramfs.stamp
	local want
	want="$kver $(sha1sum "$RIG_TOP/rig/initramfs-init" | cut -d' ' -f1)"
	if [ -f "$img" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
		return
	fi
	local tmp
	tmp=$(mktemp -d)
	mkdir -p "$tmp"/{bin,dev,proc,sys,newroot,lib/modules}
	cp /bin/busybox "$tmp/bin/busybox"
	cp "$RIG_TOP/rig/initramfs-init" "$tmp/init"
	chmod +x "$tmp/init"
	: >"$tmp/modules.order"
	local m
	# Dependency order, as modprobe would load them.
	for m in $(modprobe -d "$root" -S "$kver" -a --show-depends \
			virtio_pci virtio_net 9pnet_virtio 9p | awk '$1 == "insmod" {print $2}'); do
		[ -e "$tmp/lib/modules/$(basename "$m")" ] && continue
		cp "$m" "$tmp/lib/modules/"
		basename "$m" >>"$tmp/modules.order"
	done
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$img"
	rm -rf "$tmp"
	echo "$want" >"$stamp"
}

case "$flavour" in
stock)
	kdir=$(rig_kdir)
	[ -n "$kdir" ] || rig_die "no kernel headers: apt-get install linux-headers-amd64, or set KDIR"
	kver=$(rig_kver_of "$kdir")
	if [ -f "/boot/vmlinuz-$kver" ] && [ -d "/lib/modules/$kver/kernel" ]; then
		vmlinuz=/boot/vmlinuz-$kver
		srcmods=/lib/modules/$kver
	else
		img=$out/image
		if [ ! -f "$img/boot/vmlinuz-$kver" ]; then
			rig_log "fetching linux-image-$kver (guest kernel, unpacked under build/)"
			mkdir -p "$out/cache"
			(cd "$out/cache" && apt-get download -q "linux-image-$kver" >/dev/null 2>&1) ||
				rig_die "apt-get download linux-image-$kver failed (apt-get update?)"
			rm -rf "$img"
			dpkg -x "$out"/cache/linux-image-"$kver"_*.deb "$img"
			rm -f "$out"/cache/linux-image-"$kver"_*.deb
		fi
		vmlinuz=$img/boot/vmlinuz-$kver
		srcmods=$img/lib/modules/$kver
	fi
	stage_modules "$srcmods" "$kver" "$@"
	make_initramfs "$kver"
	initrd=$out/initramfs.cpio.gz
	cpu=max
	append=""
	;;
debug)
	dd=$(rig_debug_dir)
	vmlinuz=$(ls "$dd"/vmlinuz-* 2>/dev/null | head -n 1 || true)
	[ -n "$vmlinuz" ] || rig_die "no debug kernel in $dd (build one with rig/debug-kernel.sh)"
	kver=$(ls "$dd/lib/modules" | head -n 1)
	stage_modules "$dd/lib/modules/$kver" "$kver" "$@"
	initrd=""
	# KASAN's early shadow breaks with 5-level paging (-cpu max offers LA57 under TCG): a
	# wild-memory-access splat in the first interrupt, before any of our code runs.
	cpu="max,la57=off"
	append="root=root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=512000 ro"
	;;
*)
	rig_die "unknown flavour '$flavour' (stock or debug)"
	;;
esac

cat >"$out/env" <<EOT
VMLINUZ=$vmlinuz
INITRD=$initrd
KVER=$kver
MODROOT=$out/modroot
APPEND="$append"
CPU=$cpu
EOT
