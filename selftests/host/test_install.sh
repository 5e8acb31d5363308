#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make install DESTDIR=...` from this tree (TOP, default ../..): every tool that plain `make`
# builds is installed with its man page (bin/ with section 1, sbin/ with section 8), every
# tool's man page has its tool, kcoll.ko is installed and the selftests' engine module is not.
# TAP output.  Skips without kernel headers (the install builds the module).
set -u
cd "$(dirname "$0")"
TOP=${TOP:-$(cd ../.. && pwd)}

n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
check() {	# check DESCRIPTION CMD...: ok when CMD succeeds
	local what=$1
	shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}

echo "TAP version 13"
kdir=$(d=/lib/modules/$(uname -r)/build; [ -d "$d" ] && echo "$d" ||
	ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)
if [ -z "$kdir" ]; then
	echo "1..0 # SKIP no kernel headers: make install builds kcoll.ko"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
if ! make -s -C "$TOP" install DESTDIR="$dest" >"$tmp/install.log" 2>&1; then
	echo "1..1"
	sed -e 's/^/# /' "$tmp/install.log" | tail -n 40
	notok "make install DESTDIR=..."
	exit 1
fi
(cd "$dest" && find . -type f -o -type l | sed 's|^\./||' | sort) >"$tmp/files"
sed -e 's/^/# installed: /' "$tmp/files"
has() { grep -qx -- "$1" "$tmp/files"; }

# The tools: one directory each under tools/ (common/ is shared code, not a tool).
tools=()
for d in "$TOP"/tools/*/; do
	t=$(basename "$d")
	[ "$t" = common ] || tools+=("$t")
done
# kcolllat is built only with clang, bpftool and libbpf (tools/kcolllat/Makefile).
optional() { [ "$1" = kcolllat ] && [ ! -x "$TOP/tools/kcolllat/kcolllat" ]; }

echo "1..$((${#tools[@]} + 4))"
for t in "${tools[@]}"; do
	if optional "$t"; then
		ok "$t installed with its man page # SKIP not built here (no clang/bpftool)"
	elif has "usr/local/bin/$t" && has "usr/local/share/man/man1/$t.1"; then
		ok "$t installed with its man page (bin, section 1)"
	elif has "usr/local/sbin/$t" && has "usr/local/share/man/man8/$t.8"; then
		ok "$t installed with its man page (sbin, section 8)"
	else
		notok "$t installed with its man page"
	fi
done

# Every page of sections 1 and 8 is a tool's, and that tool is installed.
missing=
for p in "$TOP"/man/man1/*.1 "$TOP"/man/man8/*.8; do
	t=$(basename "${p%.*}")
	optional "$t" && continue
	has "usr/local/bin/$t" || has "usr/local/sbin/$t" || missing="$missing $t"
done
[ -z "$missing" ] || echo "# man page without an installed tool:$missing"
check "every section 1 and 8 man page has its tool installed" [ -z "$missing" ]

check "kcoll.ko installed under extra/" grep -q '^lib/modules/[^/]*/extra/kmod/kcoll\.ko' \
	"$tmp/files"
check "the selftests' engine module is not installed" \
	bash -c "! grep -q 'kcoll_test_engine' '$tmp/files'"
check "the library, its headers and the udev rule are installed" bash -c \
	"grep -q '^usr/local/lib/libkcoll\.so\.' '$tmp/files' &&
	 grep -qx 'usr/local/include/libkcoll.h' '$tmp/files' &&
	 grep -qx 'lib/udev/rules.d/60-kcoll.rules' '$tmp/files'"
exit $fail
