#!/bin/bash
# Unpack files of Debian's linux-source-6.1 tarball (kernel scripts such as checkpatch.pl)
# into OUTDIR, keeping their paths.  They are kernel code: unpacked at build time, never
# committed.  Usage: rig/kernel-script.sh OUTDIR PATH...
set -euo pipefail
out=${1:?usage: $0 OUTDIR PATH...}
shift
missing=()
for p in "$@"; do
	[ -e "$out/$p" ] || missing+=("linux-source-6.1/$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1 || true)
[ -n "$tarball" ] || { echo "$0: apt-get install linux-source-6.1" >&2; exit 1; }
mkdir -p "$out"
tar -xf "$tarball" -C "$out" --strip-components=1 "${missing[@]}"
