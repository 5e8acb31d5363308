// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kcoll_comm_split(): children of a communicator without a new TCP rendezvous.
 *
 * 1. Every parent rank's (color, key) is all-gathered over the parent (big-endian, so that
 *    ranks of either byte order agree).
 * 2. Each rank derives its child's members (kcoll_split_members(): by key, then parent rank).
 * 3. The child's rank 0 draws the child's communicator id and secret and sends them to each
 *    other member with point-to-point over the parent: the secret never reaches a rank
 *    outside the child (a broadcast over the parent would hand it to every rank).
 * 4. Every member creates the child with KCOLL_IOC_COMM_CREATE on the parent's handle, with
 *    the addresses the parent's ranks advertised at their bootstrap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkcoll_internal.h"
#include "bootstrap.h"

/* What the child's rank 0 sends each member: comm id (big-endian), then the secret. */
#define KCOLL_SPLIT_MSG_LEN	(8 + KCOLL_SECRET_LEN)

int kcoll_split_members(const int32_t *ck, int nranks, int rank, int *members,
			int *child_rank)
{
	int32_t color = ck[2 * rank];
	int i, n = 0;

	*child_rank = -1;
	if (color == KCOLL_SPLIT_UNDEFINED)
		return 0;
	/* Insertion by key; ranks arrive in parent-rank order, and equal keys keep it. */
	for (int j = 0; j < nranks; j++) {
		if (ck[2 * j] != color)
			continue;
		for (i = n++; i > 0 && ck[2 * members[i - 1] + 1] > ck[2 * j + 1]; i--)
			members[i] = members[i - 1];
		members[i] = j;
	}
	for (i = 0; i < n; i++)
		if (members[i] == rank)
			*child_rank = i;
	return n;
}

static int kcoll_split_check(struct kcoll_comm *parent, int color,
			     const struct kcoll_split_opts *opts, struct kcoll_comm **child)
{
	int err;

	err = kcoll_comm_new_check(child, parent, "kcoll_comm_split",
				   "kcoll_comm_split: child is NULL",
				   "kcoll_comm_split: the parent communicator is NULL");
	if (err)
		return err;
	err = OPTS_VALID(opts, kcoll_split_opts, connect_timeout_ms, KCOLL_SPLIT_OPTS_SZ_VER0);
	if (err)
		return kcoll_fail(err, "kcoll_comm_split: bad kcoll_split_opts (sz or unknown "
				  "fields)");
	if (OPTS_GET(opts, flags, 0))
		return kcoll_fail(-EINVAL, "kcoll_comm_split: unknown flags in kcoll_split_opts");
	if (color < 0 && color != KCOLL_SPLIT_UNDEFINED)
		return kcoll_fail(-EINVAL, "kcoll_comm_split: color %d: a color is >= 0 or "
				  "KCOLL_SPLIT_UNDEFINED", color);
	return 0;
}

/* Prefix the reason a parent's call recorded with what the split was doing. */
static int kcoll_split_fail(int err, const char *step)
{
	char why[256];

	snprintf(why, sizeof(why), "%s", kcoll_last_error());
	return kcoll_fail(err, "kcoll_comm_split: %s: %s", step, why[0] ? why : strerror(-err));
}

/* Step 1: every parent rank's (color, key) into @ck. */
static int kcoll_split_exchange(struct kcoll_comm *p, int color, int key, unsigned int ms,
				int32_t *ck)
{
	KCOLL_OPTS(kcoll_coll_opts, co, .timeout_ms = ms);
	unsigned char mine[8], *all;
	int err;

	all = calloc((size_t)p->nranks, sizeof(mine));
	if (!all)
		return kcoll_fail(-ENOMEM, "out of memory");
	put_be32(mine, (uint32_t)color);
	put_be32(mine + 4, (uint32_t)key);
	err = kcoll_allgather(p, mine, all, sizeof(mine), KCOLL_UINT8, &co);
	if (err) {
		free(all);
		return kcoll_split_fail(err, "all-gather of (color, key) over the parent");
	}
	for (int j = 0; j < p->nranks; j++) {
		ck[2 * j] = (int32_t)get_be32(all + 8 * j);
		ck[2 * j + 1] = (int32_t)get_be32(all + 8 * j + 4);
	}
	free(all);
	return 0;
}

/* Step 3: the child's id and secret, drawn by its rank 0 and sent to its members only. */
static int kcoll_split_secret(struct kcoll_comm *p, const int *members, int n, int child_rank,
			      unsigned int ms, uint64_t *comm_id, unsigned char *secret)
{
	KCOLL_OPTS(kcoll_p2p_opts, po, .timeout_ms = ms);
	unsigned char msg[KCOLL_SPLIT_MSG_LEN];
	size_t got = 0;
	int err = 0;

	if (child_rank == 0) {
		/* No communicator has id 0. */
		do {
			err = kcoll_random_bytes(msg, sizeof(msg));
		} while (!err && !get_be64(msg));
		if (err)
			return kcoll_fail(err, "getrandom: %s", strerror(-err));
		for (int i = 1; i < n && !err; i++) {
			err = kcoll_send(p, msg, sizeof(msg), members[i], &po);
			if (err)
				err = kcoll_split_fail(err, "sending the child's id to a member");
		}
	} else {
		err = kcoll_recv(p, msg, sizeof(msg), members[0], &got, &po);
		if (err)
			err = kcoll_split_fail(err, "receiving the child's id from its rank 0");
		else if (got != sizeof(msg) || !get_be64(msg))
			err = kcoll_fail(-EBADMSG, "kcoll_comm_split: parent rank %d sent a "
					 "malformed child id (%zu bytes)", members[0], got);
	}
	if (!err) {
		*comm_id = get_be64(msg);
		memcpy(secret, msg + 8, KCOLL_SECRET_LEN);
	}
	explicit_bzero(msg, sizeof(msg));
	return err;
}

int kcoll_comm_split(struct kcoll_comm *parent, int color, int key,
		     const struct kcoll_split_opts *opts, struct kcoll_comm **child)
{
	unsigned char secret[KCOLL_SECRET_LEN];
	unsigned int ms = OPTS_GET(opts, timeout_ms, 0);
	struct kcoll_sockaddr *table = NULL;
	struct kcoll_rank_locality *loc = NULL;
	int *members = NULL, n, child_rank;
	int32_t *ck = NULL;
	uint32_t connect_ms;
	uint64_t comm_id = 0;
	int err;

	err = kcoll_split_check(parent, color, opts, child);
	if (err)
		return kcoll_err(err);
	err = kcoll_connect_timeout_ms(OPTS_GET(opts, connect_timeout_ms, 0), &connect_ms);
	if (err)
		return kcoll_err(err);
	ck = calloc((size_t)parent->nranks, 2 * sizeof(*ck));
	members = calloc((size_t)parent->nranks, sizeof(*members));
	if (!ck || !members) {
		err = kcoll_fail(-ENOMEM, "out of memory");
		goto out;
	}
	err = kcoll_split_exchange(parent, color, key, ms, ck);
	if (err)
		goto out;
	n = kcoll_split_members(ck, parent->nranks, parent->rank, members, &child_rank);
	if (!n)
		goto out;	/* KCOLL_SPLIT_UNDEFINED: no child */
	err = kcoll_split_secret(parent, members, n, child_rank, ms, &comm_id, secret);
	if (err)
		goto out;
	table = calloc((size_t)n, sizeof(*table));
	if (parent->loc)
		loc = calloc((size_t)n, sizeof(*loc));
	if (!table || (parent->loc && !loc)) {
		err = kcoll_fail(-ENOMEM, "out of memory");
	} else {
		for (int i = 0; i < n; i++) {
			table[i] = parent->peers[members[i]];
			if (loc)
				loc[i] = parent->loc[members[i]];
		}
		/* The child uses the parent's transport. */
		err = kcoll_comm_create(parent->h, comm_id, secret, child_rank, n, table, loc,
					connect_ms, parent->create_flags, child);
	}
	explicit_bzero(secret, sizeof(secret));
out:
	free(loc);
	free(table);
	free(members);
	free(ck);
	return kcoll_err(err);
}
