#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bench/calibrate.py without a VM: selftests/bench/test_calibrate.py (reports kcoll-sim made
# itself come out with no error; the perftest start; no absolute path in the table).  TAP.
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
exec python3 "$top/selftests/bench/test_calibrate.py"
