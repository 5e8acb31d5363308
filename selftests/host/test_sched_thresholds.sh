#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The module's selection thresholds (small_bytes, medium_bytes, tree_ranks) in core/ and
# kmod/kcoll_config.h are the ones kcoll-sim's model derives (Documentation/scale.rst,
# "Selection"): tools/kcoll-sim/thresholds.py --check, TAP.
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
exec python3 "$top/tools/kcoll-sim/thresholds.py" --check
