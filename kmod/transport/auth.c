// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll connection authentication, shared by the RDMA and TCP transports: both carry the
 * same hello and accept (kcoll_wire.h), RDMA in rdma_cm private data, TCP in the first
 * frame of the stream, and both listeners refuse with the same reasons.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/string.h>
#include <net/ipv6.h>

#include "../kcoll.h"
#include "auth.h"

/**
 * kcoll_wire_mac - a connect MAC: SipHash-2-4 keyed with the communicator's secret
 * @comm:	the communicator
 * @h:		the hello the MAC is about
 * @tag:	KCOLL_WIRE_TAG_HELLO (the hello's own) or KCOLL_WIRE_TAG_ACCEPT (the answer's)
 */
u64 kcoll_wire_mac(const struct kcoll_comm *comm, const struct kcoll_wire_hello *h, u32 tag)
{
	u8 in[KCOLL_WIRE_MAC_LEN];

	kcoll_wire_mac_input(h, tag, in);
	return siphash(in, sizeof(in), &comm->secret);
}

/* The hello we send to (and whose answer we expect from) @conn's peer. */
void kcoll_conn_hello(struct kcoll_conn *conn, struct kcoll_wire_hello *h)
{
	struct kcoll_comm *comm = conn->comm;

	*h = (struct kcoll_wire_hello) {
		.magic = cpu_to_be32(KCOLL_WIRE_MAGIC),
		.version = kcoll_proto_version,
		.comm_id = cpu_to_be64(comm->comm_id),
		.src_rank = cpu_to_be32(comm->rank),
		.dst_rank = cpu_to_be32(conn->peer),
		.nranks = cpu_to_be32(comm->nranks),
	};
	h->mac = cpu_to_be64(kcoll_wire_mac(comm, h, KCOLL_WIRE_TAG_HELLO));
}

/*
 * Active side: did the accepting side prove the secret too?  An impostor listener (another
 * program on the peer's port) could accept without knowing it.
 */
bool kcoll_auth_accept_ok(struct kcoll_conn *conn, const struct kcoll_wire_accept *acc,
			  size_t len)
{
	struct kcoll_wire_hello h;
	__be64 want;

	if (!acc || len < sizeof(*acc) || be32_to_cpu(acc->magic) != KCOLL_WIRE_MAGIC)
		return false;
	kcoll_conn_hello(conn, &h);
	want = cpu_to_be64(kcoll_wire_mac(conn->comm, &h, KCOLL_WIRE_TAG_ACCEPT));
	return !crypto_memneq(&want, &acc->mac, sizeof(want));
}

/* The accept of hello @h: the listener proves it holds @comm's secret too. */
void kcoll_auth_accept_msg(const struct kcoll_comm *comm, const struct kcoll_wire_hello *h,
			   struct kcoll_wire_accept *acc)
{
	*acc = (struct kcoll_wire_accept) {
		.magic = cpu_to_be32(KCOLL_WIRE_MAGIC),
		.version = kcoll_proto_version,
		.mac = cpu_to_be64(kcoll_wire_mac(comm, h, KCOLL_WIRE_TAG_ACCEPT)),
	};
}

/* A refusal for @reason (enum kcoll_wire_reject_reason), with our version. */
void kcoll_auth_reject_msg(u8 reason, struct kcoll_wire_reject *rej)
{
	*rej = (struct kcoll_wire_reject) {
		.magic = cpu_to_be32(KCOLL_WIRE_MAGIC),
		.version = kcoll_proto_version,
		.reason = reason,
	};
}

/**
 * kcoll_auth_hello_ok - the checks of a hello before its communicator is looked up
 * @h:		@len bytes from the peer, or NULL
 * @len:	their number
 *
 * Return: 0, or the enum kcoll_wire_reject_reason to refuse it with.
 */
int kcoll_auth_hello_ok(const struct kcoll_wire_hello *h, size_t len)
{
	BUILD_BUG_ON(sizeof(*h) != KCOLL_WIRE_HELLO_SIZE);
	BUILD_BUG_ON(offsetof(struct kcoll_wire_hello, mac) != KCOLL_WIRE_MAC_LEN);
	BUILD_BUG_ON(offsetof(struct kcoll_wire_hello, reserved1) != KCOLL_WIRE_MAC_LEN - 4);
	BUILD_BUG_ON(sizeof(struct kcoll_wire_accept) != KCOLL_WIRE_ACCEPT_SIZE);
	if (!h || len < sizeof(h->magic) + sizeof(h->version) ||
	    be32_to_cpu(h->magic) != KCOLL_WIRE_MAGIC)
		return KCOLL_REJ_BAD_HELLO;
	/* Before the length: an older peer's shorter hello gets the VERSION answer. */
	if (h->version != kcoll_proto_version) {
		pr_warn_ratelimited("refused a peer speaking protocol version %u (this node: %u)\n",
				    h->version, kcoll_proto_version);
		return KCOLL_REJ_VERSION;
	}
	if (len < sizeof(*h) || memchr_inv(h->reserved0, 0, sizeof(h->reserved0)) ||
	    h->reserved1)
		return KCOLL_REJ_BAD_HELLO;
	return 0;
}

/*
 * Does the request come from the address rank @src has in @comm's peer table?  Every
 * rank connects from its own table address (both transports bind it), so a request from
 * elsewhere names a rank it is not: another host, or another node's local user, claiming a
 * rank's place.  The port is not compared: the connecting side's is ephemeral.
 */
static bool kcoll_auth_src_ok(struct kcoll_comm *comm, const struct sockaddr *from, u32 src)
{
	const struct sockaddr_storage *want;

	if (src >= comm->nranks)
		return false;
	want = &comm->addrs[src];
	if (from->sa_family != want->ss_family)
		return false;
	if (from->sa_family == AF_INET)
		return ((const struct sockaddr_in *)from)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)want)->sin_addr.s_addr;
	if (from->sa_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)from)->sin6_addr,
				       &((const struct sockaddr_in6 *)want)->sin6_addr);
	return false;
}

/**
 * kcoll_auth_peer_ok - the checks of a hello that named @comm
 * @comm:	the communicator of the hello's id and destination rank
 * @h:		the hello, kcoll_auth_hello_ok() passed
 * @from:	the address the connection comes from
 *
 * The source address must be the claimed rank's, then the MAC (constant time: no
 * byte-by-byte guessing) must prove the communicator's secret -- only now, with every
 * field it covers known to name this comm and rank.
 *
 * Return: 0, or the enum kcoll_wire_reject_reason to refuse it with.
 */
int kcoll_auth_peer_ok(struct kcoll_comm *comm, const struct kcoll_wire_hello *h,
		       const struct sockaddr *from)
{
	__be64 want;

	if (!kcoll_auth_src_ok(comm, from, be32_to_cpu(h->src_rank))) {
		pr_warn_ratelimited("comm %llx rank %u: refused a connection claiming rank %u from another address (%pISc)\n",
				    comm->comm_id, comm->rank, be32_to_cpu(h->src_rank), from);
		return KCOLL_REJ_MISMATCH;
	}
	want = cpu_to_be64(kcoll_wire_mac(comm, h, KCOLL_WIRE_TAG_HELLO));
	if (crypto_memneq(&want, &h->mac, sizeof(want))) {
		pr_warn_ratelimited("comm %llx rank %u: refused rank %u (%pISc): it does not hold the communicator's secret\n",
				    comm->comm_id, comm->rank, be32_to_cpu(h->src_rank), from);
		return KCOLL_REJ_AUTH;
	}
	return 0;
}
