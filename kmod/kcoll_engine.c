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
/* An admin's choice per (dtype, op) (engine-set), or NULL: registration order decides. */
static struct kcoll_engine_entry __rcu *kcoll_choice[KCOLL_NUM_DATATYPES][KCOLL_NUM_RED_OPS];
static const struct kcoll_reduce_engine *kcoll_builtin_ops;
/* The netlink layer's event for a registration, given at init (layer rule: no call up). */
static void (*kcoll_engine_event)(const char *name, u32 priority);

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

KCOLL_KOBJ_TYPE_KFREE(kcoll_engine, struct kcoll_engine_entry, kobj);

static struct kcoll_engine_entry *kcoll_engine_entry_add(const char *name,
							 struct kcoll_engine *e)
{
	struct kcoll_engine_entry *ent;

	ent = kcoll_fi(ALLOC, NULL, kzalloc(sizeof(*ent), GFP_KERNEL));

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

/* Drop the admin's choices of @ent.  Context: kcoll_engines_mutex. */
static void kcoll_engine_forget_choices(struct kcoll_engine_entry *ent)
{
	int dt, op;

	lockdep_assert_held(&kcoll_engines_mutex);
	for (dt = 0; dt < KCOLL_NUM_DATATYPES; dt++)
		for (op = 0; op < KCOLL_NUM_RED_OPS; op++)
			if (rcu_access_pointer(kcoll_choice[dt][op]) == ent)
				RCU_INIT_POINTER(kcoll_choice[dt][op], NULL);
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
	kcoll_engine_event(e->name, 0);
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
	kcoll_engine_forget_choices(ent);
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
				  enum kcoll_datatype dt, enum kcoll_red_op op)
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

/* Offer a piece to a registered engine; true when it did it.  Context: SRCU read side. */
static bool kcoll_engine_try(struct kcoll_engine_entry *ent, void *dst, const void *a,
			     const void *b, size_t count, enum kcoll_datatype dt,
			     enum kcoll_red_op op)
{
	struct kcoll_engine *e = ent->engine;
	size_t bytes = count * kcoll_dtype_size(dt);

	if (!e->supports(dt, op, bytes))
		return false;
	if (!e->reduce3(dst, a, b, count, dt, op)) {
		atomic64_inc(&ent->calls);
		atomic64_add(bytes, &ent->bytes);
		return true;
	}
	atomic64_inc(&ent->declined);
	return false;
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
			  enum kcoll_datatype dt, enum kcoll_red_op op)
{
	struct kcoll_engine_entry *ent;
	int idx;

	if (!count)
		return;
	idx = srcu_read_lock(&kcoll_engine_srcu);
	ent = srcu_dereference(kcoll_choice[dt][op], &kcoll_engine_srcu);
	if (ent) {
		/* The admin's choice, and only it; the built-in engine if it declines. */
		if (ent != kcoll_builtin && kcoll_engine_try(ent, dst, a, b, count, dt, op))
			goto out_unlock;
		goto builtin;
	}
	list_for_each_entry_srcu(ent, &kcoll_engines, list,
				 srcu_read_lock_held(&kcoll_engine_srcu))
		if (kcoll_engine_try(ent, dst, a, b, count, dt, op))
			goto out_unlock;
builtin:
	srcu_read_unlock(&kcoll_engine_srcu, idx);
	kcoll_builtin_reduce3(dst, a, b, count, dt, op);
	return;
out_unlock:
	srcu_read_unlock(&kcoll_engine_srcu, idx);
}

/* AVG's division by nranks (a no-op for other operators), in bounded FPU sections. */
void kcoll_engine_finalize(void *buf, size_t count, enum kcoll_datatype dt, enum kcoll_red_op op,
			   unsigned int nranks)
{
	size_t esz = kcoll_dtype_size(dt), per = KCOLL_FPU_PIECE / esz, done = 0;

	if (op != KCOLL_AVG)
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

/* Piece size at which "which engine serves a pair" is answered (engines may declare by size). */
#define KCOLL_ENGINE_REF_BYTES	SZ_1M

/* The engine that serves (@dt, @op) for a reference piece.  Context: kcoll_engines_mutex. */
static struct kcoll_engine_entry *kcoll_engine_active(int dt, int op)
{
	struct kcoll_engine_entry *ent = rcu_dereference_protected(kcoll_choice[dt][op],
						lockdep_is_held(&kcoll_engines_mutex));

	if (ent)
		return ent;
	list_for_each_entry(ent, &kcoll_engines, list)
		if (ent->engine->supports(dt, op, KCOLL_ENGINE_REF_BYTES))
			return ent;
	return kcoll_builtin;
}

/**
 * kcoll_engine_info_get - describe engine number @idx for the control plane
 * @idx:	0 for the built-in engine, then the registered ones in the order tried
 * @out:	filled in
 *
 * Return: 0, or -ENOENT past the last engine.
 */
int kcoll_engine_info_get(u32 idx, struct kcoll_engine_info *out)
{
	struct kcoll_engine_entry *ent = NULL, *it;
	int dt, op;
	u32 i = 1;

	memset(out, 0, sizeof(*out));
	mutex_lock(&kcoll_engines_mutex);
	if (!idx) {
		ent = kcoll_builtin;
	} else {
		list_for_each_entry(it, &kcoll_engines, list) {
			if (i++ == idx) {
				ent = it;
				break;
			}
		}
	}
	if (!ent) {
		mutex_unlock(&kcoll_engines_mutex);
		return -ENOENT;
	}
	strscpy(out->name, kobject_name(&ent->kobj), sizeof(out->name));
	out->builtin = !ent->engine;
	/* The built-in engine is tried last. */
	out->priority = idx ? idx - 1 : i - 1;
	if (!idx)
		list_for_each_entry(it, &kcoll_engines, list)
			out->priority++;
	for (dt = 0; dt < KCOLL_NUM_DATATYPES; dt++) {
		for (op = 0; op < KCOLL_NUM_RED_OPS; op++) {
			if (kcoll_reduce_check(dt, op))
				continue;
			if (ent->engine && !ent->engine->supports(dt, op, KCOLL_ENGINE_REF_BYTES))
				continue;
			out->serves[dt][op] = kcoll_engine_active(dt, op) == ent ? 2 : 1;
		}
	}
	mutex_unlock(&kcoll_engines_mutex);
	return 0;
}

/**
 * kcoll_engine_choose - make engine @name the one that serves (@dt, @op)
 * @name:	a registered engine, or the built-in one's name
 * @dt:		datatype
 * @op:		operator (a supported pair that the engine declares)
 *
 * Return: 0, -EINVAL (kcoll does not reduce the pair), -EOPNOTSUPP (the engine does not
 * declare it), -ENOENT (no such engine).
 */
int kcoll_engine_choose(const char *name, u32 dt, u32 op)
{
	struct kcoll_engine_entry *ent, *found = NULL;

	if (dt >= KCOLL_NUM_DATATYPES || op >= KCOLL_NUM_RED_OPS || kcoll_reduce_check(dt, op))
		return -EINVAL;
	mutex_lock(&kcoll_engines_mutex);
	if (!strcmp(name, kobject_name(&kcoll_builtin->kobj)))
		found = kcoll_builtin;
	list_for_each_entry(ent, &kcoll_engines, list)
		if (!found && !strcmp(name, kobject_name(&ent->kobj)))
			found = ent;
	if (!found) {
		mutex_unlock(&kcoll_engines_mutex);
		return -ENOENT;
	}
	if (found->engine && !found->engine->supports(dt, op, KCOLL_ENGINE_REF_BYTES)) {
		mutex_unlock(&kcoll_engines_mutex);
		return -EOPNOTSUPP;
	}
	rcu_assign_pointer(kcoll_choice[dt][op], found);
	mutex_unlock(&kcoll_engines_mutex);
	return 0;
}

/**
 * kcoll_engine_init - the built-in engine, and where registrations are shown
 * @dir:	the engines' sysfs directory (/sys/kernel/kcoll/engines), or NULL when it
 *		could not be made; the registry owns the reference from now on
 * @event:	tells the netlink listeners an engine registered
 *
 * Return: 0 or -ENOMEM.  Context: module load.
 */
int kcoll_engine_init(struct kobject *dir, void (*event)(const char *name, u32 priority))
{
	struct kcoll_engine_entry *ent;

	kcoll_builtin_ops = kcoll_reduce_best(boot_cpu_has(X86_FEATURE_AVX2) &&
					      boot_cpu_has(X86_FEATURE_OSXSAVE));
	kcoll_engine_event = event;
	kcoll_engines_kobj = dir;
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
