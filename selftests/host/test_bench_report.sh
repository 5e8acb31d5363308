#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# make bench's report without a VM: selftests/bench/test_report.py (bench/report.py and
# check_report.py on synthetic result directories, the same-host part included).  TAP.
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
exec python3 "$top/selftests/bench/test_report.py"
