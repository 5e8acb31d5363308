// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/kcoll: what an admin can read without a tool.  Documented file by file in
 * Documentation/ABI/testing/sysfs-kernel-kcoll.
 *
 *   version abi_version features contexts
 *   devices/<ibdev>/{node_type,ports,allowed,node_guid}
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "kcoll.h"

static struct kobject *kcoll_kobj;
static struct kobject *kcoll_devices_kobj;

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", KCOLL_VERSION);
}

static ssize_t abi_version_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", KCOLL_ABI_VERSION);
}

static ssize_t features_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", kcoll_features());
}

static ssize_t contexts_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", kcoll_ctx_count());
}

static struct kobj_attribute kcoll_attr_version = __ATTR_RO(version);
static struct kobj_attribute kcoll_attr_abi_version = __ATTR_RO(abi_version);
static struct kobj_attribute kcoll_attr_features = __ATTR_RO(features);
static struct kobj_attribute kcoll_attr_contexts = __ATTR_RO(contexts);

static struct attribute *kcoll_attrs[] = {
	&kcoll_attr_version.attr,
	&kcoll_attr_abi_version.attr,
	&kcoll_attr_features.attr,
	&kcoll_attr_contexts.attr,
	NULL,
};

static const struct attribute_group kcoll_attr_group = {
	.attrs = kcoll_attrs,
};

/* Per-device directory. */

static inline struct kcoll_dev *to_kcoll_dev(struct kobject *kobj)
{
	return container_of(kobj, struct kcoll_dev, kobj);
}

static ssize_t node_type_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", kcoll_dev_node_type(to_kcoll_dev(kobj)));
}

static ssize_t ports_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_kcoll_dev(kobj)->ibdev->phys_port_cnt);
}

static ssize_t allowed_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", to_kcoll_dev(kobj)->allowed);
}

static ssize_t node_guid_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%016llx\n",
			  (unsigned long long)be64_to_cpu(to_kcoll_dev(kobj)->ibdev->node_guid));
}

static struct kobj_attribute kcoll_dev_attr_node_type = __ATTR_RO(node_type);
static struct kobj_attribute kcoll_dev_attr_ports = __ATTR_RO(ports);
static struct kobj_attribute kcoll_dev_attr_allowed = __ATTR_RO(allowed);
static struct kobj_attribute kcoll_dev_attr_node_guid = __ATTR_RO(node_guid);

static struct attribute *kcoll_dev_attrs[] = {
	&kcoll_dev_attr_node_type.attr,
	&kcoll_dev_attr_ports.attr,
	&kcoll_dev_attr_allowed.attr,
	&kcoll_dev_attr_node_guid.attr,
	NULL,
};
ATTRIBUTE_GROUPS(kcoll_dev);

/* The last kobject_put() of a device frees it: see kcoll_sysfs_dev_del(). */
KCOLL_KOBJ_TYPE_KFREE(kcoll_dev, struct kcoll_dev, kobj);

/**
 * kcoll_sysfs_dev_add - give a new device its directory and its memory owner
 * @dev: zero-initialised device with @ibdev set
 *
 * Return: 0, or a negative errno after which @dev has been freed.
 */
int kcoll_sysfs_dev_add(struct kcoll_dev *dev)
{
	int ret;

	ret = kobject_init_and_add(&dev->kobj, &kcoll_dev_ktype, kcoll_devices_kobj, "%s",
				   dev_name(&dev->ibdev->dev));
	if (ret)
		kobject_put(&dev->kobj);
	return ret;
}

/* Remove the directory (waits for readers in progress) and drop the memory reference. */
void kcoll_sysfs_dev_del(struct kcoll_dev *dev)
{
	kobject_del(&dev->kobj);
	kobject_put(&dev->kobj);
}

void kcoll_sysfs_dev_rename(struct kcoll_dev *dev)
{
	int ret = kobject_rename(&dev->kobj, dev_name(&dev->ibdev->dev));

	if (ret)
		pr_warn_ratelimited("sysfs rename to %s failed: %d\n",
				    dev_name(&dev->ibdev->dev), ret);
}

/**
 * kcoll_sysfs_subdir - a plain directory under /sys/kernel/kcoll/, for a family of objects
 * @name:	its name ("comms", "engines")
 * @mode:	its permissions: 0755, or 0700 when the names of its entries are private
 *
 * sysfs creates every directory 0755 and has no call that takes a mode; sysfs_chmod_file()
 * changes the mode of the named child of a kobject's directory, a directory too.
 *
 * Return: the directory's kobject, or NULL.
 */
struct kobject *kcoll_sysfs_subdir(const char *name, umode_t mode)
{
	struct attribute dir = { .name = name };
	struct kobject *kobj = kobject_create_and_add(name, kcoll_kobj);

	if (kobj && mode != 0755 && sysfs_chmod_file(kcoll_kobj, &dir, mode)) {
		kobject_put(kobj);
		return NULL;
	}
	return kobj;
}

int kcoll_sysfs_init(void)
{
	int ret;

	kcoll_kobj = kobject_create_and_add("kcoll", kernel_kobj);
	if (!kcoll_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(kcoll_kobj, &kcoll_attr_group);
	if (ret)
		goto out_put_kcoll;
	kcoll_devices_kobj = kobject_create_and_add("devices", kcoll_kobj);
	if (!kcoll_devices_kobj) {
		ret = -ENOMEM;
		goto out_remove_group;
	}
	return 0;

out_remove_group:
	sysfs_remove_group(kcoll_kobj, &kcoll_attr_group);
out_put_kcoll:
	kobject_put(kcoll_kobj);
	return ret;
}

void kcoll_sysfs_exit(void)
{
	kobject_put(kcoll_devices_kobj);
	sysfs_remove_group(kcoll_kobj, &kcoll_attr_group);
	kobject_put(kcoll_kobj);
}
