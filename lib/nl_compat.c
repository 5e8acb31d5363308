// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane: the communicator listing as libkcoll 0.3 to 0.5 returned it.
 *
 * 0.6 appended fields to struct kcoll_nl_peer and struct kcoll_nl_comm.  A program built
 * against an older header walks the returned arrays with the older sizes, so it keeps
 * getting arrays of those: its references are to kcoll_nl_comm_{list,get,list_free}
 * @KCOLL_0.3, which land here, while a program built now binds @@KCOLL_0.6 (nl_comm.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libkcoll.h"
#include "libkcoll_internal.h"

/* The layouts of libkcoll 0.3 to 0.5, frozen. */
struct kcoll_nl_peer_v3 {
	uint32_t rank;
	uint8_t state;
	uint8_t ready;
	uint8_t left;
	int32_t last_err;
	uint32_t pending_sends;
	uint32_t pending_recvs;
	uint32_t idle_ms;
	int32_t sgid_index;
	int gid_type;
};

struct kcoll_nl_comm_v3 {
	uint64_t comm_id;
	uint32_t rank;
	uint32_t nranks;
	uint32_t owner_pid;
	uint32_t owner_uid;
	uint8_t state;
	int32_t error;
	uint32_t failed_rank;
	char dev_name[64];
	uint32_t netns;
	uint64_t tx_bytes, rx_bytes, tx_ops, rx_ops;
	uint32_t peers_up;
	int peers_truncated;
	struct kcoll_nl_op op;
	size_t npeers;
	struct kcoll_nl_peer_v3 *peers;
};

/* The new layouts only append: an old record is a prefix of a new one, copied as is. */
_Static_assert(offsetof(struct kcoll_nl_peer, gid_type) ==
	       offsetof(struct kcoll_nl_peer_v3, gid_type) &&
	       sizeof(struct kcoll_nl_peer_v3) <= sizeof(struct kcoll_nl_peer),
	       "struct kcoll_nl_peer must extend the 0.3 layout");
_Static_assert(offsetof(struct kcoll_nl_comm, peers) ==
	       offsetof(struct kcoll_nl_comm_v3, peers) &&
	       sizeof(struct kcoll_nl_comm_v3) <= sizeof(struct kcoll_nl_comm),
	       "struct kcoll_nl_comm must extend the 0.3 layout");

KCOLL_API void kcoll_nl_comm_list_free_v3(struct kcoll_nl_comm_v3 *comms, size_t n);
KCOLL_API int kcoll_nl_comm_list_v3(struct kcoll_nl *nl, struct kcoll_nl_comm_v3 **comms,
				    size_t *n);
KCOLL_API int kcoll_nl_comm_get_v3(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank,
				   struct kcoll_nl_comm_v3 **comm);

__asm__(".symver kcoll_nl_comm_list_free_v3, kcoll_nl_comm_list_free@KCOLL_0.3");
__asm__(".symver kcoll_nl_comm_list_v3, kcoll_nl_comm_list@KCOLL_0.3");
__asm__(".symver kcoll_nl_comm_get_v3, kcoll_nl_comm_get@KCOLL_0.3");

void kcoll_nl_comm_list_free_v3(struct kcoll_nl_comm_v3 *comms, size_t n)
{
	size_t i;

	for (i = 0; comms && i < n; i++)
		free(comms[i].peers);
	free(comms);
}

/* Old-layout copies of @n records of @c (freed by the caller either way). */
static int kcoll_nl_comm_to_v3(const struct kcoll_nl_comm *c, size_t n,
			       struct kcoll_nl_comm_v3 **out)
{
	struct kcoll_nl_comm_v3 *o = calloc(n ? n : 1, sizeof(*o));
	size_t i, j;

	if (!o)
		return kcoll_fail(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		memcpy(&o[i], &c[i], sizeof(o[i]));
		o[i].peers = NULL;
		if (!c[i].npeers)
			continue;
		o[i].peers = calloc(c[i].npeers, sizeof(*o[i].peers));
		if (!o[i].peers) {
			kcoll_nl_comm_list_free_v3(o, i);
			return kcoll_fail(-ENOMEM, "out of memory");
		}
		for (j = 0; j < c[i].npeers; j++)
			memcpy(&o[i].peers[j], &c[i].peers[j], sizeof(o[i].peers[j]));
	}
	*out = o;
	return 0;
}

int kcoll_nl_comm_list_v3(struct kcoll_nl *nl, struct kcoll_nl_comm_v3 **comms, size_t *n)
{
	struct kcoll_nl_comm *c;
	size_t k;
	int ret;

	if (!comms || !n)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_list: missing argument");
	ret = kcoll_nl_comm_list(nl, &c, &k);
	if (ret)
		return ret;
	ret = kcoll_nl_comm_to_v3(c, k, comms);
	kcoll_nl_comm_list_free(c, k);
	if (!ret)
		*n = k;
	return ret;
}

int kcoll_nl_comm_get_v3(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank,
			 struct kcoll_nl_comm_v3 **comm)
{
	struct kcoll_nl_comm *c;
	int ret;

	if (!comm)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_get: missing argument");
	ret = kcoll_nl_comm_get(nl, comm_id, rank, &c);
	if (ret)
		return ret;
	ret = kcoll_nl_comm_to_v3(c, 1, comm);
	kcoll_nl_comm_list_free(c, 1);
	return ret;
}
