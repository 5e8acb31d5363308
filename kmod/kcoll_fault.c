// SPDX-License-Identifier: GPL-2.0
/*
 * The fail points' switches (kcoll_fault.h): one fault_attr per class, so a test can fail,
 * say, the third post of a thread without touching allocations.  Built only with
 * CONFIG_FAULT_INJECTION; the attributes appear in debugfs with
 * CONFIG_FAULT_INJECTION_DEBUG_FS, as /sys/kernel/debug/kcoll/fail_<class>/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fault-inject.h>

#include "kcoll_fault.h"

static struct fault_attr kcoll_fault_attrs[KCOLL_FAULT_NR] = {
	[0 ... KCOLL_FAULT_NR - 1] = FAULT_ATTR_INITIALIZER,
};

static const char * const kcoll_fault_names[KCOLL_FAULT_NR] = {
	[KCOLL_FAULT_ALLOC] = "fail_alloc",
	[KCOLL_FAULT_PIN] = "fail_pin",
	[KCOLL_FAULT_REG] = "fail_reg",
	[KCOLL_FAULT_QP] = "fail_qp",
	[KCOLL_FAULT_CQ] = "fail_cq",
	[KCOLL_FAULT_CM] = "fail_cm",
	[KCOLL_FAULT_POST] = "fail_post",
};

static struct dentry *kcoll_fault_dir;

/*
 * Size 1 for every point, whatever it allocates: the attribute's "space" then counts hits,
 * so space = N, times = 1, probability = 100 fails exactly the N-th.
 */
bool kcoll_should_fail(enum kcoll_fault_class cls)
{
	return should_fail(&kcoll_fault_attrs[cls], 1);
}

/* No debugfs is no error: the points still count towards fail-nth. */
void kcoll_fault_init(void)
{
	unsigned int i;

	kcoll_fault_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	for (i = 0; i < KCOLL_FAULT_NR; i++)
		fault_create_debugfs_attr(kcoll_fault_names[i], kcoll_fault_dir,
					  &kcoll_fault_attrs[i]);
}

void kcoll_fault_exit(void)
{
	debugfs_remove_recursive(kcoll_fault_dir);
}
