/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll private header: the objects of the module and who owns them.
 *
 * Object lifetimes (see Documentation/design.rst):
 *   kcoll_dev	one per RDMA device; born in the ib_client add callback, dies in remove after
 *		every user has dropped its reference.  Memory is owned by its sysfs kobject.
 *   kcoll_ctx	one per open file of /dev/kcoll; freed by the file's release.
 */
#ifndef _KCOLL_H
#define _KCOLL_H

#include <linux/completion.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <linux/kcoll.h>

#define KCOLL_VERSION	"0.1.0"

/**
 * struct kcoll_dev - an RDMA device kcoll knows about
 * @ibdev:	the device; valid while @users is held (remove() waits for it)
 * @list:	entry in kcoll_devs; guarded by kcoll_devs_mutex
 * @kobj:	/sys/kernel/kcoll/devices/<name>; its refcount owns the memory
 * @users:	references of code that may touch @ibdev; starts at 1 (the device list's)
 * @drained:	completed when @users drops to zero, so remove() can return
 * @allowed:	the devices= module parameter lets kcoll use it (constant after add)
 */
struct kcoll_dev {
	struct ib_device *ibdev;
	struct list_head list;
	struct kobject kobj;
	refcount_t users;
	struct completion drained;
	bool allowed;
};

/**
 * struct kcoll_ctx - state of one open file of /dev/kcoll
 * @tgid:	process that opened the file (reference held until release)
 * @uid:	its effective uid at open
 *
 * Freed by kcoll_release(); nothing else holds a pointer to it yet.
 */
struct kcoll_ctx {
	struct pid *tgid;
	kuid_t uid;
};

/* kcoll_ib.c */
int kcoll_ib_init(void);
void kcoll_ib_exit(void);
unsigned int kcoll_dev_count(void);
struct kcoll_dev *kcoll_dev_get_by_name(const char *name);
void kcoll_dev_put(struct kcoll_dev *dev);
const char *kcoll_dev_node_type(struct kcoll_dev *dev);

/* kcoll_sysfs.c */
int kcoll_sysfs_init(void);
void kcoll_sysfs_exit(void);
int kcoll_sysfs_dev_add(struct kcoll_dev *dev);
void kcoll_sysfs_dev_del(struct kcoll_dev *dev);
void kcoll_sysfs_dev_rename(struct kcoll_dev *dev);

/* kcoll_chrdev.c */
int kcoll_chrdev_init(void);
void kcoll_chrdev_exit(void);
unsigned int kcoll_ctx_count(void);

/* kcoll_uarg.c */
int kcoll_uarg_copy_in(void *karg, size_t ksize, size_t min_size, void __user *uarg,
		       u32 *usize);
int kcoll_uarg_copy_out(void __user *uarg, u32 usize, const void *karg, size_t ksize);

/* kcoll_main.c */
bool kcoll_dev_name_allowed(const char *name);
u64 kcoll_features(void);
u64 kcoll_ioctls(void);

#endif /* _KCOLL_H */
