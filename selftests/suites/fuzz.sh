#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The fuzzer suite (Documentation/testing.rst, "The fuzzer"), on every node of a 1- or 2-VM
# rig: kcoll_fuzz for FUZZ_SECONDS with seed FUZZ_SEED (the same on every node, so their
# communicators connect).  The program of the iteration running goes to $RIG_DIR/fuzz.log
# before it starts: after a kernel crash that file is the reproducer (kcoll_fuzz --replay).
# FUZZ_AVOID steps around known kernel bugs (see selftests/fuzz/crashes/README.rst);
# FUZZ_REPLAY=FILE replays a logged program instead (FUZZ_REPEAT times).
. rig/guest/lib.sh
rig_suite_up

if [ -n "${FUZZ_REPLAY:-}" ]; then
	# A logged program again, FUZZ_REPEAT times (races need a few tries).
	echo "node$RIG_NODE: kcoll_fuzz --replay $FUZZ_REPLAY -n ${FUZZ_REPEAT:=1}"
	build/selftests/fuzz/kcoll_fuzz --replay "$FUZZ_REPLAY" -n "$FUZZ_REPEAT" \
		>"$tap/kcoll_fuzz.tap" 2>"$RIG_DIR/fuzz.err"
else
	echo "node$RIG_NODE: kcoll_fuzz -s ${FUZZ_SEED:=1} -t ${FUZZ_SECONDS:=180}" \
		"-j ${FUZZ_THREADS:=3} --avoid ${FUZZ_AVOID:=none}"
	build/selftests/fuzz/kcoll_fuzz -s "$FUZZ_SEED" -t "$FUZZ_SECONDS" -j "$FUZZ_THREADS" \
		--avoid "$FUZZ_AVOID" -o "$RIG_DIR/fuzz.log" >"$tap/kcoll_fuzz.tap" \
		2>"$RIG_DIR/fuzz.err"
fi
grep '^#' "$tap/kcoll_fuzz.tap" | head -n 3
[ "$RIG_NNODES" -gt 1 ] && rig_barrier fuzz-done 300

# Everything the fuzzer made must be gone with its processes: the module unloads.
{
	echo "TAP version 13"
	echo "1..1"
	if modprobe -r kcoll; then
		echo "ok 1 kcoll unloads after the fuzzer"
	else
		ls /sys/kernel/kcoll/comms 2>/dev/null | sed 's/^/# left: /'
		echo "not ok 1 kcoll unloads after the fuzzer"
	fi
} >"$tap/kcoll_fuzz_unload.tap" 2>&1
rig_kmemleak_check >"$tap/kmemleak.tap" 2>&1
exit 0
