// SPDX-License-Identifier: GPL-2.0-only
/*
 * libkcoll communicators against a fake kernel (comm_fake.c), one ioctl at a time: that each
 * argument is filled exactly as the uAPI header describes (sizes, flags, handles, reserved
 * fields), that results come back, that errors are passed on, that point-to-point calls are
 * checked before the kernel, and that buffers are mapped from the offset the kernel returns.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comm_fake.h"

#include "kselftest_harness.h"


FIXTURE(fake) {
	char path[64];
	struct kcoll_handle *h;
	struct kcoll_comm *c;
	uint64_t comm_id;
};

FIXTURE_SETUP(fake)
{
	KCOLL_OPTS(kcoll_comm_opts, opts, .connect_timeout_ms = 1234, .port = 4791);

	ASSERT_EQ(0, fake_open(self->path, &self->h));
	ASSERT_EQ(0, one_rank(self->h, &opts, &self->c, &self->comm_id)) {
		TH_LOG("%s", kcoll_last_error());
	}
	ASSERT_NE(NULL, self->c);
}

FIXTURE_TEARDOWN(fake)
{
	kcoll_comm_destroy(self->c);
	kcoll_close(self->h);
	unlink(self->path);
}

/* A module older than locality refuses the 96-byte argument: the library retries without. */
TEST(comm_create_pre_locality_module)
{
	KCOLL_OPTS(kcoll_comm_opts, opts, .port = 4791);
	struct kcoll_handle *h;
	struct kcoll_comm *c;
	char path[64];
	uint64_t id;

	ASSERT_EQ(0, fake_open(path, &h));
	fk.pre_locality = true;
	ASSERT_EQ(0, one_rank(h, &opts, &c, &id)) TH_LOG("%s", kcoll_last_error());
	EXPECT_EQ(2, fk.calls);
	EXPECT_EQ(KCOLL_COMM_CREATE_SIZE_VER2, fk.create_sizes[0]);
	EXPECT_EQ(KCOLL_COMM_CREATE_SIZE_VER1, fk.create_sizes[1]);
	/* The secret still went along. */
	EXPECT_FALSE(zero(fk.create.secret, sizeof(fk.create.secret)));
	kcoll_comm_destroy(c);
	kcoll_close(h);
	unlink(path);
	fk.fd = -1;
}

/* kcoll_comm_id(): the id the communicator was created with, which netlink names it by. */
TEST_F(fake, comm_id)
{
	EXPECT_NE(0, self->comm_id);
	EXPECT_EQ(self->comm_id, fk.create.comm_id);
	EXPECT_EQ(self->comm_id, kcoll_comm_id(self->c));
	errno = 0;
	EXPECT_EQ(0, kcoll_comm_id(NULL));
	EXPECT_EQ(EINVAL, errno);
}

/* A count too large for the kernel (EOVERFLOW) gets a message that gives the limit. */
TEST_F(fake, coll_eoverflow_message)
{
	float x = 0;

	fk.fail = EOVERFLOW;
	EXPECT_EQ(-EOVERFLOW, kcoll_allreduce(self->c, &x, &x, (size_t)1 << 62, KCOLL_FP32,
					      KCOLL_SUM, NULL));
	EXPECT_EQ(KCOLL_IOC_COLL, fk.cmd);
	EXPECT_EQ((uint64_t)1 << 62, fk.coll.count);
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "exceeds 2^56 bytes")) {
		TH_LOG("%s", kcoll_last_error());
	}
}

TEST_F(fake, comm_create_args)
{
	const struct kcoll_comm_create *cc = &fk.create;

	EXPECT_EQ(1, fk.calls);
	EXPECT_EQ(KCOLL_IOC_COMM_CREATE, fk.cmd);
	EXPECT_EQ(sizeof(struct kcoll_comm_create), cc->size);
	EXPECT_LE(KCOLL_COMM_CREATE_SIZE_VER0, cc->size);
	EXPECT_EQ(0, cc->flags);
	EXPECT_EQ(self->comm_id, cc->comm_id);
	EXPECT_NE(0, cc->comm_id);
	EXPECT_EQ(0, cc->rank);
	EXPECT_EQ(1, cc->nranks);
	EXPECT_EQ(sizeof(struct kcoll_sockaddr), cc->peer_size);
	EXPECT_EQ(1234, cc->timeout_ms);
	EXPECT_EQ(0, cc->failed_rank);	/* output only */
	EXPECT_TRUE(zero(cc->reserved, sizeof(cc->reserved)));
	/* The unique id's secret, drawn by kcoll_get_unique_id(): never left out. */
	EXPECT_EQ(KCOLL_COMM_CREATE_SIZE_VER2, cc->size);
	EXPECT_FALSE(zero(cc->secret, sizeof(cc->secret)));
	/* The bootstrap's locality: this process knows its host. */
	EXPECT_NE(0, cc->locality);
	EXPECT_EQ(sizeof(struct kcoll_rank_locality), cc->locality_size);
	EXPECT_EQ(0, cc->reserved2);
	EXPECT_EQ(AF_INET, fk.peers[0].family);
	EXPECT_EQ(4791, fk.peers[0].port);
	EXPECT_EQ(0, fk.peers[0].scope_id);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), *(uint32_t *)fk.peers[0].addr);
	EXPECT_TRUE(zero(fk.peers[0].addr + 4, 12));
	EXPECT_EQ(0, kcoll_comm_rank(self->c));
	EXPECT_EQ(1, kcoll_comm_size(self->c));
	EXPECT_EQ(0, kcoll_bootstrap_root_count());
}

TEST_F(fake, destroy_and_abort_args)
{
	fk.calls = 0;
	EXPECT_EQ(0, kcoll_comm_abort(self->c));
	EXPECT_EQ(KCOLL_IOC_COMM_ABORT, fk.cmd);
	EXPECT_EQ(sizeof(struct kcoll_comm_arg), fk.arg.size);
	EXPECT_EQ(KCOLL_COMM_ARG_SIZE_VER0, fk.arg.size);
	EXPECT_EQ(0, fk.arg.flags);
	EXPECT_EQ(FAKE_COMM, fk.arg.handle);
	EXPECT_EQ(0, fk.arg.reserved0);
	fk.fail = ENOENT;
	EXPECT_EQ(-ENOENT, kcoll_comm_abort(self->c));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "KCOLL_IOC_COMM_ABORT"));
	memset(&fk.arg, 0, sizeof(fk.arg));
	EXPECT_EQ(0, kcoll_comm_destroy(self->c));
	self->c = NULL;
	EXPECT_EQ(KCOLL_IOC_COMM_DESTROY, fk.cmd);
	EXPECT_EQ(sizeof(struct kcoll_comm_arg), fk.arg.size);
	EXPECT_EQ(FAKE_COMM, fk.arg.handle);
	EXPECT_EQ(3, fk.calls);
	EXPECT_EQ(0, kcoll_comm_destroy(NULL));
	EXPECT_EQ(-EINVAL, kcoll_comm_abort(NULL));
	EXPECT_EQ(-EINVAL, kcoll_comm_rank(NULL));
	EXPECT_EQ(-EINVAL, kcoll_comm_size(NULL));
}

/* A failing destroy still frees (valgrind checks). */
TEST_F(fake, destroy_error_frees)
{
	fk.fail = ENOENT;
	errno = 0;
	EXPECT_EQ(-ENOENT, kcoll_comm_destroy(self->c));
	EXPECT_EQ(ENOENT, errno);
	self->c = NULL;
}

TEST_F(fake, query)
{
	struct kcoll_comm_query q;

	memset(&q, 0xa5, sizeof(q));
	ASSERT_EQ(0, kcoll_comm_query(self->c, &q));
	EXPECT_EQ(KCOLL_IOC_COMM_QUERY, fk.cmd);
	EXPECT_EQ(sizeof(q), fk.query.size);
	EXPECT_LE(KCOLL_COMM_QUERY_SIZE_VER0, fk.query.size);
	EXPECT_EQ(0, fk.query.flags);
	EXPECT_EQ(FAKE_COMM, fk.query.handle);
	/* Everything the kernel does not set arrives zeroed. */
	EXPECT_EQ(0, fk.query.state);
	EXPECT_TRUE(zero(fk.query.reserved, sizeof(fk.query.reserved)));
	EXPECT_EQ(KCOLL_COMM_READY, q.state);
	EXPECT_EQ(0xabcdef, q.comm_id);
	EXPECT_EQ(4096, q.tx_bytes);
	EXPECT_EQ(0, q.rx_bytes);
	EXPECT_EQ(-EINVAL, kcoll_comm_query(NULL, &q));
	EXPECT_EQ(-EINVAL, kcoll_comm_query(self->c, NULL));
	fk.fail = EFAULT;
	EXPECT_EQ(-EFAULT, kcoll_comm_query(self->c, &q));
}

TEST_F(fake, send_recv_args)
{
	char buf[64];
	size_t got = 0;
	KCOLL_OPTS(kcoll_p2p_opts, opts, .timeout_ms = 250);

	ASSERT_EQ(0, kcoll_send(self->c, buf, sizeof(buf), 0, &opts));
	EXPECT_EQ(KCOLL_IOC_P2P, fk.cmd);
	EXPECT_EQ(sizeof(struct kcoll_p2p), fk.p2p.size);
	EXPECT_LE(KCOLL_P2P_SIZE_VER0, fk.p2p.size);
	EXPECT_EQ(KCOLL_P2P_SEND, fk.p2p.flags);
	EXPECT_EQ(FAKE_COMM, fk.p2p.comm);
	EXPECT_EQ(0, fk.p2p.peer);
	EXPECT_EQ((uintptr_t)buf, fk.p2p.addr);
	EXPECT_EQ(sizeof(buf), fk.p2p.len);
	EXPECT_EQ(0, fk.p2p.buf);
	EXPECT_EQ(250, fk.p2p.timeout_ms);
	EXPECT_EQ(0, fk.p2p.req);
	EXPECT_EQ(0, fk.p2p.result);
	EXPECT_TRUE(zero(fk.p2p.reserved, sizeof(fk.p2p.reserved)));

	ASSERT_EQ(0, kcoll_recv(self->c, buf, sizeof(buf), 0, &got, NULL));
	EXPECT_EQ(KCOLL_P2P_RECV, fk.p2p.flags);
	EXPECT_EQ(0, fk.p2p.timeout_ms);
	EXPECT_EQ(sizeof(buf) / 2, got);

	/* Empty messages may have no buffer. */
	EXPECT_EQ(0, kcoll_send(self->c, NULL, 0, 0, NULL));
	EXPECT_EQ(0, fk.p2p.len);

	/* Errors of the kernel come back as they are. */
	fk.fail = ECONNRESET;
	errno = 0;
	EXPECT_EQ(-ECONNRESET, kcoll_send(self->c, buf, 1, 0, NULL));
	EXPECT_EQ(ECONNRESET, errno);
}

TEST_F(fake, p2p_rejected_before_the_kernel)
{
	struct kcoll_p2p_opts small = { .sz = 4 };
	KCOLL_OPTS(kcoll_p2p_opts, bad, .flags = 1);
	struct kcoll_request req;
	char buf[8];
	int calls = fk.calls;

	EXPECT_EQ(-EINVAL, kcoll_send(self->c, buf, 8, 1, NULL));	/* peer >= nranks */
	EXPECT_EQ(-EINVAL, kcoll_send(self->c, buf, 8, -1, NULL));
	EXPECT_EQ(-EINVAL, kcoll_recv(self->c, NULL, 8, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, kcoll_send(NULL, buf, 8, 0, NULL));
	EXPECT_EQ(-EINVAL, kcoll_send(self->c, buf, 8, 0, &small));
	EXPECT_EQ(-EINVAL, kcoll_send(self->c, buf, 8, 0, &bad));
	EXPECT_EQ(-EINVAL, kcoll_isend(self->c, buf, 8, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, kcoll_irecv(self->c, buf, 8, 0, NULL, NULL));
	memset(&req, 0, sizeof(req));
	EXPECT_EQ(-EINVAL, kcoll_wait(self->c, &req, 0, NULL));	/* never posted */
	EXPECT_EQ(calls, fk.calls);
}

TEST_F(fake, nonblocking_and_wait)
{
	struct kcoll_request req;
	char buf[32];
	size_t res = 0;
	int done = -1;

	ASSERT_EQ(0, kcoll_isend(self->c, buf, sizeof(buf), 0, NULL, &req));
	EXPECT_EQ(KCOLL_P2P_SEND | KCOLL_P2P_NONBLOCK, fk.p2p.flags);
	ASSERT_EQ(0, kcoll_wait(self->c, &req, 500, &res));
	EXPECT_EQ(KCOLL_IOC_WAIT, fk.cmd);
	EXPECT_EQ(sizeof(struct kcoll_wait), fk.wait.size);
	EXPECT_LE(KCOLL_WAIT_SIZE_VER0, fk.wait.size);
	EXPECT_EQ(0, fk.wait.flags);
	EXPECT_EQ(FAKE_COMM, fk.wait.comm);
	EXPECT_EQ(500, fk.wait.timeout_ms);
	EXPECT_EQ(FAKE_REQ, fk.wait.req);
	EXPECT_EQ(0, fk.wait.reserved0);
	EXPECT_TRUE(zero(fk.wait.reserved, sizeof(fk.wait.reserved)));
	EXPECT_EQ(10, res);
	/* Consumed. */
	EXPECT_EQ(-EINVAL, kcoll_wait(self->c, &req, 0, &res));

	/* Still in flight: the request stays valid; kcoll_test says not done. */
	ASSERT_EQ(0, kcoll_irecv(self->c, buf, sizeof(buf), 0, NULL, &req));
	EXPECT_EQ(KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK, fk.p2p.flags);
	fk.fail = EAGAIN;
	EXPECT_EQ(-EAGAIN, kcoll_wait(self->c, &req, -1, &res));
	EXPECT_EQ(~0U, fk.wait.timeout_ms);
	fk.fail = EAGAIN;
	EXPECT_EQ(0, kcoll_test(self->c, &req, &done, &res));
	EXPECT_EQ(0, done);
	EXPECT_EQ(0, fk.wait.timeout_ms);
	/* Completed with an error: that error, and done. */
	fk.wait_status = -ECONNRESET;
	EXPECT_EQ(-ECONNRESET, kcoll_test(self->c, &req, &done, &res));
	EXPECT_EQ(1, done);
	EXPECT_EQ(-EINVAL, kcoll_test(self->c, &req, &done, &res));
	EXPECT_EQ(0, done);
	EXPECT_EQ(-EINVAL, kcoll_test(self->c, &req, NULL, &res));

	/* A status the uAPI does not allow is not passed on as success. */
	ASSERT_EQ(0, kcoll_isend(self->c, buf, 1, 0, NULL, &req));
	fk.wait_status = 5;
	EXPECT_EQ(-EIO, kcoll_wait(self->c, &req, 0, NULL));
}

TEST_F(fake, buffers)
{
	KCOLL_OPTS(kcoll_p2p_opts, opts, .timeout_ms = 9);
	struct kcoll_request req;
	struct kcoll_buf *b = (void *)1;
	char back[16];
	size_t got;
	int fd;

	fk.mmap_offset = 8192;
	ASSERT_EQ(0, kcoll_buf_create(self->c, 10000, &b));
	EXPECT_EQ(KCOLL_IOC_BUF_CREATE, fk.cmd);
	EXPECT_EQ(sizeof(struct kcoll_buf_create), fk.bc.size);
	EXPECT_LE(KCOLL_BUF_CREATE_SIZE_VER0, fk.bc.size);
	EXPECT_EQ(0, fk.bc.flags);
	EXPECT_EQ(FAKE_COMM, fk.bc.comm);
	EXPECT_EQ(10000, fk.bc.length);
	EXPECT_EQ(0, fk.bc.mmap_offset);
	EXPECT_TRUE(zero(fk.bc.reserved, sizeof(fk.bc.reserved)));
	EXPECT_EQ(10000, kcoll_buf_len(b));
	ASSERT_NE(NULL, kcoll_buf_ptr(b));
	EXPECT_EQ(8192, kcoll_buf_offset(b));

	/* Shared mapping of the file at the offset the "kernel" gave. */
	memcpy((char *)kcoll_buf_ptr(b) + 9984, "kcoll buf", 10);
	fd = open(self->path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(10, pread(fd, back, 10, kcoll_buf_offset(b) + 9984));
	close(fd);
	EXPECT_STREQ("kcoll buf", back);

	ASSERT_EQ(0, kcoll_send_buf(self->c, b, 100, 200, 0, &opts));
	EXPECT_EQ(KCOLL_P2P_SEND | KCOLL_P2P_BUF, fk.p2p.flags);
	EXPECT_EQ(100, fk.p2p.addr);
	EXPECT_EQ(200, fk.p2p.len);
	EXPECT_EQ(FAKE_BUF, fk.p2p.buf);
	EXPECT_EQ(9, fk.p2p.timeout_ms);
	ASSERT_EQ(0, kcoll_recv_buf(self->c, b, 0, 10000, 0, &got, NULL));
	EXPECT_EQ(KCOLL_P2P_RECV | KCOLL_P2P_BUF, fk.p2p.flags);
	EXPECT_EQ(5000, got);
	ASSERT_EQ(0, kcoll_isend_buf(self->c, b, 9999, 1, 0, NULL, &req));
	EXPECT_EQ(KCOLL_P2P_SEND | KCOLL_P2P_BUF | KCOLL_P2P_NONBLOCK, fk.p2p.flags);
	EXPECT_EQ(0, kcoll_wait(self->c, &req, 0, NULL));
	ASSERT_EQ(0, kcoll_irecv_buf(self->c, b, 10000, 0, 0, NULL, &req));
	EXPECT_EQ(KCOLL_P2P_RECV | KCOLL_P2P_BUF | KCOLL_P2P_NONBLOCK, fk.p2p.flags);
	EXPECT_EQ(0, kcoll_wait(self->c, &req, 0, NULL));

	/* Out of the buffer: refused before the kernel. */
	fk.calls = 0;
	EXPECT_EQ(-EINVAL, kcoll_send_buf(self->c, b, 9990, 11, 0, NULL));
	EXPECT_EQ(-EINVAL, kcoll_send_buf(self->c, b, 10001, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, kcoll_recv_buf(self->c, b, 1, SIZE_MAX, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, kcoll_send_buf(self->c, NULL, 0, 1, 0, NULL));
	EXPECT_EQ(-EINVAL, kcoll_isend_buf(self->c, b, 0, 1, 0, NULL, NULL));
	EXPECT_EQ(0, fk.calls);

	/* In use: -EBUSY leaves it mapped and usable; then it goes. */
	fk.fail = EBUSY;
	EXPECT_EQ(-EBUSY, kcoll_buf_destroy(b));
	((char *)kcoll_buf_ptr(b))[0] = 1;
	memset(&fk.ba, 0, sizeof(fk.ba));
	EXPECT_EQ(0, kcoll_buf_destroy(b));
	EXPECT_EQ(KCOLL_IOC_BUF_DESTROY, fk.cmd);
	EXPECT_EQ(sizeof(struct kcoll_buf_arg), fk.ba.size);
	EXPECT_EQ(KCOLL_BUF_ARG_SIZE_VER0, fk.ba.size);
	EXPECT_EQ(0, fk.ba.flags);
	EXPECT_EQ(FAKE_COMM, fk.ba.comm);
	EXPECT_EQ(FAKE_BUF, fk.ba.handle);
	EXPECT_EQ(0, kcoll_buf_destroy(NULL));
	EXPECT_EQ(NULL, kcoll_buf_ptr(NULL));
	EXPECT_EQ(0, kcoll_buf_len(NULL));
}

/*
 * mmap() may put buffers back to back, so a pointer one past a buffer's end can be the start
 * of the next one (or of plain memory): it is not in the first buffer.
 */
TEST_F(fake, buffer_lookup_bounds)
{
	struct kcoll_buf *b = NULL;
	char *p;

	fk.mmap_offset = 0;
	ASSERT_EQ(0, kcoll_buf_create(self->c, 8192, &b));
	p = kcoll_buf_ptr(b);
	ASSERT_EQ(0, kcoll_allreduce(self->c, p + 8188, p + 8192, 1, KCOLL_FP32, KCOLL_SUM,
				     NULL));
	EXPECT_EQ(KCOLL_COLL_SEND_BUF, fk.coll.flags & (KCOLL_COLL_SEND_BUF | KCOLL_COLL_RECV_BUF));
	EXPECT_EQ(8188, fk.coll.sendbuf);
	EXPECT_EQ((uintptr_t)(p + 8192), fk.coll.recvbuf);
	ASSERT_EQ(0, kcoll_allreduce(self->c, p + 8192, p, 1, KCOLL_FP32, KCOLL_SUM, NULL));
	EXPECT_EQ(KCOLL_COLL_RECV_BUF, fk.coll.flags & (KCOLL_COLL_SEND_BUF | KCOLL_COLL_RECV_BUF));
	EXPECT_EQ((uintptr_t)(p + 8192), fk.coll.sendbuf);
	EXPECT_EQ(0, fk.coll.recvbuf);
	EXPECT_EQ(0, kcoll_buf_destroy(b));
}

TEST_F(fake, buffer_errors)
{
	struct kcoll_buf *b = (void *)1;

	EXPECT_EQ(-EINVAL, kcoll_buf_create(self->c, 0, &b));
	EXPECT_EQ(NULL, b);
	EXPECT_EQ(-EINVAL, kcoll_buf_create(self->c, SIZE_MAX, &b));
	EXPECT_EQ(-EINVAL, kcoll_buf_create(NULL, 10, &b));
	EXPECT_EQ(-EINVAL, kcoll_buf_create(self->c, 10, NULL));
	fk.fail = ENOMEM;
	EXPECT_EQ(-ENOMEM, kcoll_buf_create(self->c, 4096, &b));
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "RLIMIT_MEMLOCK"));
	/* The mapping fails (offset not page aligned): the buffer is destroyed again. */
	fk.mmap_offset = 123;
	EXPECT_EQ(-EINVAL, kcoll_buf_create(self->c, 4096, &b));
	EXPECT_EQ(NULL, b);
	EXPECT_EQ(KCOLL_IOC_BUF_DESTROY, fk.cmd);
	EXPECT_EQ(FAKE_BUF, fk.ba.handle);
	EXPECT_NE(NULL, strstr(kcoll_last_error(), "mmap"));
	/* An offset mmap() cannot take: EOVERFLOW, as kcoll_buf_create(3) says. */
	fk.mmap_offset = (uint64_t)1 << 63;
	fk.calls = 0;
	EXPECT_EQ(-EOVERFLOW, kcoll_buf_create(self->c, 4096, &b));
	EXPECT_EQ(NULL, b);
	EXPECT_EQ(KCOLL_IOC_BUF_DESTROY, fk.cmd);
	EXPECT_EQ(2, fk.calls);
	/* Destroy fails for another reason: unmapped and freed all the same. */
	fk.mmap_offset = 0;
	ASSERT_EQ(0, kcoll_buf_create(self->c, 4096, &b));
	fk.fail = ENOENT;
	EXPECT_EQ(-ENOENT, kcoll_buf_destroy(b));
}

TEST_HARNESS_MAIN
