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

struct kcoll_nl_comms {
	struct kcoll_nl_comm *comms;
	size_t n;
};

static int kcoll_nl_parse_peer(const struct nlattr *nest, struct kcoll_nl_comm *c)
{
	struct kcoll_nl_peer *p = kcoll_nl_grow((void **)&c->peers, &c->npeers, sizeof(*p));
	const struct nlattr *a;

	if (!p)
		return -ENOMEM;
	p->sgid_index = -1;
	p->gid_type = -1;
	p->host = p->nic = p->leaf = UINT32_MAX;
	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_PEER_RANK:
			p->rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_STATE:
			p->state = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_PEER_READY:
			p->ready = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_PEER_LEFT:
			p->left = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_PEER_LAST_ERR:
			p->last_err = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_PENDING_SENDS:
			p->pending_sends = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_PENDING_RECVS:
			p->pending_recvs = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_IDLE_MS:
			p->idle_ms = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_SGID_INDEX:
			p->sgid_index = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_GID_TYPE:
			p->gid_type = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_PEER_HOST:
			p->host = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_NIC:
			p->nic = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_LEAF:
			p->leaf = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_PEER_TRANSPORT:
			snprintf(p->transport, sizeof(p->transport), "%s", mnl_attr_get_str(a));
			break;
		}
	}
	return 0;
}

static void kcoll_nl_parse_op(const struct nlattr *nest, struct kcoll_nl_op *op)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_OP_TYPE:
			op->type = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_OP_ID:
			op->id = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_OP_COLL:
			op->coll = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_OP_BYTES:
			op->bytes = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_OP_STEP:
			op->step = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_OP_NSTEPS:
			op->nsteps = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_OP_WAIT_PEER:
			op->wait_peer = mnl_attr_get_u32(a);
			break;
		}
	}
}

static int kcoll_nl_comm_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl_comms *l = data;
	struct kcoll_nl_comm *c;
	const struct nlattr *a;

	c = kcoll_nl_grow((void **)&l->comms, &l->n, sizeof(*c));
	if (!c)
		goto nomem;
	c->failed_rank = UINT32_MAX;
	c->op.wait_peer = UINT32_MAX;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case KCOLL_A_COMM_ID:
			c->comm_id = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_RANK:
			c->rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_NRANKS:
			c->nranks = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_OWNER_PID:
			c->owner_pid = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_OWNER_UID:
			c->owner_uid = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_STATE:
			c->state = mnl_attr_get_u8(a);
			break;
		case KCOLL_A_COMM_ERROR:
			c->error = (int32_t)mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_FAILED_RANK:
			c->failed_rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_DEV_NAME:
			kcoll_nl_strcpy(c->dev_name, sizeof(c->dev_name), a);
			break;
		case KCOLL_A_COMM_NETNS:
			c->netns = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_TX_BYTES:
			c->tx_bytes = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_RX_BYTES:
			c->rx_bytes = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_TX_OPS:
			c->tx_ops = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_RX_OPS:
			c->rx_ops = mnl_attr_get_u64(a);
			break;
		case KCOLL_A_COMM_PEERS_UP:
			c->peers_up = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_PEER:
			if (kcoll_nl_parse_peer(a, c))
				goto nomem;
			break;
		case KCOLL_A_COMM_PEERS_TRUNCATED:
			c->peers_truncated = 1;
			break;
		case KCOLL_A_COMM_OP:
			kcoll_nl_parse_op(a, &c->op);
			break;
		case KCOLL_A_COMM_LOCAL_RANK:
			c->local_rank = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_LOCAL_SIZE:
			c->local_size = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_HOSTS:
			c->hosts = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_NICS:
			c->nics = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_LEAVES:
			c->leaves = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_HOST:
			c->host = mnl_attr_get_u32(a);
			c->loc_known = 1;
			break;
		case KCOLL_A_COMM_NIC:
			c->nic = mnl_attr_get_u32(a);
			break;
		case KCOLL_A_COMM_LEAF:
			c->leaf = mnl_attr_get_u32(a);
			break;
		}
	}
	return MNL_CB_OK;
nomem:
	errno = ENOMEM;
	return MNL_CB_ERROR;
}

void kcoll_nl_comm_list_free(struct kcoll_nl_comm *comms, size_t n)
{
	size_t i;

	for (i = 0; comms && i < n; i++)
		free(comms[i].peers);
	free(comms);
}

int kcoll_nl_comm_list(struct kcoll_nl *nl, struct kcoll_nl_comm **comms, size_t *n)
{
	struct kcoll_nl_comms l = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	if (!nl || !comms || !n)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_list: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, NLM_F_DUMP, KCOLL_CMD_COMM_GET, KCOLL_FAMILY_VERSION);
	ret = kcoll_nl_talk(nl, nlh, kcoll_nl_comm_cb, &l);
	if (ret) {
		kcoll_nl_comm_list_free(l.comms, l.n);
		return ret;
	}
	*comms = l.comms;
	*n = l.n;
	return 0;
}

int kcoll_nl_comm_get(struct kcoll_nl *nl, uint64_t comm_id, uint32_t rank,
		      struct kcoll_nl_comm **comm)
{
	struct kcoll_nl_comms l = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	if (!nl || !comm)
		return kcoll_fail(-EINVAL, "kcoll_nl_comm_get: missing argument");
	nlh = kcoll_nl_req(nl, nl->family, 0, KCOLL_CMD_COMM_GET, KCOLL_FAMILY_VERSION);
	mnl_attr_put_u64(nlh, KCOLL_A_COMM_ID, comm_id);
	mnl_attr_put_u32(nlh, KCOLL_A_COMM_RANK, rank);
	ret = kcoll_nl_talk(nl, nlh, kcoll_nl_comm_cb, &l);
	if (!ret && l.n != 1)
		ret = kcoll_fail(-EBADMSG, "comm-get: %zu answers instead of one", l.n);
	if (ret) {
		kcoll_nl_comm_list_free(l.comms, l.n);
		return ret;
	}
	*comm = l.comms;
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
