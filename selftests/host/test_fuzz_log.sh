#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The fuzzer's program log (Documentation/testing.rst, "The fuzzer"): a logged program is the
# program that replays, v[5] (COMM_CREATE's transport, size, secret and locality choices)
# included; a log written before v[5] still replays (as v[5] 0); a seed's programs are pinned.
# No kernel needed: kcoll_fuzz --print [--replay LOG] only generates and parses.  TAP output.
set -u
cd "$(dirname "$0")"
TOP=${TOP:-$(cd ../.. && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fz=$tmp/kcoll_fuzz
fail=0

# ok N DESCRIPTION / nok N DESCRIPTION
ok() { echo "ok $1 - $2"; }
nok() { echo "not ok $1 - $2"; fail=1; }

echo "TAP version 13"
echo "1..4"
if ! make -s -C "$TOP/selftests/fuzz" OUT="$tmp" >"$tmp/build.log" 2>&1; then
	sed 's/^/# /' "$tmp/build.log"
	nok 1 "kcoll_fuzz builds"
	exit 1
fi

# 1: print, replay, print again: the same text, six values an operation.
bad=
for it in 0 1 7 100; do
	"$fz" --print -s 0x5eed --first $it -j 3 >"$tmp/a.log"
	"$fz" --print --replay "$tmp/a.log" >"$tmp/b.log" || bad="$bad replay-of-$it"
	cmp -s "$tmp/a.log" "$tmp/b.log" || bad="$bad differs-$it"
	grep -q '^t[0-9] comm_create .*v\(0x[0-9a-f]*,\)\{5\}0x[0-9a-f]*[1-9a-f][0-9a-f]*$' \
		"$tmp/a.log" || bad="$bad no-v5-$it"
done
if [ -z "$bad" ]; then
	ok 1 "a printed program replays as the same program, v[5] included"
else
	nok 1 "round trip:$bad"
fi

# 2: a log of five values an operation (before v[5]) replays with v[5] 0.
"$fz" --print -s 3 --first 2 -j 2 | sed 's/,0x[0-9a-f]*$//' >"$tmp/old.log"
if "$fz" --print --replay "$tmp/old.log" >"$tmp/new.log" &&
   [ "$(grep -c '^t' "$tmp/new.log")" = "$(grep -c '^t' "$tmp/old.log")" ] &&
   ! grep '^t' "$tmp/new.log" | grep -vq ',0x0$' &&
   diff <(sed 's/,0x0$//' "$tmp/new.log") "$tmp/old.log" >/dev/null; then
	ok 2 "a log without v[5] replays, v[5] 0"
else
	nok 2 "a log without v[5] does not replay as written"
fi

# 3: the programs of a seed are pinned (v[0..4] are the stream of before v[5]).
cat >"$tmp/want.log" <<'EOF'
# kcoll_fuzz seed=0x1 iter=0 rank=0 nnodes=1 threads=1 avoid=0x0
t0 open m0 s0,0,0 v0x0,0x0,0x0,0x0,0x0,0x83ec686c1600460b
t0 comm_create m0 s0,99,241 v0x6775dc7701564f61,0x9afcd44d14cf8bfe,0x7476cf8a4baa5dc0,0x87b341d690d7a28a,0x6f9b6dae6f4c57a8,0xc14bf009de212e89
t0 comm_create m0 s247,53,171 v0x10e2c46865e98746,0x14d7973c5c2a449c,0x7ef1fd0ed1548fcd,0x1f8410633ef306ac,0x497305c5d1aab99f,0x64950d26293ff4ff
t0 coll m0 s12,245,193 v0x990cd70b12c5d084,0x962b1967c90789ba,0x65ace2685a072c6d,0x70616f2f48dce01c,0x40d6824e2ef3fc17,0xe7ea31619ae9516d
EOF
if RIG_NODE=0 RIG_NNODES=1 "$fz" --print -s 1 --first 0 -j 1 -l 4 | cmp -s - "$tmp/want.log"; then
	ok 3 "seed 1's first program is the pinned one"
else
	nok 3 "seed 1's first program changed (old seeds no longer reproduce)"
fi

# 4: a log that is not one is refused.
echo "t0 no_such_op m0 s0,0,0 v0x0,0x0,0x0,0x0,0x0" >"$tmp/junk.log"
if ! "$fz" --print --replay "$tmp/junk.log" >/dev/null 2>&1; then
	ok 4 "an unknown operation in a log is refused"
else
	nok 4 "an unknown operation in a log was accepted"
fi
[ "$fail" = 0 ]
