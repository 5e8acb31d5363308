/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll reduction engines: the interface through which another module takes over
 * reductions from kcoll (an accelerator, a DMA engine, a tuned CPU kernel).
 *
 * An engine declares what it takes with supports(); kcoll calls reduce3() for every
 * piece of a reduction it accepted.  reduce3() may sleep and may use the FPU itself
 * (kernel_fpu_begin()/end() around its own work); it returns 0 when it did the piece, or
 * -EOPNOTSUPP to decline it, in which case kcoll's built-in engine does it.  Results must
 * be bit-identical to the built-in engine's (core/kcoll_reduce.h semantics).
 *
 * kcoll_engine_unregister() waits until no call into the engine runs, so the engine's
 * module may go away right after; operations in flight continue on the built-in engine.
 * Engines are tried in registration order (latest first); each is listed in
 * /sys/kernel/kcoll/engines/<name>/ with its counters.
 */
#ifndef _KCOLL_ENGINE_H
#define _KCOLL_ENGINE_H

#include <linux/module.h>
#include <linux/types.h>
#include "../core/kcoll_reduce.h"

struct kcoll_engine_entry;

/**
 * struct kcoll_engine - a reduction engine; owned by the registering module
 * @name:	unique name, [a-z0-9_-], at most 31 characters (the sysfs directory)
 * @owner:	THIS_MODULE
 * @supports:	whether it takes (@dt, @op) for a piece of @bytes; must not sleep
 * @reduce3:	dst[i] = a[i] op b[i] for @count elements (dst may equal a or b exactly):
 *		0, or -EOPNOTSUPP to decline
 * @entry:	kcoll's bookkeeping, set by kcoll_engine_register()
 */
struct kcoll_engine {
	const char *name;
	struct module *owner;
	bool (*supports)(enum kcoll_datatype dt, enum kcoll_red_op op, size_t bytes);
	int (*reduce3)(void *dst, const void *a, const void *b, size_t count,
		       enum kcoll_datatype dt, enum kcoll_red_op op);
	struct kcoll_engine_entry *entry;
};

/* Return: 0, -EINVAL (bad name or callbacks), -EEXIST (name taken), -ENOMEM. */
int kcoll_engine_register(struct kcoll_engine *e);
void kcoll_engine_unregister(struct kcoll_engine *e);

#endif /* _KCOLL_ENGINE_H */
