/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll transport interface: what point-to-point, buffers and collectives may ask of the
 * link to a peer, in the shape of net/rds's struct rds_transport.  One ops table per
 * transport (RDMA today: kcoll_rdma_transport); every peer (struct kcoll_conn) points at
 * the table of the transport that reaches it, so the transport is chosen per peer.  The
 * layers above call only through the table; a transport reaches them only through the
 * upcalls they registered (kcoll_transport_set_upcalls()) and the receive dispatch
 * (kcoll_rx_register_handler()).  See Documentation/design.rst, "Transports".
 */
#ifndef _KCOLL_TRANSPORT_H
#define _KCOLL_TRANSPORT_H

#include <linux/types.h>

struct kcoll_comm;
struct kcoll_dev;
struct net;
struct kcoll_conn;
struct kcoll_ctrl;
struct kcoll_region;
struct kcoll_wire_seg;
struct kcoll_req;
struct kcoll_wire_hdr;

/**
 * struct kcoll_conn_upcalls - what a connection tells the layer above it (point-to-point),
 * registered once at load with kcoll_transport_set_upcalls(), so a transport never names it
 * @rx:		a control message arrived; comm->lock not held
 * @acked:	the control message that carried @req was delivered (acknowledged);
 *		comm->lock held
 * @put:	drop the reference on @req that its control message held; no lock held
 * @progress:	the send queue moved or a message was processed: move queued work;
 *		comm->lock not held
 * @peer_left:	the peer said BYE and took our sends numbered below @taken: settle
 *		every request queued on @conn; comm->lock held
 * @peer_gone:	the link of a peer that left was drained: settle what is left; comm->lock
 *		held
 * @fail:	the transport lost @conn's peer or its own resources: fail the comm with
 *		@err (a code of ours, never a peer's), unless the peer left in order, whose
 *		link then just goes away; comm->lock held
 */
struct kcoll_conn_upcalls {
	void (*rx)(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len);
	void (*acked)(struct kcoll_req *req);
	void (*put)(struct kcoll_req *req);
	void (*progress)(struct kcoll_conn *conn);
	void (*peer_left)(struct kcoll_conn *conn, u32 taken);
	void (*peer_gone)(struct kcoll_conn *conn);
	void (*fail)(struct kcoll_conn *conn, int err);
};

/**
 * struct kcoll_link_upcalls - what a transport reports of a link's life to the
 * transport-neutral connection layer (kcoll_conn.c), registered once at load with
 * kcoll_transport_set_link()
 * @up:		@conn's link is established (once, while it connects); comm->lock held
 * @down:	the link of an up @conn broke and is drained: no completion of it runs any
 *		more; comm->lock not held
 * @find_get:	the comm of @net with @comm_id and @rank on this node, referenced, or NULL
 *		(a same-host transport finds the peer's end); no lock held
 * @comm_put:	drop the reference @find_get took
 */
struct kcoll_link_upcalls {
	void (*up)(struct kcoll_conn *conn);
	void (*down)(struct kcoll_conn *conn);
	struct kcoll_comm *(*find_get)(struct net *net, u64 comm_id, u32 rank);
	void (*comm_put)(struct kcoll_comm *comm);
};

/**
 * struct kcoll_dev_upcalls - how device tracking (transport/rdma_dev.c) reaches the control
 * plane, registered by it at load (kcoll_transport_set_dev())
 * @allowed:	may kcoll use the device of this name (the devices= parameter)
 * @publish:	give a new device its sysfs directory.  Return: 0, or a negative errno
 *		with @dev freed (its kobject owned it)
 * @event:	tell the netlink listeners a device came (@added) or went
 * @shutdown:	every communicator on @dev loses its connections and registrations now
 *		(their users see -ENODEV), before the device goes
 * @unpublish:	remove the directory; its last reference frees @dev
 * @rename:	the device has a new name
 *
 * Context: process (the ib_client's callbacks).
 */
struct kcoll_dev_upcalls {
	bool (*allowed)(const char *name);
	int (*publish)(struct kcoll_dev *dev);
	void (*event)(struct kcoll_dev *dev, bool added);
	void (*shutdown)(struct kcoll_dev *dev);
	void (*unpublish)(struct kcoll_dev *dev);
	void (*rename)(struct kcoll_dev *dev);
};

/**
 * struct kcoll_mem_ops - a memory scheme: how peers are given access to a region
 *
 * Several transports share one scheme (loop and TCP copy on the receiving side by the
 * module's own keys, transport/keyed_mem.c; RDMA registers with the device,
 * transport/rdma_mr.c).  Per region (struct kcoll_region):
 * @map:	map @r's pages for the transport; @remote: peers will write into it.
 *		Context: process
 * @unmap:	undo @map (also revokes); the pages stay.  Context: process
 * @revoke:	end the peers' access now; local mappings stay.  Context: process
 * @reg:	make @r's remote keys valid before they are announced (waits, bounded
 *		and killable).  Context: process, comm->teardown_mutex held
 * @post_reg:	queue @r's registration on @conn ahead of the next message, so the
 *		peer sees the keys valid when that message arrives.  Return: 0 or -EIO.
 *		Context: comm->lock; the caller checked the transport's @tx_room for @r's
 *		chunks
 * @segs:	the peer-visible segments of [@off, @off + @len) of @r, at most @max.
 *		Return: their number, or -E2BIG
 */
struct kcoll_mem_ops {
	int (*map)(struct kcoll_comm *comm, struct kcoll_region *r, bool remote);
	void (*unmap)(struct kcoll_region *r);
	void (*revoke)(struct kcoll_region *r);
	int (*reg)(struct kcoll_comm *comm, struct kcoll_region *r);
	int (*post_reg)(struct kcoll_conn *conn, struct kcoll_region *r);
	int (*segs)(struct kcoll_region *r, u64 off, u64 len, struct kcoll_wire_seg *segs,
		    unsigned int max);
};

/**
 * struct kcoll_transport - the operations of one transport
 * @name:	for logs and the documentation ("rdma")
 * @same_host:	every peer it reaches is in this kernel and network namespace: the ranks
 *		of a comm whose peers all use it may meet in memory (kcoll_local.c)
 *
 * Communicators:
 * @attach:	take what a communicator of several ranks needs before it can reach its
 *		peers (RDMA: the device of its own address, a PD, the listener).  Return:
 *		0 or a negative errno, nothing left attached.  Context: process, the comm
 *		not listed yet
 * @detach:	release what @attach took, after every peer's @teardown; a no-op when
 *		nothing is attached.  Context: process, comm->teardown_mutex held
 *
 * Peers:
 * @connect:	start connecting @conn (the active side; the passive side is accepted by
 *		the transport's own listener, which finds the comm by id).  Return: 0 or a
 *		negative errno; the outcome arrives later as a state change of @conn.
 *		Context: process, comm->teardown_mutex held.
 * @teardown:	disconnect @conn and drain it: once it returns, no completion of @conn
 *		runs any more and every request reference its messages held is dropped
 *		(upcalls @put).  Context: process, comm->teardown_mutex held (the caller
 *		cancelled the connection's retry work first).
 *
 * Control messages (KCOLL_WIRE_MSG_SIZE bytes, kcoll_wire.h), all under comm->lock:
 * @ctrl_get:	a free message slot with room to post it, or NULL (none free, or @conn
 *		not up); its fixed part zeroed
 * @ctrl_put:	give back a slot from @ctrl_get that will not be posted
 * @ctrl_post:	send the message filled into @c, @len bytes.  On success the slot comes
 *		back with its completion, which calls upcalls @acked and @put for c->req;
 *		on failure the slot is back already and nothing was sent
 * @ctrl_free:	a slot is free now (a waiter may try @ctrl_get again)
 *
 * Data, under comm->lock:
 * @tx_room:	@n more work items (a write, a registration, a message) fit on @conn now
 * @tx_stalled:	items are outstanding and none completed for @timeout jiffies: the peer
 *		takes nothing (the watchdog fails the comm)
 * @write:	move up to @len bytes at @off of @r into the peer's registered range @seg,
 *		starting @seg_off bytes into it; *@bytes says how many this item took (at
 *		least one).  Completion comes back as upcalls @progress; a failed one fails
 *		the comm.  Return: 0, or -EIO (nothing posted)
 *
 * @mem:		its memory scheme (struct kcoll_mem_ops): how peers reach a region
 */
struct kcoll_transport {
	const char *name;
	bool same_host;

	int (*attach)(struct kcoll_comm *comm);
	void (*detach)(struct kcoll_comm *comm);

	int (*connect)(struct kcoll_conn *conn);
	void (*teardown)(struct kcoll_conn *conn);

	struct kcoll_ctrl *(*ctrl_get)(struct kcoll_conn *conn);
	void (*ctrl_put)(struct kcoll_conn *conn, struct kcoll_ctrl *c);
	int (*ctrl_post)(struct kcoll_conn *conn, struct kcoll_ctrl *c, size_t len);
	bool (*ctrl_free)(struct kcoll_conn *conn);

	bool (*tx_room)(struct kcoll_conn *conn, unsigned int n);
	bool (*tx_stalled)(struct kcoll_conn *conn, unsigned long timeout);
	int (*write)(struct kcoll_conn *conn, struct kcoll_region *r, u64 off, u64 len,
		     const struct kcoll_wire_seg *seg, u64 seg_off, u64 *bytes);

	const struct kcoll_mem_ops *mem;
};

/* transport/rdma.c */
extern const struct kcoll_transport kcoll_rdma_transport;

/* transport/tcp*.c */
extern const struct kcoll_transport kcoll_tcp_transport;
void kcoll_tcp_listen_exit(void);

/* transport/loop.c */
extern const struct kcoll_transport kcoll_loop_transport;
bool kcoll_loop_wants(const struct kcoll_comm *comm);

/* kcoll_transport.c: the layer above, as it registered itself at load. */
extern const struct kcoll_conn_upcalls *kcoll_transport_up;
void kcoll_transport_set_upcalls(const struct kcoll_conn_upcalls *up);
extern const struct kcoll_link_upcalls *kcoll_transport_link;
void kcoll_transport_set_link(const struct kcoll_link_upcalls *link);
extern const struct kcoll_dev_upcalls *kcoll_transport_dev;
void kcoll_transport_set_dev(const struct kcoll_dev_upcalls *dev);

#endif /* _KCOLL_TRANSPORT_H */
