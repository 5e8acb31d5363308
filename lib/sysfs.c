// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll sysfs readers: /sys/kernel/kcoll/devices/<ibdev>/{node_type,ports,allowed,node_guid}
 * and /sys/kernel/kcoll/comms/<comm_id>-<rank>[-ns<inode>]/{state,error,rank,...}.
 *
 * Parsing is strict: the module writes these files with fixed formats, so anything else means
 * the tree is not what this library was written for (-EBADMSG) rather than something to guess
 * around.  A device that disappears while it is being read (unplug, rename) or a communicator
 * destroyed meanwhile is simply left out: the list is a snapshot, not a promise.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libkcoll_internal.h"

/* kcoll_*_read() result for an entry that is not (or no longer) a device/comm directory. */
#define KCOLL_ENTRY_SKIP	1

/*
 * One family of objects in sysfs, <root>/<subdir>/<name>/<attributes>: devices and
 * communicators are listed by the same code, each family bringing its reader and its order.
 */
struct kcoll_sysfs_family {
	const char *subdir;
	size_t size;					/* of one entry */
	int (*read)(int dirfd, const char *name, void *entry);	/* 0, SKIP or -errno */
	int (*cmp)(const void *a, const void *b);	/* qsort() order */
};

struct kcoll_vec {
	void *v;
	size_t n;
	size_t cap;
};

const char *kcoll_sysfs_root(void)
{
	/* secure_getenv: a set-uid caller must not be pointed at a tree of the user's making. */
	const char *root = secure_getenv(KCOLL_SYSFS_ROOT_ENV);

	return root && *root ? root : KCOLL_SYSFS_ROOT_DEFAULT;
}

/* Read a whole attribute into @buf (NUL terminated); -EBADMSG if it does not fit. */
static int kcoll_attr_read(int dfd, const char *attr, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t r;
	int fd, err = 0;

	fd = openat(dfd, attr, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < len - 1) {
		r = read(fd, buf + off, len - 1 - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = -errno;
		if (r <= 0)
			break;
		off += r;
	}
	close(fd);
	if (err)
		return err;
	/* Every valid value is well below the buffer size; a full buffer means garbage. */
	if (off == len - 1)
		return -EBADMSG;
	buf[off] = '\0';
	return 0;
}

/* Strip the one trailing newline sysfs_emit() adds; the rest must be a single, non-empty line. */
static int kcoll_attr_line(char *buf)
{
	size_t len = strlen(buf);

	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (!len || strchr(buf, '\n'))
		return -EBADMSG;
	return 0;
}

/* Names the module prints are plain ASCII; anything else must not reach a terminal. */
static int kcoll_parse_word(const char *s, void *unused)
{
	(void)unused;
	for (; *s; s++) {
		if (*s < 0x20 || *s > 0x7e)
			return -EBADMSG;
	}
	return 0;
}

static int kcoll_parse_uint(const char *s, void *val)
{
	unsigned long v;
	char *end;

	/* strtoul() would accept leading blanks and a minus sign; sysfs prints neither. */
	if (!isdigit((unsigned char)s[0]))
		return -EBADMSG;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return -EBADMSG;
	*(unsigned int *)val = v;
	return 0;
}

static int kcoll_parse_bool(const char *s, void *val)
{
	if (strcmp(s, "0") && strcmp(s, "1"))
		return -EBADMSG;
	*(int *)val = s[0] == '1';
	return 0;
}

static int kcoll_parse_guid(const char *s, void *val)
{
	size_t i, len = strlen(s);

	if (!len || len > 16)
		return -EBADMSG;
	for (i = 0; i < len; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -EBADMSG;
	}
	*(uint64_t *)val = strtoull(s, NULL, 16);
	return 0;
}

/* Read attribute @attr of a device as one trimmed line. */
static int kcoll_attr_str(int dfd, const char *attr, char *buf, size_t len)
{
	int err = kcoll_attr_read(dfd, attr, buf, len);

	return err ? err : kcoll_attr_line(buf);
}

/*
 * One attribute file, named as the entry's field: @parse checks its line and stores it in
 * the field; a @text field holds the line itself (@parse only checks it).  Const tables.
 */
struct kcoll_sysfs_attr {
	const char *name;
	size_t off, size;
	int (*parse)(const char *s, void *field);
	bool text;
};

#define KCOLL_SYSFS_ATTR(type, m, parse_, text_) \
	{ #m, offsetof(type, m), sizeof(((type *)0)->m), (parse_), (text_) }

/* Read @n attributes @a into entry @e, numbers through a buffer of @buflen (<= 64) bytes. */
static int kcoll_attrs_read(int fd, const struct kcoll_sysfs_attr *a, size_t n, void *e,
			    size_t buflen)
{
	char buf[64], *field, *s;
	int err = 0;

	for (; !err && n; a++, n--) {
		field = (char *)e + a->off;
		s = a->text ? field : buf;
		err = kcoll_attr_str(fd, a->name, s, a->text ? a->size : buflen);
		if (!err)
			err = a->parse(s, field);
	}
	return err;
}

#define DEV(m, parse, text)	KCOLL_SYSFS_ATTR(struct kcoll_dev_entry, m, parse, text)

static const struct kcoll_sysfs_attr kcoll_dev_attrs[] = {
	DEV(node_type, kcoll_parse_word, true),
	DEV(ports, kcoll_parse_uint, false),
	DEV(allowed, kcoll_parse_bool, false),
	DEV(node_guid, kcoll_parse_guid, false),
};

/*
 * A missing attribute is either a device going away under us (its whole directory vanishes;
 * kernfs answers -ENODEV to a read already in flight) or a tree of another layout.
 */
static int kcoll_entry_attr_err(int dirfd, const char *name, int err)
{
	if (err != -ENOENT && err != -ENODEV)
		return err;
	if (faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) && errno == ENOENT)
		return KCOLL_ENTRY_SKIP;
	return -EBADMSG;
}

/* Fill @e from devices/@name; 0, KCOLL_ENTRY_SKIP, or a negative errno. */
static int kcoll_dev_read(int dirfd, const char *name, void *entry)
{
	struct kcoll_dev_entry *e = entry;
	int fd, err;

	memset(e, 0, sizeof(*e));
	if (strlen(name) >= sizeof(e->name))
		return -ENAMETOOLONG;
	strcpy(e->name, name);

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return KCOLL_ENTRY_SKIP;	/* vanished, or a file the module may add later */
	if (fd < 0)
		return -errno;
	err = kcoll_attrs_read(fd, kcoll_dev_attrs, KCOLL_ARRAY_SIZE(kcoll_dev_attrs), e, 64);
	close(fd);
	return err ? kcoll_entry_attr_err(dirfd, name, err) : 0;
}

static int kcoll_vec_push(struct kcoll_vec *vec, const void *e, size_t size)
{
	void *v;
	size_t cap;

	if (vec->n == vec->cap) {
		cap = vec->cap ? vec->cap * 2 : 8;
		v = reallocarray(vec->v, cap, size);
		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
	memcpy((char *)vec->v + vec->n++ * size, e, size);
	return 0;
}

static int kcoll_sysfs_scan(DIR *dir, const struct kcoll_sysfs_family *f, struct kcoll_vec *vec,
			    void *e)
{
	struct dirent *de;
	int err;

	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de)
			return -errno;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		err = f->read(dirfd(dir), de->d_name, e);
		if (err == KCOLL_ENTRY_SKIP)
			continue;
		if (!err)
			err = kcoll_vec_push(vec, e, f->size);
		if (err)
			return err;
	}
}

/* Open <root>/@sub; -ENOENT for a missing root tells the caller the module is not loaded. */
static DIR *kcoll_subdir_open(const char *root, const char *sub, int *err)
{
	int rootfd, fd;
	DIR *dir;

	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		*err = -errno;
		return NULL;
	}
	fd = openat(rootfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*err = fd < 0 ? -errno : 0;
	close(rootfd);
	if (fd < 0)
		return NULL;
	dir = fdopendir(fd);
	if (!dir) {
		*err = -errno;
		close(fd);
	}
	return dir;
}

/* Read and sort every entry of a family; *out is malloc()ed, NULL when there is none. */
static int kcoll_sysfs_list(const char *root, const struct kcoll_sysfs_family *f, void **out,
			    size_t *n)
{
	struct kcoll_vec vec = { 0 };
	void *scratch;
	DIR *dir;
	int err;

	scratch = malloc(f->size);
	if (!scratch)
		return -ENOMEM;
	dir = kcoll_subdir_open(root, f->subdir, &err);
	if (!dir) {
		free(scratch);
		return err;
	}
	err = kcoll_sysfs_scan(dir, f, &vec, scratch);
	closedir(dir);
	free(scratch);
	if (err) {
		free(vec.v);
		return err;
	}
	if (vec.n)
		qsort(vec.v, vec.n, f->size, f->cmp);
	*out = vec.v;
	*n = vec.n;
	return 0;
}

/*
 * kcoll_dev_list() and kcoll_comm_list(): @bad is their options' check (0: valid), @root
 * their sysfs_root (NULL: the default).
 */
static int kcoll_sysfs_list_opts(int bad, const char *root, const struct kcoll_sysfs_family *f,
				 void **out, size_t *n)
{
	int err;

	if (!out || !n)
		return kcoll_err(-EINVAL);
	*out = NULL;
	*n = 0;
	if (bad)
		return kcoll_err(bad);
	err = kcoll_sysfs_list(root ? root : kcoll_sysfs_root(), f, out, n);
	return err ? kcoll_err(err) : 0;
}

/* Natural order, so that rxe2 comes before rxe10. */
static int kcoll_dev_cmp(const void *a, const void *b)
{
	const struct kcoll_dev_entry *x = a, *y = b;

	return strverscmp(x->name, y->name);
}

static const struct kcoll_sysfs_family kcoll_dev_family = {
	.subdir = "devices",
	.size = sizeof(struct kcoll_dev_entry),
	.read = kcoll_dev_read,
	.cmp = kcoll_dev_cmp,
};

/* Communicators ---------------------------------------------------------------------------- */

#define KCOLL_COMM_LIST_OPTS_SZ_VER0	offsetofend(struct kcoll_comm_list_opts, sysfs_root)

/* Largest errno the kernel hands out (include/linux/err.h). */
#define KCOLL_MAX_ERRNO	4095

/* The names of enum kcoll_comm_state the module prints (kmod/kcoll_comm.c). */
static const char *const kcoll_comm_states[] = {
	"creating", "connecting", "ready", "error", "aborted", "destroyed",
};

static int kcoll_parse_u64(const char *s, void *val)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EBADMSG;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EBADMSG;
	*(uint64_t *)val = v;
	return 0;
}

/* "%d" of a negative errno, or "0". */
static int kcoll_parse_errno(const char *s, void *val)
{
	unsigned int v;
	int err;

	if (!strcmp(s, "0")) {
		*(int32_t *)val = 0;
		return 0;
	}
	if (s[0] != '-' || s[1] == '0')
		return -EBADMSG;
	err = kcoll_parse_uint(s + 1, &v);
	if (err || v > KCOLL_MAX_ERRNO)
		return -EBADMSG;
	*(int32_t *)val = -(int32_t)v;
	return 0;
}

static int kcoll_parse_state(const char *s, void *unused)
{
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(kcoll_comm_states) / sizeof(kcoll_comm_states[0]); i++) {
		if (!strcmp(s, kcoll_comm_states[i]))
			return 0;
	}
	return -EBADMSG;
}

/* Decimal digits at @s up to @stop (or the end); *@next is where they stopped. */
static int kcoll_parse_uint_until(const char *s, char stop, unsigned int *val,
				  const char **next)
{
	char buf[16];
	size_t len = strcspn(s, (char[]){ stop, '\0' });

	if (!len || len >= sizeof(buf))
		return -EBADMSG;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*next = s + len;
	return kcoll_parse_uint(buf, val);
}

/* "%016llx-%u" or "%016llx-%u-ns%u", as kcoll_comm_sysfs_add() names the directory. */
static int kcoll_comm_parse_name(const char *name, uint64_t *comm_id, unsigned int *rank)
{
	unsigned int inum;
	const char *p;
	int i;

	for (i = 0; i < 16; i++) {
		if (!isdigit((unsigned char)name[i]) && (name[i] < 'a' || name[i] > 'f'))
			return -EBADMSG;
	}
	if (name[16] != '-')
		return -EBADMSG;
	*comm_id = strtoull(name, NULL, 16);
	if (kcoll_parse_uint_until(name + 17, '-', rank, &p))
		return -EBADMSG;
	if (!*p)
		return 0;
	if (strncmp(p, "-ns", 3) || kcoll_parse_uint_until(p + 3, '\0', &inum, &p))
		return -EBADMSG;
	return 0;
}

#define COMM(m, parse, text)	KCOLL_SYSFS_ATTR(struct kcoll_comm_entry, m, parse, text)

static const struct kcoll_sysfs_attr kcoll_comm_attrs[] = {
	COMM(state, kcoll_parse_state, true),
	COMM(error, kcoll_parse_errno, false),
	COMM(rank, kcoll_parse_uint, false),
	COMM(nranks, kcoll_parse_uint, false),
	COMM(owner_pid, kcoll_parse_uint, false),
	COMM(peers_connected, kcoll_parse_uint, false),
	COMM(tx_bytes, kcoll_parse_u64, false),
	COMM(rx_bytes, kcoll_parse_u64, false),
	COMM(tx_ops, kcoll_parse_u64, false),
	COMM(rx_ops, kcoll_parse_u64, false),
};

/* Fill @e from comms/@name; 0, KCOLL_ENTRY_SKIP, or a negative errno. */
static int kcoll_comm_read(int dirfd, const char *name, void *entry)
{
	struct kcoll_comm_entry *e = entry;
	unsigned int rank;
	int fd, err;

	memset(e, 0, sizeof(*e));
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return KCOLL_ENTRY_SKIP;	/* destroyed, or a file the module may add later */
	if (fd < 0)
		return -errno;
	/* A directory of another name is a layout this library does not know. */
	err = kcoll_comm_parse_name(name, &e->comm_id, &rank);
	if (!err && strlen(name) >= sizeof(e->name))
		err = -EBADMSG;
	if (!err) {
		strcpy(e->name, name);
		err = kcoll_attrs_read(fd, kcoll_comm_attrs, KCOLL_ARRAY_SIZE(kcoll_comm_attrs),
				       e, 32);
		if (err)
			err = kcoll_entry_attr_err(dirfd, name, err);
	}
	close(fd);
	if (!err && (e->rank != rank || e->rank >= e->nranks))
		err = -EBADMSG;
	return err;
}

/* By id, then rank; equal ids and ranks of different network namespaces by name. */
static int kcoll_comm_cmp(const void *a, const void *b)
{
	const struct kcoll_comm_entry *x = a, *y = b;

	if (x->comm_id != y->comm_id)
		return x->comm_id < y->comm_id ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strverscmp(x->name, y->name);
}

static const struct kcoll_sysfs_family kcoll_comm_family = {
	.subdir = "comms",
	.size = sizeof(struct kcoll_comm_entry),
	.read = kcoll_comm_read,
	.cmp = kcoll_comm_cmp,
};

/* The listings -------------------------------------------------------------------------- */

int kcoll_dev_list(const struct kcoll_dev_list_opts *opts,
		   struct kcoll_dev_entry **devs, size_t *n)
{
	return kcoll_sysfs_list_opts(OPTS_VALID(opts, kcoll_dev_list_opts, sysfs_root,
						KCOLL_DEV_LIST_OPTS_SZ_VER0),
				     OPTS_GET(opts, sysfs_root, NULL), &kcoll_dev_family,
				     (void **)devs, n);
}

int kcoll_comm_list(const struct kcoll_comm_list_opts *opts,
		    struct kcoll_comm_entry **comms, size_t *n)
{
	return kcoll_sysfs_list_opts(OPTS_VALID(opts, kcoll_comm_list_opts, sysfs_root,
						KCOLL_COMM_LIST_OPTS_SZ_VER0),
				     OPTS_GET(opts, sysfs_root, NULL), &kcoll_comm_family,
				     (void **)comms, n);
}

void kcoll_dev_list_free(struct kcoll_dev_entry *devs)
{
	free(devs);
}

void kcoll_comm_list_free(struct kcoll_comm_entry *comms)
{
	free(comms);
}
