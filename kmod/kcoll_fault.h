/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fail points: every allocation, pin, memory registration, CQ and QP creation, rdma_cm call
 * and post in kcoll goes through kcoll_fi(), which makes it fail on demand when the kernel
 * has CONFIG_FAULT_INJECTION.  One fault_attr per class of point, in debugfs under
 * kcoll/fail_<class>/ (Documentation/fault-injection/fault-injection.rst describes the knobs;
 * Documentation/testing.rst how kcoll's tests use them).  Every point also counts towards a
 * thread's /proc/thread-self/fail-nth.  Without CONFIG_FAULT_INJECTION kcoll_fi(cls, err,
 * expr) is just expr.
 */
#ifndef KCOLL_FAULT_H
#define KCOLL_FAULT_H

#include <linux/compiler.h>
#include <linux/types.h>

enum kcoll_fault_class {
	KCOLL_FAULT_ALLOC,	/* kmalloc() and friends, xarray slots, pages, DMA mappings */
	KCOLL_FAULT_PIN,	/* pin_user_pages*() */
	KCOLL_FAULT_REG,	/* protection domain, memory region, its mapping and sg table */
	KCOLL_FAULT_QP,		/* rdma_create_qp() */
	KCOLL_FAULT_CQ,		/* ib_alloc_cq() */
	KCOLL_FAULT_CM,		/* rdma_create_id(), bind, listen, resolve, connect, accept */
	KCOLL_FAULT_POST,	/* ib_post_send(), ib_post_recv() */
	KCOLL_FAULT_NR
};

#ifdef CONFIG_FAULT_INJECTION
bool kcoll_should_fail(enum kcoll_fault_class cls);
void kcoll_fault_init(void);
void kcoll_fault_exit(void);
#else
static inline bool kcoll_should_fail(enum kcoll_fault_class cls) { return false; }
static inline void kcoll_fault_init(void) { }
static inline void kcoll_fault_exit(void) { }
#endif

/*
 * @expr, or @err without evaluating @expr when the fail point of class @cls fires: the
 * caller's own error path then runs exactly as if @expr had failed with @err.
 */
#define kcoll_fi(cls, err, expr) \
	(unlikely(kcoll_should_fail(KCOLL_FAULT_##cls)) ? (err) : (expr))

#endif /* KCOLL_FAULT_H */
