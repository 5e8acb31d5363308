/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libkcoll: userspace access to the kcoll kernel module (/dev/kcoll, /sys/kernel/kcoll).
 *
 * Conventions (the same as libbpf and liburing):
 *  - Every function that can fail returns a negative errno value; it also leaves the positive
 *    value in errno, so callers may use either.  The library never prints.
 *  - Option structs start with @sz and are declared with KCOLL_OPTS(), which zeroes them and
 *    sets @sz.  A newer caller may pass a larger struct as long as the fields this library does
 *    not know are zero (else -E2BIG); an @sz below the first published size is -EINVAL.
 *  - Exported symbols are versioned (KCOLL_0.1, ...).  A struct the library hands out is only
 *    ever extended behind a new symbol version, so old binaries keep their layout.
 */
#ifndef _LIBKCOLL_H
#define _LIBKCOLL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/kcoll.h>
#include <linux/kcoll_netlink.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KCOLL_API
#define KCOLL_API __attribute__((visibility("default")))
#endif

#define LIBKCOLL_MAJOR_VERSION	0
#define LIBKCOLL_MINOR_VERSION	7
#define LIBKCOLL_PATCH_VERSION	0

/* sysfs directory of the module; the environment variable overrides it (tests, containers). */
#define KCOLL_SYSFS_ROOT_DEFAULT	"/sys/kernel/kcoll"
#define KCOLL_SYSFS_ROOT_ENV		"KCOLL_SYSFS_ROOT"

/*
 * Declare and initialise an option struct: zero everything, padding included (the library
 * checks that bytes it does not know are zero), then set @sz and the given fields.
 *
 *	KCOLL_OPTS(kcoll_open_opts, opts, .dev_path = "/dev/kcoll");
 */
#define KCOLL_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE) {						\
			.sz = sizeof(struct TYPE),			\
			__VA_ARGS__					\
		};							\
	})

/* An open /dev/kcoll; opaque so that it can grow without breaking callers. */
struct kcoll_handle;

struct kcoll_open_opts {
	/* size of this struct, for forward/backward compatibility; set by KCOLL_OPTS() */
	size_t sz;
	/* device node to open; NULL means KCOLL_DEVICE_PATH */
	const char *dev_path;
	/* no flag is defined yet: must be 0 */
	unsigned int flags;
	size_t :0;
};

KCOLL_API const char *kcoll_version(void);

KCOLL_API int kcoll_open(const struct kcoll_open_opts *opts, struct kcoll_handle **out);
KCOLL_API void kcoll_close(struct kcoll_handle *h);
KCOLL_API int kcoll_fd(const struct kcoll_handle *h);

/* KCOLL_IOC_GET_INFO; the library zeroes @info and sets info->size itself. */
KCOLL_API int kcoll_get_info(struct kcoll_handle *h, struct kcoll_info *info);

/* Names of KCOLL_FEAT_* bit numbers and KCOLL_IOC_NR_* numbers; NULL when unknown. */
KCOLL_API const char *kcoll_feature_str(unsigned int bit);
KCOLL_API const char *kcoll_ioctl_str(unsigned int nr);

/* $KCOLL_SYSFS_ROOT if set (ignored in set-uid programs), else KCOLL_SYSFS_ROOT_DEFAULT. */
KCOLL_API const char *kcoll_sysfs_root(void);

/* An RDMA device as /sys/kernel/kcoll/devices/NAME/ describes it. */
struct kcoll_dev_entry {
	char name[64];		/* ib device name, e.g. "rxe0" (IB_DEVICE_NAME_MAX) */
	char node_type[32];	/* "RoCE", "InfiniBand", "iWARP", "unknown", ... */
	unsigned int ports;	/* number of ports */
	int allowed;		/* 1 when the devices= module parameter lets kcoll use it */
	uint64_t node_guid;	/* host byte order */
};

struct kcoll_dev_list_opts {
	size_t sz;
	/* directory holding devices/; NULL means kcoll_sysfs_root() */
	const char *sysfs_root;
	size_t :0;
};

/*
 * Snapshot of the devices kcoll tracks, sorted by name.  *devs is one allocation of *n
 * entries (NULL when there are none); release it with kcoll_dev_list_free().
 */
KCOLL_API int kcoll_dev_list(const struct kcoll_dev_list_opts *opts,
			     struct kcoll_dev_entry **devs, size_t *n);
KCOLL_API void kcoll_dev_list_free(struct kcoll_dev_entry *devs);

/* Communicators (KCOLL_0.2) ------------------------------------------------------------- */

/*
 * Error messages: the bootstrap and communicator functions record a human-readable reason for
 * their last failure in a thread-local string (e.g. which ranks never joined, which host:port
 * could not be reached).  "" when the calling thread's last libkcoll call recorded nothing.
 * The string stays valid until the calling thread's next libkcoll call.
 */
KCOLL_API const char *kcoll_last_error(void);

/* Defaults of the bootstrap; see libkcoll(7) for the environment variables. */
#define KCOLL_BOOTSTRAP_TIMEOUT_MS_DEFAULT	30000
/* Env init: root port when neither KCOLL_BOOTSTRAP_PORT nor MASTER_PORT is set. */
#define KCOLL_BOOTSTRAP_PORT_DEFAULT		29600

/*
 * What one rank hands the others out of band (MPI_Bcast, a file, a key-value store) so that
 * they find the bootstrap root: a random communicator id and the root's TCP address, in a
 * versioned, byte-order independent encoding with a checksum.  Copy it as plain bytes.
 */
#define KCOLL_UNIQUE_ID_BYTES	128
struct kcoll_unique_id {
	unsigned char internal[KCOLL_UNIQUE_ID_BYTES];
};

struct kcoll_uid_opts {
	size_t sz;
	/*
	 * Address the root listens on and records in the id: IP literal or host name.  NULL:
	 * $KCOLL_BOOTSTRAP_ADDR, else the first IPv4 (then IPv6) address of an interface that is
	 * up and not loopback, else 127.0.0.1.
	 */
	const char *addr;
	/* TCP port, 1-65535; 0: $KCOLL_BOOTSTRAP_PORT, else an ephemeral port */
	unsigned int port;
	/*
	 * The root gives up (and its thread exits) when no rank has joined within this long of
	 * kcoll_get_unique_id(), or the rendezvous has not completed within this long of the
	 * first rank joining.  0: $KCOLL_BOOTSTRAP_TIMEOUT_MS, else 30000.
	 */
	unsigned int timeout_ms;
	/* no flag is defined yet: must be 0 */
	unsigned int flags;
	size_t :0;
};

/*
 * Draw a new communicator id and make the calling process its bootstrap root: a background
 * thread listens on TCP and serves exactly one rendezvous for this id.
 */
KCOLL_API int kcoll_get_unique_id(struct kcoll_unique_id *id, const struct kcoll_uid_opts *opts);

/* A communicator: opaque. */
struct kcoll_comm;

struct kcoll_comm_opts {
	size_t sz;
	/* no flag is defined yet: must be 0 */
	unsigned int flags;
	/*
	 * How long to keep trying to reach the root, and how long the root (env init, rank 0)
	 * waits for every rank.  0: $KCOLL_BOOTSTRAP_TIMEOUT_MS, else 30000.
	 */
	unsigned int bootstrap_timeout_ms;
	/*
	 * timeout_ms of KCOLL_IOC_COMM_CREATE: how long the kernel waits for the RDMA connections.
	 * 0: $KCOLL_CONNECT_TIMEOUT_MS, else 0 (the module's default).
	 */
	unsigned int connect_timeout_ms;
	/* rdma_cm port this rank advertises; 0: $KCOLL_PORT, else 0 (module listen_port) */
	unsigned int port;
	/*
	 * IP literal this rank advertises (its RDMA interface).  NULL: $KCOLL_ADDR, else the
	 * first IPv4 address of @ifname / $KCOLL_IFNAME, else the local address of its TCP
	 * connection to the bootstrap root.  @ifname may list several interfaces, "eth0,eth1",
	 * one a rail: the rank takes rail (local rank mod rails) (libkcoll(7), Rails).
	 */
	const char *addr;
	const char *ifname;
	/*
	 * Transport of this communicator: "auto", "rdma" or "tcp".  NULL: $KCOLL_TRANSPORT,
	 * else the module's transport setting (auto: RDMA where the rank's address has an RDMA
	 * device, else kernel TCP).
	 */
	const char *transport;
	size_t :0;
};

/*
 * Join communicator @id as @rank of @nranks: TCP rendezvous with the root named in @id, then
 * KCOLL_IOC_COMM_CREATE on @h with the complete peer table.  Collective: every rank calls it.
 * @h must outlive the communicator.
 */
KCOLL_API int kcoll_comm_init_rank(struct kcoll_handle *h, const struct kcoll_unique_id *id,
				   int nranks, int rank, const struct kcoll_comm_opts *opts,
				   struct kcoll_comm **out);

/*
 * The same with rank, size and root taken from the environment (KCOLL_RANK/KCOLL_NRANKS,
 * torchrun, Slurm, Open MPI); rank 0 is the root.  See libkcoll(7).
 */
KCOLL_API int kcoll_comm_init_env(struct kcoll_handle *h, const struct kcoll_comm_opts *opts,
				  struct kcoll_comm **out);

/* KCOLL_IOC_COMM_DESTROY, then free @c (even when the ioctl fails); NULL is a no-op. */
KCOLL_API int kcoll_comm_destroy(struct kcoll_comm *c);
/* KCOLL_IOC_COMM_ABORT: fail every pending operation; @c must still be destroyed. */
KCOLL_API int kcoll_comm_abort(struct kcoll_comm *c);
KCOLL_API int kcoll_comm_rank(const struct kcoll_comm *c);
KCOLL_API int kcoll_comm_size(const struct kcoll_comm *c);
/* KCOLL_IOC_COMM_QUERY; the library zeroes @q and sets its size and handle itself. */
KCOLL_API int kcoll_comm_query(struct kcoll_comm *c, struct kcoll_comm_query *q);
/*
 * The communicator id every rank of @c shares (KCOLL_0.4), as kcoll_nl_comm_abort(),
 * kcoll_nl_comm_get() and sysfs name it; no system call.  0 (errno EINVAL) for a NULL @c:
 * no communicator has id 0.
 */
KCOLL_API uint64_t kcoll_comm_id(const struct kcoll_comm *c);

struct kcoll_p2p_opts {
	size_t sz;
	/* blocking calls: give up after this long; 0: the module's op_timeout_ms */
	unsigned int timeout_ms;
	/* no flag is defined yet: must be 0 */
	unsigned int flags;
	size_t :0;
};

/*
 * A non-blocking operation in flight, filled by kcoll_isend() and friends, completed by
 * kcoll_wait() or kcoll_test().  Caller-allocated; treat the fields as private.
 */
struct kcoll_request {
	uint64_t id;
	uint32_t comm;
	uint32_t state;
};

/* Point-to-point on plain user memory.  Messages between two ranks match in posting order. */
KCOLL_API int kcoll_send(struct kcoll_comm *c, const void *buf, size_t len, int peer,
			 const struct kcoll_p2p_opts *opts);
KCOLL_API int kcoll_recv(struct kcoll_comm *c, void *buf, size_t len, int peer,
			 size_t *received, const struct kcoll_p2p_opts *opts);
KCOLL_API int kcoll_isend(struct kcoll_comm *c, const void *buf, size_t len, int peer,
			  const struct kcoll_p2p_opts *opts, struct kcoll_request *req);
KCOLL_API int kcoll_irecv(struct kcoll_comm *c, void *buf, size_t len, int peer,
			  const struct kcoll_p2p_opts *opts, struct kcoll_request *req);

/*
 * Wait up to @timeout_ms (0: just test; negative: no limit but the module's) for @req.
 * 0 when it completed successfully (*result: bytes moved), its negative errno when it failed,
 * -EAGAIN when it is still in flight (@req stays valid).
 */
KCOLL_API int kcoll_wait(struct kcoll_comm *c, struct kcoll_request *req, int timeout_ms,
			 size_t *result);
/* kcoll_wait(c, req, 0, result), with *done = 0 instead of -EAGAIN while in flight. */
KCOLL_API int kcoll_test(struct kcoll_comm *c, struct kcoll_request *req, int *done,
			 size_t *result);

/* A zero-copy buffer of a communicator, mapped into this process: opaque. */
struct kcoll_buf;

/* Collective: every rank creates its buffers in the same order and with the same @len. */
KCOLL_API int kcoll_buf_create(struct kcoll_comm *c, size_t len, struct kcoll_buf **out);
KCOLL_API void *kcoll_buf_ptr(const struct kcoll_buf *b);
KCOLL_API size_t kcoll_buf_len(const struct kcoll_buf *b);
/*
 * The offset at which mmap() of the communicator's file (kcoll_fd()) maps @b, as
 * KCOLL_IOC_BUF_CREATE returned it (KCOLL_0.4): never negative; -EINVAL for a NULL @b.
 */
KCOLL_API int64_t kcoll_buf_offset(const struct kcoll_buf *b);
/* munmap and KCOLL_IOC_BUF_DESTROY; NULL is a no-op.  -EBUSY leaves @b intact. */
KCOLL_API int kcoll_buf_destroy(struct kcoll_buf *b);

/* Point-to-point on [@offset, @offset + @len) of buffer @b (KCOLL_P2P_BUF: no pinning). */
KCOLL_API int kcoll_send_buf(struct kcoll_comm *c, struct kcoll_buf *b, size_t offset,
			     size_t len, int peer, const struct kcoll_p2p_opts *opts);
KCOLL_API int kcoll_recv_buf(struct kcoll_comm *c, struct kcoll_buf *b, size_t offset,
			     size_t len, int peer, size_t *received,
			     const struct kcoll_p2p_opts *opts);
KCOLL_API int kcoll_isend_buf(struct kcoll_comm *c, struct kcoll_buf *b, size_t offset,
			      size_t len, int peer, const struct kcoll_p2p_opts *opts,
			      struct kcoll_request *req);
KCOLL_API int kcoll_irecv_buf(struct kcoll_comm *c, struct kcoll_buf *b, size_t offset,
			      size_t len, int peer, const struct kcoll_p2p_opts *opts,
			      struct kcoll_request *req);

/*
 * Communicators on this node (KCOLL_0.2), as /sys/kernel/kcoll/comms/NAME/ describes them:
 * every process's, not only the caller's.  NAME is <comm_id>-<rank>, with -ns<inode> added
 * for a communicator of a network namespace other than the initial one.
 */
struct kcoll_comm_entry {
	char name[64];			/* the directory name, e.g. "908c115900303fc2-0" */
	uint64_t comm_id;		/* from the name */
	uint32_t rank, nranks;
	char state[16];			/* "connecting", "ready", "error", "aborted", ... */
	int32_t error;			/* sticky error: negative errno, 0 while none */
	uint32_t owner_pid;		/* creator, as seen from the initial PID namespace */
	uint32_t peers_connected;	/* connections to peer ranks up right now */
	uint64_t tx_bytes, rx_bytes;	/* completed point-to-point transfers */
	uint64_t tx_ops, rx_ops;
};

struct kcoll_comm_list_opts {
	size_t sz;
	/* directory holding comms/; NULL means kcoll_sysfs_root() */
	const char *sysfs_root;
	size_t :0;
};

/*
 * Snapshot of the communicators on this node, sorted by comm_id, then rank, then name.
 * *comms is one allocation of *n entries (NULL when there are none); release it with
 * kcoll_comm_list_free().
 */
KCOLL_API int kcoll_comm_list(const struct kcoll_comm_list_opts *opts,
			      struct kcoll_comm_entry **comms, size_t *n);
KCOLL_API void kcoll_comm_list_free(struct kcoll_comm_entry *comms);

/* Collectives (KCOLL_0.3) ----------------------------------------------------------------- */

/*
 * Types, operators and algorithms are the uAPI's: enum kcoll_datatype (KCOLL_INT8 ...
 * KCOLL_FP64), enum kcoll_red_op (KCOLL_SUM, KCOLL_PROD, KCOLL_MIN, KCOLL_MAX, KCOLL_AVG;
 * AVG for floating point only) and enum kcoll_algorithm (KCOLL_ALG_AUTO ...).
 *
 * Buffers are plain user memory or memory of a kcoll_buf of the same communicator: a pointer
 * that lies inside a buffer's mapping (kcoll_buf_ptr() + offset) is recognised by the library
 * and passed as a zero-copy buffer region (no pinning, no registration per call).
 *
 * In place, as in NCCL: sendbuf == recvbuf (BROADCAST, REDUCE, ALLREDUCE, ALLTOALL(V) and, at
 * the root, SCATTER: sendbuf == recvbuf means the root's block stays where it is); ALLGATHER
 * with sendbuf == recvbuf + rank * count; GATHER at the root with sendbuf == recvbuf + root *
 * count; REDUCE_SCATTER with recvbuf == sendbuf + rank * count; ALLGATHERV with sendbuf ==
 * recvbuf + displs[rank]; REDUCE_SCATTERV with recvbuf == sendbuf + displs[rank].
 *
 * Every rank makes the same sequence of collective calls with the same arguments (except the
 * buffers, and ALLTOALLV's arrays); a mismatch fails the call with -EPROTO rather than hang.
 * Counts are elements of the datatype.
 */
struct kcoll_coll_opts {
	size_t sz;
	/* no flag is defined yet: must be 0 */
	unsigned int flags;
	/* enum kcoll_algorithm: KCOLL_ALG_AUTO (0) follows the module's configuration */
	unsigned int algo;
	/* blocking calls: give up after this long (fails the communicator); 0: no limit */
	unsigned int timeout_ms;
	/* when not NULL the call is non-blocking: it returns once submitted and fills *req */
	struct kcoll_request *req;
	/* when not NULL, set to the algorithm that runs */
	unsigned int *algo_used;
	size_t :0;
};

KCOLL_API int kcoll_broadcast(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			      size_t count, int dtype, int root,
			      const struct kcoll_coll_opts *opts);
/* sendbuf: nranks * count at the root (ignored elsewhere); recvbuf: count. */
KCOLL_API int kcoll_scatter(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			    size_t count, int dtype, int root, const struct kcoll_coll_opts *opts);
/* sendbuf: count; recvbuf: nranks * count at the root (ignored elsewhere). */
KCOLL_API int kcoll_gather(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			   size_t count, int dtype, int root, const struct kcoll_coll_opts *opts);
KCOLL_API int kcoll_reduce(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			   size_t count, int dtype, int op, int root,
			   const struct kcoll_coll_opts *opts);
KCOLL_API int kcoll_allreduce(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			      size_t count, int dtype, int op, const struct kcoll_coll_opts *opts);
/* count: elements each rank contributes; recvbuf: nranks * count. */
KCOLL_API int kcoll_allgather(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			      size_t count, int dtype, const struct kcoll_coll_opts *opts);
/* count: elements each rank receives; sendbuf: nranks * count. */
KCOLL_API int kcoll_reduce_scatter(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
				   size_t count, int dtype, int op,
				   const struct kcoll_coll_opts *opts);
/* count: elements to (and from) each rank; both buffers nranks * count. */
KCOLL_API int kcoll_alltoall(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			     size_t count, int dtype, const struct kcoll_coll_opts *opts);
KCOLL_API int kcoll_barrier(struct kcoll_comm *c, const struct kcoll_coll_opts *opts);
/* counts[j], displs[j]: rank j's block in recvbuf (identical on every rank). */
KCOLL_API int kcoll_allgatherv(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			       const size_t *counts, const size_t *displs, int dtype,
			       const struct kcoll_coll_opts *opts);
/* counts[j], displs[j]: the block of sendbuf reduced onto rank j (identical on every rank). */
KCOLL_API int kcoll_reduce_scatterv(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
				    const size_t *counts, const size_t *displs, int dtype,
				    int op, const struct kcoll_coll_opts *opts);
/* This rank's own arrays, as in MPI_Alltoallv. */
KCOLL_API int kcoll_alltoallv(struct kcoll_comm *c, const void *sendbuf,
			      const size_t *send_counts, const size_t *send_displs,
			      void *recvbuf, const size_t *recv_counts,
			      const size_t *recv_displs, int dtype,
			      const struct kcoll_coll_opts *opts);

/*
 * Groups (KCOLL_0.5), as NCCL's ncclGroupStart/End: between kcoll_group_start() and
 * kcoll_group_end() the calling thread's kcoll_allreduce() (blocking form only: no @req, no
 * @algo_used) and non-blocking point-to-point calls (kcoll_isend(), kcoll_irecv() and their
 * _buf forms) are recorded, not run; every other call that submits work fails with -EINVAL.
 * The outermost kcoll_group_end() posts the point-to-point requests, runs each run of
 * consecutive all-reduces of one communicator, datatype, operator and algorithm as ONE
 * kernel call on a packed buffer, waits for everything, and returns 0 or the first error
 * (the whole group fails; kcoll_last_error() names the call).  Buffers must stay valid until
 * kcoll_group_end() returns; requests of grouped calls are complete (idle) after it.
 * Groups nest (only the outermost end runs them); the state is per thread.
 */
KCOLL_API int kcoll_group_start(void);
KCOLL_API int kcoll_group_end(void);

/* Communicator split (KCOLL_0.6) ---------------------------------------------------------- */

/* The color of a rank that joins no child: kcoll_comm_split() gives it NULL. */
#define KCOLL_SPLIT_UNDEFINED	(-1)

struct kcoll_split_opts {
	size_t sz;
	/* no flag is defined yet: must be 0 */
	unsigned int flags;
	/*
	 * The exchange over the parent (an all-gather, then point-to-point) gives up after this
	 * long; 0: no limit for the all-gather, the module's op_timeout_ms for the rest.
	 */
	unsigned int timeout_ms;
	/* timeout_ms of the child's KCOLL_IOC_COMM_CREATE; 0: $KCOLL_CONNECT_TIMEOUT_MS, else 0 */
	unsigned int connect_timeout_ms;
	size_t :0;
};

/*
 * Split @parent as MPI_Comm_split/ncclCommSplit do; collective over @parent (every rank calls
 * it, in the same order relative to its other collectives, with no point-to-point of
 * @parent in flight).  The ranks of one @color (>= 0) form a child, ranked by @key, then by
 * parent rank.  No new TCP rendezvous: the (color, key) pairs are all-gathered over @parent,
 * the child's rank 0 draws its communicator id and secret and sends them to the child's
 * members only (point-to-point over @parent), and the child connects to the addresses the
 * parent's ranks advertised.  *@child is NULL for KCOLL_SPLIT_UNDEFINED.  The child lives on
 * @parent's handle and outlives @parent.
 */
KCOLL_API int kcoll_comm_split(struct kcoll_comm *parent, int color, int key,
			       const struct kcoll_split_opts *opts, struct kcoll_comm **child);

/* Names ("fp32", "sum", "allreduce", "ring") and their inverses (-EINVAL when unknown). */
KCOLL_API const char *kcoll_datatype_str(int dtype);
KCOLL_API const char *kcoll_red_op_str(int op);
KCOLL_API const char *kcoll_collective_str(int coll);
KCOLL_API const char *kcoll_algorithm_str(int algo);
KCOLL_API int kcoll_datatype_from_str(const char *name);
KCOLL_API int kcoll_red_op_from_str(const char *name);
KCOLL_API int kcoll_collective_from_str(const char *name);
KCOLL_API int kcoll_algorithm_from_str(const char *name);
/* The transport setting, KCOLL_CONFIG_TRANSPORT_* ("auto", "rdma", "tcp"; KCOLL_0.7). */
KCOLL_API const char *kcoll_transport_str(int transport);
KCOLL_API int kcoll_transport_from_str(const char *name);
/* Bytes per element; 0 for an unknown type. */
KCOLL_API size_t kcoll_datatype_size(int dtype);

/* Control plane: the "kcoll" generic netlink family (KCOLL_0.3) ------------------------- */

/*
 * A netlink socket bound to the kcoll family (Documentation/netlink/specs/kcoll.yaml).
 * Every call below returns 0 or a negative errno (also in errno); when the kernel explained
 * a refusal (extended ACK), kcoll_last_error() holds its message.  -ENOENT from
 * kcoll_nl_open(): the family is not registered (module not loaded).  Not thread-safe: one
 * handle per thread.
 */
struct kcoll_nl;

KCOLL_API int kcoll_nl_open(struct kcoll_nl **nl);
KCOLL_API void kcoll_nl_close(struct kcoll_nl *nl);

struct kcoll_nl_gid {
	uint32_t index;
	uint8_t gid[16];
	uint8_t type;		/* enum kcoll_gid_type */
	char netdev[16];	/* "" if none */
};

struct kcoll_nl_port {
	uint32_t index;
	uint8_t state;		/* enum kcoll_port_state */
	uint32_t active_mtu;
	size_t ngids;
	struct kcoll_nl_gid *gids;
};

struct kcoll_nl_dev {
	char name[64];
	uint8_t node_type;	/* enum kcoll_node_type */
	uint64_t node_guid;
	int allowed;
	int32_t tos;		/* -1: the global tos */
	int32_t gid_index;	/* GID index its connections must use, -1: no selection */
	uint32_t ncomms;
	size_t nports;
	struct kcoll_nl_port *ports;
};

/* Every device (name NULL) or one; free with kcoll_nl_dev_list_free(). */
KCOLL_API int kcoll_nl_dev_list(struct kcoll_nl *nl, const char *name,
				struct kcoll_nl_dev **devs, size_t *n);
KCOLL_API void kcoll_nl_dev_list_free(struct kcoll_nl_dev *devs, size_t n);
/* allowed: 0, 1 or -1 (unchanged); set_tos: whether to set tos (-1 to 255). */
KCOLL_API int kcoll_nl_dev_set(struct kcoll_nl *nl, const char *name, int allowed,
			       int set_tos, int32_t tos);
/* The GID index every connection on the device must use as source GID, -1: no selection. */
KCOLL_API int kcoll_nl_dev_set_gid(struct kcoll_nl *nl, const char *name, int32_t gid_index);

/* A reduction engine and the (dtype, op) pairs it declares; active: it serves the pair now. */
struct kcoll_nl_engine_pair {
	uint32_t dtype;		/* enum kcoll_datatype */
	uint32_t op;		/* enum kcoll_red_op */
	int active;
};

struct kcoll_nl_engine {
	char name[32];
	uint32_t priority;	/* order tried: 0 first; the built-in engine comes last */
	size_t npairs;
	struct kcoll_nl_engine_pair *pairs;
};

/* Every engine, the built-in one first; free with kcoll_nl_engine_list_free(). */
KCOLL_API int kcoll_nl_engine_list(struct kcoll_nl *nl, struct kcoll_nl_engine **engines,
				   size_t *n);
KCOLL_API void kcoll_nl_engine_list_free(struct kcoll_nl_engine *engines, size_t n);
/* Make engine @name the one that serves (@dtype, @op).  Admin (CAP_NET_ADMIN). */
KCOLL_API int kcoll_nl_engine_set(struct kcoll_nl *nl, const char *name, int dtype, int op);

struct kcoll_nl_peer {
	uint32_t rank;
	uint8_t state;		/* enum kcoll_peer_state */
	uint8_t ready;
	uint8_t left;
	int32_t last_err;
	uint32_t pending_sends;
	uint32_t pending_recvs;
	uint32_t idle_ms;
	int32_t sgid_index;	/* source GID index of the connection, -1: not known */
	int gid_type;		/* enum kcoll_gid_type of that entry, -1: not known */
	/* its host, NIC and leaf group (see struct kcoll_nl_comm), UINT32_MAX: not known */
	uint32_t host, nic, leaf;
	char transport[8];	/* rdma, tcp or loop; empty: not known (older module) */
};

struct kcoll_nl_op {
	uint8_t type;		/* enum kcoll_op_type; KCOLL_OP_TYPE_NONE: idle */
	uint64_t id;
	uint32_t coll;
	uint64_t bytes;
	uint32_t step;
	uint32_t nsteps;
	uint32_t wait_peer;	/* UINT32_MAX: unknown */
};

struct kcoll_nl_comm {
	uint64_t comm_id;
	uint32_t rank;
	uint32_t nranks;
	uint32_t owner_pid;
	uint32_t owner_uid;
	uint8_t state;		/* KCOLL_COMM_* */
	int32_t error;
	uint32_t failed_rank;	/* UINT32_MAX: none */
	char dev_name[64];
	uint32_t netns;
	uint64_t tx_bytes, rx_bytes, tx_ops, rx_ops;
	uint32_t peers_up;
	int peers_truncated;
	struct kcoll_nl_op op;
	size_t npeers;
	struct kcoll_nl_peer *peers;
	/*
	 * Locality: this rank's index among the ranks of its host and their number, the
	 * number of host groups (without a locality table: 0, 1 and nranks).  With one
	 * (@loc_known): NIC and leaf groups, and this rank's host, NIC and leaf group.
	 */
	uint32_t local_rank, local_size, hosts;
	int loc_known;
	uint32_t nics, leaves, host, nic, leaf;
};

/* Every communicator the caller may see; free with kcoll_nl_comm_list_free(). */
KCOLL_API int kcoll_nl_comm_list(struct kcoll_nl *nl, struct kcoll_nl_comm **comms, size_t *n);
/* One communicator of the caller's network namespace, with all its peers. */
KCOLL_API int kcoll_nl_comm_get(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank,
				struct kcoll_nl_comm **comm);
KCOLL_API void kcoll_nl_comm_list_free(struct kcoll_nl_comm *comms, size_t n);
/* Admin abort (CAP_NET_ADMIN). */
KCOLL_API int kcoll_nl_comm_abort(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank);

/* kcoll_nl_config.mask bits: which fields are valid (get) or to be set (set). */
#define KCOLL_NL_CFG_LISTEN_PORT	(1u << 0)
#define KCOLL_NL_CFG_CONNECT_TIMEOUT	(1u << 1)
#define KCOLL_NL_CFG_OP_TIMEOUT		(1u << 2)
#define KCOLL_NL_CFG_TOS		(1u << 3)
#define KCOLL_NL_CFG_CHUNK_BYTES	(1u << 4)
#define KCOLL_NL_CFG_SMALL_BYTES	(1u << 5)
#define KCOLL_NL_CFG_MEDIUM_BYTES	(1u << 6)
#define KCOLL_NL_CFG_TREE_RANKS		(1u << 7)
#define KCOLL_NL_CFG_ALGO		(1u << 8)	/* the entries of algo_mask */
/* KCOLL_0.7: only in struct kcoll_nl_config_opts */
#define KCOLL_NL_CFG_TRANSPORT		(1u << 9)
#define KCOLL_NL_CFG_TCP_PORT		(1u << 10)

#define KCOLL_NL_MAX_COLLECTIVES	32

struct kcoll_nl_config {
	uint32_t mask;
	uint16_t listen_port;
	uint32_t connect_timeout_ms;
	uint32_t op_timeout_ms;
	int32_t tos;
	uint32_t chunk_bytes;
	uint32_t small_bytes;
	uint32_t medium_bytes;
	uint32_t tree_ranks;
	uint32_t algo_mask;	/* bit c: algo[c] is valid / to be set */
	uint32_t algo[KCOLL_NL_MAX_COLLECTIVES];
};

/*
 * The layout of libkcoll 0.3, frozen (it has no @sz): kcoll_nl_config_get() and _set() are
 * kcoll_nl_config_get_opts() and _set_opts() on the fields it has.
 */
KCOLL_API int kcoll_nl_config_get(struct kcoll_nl *nl, struct kcoll_nl_config *cfg);
KCOLL_API int kcoll_nl_config_set(struct kcoll_nl *nl, const struct kcoll_nl_config *cfg);

/*
 * The configuration, every setting (KCOLL_0.7).  Declare with KCOLL_OPTS(); settings added
 * later are appended, with a bit of their own in @mask.
 */
struct kcoll_nl_config_opts {
	size_t sz;
	uint32_t mask;		/* KCOLL_NL_CFG_*: valid (get) or to be set (set) */
	uint16_t listen_port;
	uint32_t connect_timeout_ms;
	uint32_t op_timeout_ms;
	int32_t tos;
	uint32_t chunk_bytes;
	uint32_t small_bytes;
	uint32_t medium_bytes;
	uint32_t tree_ranks;
	uint32_t algo_mask;	/* bit c: algo[c] is valid / to be set */
	uint32_t algo[KCOLL_NL_MAX_COLLECTIVES];
	uint8_t transport;	/* KCOLL_CONFIG_TRANSPORT_*: kcoll_transport_str() */
	uint16_t tcp_port;
	size_t :0;
};

KCOLL_API int kcoll_nl_config_get_opts(struct kcoll_nl *nl, struct kcoll_nl_config_opts *opts);
KCOLL_API int kcoll_nl_config_set_opts(struct kcoll_nl *nl,
				       const struct kcoll_nl_config_opts *opts);

/* One message of the events group; the has_* flags say which fields it carried. */
struct kcoll_nl_event {
	uint8_t cmd;		/* KCOLL_CMD_*_NTF */
	uint64_t comm_id;
	uint32_t rank, nranks, netns, owner_pid;
	uint8_t state;
	int32_t error;
	uint32_t failed_rank;	/* UINT32_MAX: none */
	uint32_t peer_rank;	/* UINT32_MAX: none */
	char dev_name[64];
	uint8_t node_type;
	int allowed;
	char engine[32];
	uint32_t priority;
};

/* Join the events group; then poll kcoll_nl_fd() and read with kcoll_nl_event_next(). */
KCOLL_API int kcoll_nl_monitor(struct kcoll_nl *nl);
KCOLL_API int kcoll_nl_fd(struct kcoll_nl *nl);
/*
 * The next event: waits up to timeout_ms (-1: forever, 0: no wait); -EAGAIN when none
 * came; -ENOBUFS when the socket overflowed (events were lost; go on reading).
 */
KCOLL_API int kcoll_nl_event_next(struct kcoll_nl *nl, struct kcoll_nl_event *ev,
				  int timeout_ms);
/* "comm-created", "peer-lost", ... for a KCOLL_CMD_*_NTF value; NULL if unknown. */
KCOLL_API const char *kcoll_nl_event_str(unsigned int cmd);

#ifdef __cplusplus
}
#endif

#endif /* _LIBKCOLL_H */
