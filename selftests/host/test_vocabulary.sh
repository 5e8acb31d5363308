#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# One vocabulary: the names of the uAPI's datatypes, reduction operations, collectives and
# algorithms are spelled once, in include/kcoll_names.h.  libkcoll (lib/names.c), kcollctl,
# kcoll-perf, kcolllat and core/ use that list; a second table in their C sources (a string
# literal that is exactly one of the names) fails here.  Help texts ("{ sum | prod }") and
# tests are not tables.  TAP output.
set -u
cd "$(dirname "$0")"
TOP=${TOP:-$(cd ../.. && pwd)}
hdr=$TOP/include/kcoll_names.h

echo "TAP version 13"
echo "1..2"
# The names, from the header's macros.
names=$(sed -n '/^#define KCOLL_[A-Z_]*_NAMES/,/[^\\]$/p' "$hdr" | grep -o '"[a-z0-9_]*"' | sort -u)
n=$(echo "$names" | wc -l)
if [ "$n" -ge 30 ]; then
	echo "ok 1 - $n names in include/kcoll_names.h"
else
	echo "not ok 1 - only $n names found in include/kcoll_names.h"
	exit 1
fi
# A table: a line (not a comment) with two of the names as literals of their own ("ring",
# not "{ auto | ring }"), or with a name nothing spells but a table.
hits=$(cd "$TOP" && grep -rnwF --include='*.c' --include='*.h' -f <(echo "$names") \
	lib tools core kmod include 2>/dev/null | grep -v '^include/kcoll_names.h:' |
	grep -v '^[^:]*:[0-9]*:[[:space:]]*\(/\*\|\*\|//\)' |
	awk -v names="$(echo $names)" '
		BEGIN { n = split(names, w, " "); for (i = 1; i <= n; i++) name[w[i]] = 1 }
		{ c = 0; line = $0
		  while (match(line, /"[a-z0-9_]+"/)) {
			t = substr(line, RSTART, RLENGTH)
			if (t in name) c++
			if (t ~ /^"(rabenseifner|reduce_scatterv|uint64|bf16|dbtree|pairwise)"$/) c += 2
			line = substr(line, RSTART + RLENGTH)
		  }
		  if (c >= 2) print }')
if [ -z "$hits" ]; then
	echo "ok 2 - no other table of the names in lib, tools, core, kmod, include"
else
	echo "$hits" | sed -e 's/^/# /'
	echo "not ok 2 - no other table of the names in lib, tools, core, kmod, include"
	exit 1
fi
