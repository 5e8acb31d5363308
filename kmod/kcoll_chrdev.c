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
#include <linux/poll.h>
#include <linux/sched/mm.h>
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

	ctx = kcoll_fi(ALLOC, NULL, kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT));
	if (!ctx)
		return -ENOMEM;
	ctx->tgid = get_pid(task_tgid(current));
	ctx->uid = current_euid();
	mutex_init(&ctx->lock);
	xa_init_flags(&ctx->comms, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->reqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->maps, XA_FLAGS_ALLOC1);
	init_waitqueue_head(&ctx->poll_wq);
	file->private_data = ctx;
	atomic_inc(&kcoll_nctx);
	return 0;
}

static int kcoll_release(struct inode *inode, struct file *file)
{
	struct kcoll_ctx *ctx = file->private_data;

	kcoll_ctx_destroy_comms(ctx);
	kcoll_ctx_drop_maps(ctx);
	xa_destroy(&ctx->comms);
	xa_destroy(&ctx->reqs);
	xa_destroy(&ctx->maps);
	put_pid(ctx->tgid);
	kfree(ctx);
	atomic_dec(&kcoll_nctx);
	return 0;
}

/* What GET_INFO and /sys/kernel/kcoll/features report this module offers. */
u64 kcoll_features(void)
{
	return KCOLL_FEAT_RDMA_DEVICES | KCOLL_FEAT_SYSFS | KCOLL_FEAT_COMM | KCOLL_FEAT_P2P |
	       KCOLL_FEAT_BUF | KCOLL_FEAT_COLL |
	       KCOLL_FEAT_LOCALITY;
}

u64 kcoll_ioctls(void)
{
	return BIT_ULL(KCOLL_IOC_NR_GET_INFO) | BIT_ULL(KCOLL_IOC_NR_COMM_CREATE) |
	       BIT_ULL(KCOLL_IOC_NR_COMM_DESTROY) | BIT_ULL(KCOLL_IOC_NR_COMM_ABORT) |
	       BIT_ULL(KCOLL_IOC_NR_COMM_QUERY) | BIT_ULL(KCOLL_IOC_NR_P2P) |
	       BIT_ULL(KCOLL_IOC_NR_WAIT) | BIT_ULL(KCOLL_IOC_NR_BUF_CREATE) |
	       BIT_ULL(KCOLL_IOC_NR_BUF_DESTROY) | BIT_ULL(KCOLL_IOC_NR_COLL);
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
	long ret;

	switch (cmd) {
	case KCOLL_IOC_GET_INFO:
		return kcoll_ioctl_get_info(ctx, uarg);
	case KCOLL_IOC_COMM_CREATE:
		/* The slot goes with the handle (kcoll_comm_unhandle()) if creation succeeds. */
		ret = kcoll_ctx_take(&ctx->ncomms, kcoll_max_comms_per_file);
		if (ret)
			return ret;
		ret = kcoll_ioctl_comm_create(ctx, uarg);
		if (ret)
			kcoll_ctx_give(&ctx->ncomms);
		return ret;
	case KCOLL_IOC_COMM_DESTROY:
		return kcoll_ioctl_comm_destroy(ctx, uarg);
	case KCOLL_IOC_COMM_ABORT:
		return kcoll_ioctl_comm_abort(ctx, uarg);
	case KCOLL_IOC_COMM_QUERY:
		return kcoll_ioctl_comm_query(ctx, uarg);
	case KCOLL_IOC_P2P:
		return kcoll_ioctl_p2p(ctx, uarg);
	case KCOLL_IOC_WAIT:
		return kcoll_ioctl_wait(ctx, uarg);
	case KCOLL_IOC_BUF_CREATE:
		return kcoll_ioctl_buf_create(ctx, uarg);
	case KCOLL_IOC_BUF_DESTROY:
		return kcoll_ioctl_buf_destroy(ctx, uarg);
	case KCOLL_IOC_COLL:
		return kcoll_ioctl_coll(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

static int kcoll_mmap(struct file *file, struct vm_area_struct *vma)
{
	return kcoll_buf_mmap(file->private_data, vma);
}

/* POLLIN while a non-blocking request of this file has completed and not been waited for. */
static __poll_t kcoll_poll(struct file *file, struct poll_table_struct *wait)
{
	struct kcoll_ctx *ctx = file->private_data;

	poll_wait(file, &ctx->poll_wq, wait);
	return atomic_read(&ctx->ndone) > 0 ? EPOLLIN | EPOLLRDNORM : 0;
}

static const struct file_operations kcoll_fops = {
	.poll		= kcoll_poll,
	.mmap		= kcoll_mmap,
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
