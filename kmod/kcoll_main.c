// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: collective communication over RDMA, driven by the kernel.
 *
 * Module entry: parameters, the feature set, and the order in which the parts come up and go
 * down.  Bring-up is sysfs (so devices have a place to appear), then the ib_client (devices),
 * then /dev/kcoll last, so no user can reach a half-initialised module; tear-down is the exact
 * reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "kcoll.h"

static char *devices;
module_param(devices, charp, 0444);
MODULE_PARM_DESC(devices,
		 "Comma-separated RDMA device names kcoll may use (default: all devices)");

/**
 * kcoll_dev_name_allowed - does the devices= parameter let kcoll use this device?
 * @name: RDMA device name, e.g. "rxe0" or "mlx5_0"
 *
 * An empty or absent list allows every device, so a plain `modprobe kcoll` just works.
 */
bool kcoll_dev_name_allowed(const char *name)
{
	const char *p = devices;
	size_t len = strlen(name);

	if (!p || !*p)
		return true;
	while (*p) {
		const char *end = strchrnul(p, ',');

		if (end - p == len && !strncmp(p, name, len))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

u64 kcoll_features(void)
{
	return KCOLL_FEAT_RDMA_DEVICES | KCOLL_FEAT_SYSFS;
}

u64 kcoll_ioctls(void)
{
	return BIT_ULL(KCOLL_IOC_NR_GET_INFO);
}

static int __init kcoll_init(void)
{
	int ret;

	ret = kcoll_sysfs_init();
	if (ret)
		return ret;
	ret = kcoll_ib_init();
	if (ret)
		goto out_sysfs;
	ret = kcoll_chrdev_init();
	if (ret)
		goto out_ib;
	pr_info("version %s loaded (ABI %d)\n", KCOLL_VERSION, KCOLL_ABI_VERSION);
	return 0;

out_ib:
	kcoll_ib_exit();
out_sysfs:
	kcoll_sysfs_exit();
	return ret;
}

static void __exit kcoll_exit(void)
{
	kcoll_chrdev_exit();
	kcoll_ib_exit();
	kcoll_sysfs_exit();
	pr_info("unloaded\n");
}

module_init(kcoll_init);
module_exit(kcoll_exit);

MODULE_AUTHOR("The kcoll authors");
MODULE_DESCRIPTION("kcoll: kernel collective communication over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(KCOLL_VERSION);
