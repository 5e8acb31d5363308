// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fake kernel of comm_fake.h: an ioctl() that records each argument and answers as the
 * module would, plus the scratch device file and the one-rank communicator built on it.
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

struct fake_kernel fk = { .fd = -1 };

int ioctl(int fd, unsigned long cmd, ...)
{
	va_list ap;
	void *arg;
	int err;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != fk.fd)
		return syscall(SYS_ioctl, fd, cmd, arg);
	fk.calls++;
	fk.cmd = cmd;
	switch (cmd) {
	case KCOLL_IOC_COMM_CREATE:
		memcpy(&fk.create, arg, sizeof(fk.create));
		if (fk.calls <= 4)
			fk.create_sizes[fk.calls - 1] = fk.create.size;
		/* An 80-byte kernel: a larger argument with a non-zero tail is E2BIG. */
		if (fk.pre_locality && fk.create.size > KCOLL_COMM_CREATE_SIZE_VER1 &&
		    fk.create.locality) {
			errno = E2BIG;
			return -1;
		}
		if (fk.create.nranks <= 4 && fk.create.peer_size == sizeof(fk.peers[0]))
			memcpy(fk.peers, (void *)(uintptr_t)fk.create.peers,
			       fk.create.nranks * sizeof(fk.peers[0]));
		((struct kcoll_comm_create *)arg)->handle = FAKE_COMM;
		if (fk.fail)
			((struct kcoll_comm_create *)arg)->failed_rank = fk.failed_rank;
		break;
	case KCOLL_IOC_COMM_DESTROY:
	case KCOLL_IOC_COMM_ABORT:
		memcpy(&fk.arg, arg, sizeof(fk.arg));
		break;
	case KCOLL_IOC_COMM_QUERY: {
		struct kcoll_comm_query *q = arg;

		memcpy(&fk.query, arg, sizeof(fk.query));
		q->state = KCOLL_COMM_READY;
		q->rank = 0;
		q->nranks = 1;
		q->comm_id = 0xabcdef;
		q->tx_bytes = 4096;
		break;
	}
	case KCOLL_IOC_P2P: {
		struct kcoll_p2p *p = arg;

		memcpy(&fk.p2p, arg, sizeof(fk.p2p));
		if (p->flags & KCOLL_P2P_NONBLOCK)
			p->req = FAKE_REQ;
		else if (p->flags & KCOLL_P2P_RECV)
			p->result = p->len / 2;
		break;
	}
	case KCOLL_IOC_WAIT: {
		struct kcoll_wait *w = arg;

		memcpy(&fk.wait, arg, sizeof(fk.wait));
		w->status = fk.wait_status;
		w->result = 10;
		break;
	}
	case KCOLL_IOC_BUF_CREATE: {
		struct kcoll_buf_create *b = arg;

		memcpy(&fk.bc, arg, sizeof(fk.bc));
		b->handle = FAKE_BUF;
		b->mmap_offset = fk.mmap_offset;
		break;
	}
	case KCOLL_IOC_BUF_DESTROY:
		memcpy(&fk.ba, arg, sizeof(fk.ba));
		break;
	case KCOLL_IOC_COLL:
		memcpy(&fk.coll, arg, sizeof(fk.coll));
		break;
	default:
		errno = ENOTTY;
		return -1;
	}
	if (fk.fail) {
		err = fk.fail;
		fk.fail = 0;
		errno = err;
		return -1;
	}
	return 0;
}

bool zero(const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--) {
		if (*b++)
			return false;
	}
	return true;
}

void clear_env(void)
{
	static const char *const vars[] = {
		"KCOLL_RANK", "KCOLL_NRANKS", "RANK", "WORLD_SIZE", "SLURM_PROCID",
		"SLURM_NTASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "MASTER_ADDR",
		"MASTER_PORT", "KCOLL_BOOTSTRAP_ADDR", "KCOLL_BOOTSTRAP_PORT", "KCOLL_ADDR",
		"KCOLL_IFNAME", "KCOLL_PORT", "KCOLL_CONNECT_TIMEOUT_MS",
		"KCOLL_BOOTSTRAP_TIMEOUT_MS", "KCOLL_JOB_ID", "SLURM_JOB_ID",
		"TORCHELASTIC_RUN_ID", "KCOLL_TRANSPORT",
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* A scratch file to stand in for /dev/kcoll; big enough to map buffers from. */
int scratch(char *path, struct kcoll_handle **h)
{
	KCOLL_OPTS(kcoll_open_opts, opts);
	int fd, err;

	strcpy(path, "/tmp/kcoll-comm-test.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	err = ftruncate(fd, FILE_SIZE) ? -errno : 0;
	close(fd);
	if (err)
		return err;
	opts.dev_path = path;
	return kcoll_open(&opts, h);
}

/* A clean environment and a fresh fake kernel behind a scratch device file. */
int fake_open(char *path, struct kcoll_handle **h)
{
	int err;

	clear_env();
	memset(&fk, 0, sizeof(fk));
	err = scratch(path, h);
	if (!err)
		fk.fd = kcoll_fd(*h);
	return err;
}

/* A one-rank communicator on the fake kernel, bootstrapped over 127.0.0.1. */
int one_rank(struct kcoll_handle *h, const struct kcoll_comm_opts *opts,
	     struct kcoll_comm **c, uint64_t *comm_id)
{
	KCOLL_OPTS(kcoll_uid_opts, uo, .addr = "127.0.0.1", .timeout_ms = 10000);
	struct kcoll_unique_id id;
	struct kcoll_uid_info info;
	int err;

	err = kcoll_get_unique_id(&id, &uo);
	if (err)
		return err;
	kcoll_uid_decode(&id, &info);
	if (comm_id)
		*comm_id = info.comm_id;
	return kcoll_comm_init_rank(h, &id, 1, 0, opts, c);
}
