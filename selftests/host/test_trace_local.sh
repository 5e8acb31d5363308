#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bench/trace_local.py (the same-host profile's reader) on a synthetic trace, without a VM:
# selftests/bench/test_trace_local.py.  TAP.
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
exec python3 "$top/selftests/bench/test_trace_local.py" 2>/dev/null
