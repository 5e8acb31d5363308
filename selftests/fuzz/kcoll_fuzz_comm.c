// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: COMM_CREATE.  Besides the generic mutations, the call varies what its uAPI
 * grew after the first version: the transport flags, the struct's size (64, 80, 96 or
 * larger), the secret and the ranks' locality table (struct kcoll_rank_locality).  Those
 * choices are op->v[5]'s (0: flags 0, 96 bytes, no secret, no table: what a log written
 * before v[5] meant), so a logged program replays the same calls.  Every value is derived
 * from the program alone, never from the rank: the nodes of a rig build the same tables.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../kernel/kcoll_test_comm.h"
#include "kcoll_fuzz.h"

/* The fields of v[5] */
#define X_XPORT(x)	((x) & 7)	/* 0-3: the setting, 4-5: RDMA, 6-7: TCP */
#define X_SIZE(x)	((x) >> 3 & 7)	/* 0-4: 96, 5: 80, 6: 64, 7: larger with a zero tail */
#define X_LOC(x)	((x) >> 6 & 15)	/* 0-7: no table, 8-11: a shape, 12-15: wider entries */
#define X_SECRET(x)	((x) >> 10 & 1)
#define X_BAD(x)	((x) >> 11 & 1)	/* own mutations 3-5 rather than 0-2 */
#define X_PICK(x)	((x) >> 12 & 0xfffff)	/* which variant of a bad one */
#define X_SALT(x)	((x) >> 32)	/* the identities in a table */

#define LOC_SIZE	KCOLL_RANK_LOCALITY_SIZE_VER0
#define LOC_MAX_N	16		/* entries built; larger nranks read the area's zeroes */
#define LOC_AREA	(2 * FZ_PAGE)	/* then a guard page */

enum {	/* own mutations 3-5, after the three of fz_comm_create() */
	OWN_BAD_FLAGS = 3, OWN_BAD_TABLE, OWN_BAD_FRAME,
};

static __thread char *tloc;	/* this thread's locality table */

static char *fz_tloc(void)
{
	if (!tloc) {
		tloc = mmap(NULL, LOC_AREA + FZ_PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (tloc == MAP_FAILED)
			abort();
		mprotect(tloc + LOC_AREA, FZ_PAGE, PROT_NONE);
	}
	return tloc;
}

static uint64_t fz_mix(uint64_t x, uint64_t i)
{
	uint64_t h = (x ^ (i + 1) * 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;

	return h ^ h >> 29;
}

/* A consistent table (@shape 0-3), as a bootstrap would hand it out: every rank alike. */
static void fz_loc_shape(struct kcoll_rank_locality *l, unsigned int i, unsigned int shape,
			 uint64_t salt)
{
	uint64_t host = (fz_mix(salt, 1) >> 8 | 1) + i, nic = (fz_mix(salt, 2) >> 8 | 1) + i;
	uint64_t lbl = fz_mix(salt, 3) >> 8 | 1;

	switch (shape) {
	case 0:		/* every rank its own host */
		*l = (struct kcoll_rank_locality){ host, nic, 0, 0, 0, (int32_t)(i % 2) };
		break;
	case 1:		/* one host, one NIC, labelled */
		*l = (struct kcoll_rank_locality){ host - i, nic - i, lbl, lbl + 1, lbl + 2, -1 };
		break;
	case 2:		/* two ranks a host, two hosts a leaf */
		*l = (struct kcoll_rank_locality){ host - i + i / 2, nic, lbl + i / 4, lbl, 0,
						   (int32_t)(i % 2) };
		break;
	default:	/* hosts known, NICs not */
		*l = (struct kcoll_rank_locality){ host - i + i / 3, 0, 0, 0, 0, 0 };
		break;
	}
}

/* A table that contradicts itself or has out-of-range fields (OWN_BAD_TABLE). */
static void fz_loc_bad(struct kcoll_rank_locality *l, unsigned int i, unsigned int n,
		       uint64_t pick, uint64_t salt)
{
	static const int32_t numa[] = { -2, INT32_MIN, INT32_MAX, 4096, 1 << 20 };
	unsigned int victim = (pick >> 3) % n;
	uint64_t k = fz_mix(salt, 1) >> 8 | 1;

	fz_loc_shape(l, i, 0, salt);
	switch (pick % 7) {
	case 0:		/* one NIC on different hosts */
		l->nic = k;
		break;
	case 1: {	/* one host in different leaves, racks or pods */
		__u64 *label[] = { &l->leaf, &l->rack, &l->pod };

		l->host = k;
		*label[(pick >> 3) % 3] = k + i;
		break;
	}
	case 2:		/* some ranks with a host identity, others without */
		l->host = i % 2 == victim % 2 ? 0 : l->host;
		break;
	case 3:		/* a NUMA node out of range */
		if (i == victim)
			l->numa_node = numa[(pick >> 8) % 5];
		break;
	case 4:		/* reserved */
		if (i == victim)
			l->reserved = (uint32_t)fz_interesting64(pick) | 1;
		break;
	case 5:		/* huge numbers everywhere */
		l->host = ~0ULL - (pick >> 8 & 1 ? i : 0);
		l->nic = ~0ULL - i;
		l->leaf = 1ULL << 63;
		l->rack = l->leaf;
		l->pod = l->leaf;
		l->numa_node = INT32_MAX;
		break;
	default:	/* garbage */
		l->host = fz_mix(salt, i);
		l->nic = fz_mix(salt, i + 99);
		l->leaf = fz_mix(pick, i);
		l->rack = pick >> 4 & 1 ? 0 : fz_mix(pick, 1);
		l->pod = 0;
		l->numa_node = (int32_t)fz_mix(salt ^ pick, i);
		break;
	}
}

/*
 * The extensions of @a (flags, secret, locality) from @x, and the struct's size (returned).
 * @own: the own mutation (-1: none); a wider struct's tail is in @tail.
 */
static size_t fz_create_ext(struct kcoll_comm_create *a, uint8_t *tail, uint64_t x, int own)
{
	static const uint32_t bad_flags[] = { KCOLL_COMM_TRANSPORT_MASK, 0, ~0U };
	static const uint32_t big_size[] = { KCOLL_PEER_SIZE_MAX + 1, 4096, 65536, ~0U };
	unsigned int n = a->nranks < LOC_MAX_N ? a->nranks : LOC_MAX_N, i, shape;
	uint64_t pick = X_PICK(x), salt = X_SALT(x);
	size_t size = X_SIZE(x) == 5 ? KCOLL_COMM_CREATE_SIZE_VER1 :
		      X_SIZE(x) == 6 ? KCOLL_COMM_CREATE_SIZE_VER0 : sizeof(*a);
	uint32_t stride = LOC_SIZE;
	char *t = fz_tloc();

	if (X_SIZE(x) == 7)	/* a later version's struct with nothing set past ours */
		size += 8 * (1 + salt % 8);
	a->flags = X_XPORT(x) < 4 ? 0 : X_XPORT(x) < 6 ? KCOLL_COMM_TRANSPORT_RDMA :
		   KCOLL_COMM_TRANSPORT_TCP;
	if (X_SECRET(x)) {	/* the same on every rank: the comm id's */
		uint64_t s[2] = { fz_mix(a->comm_id, 7), fz_mix(a->comm_id, 8) };

		memcpy(a->secret, s, sizeof(s));
	}
	shape = X_LOC(x) & 3;
	if (X_LOC(x) >= 12)	/* later versions' entries, zero past ours */
		stride = LOC_SIZE + 8 * (1 + salt % 26);
	if (X_LOC(x) >= 8 || own == OWN_BAD_TABLE || own == OWN_BAD_FRAME) {
		memset(t, 0, LOC_AREA);
		for (i = 0; i < n; i++) {
			struct kcoll_rank_locality *l = (void *)(t + i * stride);

			if (own == OWN_BAD_TABLE)
				fz_loc_bad(l, i, n, pick, salt);
			else
				fz_loc_shape(l, i, shape, salt);
		}
		a->locality = (uintptr_t)t;
		a->locality_size = stride;
	}
	switch (own) {
	case OWN_BAD_FLAGS:	/* both transports, unknown bits */
		a->flags = pick % 4 < 3 ? bad_flags[pick % 4] : a->flags;
		if (pick % 4 == 1 || pick % 4 == 3)
			a->flags |= 1U << (2 + (pick >> 2) % 30);
		break;
	case OWN_BAD_TABLE:
		if (pick % 7 == 6 && pick >> 5 & 1) {	/* an entry's tail not zero */
			stride = LOC_SIZE + 8 * (1 + salt % 26);
			a->locality_size = stride;
			memset(t, 0, LOC_AREA);
			for (i = 0; i < n; i++)
				fz_loc_shape((void *)(t + i * stride), i, shape, salt);
			i = (pick >> 6) % n * stride + LOC_SIZE;
			t[i + (pick >> 10) % (stride - LOC_SIZE)] = (char)(pick | 1);
		}
		break;
	case OWN_BAD_FRAME:
		switch (pick % 8) {
		case 0:		/* a table without its entry size */
			a->locality_size = 0;
			break;
		case 1:		/* an entry size without a table */
			a->locality = 0;
			break;
		case 2:		/* entries smaller than the first version's */
			a->locality_size = (pick >> 3) % LOC_SIZE;
			break;
		case 3:		/* entries larger than the kernel reads */
			a->locality_size = big_size[(pick >> 3) % 4];
			break;
		case 4:		/* NULL, unmapped, kernel, read-only addresses */
			a->locality = fz_interesting64(pick << 8 | salt % 256);
			break;
		case 5:		/* the table runs into the guard page */
			a->locality = (uintptr_t)t + LOC_AREA - (n * stride / 2 & ~7U);
			break;
		case 6:
			a->reserved2 = (uint32_t)fz_interesting64(pick) | 1;
			break;
		default:	/* a later version's struct with a field set past ours */
			size = sizeof(*a) + 8 * (1 + salt % 8);
			tail[(pick >> 3) % (size - sizeof(*a))] = (uint8_t)(pick >> 8) | 1;
			break;
		}
		break;
	}
	return size;
}

/* The report's rows of the extensions (@a as sent), by the result of the call. */
static void fz_create_rows(const struct kcoll_comm_create *a, size_t size, uint64_t x, int own,
			   long ret)
{
	if (own == OWN_BAD_FLAGS)
		fz_count(FZ_ROW_CC_BADFLAGS, ret);
	else if (a->flags & KCOLL_COMM_TRANSPORT_RDMA)
		fz_count(FZ_ROW_CC_RDMA, ret);
	else if (a->flags & KCOLL_COMM_TRANSPORT_TCP)
		fz_count(FZ_ROW_CC_TCP, ret);
	if (size != sizeof(*a))
		fz_count(size < sizeof(*a) ? FZ_ROW_CC_OLDSIZE : FZ_ROW_CC_BIGSIZE, ret);
	if (size >= KCOLL_COMM_CREATE_SIZE_VER1 && X_SECRET(x))
		fz_count(FZ_ROW_CC_SECRET, ret);
	if (size < KCOLL_COMM_CREATE_SIZE_VER2)
		return;
	if (own == OWN_BAD_TABLE)
		fz_count(FZ_ROW_CC_BADLOC, ret);
	else if (own == OWN_BAD_FRAME)
		fz_count(FZ_ROW_CC_LOCFRAME, ret);
	else if (a->locality)
		fz_count(FZ_ROW_CC_LOC, ret);
}

void fz_comm_create(struct fz_pool *p, const struct fz_op *op)
{
	const struct fz_env *env = p->env;
	struct fz_comm *c = &p->comm[op->slot[1] % FZ_NCOMM];
	struct kcoll_sockaddr *peers = (void *)(fz_arena + FZ_ARENA_SIZE - 4096 * 24);
	unsigned int nranks = env->nnodes > 1 && op->v[0] % 3 ? env->nnodes : 1, i;
	struct {
		struct kcoll_comm_create a;
		uint8_t tail[64];
	} u = {
		.a = {
			.comm_id = fz_comm_id(env, op->slot[1] % FZ_NCOMM, op->v[1] % 2),
			.rank = nranks > 1 ? env->rank : 0,
			.nranks = nranks,
			.peers = (uintptr_t)peers,
			.peer_size = sizeof(*peers),
			.timeout_ms = nranks > 1 ? 3000 + op->v[2] % 3000 : op->v[2] % 100,
		},
	};
	struct kcoll_comm_create *a = &u.a, sent;
	int fd = fz_fd(p, op), avoid = env->avoid & FZ_AVOID_CREATE_RACE;
	int one_rank = env->avoid & FZ_AVOID_ONE_RANK_COLL;
	int own = op->mut < FZ_MUT_OWN ? -1 :
		  op->mut - FZ_MUT_OWN + (X_BAD(op->v[5]) ? OWN_BAD_FLAGS : 0);
	size_t size;
	long ret;

	for (i = 0; i < 16; i++)
		peers[i] = kt_addr(i < nranks ? i : i % 4);
	switch (own) {
	case 0:		/* a bigger communicator than the rig has: peers never answer */
		a->nranks = 2 + op->v[3] % 15;
		a->rank = env->rank % a->nranks;
		a->timeout_ms = 50 + op->v[3] % 500;
		break;
	case 1:		/* a bad address entry */
		peers[op->v[3] % nranks].family = op->v[3] & 16 ? 0 : (uint16_t)(op->v[3] >> 8);
		memset(peers[op->v[3] % nranks].addr, op->v[3] & 32 ? 0 : 0xff, 16);
		break;
	case 2:		/* a peer entry size other than the struct's */
		a->peer_size = op->v[3] % 64;
		break;
	}
	size = fz_create_ext(a, u.tail, op->v[5], own);
	a->size = size;
	sent = *a;	/* the kernel zeroes the secret of what it writes back */
	/* A field mutation might make it one rank: marked before the call, never unmarked. */
	if (one_rank) {
		pthread_rwlock_wrlock(&fz_stats->one_rank_lock);
		if (fd >= 0 && fd < FZ_MAXFD &&
		    (a->nranks == 1 || op->mut == FZ_MUT_FIELD32 || op->mut == FZ_MUT_FIELD64 ||
		     op->mut == FZ_MUT_BYTE))
			fz_stats->one_rank_fd[fd] = 1;
	}
	pthread_mutex_lock(&p->lock);
	c->fd = fd;
	c->nranks = a->nranks;
	pthread_mutex_unlock(&p->lock);
	if (avoid)
		pthread_mutex_lock(&fz_stats->create_lock);
	ret = fz_ioctl(FZ_COMM_CREATE, fd, KCOLL_IOC_COMM_CREATE, &u, size,
		       KCOLL_COMM_CREATE_SIZE_VER0, own < 0 ? op->mut : 0, op->v[4]);
	if (avoid)
		pthread_mutex_unlock(&fz_stats->create_lock);
	if (one_rank)
		pthread_rwlock_unlock(&fz_stats->one_rank_lock);
	/* The variant as built, not as a generic mutation left it */
	if (own >= 0 || !op->mut)
		fz_create_rows(&sent, size, op->v[5], own, ret);
	pthread_mutex_lock(&p->lock);
	if (!ret) {
		c->handle = a->handle;
		c->nranks = a->nranks;
		c->live = 1;
	}
	pthread_mutex_unlock(&p->lock);
}
