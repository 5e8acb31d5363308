#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# libkcoll and kcoll.torch under a real Slurm (suite slurm2, by name only: it needs
# rig/deps.sh launchers).  Every VM runs munged and slurmd, node 0 slurmctld as well
# (rig/guest/slurm.sh); node 0 then starts the seed examples with srun across both VMs, where
# the rank and size come from nothing but Slurm's SLURM_PROCID and SLURM_NTASKS (no MPI
# plugin) and the bootstrap root from MASTER_ADDR, which srun passes on.  TAP on node 0 only.
. rig/guest/lib.sh
. rig/guest/slurm.sh
rig_suite_up

export LD_LIBRARY_PATH="$RIG_TOP/lib" PYTHONPATH="$RIG_TOP/python" PYTHONDONTWRITEBYTECODE=1
MASTER_ADDR=$(rig_ip 0)
export MASTER_ADDR

slurm_up >"$RIG_DIR/slurm_up.log" 2>&1
up=$?
echo "slurm_up exit $up" >>"$RIG_DIR/slurm_up.log"

# srun_tap NAME NRANKS PORT [SRUN_OPTION...] -- COMMAND...: TAP for one srun, which must
# exit 0 with every rank 0..NRANKS-1 printing "rank R: n(n+1)/2".
srun_tap() {
	name=$1 n=$2 port=$3
	shift 3
	want=$((n * (n + 1) / 2))
	echo "TAP version 13"
	echo "1..1"
	if [ $up -ne 0 ]; then
		sed 's/^/# /' "$RIG_DIR/slurm_up.log"
		echo "not ok 1 $name: ranks 0-$((n - 1)) print $want (Slurm did not come up)"
		return
	fi
	start=$(date +%s)
	out=$(MASTER_PORT=$port timeout 900 srun "$@" </dev/null 2>&1)
	rc=$?
	ok=1
	for r in $(seq 0 $((n - 1))); do
		echo "$out" | grep -qx "rank $r: $want" || ok=0
	done
	echo "# $(($(date +%s) - start)) s, exit $rc"
	if [ $rc -eq 0 ] && [ $ok -eq 1 ]; then
		echo "ok 1 $name: ranks 0-$((n - 1)) print $want"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok 1 $name: ranks 0-$((n - 1)) print $want"
	fi
}

if [ "$RIG_NODE" -eq 0 ]; then
	srun_tap srun_seed 2 29600 -N 2 -n 2 examples/allreduce_seed >"$tap/srun_seed.tap"
	srun_tap srun_seed_2x2 4 29610 -N 2 -n 4 --ntasks-per-node 2 examples/allreduce_seed \
		>"$tap/srun_seed_2x2.tap"

	# Without SLURM_PROCID nothing gives a task its rank (SLURM_NTASKS alone is half of
	# Slurm's pair): every task must stop at once with libkcoll's message, none may
	# reach the all-reduce.  A test that a missing rank is noticed, not guessed.
	msg="allreduce_seed: SLURM_NTASKS is set but SLURM_PROCID is not (Slurm)"
	{
		echo "TAP version 13"
		echo "1..1"
		name="srun_no_procid: both tasks fail with \"$msg\""
		if [ $up -ne 0 ]; then
			sed 's/^/# /' "$RIG_DIR/slurm_up.log"
			echo "not ok 1 $name (Slurm did not come up)"
		else
			out=$(MASTER_PORT=29620 timeout 300 srun -N 2 -n 2 \
				env -u SLURM_PROCID examples/allreduce_seed </dev/null 2>&1)
			rc=$?
			echo "# exit $rc"
			if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
			   [ "$(echo "$out" | grep -cxF "$msg")" -eq 2 ] &&
			   ! echo "$out" | grep -q "^rank "; then
				echo "ok 1 $name"
			else
				echo "$out" | sed 's/^/# /'
				echo "not ok 1 $name"
			fi
		fi
	} >"$tap/srun_no_procid.tap"

	# kcoll.torch maps SLURM_PROCID/SLURM_NTASKS to torch's RANK/WORLD_SIZE; one process
	# a VM (`import torch` alone takes a minute or two in a TCG guest).
	srun_tap srun_seed_py 2 29630 -N 2 -n 2 /usr/bin/python3 examples/allreduce_seed.py \
		>"$tap/srun_seed_py.tap"
	sinfo -N -l >"$RIG_DIR/sinfo.txt" 2>&1
fi
rig_barrier slurm-done 2400
slurm_down
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"
modprobe -r kcoll
exit 0
