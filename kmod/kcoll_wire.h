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
 * On an established RC QP, control messages are SENDs of one struct per type (below, each
 * starting with struct kcoll_wire_hdr); data moves only by RDMA WRITE into memory the
 * receiver announced.
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
 * Departure: a rank destroying a ready communicator sends BYE on every connection, with
 * the count of that peer's sends it received, and waits for the acknowledgments before it
 * disconnects.  Its peers complete the sends it counted and fail the rest of what they
 * had pending with it (ECONNRESET); a disconnect without BYE (a crash) fails the whole
 * communicator.
 *
 * Liveness: while operations are pending, a side that has posted nothing for a quarter of
 * op_timeout_ms sends a NOP; the RC transport's acknowledgment of any message proves the
 * peer alive.  No sign of life for op_timeout_ms fails the communicator with ETIMEDOUT.
 */
#ifndef _KCOLL_WIRE_H
#define _KCOLL_WIRE_H

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/types.h>
#else
#include <assert.h>
#include <stdint.h>
#include <linux/types.h>
#endif

#define KCOLL_WIRE_MAGIC	0x4b434f4cU	/* "KCOL" */
#define KCOLL_PROTO_VERSION	4	/* 2: EAGER; 3: the secret's MACs; 4: BYE counts */

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
	KCOLL_MSG_CTS = 1,	/* struct kcoll_wire_cts: receiver's memory for a receive */
	KCOLL_MSG_DONE = 2,	/* struct kcoll_wire_done: sender finished writing a message */
	KCOLL_MSG_BUF = 3,	/* struct kcoll_wire_buf: part of a collective buffer's segments */
	KCOLL_MSG_NOP = 4,	/* struct kcoll_wire_signal: keepalive (its ack: the peer lives) */
	KCOLL_MSG_READY = 5,	/* struct kcoll_wire_signal: the sender has every connection up */
	KCOLL_MSG_BYE = 6,	/* struct kcoll_wire_bye: the sender destroys its end */
	KCOLL_MSG_EAGER = 7,	/* struct kcoll_wire_eager: a message's data, sent without a CTS */
	KCOLL_MSG_TYPES		/* one past the highest type */
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

/*
 * Control messages.  Each is one SEND of at most KCOLL_WIRE_MSG_SIZE bytes: a fixed part of
 * KCOLL_WIRE_FIXED_SIZE bytes, the same size for every type (a shorter SEND is malformed),
 * then the type's array, if it has one.  Every fixed part starts with struct
 * kcoll_wire_hdr, which is all a receiver reads before it knows the type; a field has one
 * meaning, in the one type that has it.  Reserved fields are sent as 0 and ignored.
 */
#define KCOLL_WIRE_MSG_SIZE	4096
#define KCOLL_WIRE_FIXED_SIZE	32
#define KCOLL_WIRE_MAX_SEGS	((KCOLL_WIRE_MSG_SIZE - KCOLL_WIRE_FIXED_SIZE) / \
				 sizeof(struct kcoll_wire_seg))
/* Data bytes an EAGER carries after its fixed part. */
#define KCOLL_WIRE_EAGER_MAX	(KCOLL_WIRE_MSG_SIZE - KCOLL_WIRE_FIXED_SIZE)

/**
 * struct kcoll_wire_hdr - the first 8 bytes of every control message
 * @magic:	KCOLL_WIRE_MAGIC
 * @type:	enum kcoll_wire_type
 * @reserved0:	0
 * @nsegs:	entries of struct kcoll_wire_seg after the fixed part (CTS, BUF); 0 in the
 *		types without segments
 */
struct kcoll_wire_hdr {
	__be32 magic;
	__u8 type;
	__u8 reserved0;
	__be16 nsegs;
};

/**
 * struct kcoll_wire_cts - KCOLL_MSG_CTS, clear to send: a receive was posted
 * @hdr:	@hdr.nsegs: entries in @segs, 0 when @capacity <= KCOLL_WIRE_EAGER_MAX
 * @seq:	the receive's number in this direction of the connection, from 0
 * @reserved1:	0
 * @capacity:	the receive's length in bytes
 * @tag:	the operation the receive belongs to (0 for point-to-point, see wire.rst)
 * @segs:	the receive's registered memory, covering exactly @capacity bytes
 */
struct kcoll_wire_cts {
	struct kcoll_wire_hdr hdr;
	__be32 seq;
	__be32 reserved1;
	__be64 capacity;
	__be64 tag;
	struct kcoll_wire_seg segs[];
};

/**
 * struct kcoll_wire_done - KCOLL_MSG_DONE: the sender wrote message @seq (rendezvous)
 * @hdr:	@hdr.nsegs 0
 * @seq:	the message's number in this direction of the connection
 * @status:	KCOLL_WIRE_STATUS_OK, or KCOLL_WIRE_STATUS_MSGSIZE (nothing written)
 * @len:	bytes written (0 with KCOLL_WIRE_STATUS_MSGSIZE)
 * @reserved1:	0
 */
struct kcoll_wire_done {
	struct kcoll_wire_hdr hdr;
	__be32 seq;
	__be32 status;
	__be64 len;
	__be64 reserved1;
};

/**
 * struct kcoll_wire_eager - KCOLL_MSG_EAGER: a message of at most KCOLL_WIRE_EAGER_MAX
 * bytes, inline, sent without waiting for its CTS (version 2)
 * @hdr:	@hdr.nsegs 0
 * @seq:	the message's number in this direction of the connection
 * @reserved1:	0
 * @len:	bytes in @data
 * @tag:	the operation the send belongs to (as struct kcoll_wire_cts @tag)
 * @data:	the message
 */
struct kcoll_wire_eager {
	struct kcoll_wire_hdr hdr;
	__be32 seq;
	__be32 reserved1;
	__be64 len;
	__be64 tag;
	__u8 data[];
};

/**
 * struct kcoll_wire_buf - KCOLL_MSG_BUF: part of the announcement of a collective buffer
 * @hdr:	@hdr.nsegs: entries in @segs, 1 to KCOLL_WIRE_MAX_SEGS
 * @buf_seq:	the buffer's number on the communicator, from 0 (not a message number)
 * @first_seg:	index of @segs[0] in the whole announcement
 * @len:	the buffer's length in bytes
 * @total_segs:	segments of the whole announcement, 1 to 65535
 * @segs:	segments @first_seg to @first_seg + @hdr.nsegs - 1
 */
struct kcoll_wire_buf {
	struct kcoll_wire_hdr hdr;
	__be32 buf_seq;
	__be32 first_seg;
	__be64 len;
	__be64 total_segs;
	struct kcoll_wire_seg segs[];
};

/**
 * struct kcoll_wire_signal - KCOLL_MSG_NOP, KCOLL_MSG_READY: the type is the whole message
 * @hdr:	@hdr.nsegs 0
 * @reserved1:	0
 * @reserved2:	0
 */
struct kcoll_wire_signal {
	struct kcoll_wire_hdr hdr;
	__be32 reserved1[2];
	__be64 reserved2[2];
};

/**
 * struct kcoll_wire_bye - KCOLL_MSG_BYE: the sender destroys its end (version 4)
 * @hdr:	@hdr.nsegs 0
 * @taken:	how many of the receiver's sends the sender got the data of: the EAGER or
 *		DONE of every send numbered below @taken arrived (they arrive in order)
 * @reserved1:	0
 * @reserved2:	0
 *
 * The count settles the receiver's sends whose own acknowledgment may never come: the
 * departing side disconnects once its BYE is acknowledged, which can flush a send it did
 * receive (wire.rst, "Departure").
 */
struct kcoll_wire_bye {
	struct kcoll_wire_hdr hdr;
	__be32 taken;
	__be32 reserved1;
	__be64 reserved2[2];
};

/* The layouts are the protocol: byte-identical since version 1. */
#define KCOLL_WIRE_ASSERT(x)	static_assert(x, #x)
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_hello) == KCOLL_WIRE_HELLO_SIZE);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_accept) == KCOLL_WIRE_ACCEPT_SIZE);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_reject) == 8);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_seg) == 16);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_hdr) == 8);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_cts) == KCOLL_WIRE_FIXED_SIZE);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_done) == KCOLL_WIRE_FIXED_SIZE);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_eager) == KCOLL_WIRE_FIXED_SIZE);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_buf) == KCOLL_WIRE_FIXED_SIZE);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_signal) == KCOLL_WIRE_FIXED_SIZE);
KCOLL_WIRE_ASSERT(sizeof(struct kcoll_wire_bye) == KCOLL_WIRE_FIXED_SIZE);
KCOLL_WIRE_ASSERT(KCOLL_WIRE_MAX_SEGS == 254 && KCOLL_WIRE_EAGER_MAX == 4064);
#undef KCOLL_WIRE_ASSERT

/*
 * TCP transport framing (Documentation/wire.rst, "TCP"): the stream is a sequence of
 * frames, each struct kcoll_wire_tcp_frame then @len payload bytes.  The connecting rank's
 * first frame is HELLO (payload struct kcoll_wire_hello), answered by ACCEPT (struct
 * kcoll_wire_accept) or REJECT (struct kcoll_wire_reject); then either side sends MSG
 * (one control message, at most KCOLL_WIRE_MSG_SIZE bytes) and DATA (@len bytes for the
 * receiver's region @key at byte @off, 1 to KCOLL_WIRE_TCP_DATA_MAX bytes).  Fields a type
 * does not use are 0.
 */
enum kcoll_wire_tcp_type {
	KCOLL_TCP_HELLO = 1,
	KCOLL_TCP_ACCEPT = 2,
	KCOLL_TCP_REJECT = 3,
	KCOLL_TCP_MSG = 4,
	KCOLL_TCP_DATA = 5,
};

struct kcoll_wire_tcp_frame {
	__be32 magic;		/* KCOLL_WIRE_MAGIC */
	__u8 type;		/* enum kcoll_wire_tcp_type */
	__u8 reserved[3];
	__be32 len;		/* payload bytes after this header */
	__be32 key;		/* DATA: the receiver's region */
	__be64 off;		/* DATA: byte offset in it */
};

#define KCOLL_WIRE_TCP_FRAME_SIZE	24
#define KCOLL_WIRE_TCP_DATA_MAX		(1024U * 1024)
#define KCOLL_WIRE_TCP_PORT		18601	/* default TCP port of the listener */

static_assert(sizeof(struct kcoll_wire_tcp_frame) == KCOLL_WIRE_TCP_FRAME_SIZE,
	      "TCP frame header size");

#endif /* _KCOLL_WIRE_H */
