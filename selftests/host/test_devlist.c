// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll_dev_list() against fake /sys/kernel/kcoll trees built in a temporary directory.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkcoll.h>

#include "kselftest_harness.h"
#include "kcoll_test.h"

static const struct kcoll_test_dev kcoll_rxe0 = {
	"rxe0", "RoCE\n", "1\n", "1\n", "021122fffe334455\n",
};

static const struct kcoll_test_dev kcoll_mlx = {
	"mlx5_0", "InfiniBand\n", "2\n", "0\n", "ec0d9a0300a1b2c3\n",
};

FIXTURE(fake_sysfs) {
	char root[256];	/* mkdtemp() under $TMPDIR */
	struct kcoll_dev_entry *devs;
	size_t n;
};

/* An empty module tree: the top-level files and an empty devices/. */
static void kcoll_fake_root(struct __test_metadata *_metadata, char *root, size_t len)
{
	ASSERT_EQ(0, kcoll_test_mkdtemp(root, len));
	ASSERT_EQ(0, kcoll_test_write(root, "version", "0.1.0\n"));
	ASSERT_EQ(0, kcoll_test_write(root, "abi_version", "1\n"));
	ASSERT_EQ(0, kcoll_test_mkdir(root, "devices"));
	/* Make sure no test reads the real tree by accident. */
	unsetenv(KCOLL_SYSFS_ROOT_ENV);
}

/* List @root; the library's result. */
static int kcoll_list(const char *root, struct kcoll_dev_entry **devs, size_t *n)
{
	KCOLL_OPTS(kcoll_dev_list_opts, opts, .sysfs_root = root);

	return kcoll_dev_list(&opts, devs, n);
}

FIXTURE_SETUP(fake_sysfs)
{
	kcoll_fake_root(_metadata, self->root, sizeof(self->root));
}

FIXTURE_TEARDOWN(fake_sysfs)
{
	kcoll_dev_list_free(self->devs);
	kcoll_test_rmtree(self->root);
}

TEST_F(fake_sysfs, no_devices)
{
	ASSERT_EQ(0, kcoll_list(self->root, &self->devs, &self->n));
	EXPECT_EQ(0, self->n);
	EXPECT_EQ(NULL, self->devs);
}

TEST_F(fake_sysfs, two_devices)
{
	const struct kcoll_dev_entry *d;

	ASSERT_EQ(0, kcoll_test_add_dev(self->root, &kcoll_rxe0));
	ASSERT_EQ(0, kcoll_test_add_dev(self->root, &kcoll_mlx));
	ASSERT_EQ(0, kcoll_list(self->root, &self->devs, &self->n));
	ASSERT_EQ(2, self->n);

	d = &self->devs[0];
	EXPECT_STREQ("mlx5_0", d->name);
	EXPECT_STREQ("InfiniBand", d->node_type);
	EXPECT_EQ(2, d->ports);
	EXPECT_EQ(0, d->allowed);
	EXPECT_EQ(0xec0d9a0300a1b2c3ULL, d->node_guid);

	d = &self->devs[1];
	EXPECT_STREQ("rxe0", d->name);
	EXPECT_STREQ("RoCE", d->node_type);
	EXPECT_EQ(1, d->ports);
	EXPECT_EQ(1, d->allowed);
	EXPECT_EQ(0x021122fffe334455ULL, d->node_guid);
}

/* Natural order, and enough devices to grow the internal array more than once. */
TEST_F(fake_sysfs, many_devices_sorted)
{
	struct kcoll_test_dev d = kcoll_rxe0;
	char name[16], want[16];
	int i;

	for (i = 19; i >= 0; i--) {
		snprintf(name, sizeof(name), "rxe%d", i);
		d.name = name;
		ASSERT_EQ(0, kcoll_test_add_dev(self->root, &d));
	}
	ASSERT_EQ(0, kcoll_list(self->root, &self->devs, &self->n));
	ASSERT_EQ(20, self->n);
	for (i = 0; i < 20; i++) {
		snprintf(want, sizeof(want), "rxe%d", i);
		EXPECT_STREQ(want, self->devs[i].name);
	}
}

/* Without opts the library takes $KCOLL_SYSFS_ROOT. */
TEST_F(fake_sysfs, env_root)
{
	ASSERT_EQ(0, kcoll_test_add_dev(self->root, &kcoll_rxe0));
	ASSERT_EQ(0, setenv(KCOLL_SYSFS_ROOT_ENV, self->root, 1));
	ASSERT_EQ(0, kcoll_dev_list(NULL, &self->devs, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_STREQ("rxe0", self->devs[0].name);
}

/* Values without the trailing newline, the maximum values, and a stray file are fine. */
TEST_F(fake_sysfs, lenient_where_harmless)
{
	const struct kcoll_test_dev d = {
		"siw0", "iWARP", "4294967295", "1", "ffffffffffffffff",
	};

	ASSERT_EQ(0, kcoll_test_add_dev(self->root, &d));
	ASSERT_EQ(0, kcoll_test_write(self->root, "devices/not-a-device", "x\n"));
	ASSERT_EQ(0, kcoll_list(self->root, &self->devs, &self->n));
	ASSERT_EQ(1, self->n);
	EXPECT_STREQ("iWARP", self->devs[0].node_type);
	EXPECT_EQ(4294967295u, self->devs[0].ports);
	EXPECT_EQ(~0ULL, self->devs[0].node_guid);
}

TEST_F(fake_sysfs, missing_root)
{
	KCOLL_OPTS(kcoll_dev_list_opts, opts, .sysfs_root = "/nonexistent-kcoll-test");

	errno = 0;
	EXPECT_EQ(-ENOENT, kcoll_dev_list(&opts, &self->devs, &self->n));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(NULL, self->devs);
	EXPECT_EQ(0, self->n);
}

TEST_F(fake_sysfs, missing_devices_dir)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/devices", self->root);
	ASSERT_EQ(0, rmdir(dir));
	EXPECT_EQ(-ENOENT, kcoll_list(self->root, &self->devs, &self->n));
}

TEST_F(fake_sysfs, null_args)
{
	EXPECT_EQ(-EINVAL, kcoll_dev_list(NULL, NULL, &self->n));
	EXPECT_EQ(-EINVAL, kcoll_dev_list(NULL, &self->devs, NULL));
}

TEST_F(fake_sysfs, opts_validation)
{
	struct {
		struct kcoll_dev_list_opts base;
		long future;
	} next;
	struct kcoll_dev_list_opts small = { .sz = sizeof(size_t) };

	EXPECT_EQ(-EINVAL, kcoll_dev_list(&small, &self->devs, &self->n));
	memset(&next, 0, sizeof(next));
	next.base.sz = sizeof(next);
	next.base.sysfs_root = self->root;
	next.future = 7;
	EXPECT_EQ(-E2BIG, kcoll_dev_list(&next.base, &self->devs, &self->n));
	next.future = 0;
	EXPECT_EQ(0, kcoll_dev_list(&next.base, &self->devs, &self->n));
}

/*
 * One malformed attribute of rxe0 per variant, next to a good device: the whole listing fails
 * with EBADMSG rather than returning a partial or guessed list.
 */
FIXTURE(bad_attr) {
	char root[256];	/* mkdtemp() under $TMPDIR */
	struct kcoll_dev_entry *devs;
	size_t n;
};

FIXTURE_SETUP(bad_attr)
{
	kcoll_fake_root(_metadata, self->root, sizeof(self->root));
	ASSERT_EQ(0, kcoll_test_add_dev(self->root, &kcoll_mlx));
	ASSERT_EQ(0, kcoll_test_add_dev(self->root, &kcoll_rxe0));
}

FIXTURE_TEARDOWN(bad_attr)
{
	kcoll_dev_list_free(self->devs);
	kcoll_test_rmtree(self->root);
}

FIXTURE_VARIANT(bad_attr) {
	const char *attr;
	const char *value;	/* NULL: the attribute is missing */
};

FIXTURE_VARIANT_ADD(bad_attr, ports_word) { .attr = "ports", .value = "one\n" };
FIXTURE_VARIANT_ADD(bad_attr, ports_negative) { .attr = "ports", .value = "-1\n" };
FIXTURE_VARIANT_ADD(bad_attr, ports_space) { .attr = "ports", .value = " 1\n" };
FIXTURE_VARIANT_ADD(bad_attr, ports_overflow) { .attr = "ports", .value = "4294967296\n" };
FIXTURE_VARIANT_ADD(bad_attr, ports_empty) { .attr = "ports", .value = "" };
FIXTURE_VARIANT_ADD(bad_attr, ports_two_lines) { .attr = "ports", .value = "1\n2\n" };
FIXTURE_VARIANT_ADD(bad_attr, allowed_two) { .attr = "allowed", .value = "2\n" };
FIXTURE_VARIANT_ADD(bad_attr, allowed_yes) { .attr = "allowed", .value = "yes\n" };
FIXTURE_VARIANT_ADD(bad_attr, guid_short_prefix) { .attr = "node_guid", .value = "0x12\n" };
FIXTURE_VARIANT_ADD(bad_attr, guid_too_long) {
	.attr = "node_guid", .value = "0021122fffe334455\n" };
FIXTURE_VARIANT_ADD(bad_attr, guid_colons) {
	.attr = "node_guid", .value = "0211:22ff:fe33:4455\n" };
FIXTURE_VARIANT_ADD(bad_attr, node_type_empty) { .attr = "node_type", .value = "\n" };
FIXTURE_VARIANT_ADD(bad_attr, node_type_control) { .attr = "node_type", .value = "Ro\033CE\n" };
FIXTURE_VARIANT_ADD(bad_attr, node_type_too_long) {
	.attr = "node_type", .value = "0123456789012345678901234567890123456789\n" };
FIXTURE_VARIANT_ADD(bad_attr, node_type_missing) { .attr = "node_type", .value = NULL };
FIXTURE_VARIANT_ADD(bad_attr, guid_missing) { .attr = "node_guid", .value = NULL };

TEST_F(bad_attr, rejected)
{
	char rel[128], path[512];

	snprintf(rel, sizeof(rel), "devices/rxe0/%s", variant->attr);
	snprintf(path, sizeof(path), "%s/%s", self->root, rel);
	/* Braces: the harness's ASSERT_*() are not single statements. */
	if (variant->value) {
		ASSERT_EQ(0, kcoll_test_write(self->root, rel, variant->value));
	} else {
		ASSERT_EQ(0, unlink(path));
	}
	errno = 0;
	EXPECT_EQ(-EBADMSG, kcoll_list(self->root, &self->devs, &self->n));
	EXPECT_EQ(EBADMSG, errno);
	EXPECT_EQ(NULL, self->devs);
	EXPECT_EQ(0, self->n);
}

TEST_F(fake_sysfs, name_too_long)
{
	struct kcoll_test_dev d = kcoll_rxe0;
	char name[80];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	d.name = name;
	ASSERT_EQ(0, kcoll_test_add_dev(self->root, &d));
	EXPECT_EQ(-ENAMETOOLONG, kcoll_list(self->root, &self->devs, &self->n));
}

TEST(free_null)
{
	kcoll_dev_list_free(NULL);
}

TEST_HARNESS_MAIN
