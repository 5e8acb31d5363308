/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kcoll: collective communication over RDMA, driven by the kernel.
 *
 * This is the one uAPI header: kcoll.ko, libkcoll and the tools all include it.
 *
 * Conventions every ioctl follows (see Documentation/uapi.rst):
 *  - Commands are _IO() numbers: the argument size is not part of the command, so a struct can
 *    grow without a new command number.  The first field of every argument is @size, the number
 *    of bytes the caller knows about; the kernel reads the rest with copy_struct_from_user().
 *  - @size below the first published size of the struct: -EINVAL.  @size larger than the
 *    kernel's struct with a non-zero byte beyond it: -E2BIG (the caller asks for something this
 *    kernel does not know).  A larger @size with a zero tail is accepted.
 *  - Unknown bits in @flags, or a non-zero reserved field: -EINVAL.
 *  - A bad argument pointer: -EFAULT.  An unknown command: -ENOTTY.
 *  - Output is copied back for min(@size, kernel size) bytes; no byte the kernel did not set.
 */
#ifndef _UAPI_LINUX_KCOLL_H
#define _UAPI_LINUX_KCOLL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KCOLL_DEVICE_NAME	"kcoll"
#define KCOLL_DEVICE_PATH	"/dev/kcoll"

/* Bumped only for an incompatible change; additions are announced by feature bits. */
#define KCOLL_ABI_VERSION	1

#define KCOLL_IOC_MAGIC		0xCC

/**
 * enum kcoll_ioc_nr - ioctl numbers; bit (1 << nr) of kcoll_info.ioctls is set when the loaded
 * module serves command nr.  Append only.
 */
#define KCOLL_IOC_NR_GET_INFO	0x00
#define KCOLL_IOC_NR_COMM_CREATE	0x01
#define KCOLL_IOC_NR_COMM_DESTROY	0x02
#define KCOLL_IOC_NR_COMM_ABORT		0x03
#define KCOLL_IOC_NR_COMM_QUERY		0x04
#define KCOLL_IOC_NR_BUF_CREATE		0x05
#define KCOLL_IOC_NR_BUF_DESTROY	0x06
#define KCOLL_IOC_NR_P2P		0x07
#define KCOLL_IOC_NR_WAIT		0x08
#define KCOLL_IOC_NR_COLL		0x09

/* Feature bits reported in kcoll_info.features.  Append only. */
/* The module is an ib_client and tracks RDMA devices (always set since ABI 1). */
#define KCOLL_FEAT_RDMA_DEVICES	(1ULL << 0)
/* /sys/kernel/kcoll/ is populated. */
#define KCOLL_FEAT_SYSFS	(1ULL << 1)
/* Communicators over RDMA: COMM_CREATE, COMM_DESTROY, COMM_ABORT, COMM_QUERY. */
#define KCOLL_FEAT_COMM		(1ULL << 2)
/* Point-to-point send/receive: P2P and WAIT, poll() on the file. */
#define KCOLL_FEAT_P2P		(1ULL << 3)
/* Zero-copy buffers: BUF_CREATE, BUF_DESTROY, mmap(), KCOLL_P2P_BUF. */
#define KCOLL_FEAT_BUF		(1ULL << 4)
/* Collectives: COLL (every collective, dtype and op below), WAIT on their requests. */
#define KCOLL_FEAT_COLL		(1ULL << 5)
/* COMM_CREATE takes the ranks' locality (kcoll_comm_create.locality). */
#define KCOLL_FEAT_LOCALITY	(1ULL << 6)

/**
 * struct kcoll_info - argument of KCOLL_IOC_GET_INFO
 * @size:	(input) sizeof(struct kcoll_info) as the caller was compiled with
 * @flags:	(input) must be 0; no flag is defined yet
 * @abi_version: (output) KCOLL_ABI_VERSION of the loaded module
 * @ndevices:	(output) RDMA devices kcoll currently tracks
 * @features:	(output) KCOLL_FEAT_* bits
 * @ioctls:	(output) bit (1 << KCOLL_IOC_NR_*) for every command the module serves
 * @version:	(output) module version string, NUL terminated, e.g. "0.1.0"
 * @reserved:	(input) must be zero; (output) zero
 *
 * Return: 0, or -EINVAL (size too small, unknown flag, reserved not zero), -E2BIG (unknown
 * non-zero tail), -EFAULT (bad pointer).
 */
struct kcoll_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 ndevices;
	__aligned_u64 features;
	__aligned_u64 ioctls;
	char version[32];
	__aligned_u64 reserved[4];
};

/* First published size of each argument struct; a smaller @size is -EINVAL. */
#define KCOLL_INFO_SIZE_VER0	96

#define KCOLL_IOC_GET_INFO	_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_GET_INFO)

/* Communicators --------------------------------------------------------------------------- */

/* Largest communicator; an nranks above it is -EINVAL. */
#define KCOLL_MAX_RANKS		4096
/* Largest peer_size of KCOLL_IOC_COMM_CREATE (room for the entry to grow); larger: E2BIG. */
#define KCOLL_PEER_SIZE_MAX	256

/**
 * struct kcoll_sockaddr - where one rank's node accepts kcoll connections
 * @family:	AF_INET or AF_INET6
 * @port:	rdma_cm port, host byte order; 0 means the listen_port module parameter
 * @scope_id:	IPv6 scope (interface index) for link-local addresses, else 0
 * @addr:	IPv4 address in the first 4 bytes (network order), or the IPv6 address
 *
 * The address of the IP interface of the RDMA device that should carry the traffic: the
 * device is whatever rdma_cm resolves the address to.
 */
struct kcoll_sockaddr {
	__u16 family;
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/**
 * struct kcoll_rank_locality - where one rank runs, as the bootstrap learnt it
 * @host:	host identity (a hash of the boot id and network namespace), 0: unknown
 * @nic:	identity of the NIC (netdev/RDMA device) of the rank's address on its host,
 *		0: unknown
 * @leaf, @rack, @pod: admin-given position (hashes of labels), 0: none
 * @numa_node:	NUMA node of the rank's CPU at bootstrap, -1: unknown
 * @reserved:	must be 0
 *
 * Advice for schedules only, never trusted for anything else: ranks with the same non-zero
 * @host share a host, with the same non-zero @nic a NIC.  Identical on every rank (the
 * bootstrap hands everyone the same table), so every rank derives the same groups.
 */
struct kcoll_rank_locality {
	__aligned_u64 host;
	__aligned_u64 nic;
	__aligned_u64 leaf;
	__aligned_u64 rack;
	__aligned_u64 pod;
	__s32 numa_node;
	__u32 reserved;
};

#define KCOLL_RANK_LOCALITY_SIZE_VER0	48

/**
 * struct kcoll_comm_create - argument of KCOLL_IOC_COMM_CREATE
 * @size:	(input) sizeof(struct kcoll_comm_create)
 * @flags:	(input) 0, or one KCOLL_COMM_TRANSPORT_* (RDMA or TCP) that overrides the
 *		transport setting for this communicator
 * @comm_id:	(input) identifier shared by every rank of the communicator, not 0; the
 *		bootstrap (libkcoll) draws it at random
 * @rank:	(input) this rank, below @nranks
 * @nranks:	(input) 1 to KCOLL_MAX_RANKS
 * @peers:	(input) user pointer to @nranks struct kcoll_sockaddr, indexed by rank; entry
 *		@rank is this rank's own address (the local end of its connections)
 * @peer_size:	(input) sizeof(struct kcoll_sockaddr); larger entries (up to
 *		KCOLL_PEER_SIZE_MAX) must have a zero tail
 * @timeout_ms:	(input) how long to wait for every peer to connect; 0: module default
 * @handle:	(output) the communicator's handle on this file; must be 0 on input
 * @failed_rank: (output) when connecting failed, the first rank no connection could be
 *		made with, else ~0U: the library names that rank's host in its error
 *		message; must be 0 on input
 * @reserved:	must be 0
 * @secret:	(input) KCOLL_SECRET_LEN random bytes shared by every rank (and no one else):
 *		each connection proves it (Documentation/wire.rst), so knowing @comm_id is
 *		not enough to join.  All zero (what a caller built with the 64-byte version
 *		of this struct sends): an unauthenticated communicator, refused with -EACCES
 *		when the module parameter require_secret is set.  Never shown by the kernel;
 *		the copy written back on success has it zeroed.
 * @locality:	(input) user pointer to @nranks struct kcoll_rank_locality indexed by rank,
 *		or 0: locality unknown (every rank its own host)
 * @locality_size: (input) sizeof(struct kcoll_rank_locality) when @locality is set, else
 *		0; larger entries (up to KCOLL_PEER_SIZE_MAX) must have a zero tail
 * @reserved2:	must be 0
 *
 * Blocks until every connection is established (state ready), @timeout_ms passes, or a
 * fatal signal arrives.
 *
 * Ranks on one node share its address and port (the listener tells them apart by rank).
 *
 * Return: 0, or -EINVAL (bad flags, rank, nranks, comm_id, peer_size, an address family
 * other than AF_INET/AF_INET6, or a wildcard address), -EEXIST (this comm_id and rank
 * already exist on the node), -EFAULT, -ENOMEM, -EADDRNOTAVAIL (own address not on an
 * RDMA device kcoll may use),
 * -EPERM (that device is not allowed by the devices= parameter), -EADDRINUSE (another
 * rdma_cm user holds the port), -E2BIG (a peer entry larger than known with a non-zero
 * tail, or peer_size above KCOLL_PEER_SIZE_MAX), -ENODEV (the device went away),
 * -ECONNRESET (a peer failed while connecting), -EHOSTUNREACH (a peer
 * address never resolved), -EPROTONOSUPPORT (a peer speaks another protocol version),
 * -ECONNREFUSED (a peer rejected: mismatched communicator, rank or device), -EACCES (a
 * peer does not hold the same @secret, or an all-zero @secret with require_secret set),
 * -ETIMEDOUT (a peer never accepted), -EINTR.  A @locality table that contradicts itself
 * (ranks of one NIC on different hosts, ranks of one host in different leaves, racks or
 * pods, or some ranks with a host identity and others without) is -EINVAL.
 */
struct kcoll_comm_create {
	__u32 size;
	__u32 flags;
	__aligned_u64 comm_id;
	__u32 rank;
	__u32 nranks;
	__aligned_u64 peers;
	__u32 peer_size;
	__u32 timeout_ms;
	__u32 handle;
	__u32 failed_rank;
	__aligned_u64 reserved[2];
	__u8 secret[16];	/* KCOLL_SECRET_LEN */
	__aligned_u64 locality;
	__u32 locality_size;
	__u32 reserved2;
};

/* kcoll_comm_create.flags: the transport of this comm (at most one); none: the setting. */
#define KCOLL_COMM_TRANSPORT_RDMA	(1U << 0)
#define KCOLL_COMM_TRANSPORT_TCP	(1U << 1)
#define KCOLL_COMM_TRANSPORT_MASK	(KCOLL_COMM_TRANSPORT_RDMA | KCOLL_COMM_TRANSPORT_TCP)

#define KCOLL_SECRET_LEN		16
#define KCOLL_COMM_CREATE_SIZE_VER0	64
#define KCOLL_COMM_CREATE_SIZE_VER1	80	/* + secret */
#define KCOLL_COMM_CREATE_SIZE_VER2	96	/* + locality */

/**
 * struct kcoll_comm_arg - argument of KCOLL_IOC_COMM_DESTROY and KCOLL_IOC_COMM_ABORT
 * @size:	(input) sizeof(struct kcoll_comm_arg)
 * @flags:	(input) must be 0
 * @handle:	(input) communicator handle
 * @reserved0:	must be 0
 *
 * Abort fails every pending operation with -ECONNABORTED and moves the communicator to the
 * aborted state (idempotent); destroy aborts, waits for the connections to close and frees
 * the handle.  Return: 0, -EINVAL, -ENOENT (no such handle), -EFAULT.
 */
struct kcoll_comm_arg {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 reserved0;
};

#define KCOLL_COMM_ARG_SIZE_VER0	16

/* Communicator states (kcoll_comm_query.state); see Documentation/design.rst. */
#define KCOLL_COMM_CREATING	0
#define KCOLL_COMM_CONNECTING	1
#define KCOLL_COMM_READY	2
#define KCOLL_COMM_ERROR	3
#define KCOLL_COMM_ABORTED	4
#define KCOLL_COMM_DESTROYED	5

/**
 * struct kcoll_comm_query - argument of KCOLL_IOC_COMM_QUERY
 * @size, @flags, @handle: (input) as for struct kcoll_comm_arg
 * @state:	(output) KCOLL_COMM_*
 * @error:	(output) the sticky error (negative errno) once in error or aborted, else 0
 * @rank, @nranks, @comm_id: (output) as created
 * @tx_bytes, @rx_bytes, @tx_ops, @rx_ops: (output) point-to-point counters
 * @reserved:	must be 0
 */
struct kcoll_comm_query {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 state;
	__s32 error;
	__u32 rank;
	__u32 nranks;
	__u32 reserved0;
	__aligned_u64 comm_id;
	__aligned_u64 tx_bytes;
	__aligned_u64 rx_bytes;
	__aligned_u64 tx_ops;
	__aligned_u64 rx_ops;
	__aligned_u64 reserved[2];
};

#define KCOLL_COMM_QUERY_SIZE_VER0	88

/* Zero-copy collective buffers ------------------------------------------------------------ */

/**
 * struct kcoll_buf_create - argument of KCOLL_IOC_BUF_CREATE
 * @size, @flags: (input) as usual; @flags must be 0
 * @comm:	(input) communicator handle; every rank must create its buffers in the same
 *		order and with the same @length (collective call)
 * @handle:	(output) buffer handle on this communicator
 * @length:	(input) bytes, 1 to the module's max_buf_size; rounded up to pages
 * @mmap_offset: (output) pass to mmap() on the same file to map the buffer
 * @reserved:	must be 0
 *
 * The pages are charged to RLIMIT_MEMLOCK of the caller unless it has CAP_IPC_LOCK.
 * Return: 0, -EINVAL, -ENOENT, -ENOMEM, -EFAULT, -ENOTCONN (communicator not ready), the
 * communicator's sticky error, -ETIMEDOUT (a peer did not create its buffer).
 */
struct kcoll_buf_create {
	__u32 size;
	__u32 flags;
	__u32 comm;
	__u32 handle;
	__aligned_u64 length;
	__aligned_u64 mmap_offset;
	__aligned_u64 reserved[2];
};

#define KCOLL_BUF_CREATE_SIZE_VER0	48

/**
 * struct kcoll_buf_arg - argument of KCOLL_IOC_BUF_DESTROY
 * @size, @flags: as usual
 * @comm, @handle: (input) the buffer
 *
 * Pages stay until the last mapping is gone.  Return: 0, -EINVAL, -ENOENT, -EBUSY (an
 * operation in flight uses it), -EFAULT.
 */
struct kcoll_buf_arg {
	__u32 size;
	__u32 flags;
	__u32 comm;
	__u32 handle;
};

#define KCOLL_BUF_ARG_SIZE_VER0		16

/* Point-to-point ------------------------------------------------------------------------ */

#define KCOLL_P2P_SEND		(1U << 0)	/* exactly one of SEND and RECV */
#define KCOLL_P2P_RECV		(1U << 1)
#define KCOLL_P2P_NONBLOCK	(1U << 2)	/* return a request id; see KCOLL_IOC_WAIT */
#define KCOLL_P2P_BUF		(1U << 3)	/* @addr is an offset in buffer @buf */
#define KCOLL_P2P_FLAGS		(KCOLL_P2P_SEND | KCOLL_P2P_RECV | KCOLL_P2P_NONBLOCK | \
				 KCOLL_P2P_BUF)

/**
 * struct kcoll_p2p - argument of KCOLL_IOC_P2P: one send or receive
 * @size:	(input) sizeof(struct kcoll_p2p)
 * @flags:	(input) KCOLL_P2P_*
 * @comm:	(input) communicator handle
 * @peer:	(input) the other rank
 * @addr:	(input) user pointer, or with KCOLL_P2P_BUF a byte offset in buffer @buf
 * @len:	(input) bytes to send, or the capacity of the receive
 * @buf:	(input) buffer handle with KCOLL_P2P_BUF, else 0
 * @timeout_ms:	(input) blocking calls: give up after this long and fail the communicator
 *		(0: no limit; a dead peer is detected within the module's op_timeout_ms)
 * @req:	(output) with KCOLL_P2P_NONBLOCK, the request id to wait for
 * @result:	(output) blocking receive: bytes received
 * @reserved:	must be 0
 *
 * Sends and receives between two ranks match in the order they are posted.  A message
 * larger than the matching receive fails both sides with -EMSGSIZE.
 * Return: 0, -EINVAL, -ENOENT, -EFAULT, -ENOMEM, -ENOTCONN, -ETIMEDOUT, -EINTR, -EMSGSIZE,
 * -ECONNRESET (the peer went away), -ECONNABORTED (aborted).  @req and @result must be 0 on
 * input.
 */
struct kcoll_p2p {
	__u32 size;
	__u32 flags;
	__u32 comm;
	__u32 peer;
	__aligned_u64 addr;
	__aligned_u64 len;
	__u32 buf;
	__u32 timeout_ms;
	__aligned_u64 req;
	__aligned_u64 result;
	__aligned_u64 reserved[2];
};

#define KCOLL_P2P_SIZE_VER0		72

/**
 * struct kcoll_wait - argument of KCOLL_IOC_WAIT: wait for a non-blocking request
 * @size, @flags: as usual; @flags must be 0
 * @comm:	(input) communicator handle
 * @timeout_ms:	(input) 0: do not wait, just test; ~0U: no limit (a dead peer is
 *		detected within the module's op_timeout_ms)
 * @req:	(input) request id
 * @status:	(output) 0, or the request's negative errno
 * @result:	(output) bytes moved
 *
 * A completed request is consumed by the wait that reports it.  poll() on the file reports
 * POLLIN while any request of any communicator on it has completed and not been waited for.
 * Return: 0 (the request is done; see @status), -EAGAIN (still in flight after @timeout_ms),
 * -ENOENT (unknown or already consumed), -EINVAL, -EFAULT, -EINTR.
 */
struct kcoll_wait {
	__u32 size;
	__u32 flags;
	__u32 comm;
	__u32 timeout_ms;
	__aligned_u64 req;
	__s32 status;
	__u32 reserved0;
	__aligned_u64 result;
	__aligned_u64 reserved[2];
};

#define KCOLL_WAIT_SIZE_VER0		56

/* Collectives ---------------------------------------------------------------------------- */

/* Values are fixed (they match the module's core/ enums). */
enum kcoll_collective {
	KCOLL_BROADCAST = 0,
	KCOLL_SCATTER = 1,
	KCOLL_GATHER = 2,
	KCOLL_REDUCE = 3,
	KCOLL_ALLREDUCE = 4,
	KCOLL_ALLGATHER = 5,
	KCOLL_REDUCE_SCATTER = 6,
	KCOLL_ALLTOALL = 7,
	KCOLL_BARRIER = 8,
	KCOLL_ALLGATHERV = 9,
	KCOLL_ALLTOALLV = 10,
	KCOLL_REDUCE_SCATTERV = 11,
	KCOLL_NUM_COLLECTIVES
};

enum kcoll_datatype {
	KCOLL_INT8 = 0,
	KCOLL_UINT8 = 1,
	KCOLL_INT32 = 2,
	KCOLL_UINT32 = 3,
	KCOLL_INT64 = 4,
	KCOLL_UINT64 = 5,
	KCOLL_FP16 = 6,
	KCOLL_BF16 = 7,
	KCOLL_FP32 = 8,
	KCOLL_FP64 = 9,
	KCOLL_NUM_DATATYPES
};

/* AVG is defined for the floating-point types only. */
enum kcoll_red_op {
	KCOLL_SUM = 0,
	KCOLL_PROD = 1,
	KCOLL_MIN = 2,
	KCOLL_MAX = 3,
	KCOLL_AVG = 4,
	KCOLL_NUM_RED_OPS
};

/* Algorithms; AUTO lets the module choose (the same choice on every rank). */
enum kcoll_algorithm {
	KCOLL_ALG_AUTO = 0,
	KCOLL_ALG_RING = 1,
	KCOLL_ALG_RECDBL = 2,
	KCOLL_ALG_RABENSEIFNER = 3,
	KCOLL_ALG_BINOMIAL = 4,
	KCOLL_ALG_DBTREE = 5,
	KCOLL_ALG_CHAIN = 6,
	KCOLL_ALG_PAIRWISE = 7,
	KCOLL_ALG_BRUCK = 8,
	KCOLL_ALG_HIER = 9,
	KCOLL_NUM_ALGORITHMS
};

/*
 * Reported in @algo_used only, never an @algo: the ranks, all on this host, met in kernel
 * memory (the same-host path of blocking all-reduces, Documentation/uapi.rst).
 */
#define KCOLL_ALG_USED_LOCAL	0x100

#define KCOLL_COLL_NONBLOCK	(1U << 0)	/* return a request id; see KCOLL_IOC_WAIT */
#define KCOLL_COLL_IN_PLACE	(1U << 1)	/* in-place layout (Documentation/uapi.rst) */
#define KCOLL_COLL_SEND_BUF	(1U << 2)	/* @sendbuf is an offset in buffer @send_handle */
#define KCOLL_COLL_RECV_BUF	(1U << 3)	/* @recvbuf is an offset in buffer @recv_handle */
#define KCOLL_COLL_FLAGS	(KCOLL_COLL_NONBLOCK | KCOLL_COLL_IN_PLACE | \
				 KCOLL_COLL_SEND_BUF | KCOLL_COLL_RECV_BUF)

/**
 * struct kcoll_coll - argument of KCOLL_IOC_COLL: one collective call
 * @size, @flags: (input) as usual; @flags: KCOLL_COLL_*
 * @comm:	(input) communicator handle
 * @coll:	(input) enum kcoll_collective
 * @dtype:	(input) enum kcoll_datatype (element size; reductions also need it)
 * @op:		(input) enum kcoll_red_op for REDUCE, ALLREDUCE, REDUCE_SCATTER(V); else 0
 * @algo:	(input) enum kcoll_algorithm; AUTO (0) follows the module's configuration
 * @root:	(input) BROADCAST, SCATTER, GATHER, REDUCE; else 0
 * @timeout_ms:	(input) blocking calls: as for struct kcoll_p2p
 * @count:	(input) elements, per the buffer conventions of Documentation/uapi.rst; 0 for
 *		BARRIER and the v-collectives
 * @sendbuf, @recvbuf: (input) user pointers, or byte offsets with the _BUF flags
 * @send_handle, @recv_handle: (input) buffer handles with the _BUF flags, else 0
 * @counts, @displs: (input) v-collectives: user pointers to nranks __u64 each
 * @send_counts, @send_displs: (input) ALLTOALLV's send side: nranks __u64 each
 * @req:	(output) with KCOLL_COLL_NONBLOCK, the request id; must be 0 on input
 * @algo_used:	(output) the algorithm that ran (or runs), or KCOLL_ALG_USED_LOCAL; must
 *		be 0 on input
 * @reserved:	must be 0
 *
 * Every rank of the communicator makes the same sequence of collective calls with matching
 * arguments (only @sendbuf/@recvbuf and ALLTOALLV's arrays are the rank's own).  A mismatch
 * is detected from the first message and fails the call with -EPROTO, never a hang.
 * Return: 0, -EINVAL (bad flags, collective, root, count, (dtype, op) pair, algorithm that
 * cannot do the collective), -ENOENT (communicator or buffer), -EFAULT, -ENOMEM, -ENOTCONN,
 * -ERANGE (a region beyond its buffer), -EPROTO (ranks disagree about the call),
 * -ETIMEDOUT, -EINTR, -ECONNRESET (a rank died), -ECONNABORTED (aborted), or the
 * communicator's sticky error.
 */
struct kcoll_coll {
	__u32 size;
	__u32 flags;
	__u32 comm;
	__u8 coll;
	__u8 dtype;
	__u8 op;
	__u8 algo;
	__u32 root;
	__u32 timeout_ms;
	__aligned_u64 count;
	__aligned_u64 sendbuf;
	__aligned_u64 recvbuf;
	__u32 send_handle;
	__u32 recv_handle;
	__aligned_u64 counts;
	__aligned_u64 displs;
	__aligned_u64 send_counts;
	__aligned_u64 send_displs;
	__aligned_u64 req;
	__u32 algo_used;
	__u32 reserved0;
	__aligned_u64 reserved[2];
};

#define KCOLL_COLL_SIZE_VER0		120

#define KCOLL_IOC_COMM_CREATE	_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_COMM_CREATE)
#define KCOLL_IOC_COMM_DESTROY	_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_COMM_DESTROY)
#define KCOLL_IOC_COMM_ABORT	_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_COMM_ABORT)
#define KCOLL_IOC_COMM_QUERY	_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_COMM_QUERY)
#define KCOLL_IOC_BUF_CREATE	_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_BUF_CREATE)
#define KCOLL_IOC_BUF_DESTROY	_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_BUF_DESTROY)
#define KCOLL_IOC_P2P		_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_P2P)
#define KCOLL_IOC_WAIT		_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_WAIT)
#define KCOLL_IOC_COLL		_IO(KCOLL_IOC_MAGIC, KCOLL_IOC_NR_COLL)

#endif /* _UAPI_LINUX_KCOLL_H */
