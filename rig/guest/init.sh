#!/bin/sh
# PID 1 of a rig VM, on the host root (read-only over 9p).  Makes the writable places a
# Debian userspace expects, mounts the run directory shared with the host, runs the node's
# job, saves its dmesg and powers off.  rig_node= comes from the kernel command line.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

# mnt TYPE WHERE: mount unless already done.  Through 9p, the host's own /proc, /sys and
# /dev look like mount points too (multidevs=remap), so "mounted" means "not 9p".
mnt() {
	if [ "$(stat -f -c %T "$2" 2>/dev/null)" = v9fs ] || ! mountpoint -q "$2"; then
		mount -t "$1" "$1" "$2"
	fi
}
mnt proc /proc
mnt sysfs /sys
mnt devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mnt devpts /dev/pts
mnt tmpfs /dev/shm
for d in /tmp /run /var/tmp /root; do
	mnt tmpfs $d
done
mnt debugfs /sys/kernel/debug
mnt tracefs /sys/kernel/tracing
mkdir -p /run/rig
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rig /run/rig

# A hung task is a failure the host must see quickly, not after the default two minutes.
echo 30 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

node=${rig_node:-0}
dir=/run/rig/node$node
. "$dir/job.env"

# The staged module directory (the guest kernel's modules plus kcoll's) becomes /lib/modules,
# so plain modprobe, and the kernel's own request_module(), find everything.
mount --bind "$RIG_MODROOT/lib/modules" /lib/modules
hostname "node$node"
ip link set lo up
export RIG_NODE=$node RIG_DIR=$dir
echo "rig: node$node running: $RIG_JOB"
(
	cd "$RIG_TOP" && sh -c "$RIG_JOB"
	echo $? >"$dir/job.rc"
) 2>&1 | tee "$dir/job.log"

dmesg >"$dir/dmesg.txt"
sync
umount /run/rig
echo o >/proc/sysrq-trigger
# PID 1 must not exit (that panics), and nothing may be exec'ed from the root while the
# devices power off: wait in the shell itself.
while :; do :; done
