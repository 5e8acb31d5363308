#!/bin/bash
# Extract the kselftest harness headers from Debian's linux-source-6.1 tarball.
# The harness is GPL-2.0 kernel code: it is unpacked at build time, never committed.
# Usage: rig/kselftest-harness.sh OUTDIR
set -euo pipefail
out=${1:?usage: $0 OUTDIR}
[ -f "$out/kselftest_harness.h" ] && [ -f "$out/kselftest.h" ] && exit 0
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1 || true)
if [ -z "$tarball" ]; then
	echo "kselftest-harness: /usr/src/linux-source-6.1.tar.* missing;" \
	     "install it with: apt-get install linux-source-6.1 (or run rig/deps.sh)" >&2
	exit 1
fi
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xf "$tarball" -C "$tmp" --wildcards \
	'linux-source-6.1/tools/testing/selftests/kselftest_harness.h' \
	'linux-source-6.1/tools/testing/selftests/kselftest.h'
cp "$tmp"/linux-source-6.1/tools/testing/selftests/kselftest{_harness,}.h "$out/"
