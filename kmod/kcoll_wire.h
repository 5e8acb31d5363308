/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll wire protocol, version 3: what crosses the network between two kcoll nodes.
 * Pure definitions (no kernel dependency beyond fixed-width types), so host unit tests
 * check the layout.  Documented in Documentation/wire.rst; all fields big endian.
 *
 * Connection: rank i connects actively to every rank j < i and accepts from every j > i.
 * A rank whose connections are all up sends READY on each; a communicator is ready when
 * every peer's READY has arrived, so creation completes as a collective (no rank returns
 * while another still connects, and a fast rank's later destroy cannot break a slow one's
 * create).
 * The rdma_cm REQ private data is struct kcoll_wire_hello (<= 56 bytes, the IB CM limit);
 * a refusal carries struct kcoll_wire_reject, an acceptance struct kcoll_wire_accept.
 * Both ends prove the communicator's secret (version 3): the hello's @mac is a SipHash-2-4
 * of its first KCOLL_WIRE_MAC_LEN bytes (tag KCOLL_WIRE_TAG_HELLO), the accept's of the
 * same bytes under KCOLL_WIRE_TAG_ACCEPT; see kcoll_wire_mac_input().
 * A REJECT with KCOLL_REJ_NOT_YET means the peer has not created the communicator yet: the
 * active side retries until its deadline.
 *
 * On an established RC QP, control messages are SENDs of struct kcoll_wire_msg (header +
 * type-specific body); data moves only by RDMA WRITE into memory the receiver announced.
 * No message needs WRITE WITH IMMEDIATE, so iWARP devices work unchanged.
 *
 * Point-to-point, per ordered pair of ranks (A sends to B), matched in posting order:
 *   B: recv #n posted -> registers its memory -> CTS{n, capacity, segments}
 *   A: send #n posted and CTS #n arrived -> RDMA WRITEs into the segments -> DONE{n, len}
 *   B: DONE #n arrives -> (RC ordering: every WRITE before it has landed) recv #n complete
 * Messages of at most KCOLL_WIRE_EAGER_MAX bytes go eagerly (version 2):
 *   A: send #n posted -> EAGER{n, len, data} at once, no CTS awaited
 *   B: recv #n announced (its CTS goes out as always) and EAGER #n arrived -> copy, complete
 *   A: EAGER #n acknowledged and CTS #n arrived (capacity check) -> send #n complete
 *
 * Departure: a rank destroying a ready communicator sends BYE on every connection and
 * waits for the acknowledgments before it disconnects.  Its peers then fail only what
 * they had pending with it (ECONNRESET); a disconnect without BYE (a crash) fails the
 * whole communicator.
 *
 * Liveness: while operations are pending, a side that has posted nothing for a quarter of
 * op_timeout_ms sends a NOP; the RC transport's acknowledgment of any message proves the
 * peer alive.  No sign of life for op_timeout_ms fails the communicator with ETIMEDOUT.
 */
#ifndef _KCOLL_WIRE_H
#define _KCOLL_WIRE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#include <linux/types.h>
#endif

#define KCOLL_WIRE_MAGIC	0x4b434f4cU	/* "KCOL" */
#define KCOLL_PROTO_VERSION	3	/* 2: EAGER; 3: the secret's MACs */

/**
 * struct kcoll_wire_hello - rdma_cm REQ private data
 * @magic:	KCOLL_WIRE_MAGIC
 * @version:	the connecting side's protocol version
 * @reserved0:	0
 * @comm_id:	the communicator
 * @src_rank:	the connecting rank
 * @dst_rank:	the rank it wants
 * @nranks:	the communicator's size
 * @reserved1:	0 (the MAC input puts its tag here)
 * @mac:	SipHash-2-4 of kcoll_wire_mac_input(hello, KCOLL_WIRE_TAG_HELLO) keyed with the
 *		communicator's secret (its 16 bytes read as two little-endian u64)
 */
struct kcoll_wire_hello {
	__be32 magic;
	__u8 version;
	__u8 reserved0[3];
	__be64 comm_id;
	__be32 src_rank;
	__be32 dst_rank;
	__be32 nranks;
	__be32 reserved1;
	__be64 mac;
};

#define KCOLL_WIRE_HELLO_SIZE	40
#define KCOLL_WIRE_MAC_LEN	32	/* bytes of the hello the MACs cover */
#define KCOLL_WIRE_TAG_HELLO	0x48454c4fU	/* "HELO" */
#define KCOLL_WIRE_TAG_ACCEPT	0x41435054U	/* "ACPT" */

/**
 * struct kcoll_wire_accept - rdma_cm REP (accept) private data, version 3
 * @magic:	KCOLL_WIRE_MAGIC
 * @version:	the accepting side's protocol version
 * @reserved:	0
 * @mac:	SipHash-2-4 of kcoll_wire_mac_input(hello, KCOLL_WIRE_TAG_ACCEPT), the hello
 *		being the one accepted: the listener holds the secret too
 */
struct kcoll_wire_accept {
	__be32 magic;
	__u8 version;
	__u8 reserved[3];
	__be64 mac;
};

#define KCOLL_WIRE_ACCEPT_SIZE	16

/*
 * The bytes a MAC covers: the hello's first KCOLL_WIRE_MAC_LEN bytes with @reserved1
 * replaced by @tag, so a hello's MAC never serves as an accept's and the other way round.
 * Shared with userspace test peers (selftests/lib/kcoll_siphash.h computes SipHash-2-4).
 */
static inline void kcoll_wire_mac_input(const struct kcoll_wire_hello *h, __u32 tag,
					unsigned char out[KCOLL_WIRE_MAC_LEN])
{
	__builtin_memcpy(out, h, KCOLL_WIRE_MAC_LEN);
	out[28] = tag >> 24;	/* @reserved1, big endian */
	out[29] = tag >> 16;
	out[30] = tag >> 8;
	out[31] = tag;
}

enum kcoll_wire_reject_reason {
	KCOLL_REJ_VERSION = 1,	/* protocol version not spoken here; see @version */
	KCOLL_REJ_NOT_YET = 2,	/* no such communicator (yet): retry */
	KCOLL_REJ_MISMATCH = 3,	/* communicator exists with another nranks, or bad ranks */
	KCOLL_REJ_DEVICE = 4,	/* arrived on an RDMA device the communicator does not use */
	KCOLL_REJ_STATE = 5,	/* communicator no longer accepts (aborted, destroyed) */
	KCOLL_REJ_DUPLICATE = 6,	/* this rank is already connected */
	KCOLL_REJ_BAD_HELLO = 7,	/* private data missing, short or without the magic */
	KCOLL_REJ_AUTH = 8,	/* the hello's MAC is wrong: not the communicator's secret */
};

/* rdma_cm REJECT private data. */
struct kcoll_wire_reject {
	__be32 magic;
	__u8 version;		/* the rejecting side's protocol version */
	__u8 reason;		/* enum kcoll_wire_reject_reason */
	__u8 reserved[2];
};

enum kcoll_wire_type {
	KCOLL_MSG_CTS = 1,	/* clear to send: receiver's memory for message @seq */
	KCOLL_MSG_DONE = 2,	/* sender finished writing message @seq */
	KCOLL_MSG_BUF = 3,	/* a collective buffer's segments, for buffer @seq */
	KCOLL_MSG_NOP = 4,	/* keepalive: its acknowledgment proves the peer alive */
	KCOLL_MSG_READY = 5,	/* the sender has every connection of the comm up */
	KCOLL_MSG_BYE = 6,	/* the sender destroys its end: an orderly departure */
	KCOLL_MSG_EAGER = 7,	/* message @seq's data inline, sent without waiting for a CTS */
};

/* One registered region the peer may RDMA WRITE into. */
struct kcoll_wire_seg {
	__be64 addr;
	__be32 rkey;
	__be32 len;
};

/*
 * DONE status codes: the whole vocabulary (anything else is a protocol error).  A wire code,
 * not the sender's errno: 90 is what version 2 sent (EMSGSIZE on x86 and most others).
 */
#define KCOLL_WIRE_STATUS_OK		0
#define KCOLL_WIRE_STATUS_MSGSIZE	90	/* larger than the receive: nothing written */

#define KCOLL_WIRE_MSG_SIZE	4096
#define KCOLL_WIRE_MAX_SEGS	((KCOLL_WIRE_MSG_SIZE - 32) / sizeof(struct kcoll_wire_seg))
#define KCOLL_WIRE_EAGER_MAX	(KCOLL_WIRE_MSG_SIZE - 32)	/* data bytes after the header */

struct kcoll_wire_msg {
	__be32 magic;
	__u8 type;		/* enum kcoll_wire_type */
	__u8 reserved0;
	__be16 nsegs;		/* CTS, BUF: entries in @segs */
	__be32 seq;		/* per ordered pair, from 0 */
	__be32 status;		/* DONE: 0 or KCOLL_WIRE_STATUS_MSGSIZE */
	/* CTS: capacity; DONE: bytes written; BUF: buffer length; EAGER: data bytes */
	__be64 len;
	__be64 reserved1;
	struct kcoll_wire_seg segs[];
};

#endif /* _KCOLL_WIRE_H */
