# shellcheck shell=bash
# Shared helpers of the host side of the rig; sourced, never run.

RIG_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RIG_BUILD=${RIG_BUILD:-$RIG_TOP/build/rig}

rig_die() { echo "rig: $*" >&2; exit 1; }
rig_log() { echo "rig: $*" >&2; }

# The kernel headers kcoll builds against: $KDIR, else the running kernel's, else the newest.
rig_kdir() {
	local d
	if [ -n "${KDIR:-}" ]; then echo "$KDIR"; return; fi
	d=/lib/modules/$(uname -r)/build
	if [ -d "$d" ]; then echo "$d"; return; fi
	ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1
}

# The release a module built against headers $1 will load into (UTS_RELEASE, not
# include/config/kernel.release, which Debian leaves at the upstream version).
rig_kver_of() {
	local f=$1/include/generated/utsrelease.h
	[ -f "$f" ] || rig_die "no $f: is $1 a kernel build or headers directory?"
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$f"
}

# Where the prebuilt debug kernel lives (shared/ beside the repository), overridable.
rig_debug_dir() {
	echo "${KCOLL_DEBUG_KERNEL:-$RIG_TOP/../shared/debug-kernel}"
}
