/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fake kernel shared by the test_comm_* programs: comm_fake.c defines ioctl() itself, so
 * the library (linked statically) talks to the fake for the one file descriptor fk.fd and to
 * the real system call for every other.
 */
#ifndef _COMM_FAKE_H
#define _COMM_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/libkcoll_internal.h"

#define FAKE_COMM	7
#define FAKE_BUF	3
#define FAKE_REQ	99
#define FILE_SIZE	(1 << 20)

/* The fake kernel: what it was last given, and what it answers. */
struct fake_kernel {
	int fd;				/* the file it serves; -1: none */
	int calls;
	unsigned long cmd;
	struct kcoll_comm_create create;
	struct kcoll_sockaddr peers[4];
	struct kcoll_comm_arg arg;
	struct kcoll_comm_query query;
	struct kcoll_p2p p2p;
	struct kcoll_wait wait;
	struct kcoll_buf_create bc;
	struct kcoll_buf_arg ba;
	int fail;			/* errno for the next call, then 0 */
	uint32_t failed_rank;		/* COMM_CREATE's answer when it fails */
	int wait_status;
	uint64_t mmap_offset;
	struct kcoll_coll coll;
	bool pre_locality;		/* answer as a module older than KCOLL_FEAT_LOCALITY */
	int create_sizes[4];		/* the sizes COMM_CREATE was called with */
};

extern struct fake_kernel fk;

/* All @len bytes at @p are zero. */
bool zero(const void *p, size_t len);
/* Unsets every variable the library's environment table reads. */
void clear_env(void);
/* A scratch file to stand in for /dev/kcoll; big enough to map buffers from. */
int scratch(char *path, struct kcoll_handle **h);
/* A clean environment and a fresh fake kernel behind a scratch device file. */
int fake_open(char *path, struct kcoll_handle **h);
/* A one-rank communicator on the fake kernel, bootstrapped over 127.0.0.1. */
int one_rank(struct kcoll_handle *h, const struct kcoll_comm_opts *opts,
	     struct kcoll_comm **c, uint64_t *comm_id);

#endif /* _COMM_FAKE_H */
