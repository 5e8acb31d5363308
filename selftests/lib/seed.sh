# shellcheck shell=sh
# The seed example through libkcoll's env bootstrap, as TAP; sourced by the suites.
#   seed_tap RANK NRANKS [ROOT_ADDR]: allreduce_seed must print "rank RANK: n(n+1)/2"

seed_tap() {
	_want=$(($2 * ($2 + 1) / 2))
	_out=$(KCOLL_RANK=$1 KCOLL_NRANKS=$2 KCOLL_BOOTSTRAP_ADDR=$3 \
		timeout 120 examples/allreduce_seed 2>&1)
	_rc=$?
	echo "TAP version 13"
	echo "1..1"
	if [ $_rc -eq 0 ] && [ "$_out" = "rank $1: $_want" ]; then
		echo "ok 1 allreduce_seed on $2 rank(s) prints $_want"
	else
		echo "# $_out (exit $_rc)"
		echo "not ok 1 allreduce_seed on $2 rank(s) prints $_want"
	fi
}

# seed_algo_num NAME: the uAPI number of an algorithm (include/kcoll_names.h's order), the
# trace's algo=.
seed_algo_num() {
	sed -n '/^#define KCOLL_ALGORITHM_NAMES/,/[^\\]$/p' include/kcoll_names.h |
		grep -o '"[a-z0-9_]*"' | tr -d '"' | grep -nx "$1" | cut -d: -f1 |
		awk '{ print $1 - 1 }'
}

# seed_trace_on, seed_trace_algos: trace kcoll_op_start; then the algorithm numbers of the
# all-reduces (coll=4) it saw, one a line.
seed_trace_on() {
	_t=/sys/kernel/tracing
	[ -d $_t/events ] || mount -t tracefs tracefs $_t
	echo >$_t/trace
	echo 1 >$_t/events/kcoll/kcoll_op_start/enable
}
seed_trace_algos() {
	echo 0 >/sys/kernel/tracing/events/kcoll/kcoll_op_start/enable
	grep -o "kcoll_op_start:.* coll=4 algo=[0-9]* " /sys/kernel/tracing/trace |
		sed 's/.* algo=\([0-9]*\) $/\1/'
}

# seed_local_tap NODE ROOT_ADDR WANT: ranks 2*NODE and 2*NODE+1 of 4 on this node; both must
# print 10, and the kernel must run the all-reduce with algorithm WANT (a name) on both:
# libkcoll tells it which ranks share a host (locality), and its AUTO selection decides.
seed_local_tap() {
	# not _want: seed_tap sets that (shell functions share their variables)
	_lwant=$(seed_algo_num "$3")
	seed_trace_on
	_r=$((2 * $1))
	seed_tap $_r 4 "$2" >"$RIG_DIR/seed_local0.tap" &
	seed_tap $((_r + 1)) 4 "$2" >"$RIG_DIR/seed_local1.tap"
	wait
	_algos=$(seed_trace_algos)
	_n=$(echo "$_algos" | grep -cx "$_lwant")
	echo "TAP version 13"
	echo "1..2"
	if grep -q "^ok" "$RIG_DIR/seed_local0.tap" && grep -q "^ok" "$RIG_DIR/seed_local1.tap"
	then
		echo "ok 1 allreduce_seed, 2 VMs x 2 ranks, prints 10"
	else
		grep -h "^#" "$RIG_DIR"/seed_local*.tap
		echo "not ok 1 allreduce_seed, 2 VMs x 2 ranks, prints 10"
	fi
	if [ -n "$_lwant" ] && [ "$_n" -eq 2 ]; then
		echo "ok 2 both local ranks ran the all-reduce with $3 (algo $_lwant)"
	else
		echo "$_algos" | sed 's/^/# algo=/'
		echo "not ok 2 both local ranks ran the all-reduce with $3 (algo $_lwant): $_n of 2"
	fi
}

# seed_flat_tap NODE NNODES ROOT_ADDR: the seed, one rank a VM (no two ranks share a host),
# must print n(n+1)/2 and not run hierarchically: without locality there is no HIER.
seed_flat_tap() {
	_hier=$(seed_algo_num hier)
	seed_trace_on
	seed_tap "$1" "$2" "$3" >"$RIG_DIR/seed_flat.tap"
	_algos=$(seed_trace_algos | tr '\n' ' ')
	echo "TAP version 13"
	echo "1..2"
	sed -n 's/^\(not \)\{0,1\}ok 1 /&/p; /^#/p' "$RIG_DIR/seed_flat.tap"
	if [ -n "$_algos" ] && ! echo " $_algos" | grep -q " $_hier "; then
		echo "ok 2 one rank a VM: the all-reduce is not hierarchical (algo $_algos)"
	else
		echo "not ok 2 one rank a VM: the all-reduce is not hierarchical (algo $_algos)"
	fi
}
