#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# PyTorch on kcoll, one rank per VM (suites torch2 and torch4, by name only: `import torch`
# alone takes 40-120 s under TCG).  The seed example examples/allreduce_seed.py with
# backend="kcoll" must print n(n+1)/2 on every rank, one process per VM and (2 VMs) under
# torchrun with two per VM; then selftests/pytorch/torch_check.py
# checks every torch.distributed call against a reference and a DDP loop against Gloo.
# The package runs from the tree (python/) on the tree's libkcoll.
. rig/guest/lib.sh
rig_suite_up

export PYTHONPATH="$RIG_TOP/python" LD_LIBRARY_PATH="$RIG_TOP/lib" PYTHONDONTWRITEBYTECODE=1
export MASTER_ADDR="$(rig_ip 0)" RANK="$RIG_NODE" WORLD_SIZE="$RIG_NNODES"
export GLOO_SOCKET_IFNAME=eth0

# seed_tap NAME NRANKS RANK... -- COMMAND...: TAP for one run of the seed, which must print
# "rank R: n(n+1)/2" for each RANK given (this node's ranks).
seed_tap() {
	name=$1 n=$2
	shift 2
	ranks=""
	while [ "$1" != "--" ]; do ranks="$ranks $1"; shift; done
	shift
	want=$((n * (n + 1) / 2))
	start=$(date +%s)
	out=$(timeout 900 "$@" 2>&1)
	rc=$?
	ok=1
	for r in $ranks; do
		echo "$out" | grep -qE "^(\[[a-z0-9]*\]:)?rank $r: $want\$" || ok=0
	done
	echo "TAP version 13"
	echo "1..1"
	echo "# $(($(date +%s) - start)) s, exit $rc"
	if [ $rc -eq 0 ] && [ $ok -eq 1 ]; then
		echo "ok 1 $name: ranks$ranks of $n print $want"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok 1 $name: ranks$ranks of $n print $want"
	fi
}

MASTER_PORT=29500 seed_tap allreduce_seed.py "$RIG_NNODES" "$RIG_NODE" -- \
	/usr/bin/python3 examples/allreduce_seed.py >"$tap/allreduce_seed_py.tap"
rig_barrier seed-done 900

# torchrun, two processes per VM (on 2 VMs: 4 ranks, this node's are 2N and 2N + 1).
# --redirects 1 --tee 1: torch 1.13's torchrun fails on Python 3.11 with the default
# (Std.from_str("0") is None there); with them each line comes prefixed "[default<i>]:".
if [ "$RIG_NNODES" -eq 2 ]; then
	seed_tap torchrun 4 $((2 * RIG_NODE)) $((2 * RIG_NODE + 1)) -- \
		torchrun --nnodes 2 --nproc_per_node 2 --node_rank "$RIG_NODE" \
		--master_addr "$MASTER_ADDR" --master_port 29502 --redirects 1 --tee 1 \
		examples/allreduce_seed.py >"$tap/torchrun_seed.tap"
	rig_barrier torchrun-done 900
fi

# mpirun -np 2 on this VM, each node on its own: the C seed through libkcoll's environment
# bootstrap, then the Python seed through kcoll.torch's launcher mapping.  SLURM_PROCID=0
# and SLURM_NTASKS=1 are what an sbatch script leaves to mpirun's processes: Open MPI's rank
# must win.  RANK and WORLD_SIZE (this suite's, for the one-process runs) must not be.
mpi="env -u RANK -u WORLD_SIZE OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	SLURM_PROCID=0 SLURM_NTASKS=1 mpirun -np 2 --oversubscribe --bind-to none
	-x MASTER_ADDR=$(rig_ip "$RIG_NODE") -x PYTHONPATH -x LD_LIBRARY_PATH
	-x PYTHONDONTWRITEBYTECODE"
# shellcheck disable=SC2086
seed_tap mpirun_seed_c 2 0 1 -- $mpi -x MASTER_PORT=29510 examples/allreduce_seed \
	>"$tap/mpirun_seed_c.tap"
# shellcheck disable=SC2086
seed_tap mpirun_seed_py 2 0 1 -- $mpi -x MASTER_PORT=29512 /usr/bin/python3 \
	examples/allreduce_seed.py >"$tap/mpirun_seed_py.tap"
rig_barrier mpirun-done 900

MASTER_PORT=29501 timeout 1500 /usr/bin/python3 selftests/pytorch/torch_check.py \
	>"$tap/torch_check.tap" 2>"$RIG_DIR/torch_check.stderr"
echo "torch_check exit $?" >>"$RIG_DIR/torch_check.stderr"
rig_barrier check-done 1500
ls /sys/kernel/kcoll/comms >"$RIG_DIR/comms-left.txt"
modprobe -r kcoll
exit 0
