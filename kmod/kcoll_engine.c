// SPDX-License-Identifier: GPL-2.0
/*
 * Reduction dispatch: registered engines first (kcoll_engine.h), then the built-in one.
 *
 * The built-in engine is core/'s: AVX2 when the CPU has it, else portable C, chosen at
 * load time.  It runs between kernel_fpu_begin() and kernel_fpu_end() in pieces of
 * KCOLL_FPU_PIECE bytes, so preemption is never held off for long; callers are in process
 * context (the collective progress work), never in interrupt context.
 *
 * Registered engines are on an SRCU-protected list: a reduction holds the SRCU read lock
 * while it calls into an engine, and unregister waits for those readers, so an engine may
 * unregister while operations run.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>

#include "kcoll.h"
#include "kcoll_engine.h"
#include "kcoll_nl.h"

/* Bytes reduced per kernel_fpu_begin()/end() section. */
#define KCOLL_FPU_PIECE		SZ_64K

/**
 * struct kcoll_engine_entry - kcoll's record of an engine (registered or built-in)
 * @kobj:	/sys/kernel/kcoll/engines/<name>; owns the memory
 * @engine:	the registered engine, or NULL for the built-in one (constant)
 * @list:	in kcoll_engines (kcoll_engines_mutex; SRCU for readers)
 * @calls:	pieces done
 * @bytes:	their bytes
 * @declined:	pieces declined
 */
struct kcoll_engine_entry {
	struct kobject kobj;
	struct kcoll_engine *engine;
	struct list_head list;
	atomic64_t calls;
	atomic64_t bytes;
	atomic64_t declined;
};

DEFINE_STATIC_SRCU(kcoll_engine_srcu);
static LIST_HEAD(kcoll_engines);
static DEFINE_MUTEX(kcoll_engines_mutex);
static struct kobject *kcoll_engines_kobj;
static struct kcoll_engine_entry *kcoll_builtin;
static const struct kcoll_reduce_engine *kcoll_builtin_ops;

#define to_entry(k) container_of(k, struct kcoll_engine_entry, kobj)

static ssize_t calls_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&to_entry(kobj)->calls));
}

static ssize_t bytes_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&to_entry(kobj)->bytes));
}

static ssize_t declined_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&to_entry(kobj)->declined));
}

static ssize_t builtin_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", !to_entry(kobj)->engine);
}

static struct kobj_attribute kcoll_engine_attr_calls = __ATTR_RO(calls);
static struct kobj_attribute kcoll_engine_attr_bytes = __ATTR_RO(bytes);
static struct kobj_attribute kcoll_engine_attr_declined = __ATTR_RO(declined);
static struct kobj_attribute kcoll_engine_attr_builtin = __ATTR_RO(builtin);

static struct attribute *kcoll_engine_attrs[] = {
	&kcoll_engine_attr_calls.attr,
	&kcoll_engine_attr_bytes.attr,
	&kcoll_engine_attr_declined.attr,
	&kcoll_engine_attr_builtin.attr,
	NULL,
};
ATTRIBUTE_GROUPS(kcoll_engine);

static void kcoll_engine_entry_release(struct kobject *kobj)
{
	kfree(to_entry(kobj));
}

static const struct kobj_type kcoll_engine_ktype = {
	.release	= kcoll_engine_entry_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= kcoll_engine_groups,
};

static struct kcoll_engine_entry *kcoll_engine_entry_add(const char *name,
							 struct kcoll_engine *e)
{
	struct kcoll_engine_entry *ent = kzalloc(sizeof(*ent), GFP_KERNEL);

	if (!ent)
		return ERR_PTR(-ENOMEM);
	ent->engine = e;
	INIT_LIST_HEAD(&ent->list);
	kobject_init(&ent->kobj, &kcoll_engine_ktype);
	if (kobject_add(&ent->kobj, kcoll_engines_kobj, "%s", name)) {
		kobject_put(&ent->kobj);
		return ERR_PTR(-EEXIST);
	}
	return ent;
}

static bool kcoll_engine_name_ok(const char *name)
{
	size_t i, n = name ? strnlen(name, 32) : 0;

	if (!n || n == 32)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum(name[i]) && name[i] != '_' && name[i] != '-')
			return false;
	return true;
}

int kcoll_engine_register(struct kcoll_engine *e)
{
	struct kcoll_engine_entry *ent;

	if (!e || !e->supports || !e->reduce3 || !kcoll_engine_name_ok(e->name))
		return -EINVAL;
	mutex_lock(&kcoll_engines_mutex);
	ent = kcoll_engine_entry_add(e->name, e);
	if (IS_ERR(ent)) {
		mutex_unlock(&kcoll_engines_mutex);
		return PTR_ERR(ent);
	}
	e->entry = ent;
	list_add_rcu(&ent->list, &kcoll_engines);
	mutex_unlock(&kcoll_engines_mutex);
	pr_info("reduction engine %s registered\n", e->name);
	kcoll_nl_event_engine(e->name, 0);
	return 0;
}
EXPORT_SYMBOL_GPL(kcoll_engine_register);

void kcoll_engine_unregister(struct kcoll_engine *e)
{
	struct kcoll_engine_entry *ent = e->entry;

	if (!ent)
		return;
	mutex_lock(&kcoll_engines_mutex);
	list_del_rcu(&ent->list);
	mutex_unlock(&kcoll_engines_mutex);
	/* Every reduction that may be inside the engine leaves it before we return. */
	synchronize_srcu(&kcoll_engine_srcu);
	e->entry = NULL;
	kobject_del(&ent->kobj);
	kobject_put(&ent->kobj);
	pr_info("reduction engine %s unregistered\n", e->name);
}
EXPORT_SYMBOL_GPL(kcoll_engine_unregister);

static void kcoll_builtin_reduce3(void *dst, const void *a, const void *b, size_t count,
				  enum kcoll_dtype dt, enum kcoll_redop op)
{
	size_t esz = kcoll_dtype_size(dt), per = KCOLL_FPU_PIECE / esz, done = 0;

	while (done < count) {
		size_t n = min(per, count - done);

		kernel_fpu_begin();
		kcoll_builtin_ops->reduce3(dst + done * esz, a + done * esz, b + done * esz, n,
					   dt, op);
		kernel_fpu_end();
		done += n;
		cond_resched();
	}
	atomic64_inc(&kcoll_builtin->calls);
	atomic64_add(count * esz, &kcoll_builtin->bytes);
}

/**
 * kcoll_engine_reduce3 - dst = a (+) b, by the first engine that takes it, else the built-in
 * @dst:	destination (may be @a or @b exactly)
 * @a:		first operand
 * @b:		second operand
 * @count:	elements
 * @dt:		datatype
 * @op:		operator (supported with @dt)
 *
 * Context: process context, may sleep.
 */
void kcoll_engine_reduce3(void *dst, const void *a, const void *b, size_t count,
			  enum kcoll_dtype dt, enum kcoll_redop op)
{
	size_t bytes = count * kcoll_dtype_size(dt);
	struct kcoll_engine_entry *ent;
	int idx;

	if (!count)
		return;
	idx = srcu_read_lock(&kcoll_engine_srcu);
	list_for_each_entry_srcu(ent, &kcoll_engines, list,
				 srcu_read_lock_held(&kcoll_engine_srcu)) {
		struct kcoll_engine *e = ent->engine;

		if (!e->supports(dt, op, bytes))
			continue;
		if (!e->reduce3(dst, a, b, count, dt, op)) {
			atomic64_inc(&ent->calls);
			atomic64_add(bytes, &ent->bytes);
			srcu_read_unlock(&kcoll_engine_srcu, idx);
			return;
		}
		atomic64_inc(&ent->declined);
	}
	srcu_read_unlock(&kcoll_engine_srcu, idx);
	kcoll_builtin_reduce3(dst, a, b, count, dt, op);
}

/* AVG's division by nranks (a no-op for other operators), in bounded FPU sections. */
void kcoll_engine_finalize(void *buf, size_t count, enum kcoll_dtype dt, enum kcoll_redop op,
			   unsigned int nranks)
{
	size_t esz = kcoll_dtype_size(dt), per = KCOLL_FPU_PIECE / esz, done = 0;

	if (op != KCOLL_REDOP_AVG)
		return;
	while (done < count) {
		size_t n = min(per, count - done);

		kernel_fpu_begin();
		kcoll_reduce_finalize(buf + done * esz, n, dt, op, nranks);
		kernel_fpu_end();
		done += n;
		cond_resched();
	}
}

int kcoll_engine_init(void)
{
	struct kcoll_engine_entry *ent;

	kcoll_builtin_ops = kcoll_reduce_best(boot_cpu_has(X86_FEATURE_AVX2) &&
					      boot_cpu_has(X86_FEATURE_OSXSAVE));
	kcoll_engines_kobj = kcoll_sysfs_subdir("engines");
	if (!kcoll_engines_kobj)
		return -ENOMEM;
	ent = kcoll_engine_entry_add(kcoll_builtin_ops->name, NULL);
	if (IS_ERR(ent)) {
		kobject_put(kcoll_engines_kobj);
		return PTR_ERR(ent);
	}
	kcoll_builtin = ent;
	pr_info("built-in reduction engine: %s\n", kcoll_builtin_ops->name);
	return 0;
}

void kcoll_engine_exit(void)
{
	/* Engine modules depend on kcoll's symbols: every one has unregistered by now. */
	kobject_del(&kcoll_builtin->kobj);
	kobject_put(&kcoll_builtin->kobj);
	kobject_put(kcoll_engines_kobj);
}
