// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcoll_group_start()/kcoll_group_end() against a fake kernel: this program defines ioctl()
 * itself (the library is linked statically), so every submission is counted.  The fake plays
 * rank 0 of 2 whose peer holds the same data: an all-reduce SUM doubles, MAX keeps.  Checks
 * that consecutive compatible all-reduces cost ONE KCOLL_IOC_COLL and give what separate calls
 * give, where runs break, that point-to-point is posted before and waited after the
 * collectives, that other calls are refused inside a group, and that one failure fails the
 * whole group.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/libkcoll_internal.h"

#include "kselftest_harness.h"

#define FAKE_COMM	7
/* Larger all-reduces are only counted: their buffers are not real. */
#define FAKE_TOUCH_MAX	(1u << 20)

static struct {
	int fd;
	int colls, p2ps, waits, calls;
	char log[64];			/* one letter per call: C(oll) P(2P) W(ait) */
	struct kcoll_coll coll;		/* the last one */
	struct kcoll_p2p p2p[8];	/* posted, by request id */
	int fail_cmd_nr;		/* fail the next call of this ioctl nr ... */
	int fail;			/* ... with this errno */
} fk = { .fd = -1 };

static void fake_reduce(struct kcoll_coll *a)
{
	void *in = (void *)(uintptr_t)(a->flags & KCOLL_COLL_IN_PLACE ? a->recvbuf : a->sendbuf);
	void *out = (void *)(uintptr_t)a->recvbuf;

	if (a->count > FAKE_TOUCH_MAX)
		return;
	for (size_t i = 0; i < a->count; i++) {
		if (a->dtype == KCOLL_FP32) {
			float v = ((float *)in)[i];

			((float *)out)[i] = a->op == KCOLL_SUM ? 2 * v : v;
		} else if (a->dtype == KCOLL_INT32) {
			int32_t v = ((int32_t *)in)[i];

			((int32_t *)out)[i] = a->op == KCOLL_SUM ? 2 * v : v;
		}
	}
}

int ioctl(int fd, unsigned long cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != fk.fd)
		return syscall(SYS_ioctl, fd, cmd, arg);
	fk.calls++;
	if (fk.fail && (int)_IOC_NR(cmd) == fk.fail_cmd_nr) {
		errno = fk.fail;
		fk.fail = 0;
		return -1;
	}
	switch (cmd) {
	case KCOLL_IOC_COLL:
		memcpy(&fk.coll, arg, sizeof(fk.coll));
		fk.colls++;
		strcat(fk.log, "C");
		fake_reduce(arg);
		return 0;
	case KCOLL_IOC_P2P: {
		struct kcoll_p2p *p = arg;

		if (!(p->flags & KCOLL_P2P_NONBLOCK) || fk.p2ps >= 8) {
			errno = EINVAL;
			return -1;
		}
		p->req = fk.p2ps;
		fk.p2p[fk.p2ps++] = *p;
		strcat(fk.log, "P");
		return 0;
	}
	case KCOLL_IOC_WAIT: {
		struct kcoll_wait *w = arg;
		struct kcoll_p2p *p = &fk.p2p[w->req % 8];

		/* The peer's message lands: bytes 0x5a. */
		if (p->flags & KCOLL_P2P_RECV)
			memset((void *)(uintptr_t)p->addr, 0x5a, p->len);
		w->status = 0;
		w->result = p->len;
		fk.waits++;
		strcat(fk.log, "W");
		return 0;
	}
	case KCOLL_IOC_COMM_DESTROY:
	case KCOLL_IOC_COMM_ABORT:
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

FIXTURE(grp) {
	struct kcoll_comm *c;
};

FIXTURE_SETUP(grp)
{
	memset(&fk, 0, sizeof(fk));
	fk.fd = open("/dev/null", O_RDWR);
	ASSERT_LE(0, fk.fd);
	/* Rank 0 of 2, made by hand: the group code needs no bootstrap. */
	self->c = calloc(1, sizeof(*self->c));
	ASSERT_NE(NULL, self->c);
	self->c->fd = fk.fd;
	self->c->handle = FAKE_COMM;
	self->c->rank = 0;
	self->c->nranks = 2;
	self->c->comm_id = 0x1234;
	pthread_mutex_init(&self->c->lock, NULL);
}

FIXTURE_TEARDOWN(grp)
{
	/* Never leave this thread in a group for the next test (each forks anyway). */
	while (kcoll_group_end() != -EINVAL || !strstr(kcoll_last_error(), "no kcoll_group"))
		;
	kcoll_comm_destroy(self->c);
	close(fk.fd);
}

#define NOPS	8

/* 8 fp32 all-reduces, some in place: one submission, the results of 8 separate calls. */
TEST_F(grp, eight_allreduces_one_submission)
{
	static const size_t counts[NOPS] = { 1, 3, 7, 2, 16, 5, 1, 9 };
	float send[NOPS][16], got[NOPS][16], want[NOPS][16];
	size_t total = 0;
	int i;

	for (i = 0; i < NOPS; i++)
		for (size_t k = 0; k < 16; k++)
			send[i][k] = got[i][k] = want[i][k] = (float)(i * 100 + k);
	/* Separate calls: one KCOLL_IOC_COLL each. */
	for (i = 0; i < NOPS; i++) {
		ASSERT_EQ(0, kcoll_allreduce(self->c, i % 2 ? want[i] : send[i], want[i],
					     counts[i], KCOLL_FP32, KCOLL_SUM, NULL));
		total += counts[i];
	}
	ASSERT_EQ(NOPS, fk.colls);
	fk.colls = 0;

	ASSERT_EQ(0, kcoll_group_start());
	for (i = 0; i < NOPS; i++)
		ASSERT_EQ(0, kcoll_allreduce(self->c, i % 2 ? got[i] : send[i], got[i], counts[i],
					     KCOLL_FP32, KCOLL_SUM, NULL));
	EXPECT_EQ(0, fk.calls - NOPS) TH_LOG("recorded calls must not reach the kernel");
	ASSERT_EQ(0, kcoll_group_end()) TH_LOG("%s", kcoll_last_error());
	EXPECT_EQ(1, fk.colls);
	EXPECT_EQ(total, fk.coll.count);
	EXPECT_EQ(KCOLL_ALLREDUCE, fk.coll.coll);
	EXPECT_TRUE(fk.coll.flags & KCOLL_COLL_IN_PLACE);
	EXPECT_EQ(0, memcmp(want, got, sizeof(got)));
	EXPECT_EQ(2.0f * 701, got[7][1]);
	EXPECT_EQ(2.0f * 408, got[4][8]);
	EXPECT_EQ(310.0f, got[3][10]);		/* past its count: untouched */
}

/* Where fused runs break: another datatype, operator, algorithm or communicator. */
struct run_case {
	const char *name;
	int n;
	int dtype[6], op[6], algo[6], other_comm[6];
	int want_colls;
};

static const struct run_case run_cases[] = {
	{ "same", 4, { KCOLL_FP32, KCOLL_FP32, KCOLL_FP32, KCOLL_FP32 }, { 0 }, { 0 }, { 0 }, 1 },
	{ "dtype", 4, { KCOLL_FP32, KCOLL_FP32, KCOLL_INT32, KCOLL_FP32 }, { 0 }, { 0 }, { 0 }, 3 },
	{ "op", 3, { KCOLL_FP32, KCOLL_FP32, KCOLL_FP32 }, { KCOLL_SUM, KCOLL_MAX, KCOLL_MAX },
	  { 0 }, { 0 }, 2 },
	{ "algo", 3, { KCOLL_FP32, KCOLL_FP32, KCOLL_FP32 }, { 0 },
	  { KCOLL_ALG_AUTO, KCOLL_ALG_AUTO, KCOLL_ALG_AUTO + 1 }, { 0 }, 2 },
	{ "comm", 3, { KCOLL_INT32, KCOLL_INT32, KCOLL_INT32 }, { 0 }, { 0 }, { 0, 1, 0 }, 3 },
	{ "one", 1, { KCOLL_INT32 }, { 0 }, { 0 }, { 0 }, 1 },
};

TEST_F(grp, runs_break_where_calls_differ)
{
	struct kcoll_comm other = *self->c;

	for (size_t t = 0; t < sizeof(run_cases) / sizeof(run_cases[0]); t++) {
		const struct run_case *rc = &run_cases[t];
		int32_t buf[6][4];

		fk.colls = 0;
		ASSERT_EQ(0, kcoll_group_start());
		for (int i = 0; i < rc->n; i++) {
			KCOLL_OPTS(kcoll_coll_opts, o, .algo = rc->algo[i]);

			for (int k = 0; k < 4; k++)
				buf[i][k] = i + k;
			ASSERT_EQ(0, kcoll_allreduce(rc->other_comm[i] ? &other : self->c, buf[i],
						     buf[i], 4, rc->dtype[i], rc->op[i], &o));
		}
		ASSERT_EQ(0, kcoll_group_end()) TH_LOG("%s: %s", rc->name, kcoll_last_error());
		EXPECT_EQ(rc->want_colls, fk.colls) TH_LOG("case %s", rc->name);
		for (int i = 0; i < rc->n; i++) {
			int32_t w = rc->op[i] == KCOLL_SUM ? 2 * (i + 3) : i + 3;

			if (rc->dtype[i] == KCOLL_INT32)
				EXPECT_EQ(w, buf[i][3]) TH_LOG("case %s op %d", rc->name, i);
		}
	}
}

/* A count too large to pack runs alone; the small ones after it still fuse. */
TEST_F(grp, huge_count_runs_alone)
{
	float x[4] = { 1, 2, 3, 4 }, y[4] = { 5, 6, 7, 8 }, big = 0;

	ASSERT_EQ(0, kcoll_group_start());
	ASSERT_EQ(0, kcoll_allreduce(self->c, &big, &big, SIZE_MAX / 2, KCOLL_FP32, KCOLL_SUM,
				     NULL));
	ASSERT_EQ(0, kcoll_allreduce(self->c, x, x, 4, KCOLL_FP32, KCOLL_SUM, NULL));
	ASSERT_EQ(0, kcoll_allreduce(self->c, y, y, 4, KCOLL_FP32, KCOLL_SUM, NULL));
	ASSERT_EQ(0, kcoll_group_end());
	EXPECT_EQ(2, fk.colls);
	EXPECT_EQ(8, fk.coll.count);
	EXPECT_EQ(8.0f, x[3]);
	EXPECT_EQ(16.0f, y[3]);
}

/* Point-to-point: posted first, then the fused collective, then waited; requests idle. */
TEST_F(grp, p2p_posted_before_waited_after)
{
	unsigned char out[32], in[32];
	float a = 1, b = 2;
	struct kcoll_request rs, rr;
	size_t got;

	memset(out, 1, sizeof(out));
	memset(in, 0, sizeof(in));
	ASSERT_EQ(0, kcoll_group_start());
	ASSERT_EQ(0, kcoll_isend(self->c, out, sizeof(out), 1, NULL, &rs));
	ASSERT_EQ(0, kcoll_allreduce(self->c, &a, &a, 1, KCOLL_FP32, KCOLL_SUM, NULL));
	ASSERT_EQ(0, kcoll_irecv(self->c, in, sizeof(in), 1, NULL, &rr));
	ASSERT_EQ(0, kcoll_allreduce(self->c, &b, &b, 1, KCOLL_FP32, KCOLL_SUM, NULL));
	EXPECT_EQ(0, fk.calls);
	ASSERT_EQ(0, kcoll_group_end()) TH_LOG("%s", kcoll_last_error());
	EXPECT_STREQ("PPCWW", fk.log);
	EXPECT_TRUE(fk.p2p[0].flags & KCOLL_P2P_SEND);
	EXPECT_TRUE(fk.p2p[1].flags & KCOLL_P2P_RECV);
	EXPECT_EQ(0x5a, in[31]);
	EXPECT_EQ(2.0f, a);
	EXPECT_EQ(4.0f, b);
	/* Grouped requests were completed by the group: nothing left to wait for. */
	EXPECT_EQ(-EINVAL, kcoll_wait(self->c, &rr, 0, &got));
}

/* Every call but the grouped ones is refused inside a group, and fails the group. */
enum refused { R_BCAST, R_BARRIER, R_SEND, R_RECV, R_WAIT, R_TEST, R_REQ, R_DESTROY, R_BUF,
	       R_BADPEER, R_NUM };

static const char *const refused_name[R_NUM] = {
	"broadcast", "barrier", "kcoll_send", "kcoll_recv", "kcoll_wait", "kcoll_test",
	".req", "kcoll_comm_destroy", "kcoll_buf_create", "point-to-point",
};

static int call_refused(struct kcoll_comm *c, enum refused r)
{
	struct kcoll_request req = { .comm = FAKE_COMM, .state = 1 };
	KCOLL_OPTS(kcoll_coll_opts, nb, .req = &req);
	struct kcoll_buf *b;
	float x = 1;
	int done;

	switch (r) {
	case R_BCAST: return kcoll_broadcast(c, &x, &x, 1, KCOLL_FP32, 0, NULL);
	case R_BARRIER: return kcoll_barrier(c, NULL);
	case R_SEND: return kcoll_send(c, &x, 4, 1, NULL);
	case R_RECV: return kcoll_recv(c, &x, 4, 1, NULL, NULL);
	case R_WAIT: return kcoll_wait(c, &req, 0, NULL);
	case R_TEST: return kcoll_test(c, &req, &done, NULL);
	case R_REQ: return kcoll_allreduce(c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, &nb);
	case R_DESTROY: return kcoll_comm_destroy(c);
	case R_BUF: return kcoll_buf_create(c, 4096, &b);
	case R_BADPEER: return kcoll_isend(c, &x, 4, 5, NULL, &req);
	default: return 0;
	}
}

TEST_F(grp, other_calls_refused_and_fail_the_group)
{
	float x = 3;

	for (int r = 0; r < R_NUM; r++) {
		fk.calls = 0;
		ASSERT_EQ(0, kcoll_group_start());
		ASSERT_EQ(0, kcoll_allreduce(self->c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, NULL));
		errno = 0;
		EXPECT_EQ(-EINVAL, call_refused(self->c, r)) TH_LOG("%s", refused_name[r]);
		EXPECT_EQ(EINVAL, errno);
		EXPECT_NE(NULL, strstr(kcoll_last_error(), refused_name[r]))
			TH_LOG("%s: %s", refused_name[r], kcoll_last_error());
		/* Still recording after the refusal; the end runs nothing and says why. */
		ASSERT_EQ(0, kcoll_allreduce(self->c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, NULL));
		EXPECT_EQ(-EINVAL, kcoll_group_end());
		EXPECT_EQ(0, fk.calls) TH_LOG("%s reached the kernel", refused_name[r]);
		EXPECT_NE(NULL, strstr(kcoll_last_error(), "group not run"));
		EXPECT_NE(NULL, strstr(kcoll_last_error(), refused_name[r]))
			TH_LOG("%s", kcoll_last_error());
	}
	EXPECT_EQ(3.0f, x);
	/* The next group is clean again. */
	ASSERT_EQ(0, kcoll_group_start());
	ASSERT_EQ(0, kcoll_allreduce(self->c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, NULL));
	ASSERT_EQ(0, kcoll_group_end());
	EXPECT_EQ(6.0f, x);
}

/* Groups nest: only the outermost end runs; an end without a start is refused. */
TEST_F(grp, nesting)
{
	float x = 1, y = 2;

	EXPECT_EQ(-EINVAL, kcoll_group_end());
	ASSERT_EQ(0, kcoll_group_start());
	ASSERT_EQ(0, kcoll_allreduce(self->c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, NULL));
	ASSERT_EQ(0, kcoll_group_start());
	ASSERT_EQ(0, kcoll_allreduce(self->c, &y, &y, 1, KCOLL_FP32, KCOLL_SUM, NULL));
	ASSERT_EQ(0, kcoll_group_end());
	EXPECT_EQ(0, fk.colls);
	ASSERT_EQ(0, kcoll_group_end());
	EXPECT_EQ(1, fk.colls);
	EXPECT_EQ(2.0f, x);
	EXPECT_EQ(4.0f, y);
	EXPECT_EQ(-EINVAL, kcoll_group_end());
}

/* A failure while running: one errno for the group, posted requests still waited for. */
TEST_F(grp, run_failure_fails_the_group)
{
	unsigned char in[8];
	struct kcoll_request r;
	float x = 1;

	fk.fail_cmd_nr = _IOC_NR(KCOLL_IOC_COLL);
	fk.fail = ECONNRESET;
	ASSERT_EQ(0, kcoll_group_start());
	ASSERT_EQ(0, kcoll_irecv(self->c, in, sizeof(in), 1, NULL, &r));
	ASSERT_EQ(0, kcoll_allreduce(self->c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, NULL));
	EXPECT_EQ(-ECONNRESET, kcoll_group_end());
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_STREQ("PW", fk.log) TH_LOG("the posted receive must still be waited for");
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "call 1 (kcoll_allreduce)"))
		TH_LOG("%s", kcoll_last_error());

	/* A refused post: nothing else runs, nothing is left posted. */
	memset(fk.log, 0, sizeof(fk.log));
	fk.fail_cmd_nr = _IOC_NR(KCOLL_IOC_P2P);
	fk.fail = ENOMEM;
	ASSERT_EQ(0, kcoll_group_start());
	ASSERT_EQ(0, kcoll_irecv(self->c, in, sizeof(in), 1, NULL, &r));
	ASSERT_EQ(0, kcoll_allreduce(self->c, &x, &x, 1, KCOLL_FP32, KCOLL_SUM, NULL));
	EXPECT_EQ(-ENOMEM, kcoll_group_end());
	EXPECT_STREQ("", fk.log);
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "call 0 (kcoll_irecv)"))
		TH_LOG("%s", kcoll_last_error());
}

TEST_HARNESS_MAIN
