// SPDX-License-Identifier: GPL-2.0
/*
 * The reduction offload hook, across rig VMs: the selftest engine module
 * (selftests/kernel/engine, int32 SUM only) gets the pieces it declares, the built-in
 * engine does the rest and whatever it declines, and it can be unloaded while an
 * all-reduce runs.  Every node runs it at once and loads and unloads the engine alike (with
 * rmmod: modprobe -r would also unload kcoll itself once unused).
 */
#include <sys/mman.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define ENG "/sys/kernel/kcoll/engines/"
#define PARAM "/sys/module/kcoll_test_engine/parameters/"

static long long read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static const char *builtin_name(void)
{
	return access(ENG "avx2", F_OK) == 0 ? ENG "avx2/" : ENG "generic/";
}

static long long builtin(const char *what)
{
	char p[128];

	snprintf(p, sizeof(p), "%s%s", builtin_name(), what);
	return read_ll(p);
}

FIXTURE(world) {
	int fd;
	uint32_t comm;
	unsigned int rank, nranks;
};

FIXTURE_SETUP(world)
{
	self->rank = kt_rank();
	self->nranks = kt_nranks();
	if (self->nranks < 2)
		SKIP(return, "needs at least 2 nodes");
	ASSERT_EQ(0, system("modprobe kcoll_test_engine decline=0 delay_ms=0"));
	self->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, kt_comm_world(self->fd, _metadata->name, 0, &self->comm));
}

FIXTURE_TEARDOWN(world)
{
	if (self->nranks >= 2) {
		EXPECT_EQ(0, kt_barrier(self->fd, self->comm));
		EXPECT_EQ(0, kt_comm_destroy(self->fd, self->comm));
		close(self->fd);
		system("rmmod kcoll_test_engine 2>/dev/null");
	}
}

/* All-reduce @count elements of @dt (SUM), inputs rank + i; Return: wrong elements. */
static long allreduce(FIXTURE_DATA(world) *self, int dt, uint64_t count, uint32_t flags,
		      uint64_t *req)
{
	unsigned int n = self->nranks;
	uint64_t i, wrong = 0;
	struct kcoll_coll a = {
		.size = sizeof(a), .comm = self->comm, .coll = KCOLL_ALLREDUCE, .dtype = dt,
		.op = KCOLL_SUM, .count = count, .flags = KCOLL_COLL_IN_PLACE | flags,
		.algo = KCOLL_ALG_RING,
	};
	int32_t *v = malloc(count * 4);
	int status;

	for (i = 0; i < count; i++) {
		if (dt == KCOLL_FP32)
			((float *)v)[i] = (float)(self->rank + i % 1000);
		else
			v[i] = (int32_t)(self->rank + i);
	}
	a.recvbuf = (uintptr_t)v;
	if (kt_ioctl(self->fd, KCOLL_IOC_COLL, &a))
		return -1;
	if (flags & KCOLL_COLL_NONBLOCK) {
		*req = a.req;
		/* The caller acts while it runs; then we wait here. */
		system("rmmod kcoll_test_engine 2>/dev/null");
		if (kt_wait(self->fd, self->comm, a.req, 120000, &status, NULL) || status)
			return -1;
	}
	for (i = 0; i < count; i++) {
		if (dt == KCOLL_FP32)
			wrong += ((float *)v)[i] != (float)(n * (i % 1000) + n * (n - 1) / 2);
		else
			wrong += v[i] != (int32_t)(n * i + n * (n - 1) / 2);
	}
	free(v);
	return (long)wrong;
}

TEST_F_TIMEOUT(world, engine_listed_in_sysfs, 60)
{
	EXPECT_EQ(0, read_ll(ENG "kcoll_test/builtin"));
	EXPECT_EQ(1, builtin("builtin"));
}

/* int32 SUM pieces of >= 4 KiB go to the engine, and the result is right. */
TEST_F_TIMEOUT(world, dispatch_to_engine, 300)
{
	long long calls = read_ll(ENG "kcoll_test/calls"), b = builtin("calls");

	EXPECT_EQ(0, allreduce(self, KCOLL_INT32, 200000, 0, NULL));
	EXPECT_LT(calls, read_ll(ENG "kcoll_test/calls"));
	EXPECT_EQ(b, builtin("calls"));		/* it took every reduction */
}

/* What it does not declare stays with the built-in engine. */
TEST_F_TIMEOUT(world, fallback_for_undeclared, 300)
{
	long long calls = read_ll(ENG "kcoll_test/calls"), b = builtin("calls");

	EXPECT_EQ(0, allreduce(self, KCOLL_FP32, 200000, 0, NULL));
	EXPECT_EQ(calls, read_ll(ENG "kcoll_test/calls"));
	EXPECT_LT(b, builtin("calls"));
}

/* Declined pieces fall back, counted as declined. */
TEST_F_TIMEOUT(world, fallback_when_declined, 300)
{
	long long calls, declined, b;

	ASSERT_EQ(0, kt_write_str(PARAM "decline", "1"));
	calls = read_ll(ENG "kcoll_test/calls");
	declined = read_ll(ENG "kcoll_test/declined");
	b = builtin("calls");
	EXPECT_EQ(0, allreduce(self, KCOLL_INT32, 200000, 0, NULL));
	EXPECT_EQ(calls, read_ll(ENG "kcoll_test/calls"));
	EXPECT_LT(declined, read_ll(ENG "kcoll_test/declined"));
	EXPECT_LT(b, builtin("calls"));
	ASSERT_EQ(0, kt_write_str(PARAM "decline", "0"));
}

/*
 * Unloading the engine while an all-reduce runs through it: unregister waits for the
 * piece in progress, the rest is done by the built-in engine, the result is right.
 */
TEST_F_TIMEOUT(world, unregister_while_running, 300)
{
	uint64_t req;

	ASSERT_EQ(0, kt_write_str(PARAM "delay_ms", "20"));
	EXPECT_EQ(0, allreduce(self, KCOLL_INT32, 1 << 20, KCOLL_COLL_NONBLOCK, &req));
	EXPECT_NE(0, access(ENG "kcoll_test", F_OK));
	EXPECT_NE(0, access("/sys/module/kcoll_test_engine", F_OK));
}

/* An admin's choice wins: with the built-in engine chosen for int32 SUM, the test engine
 * gets nothing; choosing the test engine again gives it the pieces back. */
TEST_F_TIMEOUT(world, admin_choice_wins, 300)
{
	char cmd[256];
	long long calls, b;
	const char *bn = access(ENG "avx2", F_OK) == 0 ? "avx2" : "generic";
	FILE *p;
	char out[8192] = "";
	size_t n;

	snprintf(cmd, sizeof(cmd), "tools/kcollctl/kcollctl engine set %s dtype int32 op sum",
		 bn);
	ASSERT_EQ(0, system(cmd));
	calls = read_ll(ENG "kcoll_test/calls");
	b = builtin("calls");
	EXPECT_EQ(0, allreduce(self, KCOLL_INT32, 200000, 0, NULL));
	EXPECT_EQ(calls, read_ll(ENG "kcoll_test/calls"));
	EXPECT_LT(b, builtin("calls"));
	p = popen("tools/kcollctl/kcollctl -j engine show", "r");
	ASSERT_NE(NULL, p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	pclose(p);
	EXPECT_NE(NULL, strstr(out, "kcoll_test")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"active\"")) TH_LOG("%s", out);
	ASSERT_EQ(0, system("tools/kcollctl/kcollctl engine set kcoll_test dtype int32 op sum"));
	calls = read_ll(ENG "kcoll_test/calls");
	EXPECT_EQ(0, allreduce(self, KCOLL_INT32, 200000, 0, NULL));
	EXPECT_LT(calls, read_ll(ENG "kcoll_test/calls"));
	/* It may not serve what it does not declare. */
	EXPECT_NE(0, system("tools/kcollctl/kcollctl engine set kcoll_test dtype fp32 op sum "
			    "2>/dev/null"));
}

TEST_HARNESS_MAIN
