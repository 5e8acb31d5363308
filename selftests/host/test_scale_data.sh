#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Documentation/scale/ (the data and plots of Documentation/scale.rst) is complete and still
# kcoll-sim's answer: tools/kcoll-sim/scale.py --check, TAP.
top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
exec python3 "$top/tools/kcoll-sim/scale.py" --check
