#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# make bench's report and profile readers without a VM: selftests/bench/test_report.py
# (bench/report.py and check_report.py on synthetic result directories, the same-host part
# included) and test_trace_local.py (bench/trace_local.py on a synthetic trace).  TAP each.
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
rc=0
python3 "$top/selftests/bench/test_report.py" || rc=1
python3 "$top/selftests/bench/test_trace_local.py" || rc=1
exit $rc
