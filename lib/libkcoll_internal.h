/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internals shared by the libkcoll sources; never installed.
 */
#ifndef _LIBKCOLL_INTERNAL_H
#define _LIBKCOLL_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "libkcoll.h"

#ifndef offsetofend
#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#endif

/*
 * First published size of each option struct: the offset just past its last field in
 * libkcoll 0.1.  Fields added later are read with OPTS_GET(), which falls back to a default
 * when an older caller's @sz does not cover them.
 */
#define KCOLL_OPEN_OPTS_SZ_VER0		offsetofend(struct kcoll_open_opts, flags)
#define KCOLL_DEV_LIST_OPTS_SZ_VER0	offsetofend(struct kcoll_dev_list_opts, sysfs_root)

int kcoll_opts_validate(const void *opts, size_t known_sz, size_t min_sz);

/*
 * 0 when @opts is NULL or acceptable, else -EINVAL/-E2BIG.  @last_field is the newest
 * field this library knows; everything past it in the caller's struct must be zero.
 */
#define OPTS_VALID(opts, type, last_field, min_sz)			\
	kcoll_opts_validate((opts), offsetofend(struct type, last_field), (min_sz))

#define OPTS_HAS(opts, field)						\
	((opts) && (opts)->sz >= offsetofend(typeof(*(opts)), field))

#define OPTS_GET(opts, field, fallback)					\
	(OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* Return -err and mirror it in errno, as the public header promises. */
static inline int kcoll_err(int err)
{
	if (err < 0)
		errno = -err;
	return err;
}

#endif /* _LIBKCOLL_INTERNAL_H */
