// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl as a user runs it: a subprocess, checked on exit status, stdout and stderr.
 * No kernel module: "info" is tested against a missing device and a regular file, "dev"
 * against fake sysfs trees.
 */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkcoll.h>

#include "kselftest_harness.h"
#include "kcoll_test.h"

#define KCOLL_NO_DEV	"/nonexistent-kcoll-test/kcoll"
#define KCOLL_LOAD_HINT	" (is the kcoll module loaded? try: modprobe kcoll)\n"

/* Run kcollctl with up to 7 arguments; env entries as in struct kcoll_test_cmd. */
#define KCOLLCTL(proc, env, ...)					\
	kcoll_ctl_run((proc), (env), (const char *[]){ kcoll_test_kcollctl(), __VA_ARGS__, NULL })
#define KCOLLCTL0(proc, env)						\
	kcoll_ctl_run((proc), (env), (const char *[]){ kcoll_test_kcollctl(), NULL })

static int kcoll_ctl_run(struct kcoll_test_proc *proc, const char *const *env,
			 const char **argv)
{
	struct kcoll_test_cmd cmd = { .argv = argv, .env = env };

	return kcoll_test_run(&cmd, proc);
}

static bool kcoll_starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Usage errors: status 2, nothing on stdout, a message and a pointer to help on stderr. */
static void kcoll_expect_usage(struct __test_metadata *_metadata,
			       const struct kcoll_test_proc *p, const char *msg)
{
	EXPECT_EQ(2, p->status);
	EXPECT_STREQ("", p->out);
	EXPECT_NE(NULL, strstr(p->err, msg)) {
		TH_LOG("stderr: %s", p->err);
	}
}

TEST(binary_exists)
{
	ASSERT_EQ(0, access(kcoll_test_kcollctl(), X_OK)) {
		TH_LOG("%s: %s", kcoll_test_kcollctl(), strerror(errno));
	}
}

TEST(no_arguments)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL0(&p, NULL));
	EXPECT_EQ(2, p.status);
	EXPECT_TRUE(kcoll_starts_with(p.err, "Usage: kcollctl"));
}

TEST(help)
{
	static const char *const forms[] = { "--help", "-h", "help" };
	struct kcoll_test_proc p;
	size_t i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, KCOLLCTL(&p, NULL, forms[i]));
		EXPECT_EQ(0, p.status);
		EXPECT_TRUE(kcoll_starts_with(p.out, "Usage: kcollctl [ OPTIONS ] OBJECT")) {
			TH_LOG("%s: %s", forms[i], p.out);
		}
		EXPECT_NE(NULL, strstr(p.out, "OBJECT := { info | dev | comm | config | engine | stats | monitor }"));
		EXPECT_STREQ("", p.err);
	}
}

TEST(object_help)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "dev", "help"));
	EXPECT_EQ(0, p.status);
	EXPECT_TRUE(kcoll_starts_with(p.out, "Usage: kcollctl dev "));
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "info", "help"));
	EXPECT_EQ(0, p.status);
	EXPECT_TRUE(kcoll_starts_with(p.out, "Usage: kcollctl info "));
}

TEST(version)
{
	struct kcoll_test_proc p;
	char want[64];

	snprintf(want, sizeof(want), "kcollctl %s ", kcoll_version());
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "-V"));
	EXPECT_EQ(0, p.status);
	EXPECT_TRUE(kcoll_starts_with(p.out, want)) {
		TH_LOG("stdout: %s", p.out);
	}
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "--version"));
	EXPECT_EQ(0, p.status);
}

TEST(usage_errors)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "bogus"));
	kcoll_expect_usage(_metadata, &p, "kcollctl: unknown object \"bogus\"\n");
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "dev", "bogus"));
	kcoll_expect_usage(_metadata, &p, "kcollctl: dev: unknown command \"bogus\"\n"
				      "Try \"kcollctl dev help\".\n");
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "-x", "info"));
	kcoll_expect_usage(_metadata, &p, "invalid option -- 'x'");
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "--bogus", "info"));
	kcoll_expect_usage(_metadata, &p, "invalid option \"--bogus\"");
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "--device"));
	kcoll_expect_usage(_metadata, &p, "option \"--device\" requires an argument");
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "dev", "show", "a", "b"));
	kcoll_expect_usage(_metadata, &p, "unexpected argument \"b\"");
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "info", "show", "x"));
	kcoll_expect_usage(_metadata, &p, "unexpected argument \"x\"");
}

/* Usage is checked before the device is touched: exit 2 even without the module. */
TEST(usage_before_runtime)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "--device=" KCOLL_NO_DEV, "info", "show", "x"));
	EXPECT_EQ(2, p.status);
}

TEST(info_no_device)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "--device=" KCOLL_NO_DEV, "info"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	EXPECT_STREQ("kcollctl: cannot open " KCOLL_NO_DEV ": No such file or directory"
		     KCOLL_LOAD_HINT, p.err);
}

TEST(info_default_device_absent)
{
	struct kcoll_test_proc p;

	if (!access(KCOLL_DEVICE_PATH, F_OK))
		SKIP(return, KCOLL_DEVICE_PATH " exists (module loaded)");
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, "-j", "info", "show"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	EXPECT_STREQ("kcollctl: cannot open /dev/kcoll: No such file or directory"
		     KCOLL_LOAD_HINT, p.err);
}

TEST(info_not_kcoll_device)
{
	char path[] = "/tmp/kcoll-host-dev.XXXXXX", arg[PATH_MAX], want[PATH_MAX + 128];
	struct kcoll_test_proc p;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	close(fd);
	snprintf(arg, sizeof(arg), "--device=%s", path);
	ASSERT_EQ(0, KCOLLCTL(&p, NULL, arg, "-j", "info"));
	unlink(path);
	EXPECT_EQ(1, p.status);
	/* No half-written JSON when the command fails. */
	EXPECT_STREQ("", p.out);
	snprintf(want, sizeof(want), "kcollctl: %s: KCOLL_IOC_GET_INFO failed: "
		 "Inappropriate ioctl for device (is it the kcoll device?)\n", path);
	EXPECT_STREQ(want, p.err);
}

FIXTURE(sysfs) {
	char root[256];	/* mkdtemp() under $TMPDIR */
	char env[PATH_MAX + 32];
	const char *envv[2];
};

FIXTURE_SETUP(sysfs)
{
	static const struct kcoll_test_dev devs[] = {
		{ "rxe10", "RoCE\n", "1\n", "0\n", "021122fffe334455\n" },
		{ "rxe2", "RoCE\n", "1\n", "1\n", "0211220000000001\n" },
		{ "mlx5_0", "InfiniBand\n", "2\n", "1\n", "ec0d9a0300a1b2c3\n" },
	};
	size_t i;

	ASSERT_EQ(0, kcoll_test_mkdtemp(self->root, sizeof(self->root)));
	ASSERT_EQ(0, kcoll_test_mkdir(self->root, "devices"));
	for (i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		ASSERT_EQ(0, kcoll_test_add_dev(self->root, &devs[i]));
	snprintf(self->env, sizeof(self->env), KCOLL_SYSFS_ROOT_ENV "=%s", self->root);
	self->envv[0] = self->env;
	self->envv[1] = NULL;
}

FIXTURE_TEARDOWN(sysfs)
{
	kcoll_test_rmtree(self->root);
}

TEST_F(sysfs, show_plain)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "dev", "show"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ("mlx5_0: node_type InfiniBand ports 2 allowed yes node_guid ec0d:9a03:00a1:b2c3\n"
		     "rxe2: node_type RoCE ports 1 allowed yes node_guid 0211:2200:0000:0001\n"
		     "rxe10: node_type RoCE ports 1 allowed no node_guid 0211:22ff:fe33:4455\n",
		     p.out);
	EXPECT_STREQ("", p.err);
}

/* "kcollctl dev" defaults to show, "list" is its synonym. */
TEST_F(sysfs, default_command_and_list)
{
	struct kcoll_test_proc show, dflt, list;

	ASSERT_EQ(0, KCOLLCTL(&show, self->envv, "dev", "show"));
	ASSERT_EQ(0, KCOLLCTL(&dflt, self->envv, "dev"));
	ASSERT_EQ(0, KCOLLCTL(&list, self->envv, "dev", "list"));
	EXPECT_EQ(0, dflt.status);
	EXPECT_EQ(0, list.status);
	EXPECT_STREQ(show.out, dflt.out);
	EXPECT_STREQ(show.out, list.out);
}

TEST_F(sysfs, show_json_exact)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "dev", "show", "rxe10"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ("[{\"name\":\"rxe10\",\"node_type\":\"RoCE\",\"ports\":1,"
		     "\"allowed\":false,\"node_guid\":\"0211:22ff:fe33:4455\"}]\n", p.out);
}

TEST_F(sysfs, show_json_pretty)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "-p", "dev", "show", "rxe2"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ("[\n"
		     "    {\n"
		     "        \"name\": \"rxe2\",\n"
		     "        \"node_type\": \"RoCE\",\n"
		     "        \"ports\": 1,\n"
		     "        \"allowed\": true,\n"
		     "        \"node_guid\": \"0211:2200:0000:0001\"\n"
		     "    }\n"
		     "]\n", p.out);
}

/* An independent parser agrees that the output is JSON with the expected content. */
static const char kcoll_py_check[] =
	"import json, sys\n"
	"d = json.load(sys.stdin)\n"
	"assert isinstance(d, list), d\n"
	"assert [x['name'] for x in d] == sys.argv[1:], d\n"
	"for x in d:\n"
	"    assert set(x) == {'name', 'node_type', 'ports', 'allowed', 'node_guid'}, x\n"
	"    assert isinstance(x['ports'], int) and isinstance(x['allowed'], bool), x\n";

static void kcoll_py_validate(struct __test_metadata *_metadata, const char *json,
			      const char *const *names)
{
	const char *argv[8] = { "python3", "-c", kcoll_py_check };
	struct kcoll_test_cmd cmd = { .argv = argv, .input = json };
	struct kcoll_test_proc p;
	size_t i;

	for (i = 0; names[i] && i < 4; i++)
		argv[3 + i] = names[i];
	ASSERT_EQ(0, kcoll_test_run(&cmd, &p));
	if (p.status == 127)
		SKIP(return, "python3 not found");
	EXPECT_EQ(0, p.status) {
		TH_LOG("python3: %s", p.err);
	}
}

TEST_F(sysfs, show_json_parses)
{
	static const char *const names[] = { "mlx5_0", "rxe2", "rxe10", NULL };
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "dev", "show"));
	ASSERT_EQ(0, p.status);
	kcoll_py_validate(_metadata, p.out, names);
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "--json", "--pretty", "dev"));
	ASSERT_EQ(0, p.status);
	kcoll_py_validate(_metadata, p.out, names);
}

/* The validator itself must be able to fail, or the test above proves nothing. */
TEST_F(sysfs, json_validator_rejects)
{
	const char *argv[] = { "python3", "-c", kcoll_py_check, "rxe0", NULL };
	struct kcoll_test_cmd cmd = { .argv = argv };
	struct kcoll_test_proc p;

	/* "allowed" is a number, not a boolean */
	cmd.input = "[{\"name\":\"rxe0\",\"node_type\":\"RoCE\",\"ports\":1,\"allowed\":1,"
		    "\"node_guid\":\"0\"}]";
	ASSERT_EQ(0, kcoll_test_run(&cmd, &p));
	if (p.status == 127)
		SKIP(return, "python3 not found");
	EXPECT_NE(0, p.status);
	/* trailing comma */
	cmd.input = "[{\"name\":\"rxe0\",}]";
	ASSERT_EQ(0, kcoll_test_run(&cmd, &p));
	EXPECT_NE(0, p.status);
}

TEST_F(sysfs, empty_json_is_empty_array)
{
	char dir[512];
	struct kcoll_test_proc p;

	snprintf(dir, sizeof(dir), "%s/devices", self->root);
	ASSERT_EQ(0, kcoll_test_rmtree(dir));
	ASSERT_EQ(0, kcoll_test_mkdir(self->root, "devices"));
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "dev", "show"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ("[]\n", p.out);
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "dev", "show"));
	EXPECT_EQ(0, p.status);
	EXPECT_STREQ("", p.out);
}

TEST_F(sysfs, show_unknown_device)
{
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "-j", "dev", "show", "rxe7"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	EXPECT_STREQ("kcollctl: dev rxe7: no such device\n", p.err);
}

TEST_F(sysfs, malformed_tree)
{
	struct kcoll_test_proc p;
	char want[PATH_MAX + 160];

	ASSERT_EQ(0, kcoll_test_write(self->root, "devices/rxe2/ports", "lots\n"));
	ASSERT_EQ(0, KCOLLCTL(&p, self->envv, "dev", "show"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("", p.out);
	snprintf(want, sizeof(want), "kcollctl: cannot read %s/devices: unexpected content "
		 "(kcollctl and the module disagree on the sysfs layout)\n", self->root);
	EXPECT_STREQ(want, p.err);
}

TEST(dev_no_sysfs)
{
	static const char *const env[] = {
		KCOLL_SYSFS_ROOT_ENV "=/nonexistent-kcoll-test", NULL,
	};
	struct kcoll_test_proc p;

	ASSERT_EQ(0, KCOLLCTL(&p, env, "dev", "show"));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("kcollctl: cannot read /nonexistent-kcoll-test/devices: "
		     "No such file or directory" KCOLL_LOAD_HINT, p.err);
}

/* A failed write (full disk, here /dev/full) must not exit 0. */
TEST(write_error)
{
	const char *argv[] = { kcoll_test_kcollctl(), "--help", NULL };
	struct kcoll_test_cmd cmd = { .argv = argv, .stdout_path = "/dev/full" };
	struct kcoll_test_proc p;

	if (access("/dev/full", W_OK))
		SKIP(return, "no /dev/full");
	ASSERT_EQ(0, kcoll_test_run(&cmd, &p));
	EXPECT_EQ(1, p.status);
	EXPECT_STREQ("kcollctl: write error: No space left on device\n", p.err);
}

/*
 * kcollctl(8) names every key "comm show" prints in JSON (the key arguments of the print
 * calls in tools/kcollctl/comm.c), so that a key added to the output cannot go
 * undocumented: each must appear in the page's source as a font request of its own
 * (".I key", ".IR key ,").
 */
static char *slurp(const char *path)
{
	static char buf[2][262144];
	static int which;
	char *b = buf[which++ & 1];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	n = fread(b, 1, sizeof(buf[0]) - 1, f);
	fclose(f);
	b[n] = 0;
	return b;
}

static bool man_names(const char *page, const char *key)
{
	static const char *const fonts[] = { "\n.I ", "\n.IR ", "\n.B ", "\n.BR " };
	char pat[128];
	size_t i;

	for (i = 0; i < sizeof(fonts) / sizeof(fonts[0]); i++) {
		const char *p = page;

		snprintf(pat, sizeof(pat), "%s%s", fonts[i], key);
		while ((p = strstr(p, pat))) {
			char c = p[strlen(pat)];

			if (c == '\n' || c == ' ' || c == ',')
				return true;
			p++;
		}
	}
	return false;
}

/* The JSON keys of comm.c: the key argument of its print calls (print.c's interface). */
static const char *const kcoll_key_calls[] = {
	"KCOLL_CTL_ANY, \"", "KCOLL_CTL_JSON, \"", "_begin(ctl, \"",
};

TEST(man_page_names_every_comm_json_key)
{
	char *src = slurp(KCOLL_SRC_TOP "/tools/kcollctl/comm.c");
	char *page = slurp(KCOLL_SRC_TOP "/man/man8/kcollctl.8");
	char *p, key[64];
	int nkeys = 0;
	size_t i;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, page);
	for (i = 0; i < sizeof(kcoll_key_calls) / sizeof(kcoll_key_calls[0]); i++) {
		for (p = src; (p = strstr(p, kcoll_key_calls[i])); ) {
			size_t n;

			p += strlen(kcoll_key_calls[i]);
			n = strcspn(p, "\"");
			ASSERT_LT(n, sizeof(key));
			memcpy(key, p, n);
			key[n] = 0;
			nkeys++;
			EXPECT_TRUE(man_names(page, key)) {
				TH_LOG("kcollctl(8) does not name the comm show JSON key \"%s\"", key);
			}
		}
	}
	EXPECT_LE(30, nkeys);	/* the scan found the printers' keys */
}

TEST_HARNESS_MAIN
