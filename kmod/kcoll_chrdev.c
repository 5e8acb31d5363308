// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kcoll: the misc character device, its per-open context and the ioctl dispatch.
 *
 * The file_operations owner is THIS_MODULE, so every open file pins the module: rmmod fails
 * with EBUSY while a descriptor is open and succeeds once the last one is closed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kcoll.h"

/* Open files of /dev/kcoll, shown in /sys/kernel/kcoll/contexts. */
static atomic_t kcoll_nctx = ATOMIC_INIT(0);

unsigned int kcoll_ctx_count(void)
{
	return atomic_read(&kcoll_nctx);
}

static int kcoll_open(struct inode *inode, struct file *file)
{
	struct kcoll_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->tgid = get_pid(task_tgid(current));
	ctx->uid = current_euid();
	file->private_data = ctx;
	atomic_inc(&kcoll_nctx);
	return 0;
}

static int kcoll_release(struct inode *inode, struct file *file)
{
	struct kcoll_ctx *ctx = file->private_data;

	put_pid(ctx->tgid);
	kfree(ctx);
	atomic_dec(&kcoll_nctx);
	return 0;
}

static long kcoll_ioctl_get_info(struct kcoll_ctx *ctx, void __user *uarg)
{
	struct kcoll_info info;
	u32 usize;
	int ret;

	ret = kcoll_uarg_copy_in(&info, sizeof(info), KCOLL_INFO_SIZE_VER0, uarg, &usize);
	if (ret)
		return ret;
	if (info.flags || memchr_inv(info.reserved, 0, sizeof(info.reserved)))
		return -EINVAL;

	/* Output: every byte set here, nothing of the caller's input echoed but size/flags. */
	memset(&info, 0, sizeof(info));
	info.size = usize;
	info.abi_version = KCOLL_ABI_VERSION;
	info.ndevices = kcoll_dev_count();
	info.features = kcoll_features();
	info.ioctls = kcoll_ioctls();
	strscpy(info.version, KCOLL_VERSION, sizeof(info.version));
	return kcoll_uarg_copy_out(uarg, usize, &info, sizeof(info));
}

static long kcoll_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kcoll_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KCOLL_IOC_GET_INFO:
		return kcoll_ioctl_get_info(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations kcoll_fops = {
	.owner		= THIS_MODULE,
	.open		= kcoll_open,
	.release	= kcoll_release,
	.unlocked_ioctl	= kcoll_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice kcoll_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= KCOLL_DEVICE_NAME,
	.fops	= &kcoll_fops,
	/* Root only by default; the udev rule in the package widens it for a group. */
	.mode	= 0600,
};

int kcoll_chrdev_init(void)
{
	return misc_register(&kcoll_miscdev);
}

void kcoll_chrdev_exit(void)
{
	misc_deregister(&kcoll_miscdev);
}
