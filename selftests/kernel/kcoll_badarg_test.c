// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input, table-driven: every ioctl of /dev/kcoll field by field, and mmap() of buffers,
 * each row with the exact errno Documentation/uapi.rst promises.  Everything runs on
 * one-rank communicators (no device, no peer), so the node suite runs it on one VM.
 *
 * Adding a case is one line: a row of ioctl_rows[] (the command, up to four field patches
 * on a valid argument, the argument pointer, the size, the errno) or of mmap_rows[].
 * Values with the S_ tag are replaced at run time by the fixture's objects (its
 * communicator, buffer, memory, closed and foreign handles, peer tables, count arrays).
 *
 * What one rank cannot show (arrays inconsistent across ranks: EPROTO) is in
 * kcoll_coll_test on the cluster suites.
 */
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>

#include "kcoll_test_comm.h"
#include "kselftest_harness.h"

#define PG		4096UL
#define BUF_PAGES	4

/* Substitutions: a tag in the upper half, an index in the lower. */
#define S_TAG		0x5eb5000000000000ULL
#define S_MASK		0xffff000000000000ULL
enum {
	S_COMM, S_COMM_CLOSED, S_COMM_FOREIGN, S_BUF, S_BUF_CLOSED, S_BUF_FOREIGN,
	S_MEM, S_MEM2, S_MEM_END, S_RO, S_UNMAP, S_KERN,
	S_PEERS, S_PEERS_FAMILY, S_PEERS_ANY4, S_PEERS_ANY6, S_PEERS_JUNK, S_PEERS_SCOPE,
	S_PEERS_TAIL, S_PEERS_EDGE,
	S_A_ZERO, S_A_ONE, S_A_BIG, S_A_WRAP, S_A_MAX,
	S_REQ_DONE, S_REQ_BARRIER,
	S_NUM
};
#define S(x)		(S_TAG | (x))

enum argp { A_OK, A_NULL, A_UNMAP, A_KERN, A_RO, A_SPLIT, A_UNALIGNED };

struct patch {
	unsigned short off, len;	/* len 0: unused */
	uint64_t val;
};

struct ioctl_row {
	const char *name;
	unsigned long cmd;
	struct patch p[10];
	uint32_t size;		/* 0: the struct's size */
	int tail;		/* >0: a non-zero byte at this offset (size grows to cover it) */
	enum argp argp;
	int err;		/* -errno, or 0 */
};

#define F(type, field, v) \
	{ offsetof(struct type, field), sizeof(((struct type *)0)->field), (uint64_t)(v) }

/* The v-collectives' valid arguments (one-element arrays), to patch after. */
#define AGV	F(kcoll_coll, coll, KCOLL_ALLGATHERV), F(kcoll_coll, op, 0),		\
		F(kcoll_coll, count, 0), F(kcoll_coll, counts, S(S_A_ONE)),		\
		F(kcoll_coll, displs, S(S_A_ZERO))
#define RSV	F(kcoll_coll, coll, KCOLL_REDUCE_SCATTERV), F(kcoll_coll, count, 0),	\
		F(kcoll_coll, counts, S(S_A_ONE)), F(kcoll_coll, displs, S(S_A_ZERO))
#define ATAV	AGV, F(kcoll_coll, coll, KCOLL_ALLTOALLV), F(kcoll_coll, send_counts, S(S_A_ONE)), \
		F(kcoll_coll, send_displs, S(S_A_ZERO))

/* Shorthands: one row per line. */
#define INFO(n, e, ...)	{ n, KCOLL_IOC_GET_INFO, { __VA_ARGS__ }, .err = e }
#define CC(n, e, ...)	{ n, KCOLL_IOC_COMM_CREATE, { __VA_ARGS__ }, .err = e }
#define CD(n, e, ...)	{ n, KCOLL_IOC_COMM_DESTROY, { __VA_ARGS__ }, .err = e }
#define CA(n, e, ...)	{ n, KCOLL_IOC_COMM_ABORT, { __VA_ARGS__ }, .err = e }
#define CQ(n, e, ...)	{ n, KCOLL_IOC_COMM_QUERY, { __VA_ARGS__ }, .err = e }
#define BC(n, e, ...)	{ n, KCOLL_IOC_BUF_CREATE, { __VA_ARGS__ }, .err = e }
#define BD(n, e, ...)	{ n, KCOLL_IOC_BUF_DESTROY, { __VA_ARGS__ }, .err = e }
#define PP(n, e, ...)	{ n, KCOLL_IOC_P2P, { __VA_ARGS__ }, .err = e }
#define WT(n, e, ...)	{ n, KCOLL_IOC_WAIT, { __VA_ARGS__ }, .err = e }
#define CL(n, e, ...)	{ n, KCOLL_IOC_COLL, { __VA_ARGS__ }, .err = e }
/* The generic rows every command gets: size, tail, argument pointer. */
#define SIZE_ROWS(pfx, c, ver0, ro)						\
	{ pfx " size 0", c, .size = 1, .err = -EINVAL },			\
	{ pfx " size ver0-1", c, .size = (ver0) - 1, .err = -EINVAL },		\
	{ pfx " size 4", c, .size = 4, .err = -EINVAL },			\
	{ pfx " size PAGE_SIZE+1", c, .size = PG + 1, .err = -E2BIG },		\
	{ pfx " size ~0", c, .size = 0xffffffffu, .err = -E2BIG },		\
	{ pfx " tail byte", c, .tail = 1, .err = -E2BIG },			\
	{ pfx " tail at PAGE_SIZE-1", c, .tail = PG - 1, .err = -E2BIG },	\
	{ pfx " arg NULL", c, .argp = A_NULL, .err = -EFAULT },		\
	{ pfx " arg unmapped", c, .argp = A_UNMAP, .err = -EFAULT },		\
	{ pfx " arg kernel", c, .argp = A_KERN, .err = -EFAULT },		\
	{ pfx " arg runs into unmapped", c, .argp = A_SPLIT, .err = -EFAULT },	\
	{ pfx " arg read-only", c, .argp = A_RO, .err = ro }

/* size 1 stands for 0 (0 means "the struct's size" in a row): patched below. */
#define SIZE_ZERO	1

static const struct ioctl_row ioctl_rows[] = {
	/* KCOLL_IOC_GET_INFO */
	SIZE_ROWS("info", KCOLL_IOC_GET_INFO, KCOLL_INFO_SIZE_VER0, -EFAULT),
	INFO("info flags 1", -EINVAL, F(kcoll_info, flags, 1)),
	INFO("info flags ~0", -EINVAL, F(kcoll_info, flags, ~0u)),
	INFO("info reserved[0]", -EINVAL, F(kcoll_info, reserved[0], 1)),
	INFO("info reserved[3]", -EINVAL, F(kcoll_info, reserved[3], 1ULL << 63)),
	INFO("info output fields ignored", 0, F(kcoll_info, abi_version, 77),
	     F(kcoll_info, features, ~0ULL), F(kcoll_info, ndevices, 9)),
	{ "info larger size, zero tail", KCOLL_IOC_GET_INFO, .size = 200, .err = 0 },
	{ "info unaligned arg", KCOLL_IOC_GET_INFO, .argp = A_UNALIGNED, .err = 0 },

	/* KCOLL_IOC_COMM_CREATE (the template is a valid one-rank create) */
	SIZE_ROWS("create", KCOLL_IOC_COMM_CREATE, KCOLL_COMM_CREATE_SIZE_VER0, -EFAULT),
	/* Bits 0 and 1 choose the transport (one of them at most); the rest are unknown. */
	CC("create flags 1<<2", -EINVAL, F(kcoll_comm_create, flags, 1u << 2)),
	CC("create flags rdma|tcp", -EINVAL,
	   F(kcoll_comm_create, flags, KCOLL_COMM_TRANSPORT_RDMA | KCOLL_COMM_TRANSPORT_TCP)),
	CC("create flags 1<<31", -EINVAL, F(kcoll_comm_create, flags, 1u << 31)),
	CC("create reserved[0]", -EINVAL, F(kcoll_comm_create, reserved[0], 1)),
	CC("create reserved[1]", -EINVAL, F(kcoll_comm_create, reserved[1], 1)),
	CC("create handle in", -EINVAL, F(kcoll_comm_create, handle, 1)),
	CC("create failed_rank in", -EINVAL, F(kcoll_comm_create, failed_rank, ~0u)),
	CC("create comm_id 0", -EINVAL, F(kcoll_comm_create, comm_id, 0)),
	CC("create nranks 0", -EINVAL, F(kcoll_comm_create, nranks, 0)),
	CC("create nranks max+1", -EINVAL, F(kcoll_comm_create, nranks, KCOLL_MAX_RANKS + 1)),
	CC("create nranks ~0", -EINVAL, F(kcoll_comm_create, nranks, ~0u)),
	CC("create rank == nranks", -EINVAL, F(kcoll_comm_create, rank, 1)),
	CC("create rank ~0", -EINVAL, F(kcoll_comm_create, rank, ~0u)),
	CC("create nranks max, rank max", -EFAULT, F(kcoll_comm_create, nranks, KCOLL_MAX_RANKS),
	   F(kcoll_comm_create, rank, KCOLL_MAX_RANKS - 1),
	   F(kcoll_comm_create, peers, S(S_PEERS_EDGE))),
	CC("create nranks max, entry 1 bad", -EINVAL, F(kcoll_comm_create, nranks,
	   KCOLL_MAX_RANKS), F(kcoll_comm_create, rank, KCOLL_MAX_RANKS - 1)),
	CC("create nranks 2, table of 1", -EFAULT, F(kcoll_comm_create, nranks, 2),
	   F(kcoll_comm_create, peers, S(S_PEERS_EDGE))),
	CC("create peer_size 0", -EINVAL, F(kcoll_comm_create, peer_size, 0)),
	CC("create peer_size 23", -EINVAL, F(kcoll_comm_create, peer_size, 23)),
	CC("create peer_size max+1", -E2BIG, F(kcoll_comm_create, peer_size,
					       KCOLL_PEER_SIZE_MAX + 1)),
	CC("create peer_size ~0", -E2BIG, F(kcoll_comm_create, peer_size, ~0u)),
	CC("create peer_size 32, tail", -E2BIG, F(kcoll_comm_create, peer_size, 32),
	   F(kcoll_comm_create, peers, S(S_PEERS_TAIL))),
	CC("create peers NULL", -EFAULT, F(kcoll_comm_create, peers, 0)),
	CC("create peers unmapped", -EFAULT, F(kcoll_comm_create, peers, S(S_UNMAP))),
	CC("create peers kernel", -EFAULT, F(kcoll_comm_create, peers, S(S_KERN))),
	CC("create peers runs out", -EFAULT, F(kcoll_comm_create, peer_size, 64),
	   F(kcoll_comm_create, peers, S(S_PEERS_EDGE))),
	CC("create peer family", -EINVAL, F(kcoll_comm_create, peers, S(S_PEERS_FAMILY))),
	CC("create peer 0.0.0.0", -EINVAL, F(kcoll_comm_create, peers, S(S_PEERS_ANY4))),
	CC("create peer ::", -EINVAL, F(kcoll_comm_create, peers, S(S_PEERS_ANY6))),
	CC("create peer v4 junk", -EINVAL, F(kcoll_comm_create, peers, S(S_PEERS_JUNK))),
	CC("create peer v4 scope", -EINVAL, F(kcoll_comm_create, peers, S(S_PEERS_SCOPE))),
	CC("create V0 size, no secret", 0, F(kcoll_comm_create, size,
					    KCOLL_COMM_CREATE_SIZE_VER0)),
	CC("create peers read-only", 0, F(kcoll_comm_create, peers, S(S_RO))),

	/* KCOLL_IOC_COMM_DESTROY and ABORT (the template names the fixture's comm) */
	SIZE_ROWS("destroy", KCOLL_IOC_COMM_DESTROY, KCOLL_COMM_ARG_SIZE_VER0, -ENOENT),
	CD("destroy flags", -EINVAL, F(kcoll_comm_arg, flags, 1)),
	CD("destroy reserved0", -EINVAL, F(kcoll_comm_arg, reserved0, 1)),
	CD("destroy handle 0", -ENOENT, F(kcoll_comm_arg, handle, 0)),
	CD("destroy handle ~0", -ENOENT, F(kcoll_comm_arg, handle, ~0u)),
	CD("destroy closed", -ENOENT, F(kcoll_comm_arg, handle, S(S_COMM_CLOSED))),
	CD("destroy foreign", -ENOENT, F(kcoll_comm_arg, handle, S(S_COMM_FOREIGN))),
	CD("destroy flags+bad handle", -EINVAL, F(kcoll_comm_arg, flags, 1),
	   F(kcoll_comm_arg, handle, 0)),
	SIZE_ROWS("abort", KCOLL_IOC_COMM_ABORT, KCOLL_COMM_ARG_SIZE_VER0, -ENOENT),
	CA("abort flags", -EINVAL, F(kcoll_comm_arg, flags, 1u << 31)),
	CA("abort reserved0", -EINVAL, F(kcoll_comm_arg, reserved0, ~0u)),
	CA("abort handle 0", -ENOENT, F(kcoll_comm_arg, handle, 0)),
	CA("abort closed", -ENOENT, F(kcoll_comm_arg, handle, S(S_COMM_CLOSED))),
	CA("abort foreign", -ENOENT, F(kcoll_comm_arg, handle, S(S_COMM_FOREIGN))),

	/* KCOLL_IOC_COMM_QUERY */
	SIZE_ROWS("query", KCOLL_IOC_COMM_QUERY, KCOLL_COMM_QUERY_SIZE_VER0, -EFAULT),
	CQ("query flags", -EINVAL, F(kcoll_comm_query, flags, 2)),
	CQ("query reserved0", -EINVAL, F(kcoll_comm_query, reserved0, 1)),
	CQ("query reserved[0]", -EINVAL, F(kcoll_comm_query, reserved[0], 1)),
	CQ("query reserved[1]", -EINVAL, F(kcoll_comm_query, reserved[1], 1)),
	CQ("query handle 0", -ENOENT, F(kcoll_comm_query, handle, 0)),
	CQ("query closed", -ENOENT, F(kcoll_comm_query, handle, S(S_COMM_CLOSED))),
	CQ("query foreign", -ENOENT, F(kcoll_comm_query, handle, S(S_COMM_FOREIGN))),
	CQ("query output fields ignored", 0, F(kcoll_comm_query, state, 9),
	   F(kcoll_comm_query, tx_bytes, ~0ULL), F(kcoll_comm_query, error, -1)),
	{ "query larger size, zero tail", KCOLL_IOC_COMM_QUERY, { F(kcoll_comm_query, handle,
	  S(S_COMM)) }, .size = 300, .err = 0 },

	/* KCOLL_IOC_BUF_CREATE (the template: one page on the fixture's comm) */
	SIZE_ROWS("bufcreate", KCOLL_IOC_BUF_CREATE, KCOLL_BUF_CREATE_SIZE_VER0, -EFAULT),
	BC("bufcreate flags", -EINVAL, F(kcoll_buf_create, flags, 1)),
	BC("bufcreate handle in", -EINVAL, F(kcoll_buf_create, handle, 1)),
	BC("bufcreate mmap_offset in", -EINVAL, F(kcoll_buf_create, mmap_offset, PG)),
	BC("bufcreate reserved[0]", -EINVAL, F(kcoll_buf_create, reserved[0], 1)),
	BC("bufcreate reserved[1]", -EINVAL, F(kcoll_buf_create, reserved[1], 1)),
	BC("bufcreate length 0", -EINVAL, F(kcoll_buf_create, length, 0)),
	BC("bufcreate length max+1", -EINVAL, F(kcoll_buf_create, length, (1024ULL << 20) + 1)),
	BC("bufcreate length 2^63", -EINVAL, F(kcoll_buf_create, length, 1ULL << 63)),
	BC("bufcreate length ~0", -EINVAL, F(kcoll_buf_create, length, ~0ULL)),
	BC("bufcreate comm 0", -ENOENT, F(kcoll_buf_create, comm, 0)),
	BC("bufcreate comm closed", -ENOENT, F(kcoll_buf_create, comm, S(S_COMM_CLOSED))),
	BC("bufcreate comm foreign", -ENOENT, F(kcoll_buf_create, comm, S(S_COMM_FOREIGN))),
	BC("bufcreate length 1", 0, F(kcoll_buf_create, length, 1)),

	/* KCOLL_IOC_BUF_DESTROY (the template names a buffer that does not exist) */
	SIZE_ROWS("bufdestroy", KCOLL_IOC_BUF_DESTROY, KCOLL_BUF_ARG_SIZE_VER0, -ENOENT),
	BD("bufdestroy flags", -EINVAL, F(kcoll_buf_arg, flags, 1)),
	BD("bufdestroy handle 0", -ENOENT, F(kcoll_buf_arg, handle, 0)),
	BD("bufdestroy handle ~0", -ENOENT, F(kcoll_buf_arg, handle, ~0u)),
	BD("bufdestroy closed", -ENOENT, F(kcoll_buf_arg, handle, S(S_BUF_CLOSED))),
	BD("bufdestroy comm 0", -ENOENT, F(kcoll_buf_arg, comm, 0),
	   F(kcoll_buf_arg, handle, S(S_BUF))),
	BD("bufdestroy comm closed", -ENOENT, F(kcoll_buf_arg, comm, S(S_COMM_CLOSED)),
	   F(kcoll_buf_arg, handle, S(S_BUF))),
	BD("bufdestroy comm foreign", -ENOENT, F(kcoll_buf_arg, comm, S(S_COMM_FOREIGN)),
	   F(kcoll_buf_arg, handle, S(S_BUF_FOREIGN))),

	/* KCOLL_IOC_P2P: one rank has no peer, so the best a valid call gets is EINVAL */
	SIZE_ROWS("p2p", KCOLL_IOC_P2P, KCOLL_P2P_SIZE_VER0, -EINVAL),
	PP("p2p no direction", -EINVAL, F(kcoll_p2p, flags, 0)),
	PP("p2p both directions", -EINVAL, F(kcoll_p2p, flags, KCOLL_P2P_SEND | KCOLL_P2P_RECV)),
	PP("p2p unknown flag", -EINVAL, F(kcoll_p2p, flags, KCOLL_P2P_SEND | 1u << 4)),
	PP("p2p flag bit 31", -EINVAL, F(kcoll_p2p, flags, KCOLL_P2P_RECV | 1u << 31)),
	PP("p2p req in", -EINVAL, F(kcoll_p2p, req, 1)),
	PP("p2p result in", -EINVAL, F(kcoll_p2p, result, 1)),
	PP("p2p reserved[0]", -EINVAL, F(kcoll_p2p, reserved[0], 1)),
	PP("p2p reserved[1]", -EINVAL, F(kcoll_p2p, reserved[1], 1)),
	PP("p2p buf without flag", -EINVAL, F(kcoll_p2p, buf, S(S_BUF))),
	PP("p2p len 2^31+1", -EINVAL, F(kcoll_p2p, len, (1ULL << 31) + 1)),
	PP("p2p len ~0", -EINVAL, F(kcoll_p2p, len, ~0ULL)),
	PP("p2p peer self", -EINVAL, F(kcoll_p2p, peer, 0)),
	PP("p2p peer nranks", -EINVAL, F(kcoll_p2p, peer, 1)),
	PP("p2p peer ~0", -EINVAL, F(kcoll_p2p, peer, ~0u)),
	PP("p2p comm 0", -ENOENT, F(kcoll_p2p, comm, 0)),
	PP("p2p comm closed", -ENOENT, F(kcoll_p2p, comm, S(S_COMM_CLOSED))),
	PP("p2p comm foreign", -ENOENT, F(kcoll_p2p, comm, S(S_COMM_FOREIGN))),
	PP("p2p comm closed, bad flags", -ENOENT, F(kcoll_p2p, comm, S(S_COMM_CLOSED)),
	   F(kcoll_p2p, flags, 0)),

	/* KCOLL_IOC_WAIT (the template waits for p2p request 1, which never existed) */
	SIZE_ROWS("wait", KCOLL_IOC_WAIT, KCOLL_WAIT_SIZE_VER0, -ENOENT),
	WT("wait flags", -EINVAL, F(kcoll_wait, flags, 1)),
	WT("wait reserved0", -EINVAL, F(kcoll_wait, reserved0, 1)),
	WT("wait reserved[0]", -EINVAL, F(kcoll_wait, reserved[0], 1)),
	WT("wait reserved[1]", -EINVAL, F(kcoll_wait, reserved[1], 1)),
	WT("wait req 0", -EINVAL, F(kcoll_wait, req, 0)),
	WT("wait req 2^33", -EINVAL, F(kcoll_wait, req, 1ULL << 33)),
	WT("wait req 2^32 (low half 0)", -EINVAL, F(kcoll_wait, req, 1ULL << 32)),
	WT("wait req ~0", -EINVAL, F(kcoll_wait, req, ~0ULL)),
	WT("wait req unknown", -ENOENT, F(kcoll_wait, req, 12345)),
	WT("wait req 2^32 + 777", -EINVAL, F(kcoll_wait, req, (1ULL << 32) | 777)),
	WT("wait req consumed", -ENOENT, F(kcoll_wait, req, S(S_REQ_DONE))),
	WT("wait req on other comm", -ENOENT, F(kcoll_wait, req, S(S_REQ_BARRIER)),
	   F(kcoll_wait, comm, S(S_COMM_CLOSED))),
	WT("wait comm 0", -ENOENT, F(kcoll_wait, comm, 0), F(kcoll_wait, req, 5)),
	WT("wait output fields ignored", 0, F(kcoll_wait, req, S(S_REQ_BARRIER)),
	   F(kcoll_wait, timeout_ms, ~0u),
	   F(kcoll_wait, status, -5), F(kcoll_wait, result, 99)),

	/* KCOLL_IOC_COLL (the template: all-reduce of 4 int32 sums, plain memory) */
	SIZE_ROWS("coll", KCOLL_IOC_COLL, KCOLL_COLL_SIZE_VER0, -EFAULT),
	CL("coll unknown flag", -EINVAL, F(kcoll_coll, flags, 1u << 4)),
	CL("coll flag bit 31", -EINVAL, F(kcoll_coll, flags, 1u << 31)),
	CL("coll req in", -EINVAL, F(kcoll_coll, req, 1)),
	CL("coll algo_used in", -EINVAL, F(kcoll_coll, algo_used, 1)),
	CL("coll reserved0", -EINVAL, F(kcoll_coll, reserved0, 1)),
	CL("coll reserved[0]", -EINVAL, F(kcoll_coll, reserved[0], 1)),
	CL("coll reserved[1]", -EINVAL, F(kcoll_coll, reserved[1], 1)),
	CL("coll coll num", -EINVAL, F(kcoll_coll, coll, KCOLL_NUM_COLLECTIVES)),
	CL("coll coll 255", -EINVAL, F(kcoll_coll, coll, 255)),
	CL("coll dtype num", -EINVAL, F(kcoll_coll, dtype, KCOLL_NUM_DATATYPES)),
	CL("coll dtype 255", -EINVAL, F(kcoll_coll, dtype, 255)),
	CL("coll op num", -EINVAL, F(kcoll_coll, op, KCOLL_NUM_RED_OPS)),
	CL("coll op 255", -EINVAL, F(kcoll_coll, op, 255)),
	CL("coll AVG of int32", -EINVAL, F(kcoll_coll, op, KCOLL_AVG)),
	CL("coll AVG of uint8", -EINVAL, F(kcoll_coll, op, KCOLL_AVG),
	   F(kcoll_coll, dtype, KCOLL_UINT8)),
	CL("coll AVG of fp32", 0, F(kcoll_coll, op, KCOLL_AVG), F(kcoll_coll, dtype, KCOLL_FP32)),
	CL("coll algo num", -EINVAL, F(kcoll_coll, algo, KCOLL_NUM_ALGORITHMS)),
	CL("coll algo bruck for allreduce", -EINVAL, F(kcoll_coll, algo, KCOLL_ALG_BRUCK)),
	CL("coll op for broadcast", -EINVAL, F(kcoll_coll, coll, KCOLL_BROADCAST),
	   F(kcoll_coll, op, KCOLL_PROD)),
	CL("coll op for barrier", -EINVAL, F(kcoll_coll, coll, KCOLL_BARRIER),
	   F(kcoll_coll, count, 0), F(kcoll_coll, op, KCOLL_MAX)),
	CL("coll root for allreduce", -EINVAL, F(kcoll_coll, root, 1)),
	CL("coll root nranks", -EINVAL, F(kcoll_coll, coll, KCOLL_REDUCE), F(kcoll_coll, root, 1)),
	CL("coll root ~0", -EINVAL, F(kcoll_coll, coll, KCOLL_BROADCAST), F(kcoll_coll, op, 0),
	   F(kcoll_coll, root, ~0u)),
	CL("coll count for barrier", -EINVAL, F(kcoll_coll, coll, KCOLL_BARRIER),
	   F(kcoll_coll, op, 0)),
	CL("coll barrier", 0, F(kcoll_coll, coll, KCOLL_BARRIER), F(kcoll_coll, op, 0),
	   F(kcoll_coll, count, 0)),
	CL("coll counts for allreduce", -EINVAL, F(kcoll_coll, counts, S(S_A_ONE))),
	CL("coll displs for allreduce", -EINVAL, F(kcoll_coll, displs, S(S_A_ZERO))),
	CL("coll send_counts for allgatherv", -EINVAL, F(kcoll_coll, coll, KCOLL_ALLGATHERV),
	   F(kcoll_coll, op, 0), F(kcoll_coll, count, 0), F(kcoll_coll, send_counts, S(S_A_ONE))),
	CL("coll send_displs for allreduce", -EINVAL, F(kcoll_coll, send_displs, S(S_A_ZERO))),
	CL("coll send_handle without flag", -EINVAL, F(kcoll_coll, send_handle, S(S_BUF))),
	CL("coll recv_handle without flag", -EINVAL, F(kcoll_coll, recv_handle, S(S_BUF))),
	CL("coll comm 0", -ENOENT, F(kcoll_coll, comm, 0)),
	CL("coll comm closed", -ENOENT, F(kcoll_coll, comm, S(S_COMM_CLOSED))),
	CL("coll comm foreign", -ENOENT, F(kcoll_coll, comm, S(S_COMM_FOREIGN))),
	/* counts: 0, 1, the largest, one more, products that overflow */
	CL("coll count 0", 0, F(kcoll_coll, count, 0)),
	CL("coll count 1", 0, F(kcoll_coll, count, 1)),
	CL("coll count 0, NULL buffers", 0, F(kcoll_coll, count, 0), F(kcoll_coll, sendbuf, 0),
	   F(kcoll_coll, recvbuf, 0)),
	CL("coll count 2^26 int32 (256 MiB step)", -EFAULT, F(kcoll_coll, count, 1ULL << 26)),
	CL("coll count 2^26+1 int32 (step too big)", -EINVAL, F(kcoll_coll, count,
	   (1ULL << 26) + 1)),
	CL("coll count 2^54 int32 (2^56 B)", -EINVAL, F(kcoll_coll, count, 1ULL << 54)),
	CL("coll count 2^54+1 int32", -EOVERFLOW, F(kcoll_coll, count, (1ULL << 54) + 1)),
	CL("coll count 2^62", -EOVERFLOW, F(kcoll_coll, count, 1ULL << 62)),
	CL("coll count 2^62 int8", -EOVERFLOW, F(kcoll_coll, count, 1ULL << 62),
	   F(kcoll_coll, dtype, KCOLL_INT8)),
	CL("coll count 2^61 fp64 (wraps)", -EOVERFLOW, F(kcoll_coll, count, 1ULL << 61),
	   F(kcoll_coll, dtype, KCOLL_FP64)),
	CL("coll count 2^63 fp16 (wraps)", -EOVERFLOW, F(kcoll_coll, count, 1ULL << 63),
	   F(kcoll_coll, dtype, KCOLL_FP16)),
	CL("coll count ~0", -EOVERFLOW, F(kcoll_coll, count, ~0ULL)),
	CL("coll count ~0 bcast", -EOVERFLOW, F(kcoll_coll, coll, KCOLL_BROADCAST),
	   F(kcoll_coll, op, 0), F(kcoll_coll, count, ~0ULL)),
	/* pointers */
	CL("coll sendbuf NULL", -EFAULT, F(kcoll_coll, sendbuf, 0)),
	CL("coll recvbuf NULL", -EFAULT, F(kcoll_coll, recvbuf, 0)),
	CL("coll sendbuf unmapped", -EFAULT, F(kcoll_coll, sendbuf, S(S_UNMAP))),
	CL("coll recvbuf unmapped", -EFAULT, F(kcoll_coll, recvbuf, S(S_UNMAP))),
	CL("coll sendbuf kernel", -EFAULT, F(kcoll_coll, sendbuf, S(S_KERN))),
	CL("coll recvbuf kernel", -EFAULT, F(kcoll_coll, recvbuf, S(S_KERN))),
	CL("coll recvbuf read-only", -EFAULT, F(kcoll_coll, recvbuf, S(S_RO))),
	CL("coll sendbuf read-only", 0, F(kcoll_coll, sendbuf, S(S_RO))),
	CL("coll recvbuf runs out", -EFAULT, F(kcoll_coll, recvbuf, S(S_MEM_END)),
	   F(kcoll_coll, count, 2048)),
	CL("coll sendbuf wraps", -EFAULT, F(kcoll_coll, sendbuf, ~0ULL - 7)),
	/* zero-copy buffers */
	CL("coll send_buf closed", -ENOENT, F(kcoll_coll, flags, KCOLL_COLL_SEND_BUF),
	   F(kcoll_coll, send_handle, S(S_BUF_CLOSED)), F(kcoll_coll, sendbuf, 0)),
	CL("coll recv_buf foreign", -ENOENT, F(kcoll_coll, flags, KCOLL_COLL_RECV_BUF),
	   F(kcoll_coll, recv_handle, S(S_BUF_FOREIGN)), F(kcoll_coll, recvbuf, 0)),
	CL("coll recv_buf handle 0", -ENOENT, F(kcoll_coll, flags, KCOLL_COLL_RECV_BUF),
	   F(kcoll_coll, recvbuf, 0)),
	CL("coll send_buf beyond", -ERANGE, F(kcoll_coll, flags, KCOLL_COLL_SEND_BUF),
	   F(kcoll_coll, send_handle, S(S_BUF)), F(kcoll_coll, sendbuf, BUF_PAGES * PG - 8)),
	CL("coll recv_buf offset wraps", -ERANGE, F(kcoll_coll, flags, KCOLL_COLL_RECV_BUF),
	   F(kcoll_coll, recv_handle, S(S_BUF)), F(kcoll_coll, recvbuf, ~0ULL - 3)),
	CL("coll recv_buf whole", 0, F(kcoll_coll, flags, KCOLL_COLL_RECV_BUF),
	   F(kcoll_coll, recv_handle, S(S_BUF)), F(kcoll_coll, recvbuf, BUF_PAGES * PG - 16)),
	/* v-collectives (one rank: arrays of one element): NULL, unreadable, overflowing */
	CL("coll allgatherv", 0, AGV),
	CL("coll allgatherv counts NULL", -EINVAL, AGV, F(kcoll_coll, counts, 0)),
	CL("coll allgatherv displs NULL", -EINVAL, AGV, F(kcoll_coll, displs, 0)),
	CL("coll allgatherv count set", -EINVAL, AGV, F(kcoll_coll, count, 1)),
	CL("coll allgatherv op set", -EINVAL, AGV, F(kcoll_coll, op, KCOLL_MIN)),
	CL("coll allgatherv counts unmapped", -EFAULT, AGV, F(kcoll_coll, counts, S(S_UNMAP))),
	CL("coll allgatherv counts kernel", -EFAULT, AGV, F(kcoll_coll, counts, S(S_KERN))),
	CL("coll allgatherv displs unmapped", -EFAULT, AGV, F(kcoll_coll, displs, S(S_UNMAP))),
	CL("coll allgatherv counts 2^62", -EOVERFLOW, AGV, F(kcoll_coll, counts, S(S_A_BIG))),
	CL("coll allgatherv counts ~0", -EOVERFLOW, AGV, F(kcoll_coll, counts, S(S_A_MAX))),
	CL("coll allgatherv displs wrap", -EOVERFLOW, AGV, F(kcoll_coll, displs, S(S_A_WRAP))),
	CL("coll allgatherv counts 0, displs ~0", 0, AGV, F(kcoll_coll, counts, S(S_A_ZERO)),
	   F(kcoll_coll, displs, S(S_A_MAX))),
	CL("coll reduce_scatterv", 0, RSV),
	CL("coll reduce_scatterv counts 2^62", -EOVERFLOW, RSV, F(kcoll_coll, counts, S(S_A_BIG))),
	CL("coll reduce_scatterv counts ~0", -EOVERFLOW, RSV, F(kcoll_coll, counts, S(S_A_MAX))),
	CL("coll reduce_scatterv no op", -EINVAL, RSV, F(kcoll_coll, op, KCOLL_AVG)),
	CL("coll reduce_scatterv counts kernel", -EFAULT, RSV, F(kcoll_coll, counts, S(S_KERN))),
	CL("coll alltoallv", 0, ATAV),
	CL("coll alltoallv send_counts NULL", -EINVAL, ATAV, F(kcoll_coll, send_counts, 0)),
	CL("coll alltoallv send_displs NULL", -EINVAL, ATAV, F(kcoll_coll, send_displs, 0)),
	CL("coll alltoallv send_counts unmapped", -EFAULT, ATAV,
	   F(kcoll_coll, send_counts, S(S_UNMAP))),
	CL("coll alltoallv send_counts 2^62", -EOVERFLOW, ATAV,
	   F(kcoll_coll, send_counts, S(S_A_BIG)), F(kcoll_coll, counts, S(S_A_BIG))),
	CL("coll alltoallv send_displs wrap", -EOVERFLOW, ATAV,
	   F(kcoll_coll, send_displs, S(S_A_WRAP))),
	/* No message, no check: the own block copies the smaller count (uapi.rst) */
	CL("coll alltoallv counts disagree with self", 0, ATAV,
	   F(kcoll_coll, counts, S(S_A_ZERO))),
};

/* Unknown commands: ENOTTY whatever the argument. */
static const unsigned long bad_cmds[] = {
	_IO(KCOLL_IOC_MAGIC, 0x0a), _IO(KCOLL_IOC_MAGIC, 0xff), _IO(0xCD, 0x00),
	_IOWR(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_GET_INFO, struct kcoll_info),
	_IOW(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_COMM_CREATE, struct kcoll_comm_create),
	_IOR(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_COLL, struct kcoll_coll), 0, ~0UL,
};

/* The fixture: objects the S_ values name, on one file. */
struct env {
	int fd, fd2, rdonly;
	uint32_t comm, comm_closed, comm_foreign, buf, buf_closed, buf_foreign;
	uint64_t off, off_closed, off_foreign, off_rdonly;
	char *mem, *ro, *unmap, *edge, *edge2;
	uint64_t sub[S_NUM];
};

static int env_comm(struct env *e, int fd, uint32_t *h)
{
	struct kcoll_sockaddr me = kt_addr(kt_rank());

	static unsigned int salt;	/* every comm of the process its own id */

	return kt_comm_create(fd, kt_comm_id("kcoll_badarg", getpid() * 4096 + salt++), 0, 1,
			      &me, 10000, h, NULL);
}

static void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Peer tables: each one page before an unmapped page, so "runs out" can use the same. */
static uint64_t peers_at(struct env *e, unsigned int slot, struct kcoll_sockaddr a, size_t esz)
{
	char *p = e->mem + 8 * PG + slot * 256;

	memset(p, 0, 256);
	memcpy(p, &a, sizeof(a));
	if (esz > sizeof(a))
		p[esz - 1] = 1;
	return (uintptr_t)p;
}

/* Setup failures name their line: the fixture has many steps. */
#define ENV_FAIL(err)	(fprintf(stderr, "# env_init line %d: %d\n", __LINE__, (err)), (err))

static int env_init(struct env *e)
{
	struct kcoll_sockaddr a = kt_addr(kt_rank());
	uint64_t *arr;
	int i, ret;

	memset(e, 0, sizeof(*e));
	e->fd = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	e->fd2 = open(KCOLL_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (e->fd < 0 || e->fd2 < 0)
		return ENV_FAIL(-errno);
	/* This file: comm 1 live, comm 2 closed; buffer 1 live, buffer 2 closed. */
	ret = env_comm(e, e->fd, &e->comm);
	ret = ret ?: env_comm(e, e->fd, &e->comm_closed);
	ret = ret ?: kt_comm_destroy(e->fd, e->comm_closed);
	ret = ret ?: kt_buf_create(e->fd, e->comm, BUF_PAGES * PG, &e->buf, &e->off);
	ret = ret ?: kt_buf_create(e->fd, e->comm, PG, &e->buf_closed, &e->off_closed);
	ret = ret ?: kt_buf_destroy(e->fd, e->comm, e->buf_closed);
	/* The other file: handles this one has not (comm 3, buffer 3, map cookie 3). */
	for (i = 0; !ret && i < 3; i++)
		ret = env_comm(e, e->fd2, &e->comm_foreign);
	for (i = 0; !ret && i < 3; i++)
		ret = kt_buf_create(e->fd2, e->comm_foreign, PG, &e->buf_foreign, &e->off_foreign);
	if (ret)
		return ENV_FAIL(ret);

	e->mem = map_anon(16 * PG, PROT_READ | PROT_WRITE);
	e->ro = map_anon(PG, PROT_READ | PROT_WRITE);
	e->unmap = map_anon(PG, PROT_NONE);
	if (!e->mem || !e->ro || !e->unmap)
		return ENV_FAIL(-ENOMEM);
	munmap(e->unmap, PG);
	/* read-only memory with a valid peer entry and int32 data in it */
	memcpy(e->ro, &a, sizeof(a));
	if (mprotect(e->ro, PG, PROT_READ))
		return ENV_FAIL(-errno);
	/* mem: [0, 8) data, [8, 9) peer tables, [9, 10) PROT_NONE, [10, 11) arrays, [12, 13) PROT_NONE. */
	if (mprotect(e->mem + 9 * PG, PG, PROT_NONE))
		return ENV_FAIL(-errno);
	e->edge = e->mem + 9 * PG;
	/* [11, 12) for arguments that run into the PROT_NONE page [12, 13) */
	if (mprotect(e->mem + 12 * PG, PG, PROT_NONE))
		return ENV_FAIL(-errno);
	e->edge2 = e->mem + 12 * PG;
	e->sub[S_COMM] = e->comm;
	e->sub[S_COMM_CLOSED] = e->comm_closed;
	e->sub[S_COMM_FOREIGN] = e->comm_foreign;
	e->sub[S_BUF] = e->buf;
	e->sub[S_BUF_CLOSED] = e->buf_closed + 100;	/* buffer handles are reused: skip ahead */
	e->sub[S_BUF_FOREIGN] = e->buf_foreign;
	e->sub[S_MEM] = (uintptr_t)e->mem;
	e->sub[S_MEM2] = (uintptr_t)e->mem + 4 * PG;
	e->sub[S_MEM_END] = (uintptr_t)e->edge - 16;
	e->sub[S_RO] = (uintptr_t)e->ro;
	e->sub[S_UNMAP] = (uintptr_t)e->unmap;
	e->sub[S_KERN] = 0xffff888000000000ULL;
	e->sub[S_PEERS] = peers_at(e, 0, a, 0);
	a.family = 12345;
	e->sub[S_PEERS_FAMILY] = peers_at(e, 1, a, 0);
	a = kt_addr(kt_rank());
	memset(a.addr, 0, 4);
	e->sub[S_PEERS_ANY4] = peers_at(e, 2, a, 0);
	a.family = AF_INET6;
	e->sub[S_PEERS_ANY6] = peers_at(e, 3, a, 0);
	a = kt_addr(kt_rank());
	a.addr[7] = 1;
	e->sub[S_PEERS_JUNK] = peers_at(e, 4, a, 0);
	a = kt_addr(kt_rank());
	a.scope_id = 1;
	e->sub[S_PEERS_SCOPE] = peers_at(e, 5, a, 0);
	e->sub[S_PEERS_TAIL] = peers_at(e, 6, kt_addr(kt_rank()), 32);
	/* One valid entry right before the PROT_NONE page. */
	memcpy(e->edge - sizeof(a), &(struct kcoll_sockaddr){ 0 }, sizeof(a));
	a = kt_addr(kt_rank());
	memcpy(e->edge - sizeof(a), &a, sizeof(a));
	e->sub[S_PEERS_EDGE] = (uintptr_t)(e->edge - sizeof(a));
	/* Count arrays, one element each (one rank). */
	arr = (uint64_t *)(e->mem + 10 * PG);
	arr[0] = 0;
	arr[1] = 1;
	arr[2] = 1ULL << 62;
	arr[3] = ~0ULL - 1;
	arr[4] = ~0ULL;
	for (i = 0; i < 5; i++)
		e->sub[S_A_ZERO + i] = (uintptr_t)&arr[i];
	/* A collective request waited for (consumed), and one pending for a wait row. */
	{
		struct kcoll_coll c = {
			.size = sizeof(c), .flags = KCOLL_COLL_NONBLOCK, .comm = e->comm,
			.coll = KCOLL_BARRIER,
		};
		struct kcoll_wait w = { .size = sizeof(w), .comm = e->comm, .timeout_ms = ~0u };

		ret = kt_ioctl(e->fd, KCOLL_IOC_COLL, &c);
		if (ret)
			return ENV_FAIL(ret);
		w.req = c.req;
		ret = kt_ioctl(e->fd, KCOLL_IOC_WAIT, &w);
		if (ret)
			return ENV_FAIL(ret);
		e->sub[S_REQ_DONE] = c.req;
		c.req = 0;
		c.algo_used = 0;
		ret = kt_ioctl(e->fd, KCOLL_IOC_COLL, &c);
		if (ret)
			return ENV_FAIL(ret);
		e->sub[S_REQ_BARRIER] = c.req;
	}
	return 0;
}

static void env_fini(struct env *e)
{
	if (e->fd >= 0)
		close(e->fd);
	if (e->fd2 >= 0)
		close(e->fd2);
	if (e->rdonly > 0)
		close(e->rdonly);
	if (e->mem)
		munmap(e->mem, 16 * PG);
	if (e->ro)
		munmap(e->ro, PG);
}

static uint64_t subst(const struct env *e, uint64_t v)
{
	return (v & S_MASK) == S_TAG ? e->sub[v & ~S_MASK] : v;
}

/* The valid argument each row starts from. */
static size_t fill_template(struct env *e, unsigned long cmd, void *a, unsigned int n)
{
	switch (cmd) {
	case KCOLL_IOC_GET_INFO:
		return sizeof(struct kcoll_info);
	case KCOLL_IOC_COMM_CREATE: {
		struct kcoll_comm_create *c = a;

		c->comm_id = kt_comm_id("kcoll_badarg_row", getpid() * 4096 + n);
		c->nranks = 1;
		c->peers = e->sub[S_PEERS];
		c->peer_size = sizeof(struct kcoll_sockaddr);
		c->timeout_ms = 5000;
		kt_comm_secret(c->comm_id, c->secret);
		return sizeof(*c);
	}
	case KCOLL_IOC_COMM_DESTROY:
	case KCOLL_IOC_COMM_ABORT:
		/* the closed comm: a row that wrongly passes the checks cannot destroy */
		((struct kcoll_comm_arg *)a)->handle = e->comm_closed;
		return sizeof(struct kcoll_comm_arg);
	case KCOLL_IOC_COMM_QUERY:
		((struct kcoll_comm_query *)a)->handle = e->comm;
		return sizeof(struct kcoll_comm_query);
	case KCOLL_IOC_BUF_CREATE:
		((struct kcoll_buf_create *)a)->comm = e->comm;
		((struct kcoll_buf_create *)a)->length = PG;
		return sizeof(struct kcoll_buf_create);
	case KCOLL_IOC_BUF_DESTROY:
		((struct kcoll_buf_arg *)a)->comm = e->comm;
		((struct kcoll_buf_arg *)a)->handle = e->sub[S_BUF_CLOSED];
		return sizeof(struct kcoll_buf_arg);
	case KCOLL_IOC_P2P: {
		struct kcoll_p2p *p = a;

		p->flags = KCOLL_P2P_SEND;
		p->comm = e->comm;
		p->addr = e->sub[S_MEM];
		p->len = 64;
		p->timeout_ms = 1000;
		return sizeof(*p);
	}
	case KCOLL_IOC_WAIT:
		((struct kcoll_wait *)a)->comm = e->comm;
		((struct kcoll_wait *)a)->req = 1;
		return sizeof(struct kcoll_wait);
	case KCOLL_IOC_COLL: {
		struct kcoll_coll *c = a;

		c->comm = e->comm;
		c->coll = KCOLL_ALLREDUCE;
		c->dtype = KCOLL_INT32;
		c->op = KCOLL_SUM;
		c->count = 4;
		c->sendbuf = e->sub[S_MEM];
		c->recvbuf = e->sub[S_MEM2];
		c->timeout_ms = 10000;
		return sizeof(*c);
	}
	}
	return 0;
}

/* Run one row; returns the ioctl's result (0 or -errno). */
static int run_row(struct env *e, const struct ioctl_row *r, unsigned int n)
{
	static char page[3 * PG] __attribute__((aligned(4096)));
	char *a = page + PG;
	uint32_t size;
	size_t ksize;
	void *argp = a;
	char *ro = NULL;
	unsigned int i;
	int ret;

	memset(page, 0, sizeof(page));
	ksize = fill_template(e, r->cmd, a, n);
	for (i = 0; i < 10 && r->p[i].len; i++) {
		uint64_t v = subst(e, r->p[i].val);

		memcpy(a + r->p[i].off, &v, r->p[i].len);	/* little endian */
	}
	size = r->size == SIZE_ZERO ? 0 : r->size ? r->size : ksize;
	if (r->tail) {
		a[r->tail < (int)ksize ? ksize + r->tail : r->tail] = 1;
		size = (r->tail < (int)ksize ? ksize + r->tail : r->tail) + 1;
	}
	/* A row may patch size itself (a field at offset 0). */
	if (!(r->p[0].len && r->p[0].off == 0))
		memcpy(a, &size, sizeof(size));

	switch (r->argp) {
	case A_OK:
		break;
	case A_NULL:
		argp = NULL;
		break;
	case A_UNMAP:
		argp = e->unmap;
		break;
	case A_KERN:
		argp = (void *)(uintptr_t)e->sub[S_KERN];
		break;
	case A_SPLIT:
		/* size readable, the rest on the PROT_NONE page */
		argp = e->edge2 - 8;
		memcpy(argp, &size, sizeof(size));
		break;
	case A_UNALIGNED:
		memmove(a + 1, a, ksize);
		argp = a + 1;
		break;
	case A_RO:
		ro = map_anon(PG, PROT_READ | PROT_WRITE);
		if (!ro)
			return -ENOMEM;
		memcpy(ro, a, ksize);
		mprotect(ro, PG, PROT_READ);
		argp = ro;
		break;
	}
	ret = ioctl(e->fd, r->cmd, argp) ? -errno : 0;
	if (ro)
		munmap(ro, PG);
	return ret;
}

static const char *errname(int err)
{
	static char bufs[4][64];
	static unsigned int k;
	char *b = bufs[k++ % 4];

	if (!err)
		return "0";
	snprintf(b, sizeof(bufs[0]), "-%s", strerrorname_np(-err) ?: "?");
	return b;
}

FIXTURE(bad) {
	struct env e;
};

FIXTURE_SETUP(bad)
{
	ASSERT_EQ(0, env_init(&self->e));
}

FIXTURE_TEARDOWN(bad)
{
	env_fini(&self->e);
}

/* One test per command: a row that wrongly succeeds (a destroy, an abort) spoils only it. */
static void run_cmd(struct __test_metadata *_metadata, struct env *e, unsigned long cmd)
{
	struct kcoll_comm_query q = { .size = sizeof(q) };
	unsigned int i, n = 0, bad = 0;

	for (i = 0; i < sizeof(ioctl_rows) / sizeof(ioctl_rows[0]); i++) {
		const struct ioctl_row *r = &ioctl_rows[i];
		int ret;

		if (r->cmd != cmd)
			continue;
		n++;
		ret = run_row(e, r, i);
		if (ret != r->err) {
			bad++;
			TH_LOG("row %u \"%s\": got %s, want %s", i, r->name, errname(ret),
			       errname(r->err));
		}
	}
	TH_LOG("%u rows, %u wrong", n, bad);
	/* The fixture's comm is still there and ready (nothing a bad row did broke it). */
	q.handle = e->comm;
	EXPECT_EQ(0, kt_ioctl(e->fd, KCOLL_IOC_COMM_QUERY, &q));
	EXPECT_EQ(KCOLL_COMM_READY, q.state);
	EXPECT_EQ(0, bad);
}

TEST_F(bad, get_info) { run_cmd(_metadata, &self->e, KCOLL_IOC_GET_INFO); }
TEST_F(bad, comm_create) { run_cmd(_metadata, &self->e, KCOLL_IOC_COMM_CREATE); }
TEST_F(bad, comm_destroy) { run_cmd(_metadata, &self->e, KCOLL_IOC_COMM_DESTROY); }
TEST_F(bad, comm_abort) { run_cmd(_metadata, &self->e, KCOLL_IOC_COMM_ABORT); }
TEST_F(bad, comm_query) { run_cmd(_metadata, &self->e, KCOLL_IOC_COMM_QUERY); }
TEST_F(bad, buf_create) { run_cmd(_metadata, &self->e, KCOLL_IOC_BUF_CREATE); }
TEST_F(bad, buf_destroy) { run_cmd(_metadata, &self->e, KCOLL_IOC_BUF_DESTROY); }
TEST_F(bad, p2p) { run_cmd(_metadata, &self->e, KCOLL_IOC_P2P); }
TEST_F(bad, wait) { run_cmd(_metadata, &self->e, KCOLL_IOC_WAIT); }
TEST_F(bad, coll) { run_cmd(_metadata, &self->e, KCOLL_IOC_COLL); }

TEST_F(bad, unknown_commands)
{
	unsigned int i;
	char arg[256] = "";

	for (i = 0; i < sizeof(bad_cmds) / sizeof(bad_cmds[0]); i++) {
		EXPECT_EQ(-ENOTTY, kt_ioctl(self->e.fd, bad_cmds[i], arg))
			TH_LOG("cmd %#lx", bad_cmds[i]);
	}
}

/* Every row ran: the issue asks for at least 150 ioctl cases. */
TEST(ioctl_row_count)
{
	unsigned int n = sizeof(ioctl_rows) / sizeof(ioctl_rows[0]) +
			 sizeof(bad_cmds) / sizeof(bad_cmds[0]);

	TH_LOG("%u ioctl cases", n);
	EXPECT_LE(150, n);
}

#include "kcoll_badarg_mmap.h"

TEST_HARNESS_MAIN
