/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core/kcoll_types.h - the only environment the core/ sources see.
 *
 * core/ holds pure logic (reduction kernels, collective schedules) that is compiled both into
 * the kernel module (kbuild, -nostdinc, no libc) and into userspace host tests and benchmarks.
 * Everything the core needs from its environment comes through this header:
 *
 *   - fixed-width integers u8..u64 and s8..s64, size_t, bool, true/false;
 *   - memcpy() and memset() (nothing else from libc);
 *   - EINVAL and the other errno values used (returned negated, kernel style);
 *   - kcoll_div_u64()/kcoll_mod_u64(): 64-bit division, div64_u64() in the kernel so that a
 *     32-bit build would not need libgcc.
 */
#ifndef _KCOLL_CORE_TYPES_H
#define _KCOLL_CORE_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/math64.h>

static inline u64 kcoll_div_u64(u64 a, u64 b)
{
	return div64_u64(a, b);
}

static inline u64 kcoll_mod_u64(u64 a, u64 b)
{
	return a - div64_u64(a, b) * b;
}
#else /* userspace */
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
#include <stdbool.h>

#ifndef KCOLL_CORE_NO_KTYPES
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
#endif

static inline u64 kcoll_div_u64(u64 a, u64 b)
{
	return a / b;
}

static inline u64 kcoll_mod_u64(u64 a, u64 b)
{
	return a % b;
}
#endif /* __KERNEL__ */

#endif /* _KCOLL_CORE_TYPES_H */
