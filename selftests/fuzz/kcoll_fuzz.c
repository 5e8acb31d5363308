// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: random, seeded sequences of operations on /dev/kcoll and the kcoll netlink
 * family (Documentation/testing.rst, "The fuzzer").
 *
 * Every iteration runs in a process of its own (its own process group, killed if it
 * outlives --iter-timeout), with -j threads that share its files and objects.  Before the
 * iteration starts, its whole program is written to the log (-o) and fsync'd: after a kernel
 * crash the log on the rig's run directory is the reproducer (--replay LOG).
 *
 * On a rig of several VMs every node runs the same seed; node i is rank i, iterations are
 * kept in step over UDP, so both sides call COMM_CREATE with the same comm id and the
 * communicators really connect.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kernel/kcoll_test_comm.h"
#include "kcoll_fuzz.h"

#define FZ_SYNC_PORT	47100

static const char *const fz_avoid_name[] = { "one-rank-coll", "create-destroy-race", "netlink",
					     "fork" };
static const char *const fz_row_name[FZ_NROWS - FZ_ROW_NL] = {
	"nl:other", "nl:dev_get", "nl:dev_set", "nl:comm_get", "nl:comm_abort",
	"nl:config_get", "nl:config_set", "nl:engine_get", "nl:engine_set",
	/* COMM_CREATE variants (kcoll_fuzz_comm.c) */
	"cc:rdma", "cc:tcp", "cc:bad-flags", "cc:size<96", "cc:size>96", "cc:secret",
	"cc:locality", "cc:bad-table", "cc:bad-frame",
};

/* Relative weights of the operations in a random program. */
static const unsigned int fz_weight[FZ_NKINDS] = {
	[FZ_OPEN] = 3, [FZ_CLOSE] = 2, [FZ_INFO] = 2, [FZ_COMM_CREATE] = 8,
	[FZ_COMM_DESTROY] = 4, [FZ_COMM_ABORT] = 3, [FZ_COMM_QUERY] = 5, [FZ_BUF_CREATE] = 7,
	[FZ_BUF_DESTROY] = 4, [FZ_P2P] = 8, [FZ_WAIT] = 7, [FZ_COLL] = 12, [FZ_MMAP] = 6,
	[FZ_MUNMAP] = 3, [FZ_MREMAP] = 3, [FZ_TOUCH] = 4, [FZ_POLL] = 3, [FZ_FORK] = 2,
	[FZ_NL] = 8, [FZ_RAW_IOCTL] = 2,
};

static uint64_t fz_rng;

static uint64_t fz_rand(void)
{
	uint64_t z = (fz_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t fz_hash(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) | 1;	/* never 0: that is what a log without v[5] means */
}

/* The program of iteration env->iter: a function of (seed, iteration) alone. */
static void fz_gen(const struct fz_env *env, unsigned int nthreads, unsigned int nops,
		   struct fz_prog *prog)
{
	unsigned int t, i, k, total = 0, w;
	struct fz_op *op;

	for (k = 0; k < FZ_NKINDS; k++)
		total += fz_weight[k];
	memset(prog, 0, sizeof(*prog));
	fz_rng = env->seed ^ (env->iter * 0xd1b54a32d192ed03ULL);
	prog->nthreads = nthreads;
	for (t = 0; t < nthreads; t++) {
		prog->nops[t] = nops;
		for (i = 0; i < nops; i++) {
			op = &prog->ops[t][i];
			for (k = 0; k < FZ_NARG - 1; k++)	/* v[5]: below */
				op->v[k] = fz_rand();
			for (k = 0; k < 3; k++)
				op->slot[k] = fz_rand() & 0xff;
			w = fz_rand() % total;
			for (k = 0; w >= fz_weight[k]; k++)
				w -= fz_weight[k];
			op->kind = k;
			op->mut = fz_rand() % 10 < 6 ? 0 : 1 + fz_rand() % 12;
		}
	}
	/* Thread 0 starts with a file and a communicator, so most programs go deep. */
	prog->ops[0][0] = (struct fz_op){ .kind = FZ_OPEN };
	prog->ops[0][1].kind = FZ_COMM_CREATE;
	prog->ops[0][1].mut = 0;
	prog->ops[0][1].slot[0] = 0;
	/* v[5] by the operation's place: the stream above stays what it was before v[5] */
	for (t = 0; t < nthreads; t++)
		for (i = 0; i < nops; i++)
			prog->ops[t][i].v[5] = fz_hash(env->seed ^ fz_hash(env->iter ^
							fz_hash(t << 8 | i)));
}

static void fz_print(FILE *f, const struct fz_env *env, const struct fz_prog *prog)
{
	const struct fz_op *op;
	unsigned int t, i;

	fprintf(f, "# kcoll_fuzz seed=0x%" PRIx64 " iter=%" PRIu64
		" rank=%u nnodes=%u threads=%u avoid=0x%x\n", env->seed, env->iter, env->rank,
		env->nnodes, prog->nthreads, env->avoid);
	for (t = 0; t < prog->nthreads; t++)
		for (i = 0; i < prog->nops[t]; i++) {
			op = &prog->ops[t][i];
			fprintf(f, "t%u %s m%u s%u,%u,%u v0x%" PRIx64 ",0x%" PRIx64 ",0x%" PRIx64
				",0x%" PRIx64 ",0x%" PRIx64 ",0x%" PRIx64 "\n", t,
				fz_kind_name[op->kind], op->mut, op->slot[0], op->slot[1],
				op->slot[2], op->v[0], op->v[1], op->v[2], op->v[3], op->v[4],
				op->v[5]);
		}
}

static int fz_parse(FILE *f, struct fz_env *env, struct fz_prog *prog)
{
	unsigned int t, k, mut, s0, s1, s2;
	char line[512], name[32];
	struct fz_op *op;

	memset(prog, 0, sizeof(*prog));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "# kcoll_fuzz seed=%" SCNx64 " iter=%" SCNu64
			   " rank=%u nnodes=%u threads=%u avoid=%x",
			   &env->seed, &env->iter, &env->rank, &env->nnodes, &prog->nthreads,
			   &env->avoid) == 6)
			continue;
		if (line[0] != 't' || sscanf(line, "t%u %31s m%u s%u,%u,%u", &t, name, &mut, &s0, &s1,
					     &s2) != 6 || t >= FZ_MAX_THREADS ||
		    prog->nops[t] >= FZ_MAX_OPS)
			continue;
		for (k = 0; k < FZ_NKINDS && strcmp(name, fz_kind_name[k]); k++)
			;
		if (k == FZ_NKINDS)
			return -1;
		op = &prog->ops[t][prog->nops[t]++];
		*op = (struct fz_op){ .kind = k, .mut = mut, .slot = { s0, s1, s2 } };
		/* A log written before v[5] has five values: v[5] 0 is what they meant then. */
		if (!strstr(line, " v") ||
		    sscanf(strstr(line, " v") + 2, "%" SCNx64 ",%" SCNx64 ",%" SCNx64 ",%" SCNx64
			   ",%" SCNx64 ",%" SCNx64, &op->v[0], &op->v[1], &op->v[2], &op->v[3],
			   &op->v[4], &op->v[5]) < 5)
			return -1;
		if (t >= prog->nthreads)
			prog->nthreads = t + 1;
	}
	return prog->nthreads ? 0 : -1;
}

/* ---- one iteration, in its own process ------------------------------------------------- */

static struct fz_pool fz_pool;
static const struct fz_prog *fz_cur;
static pthread_barrier_t fz_start;

static void fz_run_ops(unsigned int t, unsigned int from, unsigned int to);

/* FORK: a child runs the next few operations of this thread on what it inherited. */
static void fz_fork(unsigned int t, unsigned int i, const struct fz_op *op)
{
	unsigned int n = 1 + op->v[0] % 4;
	pid_t pid;
	int st;

	if (fz_pool.env->avoid & FZ_AVOID_FORK)
		return;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_mutex_init(&fz_pool.lock, NULL);
		fz_run_ops(t, i + 1, i + 1 + n);
		_exit(0);
	}
	fz_note(FZ_FORK, pid < 0 ? -errno : 0);
	if (pid > 0)
		waitpid(pid, &st, 0);
}

static void fz_run_ops(unsigned int t, unsigned int from, unsigned int to)
{
	const struct fz_op *op;
	unsigned int i;

	for (i = from; i < to && i < fz_cur->nops[t]; i++) {
		op = &fz_cur->ops[t][i];
		if (op->kind == FZ_FORK)
			fz_fork(t, i, op);
		else if (op->kind != FZ_NL || !(fz_pool.env->avoid & FZ_AVOID_NETLINK))
			fz_exec(&fz_pool, t, op);
	}
}

static void *fz_thread(void *arg)
{
	unsigned int t = (uintptr_t)arg;

	pthread_barrier_wait(&fz_start);
	fz_run_ops(t, 0, FZ_MAX_OPS);
	return NULL;
}

static void fz_child(const struct fz_env *env, const struct fz_prog *prog)
{
	pthread_t th[FZ_MAX_THREADS];
	unsigned int t;

	setpgid(0, 0);
	fz_cur = prog;
	fz_pool_init(&fz_pool, env);
	pthread_barrier_init(&fz_start, NULL, prog->nthreads);
	for (t = 1; t < prog->nthreads; t++)
		pthread_create(&th[t], NULL, fz_thread, (void *)(uintptr_t)t);
	fz_thread(0);
	for (t = 1; t < prog->nthreads; t++)
		pthread_join(th[t], NULL);
	fz_pool_fini(&fz_pool);
	_exit(0);
}

struct fz_result { uint64_t iters, killed, died; int unkillable; };

static double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run one program; a run that outlives @timeout seconds is killed, with all it forked. */
static void fz_iteration(const struct fz_env *env, const struct fz_prog *prog, double timeout,
			 struct fz_result *res)
{
	double end = fz_now() + timeout;
	pid_t pid, r = 0;
	int st = 0;

	pthread_rwlockattr_t ra;
	pthread_mutexattr_t ma;

	/* Fresh for every iteration: a killed one may have left the lock taken. */
	memset(fz_stats->one_rank_fd, 0, sizeof(fz_stats->one_rank_fd));
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&fz_stats->create_lock, &ma);
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED);
	pthread_rwlock_init(&fz_stats->one_rank_lock, &ra);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0)
		fz_child(env, prog);
	setpgid(pid, pid);
	while ((r = waitpid(pid, &st, WNOHANG)) == 0 && fz_now() < end)
		usleep(2000);
	if (r == 0) {
		res->killed++;
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		end = fz_now() + 60;	/* every wait in kcoll is killable: this is plenty */
		while ((r = waitpid(pid, &st, WNOHANG)) == 0 && fz_now() < end)
			usleep(10000);
		if (r == 0) {
			fprintf(stderr, "kcoll_fuzz: iteration %" PRIu64 " unkillable after SIGKILL\n",
				env->iter);
			res->unkillable = 1;
			return;
		}
	} else if (WIFSIGNALED(st)) {
		res->died++;
		fprintf(stderr, "kcoll_fuzz: iteration %" PRIu64 " died of signal %d\n", env->iter,
			WTERMSIG(st));
	}
	kill(-pid, SIGKILL);	/* stragglers of FORK */
	res->iters++;
}

/* ---- keeping the nodes of a rig in step ------------------------------------------------ */

static int fz_sync_sock = -1;

static void fz_sync_send(const struct fz_env *env, uint64_t iter)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(FZ_SYNC_PORT) };
	struct kcoll_sockaddr a;
	unsigned int i;

	for (i = 0; i < env->nnodes; i++) {
		if (i == env->rank)
			continue;
		a = kt_addr(i);
		memcpy(&sa.sin_addr, a.addr, 4);
		sendto(fz_sync_sock, &iter, sizeof(iter), 0, (void *)&sa, sizeof(sa));
	}
}

/* Wait (bounded) until every other node has reached iteration @iter, or finished. */
static void fz_sync(const struct fz_env *env, uint64_t iter, double timeout)
{
	static uint64_t seen[64];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(FZ_SYNC_PORT) };
	struct pollfd pfd;
	struct sockaddr_in from;
	socklen_t fl;
	double end = fz_now() + timeout;
	unsigned int i, behind;
	uint64_t v;

	if (env->nnodes < 2)
		return;
	if (fz_sync_sock < 0) {
		fz_sync_sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		bind(fz_sync_sock, (void *)&sa, sizeof(sa));
	}
	pfd = (struct pollfd){ .fd = fz_sync_sock, .events = POLLIN };
	do {
		fz_sync_send(env, iter);
		while (poll(&pfd, 1, 20) > 0) {
			fl = sizeof(from);
			if (recvfrom(fz_sync_sock, &v, sizeof(v), 0, (void *)&from, &fl) != sizeof(v))
				continue;
			i = (ntohl(from.sin_addr.s_addr) & 0xff) - 1;
			if (i < 64 && v > seen[i])
				seen[i] = v;
		}
		for (behind = 0, i = 0; i < env->nnodes && i < 64; i++)
			behind += i != env->rank && seen[i] < iter;
	} while (behind && fz_now() < end);
}

/* ---- the run ---------------------------------------------------------------------------- */

static void fz_report(double secs, const struct fz_result *res)
{
	unsigned int k, e, pairs = 0;
	char name[32];

	printf("# %" PRIu64 " iterations, %" PRIu64
	       " calls in %.1f s: %.2f exec/s (iterations), %.1f calls/s\n", res->iters,
	       fz_stats->calls, secs, res->iters / secs, fz_stats->calls / secs);
	printf("# %" PRIu64 " iterations killed at the timeout, %" PRIu64 " died of a signal\n",
	       res->killed, res->died);
	printf("# coverage: (operation, errno) pairs reached, with counts\n");
	for (k = 0; k < FZ_NROWS; k++) {
		int any = 0;

		for (e = 0; e < FZ_NERRNO; e++) {
			if (!fz_stats->errs[k][e])
				continue;
			if (!any)
				printf("#   %-14s", k < FZ_NKINDS ? fz_kind_name[k] :
				       fz_row_name[k - FZ_ROW_NL]);
			any = 1;
			pairs++;
			snprintf(name, sizeof(name), "%s", e ? strerrorname_np(e) ?: "E?" : "ok");
			printf(" %s:%" PRIu64, name, fz_stats->errs[k][e]);
		}
		if (any)
			printf("\n");
	}
	printf("# %u distinct (operation, errno) pairs\n", pairs);
}

static void fz_usage(void)
{
	fprintf(stderr,
		"usage: kcoll_fuzz [-s SEED] [-t SECONDS] [-n ITERATIONS] [-j THREADS] [-l OPS]\n"
		"                  [-o LOG] [--avoid NAME[,NAME]] [--iter-timeout S] [--first N]\n"
		"       kcoll_fuzz --replay LOG [-n REPEATS]\n"
		"       kcoll_fuzz --print -s SEED --first N   (the program of iteration N)\n"
		"       kcoll_fuzz --print --replay LOG        (the program a log replays)\n"
		"avoid: one-rank-coll, create-destroy-race, netlink, fork\n");
	exit(2);
}

static unsigned int fz_parse_avoid(const char *s)
{
	unsigned int m = 0, i;
	char *dup = strdup(s), *tok, *save;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < 4 && strcmp(tok, fz_avoid_name[i]); i++)
			;
		if (i == 4 && strcmp(tok, "none")) {
			fprintf(stderr, "kcoll_fuzz: unknown --avoid %s\n", tok);
			fz_usage();
		}
		m |= i < 4 ? 1U << i : 0;
	}
	free(dup);
	return m;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "replay", required_argument, NULL, 'R' }, { "avoid", required_argument, NULL, 'A' },
		{ "iter-timeout", required_argument, NULL, 'T' },
		{ "first", required_argument, NULL, 'F' }, { "print", no_argument, NULL, 'P' },
		{ }
	};
	struct fz_env env = { .seed = (uint64_t)time(NULL), .rank = kt_rank(),
			      .nnodes = kt_nranks() };
	unsigned int nthreads = 2, nops = 24, print = 0;
	double secs = 0, itimeout = 0, start;
	uint64_t iters = 0, first = 0, i;
	const char *replay = NULL, *logpath = NULL;
	static struct fz_prog prog;
	struct fz_result res = { 0 };
	int c, logfd = -1;
	FILE *f;

	while ((c = getopt_long(argc, argv, "s:t:n:j:l:o:v", lo, NULL)) != -1) {
		switch (c) {
		case 's': env.seed = strtoull(optarg, NULL, 0); break;
		case 't': secs = atof(optarg); break;
		case 'n': iters = strtoull(optarg, NULL, 0); break;
		case 'j': nthreads = atoi(optarg); break;
		case 'l': nops = atoi(optarg); break;
		case 'o': logpath = optarg; break;
		case 'v': env.verbose = 1; break;
		case 'R': replay = optarg; break;
		case 'A': env.avoid = fz_parse_avoid(optarg); break;
		case 'T': itimeout = atof(optarg); break;
		case 'F': first = strtoull(optarg, NULL, 0); break;
		case 'P': print = 1; break;
		default: fz_usage();
		}
	}
	if (nthreads < 1 || nthreads > FZ_MAX_THREADS || nops < 2 || nops > FZ_MAX_OPS)
		fz_usage();
	/* Connecting communicators take seconds on a rig; the debug kernel is ~5x slower. */
	if (!itimeout)
		itimeout = (env.nnodes > 1 ? 60 : 30) * (kt_quick() ? 5 : 1);
	if (print) {
		env.iter = first;
		if (!replay)
			fz_gen(&env, nthreads, nops, &prog);
		else if (!(f = fopen(replay, "r")) || fz_parse(f, &env, &prog))
			return 1;
		fz_print(stdout, &env, &prog);
		return 0;
	}
	fz_stats = mmap(NULL, sizeof(*fz_stats), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fz_stats == MAP_FAILED)
		return 1;
	fz_arena_init();
	env.family = fz_nl_family();
	printf("TAP version 13\n1..1\n");
	if (replay) {
		f = fopen(replay, "r");
		if (!f || fz_parse(f, &env, &prog)) {
			printf("not ok 1 replay: cannot read a program from %s\n", replay);
			return 1;
		}
		fclose(f);
		/* A log of one node of a rig replays on every node of a rig of that size. */
		if (env.nnodes == kt_nranks())
			env.rank = kt_rank();
		printf("# replaying %s: seed 0x%" PRIx64 " iteration %" PRIu64 ", %u thread(s)\n",
		       replay, env.seed, env.iter, prog.nthreads);
	} else {
		printf("# seed 0x%" PRIx64 ", rank %u of %u node(s), %u thread(s) x %u ops, avoid 0x%x\n",
		       env.seed, env.rank, env.nnodes, nthreads, nops, env.avoid);
		if (access(KCOLL_DEVICE_PATH, R_OK | W_OK)) {
			printf("not ok 1 kcoll_fuzz: %s: %s\n", KCOLL_DEVICE_PATH, strerror(errno));
			return 1;
		}
	}
	if (logpath)
		logfd = open(logpath, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	fflush(stdout);
	if (!iters && !secs)
		iters = replay ? 1 : 1000;
	start = fz_now();
	for (i = 0; (!iters || i < iters) && (!secs || fz_now() - start < secs); i++) {
		if (!replay) {
			env.iter = first + i;
			fz_gen(&env, nthreads, nops, &prog);
		}
		fz_sync(&env, i + 1, kt_quick() ? 100 : 20);
		if (logfd >= 0) {
			f = fdopen(dup(logfd), "w");
			if (ftruncate(logfd, 0) || lseek(logfd, 0, SEEK_SET))
				perror("kcoll_fuzz: log");
			fz_print(f, &env, &prog);
			fflush(f);
			fsync(fileno(f));
			fclose(f);
		}
		if (env.verbose)
			fprintf(stderr, "kcoll_fuzz: iteration %" PRIu64 "\n", env.iter);
		fz_iteration(&env, &prog, itimeout, &res);
		if (env.family >= 0 && !(env.avoid & FZ_AVOID_NETLINK))
			fz_nl_restore(env.family);
		if (res.unkillable)
			break;
	}
	if (fz_sync_sock >= 0)
		for (i = 0; i < 20; i++) {	/* tell the other nodes not to wait for us */
			fz_sync_send(&env, ~0ULL);
			usleep(1000);
		}
	fz_report(fz_now() - start, &res);
	if (logfd >= 0) {
		dprintf(logfd, "# finished: no crash\n");
		close(logfd);
	}
	if (res.unkillable) {
		printf("not ok 1 kcoll_fuzz seed 0x%" PRIx64 ": iteration %" PRIu64 " did not die of SIGKILL\n",
		       env.seed, env.iter);
		return 1;
	}
	printf("ok 1 kcoll_fuzz seed 0x%" PRIx64 ": %" PRIu64 " iterations, no crash\n", env.seed,
	       res.iters);
	return 0;
}
