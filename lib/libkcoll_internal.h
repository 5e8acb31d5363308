/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internals shared by the libkcoll sources; never installed.
 */
#ifndef _LIBKCOLL_INTERNAL_H
#define _LIBKCOLL_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "libkcoll.h"

#ifndef offsetofend
#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#endif

/*
 * First published size of each option struct: the offset just past its last field in
 * libkcoll 0.1.  Fields added later are read with OPTS_GET(), which falls back to a default
 * when an older caller's @sz does not cover them.
 */
#define KCOLL_OPEN_OPTS_SZ_VER0		offsetofend(struct kcoll_open_opts, flags)
#define KCOLL_DEV_LIST_OPTS_SZ_VER0	offsetofend(struct kcoll_dev_list_opts, sysfs_root)

int kcoll_opts_validate(const void *opts, size_t known_sz, size_t min_sz);

#define KCOLL_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * 0 when @opts is NULL or acceptable, else -EINVAL/-E2BIG.  @last_field is the newest
 * field this library knows; everything past it in the caller's struct must be zero.
 */
#define OPTS_VALID(opts, type, last_field, min_sz)			\
	kcoll_opts_validate((opts), offsetofend(struct type, last_field), (min_sz))

#define OPTS_HAS(opts, field)						\
	((opts) && (opts)->sz >= offsetofend(typeof(*(opts)), field))

#define OPTS_GET(opts, field, fallback)					\
	(OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* Return -err and mirror it in errno, as the public header promises. */
static inline int kcoll_err(int err)
{
	if (err < 0)
		errno = -err;
	return err;
}

/* Communicators and bootstrap (KCOLL_0.2) ---------------------------------------------- */

#include <stdint.h>

#define KCOLL_UID_OPTS_SZ_VER0		offsetofend(struct kcoll_uid_opts, flags)
#define KCOLL_COMM_OPTS_SZ_VER0		offsetofend(struct kcoll_comm_opts, ifname)
#define KCOLL_P2P_OPTS_SZ_VER0		offsetofend(struct kcoll_p2p_opts, flags)
#define KCOLL_COLL_OPTS_SZ_VER0		offsetofend(struct kcoll_coll_opts, algo_used)
#define KCOLL_SPLIT_OPTS_SZ_VER0	offsetofend(struct kcoll_split_opts, connect_timeout_ms)

#define KCOLL_HIDDEN	__attribute__((visibility("hidden")))

/* Longest kcoll_last_error() message, NUL included; longer ones are cut with "...". */
#define KCOLL_ERRMSG_MAX	512

KCOLL_HIDDEN void kcoll_clear_error(void);
KCOLL_HIDDEN void kcoll_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* kcoll_set_error() and return kcoll_err(@err). */
KCOLL_HIDDEN int kcoll_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <pthread.h>

struct kcoll_buf;

struct kcoll_comm {
	struct kcoll_handle *h;
	int fd;
	uint32_t handle;		/* the kernel's, on fd */
	int rank;
	int nranks;
	uint64_t comm_id;
	pthread_mutex_t lock;		/* guards @bufs */
	struct kcoll_buf *bufs;		/* mapped buffers, for pointer lookup */
	struct kcoll_sockaddr *peers;	/* every rank's address, for kcoll_comm_split() */
	struct kcoll_rank_locality *loc; /* every rank's locality or NULL, for the same */
	uint32_t create_flags;		/* its KCOLL_IOC_COMM_CREATE flags (transport), same */
};

struct kcoll_buf {
	int fd;
	uint32_t comm;			/* communicator handle */
	uint32_t handle;		/* buffer handle */
	void *ptr;
	size_t len;			/* as asked */
	size_t map_len;			/* whole pages */
	uint64_t mmap_offset;		/* of the mapping, on @fd */
	struct kcoll_comm *c;		/* NULL once the communicator is destroyed */
	struct kcoll_buf *next;		/* in c->bufs */
};

/*
 * The buffer of @c whose mapping holds [@p, @p + @len), or NULL: the collectives pass such
 * memory as a zero-copy buffer region.
 */
KCOLL_HIDDEN struct kcoll_buf *kcoll_buf_find(struct kcoll_comm *c, const void *p, size_t len);

/*
 * The unique id, all integers big-endian:
 *	 0  magic "KCOLLUID"		 8  u16 version (2)	10  u16 family (4 or 6)
 *	12  u16 port			14  u16 reserved (0)	16  u64 comm_id (not 0)
 *	24  u8 addr[16]			40  u32 IPv6 scope id	44  u8 secret[16]
 *	60  reserved (0) up to 120    120  u64 FNV-1a 64 of bytes 0-119
 * Version 2 added the communicator's secret (KCOLL_IOC_COMM_CREATE): whoever holds the id
 * may join, whoever only knows the comm id may not.
 */
#define KCOLL_UID_MAGIC		"KCOLLUID"
#define KCOLL_UID_VERSION	2
#define KCOLL_UID_SECRET_OFF	44
#define KCOLL_UID_CSUM_OFF	120

/* What a unique id says: the comm id and the root's TCP address (port: the TCP port). */
struct kcoll_uid_info {
	uint64_t comm_id;
	unsigned char secret[KCOLL_SECRET_LEN];
	struct kcoll_sockaddr root;
};

KCOLL_HIDDEN int kcoll_uid_encode(const struct kcoll_uid_info *info, struct kcoll_unique_id *id);
/* -EINVAL (with a message) when @id is not one kcoll_uid_encode() made. */
KCOLL_HIDDEN int kcoll_uid_decode(const struct kcoll_unique_id *id, struct kcoll_uid_info *info);

/*
 * The rendezvous protocol over TCP, all integers big-endian.  Every message is a 12-byte
 * header then @length bytes of body:
 *	u32 magic (KCOLL_BOOT_MAGIC)  u16 version (KCOLL_BOOT_VERSION)  u16 type  u32 length
 * HELLO (rank to root), 112 bytes:
 *	u64 comm_id (env init: 0)  u64 job_tag  u32 rank  u32 nranks  address (24 bytes)
 *	locality (64 bytes)
 * TABLE (root to rank), 32 + 88 * nranks bytes:
 *	u64 comm_id  u32 nranks  u32 reserved (0)  u8 secret[16]  nranks entries by rank,
 *	each an address then a locality
 *	(secret: drawn by the root of an env init; zero when the ranks hold a unique id,
 *	whose secret never crosses the rendezvous)
 * ERROR (root to rank), 8 + n bytes, n <= KCOLL_BOOT_MSG_MAX:
 *	u32 errno (positive)  u32 n  n bytes of message (no NUL)
 * An address (struct kcoll_sockaddr on the wire), 24 bytes:
 *	u16 family (4 or 6)  u16 port  u32 scope_id  u8 addr[16] (IPv4: 4 bytes, 12 zero)
 * A locality (struct kcoll_rank_locality on the wire, lib/boot_loc.c), 64 bytes:
 *	u16 version (1)  u16 length (64)  s32 numa_node  u64 host  u64 nic  u64 leaf
 *	u64 rack  u64 pod  16 bytes reserved (0)
 */
#define KCOLL_BOOT_MAGIC	0x4b43424fU	/* "KCBO" */
#define KCOLL_BOOT_VERSION	3	/* 2: the table's secret; 3: locality */
#define KCOLL_BOOT_HELLO	1
#define KCOLL_BOOT_TABLE	2
#define KCOLL_BOOT_ERROR	3
#define KCOLL_BOOT_HDR_LEN	12
#define KCOLL_BOOT_ADDR_LEN	24
#define KCOLL_BOOT_LOC_LEN	64
#define KCOLL_BOOT_LOC_VERSION	1
#define KCOLL_BOOT_HELLO_LEN	(24 + KCOLL_BOOT_ADDR_LEN + KCOLL_BOOT_LOC_LEN)
#define KCOLL_BOOT_ENTRY_LEN	(KCOLL_BOOT_ADDR_LEN + KCOLL_BOOT_LOC_LEN)
#define KCOLL_BOOT_TABLE_HDR	32
#define KCOLL_BOOT_MSG_MAX	1024
/* A connection must deliver its hello this soon after it is accepted, or it is dropped. */
#define KCOLL_BOOT_HELLO_MS	5000
/* Connections that have not sent a valid hello yet, at most; more are closed at once. */
#define KCOLL_BOOT_MAX_PENDING	256
/* A rank waits for the root's answer this much longer than its own timeout. */
#define KCOLL_BOOT_GRACE_MS	2000

/* The environment, as kcoll_comm_init_env() reads it. */
struct kcoll_env_conf {
	int rank;
	int nranks;
	int local_rank;			/* -1 when not given */
	const char *source;		/* "KCOLL", "torchrun", "Slurm", "Open MPI" */
	char root_host[256];		/* KCOLL_BOOTSTRAP_ADDR or MASTER_ADDR */
	unsigned int root_port;
	uint64_t job_tag;		/* hash of the job id, 0 when there is none */
};

/*
 * $@name, a decimal number in [@min, @max], into *@out; empty counts as unset.  0 when unset
 * (*@set false if @set), -EINVAL with a message naming the variable when malformed.
 */
KCOLL_HIDDEN int kcoll_env_ulong(const char *name, unsigned long min, unsigned long max,
				 unsigned long *out, bool *set);

/* 0, or -EINVAL with a message naming the variable at fault. */
KCOLL_HIDDEN int kcoll_env_parse(struct kcoll_env_conf *conf);

/*
 * The rendezvous alone, no ioctl: what kcoll_comm_init_rank() and kcoll_comm_init_env() do
 * before KCOLL_IOC_COMM_CREATE.  On success *table is a malloc()ed array of nranks entries
 * indexed by rank, and @secret (unless NULL) the communicator's KCOLL_SECRET_LEN bytes.
 */
KCOLL_HIDDEN int kcoll_bootstrap_rank(const struct kcoll_unique_id *id, int nranks, int rank,
				      const struct kcoll_comm_opts *opts, uint64_t *comm_id,
				      unsigned char *secret, struct kcoll_sockaddr **table);
KCOLL_HIDDEN int kcoll_bootstrap_env(const struct kcoll_comm_opts *opts,
				     struct kcoll_env_conf *conf, uint64_t *comm_id,
				     unsigned char *secret, struct kcoll_sockaddr **table);
/* The same, and (unless NULL) *loc: a malloc()ed array of the ranks' locality by rank. */
KCOLL_HIDDEN int kcoll_bootstrap_rank_loc(const struct kcoll_unique_id *id, int nranks,
					  int rank, const struct kcoll_comm_opts *opts,
					  uint64_t *comm_id, unsigned char *secret,
					  struct kcoll_sockaddr **table,
					  struct kcoll_rank_locality **loc);
KCOLL_HIDDEN int kcoll_bootstrap_env_loc(const struct kcoll_comm_opts *opts,
					 struct kcoll_env_conf *conf, uint64_t *comm_id,
					 unsigned char *secret, struct kcoll_sockaddr **table,
					 struct kcoll_rank_locality **loc);

/*
 * Locality (lib/boot_loc.c).  kcoll_loc_put() writes KCOLL_BOOT_LOC_LEN bytes;
 * kcoll_loc_get() reads @len bytes: -EPROTO (truncated, bad length or fields),
 * -EPROTONOSUPPORT (another record version).  kcoll_loc_labels() reads the topology file
 * (@path; NULL: /etc/kcoll/topology, which may be absent) then @env ("leaf=a,rack=b");
 * kcoll_loc_self() fills this rank's record (labels from KCOLL_TOPO_FILE and KCOLL_TOPO).
 * Both fail with -EINVAL and a message on a bad file or variable.
 */
KCOLL_HIDDEN void kcoll_loc_put(unsigned char *p, const struct kcoll_rank_locality *l);
KCOLL_HIDDEN int kcoll_loc_get(const unsigned char *p, size_t len, struct kcoll_rank_locality *l);
KCOLL_HIDDEN int kcoll_loc_labels(const char *path, const char *env,
				  struct kcoll_rank_locality *l);
KCOLL_HIDDEN int kcoll_loc_self(const struct kcoll_sockaddr *self,
				struct kcoll_rank_locality *l);

/* Fill @buf with @len random bytes (getrandom): 0 or -errno. */
KCOLL_HIDDEN int kcoll_random_bytes(void *buf, size_t len);

/*
 * KCOLL_IOC_COMM_CREATE on @h with the complete peer table, @flags (the transport) and,
 * when every rank's host is known, the locality table (@loc may be NULL) (lib/comm.c).
 */
KCOLL_HIDDEN int kcoll_comm_create(struct kcoll_handle *h, uint64_t comm_id,
				   const unsigned char *secret, int rank, int nranks,
				   const struct kcoll_sockaddr *table,
				   const struct kcoll_rank_locality *loc, uint32_t timeout_ms,
				   uint32_t flags, struct kcoll_comm **out);
/*
 * The first checks of a call that makes a communicator (lib/comm.c): *@out becomes NULL, the
 * call @fn is refused in a group, and @src, what it is made from, must be given; @out_msg and
 * @src_msg are the errors when @out or @src is NULL.
 */
KCOLL_HIDDEN int kcoll_comm_new_check(struct kcoll_comm **out, const void *src, const char *fn,
				      const char *out_msg, const char *src_msg);
/* The connect timeout: @ms, else $KCOLL_CONNECT_TIMEOUT_MS, else 0 (lib/comm.c). */
KCOLL_HIDDEN int kcoll_connect_timeout_ms(unsigned long ms, uint32_t *out);
/*
 * kcoll_comm_split()'s ranking (lib/split.c): from every parent rank's (color, key) pair
 * (@ck[2 * j], @ck[2 * j + 1]), the parent ranks of @rank's child in child-rank order (by key,
 * then parent rank) into @members; returns the child's size (0 for KCOLL_SPLIT_UNDEFINED) and
 * sets *@child_rank.
 */
KCOLL_HIDDEN int kcoll_split_members(const int32_t *ck, int nranks, int rank, int *members,
				     int *child_rank);

/*
 * Join the root thread this process runs for @comm_id (after asking it to stop when @stop)
 * and return its result, 0 or negative errno, with its message in @msg.  -ENOENT when this
 * process runs none (or another thread already joined it).
 */
KCOLL_HIDDEN int kcoll_bootstrap_root_join(uint64_t comm_id, bool stop, char *msg, size_t len);
/* Root threads of this process not joined yet. */
KCOLL_HIDDEN int kcoll_bootstrap_root_count(void);

/*
 * Groups (lib/group.c, KCOLL_0.5).  Between kcoll_group_start() and kcoll_group_end() the
 * calling thread's kcoll_allreduce() and non-blocking point-to-point calls are recorded, and
 * every other call that submits work is refused: kcoll_group_refuse(@fn) is 0 outside a
 * group, else -EINVAL with a message naming @fn.  Either failure fails the whole group, as
 * does any error passed through kcoll_group_fail() while a group is open (with @what, the
 * message becomes "@what: strerror"; NULL keeps the message the caller set).
 */
KCOLL_HIDDEN bool kcoll_group_active(void);
KCOLL_HIDDEN int kcoll_group_refuse(const char *fn);
KCOLL_HIDDEN int kcoll_group_fail(int err, const char *what);
KCOLL_HIDDEN int kcoll_group_allreduce(struct kcoll_comm *c, const void *send, void *recv,
				       size_t count, int dtype, int op,
				       const struct kcoll_coll_opts *opts);
/* Record @p (a non-blocking KCOLL_IOC_P2P as kcoll_p2p() built it); *req is left idle. */
KCOLL_HIDDEN int kcoll_group_p2p(struct kcoll_comm *c, const struct kcoll_p2p *p,
				 struct kcoll_request *req);
/* KCOLL_IOC_P2P with @p; fills *received and *req (either may be NULL). */
KCOLL_HIDDEN int kcoll_p2p_submit(struct kcoll_comm *c, struct kcoll_p2p *p, size_t *received,
				  struct kcoll_request *req);

/* "1.2.3.4:5" or "[::1]:5" */
#define KCOLL_ADDRSTR_MAX	72
KCOLL_HIDDEN const char *kcoll_sockaddr_str(const struct kcoll_sockaddr *a, char *buf,
					    size_t len);

#endif /* _LIBKCOLL_INTERNAL_H */
