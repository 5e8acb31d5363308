// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll core: opening /dev/kcoll and the ioctls on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "libkcoll_internal.h"

#define KCOLL_XSTR(x)	#x
#define KCOLL_STR(x)	KCOLL_XSTR(x)

struct kcoll_handle {
	int fd;
};

/* Indexed by bit number; append only, like the KCOLL_FEAT_* bits in the uAPI. */
static const char *const kcoll_feature_names[] = {
	[0] = "rdma_devices",	/* KCOLL_FEAT_RDMA_DEVICES */
	[1] = "sysfs",		/* KCOLL_FEAT_SYSFS */
	[2] = "comm",		/* KCOLL_FEAT_COMM */
	[3] = "p2p",		/* KCOLL_FEAT_P2P */
};

static const char *const kcoll_ioctl_names[] = {
	[KCOLL_IOC_NR_GET_INFO] = "get_info",
	[KCOLL_IOC_NR_COMM_CREATE] = "comm_create",
	[KCOLL_IOC_NR_COMM_DESTROY] = "comm_destroy",
	[KCOLL_IOC_NR_COMM_ABORT] = "comm_abort",
	[KCOLL_IOC_NR_COMM_QUERY] = "comm_query",
	[KCOLL_IOC_NR_BUF_CREATE] = "buf_create",
	[KCOLL_IOC_NR_BUF_DESTROY] = "buf_destroy",
	[KCOLL_IOC_NR_P2P] = "p2p",
	[KCOLL_IOC_NR_WAIT] = "wait",
};

/* The table order must follow the uAPI bit values, or tools would print wrong names. */
_Static_assert(KCOLL_FEAT_RDMA_DEVICES == 1ULL << 0, "feature table out of date");
_Static_assert(KCOLL_FEAT_SYSFS == 1ULL << 1, "feature table out of date");
_Static_assert(KCOLL_FEAT_COMM == 1ULL << 2, "feature table out of date");
_Static_assert(KCOLL_FEAT_P2P == 1ULL << 3, "feature table out of date");

const char *kcoll_version(void)
{
	return KCOLL_STR(LIBKCOLL_MAJOR_VERSION) "."
	       KCOLL_STR(LIBKCOLL_MINOR_VERSION) "."
	       KCOLL_STR(LIBKCOLL_PATCH_VERSION);
}

const char *kcoll_feature_str(unsigned int bit)
{
	if (bit >= KCOLL_ARRAY_SIZE(kcoll_feature_names))
		return NULL;
	return kcoll_feature_names[bit];
}

const char *kcoll_ioctl_str(unsigned int nr)
{
	if (nr >= KCOLL_ARRAY_SIZE(kcoll_ioctl_names))
		return NULL;
	return kcoll_ioctl_names[nr];
}

/*
 * The same rules the kernel applies to ioctl arguments (see the uAPI header), so that a caller
 * built against a newer libkcoll learns at once that this one cannot honour a new field,
 * instead of having it silently ignored.
 */
int kcoll_opts_validate(const void *opts, size_t known_sz, size_t min_sz)
{
	const unsigned char *p = opts;
	size_t sz, i;

	if (!opts)
		return 0;
	sz = *(const size_t *)opts;
	if (sz < min_sz)
		return -EINVAL;
	for (i = known_sz; i < sz; i++) {
		if (p[i])
			return -E2BIG;
	}
	return 0;
}

int kcoll_open(const struct kcoll_open_opts *opts, struct kcoll_handle **out)
{
	struct kcoll_handle *h;
	const char *path;
	int err;

	if (!out)
		return kcoll_err(-EINVAL);
	*out = NULL;
	err = OPTS_VALID(opts, kcoll_open_opts, flags, KCOLL_OPEN_OPTS_SZ_VER0);
	if (err)
		return kcoll_err(err);
	if (OPTS_GET(opts, flags, 0))
		return kcoll_err(-EINVAL);
	path = OPTS_GET(opts, dev_path, NULL);
	if (!path)
		path = KCOLL_DEVICE_PATH;

	h = calloc(1, sizeof(*h));
	if (!h)
		return kcoll_err(-ENOMEM);
	/* O_CLOEXEC: a handle must not leak into programs the caller executes. */
	h->fd = open(path, O_RDWR | O_CLOEXEC);
	if (h->fd < 0) {
		err = -errno;
		free(h);
		return kcoll_err(err);
	}
	*out = h;
	return 0;
}

void kcoll_close(struct kcoll_handle *h)
{
	int saved = errno;

	if (!h)
		return;
	close(h->fd);
	free(h);
	/* Callers close on their error paths; keep the errno they are about to report. */
	errno = saved;
}

int kcoll_fd(const struct kcoll_handle *h)
{
	if (!h)
		return kcoll_err(-EINVAL);
	return h->fd;
}

int kcoll_get_info(struct kcoll_handle *h, struct kcoll_info *info)
{
	if (!h || !info)
		return kcoll_err(-EINVAL);
	/* The kernel rejects non-zero flags and reserved words; start from a clean struct. */
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(h->fd, KCOLL_IOC_GET_INFO, info) < 0)
		return kcoll_err(-errno);
	/* Never hand out an unterminated string, whatever the module wrote. */
	info->version[sizeof(info->version) - 1] = '\0';
	return 0;
}
