/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll_fuzz: a structure-aware fuzzer of /dev/kcoll and the kcoll netlink family.
 *
 * A program is a list of operations per thread, a pure function of (seed, iteration): it
 * names its objects by pool slot, never by the values the kernel returned, so the text of a
 * program (the log) replays on any kernel.  See Documentation/testing.rst, "The fuzzer".
 */
#ifndef KCOLL_FUZZ_H
#define KCOLL_FUZZ_H

#include <pthread.h>
#include <stdint.h>

#define FZ_MAX_THREADS	8
#define FZ_MAX_OPS	64	/* per thread and iteration */
#define FZ_NFD		3
#define FZ_NCOMM	6
#define FZ_NBUF		6
#define FZ_NMAP		6
#define FZ_NREQ		16
/*
 * v[0..4] are drawn from the program's stream; v[5] (the comm-create extensions: transport
 * flags, struct size, locality table, secret; the netlink transport) from a hash of the
 * operation's place, so older seeds keep their programs.  0, what a log written before v[5]
 * replays with, is the behaviour of that time.
 */
#define FZ_NARG		6

enum fz_kind {
	FZ_OPEN, FZ_CLOSE, FZ_INFO, FZ_COMM_CREATE, FZ_COMM_DESTROY, FZ_COMM_ABORT,
	FZ_COMM_QUERY, FZ_BUF_CREATE, FZ_BUF_DESTROY, FZ_P2P, FZ_WAIT, FZ_COLL, FZ_MMAP,
	FZ_MUNMAP, FZ_MREMAP, FZ_TOUCH, FZ_POLL, FZ_FORK, FZ_NL, FZ_RAW_IOCTL, FZ_NKINDS
};

/* Generic mutations (fz_op.mut); the operations add their own from FZ_MUT_OWN up. */
enum {
	FZ_MUT_NONE, FZ_MUT_SIZE_SMALL, FZ_MUT_SIZE_ZERO_TAIL, FZ_MUT_SIZE_TAIL,
	FZ_MUT_SIZE_HUGE, FZ_MUT_FLAGS, FZ_MUT_FIELD32, FZ_MUT_FIELD64, FZ_MUT_BYTE,
	FZ_MUT_ARGPTR, FZ_MUT_OWN
};

/* One operation: @mut 0 is a valid-ish call; otherwise one field or the framing is bad. */
struct fz_op {
	uint8_t kind;
	uint8_t mut;
	uint8_t slot[3];	/* fd, object, second object: taken modulo the pool size */
	uint64_t v[FZ_NARG];	/* the random values the operation draws its fields from */
};

struct fz_prog {
	unsigned int nthreads;
	unsigned int nops[FZ_MAX_THREADS];
	struct fz_op ops[FZ_MAX_THREADS][FZ_MAX_OPS];
};

/* Known kernel bugs a run can step around (--avoid NAME); see selftests/fuzz/crashes/. */
enum {
	FZ_AVOID_ONE_RANK_COLL = 1 << 0,	/* COLL and BUF_CREATE on a one-rank communicator */
	FZ_AVOID_CREATE_RACE = 1 << 1,		/* COMM_DESTROY while a COMM_CREATE runs on the fd */
	FZ_AVOID_NETLINK = 1 << 2,
	FZ_AVOID_FORK = 1 << 3,
};

/* What every iteration knows: the rig's shape and the options. */
struct fz_env {
	uint64_t seed;
	uint64_t iter;
	unsigned int rank, nnodes;
	unsigned int avoid;
	int family;		/* the kcoll generic netlink family id, or -1 */
	int verbose;
};

/* The per-iteration pool: objects the operations name by slot. */
struct fz_comm { int fd; uint32_t handle; unsigned int nranks; int live; };
struct fz_buf { int fd; uint32_t comm, handle; uint64_t len, off; int live; };
struct fz_map { void *addr; uint64_t len; };
struct fz_req { int fd; uint32_t comm; uint64_t req; };

struct fz_pool {
	pthread_mutex_t lock;
	int fd[FZ_NFD];
	struct fz_comm comm[FZ_NCOMM];
	struct fz_buf buf[FZ_NBUF];
	struct fz_map map[FZ_NMAP];
	struct fz_req req[FZ_NREQ];
	int nlsock[FZ_MAX_THREADS];
	const struct fz_env *env;
};

/* Counters shared by every iteration's process (a MAP_SHARED page of the parent). */
#define FZ_NERRNO	160
/* Rows of the coverage report: one per kind, one per netlink command, then these. */
enum {
	FZ_ROW_NL = FZ_NKINDS,				/* nl:other, then by command */
	FZ_ROW_CC = FZ_ROW_NL + 9,			/* COMM_CREATE variants: */
	FZ_ROW_CC_RDMA = FZ_ROW_CC, FZ_ROW_CC_TCP, FZ_ROW_CC_BADFLAGS, FZ_ROW_CC_OLDSIZE,
	FZ_ROW_CC_BIGSIZE, FZ_ROW_CC_SECRET, FZ_ROW_CC_LOC, FZ_ROW_CC_BADLOC,
	FZ_ROW_CC_LOCFRAME, FZ_NROWS
};
#define FZ_MAXFD	1024
struct fz_stats {
	/*
	 * --avoid one-rank-coll: files (by number) of this iteration on which a one-rank
	 * communicator may exist, from any process of the iteration; cleared between them.
	 */
	uint8_t one_rank_fd[FZ_MAXFD];
	/* ... and a create excludes the check-then-call of COLL and BUF_CREATE */
	pthread_rwlock_t one_rank_lock;
	/* --avoid create-destroy-race: one of them at a time, in every process of the iteration */
	pthread_mutex_t create_lock;
	uint64_t calls;
	uint64_t errs[FZ_NROWS][FZ_NERRNO];	/* [kind][errno]; [kind][0] is success */
};
extern struct fz_stats *fz_stats;

extern const char *const fz_kind_name[FZ_NKINDS];

/* kcoll_fuzz_ops.c */
extern char *fz_arena, *fz_ro_page, *fz_hole;
#define FZ_PAGE		4096UL
#define FZ_ARENA_SIZE	(1UL << 20)
void fz_arena_init(void);
long fz_ioctl(int kind, int fd, unsigned long cmd, void *karg, size_t ksize, size_t min,
	      unsigned int mut, uint64_t v);
int fz_fd(struct fz_pool *p, const struct fz_op *op);
void fz_count(int row, long ret);
void fz_pool_init(struct fz_pool *p, const struct fz_env *env);
void fz_pool_fini(struct fz_pool *p);
void fz_exec(struct fz_pool *p, unsigned int thread, const struct fz_op *op);
void fz_note(int kind, long ret);
int fz_nl_family(void);
void fz_nl_restore(int family);
uint64_t fz_comm_id(const struct fz_env *env, unsigned int slot, uint64_t salt);
uint64_t fz_interesting64(uint64_t v);
void fz_nl_op(struct fz_pool *p, unsigned int thread, const struct fz_op *op);

/* kcoll_fuzz_comm.c */
void fz_comm_create(struct fz_pool *p, const struct fz_op *op);

#endif
