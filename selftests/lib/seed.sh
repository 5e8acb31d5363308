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
