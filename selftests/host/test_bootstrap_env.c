// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkcoll bootstrap without a kernel module, from the environment (lib/boot_env.c): the
 * variables of torchrun, Slurm and Open MPI and their precedence, incomplete or malformed
 * values, root address and port, the job tag, and a rendezvous of forked ranks that other
 * jobs cannot join.
 *
 * Linked against libkcoll.a: the rendezvous is reached through the library's internal
 * kcoll_bootstrap_rank() and kcoll_bootstrap_env(), which stop where the ioctl would start.
 * Only 127.0.0.1 and ::1 are used, with ephemeral ports.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap_test.h"

#include "kselftest_harness.h"

/* The environment ----------------------------------------------------------------------- */

TEST(env_nothing_set)
{
	struct kcoll_env_conf c;

	clear_env();
	EXPECT_EQ(-EINVAL, kcoll_env_parse(&c));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "no rank in the environment"));
}

static void set_all_launchers(void)
{
	setenv("KCOLL_RANK", "2", 1);
	setenv("KCOLL_NRANKS", "5", 1);
	setenv("KCOLL_LOCAL_RANK", "4", 1);
	setenv("RANK", "3", 1);
	setenv("WORLD_SIZE", "6", 1);
	setenv("LOCAL_RANK", "1", 1);
	setenv("SLURM_PROCID", "4", 1);
	setenv("SLURM_NTASKS", "7", 1);
	setenv("SLURM_LOCALID", "0", 1);
	setenv("OMPI_COMM_WORLD_RANK", "5", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
	setenv("PMI_RANK", "6", 1);
	setenv("PMI_SIZE", "9", 1);
	setenv("MPI_LOCALRANKID", "3", 1);
	setenv("MASTER_ADDR", "node0", 1);
}

/*
 * Which launcher's variables win, in order: each row unsets the winner of the row before.
 * An MPI launcher's ranks come before Slurm's: mpirun (or Hydra) inside an sbatch script or
 * an srun step leaves the script's or the daemon's SLURM_PROCID to all of its processes.
 */
static const struct {
	const char *unset[2];	/* the previous winner's rank and size variables */
	const char *source;
	int rank, nranks, local_rank;
	const char *root_host;	/* NULL: not checked */
} env_order[] = {
	{ { NULL, NULL }, "KCOLL", 2, 5, 4, NULL },
	{ { "KCOLL_RANK", "KCOLL_NRANKS" }, "torchrun", 3, 6, 1, NULL },
	{ { "RANK", "WORLD_SIZE" }, "Open MPI", 5, 8, 2, "node0" },
	{ { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" }, "MPICH (PMI)", 6, 9, 3, NULL },
	{ { "PMI_RANK", "PMI_SIZE" }, "Slurm", 4, 7, 0, NULL },
};

TEST(env_precedence)
{
	struct kcoll_env_conf c;
	size_t i;

	clear_env();
	set_all_launchers();
	for (i = 0; i < sizeof(env_order) / sizeof(env_order[0]); i++) {
		if (env_order[i].unset[0]) {
			unsetenv(env_order[i].unset[0]);
			unsetenv(env_order[i].unset[1]);
		}
		ASSERT_EQ(0, kcoll_env_parse(&c));
		EXPECT_STREQ(env_order[i].source, c.source);
		EXPECT_EQ(env_order[i].rank, c.rank) TH_LOG("%s", env_order[i].source);
		EXPECT_EQ(env_order[i].nranks, c.nranks) TH_LOG("%s", env_order[i].source);
		EXPECT_EQ(env_order[i].local_rank, c.local_rank) TH_LOG("%s", env_order[i].source);
		if (env_order[i].root_host)
			EXPECT_STREQ(env_order[i].root_host, c.root_host);
	}

	/* An empty variable is an unset one. */
	setenv("KCOLL_RANK", "", 1);
	setenv("KCOLL_NRANKS", "", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	EXPECT_STREQ("Slurm", c.source);
	clear_env();
}

TEST(env_incomplete_or_malformed)
{
	static const struct {
		const char *set[3][2];
		const char *msg;
	} cases[] = {
		{ { { "KCOLL_RANK", "1" } }, "KCOLL_RANK is set but KCOLL_NRANKS is not" },
		{ { { "KCOLL_NRANKS", "4" } }, "KCOLL_NRANKS is set but KCOLL_RANK is not" },
		{ { { "RANK", "1" } }, "RANK is set but WORLD_SIZE is not (torchrun)" },
		{ { { "SLURM_NTASKS", "2" } }, "SLURM_NTASKS is set but SLURM_PROCID is not" },
		{ { { "OMPI_COMM_WORLD_RANK", "0" } }, "OMPI_COMM_WORLD_SIZE is not" },
		{ { { "PMI_SIZE", "2" } }, "PMI_SIZE is set but PMI_RANK is not (MPICH (PMI))" },
		{ { { "RANK", "one" }, { "WORLD_SIZE", "2" } }, "RANK=\"one\" is not a whole" },
		{ { { "RANK", "-1" }, { "WORLD_SIZE", "2" } }, "RANK=\"-1\"" },
		{ { { "RANK", " 1" }, { "WORLD_SIZE", "2" } }, "RANK=\" 1\"" },
		{ { { "RANK", "1" }, { "WORLD_SIZE", "2x" } }, "WORLD_SIZE=\"2x\"" },
		{ { { "RANK", "0" }, { "WORLD_SIZE", "0" } }, "WORLD_SIZE=\"0\" is not a whole "
		  "number from 1 to 4096" },
		{ { { "RANK", "0" }, { "WORLD_SIZE", "4097" } }, "WORLD_SIZE=\"4097\"" },
		{ { { "RANK", "99999999999" }, { "WORLD_SIZE", "2" } }, "RANK=\"99999999999\"" },
		{ { { "RANK", "4" }, { "WORLD_SIZE", "4" } }, "RANK=4 is not below WORLD_SIZE=4" },
		{ { { "RANK", "0" }, { "WORLD_SIZE", "4" }, { "LOCAL_RANK", "4" } },
		  "LOCAL_RANK=\"4\"" },
		{ { { "SLURM_PROCID", "0" }, { "SLURM_NTASKS", "2" }, { "SLURM_LOCALID", "x" } },
		  "SLURM_LOCALID" },
		{ { { "RANK", "0" }, { "WORLD_SIZE", "2" } },
		  "no bootstrap root: set KCOLL_BOOTSTRAP_ADDR or MASTER_ADDR" },
	};
	struct kcoll_env_conf c;
	size_t i, j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		clear_env();
		for (j = 0; j < 3 && cases[i].set[j][0]; j++)
			setenv(cases[i].set[j][0], cases[i].set[j][1], 1);
		EXPECT_EQ(-EINVAL, kcoll_env_parse(&c)) {
			TH_LOG("case %zu", i);
		}
		EXPECT_NE(NULL, strstr(kcoll_last_error(), cases[i].msg)) {
			TH_LOG("case %zu: \"%s\" lacks \"%s\"", i, kcoll_last_error(),
			       cases[i].msg);
		}
	}
	clear_env();
}

TEST(env_root_and_port)
{
	struct kcoll_env_conf c;

	clear_env();
	setenv("SLURM_PROCID", "1", 1);
	setenv("SLURM_NTASKS", "2", 1);
	setenv("MASTER_ADDR", "node0", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	EXPECT_STREQ("node0", c.root_host);
	EXPECT_EQ(KCOLL_BOOTSTRAP_PORT_DEFAULT, c.root_port);
	EXPECT_EQ(29600, c.root_port);
	setenv("KCOLL_BOOTSTRAP_ADDR", "10.1.2.3", 1);
	setenv("MASTER_PORT", "29500", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	EXPECT_STREQ("10.1.2.3", c.root_host);
	/* torchrun's TCPStore has MASTER_PORT. */
	EXPECT_EQ(29501, c.root_port);
	setenv("KCOLL_BOOTSTRAP_PORT", "4000", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	EXPECT_EQ(4000, c.root_port);
	setenv("KCOLL_BOOTSTRAP_PORT", "0", 1);
	EXPECT_EQ(-EINVAL, kcoll_env_parse(&c));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_BOOTSTRAP_PORT"));
	unsetenv("KCOLL_BOOTSTRAP_PORT");
	setenv("MASTER_PORT", "65535", 1);
	EXPECT_EQ(-EINVAL, kcoll_env_parse(&c));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "MASTER_PORT"));
	setenv("MASTER_PORT", "http", 1);
	EXPECT_EQ(-EINVAL, kcoll_env_parse(&c));
	unsetenv("MASTER_PORT");

	/* A single rank needs no root address. */
	clear_env();
	setenv("KCOLL_RANK", "0", 1);
	setenv("KCOLL_NRANKS", "1", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	EXPECT_STREQ("127.0.0.1", c.root_host);
	clear_env();
}

TEST(env_job_tag)
{
	struct kcoll_env_conf c;
	uint64_t a, b;

	clear_env();
	setenv("KCOLL_RANK", "0", 1);
	setenv("KCOLL_NRANKS", "1", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	EXPECT_EQ(0, c.job_tag);
	setenv("TORCHELASTIC_RUN_ID", "none", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	a = c.job_tag;
	EXPECT_NE(0, a);
	setenv("SLURM_JOB_ID", "1234", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	b = c.job_tag;
	EXPECT_NE(0, b);
	EXPECT_NE(a, b);
	setenv("KCOLL_JOB_ID", "1234", 1);
	ASSERT_EQ(0, kcoll_env_parse(&c));
	EXPECT_NE(b, c.job_tag);	/* the variable's name counts too */
	EXPECT_NE(0, c.job_tag);
	a = c.job_tag;
	ASSERT_EQ(0, kcoll_env_parse(&c));
	EXPECT_EQ(a, c.job_tag);
	clear_env();
}

/* @n ranks from the environment (torchrun style), rank 0 the root. */
static pid_t spawn_env_rank(int rank, int nranks, int port, const char *job,
			    unsigned int timeout_ms, struct rank_result *res)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct kcoll_sockaddr *table = NULL;
		KCOLL_OPTS(kcoll_comm_opts, opts, .bootstrap_timeout_ms = timeout_ms);
		int64_t start = now_ms();
		uint64_t comm_id = 0;
		char v[16];
		int err;

		clear_env();
		snprintf(v, sizeof(v), "%d", rank);
		setenv("RANK", v, 1);
		snprintf(v, sizeof(v), "%d", nranks);
		setenv("WORLD_SIZE", v, 1);
		setenv("MASTER_ADDR", LOOPBACK, 1);
		snprintf(v, sizeof(v), "%d", port);
		setenv("KCOLL_BOOTSTRAP_PORT", v, 1);
		if (job)
			setenv("KCOLL_JOB_ID", job, 1);
		err = kcoll_bootstrap_env(&opts, &res->conf, &comm_id, res->secret, &table);
		record(res, err, comm_id, table, nranks, start);
		_exit(0);
	}
	return pid;
}

TEST(env_rendezvous)
{
	struct rank_result *res = shared_results(3);
	int port = free_port(), r;
	pid_t pids[3];

	ASSERT_NE(NULL, res);
	ASSERT_LT(0, port);
	/* The others first: they retry until rank 0 listens. */
	for (r = 2; r >= 0; r--) {
		pids[r] = spawn_env_rank(r, 3, port, "job-1", 10000, &res[r]);
		if (r)
			usleep(50 * 1000);
	}
	EXPECT_EQ(0, wait_all(pids, 3));
	for (r = 0; r < 3; r++) {
		EXPECT_EQ(0, res[r].err) {
			TH_LOG("rank %d: %s", r, res[r].msg);
		}
		EXPECT_NE(0, res[r].comm_id);
		EXPECT_EQ(res[0].comm_id, res[r].comm_id);
		/* Rank 0 drew the secret and sent it with the table. */
		EXPECT_EQ(0, memcmp(res[0].secret, res[r].secret, KCOLL_SECRET_LEN));
		EXPECT_EQ(r, res[r].conf.rank);
		EXPECT_STREQ("torchrun", res[r].conf.source);
	}
	EXPECT_NE(0, memcmp(res[0].secret, (unsigned char[KCOLL_SECRET_LEN]){ 0 },
			    KCOLL_SECRET_LEN));
	EXPECT_TRUE(all_same_table(res, 3));
}

TEST(env_other_job_refused)
{
	struct rank_result *res = shared_results(2);
	int port = free_port();
	pid_t pids[2];

	ASSERT_NE(NULL, res);
	/* Rank 1 keeps trying until rank 0 listens (slow under valgrind), then is turned away. */
	pids[0] = spawn_env_rank(0, 2, port, "job-a", 1500, &res[0]);
	pids[1] = spawn_env_rank(1, 2, port, "job-b", 10000, &res[1]);
	EXPECT_EQ(0, wait_all(pids, 2));
	EXPECT_EQ(-ECONNREFUSED, res[1].err);
	EXPECT_NE(NULL, strstr(res[1].msg, "serves another communicator (the job id")) {
		TH_LOG("%s", res[1].msg);
	}
	EXPECT_EQ(-ETIMEDOUT, res[0].err);
	EXPECT_NE(NULL, strstr(res[0].msg, "rank 1 of 2 never joined")) {
		TH_LOG("%s", res[0].msg);
	}
}

TEST_HARNESS_MAIN
