// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane (nl_core.c): communicators: list, get, abort.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/kcoll_netlink.h>

#include "libkcoll_internal.h"
#include "nl_internal.h"

/* ---- communicators ----------------------------------------------------------------------- */

#define PEER(kind, m, ...)	KCOLL_NL_F(kind, struct kcoll_nl_peer, m, __VA_ARGS__)
#define OP(kind, m, ...)	KCOLL_NL_F(kind, struct kcoll_nl_op, m, __VA_ARGS__)
#define COMM(kind, m, ...)	KCOLL_NL_F(kind, struct kcoll_nl_comm, m, __VA_ARGS__)

static const struct kcoll_nl_attr kcoll_nl_peer_attrs[] = {
	[KCOLL_A_PEER_RANK]		= PEER(U32, rank),
	[KCOLL_A_PEER_STATE]		= PEER(U8, state),
	[KCOLL_A_PEER_READY]		= PEER(U8, ready),
	[KCOLL_A_PEER_LEFT]		= PEER(U8, left),
	[KCOLL_A_PEER_LAST_ERR]		= PEER(U32, last_err),
	[KCOLL_A_PEER_PENDING_SENDS]	= PEER(U32, pending_sends),
	[KCOLL_A_PEER_PENDING_RECVS]	= PEER(U32, pending_recvs),
	[KCOLL_A_PEER_IDLE_MS]		= PEER(U32, idle_ms),
	[KCOLL_A_PEER_SGID_INDEX]	= PEER(U32, sgid_index, .dflt = -1),
	[KCOLL_A_PEER_GID_TYPE]		= PEER(U8, gid_type, .dflt = -1),
	[KCOLL_A_PEER_HOST]		= PEER(U32, host, .dflt = UINT32_MAX),
	[KCOLL_A_PEER_NIC]		= PEER(U32, nic, .dflt = UINT32_MAX),
	[KCOLL_A_PEER_LEAF]		= PEER(U32, leaf, .dflt = UINT32_MAX),
	[KCOLL_A_PEER_TRANSPORT]	= PEER(STR, transport),
};

static const struct kcoll_nl_obj kcoll_nl_peer_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_peer, kcoll_nl_peer_attrs);

static const struct kcoll_nl_attr kcoll_nl_op_attrs[] = {
	[KCOLL_A_OP_TYPE]	= OP(U8, type),
	[KCOLL_A_OP_ID]		= OP(U64, id),
	[KCOLL_A_OP_COLL]	= OP(U32, coll),
	[KCOLL_A_OP_BYTES]	= OP(U64, bytes),
	[KCOLL_A_OP_STEP]	= OP(U32, step),
	[KCOLL_A_OP_NSTEPS]	= OP(U32, nsteps),
	[KCOLL_A_OP_WAIT_PEER]	= OP(U32, wait_peer, .dflt = UINT32_MAX),
};

static const struct kcoll_nl_obj kcoll_nl_op_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_op, kcoll_nl_op_attrs);

static const struct kcoll_nl_attr kcoll_nl_comm_attrs[] = {
	[KCOLL_A_COMM_ID]		= COMM(U64, comm_id),
	[KCOLL_A_COMM_RANK]		= COMM(U32, rank),
	[KCOLL_A_COMM_NRANKS]		= COMM(U32, nranks),
	[KCOLL_A_COMM_OWNER_PID]	= COMM(U32, owner_pid),
	[KCOLL_A_COMM_OWNER_UID]	= COMM(U32, owner_uid),
	[KCOLL_A_COMM_STATE]		= COMM(U8, state),
	[KCOLL_A_COMM_ERROR]		= COMM(U32, error),
	[KCOLL_A_COMM_FAILED_RANK]	= COMM(U32, failed_rank, .dflt = UINT32_MAX),
	[KCOLL_A_COMM_DEV_NAME]		= COMM(STR, dev_name),
	[KCOLL_A_COMM_NETNS]		= COMM(U32, netns),
	[KCOLL_A_COMM_TX_BYTES]		= COMM(U64, tx_bytes),
	[KCOLL_A_COMM_RX_BYTES]		= COMM(U64, rx_bytes),
	[KCOLL_A_COMM_TX_OPS]		= COMM(U64, tx_ops),
	[KCOLL_A_COMM_RX_OPS]		= COMM(U64, rx_ops),
	[KCOLL_A_COMM_PEERS_UP]		= COMM(U32, peers_up),
	[KCOLL_A_COMM_PEER]		= KCOLL_NL_ARRAY_OF(struct kcoll_nl_comm, peers, npeers,
							    &kcoll_nl_peer_obj),
	[KCOLL_A_COMM_PEERS_TRUNCATED]	= COMM(FLAG, peers_truncated),
	[KCOLL_A_COMM_OP]		= COMM(NEST, op, .sub = &kcoll_nl_op_obj),
	[KCOLL_A_COMM_LOCAL_RANK]	= COMM(U32, local_rank),
	[KCOLL_A_COMM_LOCAL_SIZE]	= COMM(U32, local_size),
	[KCOLL_A_COMM_HOSTS]		= COMM(U32, hosts),
	[KCOLL_A_COMM_NICS]		= COMM(U32, nics),
	[KCOLL_A_COMM_LEAVES]		= COMM(U32, leaves),
	/* a locality table: the host comes with it */
	[KCOLL_A_COMM_HOST]		= COMM(U32, host,
					       .seen = offsetof(struct kcoll_nl_comm, loc_known),
					       .bit = 1),
	[KCOLL_A_COMM_NIC]		= COMM(U32, nic),
	[KCOLL_A_COMM_LEAF]		= COMM(U32, leaf),
};

const struct kcoll_nl_obj kcoll_nl_comm_obj =
	KCOLL_NL_OBJ(struct kcoll_nl_comm, kcoll_nl_comm_attrs);

void kcoll_nl_comm_list_free(struct kcoll_nl_comm *comms, size_t n)
{
	kcoll_nl_free(&kcoll_nl_comm_obj, comms, n);
}

int kcoll_nl_comm_list(struct kcoll_nl *nl, struct kcoll_nl_comm **comms, size_t *n)
{
	struct nlmsghdr *nlh;

	if (!nl || !comms || !n)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_list: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, NLM_F_DUMP, KCOLL_CMD_COMM_GET, KCOLL_FAMILY_VERSION);
	return kcoll_nl_list(nl, nlh, &kcoll_nl_comm_obj, (void **)comms, n);
}

int kcoll_nl_comm_get(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank,
		      struct kcoll_nl_comm **comm)
{
	struct kcoll_nl_comm *c;
	struct nlmsghdr *nlh;
	size_t n;
	int ret;

	if (!nl || !comm)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_get: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_COMM_GET, KCOLL_FAMILY_VERSION);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, comm_id);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, rank);
	ret = kcoll_nl_list(nl, nlh, &kcoll_nl_comm_obj, (void **)&c, &n);
	if (ret)
		return ret;
	if (n != 1) {
		ret = kcoll_fail(-EBADMSG, "comm-get: %zu answers instead of one", n);
		kcoll_nl_comm_list_free(c, n);
		return ret;
	}
	*comm = c;
	return 0;
}

int kcoll_nl_comm_abort(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank)
{
	struct nlmsghdr *nlh;

	if (!nl)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_abort: no handle");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_COMM_ABORT, KCOLL_FAMILY_VERSION);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, comm_id);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, rank);
	return kcoll_nl_talk(nl, nlh, NULL, NULL);
}
