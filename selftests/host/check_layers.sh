#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The layer rule of kmod/ (Documentation/design.rst, "Layers"): a file calls only functions
# of its own layer or of lower ones; a lower layer reaches a higher one only through a
# callback the higher one registered (kcoll_rx_register_handler(), struct kcoll_req_ops).
#
# Point-to-point, buffers and collectives (layers 3 and 4) reach a peer only through its
# transport's operations table (struct kcoll_transport, kmod/kcoll_transport.h): they name
# no ib_/rdma_ function, type or constant, and call no function of an RDMA transport file.
#
# Usage: check_layers.sh [KMOD_DIR [ALLOW_FILE]]; prints TAP, exits 1 on a failure.
#
# The call graph is grepped: a function defined (at column 0, not static or static) in a
# file of layer L and called by name in a file of a lower layer is a violation.  The calls
# that predate the rule are listed in ALLOW_FILE ("caller.c callee" lines); the list may
# only shrink: a listed call that is gone fails too, so the list is kept exact.
set -u
dir=${1:-$(dirname "$0")/../../kmod}
allow=${2:-$(dirname "$0")/layers.allow}

# Lowest first.  A file not listed here fails: every new file takes a place.
layer_of() {
	case $1 in
	kcoll_trace.c|kcoll_uarg.c|kcoll_engine.c|kcoll_fault.c|kcoll_state.c) echo 0 ;; # helpers
	kcoll_region.c) echo 0 ;;					# memory (pages)
	kcoll_locality.c) echo 0 ;;					# ranks' locality (data)
	kcoll_transport.c) echo 1 ;;					# transport interface
	rdma.c|rdma_dev.c|rdma_listen.c|rdma_conn.c|rdma_cm.c|rdma_qp.c|rdma_mr.c) echo 1 ;; # RDMA
	loop.c) echo 1 ;;						# loopback
	tcp.c|tcp_conn.c|tcp_listen.c) echo 1 ;;			# kernel TCP
	keyed_mem.c|ends.c|auth.c) echo 1 ;;					# shared by transports
	kcoll_rx.c) echo 2 ;;						# receive dispatch
	kcoll_config.c) echo 2 ;;					# the settings store
	kcoll_p2p.c|kcoll_req.c|kcoll_pending.c|kcoll_buf.c) echo 3 ;;	# point-to-point
	kcoll_coll.c|kcoll_op.c|kcoll_local.c|kcoll_local_big.c) echo 4 ;;	# collectives
	kcoll_comm.c|kcoll_comm_ioctl.c|kcoll_conn.c|kcoll_comm_desc.c|kcoll_chrdev.c|kcoll_sysfs.c) echo 5 ;; # control
	kcoll_nl.c|kcoll_nl_dev.c|kcoll_nl_comm.c|kcoll_nl_config.c|kcoll_nl_engine.c) echo 5 ;;
	kcoll_main.c) echo 6 ;;						# brings them all up
	*) echo "" ;;
	esac
}

# The RDMA transport's files: nothing above the transport interface calls into them.
is_rdma() {
	case $1 in
	rdma.c|rdma_*.c) return 0 ;;
	*) return 1 ;;
	esac
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0

# The sources, without what Kbuild generates.
srcs=$(ls "$dir"/*.c "$dir"/transport/*.c 2>/dev/null | grep -v '\.mod\.c$')

# Definitions: "file function", from lines starting with a type and ending without ';'.
for f in $srcs; do
	b=$(basename "$f")
	grep -E '^[a-z][a-z0-9_ *]*[ *]kcoll_[a-z0-9_]+\(' "$f" | grep -v ';[[:space:]]*$' |
		sed -E 's/^[^(]*[ *](kcoll_[a-z0-9_]+)\(.*/\1/' | sed "s/^/$b /"
done | sort -u >"$tmp/defs"

# Calls: "caller callee" for every kcoll_ function called by name outside its definition.
for f in $srcs; do
	b=$(basename "$f")
	grep -vE '^[a-z][a-z0-9_ *]*[ *]kcoll_[a-z0-9_]+\([^;]*$' "$f" |
		grep -oE '\bkcoll_[a-z0-9_]+\(' | tr -d '(' | sort -u | sed "s/^/$b /"
done >"$tmp/calls"

: >"$tmp/found"
for f in $srcs; do
	b=$(basename "$f")
	n=$((n + 1))
	if [ -z "$(layer_of "$b")" ]; then
		echo "not ok $n - $b has no layer (check_layers.sh: layer_of)"
		fail=1
	else
		echo "ok $n - $b is in layer $(layer_of "$b")"
	fi
done
while read -r caller callee; do
	def=$(awk -v fn="$callee" '$2 == fn { print $1; exit }' "$tmp/defs")
	[ -n "$def" ] && [ "$def" != "$caller" ] || continue
	lc=$(layer_of "$caller") ld=$(layer_of "$def")
	[ -n "$lc" ] && [ -n "$ld" ] || continue
	[ "$ld" -gt "$lc" ] && echo "$caller $callee"
done <"$tmp/calls" | sort -u >"$tmp/found"

# Above the transport: only its operations.  Comments may name what they like.
for f in $srcs; do
	b=$(basename "$f")
	l=$(layer_of "$b")
	[ "$l" = 3 ] || [ "$l" = 4 ] || continue
	n=$((n + 1))
	bad=$(sed -e 's|//.*||' -e 's|/\*.*\*/||' "$f" | grep -vE '^[[:space:]]*(\*|/\*)' |
	      grep -oE '\b(ib|rdma|IB|RDMA)_[A-Za-z0-9_]+' | sort -u | tr '\n' ' ')
	while read -r caller callee; do
		[ "$caller" = "$b" ] || continue
		def=$(awk -v fn="$callee" '$2 == fn { print $1; exit }' "$tmp/defs")
		[ -n "$def" ] && is_rdma "$def" && bad="$bad$callee() of $def "
	done <"$tmp/calls"
	if [ -n "$bad" ]; then
		echo "not ok $n - $b (layer $l) names the RDMA transport: ${bad% }:" \
		     "call through conn->tp (struct kcoll_transport) instead"
		fail=1
	else
		echo "ok $n - $b reaches peers only through struct kcoll_transport"
	fi
done

grep -v '^#' "$allow" 2>/dev/null | grep -v '^[[:space:]]*$' | sort -u >"$tmp/allow"
while read -r caller callee; do
	n=$((n + 1))
	if grep -qx "$caller $callee" "$tmp/allow"; then
		echo "ok $n - $caller calls up into $callee # TODO listed in layers.allow"
	else
		echo "not ok $n - $caller (layer $(layer_of "$caller")) calls up into $callee" \
		     "(layer $(layer_of "$(awk -v fn="$callee" '$2 == fn { print $1; exit }' \
		     "$tmp/defs")")): register a callback instead"
		fail=1
	fi
done <"$tmp/found"
while read -r caller callee; do
	grep -qx "$caller $callee" "$tmp/found" && continue
	n=$((n + 1))
	echo "not ok $n - layers.allow lists $caller -> $callee, which is gone: remove the line"
	fail=1
done <"$tmp/allow"
echo "1..$n"
exit $fail
