# shellcheck shell=sh
# Minimal TAP 13 output for shell selftests, in the kselftest format; sourced.
#   ktap_begin; ktap_test "what it checks" cmd args...; ...; ktap_end
# A test's output is kept as TAP comments, so a failure explains itself in the log.

KTAP_N=0
KTAP_FAILED=0

ktap_begin() { echo "TAP version 13"; }

ktap_result() {	# ktap_result RC DESCRIPTION
	KTAP_N=$((KTAP_N + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $KTAP_N $2"
	else
		KTAP_FAILED=$((KTAP_FAILED + 1))
		echo "not ok $KTAP_N $2"
	fi
}

ktap_test() {	# ktap_test DESCRIPTION CMD...
	_d=$1
	shift
	_out=$("$@" 2>&1)
	_rc=$?
	[ -n "$_out" ] && printf '%s\n' "$_out" | sed 's/^/# /'
	ktap_result $_rc "$_d"
}

ktap_skip() { KTAP_N=$((KTAP_N + 1)); echo "ok $KTAP_N $1 # SKIP $2"; }

ktap_end() {
	echo "1..$KTAP_N"
	echo "# Totals: pass:$((KTAP_N - KTAP_FAILED)) fail:$KTAP_FAILED"
	[ "$KTAP_FAILED" -eq 0 ]
}

# fail MESSAGE: print why and return failure, for use inside test functions.
fail() { echo "$*"; return 1; }

# wait_for SECONDS CMD...: poll until CMD succeeds (device events are asynchronous).
wait_for() {
	_t=$(($1 * 10))
	shift
	while ! "$@" >/dev/null 2>&1; do
		_t=$((_t - 1))
		[ $_t -le 0 ] && return 1
		sleep 0.1
	done
}
