// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: the operations on /dev/kcoll.  Each builds a valid-ish argument from the pool
 * and the operation's random values, then (when op->mut is not 0) breaks exactly one thing:
 * the size, the flags, one field, or the argument pointer itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kernel/kcoll_test_comm.h"
#include "kcoll_fuzz.h"

#define PAGE		FZ_PAGE
#define ARENA_SIZE	FZ_ARENA_SIZE
#define ARG_AREA	(4 * PAGE)	/* per thread: 3 pages of argument, then a guard page */

struct fz_stats *fz_stats;
char *fz_arena;			/* user memory for data, peer tables and count arrays */
char *fz_ro_page, *fz_hole;	/* read-only and inaccessible pages */
static __thread char *targ;	/* this thread's argument pages */
static __thread sigjmp_buf *fault_jmp;

const char *const fz_kind_name[FZ_NKINDS] = {
	"open", "close", "info", "comm_create", "comm_destroy", "comm_abort", "comm_query",
	"buf_create", "buf_destroy", "p2p", "wait", "coll", "mmap", "munmap", "mremap",
	"touch", "poll", "fork", "netlink", "raw_ioctl",
};

static const uint32_t i32[] = {
	0, 1, 2, 3, 4, 7, 8, 16, 255, 256, 4095, 4096, 4097, 65536, 0x7fffffff, 0x80000000,
	0xfffffffe, 0xffffffff,
};

uint64_t fz_interesting64(uint64_t v)
{
	static const uint64_t k[] = {
		0, 1, 8, 4096, 1ULL << 31, 1ULL << 32, 1ULL << 61, 1ULL << 62, 1ULL << 63,
		~0ULL, ~0ULL - 4095, 0x7ffffffff000ULL, 0xffff888000000000ULL,
		0xffffffff81000000ULL, 0xffffffffff600000ULL,
	};
	unsigned int n = sizeof(k) / sizeof(k[0]);

	switch ((v >> 8) % (n + 3)) {
	case 0:
		return (uintptr_t)fz_hole;
	case 1:
		return (uintptr_t)fz_ro_page;
	case 2:
		return (uintptr_t)fz_arena + ARENA_SIZE - 1 - (v >> 16) % 64;
	default:
		return k[(v >> 8) % n];
	}
}

static void fz_segv(int sig, siginfo_t *si, void *uc)
{
	if (fault_jmp)
		siglongjmp(*fault_jmp, 1);
	signal(sig, SIG_DFL);
}

void fz_arena_init(void)
{
	struct sigaction sa = { .sa_sigaction = fz_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };
	unsigned int i;

	fz_arena = mmap(NULL, ARENA_SIZE + 2 * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fz_arena == MAP_FAILED)
		abort();
	fz_ro_page = fz_arena + ARENA_SIZE;
	fz_hole = fz_ro_page + PAGE;
	for (i = 0; i < ARENA_SIZE; i++)
		fz_arena[i] = (char)(i * 131 + (i >> 9));
	memset(fz_ro_page, 0, PAGE);
	*(uint32_t *)fz_ro_page = 64;	/* a plausible size: the kernel gets to copy_to_user */
	mprotect(fz_ro_page, PAGE, PROT_READ);
	mprotect(fz_hole, PAGE, PROT_NONE);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

uint64_t fz_comm_id(const struct fz_env *env, unsigned int slot, uint64_t salt)
{
	uint64_t h = env->seed * 0x9e3779b97f4a7c15ULL ^ (env->iter << 20) ^ (slot << 4) ^ salt;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return h ? h : 1;
}

/* One more result in a coverage row (a call's kind, or a variant of one: FZ_ROW_*). */
void fz_count(int row, long ret)
{
	long e = ret < 0 ? -ret : 0;

	if (e >= FZ_NERRNO)
		e = FZ_NERRNO - 1;
	__atomic_fetch_add(&fz_stats->errs[row][e], 1, __ATOMIC_RELAXED);
}

void fz_note(int kind, long ret)
{
	__atomic_fetch_add(&fz_stats->calls, 1, __ATOMIC_RELAXED);
	fz_count(kind, ret);
}

void fz_pool_init(struct fz_pool *p, const struct fz_env *env)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->env = env;
	for (i = 0; i < FZ_NFD; i++)
		p->fd[i] = -1;
	for (i = 0; i < FZ_MAX_THREADS; i++)
		p->nlsock[i] = -1;
}

void fz_pool_fini(struct fz_pool *p)
{
	unsigned int i;

	for (i = 0; i < FZ_NMAP; i++)
		if (p->map[i].addr)
			munmap(p->map[i].addr, p->map[i].len);
	for (i = 0; i < FZ_NFD; i++)
		if (p->fd[i] >= 0)
			close(p->fd[i]);
}

/* The thread's argument pages, made on first use. */
static char *fz_targ(void)
{
	if (!targ) {
		targ = mmap(NULL, ARG_AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (targ == MAP_FAILED)
			abort();
		mprotect(targ + ARG_AREA - PAGE, PAGE, PROT_NONE);
	}
	return targ;
}

/*
 * One ioctl with @karg (@ksize bytes, first published size @min) after mutation @mut drawn
 * from @v.  The kernel's output comes back into @karg when the call went through the
 * ordinary argument pages.  Returns 0 or -errno.
 */
long fz_ioctl(int kind, int fd, unsigned long cmd, void *karg, size_t ksize, size_t min,
	      unsigned int mut, uint64_t v)
{
	char *a = fz_targ();
	size_t room = ARG_AREA - PAGE, at = 0;
	uint32_t *size = (uint32_t *)karg;
	void *ptr;
	long ret;

	memset(a, 0, room);
	switch (mut) {
	case FZ_MUT_SIZE_SMALL:
		*size = v % min;
		break;
	case FZ_MUT_SIZE_ZERO_TAIL:
		*size = ksize + 1 + v % 512;
		break;
	case FZ_MUT_SIZE_TAIL:
		*size = ksize + 1 + v % 512;
		break;
	case FZ_MUT_SIZE_HUGE:
		*size = i32[10 + v % 8];
		break;
	case FZ_MUT_FLAGS:
		((uint32_t *)karg)[1] = v & 1 ? 1U << ((v >> 1) % 32) : (uint32_t)(v >> 8);
		break;
	case FZ_MUT_FIELD32:
		((uint32_t *)karg)[2 + (v >> 8) % (ksize / 4 - 2)] = i32[v % 18];
		break;
	case FZ_MUT_FIELD64:
		((uint64_t *)karg)[1 + (v >> 4) % (ksize / 8 - 1)] = fz_interesting64(v);
		break;
	case FZ_MUT_BYTE:
		((uint8_t *)karg)[8 + (v >> 8) % (ksize - 8)] = (uint8_t)v;
		break;
	}
	/* With a claimed size beyond the argument pages, the tail runs into the guard page. */
	if (*size > ksize && *size <= room && (v & 4))
		at = room - *size + (v & 32 ? 8 : 0);
	else if (mut == FZ_MUT_ARGPTR && v % 5 == 4)
		at = room - ksize / 2;	/* the struct itself straddles the guard page */
	memcpy(a + at, karg, at + ksize <= room ? ksize : room - at);
	if (mut == FZ_MUT_SIZE_TAIL && at + *size <= room)	/* one non-zero byte past ours */
		a[at + ksize + (v >> 16) % (*size - ksize)] = (char)(v >> 24) | 1;
	ptr = a + at;
	if (mut == FZ_MUT_ARGPTR) {
		switch (v % 5) {
		case 0:
			ptr = NULL;
			break;
		case 1:
			ptr = fz_hole;
			break;
		case 2:
			ptr = fz_ro_page;
			break;
		case 3:
			ptr = (void *)(uintptr_t)fz_interesting64(v);
			break;
		}
	}
	ret = ioctl(fd, cmd, ptr) ? -errno : 0;
	if (ptr == a + at && at + ksize <= room)
		memcpy(karg, a + at, ksize);
	fz_note(kind, ret);
	return ret;
}

/*
 * The open file an operation works on: slot 0 of the op, else (but for one call in 16) any
 * open one: a closed file is only EBADF, and that the VFS answers.
 */
int fz_fd(struct fz_pool *p, const struct fz_op *op)
{
	int fd = p->fd[op->slot[0] % FZ_NFD];
	unsigned int i;

	for (i = 0; fd < 0 && op->v[4] >> 60 && i < FZ_NFD; i++)
		fd = p->fd[i];
	return fd;
}

/* A communicator's handle and file; valid calls use its own file, others may not. */
static struct fz_comm *fz_comm(struct fz_pool *p, const struct fz_op *op, int *fd)
{
	struct fz_comm *c = &p->comm[op->slot[1] % FZ_NCOMM];

	*fd = fz_fd(p, op);
	if ((!op->mut || op->v[4] & 1) && c->fd > 0 && (c->live || op->v[3] & 1))
		*fd = c->fd;
	return c;
}

/*
 * --avoid one-rank-coll: may the file hold a one-rank communicator (or one coming)?  On 0
 * (go ahead), the caller holds the read side of one_rank_lock until its call is done, so no
 * create slips in between; fz_one_rank_done() drops it.
 */
static int fz_one_rank_on(struct fz_pool *p, int fd)
{
	if (!(p->env->avoid & FZ_AVOID_ONE_RANK_COLL))
		return 0;
	pthread_rwlock_rdlock(&fz_stats->one_rank_lock);
	if (fd >= 0 && (fd >= FZ_MAXFD || fz_stats->one_rank_fd[fd])) {
		pthread_rwlock_unlock(&fz_stats->one_rank_lock);
		return 1;
	}
	return 0;
}

static void fz_one_rank_done(struct fz_pool *p)
{
	if (p->env->avoid & FZ_AVOID_ONE_RANK_COLL)
		pthread_rwlock_unlock(&fz_stats->one_rank_lock);
}

/* COMM_DESTROY, COMM_ABORT, COMM_QUERY */
static void fz_comm_arg(struct fz_pool *p, const struct fz_op *op)
{
	static const unsigned long cmds[] = { KCOLL_IOC_COMM_DESTROY, KCOLL_IOC_COMM_ABORT };
	union { struct kcoll_comm_arg a; struct kcoll_comm_query q; } u;
	int fd, avoid = p->env->avoid & FZ_AVOID_CREATE_RACE;
	struct fz_comm *c = fz_comm(p, op, &fd);
	long ret;

	memset(&u, 0, sizeof(u));
	if (op->kind == FZ_COMM_QUERY) {
		u.q.size = sizeof(u.q);
		u.q.handle = c->handle;
		fz_ioctl(FZ_COMM_QUERY, fd, KCOLL_IOC_COMM_QUERY, &u.q, sizeof(u.q),
			 KCOLL_COMM_QUERY_SIZE_VER0, op->mut, op->v[4]);
		return;
	}
	u.a.size = sizeof(u.a);
	u.a.handle = c->handle;
	if (avoid)
		pthread_mutex_lock(&fz_stats->create_lock);
	ret = fz_ioctl(op->kind, fd, cmds[op->kind - FZ_COMM_DESTROY], &u.a, sizeof(u.a),
		       KCOLL_COMM_ARG_SIZE_VER0, op->mut, op->v[4]);
	if (avoid)
		pthread_mutex_unlock(&fz_stats->create_lock);
	if (!ret && op->kind == FZ_COMM_DESTROY && fd == c->fd) {
		pthread_mutex_lock(&p->lock);
		c->live = 0;
		pthread_mutex_unlock(&p->lock);
	}
}

static void fz_buf_create(struct fz_pool *p, const struct fz_op *op)
{
	static const uint64_t lens[] = { 1, 4096, 4097, 8192, 65536, 1 << 20 };
	struct fz_buf *b = &p->buf[op->slot[2] % FZ_NBUF];
	int fd;
	struct fz_comm *c = fz_comm(p, op, &fd);
	struct kcoll_buf_create a = {
		.size = sizeof(a),
		.comm = c->handle,
		.length = op->mut == FZ_MUT_OWN ? fz_interesting64(op->v[3]) : lens[op->v[0] % 6],
	};

	long ret;

	if (fz_one_rank_on(p, fd))
		return;
	ret = fz_ioctl(FZ_BUF_CREATE, fd, KCOLL_IOC_BUF_CREATE, &a, sizeof(a),
		       KCOLL_BUF_CREATE_SIZE_VER0, op->mut < FZ_MUT_OWN ? op->mut : 0, op->v[4]);
	fz_one_rank_done(p);
	if (!ret) {
		pthread_mutex_lock(&p->lock);
		*b = (struct fz_buf){ fd, a.comm, a.handle, a.length, a.mmap_offset, 1 };
		pthread_mutex_unlock(&p->lock);
	}
}

static void fz_buf_destroy(struct fz_pool *p, const struct fz_op *op)
{
	struct fz_buf *b = &p->buf[op->slot[2] % FZ_NBUF];
	struct kcoll_buf_arg a = { .size = sizeof(a), .comm = b->comm, .handle = b->handle };
	int fd = op->mut || !b->fd ? fz_fd(p, op) : b->fd;

	if (!fz_ioctl(FZ_BUF_DESTROY, fd, KCOLL_IOC_BUF_DESTROY, &a, sizeof(a),
		      KCOLL_BUF_ARG_SIZE_VER0, op->mut, op->v[4]))
		b->live = 0;
}

static void fz_req_put(struct fz_pool *p, const struct fz_op *op, int fd, uint32_t comm,
		       uint64_t req)
{
	pthread_mutex_lock(&p->lock);
	p->req[op->v[2] % FZ_NREQ] = (struct fz_req){ fd, comm, req };
	pthread_mutex_unlock(&p->lock);
}

/* The other rank of a communicator, as a valid call would name it. */
static unsigned int fz_peer(const struct fz_pool *p, const struct fz_comm *c)
{
	return c->nranks > 1 ? (p->env->rank + 1) % c->nranks : 0;
}

static void fz_p2p(struct fz_pool *p, const struct fz_op *op)
{
	int fd;
	struct fz_comm *c = fz_comm(p, op, &fd);
	struct fz_buf *b = &p->buf[op->slot[2] % FZ_NBUF];
	struct kcoll_p2p a = {
		.size = sizeof(a),
		.flags = (op->v[0] & 1 ? KCOLL_P2P_SEND : KCOLL_P2P_RECV) |
			 (op->v[0] & 6 ? KCOLL_P2P_NONBLOCK : 0),
		.comm = c->handle,
		.peer = fz_peer(p, c),
		.addr = (uintptr_t)fz_arena + (op->v[1] % 4) * 65536,
		.len = op->v[1] >> 8 & 1 ? 0 : (op->v[1] >> 9) % 65536,
		.timeout_ms = 100 + op->v[3] % 400,
	};

	if (op->v[0] & 8 && b->live) {
		a.flags |= KCOLL_P2P_BUF;
		a.buf = b->handle;
		a.addr = (op->v[1] >> 2) % b->len;
		a.len = (op->v[1] >> 9) % (b->len - a.addr + 1);
	}
	if (op->mut == FZ_MUT_OWN) {		/* both directions, or neither */
		a.flags |= op->v[3] & 1 ? KCOLL_P2P_SEND | KCOLL_P2P_RECV : 0;
		a.flags &= op->v[3] & 1 ? ~0U : ~(KCOLL_P2P_SEND | KCOLL_P2P_RECV);
	} else if (op->mut == FZ_MUT_OWN + 1) {	/* a length past the end of the memory */
		a.len = fz_interesting64(op->v[3]);
	}
	if (!fz_ioctl(FZ_P2P, fd, KCOLL_IOC_P2P, &a, sizeof(a), KCOLL_P2P_SIZE_VER0,
		      op->mut < FZ_MUT_OWN ? op->mut : 0, op->v[4]) &&
	    a.flags & KCOLL_P2P_NONBLOCK)
		fz_req_put(p, op, fd, a.comm, a.req);
}

static void fz_wait(struct fz_pool *p, const struct fz_op *op)
{
	struct fz_req *r = &p->req[op->v[2] % FZ_NREQ];
	int fd = op->mut || !r->fd ? fz_fd(p, op) : r->fd;
	struct kcoll_wait a = {
		.size = sizeof(a),
		.comm = r->comm,
		.req = r->req,
		.timeout_ms = op->v[0] % 4 ? op->v[0] % 300 : 0,
	};

	if (op->mut == FZ_MUT_OWN)
		a.timeout_ms = ~0U;	/* no limit: the module's op timeout still ends it */
	fz_ioctl(FZ_WAIT, fd, KCOLL_IOC_WAIT, &a, sizeof(a), KCOLL_WAIT_SIZE_VER0,
		 op->mut < FZ_MUT_OWN ? op->mut : 0, op->v[4]);
}

static void fz_coll(struct fz_pool *p, const struct fz_op *op)
{
	static const uint8_t esize[KCOLL_NUM_DATATYPES] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };
	uint64_t *counts = (void *)(fz_arena + 3 * 262144), *displs = counts + 64;
	struct fz_buf *sb = &p->buf[op->slot[2] % FZ_NBUF];
	struct fz_buf *rb = &p->buf[(op->slot[2] + 1) % FZ_NBUF];
	unsigned int n, i, coll = op->v[0] % KCOLL_NUM_COLLECTIVES;
	long ret;
	int fd;
	struct fz_comm *c = fz_comm(p, op, &fd);
	struct kcoll_coll a = {
		.size = sizeof(a),
		.flags = op->v[0] >> 8 & 3 ? KCOLL_COLL_NONBLOCK : 0,
		.comm = c->handle,
		.coll = coll,
		.dtype = (op->v[0] >> 12) % KCOLL_NUM_DATATYPES,
		.op = (op->v[0] >> 16) % KCOLL_NUM_RED_OPS,
		.algo = op->v[0] >> 20 & 3 ? 0 : (op->v[0] >> 22) % KCOLL_NUM_ALGORITHMS,
		.timeout_ms = 200 + op->v[3] % 2000,
		.count = 1 + (op->v[1] % 4 ? op->v[1] >> 8 & 63 : op->v[1] >> 8 & 4095),
		.sendbuf = (uintptr_t)fz_arena,
		.recvbuf = (uintptr_t)fz_arena + 262144,
	};

	n = c->nranks ? c->nranks : 1;
	if (a.dtype < KCOLL_FP16 && a.op == KCOLL_AVG)
		a.op = KCOLL_SUM;
	if (coll == KCOLL_BARRIER || coll >= KCOLL_ALLGATHERV)
		a.count = 0;
	if (coll >= KCOLL_ALLGATHERV) {
		for (i = 0; i < n && i < 64; i++) {
			counts[i] = 1 + (op->v[1] >> 8 & 15);
			displs[i] = i * 16;
		}
		a.counts = a.send_counts = (uintptr_t)counts;
		a.displs = a.send_displs = (uintptr_t)displs;
	}
	if (op->v[0] >> 28 & 1)
		a.flags |= KCOLL_COLL_IN_PLACE;
	if (op->v[0] >> 29 & 1 && sb->live) {
		a.flags |= KCOLL_COLL_SEND_BUF;
		a.send_handle = sb->handle;
		a.sendbuf = (op->v[2] % sb->len) & ~7ULL;
	}
	if (op->v[0] >> 30 & 1 && rb->live) {
		a.flags |= KCOLL_COLL_RECV_BUF;
		a.recv_handle = rb->handle;
		a.recvbuf = 0;
	}
	switch (op->mut) {
	case FZ_MUT_OWN:	/* element count whose byte size overflows */
		a.count = fz_interesting64(op->v[3]) / (op->v[3] & 1 ? 1 : esize[a.dtype]);
		break;
	case FZ_MUT_OWN + 1:	/* v-counts that overflow or disagree */
		counts[op->v[3] % n] = fz_interesting64(op->v[3] >> 8);
		displs[(op->v[3] >> 4) % n] = fz_interesting64(op->v[3] >> 12);
		break;
	case FZ_MUT_OWN + 2:
		a.root = i32[op->v[3] % 18];
		break;
	}
	if (fz_one_rank_on(p, fd))
		return;
	ret = fz_ioctl(FZ_COLL, fd, KCOLL_IOC_COLL, &a, sizeof(a), KCOLL_COLL_SIZE_VER0,
		       op->mut < FZ_MUT_OWN ? op->mut : 0, op->v[4]);
	fz_one_rank_done(p);
	if (!ret && a.flags & KCOLL_COLL_NONBLOCK)
		fz_req_put(p, op, fd, a.comm, a.req);
}

static void fz_mmap(struct fz_pool *p, const struct fz_op *op)
{
	struct fz_buf *b = &p->buf[op->slot[2] % FZ_NBUF];
	struct fz_map *m = &p->map[op->slot[1] % FZ_NMAP];
	int fd = b->fd > 0 && !(op->mut && op->v[3] & 1) ? b->fd : fz_fd(p, op);
	uint64_t len = b->len ? (b->len + PAGE - 1) & ~(PAGE - 1) : PAGE, off = b->off;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED;
	void *addr;
	long ret;

	switch (op->mut) {
	case 0:
		break;
	case 1:
		off += (op->v[3] % 3) * PAGE;
		break;
	case 2:
		len = op->v[3] % 3 ? len + PAGE * (op->v[3] % 4) : len / 2;
		break;
	case 3:
		flags = MAP_PRIVATE;
		break;
	case 4:
		prot = op->v[3] & 1 ? PROT_READ | PROT_EXEC : PROT_READ;
		break;
	default:
		off = fz_interesting64(op->v[3]) & ~(PAGE - 1);
		break;
	}
	addr = mmap(NULL, len ? len : PAGE, prot, flags, fd, off);
	ret = addr == MAP_FAILED ? -errno : 0;
	fz_note(FZ_MMAP, ret);
	if (ret)
		return;
	pthread_mutex_lock(&p->lock);
	if (m->addr)
		munmap(m->addr, m->len);
	*m = (struct fz_map){ addr, len ? len : PAGE };
	pthread_mutex_unlock(&p->lock);
}

static void fz_munmap(struct fz_pool *p, const struct fz_op *op)
{
	struct fz_map *m = &p->map[op->slot[1] % FZ_NMAP];
	long ret;

	pthread_mutex_lock(&p->lock);
	if (!m->addr) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	if (op->v[0] % 3 || m->len <= PAGE) {
		ret = munmap(m->addr, m->len) ? -errno : 0;
		m->addr = NULL;
	} else {	/* a fz_hole in the middle: the VMA splits */
		ret = munmap((char *)m->addr + PAGE * (1 + op->v[0] % (m->len / PAGE - 1)),
			     PAGE) ? -errno : 0;
	}
	pthread_mutex_unlock(&p->lock);
	fz_note(FZ_MUNMAP, ret);
}

static void fz_mremap(struct fz_pool *p, const struct fz_op *op)
{
	struct fz_map *m = &p->map[op->slot[1] % FZ_NMAP];
	uint64_t len;
	void *addr;

	pthread_mutex_lock(&p->lock);
	if (!m->addr) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	len = op->v[0] % 3 == 0 ? m->len / 2 : m->len + PAGE * (op->v[0] % 3);
	len = len ? len : PAGE;
	addr = mremap(m->addr, m->len, len, op->v[1] & 1 ? MREMAP_MAYMOVE : 0);
	fz_note(FZ_MREMAP, addr == MAP_FAILED ? -errno : 0);
	if (addr != MAP_FAILED)
		*m = (struct fz_map){ addr, len };
	pthread_mutex_unlock(&p->lock);
}

/* Read and write the mapping: faults on pages the kernel may have let go. */
static void fz_touch(struct fz_pool *p, const struct fz_op *op)
{
	struct fz_map *m = &p->map[op->slot[1] % FZ_NMAP];
	volatile char *addr;
	sigjmp_buf jb;
	uint64_t len, i;
	long ret = 0;

	pthread_mutex_lock(&p->lock);
	addr = m->addr;
	len = m->len;
	pthread_mutex_unlock(&p->lock);
	if (!addr)
		return;
	fault_jmp = &jb;
	if (sigsetjmp(jb, 1)) {
		ret = -EFAULT;
	} else {
		for (i = op->v[0] % PAGE; i < len; i += PAGE) {
			if (op->v[1] & 1)
				addr[i] = (char)i;
			else
				(void)addr[i];
		}
	}
	fault_jmp = NULL;
	fz_note(FZ_TOUCH, ret);
}

static void fz_raw_ioctl(struct fz_pool *p, const struct fz_op *op)
{
	unsigned long cmd = op->v[0] & 1 ? _IO(KCOLL_IOC_MAGIC, op->v[0] >> 1 & 31) :
			    _IOC(op->v[0] >> 1 & 3, op->v[0] >> 3 & 0xff ? KCOLL_IOC_MAGIC :
				 (op->v[0] >> 11) & 0xff, op->v[0] >> 19 & 0xff,
				 op->v[0] >> 27 & 0x3fff);
	char *a = fz_targ();
	unsigned int i;
	void *arg = a;

	for (i = 0; i < 256; i += 8)
		*(uint64_t *)(a + i) = op->v[1] * (i + 1) ^ op->v[2];
	*(uint32_t *)a = op->v[1] & 1 ? 64 + op->v[3] % 96 : (uint32_t)op->v[3];
	if (op->mut)
		arg = (void *)(uintptr_t)fz_interesting64(op->v[4]);
	fz_note(FZ_RAW_IOCTL, ioctl(fz_fd(p, op), cmd, arg) ? -errno : 0);
}

/* What lived on a file that is being closed is gone with it.  Context: p->lock held. */
static void fz_forget(struct fz_pool *p, int fd)
{
	unsigned int i;

	for (i = 0; fd >= 0 && i < FZ_NCOMM; i++)
		if (p->comm[i].fd == fd)
			p->comm[i].live = 0;
	for (i = 0; fd >= 0 && i < FZ_NBUF; i++)
		if (p->buf[i].fd == fd)
			p->buf[i].live = 0;
}

void fz_exec(struct fz_pool *p, unsigned int thread, const struct fz_op *op)
{
	struct kcoll_info info = { .size = sizeof(info) };
	struct pollfd pfd;
	int fd;

	switch (op->kind) {
	case FZ_OPEN:
		fd = open(KCOLL_DEVICE_PATH, op->mut ? (int)(op->v[0] & 0x7fffff) : O_RDWR);
		fz_note(FZ_OPEN, fd < 0 ? -errno : 0);
		if (fd >= 0) {
			pthread_mutex_lock(&p->lock);
			p->fd[op->slot[0] % FZ_NFD] = fd;	/* an old one stays open */
			pthread_mutex_unlock(&p->lock);
		}
		break;
	case FZ_CLOSE:
		pthread_mutex_lock(&p->lock);
		fd = p->fd[op->slot[0] % FZ_NFD];
		p->fd[op->slot[0] % FZ_NFD] = -1;
		fz_forget(p, fd);
		pthread_mutex_unlock(&p->lock);
		if (fd >= 0)
			fz_note(FZ_CLOSE, close(fd) ? -errno : 0);
		break;
	case FZ_INFO:
		fz_ioctl(FZ_INFO, fz_fd(p, op), KCOLL_IOC_GET_INFO, &info, sizeof(info),
			 KCOLL_INFO_SIZE_VER0, op->mut % FZ_MUT_OWN, op->v[4]);
		break;
	case FZ_COMM_CREATE:
		fz_comm_create(p, op);
		break;
	case FZ_COMM_DESTROY:
	case FZ_COMM_ABORT:
	case FZ_COMM_QUERY:
		fz_comm_arg(p, op);
		break;
	case FZ_BUF_CREATE:
		fz_buf_create(p, op);
		break;
	case FZ_BUF_DESTROY:
		fz_buf_destroy(p, op);
		break;
	case FZ_P2P:
		fz_p2p(p, op);
		break;
	case FZ_WAIT:
		fz_wait(p, op);
		break;
	case FZ_COLL:
		fz_coll(p, op);
		break;
	case FZ_MMAP:
		fz_mmap(p, op);
		break;
	case FZ_MUNMAP:
		fz_munmap(p, op);
		break;
	case FZ_MREMAP:
		fz_mremap(p, op);
		break;
	case FZ_TOUCH:
		fz_touch(p, op);
		break;
	case FZ_POLL:
		pfd = (struct pollfd){ .fd = fz_fd(p, op), .events = POLLIN | POLLOUT };
		fz_note(FZ_POLL, poll(&pfd, 1, op->v[0] % 20) < 0 ? -errno : 0);
		break;
	case FZ_NL:
		fz_nl_op(p, thread, op);
		break;
	case FZ_RAW_IOCTL:
		fz_raw_ioctl(p, op);
		break;
	}
}
