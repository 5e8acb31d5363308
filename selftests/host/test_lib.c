// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkcoll without a kernel module: option validation, error returns, handles on files that
 * are not the device, and the exported symbol set of libkcoll.so.0.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libkcoll.h>

#include "kselftest_harness.h"
#include "kcoll_test.h"

#ifndef LIBKCOLL_SO_PATH
#error "LIBKCOLL_SO_PATH must name the libkcoll.so.0 of this tree"
#endif

#define KCOLL_NO_DEV	"/nonexistent-kcoll-test/kcoll"

/* A caller built against a future header: our struct plus fields this library lacks. */
struct kcoll_open_opts_next {
	struct kcoll_open_opts base;
	unsigned long long new_field;
};

TEST(version)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", LIBKCOLL_MAJOR_VERSION,
		 LIBKCOLL_MINOR_VERSION, LIBKCOLL_PATCH_VERSION);
	ASSERT_NE(NULL, kcoll_version());
	EXPECT_STREQ(want, kcoll_version());
}

TEST(opts_macro_sets_sz_and_zeroes)
{
	KCOLL_OPTS(kcoll_open_opts, opts, .flags = 0);

	EXPECT_EQ(sizeof(struct kcoll_open_opts), opts.sz);
	EXPECT_EQ(NULL, opts.dev_path);
	EXPECT_EQ(0, opts.flags);
}

TEST(open_null_out)
{
	errno = 0;
	EXPECT_EQ(-EINVAL, kcoll_open(NULL, NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST(open_sz_too_small)
{
	struct kcoll_handle *h = (void *)1;
	struct kcoll_open_opts opts = { .sz = 0, .dev_path = KCOLL_NO_DEV };

	EXPECT_EQ(-EINVAL, kcoll_open(&opts, &h));
	EXPECT_EQ(NULL, h);
	opts.sz = sizeof(size_t);
	EXPECT_EQ(-EINVAL, kcoll_open(&opts, &h));
	/* One byte short of the first published size. */
	opts.sz = offsetof(struct kcoll_open_opts, flags) + sizeof(opts.flags) - 1;
	EXPECT_EQ(-EINVAL, kcoll_open(&opts, &h));
}

TEST(open_flags_nonzero)
{
	struct kcoll_handle *h;
	KCOLL_OPTS(kcoll_open_opts, opts, .dev_path = KCOLL_NO_DEV, .flags = 1);

	EXPECT_EQ(-EINVAL, kcoll_open(&opts, &h));
	opts.flags = 0x80000000u;
	EXPECT_EQ(-EINVAL, kcoll_open(&opts, &h));
}

TEST(open_unknown_tail_nonzero)
{
	struct kcoll_open_opts_next next;
	struct kcoll_handle *h;

	memset(&next, 0, sizeof(next));
	next.base.dev_path = KCOLL_NO_DEV;
	next.base.sz = sizeof(next);
	next.new_field = 1;
	errno = 0;
	EXPECT_EQ(-E2BIG, kcoll_open(&next.base, &h));
	EXPECT_EQ(E2BIG, errno);
}

/* A zero tail is what an old caller of a new field looks like: accepted. */
TEST(open_unknown_tail_zero)
{
	struct kcoll_open_opts_next next;
	struct kcoll_handle *h;

	memset(&next, 0, sizeof(next));
	next.base.dev_path = KCOLL_NO_DEV;
	next.base.sz = sizeof(next);
	/* Validation passed when the error comes from open(2). */
	EXPECT_EQ(-ENOENT, kcoll_open(&next.base, &h));
}

/* The first published size exactly (no tail padding) is valid. */
TEST(open_sz_ver0_exact)
{
	struct kcoll_handle *h;
	KCOLL_OPTS(kcoll_open_opts, opts, .dev_path = KCOLL_NO_DEV);

	opts.sz = offsetof(struct kcoll_open_opts, flags) + sizeof(opts.flags);
	EXPECT_EQ(-ENOENT, kcoll_open(&opts, &h));
}

TEST(open_nonexistent)
{
	struct kcoll_handle *h = (void *)1;
	KCOLL_OPTS(kcoll_open_opts, opts, .dev_path = KCOLL_NO_DEV);

	errno = 0;
	EXPECT_EQ(-ENOENT, kcoll_open(&opts, &h));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(NULL, h);
}

/* NULL opts means /dev/kcoll, which this host does not have unless the module is loaded. */
TEST(open_null_opts_default_path)
{
	struct kcoll_handle *h;
	int err;

	if (!access(KCOLL_DEVICE_PATH, F_OK))
		SKIP(return, KCOLL_DEVICE_PATH " exists (module loaded)");
	err = kcoll_open(NULL, &h);
	EXPECT_EQ(-ENOENT, err);
}

TEST(close_null)
{
	kcoll_close(NULL);
}

TEST(fd_null)
{
	EXPECT_EQ(-EINVAL, kcoll_fd(NULL));
}

TEST(get_info_null)
{
	struct kcoll_info info;

	EXPECT_EQ(-EINVAL, kcoll_get_info(NULL, &info));
}

FIXTURE(regular_file) {
	char path[64];
	struct kcoll_handle *h;
};

FIXTURE_SETUP(regular_file)
{
	KCOLL_OPTS(kcoll_open_opts, opts);
	int fd;

	strcpy(self->path, "/tmp/kcoll-host-dev.XXXXXX");
	fd = mkstemp(self->path);
	ASSERT_LE(0, fd);
	close(fd);
	opts.dev_path = self->path;
	ASSERT_EQ(0, kcoll_open(&opts, &self->h));
	ASSERT_NE(NULL, self->h);
}

FIXTURE_TEARDOWN(regular_file)
{
	kcoll_close(self->h);
	unlink(self->path);
}

/* The device check is the first ioctl: a regular file answers ENOTTY. */
TEST_F(regular_file, get_info_enotty)
{
	struct kcoll_info info;

	memset(&info, 0xa5, sizeof(info));
	errno = 0;
	EXPECT_EQ(-ENOTTY, kcoll_get_info(self->h, &info));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(regular_file, get_info_null_info)
{
	EXPECT_EQ(-EINVAL, kcoll_get_info(self->h, NULL));
}

TEST_F(regular_file, fd_is_the_file_and_cloexec)
{
	struct stat a, b;
	int fd = kcoll_fd(self->h);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fstat(fd, &a));
	ASSERT_EQ(0, stat(self->path, &b));
	EXPECT_EQ(b.st_ino, a.st_ino);
	EXPECT_EQ(b.st_dev, a.st_dev);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_RDWR, fcntl(fd, F_GETFL) & O_ACCMODE);
}

TEST_F(regular_file, close_preserves_errno)
{
	errno = EXDEV;
	kcoll_close(self->h);
	self->h = NULL;
	EXPECT_EQ(EXDEV, errno);
}

TEST(open_directory)
{
	struct kcoll_handle *h;
	KCOLL_OPTS(kcoll_open_opts, opts, .dev_path = "/");

	EXPECT_EQ(-EISDIR, kcoll_open(&opts, &h));
}

TEST(feature_and_ioctl_names)
{
	EXPECT_STREQ("rdma_devices", kcoll_feature_str(0));
	EXPECT_STREQ("sysfs", kcoll_feature_str(1));
	EXPECT_STREQ("comm", kcoll_feature_str(2));
	EXPECT_STREQ("p2p", kcoll_feature_str(3));
	EXPECT_EQ(NULL, kcoll_feature_str(4));
	EXPECT_EQ(NULL, kcoll_feature_str(63));
	EXPECT_EQ(NULL, kcoll_feature_str(~0u));
	EXPECT_STREQ("get_info", kcoll_ioctl_str(KCOLL_IOC_NR_GET_INFO));
	EXPECT_STREQ("comm_create", kcoll_ioctl_str(KCOLL_IOC_NR_COMM_CREATE));
	EXPECT_STREQ("wait", kcoll_ioctl_str(KCOLL_IOC_NR_WAIT));
	EXPECT_EQ(NULL, kcoll_ioctl_str(KCOLL_IOC_NR_WAIT + 1));
	EXPECT_EQ(NULL, kcoll_ioctl_str(~0u));
}

/*
 * Every symbol libkcoll.so.0 exports, with the version node it is in: the whole ABI.  A
 * symbol added, dropped or moved to another node fails shared_object_symbol_set, so
 * this table and lib/libkcoll.map change together (released nodes never change).
 */
static const struct {
	const char *name, *version;
} kcoll_abi[] = {
	{ "kcoll_close", "KCOLL_0.1" }, { "kcoll_dev_list", "KCOLL_0.1" },
	{ "kcoll_dev_list_free", "KCOLL_0.1" }, { "kcoll_fd", "KCOLL_0.1" },
	{ "kcoll_feature_str", "KCOLL_0.1" }, { "kcoll_get_info", "KCOLL_0.1" },
	{ "kcoll_ioctl_str", "KCOLL_0.1" }, { "kcoll_open", "KCOLL_0.1" },
	{ "kcoll_sysfs_root", "KCOLL_0.1" }, { "kcoll_version", "KCOLL_0.1" },

	{ "kcoll_buf_create", "KCOLL_0.2" }, { "kcoll_buf_destroy", "KCOLL_0.2" },
	{ "kcoll_buf_len", "KCOLL_0.2" }, { "kcoll_buf_ptr", "KCOLL_0.2" },
	{ "kcoll_comm_abort", "KCOLL_0.2" }, { "kcoll_comm_destroy", "KCOLL_0.2" },
	{ "kcoll_comm_init_env", "KCOLL_0.2" }, { "kcoll_comm_init_rank", "KCOLL_0.2" },
	{ "kcoll_comm_list", "KCOLL_0.2" }, { "kcoll_comm_list_free", "KCOLL_0.2" },
	{ "kcoll_comm_query", "KCOLL_0.2" }, { "kcoll_comm_rank", "KCOLL_0.2" },
	{ "kcoll_comm_size", "KCOLL_0.2" }, { "kcoll_get_unique_id", "KCOLL_0.2" },
	{ "kcoll_irecv", "KCOLL_0.2" }, { "kcoll_irecv_buf", "KCOLL_0.2" },
	{ "kcoll_isend", "KCOLL_0.2" }, { "kcoll_isend_buf", "KCOLL_0.2" },
	{ "kcoll_last_error", "KCOLL_0.2" }, { "kcoll_recv", "KCOLL_0.2" },
	{ "kcoll_recv_buf", "KCOLL_0.2" }, { "kcoll_send", "KCOLL_0.2" },
	{ "kcoll_send_buf", "KCOLL_0.2" }, { "kcoll_test", "KCOLL_0.2" },
	{ "kcoll_wait", "KCOLL_0.2" },

	{ "kcoll_algorithm_from_str", "KCOLL_0.3" }, { "kcoll_algorithm_str", "KCOLL_0.3" },
	{ "kcoll_allgather", "KCOLL_0.3" }, { "kcoll_allgatherv", "KCOLL_0.3" },
	{ "kcoll_allreduce", "KCOLL_0.3" }, { "kcoll_alltoall", "KCOLL_0.3" },
	{ "kcoll_alltoallv", "KCOLL_0.3" }, { "kcoll_barrier", "KCOLL_0.3" },
	{ "kcoll_broadcast", "KCOLL_0.3" }, { "kcoll_collective_from_str", "KCOLL_0.3" },
	{ "kcoll_collective_str", "KCOLL_0.3" }, { "kcoll_datatype_from_str", "KCOLL_0.3" },
	{ "kcoll_datatype_size", "KCOLL_0.3" }, { "kcoll_datatype_str", "KCOLL_0.3" },
	{ "kcoll_gather", "KCOLL_0.3" }, { "kcoll_nl_close", "KCOLL_0.3" },
	{ "kcoll_nl_comm_abort", "KCOLL_0.3" }, { "kcoll_nl_comm_get", "KCOLL_0.3" },
	{ "kcoll_nl_comm_list", "KCOLL_0.3" }, { "kcoll_nl_comm_list_free", "KCOLL_0.3" },
	{ "kcoll_nl_config_get", "KCOLL_0.3" }, { "kcoll_nl_config_set", "KCOLL_0.3" },
	{ "kcoll_nl_dev_list", "KCOLL_0.3" }, { "kcoll_nl_dev_list_free", "KCOLL_0.3" },
	{ "kcoll_nl_dev_set", "KCOLL_0.3" }, { "kcoll_nl_dev_set_gid", "KCOLL_0.3" },
	{ "kcoll_nl_engine_list", "KCOLL_0.3" }, { "kcoll_nl_engine_list_free", "KCOLL_0.3" },
	{ "kcoll_nl_engine_set", "KCOLL_0.3" }, { "kcoll_nl_event_next", "KCOLL_0.3" },
	{ "kcoll_nl_event_str", "KCOLL_0.3" }, { "kcoll_nl_fd", "KCOLL_0.3" },
	{ "kcoll_nl_monitor", "KCOLL_0.3" }, { "kcoll_nl_open", "KCOLL_0.3" },
	{ "kcoll_red_op_from_str", "KCOLL_0.3" }, { "kcoll_red_op_str", "KCOLL_0.3" },
	{ "kcoll_reduce", "KCOLL_0.3" }, { "kcoll_reduce_scatter", "KCOLL_0.3" },
	{ "kcoll_reduce_scatterv", "KCOLL_0.3" }, { "kcoll_scatter", "KCOLL_0.3" },

	{ "kcoll_buf_offset", "KCOLL_0.4" }, { "kcoll_comm_id", "KCOLL_0.4" },

	{ "kcoll_group_end", "KCOLL_0.5" }, { "kcoll_group_start", "KCOLL_0.5" },

	{ "kcoll_comm_split", "KCOLL_0.6" },
	/* Their structures grew: the 0.3 layout stays at KCOLL_0.3 (lib/nl_compat.c). */
	{ "kcoll_nl_comm_get", "KCOLL_0.6" }, { "kcoll_nl_comm_list", "KCOLL_0.6" },
	{ "kcoll_nl_comm_list_free", "KCOLL_0.6" },

	{ "kcoll_nl_config_get_opts", "KCOLL_0.7" }, { "kcoll_nl_config_set_opts", "KCOLL_0.7" },
	{ "kcoll_transport_from_str", "KCOLL_0.7" }, { "kcoll_transport_str", "KCOLL_0.7" },
};

#define KCOLL_ABI_N	(sizeof(kcoll_abi) / sizeof(kcoll_abi[0]))

/* Whether the table has @name at @version. */
static bool kcoll_abi_has(const char *name, const char *version)
{
	size_t i;

	for (i = 0; i < KCOLL_ABI_N; i++)
		if (!strcmp(kcoll_abi[i].name, name) && !strcmp(kcoll_abi[i].version, version))
			return true;
	return false;
}

/* Each symbol of the table is there under its nodes, and in no other. */
TEST(shared_object_exports)
{
	static const char *const nodes[] = { "KCOLL_0.1", "KCOLL_0.2", "KCOLL_0.3", "KCOLL_0.4",
					     "KCOLL_0.5", "KCOLL_0.6", "KCOLL_0.7" };
	void *so = dlopen(LIBKCOLL_SO_PATH, RTLD_NOW | RTLD_LOCAL);
	size_t i, j;

	ASSERT_NE(NULL, so) {
		TH_LOG("dlopen %s: %s", LIBKCOLL_SO_PATH, dlerror());
	}
	for (i = 0; i < KCOLL_ABI_N; i++) {
		for (j = 0; j < sizeof(nodes) / sizeof(nodes[0]); j++) {
			bool want = kcoll_abi_has(kcoll_abi[i].name, nodes[j]);

			EXPECT_EQ(want, dlvsym(so, kcoll_abi[i].name, nodes[j]) != NULL) {
				TH_LOG("%s@%s: %s", kcoll_abi[i].name, nodes[j],
				       want ? "missing" : "present");
			}
		}
	}
	EXPECT_EQ(NULL, dlsym(so, "kcoll_nl_talk"));
	EXPECT_EQ(NULL, dlsym(so, "kcoll_opts_validate"));
	dlclose(so);
}

/*
 * The exported set is exactly the table: the dynamic symbol table as nm(1) reads it, every
 * defined symbol but the version nodes themselves ("A" entries).
 */
TEST(shared_object_symbol_set)
{
	char line[512], name[256], ver[64], type;
	bool seen[KCOLL_ABI_N];
	size_t i, n = 0;
	FILE *f;

	memset(seen, 0, sizeof(seen));
	f = popen("nm -D --defined-only " LIBKCOLL_SO_PATH " 2>/dev/null", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		char *at;

		if (sscanf(line, "%*s %c %255s", &type, name) != 2 || type == 'A')
			continue;
		n++;
		/* name@@NODE: the default version; name@NODE: an older one kept (.symver) */
		at = strchr(name, '@');
		snprintf(ver, sizeof(ver), "%s", at ? at + 1 + (at[1] == '@') : "(none)");
		if (at)
			*at = 0;
		for (i = 0; i < KCOLL_ABI_N; i++)
			if (!strcmp(name, kcoll_abi[i].name) && !strcmp(ver, kcoll_abi[i].version))
				break;
		EXPECT_NE(KCOLL_ABI_N, i) {
			TH_LOG("%s@%s is exported but not in the table", name, ver);
		}
		if (i < KCOLL_ABI_N)
			seen[i] = true;
	}
	ASSERT_EQ(0, pclose(f)) {
		TH_LOG("nm -D failed (binutils missing?)");
	}
	for (i = 0; i < KCOLL_ABI_N; i++) {
		EXPECT_TRUE(seen[i]) {
			TH_LOG("%s@%s is not exported", kcoll_abi[i].name, kcoll_abi[i].version);
		}
	}
	EXPECT_EQ(KCOLL_ABI_N, n);
}

/*
 * A program built against libkcoll 0.5 binds the communicator listing at KCOLL_0.3: its own
 * functions (old structure sizes), not the 0.6 ones, checking their arguments the same way.
 */
TEST(nl_comm_0_3_kept)
{
	int (*list3)(void *, void **, size_t *), (*list6)(void *, void **, size_t *);
	void (*free3)(void *, size_t);
	void *so = dlopen(LIBKCOLL_SO_PATH, RTLD_NOW | RTLD_LOCAL), *out = NULL;
	size_t n = 0;

	ASSERT_NE(NULL, so);
	list3 = (int (*)(void *, void **, size_t *))dlvsym(so, "kcoll_nl_comm_list", "KCOLL_0.3");
	list6 = (int (*)(void *, void **, size_t *))dlvsym(so, "kcoll_nl_comm_list", "KCOLL_0.6");
	free3 = (void (*)(void *, size_t))dlvsym(so, "kcoll_nl_comm_list_free", "KCOLL_0.3");
	ASSERT_NE(NULL, list3);
	ASSERT_NE(NULL, list6);
	ASSERT_NE(NULL, free3);
	EXPECT_NE((void *)list3, (void *)list6);
	EXPECT_EQ(-EINVAL, list3(NULL, NULL, &n));
	EXPECT_EQ(-EINVAL, list3(NULL, &out, &n));
	EXPECT_EQ(NULL, out);
	free3(NULL, 0);
	dlclose(so);
}

/* The KCOLL_0.4 accessors on NULL: no crash, the documented error values. */
TEST(accessors_null)
{
	errno = 0;
	EXPECT_EQ(0, kcoll_comm_id(NULL));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-EINVAL, kcoll_buf_offset(NULL));
	EXPECT_EQ(EINVAL, errno);
}

TEST(sysfs_root_env)
{
	unsetenv(KCOLL_SYSFS_ROOT_ENV);
	EXPECT_STREQ("/sys/kernel/kcoll", kcoll_sysfs_root());
	setenv(KCOLL_SYSFS_ROOT_ENV, "", 1);
	EXPECT_STREQ("/sys/kernel/kcoll", kcoll_sysfs_root());
	setenv(KCOLL_SYSFS_ROOT_ENV, "/tmp/fake-kcoll", 1);
	EXPECT_STREQ("/tmp/fake-kcoll", kcoll_sysfs_root());
	unsetenv(KCOLL_SYSFS_ROOT_ENV);
}

TEST_HARNESS_MAIN
