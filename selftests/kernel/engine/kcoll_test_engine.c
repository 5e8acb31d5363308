// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_test_engine: a reduction engine module for kcoll's selftests.
 *
 * It declares int32 SUM for pieces of at least min_bytes and does them in plain C.
 * Parameters (writable at run time under /sys/module/kcoll_test_engine/parameters/):
 *   decline	decline every piece it declared (kcoll falls back to its built-in engine)
 *   delay_ms	sleep this long in every piece (to unregister while operations run)
 *   min_bytes	smallest piece it declares
 * kcoll counts what it did in /sys/kernel/kcoll/engines/kcoll_test/.
 */
#include <linux/delay.h>
#include <linux/module.h>

#include "../../../kmod/kcoll_engine.h"

static bool decline;
module_param(decline, bool, 0644);
MODULE_PARM_DESC(decline, "Decline every piece (default no)");
static unsigned int delay_ms;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "Sleep per piece in ms (default 0)");
static unsigned int min_bytes = 4096;
module_param(min_bytes, uint, 0644);
MODULE_PARM_DESC(min_bytes, "Smallest piece declared (default 4096)");

static bool kcoll_test_supports(enum kcoll_datatype dt, enum kcoll_red_op op, size_t bytes)
{
	return dt == KCOLL_INT32 && op == KCOLL_SUM &&
	       bytes >= READ_ONCE(min_bytes);
}

static int kcoll_test_reduce3(void *dst, const void *a, const void *b, size_t count,
			      enum kcoll_datatype dt, enum kcoll_red_op op)
{
	const u32 *x = a, *y = b;
	u32 *d = dst;
	size_t i;

	if (READ_ONCE(decline))
		return -EOPNOTSUPP;
	if (READ_ONCE(delay_ms))
		msleep(READ_ONCE(delay_ms));
	for (i = 0; i < count; i++)
		d[i] = x[i] + y[i];	/* wraps, as kcoll's semantics say */
	return 0;
}

static struct kcoll_engine kcoll_test_engine = {
	.name		= "kcoll_test",
	.owner		= THIS_MODULE,
	.supports	= kcoll_test_supports,
	.reduce3	= kcoll_test_reduce3,
};

static int __init kcoll_test_engine_init(void)
{
	return kcoll_engine_register(&kcoll_test_engine);
}

static void __exit kcoll_test_engine_exit(void)
{
	kcoll_engine_unregister(&kcoll_test_engine);
}

module_init(kcoll_test_engine_init);
module_exit(kcoll_test_engine_exit);
MODULE_DESCRIPTION("kcoll selftest reduction engine");
MODULE_LICENSE("GPL");
