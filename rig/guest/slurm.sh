# shellcheck shell=sh
# A Slurm cluster of the rig's VMs (the slurm2 suite); sourced after rig/guest/lib.sh, once
# rig_suite_up has the segment up.  The daemons are the host's Debian packages (rig/deps.sh
# launchers), run from the read-only root with everything they write in /run (tmpfs, per VM)
# or in the run directory: munged on every node with one key that node 0 draws, slurmctld on
# node 0, slurmd on every node, all reading the one slurm.conf node 0 writes.
#
#   slurm_up	start this node's daemons; on node 0 wait until every node is idle
#   slurm_down	stop this node's daemons

SLURM_SHARED=/run/rig/slurm	# slurm.conf, the munge key, slurmctld's state: seen by all
SLURM_RUN=/run/slurm		# spool, pid files: this VM's
export SLURM_CONF=$SLURM_SHARED/slurm.conf

# The configuration: no cgroup anywhere, no accounting, no MPI plugin (so
# nothing but Slurm's own SLURM_* variables gives a task its rank).  CPUs=2 on a one-CPU VM
# (config_overrides keeps slurmd from draining the node) lets a test place two tasks a node.
# The timeouts are generous: four daemons and the tests share one emulated CPU a VM.
slurm_conf() {
	cat <<EOF
ClusterName=rig
SlurmctldHost=node0($(rig_ip 0))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MessageTimeout=60
SlurmctldTimeout=300
SlurmdTimeout=300
InactiveLimit=0
KillWait=30
StateSaveLocation=$SLURM_RUN/ctld
SlurmdSpoolDir=$SLURM_RUN/d
SlurmctldPidFile=$SLURM_RUN/slurmctld.pid
SlurmdPidFile=$SLURM_RUN/slurmd.pid
SlurmctldLogFile=/run/rig/node0/slurmctld.log
SlurmdLogFile=/run/rig/%n/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
EOF
	for i in $(seq 0 $((RIG_NNODES - 1))); do
		echo "NodeName=node$i NodeAddr=$(rig_ip "$i") CPUs=2 State=UNKNOWN"
	done
	echo "PartitionName=rig Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
}

# cgroup.conf, read from beside slurm.conf.  slurmd 22.05 loads a cgroup plugin even when
# nothing uses it, and the autodetected one fails for want of /sys/fs/cgroup, which the guest
# leaves unmounted ("slurmd initialization failed"); cgroup/v1's initialisation touches
# nothing, and with proctrack/linuxproc and task/none nothing calls it afterwards.
slurm_cgroup_conf() {
	echo "CgroupPlugin=cgroup/v1"
}

# slurm_wait_idle SECS: until sinfo lists every node idle.
slurm_wait_idle() {
	_t=$1
	while [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" -lt "$RIG_NNODES" ]; do
		_t=$((_t - 2))
		if [ $_t -le 0 ]; then
			echo "slurm: not every node is idle:" >&2
			sinfo -N -l >&2
			return 1
		fi
		sleep 2
	done
}

slurm_up() {
	for _b in munged slurmctld slurmd srun sinfo; do
		command -v $_b >/dev/null || {
			echo "slurm: no $_b on the host: run rig/deps.sh launchers" >&2
			return 1
		}
	done
	mkdir -p $SLURM_RUN/ctld $SLURM_RUN/d
	if [ "$RIG_NODE" -eq 0 ]; then
		mkdir -p $SLURM_SHARED
		(umask 077 && head -c 128 /dev/urandom >$SLURM_SHARED/munge.key.new) &&
			mv $SLURM_SHARED/munge.key.new $SLURM_SHARED/munge.key &&
			slurm_cgroup_conf >$SLURM_SHARED/cgroup.conf &&
			slurm_conf >$SLURM_SHARED/slurm.conf.new &&
			mv $SLURM_SHARED/slurm.conf.new $SLURM_CONF || return 1
	fi
	rig_barrier slurm-conf 120 || return 1

	# Every node's name resolves (slurmd and srun look up their own): the guest's own
	# /etc/hosts, bound over the host's read-only one.
	{
		cat /etc/hosts
		for i in $(seq 0 $((RIG_NNODES - 1))); do
			echo "$(rig_ip "$i") node$i"
		done
	} >$SLURM_RUN/hosts
	mount --bind $SLURM_RUN/hosts /etc/hosts

	# munged wants its key private to it: a copy in this VM's /run.  --force: its log is
	# in the run directory, whose modes come from the host's umask.
	mkdir -p /run/munge
	chmod 755 /run/munge
	(umask 077 && cp $SLURM_SHARED/munge.key /run/munge/munge.key) || return 1
	munged --force --key-file=/run/munge/munge.key --seed-file=/run/munge/munged.seed \
		--log-file="$RIG_DIR/munged.log" --pid-file=/run/munge/munged.pid || return 1
	if [ "$RIG_NODE" -eq 0 ]; then
		slurmctld -f $SLURM_CONF || return 1
	fi
	slurmd -f $SLURM_CONF -N "node$RIG_NODE" || return 1
	if [ "$RIG_NODE" -eq 0 ]; then
		slurm_wait_idle 300 || return 1
	fi
}

slurm_down() {
	for _p in $SLURM_RUN/slurmd.pid $SLURM_RUN/slurmctld.pid /run/munge/munged.pid; do
		[ -f "$_p" ] && kill "$(cat "$_p")" 2>/dev/null
	done
	return 0
}
