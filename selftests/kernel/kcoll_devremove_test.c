// SPDX-License-Identifier: GPL-2.0
/*
 * Device removal under load, on two nodes: while both ranks run all-reduces in a loop, one
 * node deletes its RDMA device (`rdma link delete`, 20 rounds, the nodes taking turns) or
 * unloads rdma_rxe altogether, while netlink dumps of its communicators run beside.  Every
 * caller must get an error within the bound, the node must not splat (the rig's kernel log
 * check), and once the device is back a new communicator must work.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define KCOLLCTL	"tools/kcollctl/kcollctl"
#define RXE_ADD		"rdma link add rxe0 type rxe netdev eth0"
#define COUNT		(256 * 1024)	/* 1 MiB of floats per all-reduce */
#define OP_TIMEOUT_MS	3000

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The re-added device is listed by kcoll (its ib_client saw it) and its port is active. */
static int rxe_wait_active(void)
{
	int i;

	for (i = 0; i < 300; i++) {
		if (!sh("rdma link show rxe0/1 2>/dev/null | grep -q 'state ACTIVE'") &&
		    !access("/sys/kernel/kcoll/devices/rxe0", F_OK))
			return 0;
		usleep(100000);
	}
	return -ETIMEDOUT;
}

/* A child that dumps every communicator over netlink until it is killed. */
static pid_t start_dumper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;)
			sh(KCOLLCTL " -j comm show >/dev/null 2>&1");
	}
	return pid;
}

/* A child that runs @cmd after @delay_us. */
static pid_t start_remover(const char *cmd, unsigned int delay_us)
{
	pid_t pid = fork();

	if (pid == 0) {
		usleep(delay_us);
		_exit(sh(cmd));
	}
	return pid;
}

static void reap(pid_t pid, bool kill_it)
{
	int st;

	if (pid <= 0)
		return;
	if (kill_it)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static int allreduce(int fd, uint32_t comm, float *mem)
{
	struct kcoll_coll a = {
		.size = sizeof(a), .comm = comm, .coll = KCOLL_ALLREDUCE, .dtype = KCOLL_FP32,
		.op = KCOLL_SUM, .count = COUNT, .flags = KCOLL_COLL_IN_PLACE,
		.recvbuf = (uintptr_t)mem,
	};

	return kt_ioctl(fd, KCOLL_IOC_COLL, &a);
}

/* After the device is back: a fresh communicator's all-reduce gives the right sum. */
static int fresh_comm_works(const char *name, unsigned int salt, float *mem)
{
	struct kcoll_sockaddr peers[2] = { kt_addr(0), kt_addr(1) };
	uint32_t h;
	int fd, ret, i;

	ret = kt_meet(name, salt, 2, 600);
	if (ret)
		return ret;
	fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = kt_comm_create(fd, kt_comm_id(name, salt), kt_rank(), 2, peers, 120000, &h, NULL);
	if (ret)
		goto out;
	for (i = 0; i < COUNT; i++)
		mem[i] = (float)(kt_rank() + 1);
	ret = allreduce(fd, h, mem);
	for (i = 0; !ret && i < COUNT; i++)
		if (mem[i] != 3.0f)
			ret = -EBADMSG;
	if (!ret)
		ret = kt_barrier(fd, h);
	kt_comm_destroy(fd, h);
out:
	close(fd);
	return ret;
}

FIXTURE(pair) {
	float *mem;
	struct kcoll_sockaddr peers[2];
};

FIXTURE_SETUP(pair)
{
	if (kt_nranks() < 2)
		SKIP(return, "needs 2 nodes");
	self->mem = calloc(COUNT, sizeof(float));
	ASSERT_NE(NULL, self->mem);
	self->peers[0] = kt_addr(0);
	self->peers[1] = kt_addr(1);
	/* A peer whose device went away is noticed by the silence bound: keep it short. */
	ASSERT_EQ(0, sh(KCOLLCTL " config set op_timeout_ms 3000"));
}

FIXTURE_TEARDOWN(pair)
{
	if (kt_nranks() < 2)
		return;
	sh(KCOLLCTL " config set op_timeout_ms 10000");
	free(self->mem);
}

/*
 * One round: both ranks loop all-reduces on a new communicator; node @victim runs @remove
 * after a delay that varies by round.  Returns the loop's error on this node.
 */
static void remove_round(struct __test_metadata *_metadata, FIXTURE_DATA(pair) *self,
			 const char *name, unsigned int round, unsigned int victim,
			 const char *remove, const char *restore)
{
	unsigned int me = kt_rank(), calls = 0;
	pid_t dumper = -1, remover = -1;
	double t0, t_end;
	uint32_t h;
	int fd, ret;

	ASSERT_EQ(0, kt_meet(name, round, 2, 600));
	fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kt_comm_create(fd, kt_comm_id(name, round), me, 2, self->peers, 120000,
				    &h, NULL)) TH_LOG("round %u", round);
	if (me == victim) {
		dumper = start_dumper();
		remover = start_remover(remove, 200000 + (round % 5) * 150000);
	}
	t0 = kt_now();
	do {
		ret = allreduce(fd, h, self->mem);
		calls++;
	} while (!ret && kt_now() - t0 < 120);
	t_end = kt_now();
	reap(remover, false);
	reap(dumper, true);
	/*
	 * The node that lost its device sees ENODEV (or the failure it caused first); its
	 * peer sees the connection go or the silence bound pass.
	 */
	EXPECT_TRUE(ret == -ENODEV || ret == -ECONNRESET || ret == -ETIMEDOUT ||
		    ret == -ECONNABORTED || ret == -EIO)
		TH_LOG("round %u: node %u after %u calls: %d (%s)", round, me, calls, ret,
		       strerror(-ret));
	/* Removed well under a second in; the bound is op_timeout_ms plus the rig's slack. */
	EXPECT_GT(1.0 + OP_TIMEOUT_MS / 1000.0 + 20, t_end - t0) TH_LOG("round %u", round);
	EXPECT_EQ(0, kt_comm_destroy(fd, h));
	close(fd);
	if (me == victim) {
		ASSERT_EQ(0, sh(restore)) TH_LOG("round %u: %s", round, restore);
		ASSERT_EQ(0, rxe_wait_active()) TH_LOG("round %u: rxe0 did not come back", round);
	}
}

/* `rdma link delete` 20 times (5 on the debug kernel), the nodes taking turns. */
TEST_F_TIMEOUT(pair, link_delete_during_allreduce, 1500)
{
	unsigned int round, rounds = kt_quick() ? 5 : 20;

	for (round = 0; round < rounds; round++)
		remove_round(_metadata, self, "devrm", round, round % 2,
			     "rdma link delete rxe0", RXE_ADD);
	EXPECT_EQ(0, fresh_comm_works("devrm-after", 0, self->mem));
}

/* Unloading the driver removes its devices the same way. */
TEST_F_TIMEOUT(pair, rxe_unload_during_allreduce, 600)
{
	remove_round(_metadata, self, "rxe-unload", 0, 1, "modprobe -r rdma_rxe",
		     "modprobe rdma_rxe && " RXE_ADD);
	EXPECT_EQ(0, fresh_comm_works("rxe-unload-after", 0, self->mem));
}

TEST_HARNESS_MAIN
