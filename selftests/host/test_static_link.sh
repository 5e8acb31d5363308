#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Linking against an installed libkcoll.a the way libkcoll(7) says: `pkg-config --static`
# adds what the archive needs (libmnl for the kcoll_nl_* functions, -pthread), which plain
# `pkg-config --libs` leaves out.  TAP output.
#
# Installs the library of this tree (TOP, default ../..) under a temporary prefix and links
# a program that uses the control plane (kcoll_nl_open(), kcoll_nl_comm_abort()) and a
# KCOLL_0.4 accessor.
set -u
cd "$(dirname "$0")"
TOP=${TOP:-$(cd ../.. && pwd)}
CC=${CC:-cc}

n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

echo "TAP version 13"
echo "1..6"
if ! command -v pkg-config >/dev/null || ! pkg-config --exists libmnl; then
	for i in 1 2 3 4 5 6; do skip "static link $i" "pkg-config or libmnl.pc missing"; done
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Built and installed from a copy of lib/: the tree's own kcoll.pc keeps its prefix.
mkdir "$tmp/lib"
cp "$TOP"/lib/Makefile "$TOP"/lib/*.[ch] "$TOP"/lib/libkcoll.map "$TOP"/lib/kcoll.pc.in "$tmp/lib/"
if ! make -s -C "$tmp/lib" TOP="$TOP" install PREFIX="$tmp/usr" >"$tmp/install.log" 2>&1; then
	sed -e 's/^/# /' "$tmp/install.log"
	notok "install libkcoll under a temporary prefix"
	exit 1
fi
export PKG_CONFIG_PATH="$tmp/usr/lib/pkgconfig"
libdir=$(pkg-config --variable=libdir kcoll)

cat >"$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <libkcoll.h>

int main(void)
{
	struct kcoll_nl *nl;
	int err = kcoll_nl_open(&nl);

	if (!err)
		kcoll_nl_close(nl);
	/* no module on a build host: any errno is fine, the point is that it links and runs */
	printf("kcoll_nl_open %d comm_id %llu\n", err, (unsigned long long)kcoll_comm_id(NULL));
	return 0;
}
PROG

# 1. The shared library, as the SYNOPSIS says.
if $CC -o "$tmp/prog_shared" "$tmp/prog.c" $(pkg-config --cflags --libs kcoll) \
	-Wl,-rpath,"$libdir" 2>"$tmp/err" && "$tmp/prog_shared" >/dev/null; then
	ok "pkg-config --cflags --libs kcoll: links and runs against libkcoll.so"
else
	sed -e 's/^/# /' "$tmp/err"
	notok "pkg-config --cflags --libs kcoll: links and runs against libkcoll.so"
fi

# The archive alone from here on: the linker cannot fall back to the shared object.
rm -f "$libdir"/libkcoll.so*

# 2. Without --static the archive's libmnl references stay undefined: why the page says so.
if $CC -o "$tmp/prog_bad" "$tmp/prog.c" $(pkg-config --cflags --libs kcoll) 2>"$tmp/err"; then
	notok "without --static the link fails (mnl_* undefined)"
elif grep -q "mnl_" "$tmp/err"; then
	ok "without --static the link fails (mnl_* undefined)"
else
	sed -e 's/^/# /' "$tmp/err"
	notok "without --static the link fails (mnl_* undefined)"
fi

# 3. pkg-config --static: links against libkcoll.a.
if $CC -o "$tmp/prog_static" "$tmp/prog.c" $(pkg-config --static --cflags --libs kcoll) \
	2>"$tmp/err"; then
	ok "pkg-config --static --cflags --libs kcoll links libkcoll.a"
else
	sed -e 's/^/# /' "$tmp/err"
	notok "pkg-config --static --cflags --libs kcoll links libkcoll.a"
fi

# 4. The program needs no libkcoll at run time, and runs.
if [ -x "$tmp/prog_static" ] && ! readelf -d "$tmp/prog_static" | grep -q 'libkcoll' &&
	"$tmp/prog_static" | grep -q "comm_id 0"; then
	ok "the static program runs without libkcoll.so"
else
	notok "the static program runs without libkcoll.so"
fi

# 5. The page's form for an archive next to the shared object: name the archive.
if $CC -o "$tmp/prog_named" "$tmp/prog.c" $(pkg-config --cflags kcoll) "$libdir/libkcoll.a" \
	$(pkg-config --static --libs-only-other kcoll) $(pkg-config --libs libmnl) \
	2>"$tmp/err" && ! readelf -d "$tmp/prog_named" | grep -q 'libkcoll' &&
	"$tmp/prog_named" >/dev/null; then
	ok "naming libkcoll.a with pkg-config's private libraries links and runs"
else
	sed -e 's/^/# /' "$tmp/err"
	notok "naming libkcoll.a with pkg-config's private libraries links and runs"
fi

# 6. kcoll.pc declares the dependency both ways (Requires.private for pkg-config,
# Libs.private for tools that read only Libs).
pc="$PKG_CONFIG_PATH/kcoll.pc"
if grep -q '^Requires.private:.*libmnl' "$pc" && grep -q '^Libs.private:.*-lmnl' "$pc"; then
	ok "kcoll.pc: Requires.private libmnl, Libs.private -lmnl"
else
	notok "kcoll.pc: Requires.private libmnl, Libs.private -lmnl"
fi
exit $fail
