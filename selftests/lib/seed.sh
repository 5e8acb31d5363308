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

# seed_local_tap NODE ROOT_ADDR: ranks 2*NODE and 2*NODE+1 of 4 on this node; both must print
# 10, and the kernel must run the all-reduce hierarchically (locality: kcoll_op_start's
# algo=9, KCOLL_ALG_HIER, with coll=4, all-reduce).
seed_local_tap() {
	_t=/sys/kernel/tracing
	[ -d $_t/events ] || mount -t tracefs tracefs $_t
	echo >$_t/trace
	echo 1 >$_t/events/kcoll/kcoll_op_start/enable
	_r=$((2 * $1))
	seed_tap $_r 4 "$2" >"$RIG_DIR/seed_local0.tap" &
	seed_tap $((_r + 1)) 4 "$2" >"$RIG_DIR/seed_local1.tap"
	wait
	echo 0 >$_t/events/kcoll/kcoll_op_start/enable
	_hier=$(grep -c "kcoll_op_start:.* coll=4 algo=9 " $_t/trace)
	echo "TAP version 13"
	echo "1..2"
	if grep -q "^ok" "$RIG_DIR/seed_local0.tap" && grep -q "^ok" "$RIG_DIR/seed_local1.tap"
	then
		echo "ok 1 allreduce_seed, 2 VMs x 2 ranks, prints 10"
	else
		grep -h "^#" "$RIG_DIR"/seed_local*.tap
		echo "not ok 1 allreduce_seed, 2 VMs x 2 ranks, prints 10"
	fi
	if [ "$_hier" -eq 2 ]; then
		echo "ok 2 both local ranks ran the all-reduce hierarchically"
	else
		grep kcoll_op_start $_t/trace | sed 's/^/# /'
		echo "not ok 2 both local ranks ran the all-reduce hierarchically ($_hier of 2)"
	fi
}
