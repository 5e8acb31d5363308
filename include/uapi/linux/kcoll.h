/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kcoll: collective communication over RDMA, driven by the kernel.
 *
 * This is the one uAPI header: kcoll.ko, libkcoll and the tools all include it.
 *
 * Conventions every ioctl follows (see Documentation/uapi.rst):
 *  - Commands are _IO() numbers: the argument size is not part of the command, so a struct can
 *    grow without a new command number.  The first field of every argument is @size, the number
 *    of bytes the caller knows about; the kernel reads the rest with copy_struct_from_user().
 *  - @size below the first published size of the struct: -EINVAL.  @size larger than the
 *    kernel's struct with a non-zero byte beyond it: -E2BIG (the caller asks for something this
 *    kernel does not know).  A larger @size with a zero tail is accepted.
 *  - Unknown bits in @flags, or a non-zero reserved field: -EINVAL.
 *  - A bad argument pointer: -EFAULT.  An unknown command: -ENOTTY.
 *  - Output is copied back for min(@size, kernel size) bytes; no byte the kernel did not set.
 */
#ifndef _UAPI_LINUX_KCOLL_H
#define _UAPI_LINUX_KCOLL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KCOLL_DEVICE_NAME	"kcoll"
#define KCOLL_DEVICE_PATH	"/dev/kcoll"

/* Bumped only for an incompatible change; additions are announced by feature bits. */
#define KCOLL_ABI_VERSION	1

#define KCOLL_IOC_MAGIC		0xCC

/**
 * enum kcoll_ioc_nr - ioctl numbers; bit (1 << nr) of kcoll_info.ioctls is set when the loaded
 * module serves command nr.  Append only.
 */
#define KCOLL_IOC_NR_GET_INFO	0x00

/* Feature bits reported in kcoll_info.features.  Append only. */
/* The module is an ib_client and tracks RDMA devices (always set since ABI 1). */
#define KCOLL_FEAT_RDMA_DEVICES	(1ULL << 0)
/* /sys/kernel/kcoll/ is populated. */
#define KCOLL_FEAT_SYSFS	(1ULL << 1)

/**
 * struct kcoll_info - argument of KCOLL_IOC_GET_INFO
 * @size:	(input) sizeof(struct kcoll_info) as the caller was compiled with
 * @flags:	(input) must be 0; no flag is defined yet
 * @abi_version: (output) KCOLL_ABI_VERSION of the loaded module
 * @ndevices:	(output) RDMA devices kcoll currently tracks
 * @features:	(output) KCOLL_FEAT_* bits
 * @ioctls:	(output) bit (1 << KCOLL_IOC_NR_*) for every command the module serves
 * @version:	(output) module version string, NUL terminated, e.g. "0.1.0"
 * @reserved:	(input) must be zero; (output) zero
 *
 * Return: 0, or -EINVAL (size too small, unknown flag, reserved not zero), -E2BIG (unknown
 * non-zero tail), -EFAULT (bad pointer).
 */
struct kcoll_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 ndevices;
	__aligned_u64 features;
	__aligned_u64 ioctls;
	char version[32];
	__aligned_u64 reserved[4];
};

/* First published size of each argument struct; a smaller @size is -EINVAL. */
#define KCOLL_INFO_SIZE_VER0	96

#define KCOLL_IOC_GET_INFO	_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_GET_INFO)

#endif /* _UAPI_LINUX_KCOLL_H */
