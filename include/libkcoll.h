/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libkcoll: userspace access to the kcoll kernel module (/dev/kcoll, /sys/kernel/kcoll).
 *
 * Conventions (the same as libbpf and liburing):
 *  - Every function that can fail returns a negative errno value; it also leaves the positive
 *    value in errno, so callers may use either.  The library never prints.
 *  - Option structs start with @sz and are declared with KCOLL_OPTS(), which zeroes them and
 *    sets @sz.  A newer caller may pass a larger struct as long as the fields this library does
 *    not know are zero (else -E2BIG); an @sz below the first published size is -EINVAL.
 *  - Exported symbols are versioned (KCOLL_0.1, ...).  A struct the library hands out is only
 *    ever extended behind a new symbol version, so old binaries keep their layout.
 */
#ifndef _LIBKCOLL_H
#define _LIBKCOLL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/kcoll.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KCOLL_API
#define KCOLL_API __attribute__((visibility("default")))
#endif

#define LIBKCOLL_MAJOR_VERSION	0
#define LIBKCOLL_MINOR_VERSION	1
#define LIBKCOLL_PATCH_VERSION	0

/* sysfs directory of the module; the environment variable overrides it (tests, containers). */
#define KCOLL_SYSFS_ROOT_DEFAULT	"/sys/kernel/kcoll"
#define KCOLL_SYSFS_ROOT_ENV		"KCOLL_SYSFS_ROOT"

/*
 * Declare and initialise an option struct: zero everything, padding included (the library
 * checks that bytes it does not know are zero), then set @sz and the given fields.
 *
 *	KCOLL_OPTS(kcoll_open_opts, opts, .dev_path = "/dev/kcoll");
 */
#define KCOLL_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE) {						\
			.sz = sizeof(struct TYPE),			\
			__VA_ARGS__					\
		};							\
	})

/* An open /dev/kcoll; opaque so that it can grow without breaking callers. */
struct kcoll_handle;

struct kcoll_open_opts {
	/* size of this struct, for forward/backward compatibility; set by KCOLL_OPTS() */
	size_t sz;
	/* device node to open; NULL means KCOLL_DEVICE_PATH */
	const char *dev_path;
	/* no flag is defined yet: must be 0 */
	unsigned int flags;
	size_t :0;
};

KCOLL_API const char *kcoll_version(void);

KCOLL_API int kcoll_open(const struct kcoll_open_opts *opts, struct kcoll_handle **out);
KCOLL_API void kcoll_close(struct kcoll_handle *h);
KCOLL_API int kcoll_fd(const struct kcoll_handle *h);

/* KCOLL_IOC_GET_INFO; the library zeroes @info and sets info->size itself. */
KCOLL_API int kcoll_get_info(struct kcoll_handle *h, struct kcoll_info *info);

/* Names of KCOLL_FEAT_* bit numbers and KCOLL_IOC_NR_* numbers; NULL when unknown. */
KCOLL_API const char *kcoll_feature_str(unsigned int bit);
KCOLL_API const char *kcoll_ioctl_str(unsigned int nr);

/* $KCOLL_SYSFS_ROOT if set (ignored in set-uid programs), else KCOLL_SYSFS_ROOT_DEFAULT. */
KCOLL_API const char *kcoll_sysfs_root(void);

/* An RDMA device as /sys/kernel/kcoll/devices/NAME/ describes it. */
struct kcoll_dev_entry {
	char name[64];		/* ib device name, e.g. "rxe0" (IB_DEVICE_NAME_MAX) */
	char node_type[32];	/* "RoCE", "InfiniBand", "iWARP", "unknown", ... */
	unsigned int ports;	/* number of ports */
	int allowed;		/* 1 when the devices= module parameter lets kcoll use it */
	uint64_t node_guid;	/* host byte order */
};

struct kcoll_dev_list_opts {
	size_t sz;
	/* directory holding devices/; NULL means kcoll_sysfs_root() */
	const char *sysfs_root;
	size_t :0;
};

/*
 * Snapshot of the devices kcoll tracks, sorted by name.  *devs is one allocation of *n
 * entries (NULL when there are none); release it with kcoll_dev_list_free().
 */
KCOLL_API int kcoll_dev_list(const struct kcoll_dev_list_opts *opts,
			     struct kcoll_dev_entry **devs, size_t *n);
KCOLL_API void kcoll_dev_list_free(struct kcoll_dev_entry *devs);

#ifdef __cplusplus
}
#endif

#endif /* _LIBKCOLL_H */
