#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run host test binaries as kselftest's runner does: one outer TAP stream, each binary's own
# TAP output nested under it as comments.  Exit status 1 if any binary failed.
#
# VALGRIND=1: run each binary under valgrind; a memory error or leak fails the binary.
set -u
cd "$(dirname "$0")"

vg=()
if [ -n "${VALGRIND:-}" ] && [ "${VALGRIND}" != 0 ]; then
	if ! command -v valgrind >/dev/null; then
		echo "run.sh: VALGRIND set but valgrind is not installed" >&2
		exit 1
	fi
	# Children are followed (the harness forks per test, tests exec kcollctl) but not
	# python3, whose own allocations are not ours to judge.  Reports go to files: the tests
	# compare kcollctl's stderr byte for byte.
	vgdir=$(mktemp -d)
	trap 'rm -rf "$vgdir"' EXIT
	vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	    --trace-children=yes --trace-children-skip='*python3*,*/bin/sh'
	    --log-file="$vgdir/%p.log")
fi

# Valgrind's reports of one binary as TAP comments; its note about our ioctl (unknown to it,
# _IO() has no size to check) is noise.
vg_report()
{
	[ -n "${vgdir:-}" ] || return 0
	cat "$vgdir"/*.log 2>/dev/null | grep -v -e 'unhandled ioctl 0xcc' \
		-e 'could cause spurious value errors' -e 'README_MISSING_SYSCALL_OR_IOCTL' |
		sed -e 's/^/# /'
	rm -f "$vgdir"/*.log
}

echo "TAP version 13"
echo "1..$#"
n=0
fail=0
for t in "$@"; do
	n=$((n + 1))
	echo "# selftests: host: $t"
	# Scripts (#!) run as they are: valgrind would check the interpreter and the compilers.
	run=("${vg[@]}")
	[ "$(head -c 2 "./$t")" = '#!' ] && run=()
	"${run[@]}" "./$t" 2>&1 | sed -e 's/^/# /'
	rc=${PIPESTATUS[0]}
	vg_report
	case $rc in
	0) echo "ok $n selftests: host: $t" ;;
	4) echo "ok $n selftests: host: $t # SKIP" ;;
	*) echo "not ok $n selftests: host: $t # exit=$rc"; fail=1 ;;
	esac
done
exit $fail
