/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll_badarg_test's mmap table: included once, by kcoll_badarg_test.c, after its fixture
 * (struct env, env_init(), errname()).  A row: the offset, length, prot and flags of the
 * mmap(), its errno, then an action on the mapping and the action's outcome.
 */
#ifndef KCOLL_BADARG_MMAP_H
#define KCOLL_BADARG_MMAP_H

/* mmap --------------------------------------------------------------------------------- */

enum moff { O_BUF, O_BUF_PG, O_CLOSED, O_FOREIGN, O_ZERO, O_ODD, O_HUGE, O_NEG, O_RDONLY_FD };
enum mact {
	M_NONE, M_RW, M_AFTER_BUF_DESTROY, M_AFTER_COMM_DESTROY, M_AFTER_CLOSE, M_REMAP_OLD,
	M_FORK, M_DOFORK_FORK, M_GROW, M_GROW_INPLACE, M_SHRINK, M_MOVE, M_UNMAP_HEAD,
	M_UNMAP_TAIL, M_UNMAP_MID, M_MPROTECT_RO, M_MPROTECT_EXEC, M_TWICE, M_OTHER_FD,
	M_MADV_DONTNEED,
};

struct mmap_row {
	const char *name;
	enum moff off;
	size_t len;		/* bytes */
	int prot, flags;
	int err;		/* of mmap() */
	enum mact act;		/* then, on success */
	int act_err;		/* of the action (0, -errno, or a signal number for fork) */
};

#define RW	(PROT_READ | PROT_WRITE)
#define MS	MAP_SHARED
#define BL	(BUF_PAGES * PG)

static const struct mmap_row mmap_rows[] = {
	{ "whole buffer", O_BUF, BL, RW, MS, 0, M_RW },
	{ "one byte", O_BUF, 1, RW, MS, 0, M_RW },
	{ "one page", O_BUF, PG, RW, MS, 0, M_RW },
	{ "pages minus one byte", O_BUF, BL - 1, RW, MS, 0, M_RW },
	{ "one byte too long", O_BUF, BL + 1, RW, MS, -EINVAL },
	{ "a page too long", O_BUF, BL + PG, RW, MS, -EINVAL },
	{ "length 0", O_BUF, 0, RW, MS, -EINVAL },
	{ "length 2^40", O_BUF, 1ULL << 40, RW, MS, -EINVAL },
	{ "length ~0", O_BUF, ~0UL, RW, MS, -ENOMEM },
	{ "MAP_PRIVATE", O_BUF, BL, RW, MAP_PRIVATE, -EINVAL },
	{ "MAP_PRIVATE read-only", O_BUF, BL, PROT_READ, MAP_PRIVATE, -EINVAL },
	{ "MAP_PRIVATE|MAP_ANONYMOUS ignores fd", O_BUF, BL, RW, MAP_PRIVATE | MAP_ANONYMOUS, 0 },
	{ "MAP_SHARED_VALIDATE", O_BUF, BL, RW, MAP_SHARED_VALIDATE, 0, M_RW },
	{ "MAP_SHARED_VALIDATE unknown flag", O_BUF, BL, RW, MAP_SHARED_VALIDATE | 0x400000,
	  -EOPNOTSUPP },
	{ "MAP_SHARED_VALIDATE|MAP_SYNC", O_BUF, BL, RW, MAP_SHARED_VALIDATE | MAP_SYNC,
	  -EOPNOTSUPP },
	{ "MAP_POPULATE", O_BUF, BL, RW, MS | MAP_POPULATE, 0, M_RW },
	{ "MAP_LOCKED", O_BUF, BL, RW, MS | MAP_LOCKED, 0, M_RW },
	{ "MAP_NORESERVE", O_BUF, BL, RW, MS | MAP_NORESERVE, 0, M_RW },
	{ "PROT_READ", O_BUF, BL, PROT_READ, MS, 0 },
	{ "PROT_NONE", O_BUF, BL, PROT_NONE, MS, 0 },
	{ "PROT_EXEC", O_BUF, BL, RW | PROT_EXEC, MS, 0 },
	{ "offset + a page", O_BUF_PG, PG, RW, MS, -ENOENT },
	{ "offset of a destroyed buffer", O_CLOSED, PG, RW, MS, -ENOENT },
	{ "offset of another file's buffer", O_FOREIGN, PG, RW, MS, -ENOENT },
	{ "offset 0", O_ZERO, PG, RW, MS, -ENOENT },
	{ "offset not page aligned", O_ODD, PG, RW, MS, -EINVAL },
	{ "offset beyond 32-bit cookies", O_HUGE, PG, RW, MS, -ENOENT },
	{ "offset negative", O_NEG, PG, RW, MS, -EOVERFLOW },
	{ "O_RDONLY file, PROT_WRITE", O_RDONLY_FD, PG, RW, MS, -EACCES },
	{ "O_RDONLY file, PROT_READ", O_RDONLY_FD, PG, PROT_READ, MS, 0 },
	{ "after BUF_DESTROY", O_BUF, BL, RW, MS, 0, M_AFTER_BUF_DESTROY },
	{ "after COMM_DESTROY", O_BUF, BL, RW, MS, 0, M_AFTER_COMM_DESTROY },
	{ "after close", O_BUF, BL, RW, MS, 0, M_AFTER_CLOSE },
	{ "offset reused after destroy", O_BUF, BL, RW, MS, 0, M_REMAP_OLD, -ENOENT },
	{ "mapped twice", O_BUF, BL, RW, MS, 0, M_TWICE },
	{ "offset on another file", O_BUF, BL, RW, MS, 0, M_OTHER_FD, -ENOENT },
	{ "fork: child has nothing", O_BUF, BL, RW, MS, 0, M_FORK, SIGSEGV },
	{ "fork after MADV_DOFORK", O_BUF, BL, RW, MS, 0, M_DOFORK_FORK, 0 },
	{ "mremap grow", O_BUF, PG, RW, MS, 0, M_GROW, -EFAULT },
	{ "mremap grow in place", O_BUF, PG, RW, MS, 0, M_GROW_INPLACE, -EFAULT },
	{ "mremap shrink", O_BUF, BL, RW, MS, 0, M_SHRINK },
	{ "mremap move", O_BUF, BL, RW, MS, 0, M_MOVE },
	{ "munmap head", O_BUF, BL, RW, MS, 0, M_UNMAP_HEAD },
	{ "munmap tail", O_BUF, BL, RW, MS, 0, M_UNMAP_TAIL },
	{ "munmap middle", O_BUF, BL, RW, MS, 0, M_UNMAP_MID },
	{ "mprotect read-only", O_BUF, BL, RW, MS, 0, M_MPROTECT_RO },
	{ "mprotect exec", O_BUF, BL, RW, MS, 0, M_MPROTECT_EXEC },
	{ "MADV_DONTNEED keeps the data", O_BUF, BL, RW, MS, 0, M_MADV_DONTNEED },
};

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	siglongjmp(segv_jmp, 1);
}

/* 1 if the byte at @p can be read, 0 on SIGSEGV/SIGBUS. */
static int readable(volatile char *p)
{
	struct sigaction sa = { .sa_handler = on_segv }, o1, o2;
	int ok = 0;

	sigaction(SIGSEGV, &sa, &o1);
	sigaction(SIGBUS, &sa, &o2);
	if (!sigsetjmp(segv_jmp, 1)) {
		(void)*p;
		ok = 1;
	}
	sigaction(SIGSEGV, &o1, NULL);
	sigaction(SIGBUS, &o2, NULL);
	return ok;
}

/* Check the first byte of every page of [p, p + len) holds its page's stamp. */
static int stamped(const char *p, size_t len, unsigned int first)
{
	size_t i;

	for (i = 0; i < len; i += PG)
		if (!readable((char *)p + i) || p[i] != (char)(0x40 + first + i / PG))
			return 0;
	return 1;
}

static int do_fork_read(char *p)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (!pid) {
		signal(SIGSEGV, SIG_DFL);
		_exit(p[0] == 0x40 ? 0 : 3);
	}
	waitpid(pid, &st, 0);
	return WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st) ? 100 + WEXITSTATUS(st) : 0;
}

/* The action of a row on mapping @p; 0, -errno or a signal. */
static int mmap_act(struct env *e, const struct mmap_row *r, char **pp, size_t *plen)
{
	char *p = *pp, *q;
	size_t len = *plen;
	unsigned int i;
	int fd;

	for (i = 0; i < len; i += PG)
		p[i] = 0x40 + i / PG;
	switch (r->act) {
	case M_NONE:
		return 0;
	case M_RW:
		return stamped(p, len, 0) ? 0 : -EIO;
	case M_AFTER_BUF_DESTROY:
		if (kt_buf_destroy(e->fd, e->comm, e->buf))
			return -EBADE;
		/* The mapping keeps its pages; the offset is gone. */
		return stamped(p, len, 0) ? 0 : -EIO;
	case M_AFTER_COMM_DESTROY:
		if (kt_comm_destroy(e->fd, e->comm))
			return -EBADE;
		return stamped(p, len, 0) ? 0 : -EIO;
	case M_AFTER_CLOSE:
		close(e->fd);
		e->fd = -1;
		return stamped(p, len, 0) ? 0 : -EIO;
	case M_REMAP_OLD:
		if (kt_buf_destroy(e->fd, e->comm, e->buf))
			return -EBADE;
		q = mmap(NULL, PG, RW, MS, e->fd, e->off);
		if (q != MAP_FAILED) {
			munmap(q, PG);
			return 0;
		}
		return -errno;
	case M_TWICE:
		q = mmap(NULL, len, RW, MS, e->fd, e->off);
		if (q == MAP_FAILED)
			return -errno;
		q[1] = 'x';
		i = p[1] == 'x' && stamped(q, len, 0);
		munmap(q, len);
		return i ? 0 : -EIO;
	case M_OTHER_FD:
		fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		q = mmap(NULL, PG, RW, MS, fd, e->off);
		close(fd);
		if (q != MAP_FAILED) {
			munmap(q, PG);
			return 0;
		}
		return -errno;
	case M_FORK:
		return do_fork_read(p);
	case M_DOFORK_FORK:
		if (madvise(p, len, MADV_DOFORK))
			return -errno;
		return do_fork_read(p);
	case M_GROW:
		q = mremap(p, len, len + PG, MREMAP_MAYMOVE);
		if (q == MAP_FAILED)
			return -errno;
		*pp = q;
		*plen = len + PG;
		return 0;
	case M_GROW_INPLACE:
		q = mremap(p, len, len + PG, 0);
		if (q == MAP_FAILED)
			return -errno;
		*plen = len + PG;
		return 0;
	case M_SHRINK:
		q = mremap(p, len, 2 * PG, 0);
		if (q == MAP_FAILED)
			return -errno;
		*plen = 2 * PG;
		return stamped(p, 2 * PG, 0) ? 0 : -EIO;
	case M_MOVE:
		q = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED)
			return -errno;
		q = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, q);
		if (q == MAP_FAILED)
			return -errno;
		*pp = q;
		return stamped(q, len, 0) ? 0 : -EIO;
	case M_UNMAP_HEAD:
		if (munmap(p, PG))
			return -errno;
		*pp = p + PG;
		*plen = len - PG;
		return stamped(p + PG, len - PG, 1) ? 0 : -EIO;
	case M_UNMAP_TAIL:
		if (munmap(p + len - PG, PG))
			return -errno;
		*plen = len - PG;
		return stamped(p, len - PG, 0) ? 0 : -EIO;
	case M_UNMAP_MID:
		if (munmap(p + PG, PG))
			return -errno;
		if (!stamped(p, PG, 0) || !stamped(p + 2 * PG, len - 2 * PG, 2) ||
		    readable(p + PG))
			return -EIO;
		munmap(p, PG);
		*pp = p + 2 * PG;
		*plen = len - 2 * PG;
		return 0;
	case M_MPROTECT_RO:
		if (mprotect(p, len, PROT_READ))
			return -errno;
		return stamped(p, len, 0) ? 0 : -EIO;
	case M_MPROTECT_EXEC:
		return mprotect(p, len, RW | PROT_EXEC) ? -errno : 0;
	case M_MADV_DONTNEED:
		/* Pages inserted at mmap() time: zapping the PTEs must not lose the data. */
		if (madvise(p, len, MADV_DONTNEED))
			return -errno;
		if (!readable(p))
			return SIGBUS;
		return stamped(p, len, 0) ? 0 : -EIO;
	}
	return 0;
}

static uint64_t mmap_offset(struct env *e, enum moff o, int *fd)
{
	*fd = e->fd;
	switch (o) {
	case O_BUF: return e->off;
	case O_BUF_PG: return e->off + PG;
	case O_CLOSED: return e->off_closed;
	case O_FOREIGN: return e->off_foreign;
	case O_ZERO: return 0;
	case O_ODD: return e->off + 8;
	case O_HUGE: return 1ULL << 44;
	case O_NEG: return -PG;
	case O_RDONLY_FD: *fd = e->rdonly; return e->off_rdonly;
	}
	return 0;
}

TEST_F(bad, mmap)
{
	unsigned int i, bad = 0, n = sizeof(mmap_rows) / sizeof(mmap_rows[0]);

	for (i = 0; i < n; i++) {
		const struct mmap_row *r = &mmap_rows[i];
		struct env e;
		uint32_t c;
		size_t len = r->len;
		char *p;
		int fd, ret, act = 0;
		uint64_t off;

		/* Each row on its own file: an action may destroy or close what it maps. */
		ASSERT_EQ(0, env_init(&e));
		if (r->off == O_RDONLY_FD) {
			e.rdonly = open(KCOLL_DEVICE_PATH, O_RDONLY | O_CLOEXEC);
			ASSERT_LE(0, e.rdonly);
			ASSERT_EQ(0, env_comm(&e, e.rdonly, &c));
			ASSERT_EQ(0, kt_buf_create(e.rdonly, c, PG, NULL, &e.off_rdonly));
		}
		off = mmap_offset(&e, r->off, &fd);
		p = mmap(NULL, len, r->prot, r->flags, fd, off);
		ret = p == MAP_FAILED ? -errno : 0;
		if (!ret && r->act && (r->prot & PROT_WRITE))
			act = mmap_act(&e, r, &p, &len);
		if (ret != r->err || act != r->act_err) {
			bad++;
			TH_LOG("row %u \"%s\": mmap %s (want %s), then %d (want %d)", i, r->name,
			       errname(ret), errname(r->err), act, r->act_err);
		}
		if (!ret)
			munmap(p, len);
		env_fini(&e);
	}
	TH_LOG("%u mmap rows, %u wrong", n, bad);
	EXPECT_EQ(0, bad);
	EXPECT_LE(40, n);
}

#endif /* KCOLL_BADARG_MMAP_H */
