#!/bin/sh
# PID 1 of a rig VM, on the host root (read-only over 9p).  Makes the writable places a
# Debian userspace expects, mounts the run directory shared with the host, runs the node's
# job, saves its dmesg and powers off.  rig_node= comes from the kernel command line.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

# Mount everything afresh, even what the initramfs moved here: booted without one (the
# debug kernel), /proc, /sys and /dev are the host's own seen through 9p (read-only, and
# they even report the host's filesystem types), and a second mount of a real one is harmless.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null	# the debug kernel mounts it itself
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mkdir -p /run/rig
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 rig /run/rig

# A hung task is a failure the host must see quickly, not after the default two minutes.
f=/proc/sys/kernel/hung_task_timeout_secs
[ -w $f ] && echo 30 >$f

node=${rig_node:-0}
dir=/run/rig/node$node
. "$dir/job.env"

# Writable scratch where Debian expects it.  The repository itself may live below one of
# these (a CI clone in /tmp): keep it reachable through a bind mount of the host's copy.
mkdir -p /run/host
for d in /tmp /var/tmp /root; do
	mount --bind "$d" /run/host
	mount -t tmpfs tmpfs "$d"
	case "$RIG_TOP/" in
	"$d"/*)
		mkdir -p "$RIG_TOP"
		mount --bind "/run/host${RIG_TOP#"$d"}" "$RIG_TOP"
		;;
	esac
	umount -l /run/host
done

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
