/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll private header: the objects of the module and who owns them.
 *
 * Object lifetimes (see Documentation/design.rst):
 *   kcoll_dev	one per RDMA device; born in the ib_client add callback, dies in remove after
 *		every user has dropped its reference.  Memory is owned by its sysfs kobject.
 *   kcoll_ctx	one per open file of /dev/kcoll; freed by the file's release.
 *   kcoll_comm	a communicator; created by COMM_CREATE, owned by its ctx's handle table;
 *		memory owned by its sysfs kobject (kcoll_comm_get/put).  Destroyed by
 *		COMM_DESTROY or the ctx's release, which tear its connections down first.
 *   kcoll_conn	one per peer rank, inside its comm's conns[] array (same lifetime).
 *   kcoll_req	one send or receive; kref held by comm->reqs while it holds hardware
 *		resources, by its DONE message in flight, and by whoever waits for it
 *		(blocking caller or the ctx's request table).  It holds a comm reference.
 *   kcoll_buf	a zero-copy buffer; kref held by its comm's table and every mapping.
 *
 * Lock order: ctx->lock -> comm->teardown_mutex -> kcoll_comms_mutex -> comm->lock.
 */
#ifndef _KCOLL_H
#define _KCOLL_H

#include <linux/completion.h>
#include <linux/scatterlist.h>
#include <linux/socket.h>
#include <linux/wait.h>
#include <linux/mm_types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/siphash.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <linux/kcoll.h>

#include "kcoll_config.h"
#include "kcoll_fault.h"
#include "kcoll_pending.h"
#include "kcoll_state.h"
#include "kcoll_transport.h"
#include "kcoll_wire.h"
#include "../core/kcoll_sched.h"
#include "../core/kcoll_reduce.h"
#include "../core/kcoll_locality.h"

#define KCOLL_VERSION	"0.1.0"

/**
 * struct kcoll_dev - an RDMA device kcoll knows about
 * @ibdev:	the device; valid while @users is held (remove() waits for it)
 * @list:	entry in kcoll_devs; guarded by kcoll_devs_mutex
 * @kobj:	/sys/kernel/kcoll/devices/<name>; its refcount owns the memory
 * @users:	references of code that may touch @ibdev; starts at 1 (the device list's)
 * @drained:	completed when @users drops to zero, so remove() can return
 * @allowed:	kcoll may create comms on it: set at add from devices=, changed by the
 *		netlink DEV_SET command (READ_ONCE/WRITE_ONCE; existing comms are not affected)
 * @removing:	remove() started: no new comm may be published on it (set under
 *		kcoll_devs_mutex before remove() scans the comms under kcoll_comms_mutex)
 * @tos:	type of service of connections started on it, -1: the global tos (netlink
 *		DEV_SET; READ_ONCE/WRITE_ONCE)
 * @gid_index:	GID table index every connection on it must use as its source GID, -1: no
 *		selection (netlink DEV_SET; READ_ONCE/WRITE_ONCE).  6.1's rdma_cm has no
 *		way to choose it, so kcoll checks it when a connection is established (see
 *		kcoll_conn_established()); existing comms are not affected
 */
struct kcoll_dev {
	struct ib_device *ibdev;
	struct list_head list;
	struct kobject kobj;
	refcount_t users;
	struct completion drained;
	bool allowed;
	bool removing;
	int tos;
	int gid_index;
};

/**
 * struct kcoll_ctx - state of one open file of /dev/kcoll
 * @tgid:	process that opened the file (reference held until release)
 * @uid:	its effective uid at open
 * @ncomms, @nreqs, @nbufs: communicators, unconsumed non-blocking requests (transfers
 *		and collectives) and buffers in the file's tables, against the per-file caps
 *		(kcoll_ctx_take())
 * @lock:	guards @comms and the handle counters
 * @comms:	handle -> comm, each entry holding a comm reference
 * @reqs:	non-blocking request id -> struct kcoll_pending of a transfer or a collective
 *		(own xa_lock), each holding a reference (kcoll_pending.c)
 * @maps:	mmap cookie -> buf (own xa_lock), each holding a buf reference
 * @ndone:	completed non-blocking requests not waited for yet (poll() reports POLLIN)
 * @poll_wq:	woken when @ndone grows
 *
 * Freed by kcoll_release() after every comm of it is destroyed.
 */
struct kcoll_ctx {
	struct pid *tgid;
	kuid_t uid;
	struct mutex lock;		/* see @lock above */
	struct xarray comms;
	u32 next_comm;
	struct xarray reqs;
	u32 next_req;
	struct xarray maps;
	u32 next_map;
	atomic_t ndone;
	wait_queue_head_t poll_wq;
	atomic_t ncomms;
	atomic_t nreqs;
	atomic_t nbufs;
};

/* Per connection: control receive buffers posted, control send buffers, send queue size. */
#define KCOLL_RX_DEPTH		64
#define KCOLL_TX_CTRL		64
#define KCOLL_SQ_DEPTH		1024
/* Requests per peer and direction announced or in flight at once; more wait their turn. */
#define KCOLL_P2P_WINDOW	16
/*
 * What a peer may make us keep before we need it (Documentation/wire.rst, "Bounds"): CTS
 * and EAGER messages ahead of their send or receive (a peer that follows the protocol has
 * at most 2 * KCOLL_P2P_WINDOW of each outstanding), and buffer announcements ahead of
 * our own BUF_CREATE (at most 2: every create waits for every peer's announcement).  A
 * peer that sends more fails the communicator with EPROTO.
 */
#define KCOLL_EARLY_MAX		(4 * KCOLL_P2P_WINDOW)
#define KCOLL_BUF_EARLY_MAX	4

struct kcoll_comm;
struct kcoll_local_group;
struct kcoll_req;

/**
 * struct kcoll_req_ops - a request's completion callbacks into the layer that queued it
 * (as rtrs's conf()), so point-to-point never names that layer
 * @done:	the outcome is known, @req->status and @req->result set; or, for an eager
 *		send, its data left with the message (later failures then fail the comm).
 *		Called once; comm->lock held
 * @released:	the request gave its memory and hardware back; no lock held
 */
struct kcoll_req_ops {
	void (*done)(struct kcoll_req *req);
	void (*released)(struct kcoll_req *req);
};

/**
 * struct kcoll_ctrl - one control message buffer (kcoll_wire.h), DMA mapped
 * @cqe:	completion of its SEND or RECV
 * @conn:	connection it belongs to
 * @msg:	KCOLL_WIRE_MSG_SIZE bytes
 * @dma:	its DMA address
 * @req:	for a DONE in flight, the send it completes (holds a reference)
 * @list:	in conn->tx_free while unused (comm->lock)
 */
struct kcoll_ctrl {
	struct ib_cqe cqe;
	struct kcoll_conn *conn;
	void *msg;
	u64 dma;
	struct kcoll_req *req;
	struct list_head list;
};

/**
 * struct kcoll_conn - the RC connection to one peer rank
 * @comm, @peer:	owner and the rank at the other end (constant)
 * @tp:			the transport that reaches the peer (constant; the layers above
 *			call only through it)
 * @state:		enum kcoll_conn_state (comm->lock)
 * @retry_work:		active side: the next connect attempt
 * @last_err:		why the last attempt failed (comm->lock)
 * @tx_free:		the transport's unused control message slots (comm->lock)
 * @sendq, @recvq:	posted sends and receives in sequence order (comm->lock)
 * @send_seq, @recv_seq: next sequence number to give (comm->lock)
 * @cts_early:		CTS messages that arrived before their send was posted (comm->lock)
 * @buf_early:		remote buffer announcements not claimed yet (comm->lock)
 * @eager_early:	EAGER messages whose receive was not announced yet (comm->lock)
 * @ncts_early, @neager_early, @nbuf_early: entries of those lists, each at most
 *			KCOLL_EARLY_MAX (KCOLL_BUF_EARLY_MAX) (comm->lock)
 * @cts_next:		the lowest sequence number the next CTS may carry (comm->lock)
 * @rx_taken:		one past the highest send of the peer whose EAGER or DONE came: what
 *			our BYE tells it we took (comm->lock)
 * @last_ok:		jiffies of the last sign of life of the peer: a message from it, or
 *			the completion (its acknowledgment) of one we sent (comm->lock)
 * @last_tx:		jiffies of the last work request we posted (comm->lock)
 * @sq_moved:		jiffies of the last sign that our send queue moves: a send
 *			completion, or a post onto an empty queue (comm->lock); a peer that
 *			talks but takes none of our messages (it posts no receive) shows here
 * @peer_ready:		the peer's READY arrived (comm->lock)
 * @bye_sent:		our BYE went out on it (comm->lock)
 * @ready_sent:		our READY went out (comm->lock); on an accepted connection it
 *			waits for the peer's (iWARP: the MPA initiator sends first)
 * @peer_left:		the peer's BYE arrived: it destroyed its end (comm->lock)
 * @tp_priv:		the transport's own state of this peer (struct kcoll_rdma_conn,
 *			kcoll_tcp_conn or kcoll_loop_conn), set by its attach and freed by
 *			its detach; NULL before and after, and for the comm's own rank
 *			(TCP: the listener there)
 * @sgid_index:		source GID index of the QP once established (RoCE, IB with a GRH),
 *			-1: not known (comm->lock)
 * @gid_type:		enum ib_gid_type of that entry, -1: not known (comm->lock)
 */
struct kcoll_conn {
	struct kcoll_comm *comm;
	u32 peer;
	const struct kcoll_transport *tp;
	int state;
	struct delayed_work retry_work;
	int last_err;
	struct list_head tx_free;
	struct list_head sendq;
	struct list_head recvq;
	u32 send_seq;
	u32 recv_seq;
	struct list_head cts_early;
	struct list_head buf_early;
	struct list_head eager_early;
	unsigned int ncts_early;
	unsigned int neager_early;
	unsigned int nbuf_early;
	u32 cts_next;
	u32 rx_taken;
	unsigned long last_ok;
	unsigned long last_tx;
	unsigned long sq_moved;
	bool peer_ready;
	bool bye_sent;
	bool ready_sent;
	bool peer_left;
	int sgid_index;
	int gid_type;
	void *tp_priv;
};

/**
 * struct kcoll_region_chunk - up to 511 pages of a region: DMA mapping and registration
 * @sgt:	the chunk's pages, DMA mapped (bidirectional)
 * @mr:		FRWR registration peers write through, or NULL (local use only)
 */
struct kcoll_region_chunk {
	struct sg_table sgt;
	struct ib_mr *mr;
};

/**
 * struct kcoll_region - pages an operation or buffer moves data in and out of
 * (kcoll_region.c).  Owned by whoever embeds it: a request (pinned user pages), a buffer,
 * a collective operation or a communicator's scratch; not shared, not locked: the owner
 * maps it before any hardware use and unmaps it after the last.
 * @pages, @npages:	the pages; @first_off: offset of byte 0 in the first page
 * @len:		bytes
 * @pinned:		user pages (unpinned on release) rather than the module's own
 * @write:		written by the operation (pinned pages are marked dirty)
 * @tp:		transport it is mapped for (kcoll_region_map()), or NULL
 * @ibdev:		device it is mapped on (RDMA)
 * @chunks, @nchunks, @chunk_pages: DMA mappings and registrations
 * @dma:		DMA address of every page
 * @vaddr:		vmap() of the pages for the CPU, or NULL
 * @remote:		has registrations; @registered: their REG_MRs were posted
 * @tp_key:		the transport's id of the region peers write into (loop), or 0
 * @mm, @charged:	the mm whose pinned_vm is charged @charged pages against
 *			RLIMIT_MEMLOCK (mmgrab held), undone on release
 */
struct kcoll_region {
	struct page **pages;
	unsigned int npages;
	unsigned int first_off;
	u64 len;
	bool pinned;
	bool write;
	bool remote;
	bool registered;
	const struct kcoll_transport *tp;
	struct ib_device *ibdev;
	struct kcoll_region_chunk *chunks;
	unsigned int nchunks;
	unsigned int chunk_pages;
	dma_addr_t *dma;
	void *vaddr;
	struct mm_struct *mm;
	unsigned long charged;
	u32 tp_key;
};

/**
 * struct kcoll_comm - a communicator: this rank's view of a group of ranks
 * @kobj:	/sys/kernel/kcoll/comms/<id>-<rank>; its refcount owns the memory
 * @ctx:	owning file context (valid while listed in ctx->comms)
 * @handle, @comm_id, @rank, @nranks, @owner_pid: constant after create
 * @owner_uid:	effective uid of the creator: who may see and abort it over netlink
 * @net:	network namespace of the creator (reference held)
 * @addrs:	every rank's address (constant)
 * @dev:	RDMA device of this rank's address (user reference), @pd on it
 * @listener:	the namespace's listener this comm keeps alive
 * @list:	in kcoll_comms (kcoll_comms_mutex)
 * @teardown_mutex: serialises teardown and buffer creation
 * @lock:	guards @state, @error, @nup and everything marked comm->lock in conns and reqs
 * @state:	KCOLL_COMM_* (uAPI values); see Documentation/design.rst
 * @error:	sticky error once in error or aborted
 * @failed_rank: first rank a connection failed with, or U32_MAX
 * @nup:	connections established
 * @nready:	peers whose READY arrived (every connection of theirs is up)
 * @nbye_acked:	our BYEs the peers acknowledged (destroy waits for them)
 * @leaving:	BYE sent: nothing more is posted (comm->lock)
 * @was_ready:	reached the ready state once (create succeeded even if a peer left since)
 * @wq:		woken on state changes and request completions
 * @reqs:	requests still holding hardware resources (comm->lock); the list holds a ref
 * @nhw:	entries of @reqs, submitted collectives and callers mapping memory
 *		(kcoll_comm_hw_hold()); shutdown waits for it to reach zero
 * @shut:	hardware resources released (teardown_mutex); the comm is a shell
 * @watchdog:	keepalive and dead-peer detection while requests are pending
 * @shutdown_work: disconnects and drains every QP after an error
 * @bufs:	buffer handle -> buf (xa_lock), each holding a buf reference
 * @nbufs:	buffers created so far: the next buffer's sequence number (teardown_mutex)
 * @ops:	collectives submitted and not done, in call order; the first runs (comm->lock)
 * @nops:	collectives submitted so far: the next one's sequence number (comm->lock)
 * @scratch:	scratch memory of the running collective, kept for the next (only the
 *		running op uses it; released at shutdown)
 * @local:	the same-host group of its ranks (kcoll_local.c), a reference, or NULL
 *		before the first fast call (comm->lock)
 * @local_gone:	shut down: it never joins a group again (comm->lock)
 * @scratch_wait: the first collective found teardown_mutex taken and waits to be kicked
 *		when it is unlocked (kcoll_teardown_unlock())
 * @ctrl_waiters: threads waiting for a free control message slot (woken by its completion)
 * @coll_ops, @coll_bytes: collectives completed and their payload bytes
 * @proto_errors: messages peers sent against the protocol (each fails the comm: EPROTO)
 * @conns:	@nranks entries; conns[@rank] is unused
 */
struct kcoll_comm {
	struct kobject kobj;
	struct kcoll_ctx *ctx;
	u32 handle;
	u64 comm_id;
	u32 rank;
	u32 nranks;
	/* Keys the connect MACs; never shown anywhere, wiped on release. */
	siphash_key_t secret;
	bool authenticated;	/* the secret is not all zero */
	pid_t owner_pid;
	kuid_t owner_uid;
	struct net *net;
	struct sockaddr_storage *addrs;
	struct kcoll_dev *dev;
	struct ib_pd *pd;
	struct kcoll_listener *listener;
	struct list_head list;
	struct mutex teardown_mutex;	/* see @teardown_mutex above */
	spinlock_t lock;		/* see @lock above */
	int state;
	int error;
	u32 failed_rank;
	u32 nup;
	u32 nready;
	u32 nbye_acked;
	bool leaving;
	bool was_ready;
	wait_queue_head_t wq;
	struct list_head reqs;
	atomic_t nhw;
	bool shut;
	struct delayed_work watchdog;
	struct work_struct shutdown_work;
	struct xarray bufs;
	u32 nbufs;
	struct list_head ops;
	u32 nops;
	struct kcoll_region scratch;
	bool scratch_wait;
	struct kcoll_local_group *local;
	bool local_gone;
	atomic_t ctrl_waiters;
	atomic64_t coll_ops;
	atomic64_t coll_bytes;
	atomic64_t tx_bytes;
	atomic64_t rx_bytes;
	atomic64_t tx_ops;
	atomic64_t rx_ops;
	atomic64_t proto_errors;
	/*
	 * Locality (kcoll_locality.c), set at creation and constant: per rank host, NIC and
	 * leaf group (@loc.host NULL when COMM_CREATE gave no table: every rank its own
	 * host), this rank's local rank and size.  A per-peer transport choice reads
	 * loc.host[peer] == loc.host[rank].
	 */
	struct kcoll_loc_groups loc;
	struct kcoll_conn conns[];
};

/**
 * struct kcoll_mem - memory of one point-to-point transfer: a range of a region
 * @own:	pinned user memory of the transfer (unused when @r is borrowed)
 * @r:		&@own, a buffer's region (@buf) or a collective operation's region
 * @offset:	byte offset of the transfer in @r
 * @len:	bytes
 * @buf:	buffer reference (its busy count is held), or NULL
 */
struct kcoll_mem {
	struct kcoll_region own;
	struct kcoll_region *r;
	u64 offset;
	u64 len;
	struct kcoll_buf *buf;
};

/**
 * struct kcoll_req - one point-to-point operation
 * @ref:	references (see the header comment)
 * @comm, @conn: owner (the req holds a comm reference, so WAIT works after a destroy)
 * @send:	send or receive
 * @seq:	sequence number in its direction of @conn
 * @state:	enum kcoll_req_state (comm->lock)
 * @status, @result: outcome once done (comm->lock)
 * @mem:	its memory
 * @cts:	send: copy of the receiver's CTS once it arrived (kmalloc'ed)
 * @seg, @seg_off, @sent: send progress through @cts and @mem; a receive's @sent: the
 *		bytes an EAGER brought
 * @done_sent:	send: DONE (or EAGER) posted
 * @eager:	send: the data went inline in an EAGER message (len <= KCOLL_WIRE_EAGER_MAX);
 *		it completes once that is acknowledged (@acked) and the receiver's CTS
 *		arrived (@cts): the CTS says the receive was posted and how large it was
 * @acked:	send, eager: the EAGER's completion arrived (comm->lock)
 * @step_noted:	a collective's eager send told its operation it was done when it was
 *		posted (comm->lock)
 * @keyed:	receive: its CTS announced keys of its own memory (mem.own), which die
 *		with @hw_work before the outcome is reported (kcoll_req_settle())
 * @on_buf:	the transfer holds a zero-copy buffer (set at creation, constant): a
 *		success is reported once @hw_work let go of it, so the caller may destroy it
 * @pending:	how the file's request table and WAIT see it (its id: 0 when blocking)
 * @qlist:	in conn->sendq / conn->recvq (comm->lock)
 * @all:	in comm->reqs while it holds hardware resources (comm->lock)
 * @hw_queued:	@hw_work queued (comm->lock)
 * @hw_work:	releases DMA mappings, registrations and pinned pages
 * @ops:	for a request of a layer above point-to-point (a collective's step): how
 *		point-to-point tells that layer (NULL for the P2P ioctl's requests)
 * @op, @step:	for a step of a collective operation: the operation (a reference) and
 *		the step's index, @ops' business only; @tag: what the CTS carries for the
 *		peer to check
 */
struct kcoll_req {
	struct kref ref;
	struct kcoll_comm *comm;
	struct kcoll_conn *conn;
	bool send;
	u32 seq;
	int state;
	int status;
	u64 result;
	struct kcoll_mem mem;
	struct kcoll_cts *cts;
	u32 seg;
	u64 seg_off;
	u64 sent;
	bool done_sent;
	bool eager;
	bool acked;
	bool step_noted;
	bool keyed;
	bool on_buf;
	struct kcoll_pending pending;
	struct list_head qlist;
	struct list_head all;
	bool hw_queued;
	struct work_struct hw_work;
	const struct kcoll_req_ops *ops;
	struct kcoll_op *op;
	u32 step;
	u64 tag;
};

/**
 * struct kcoll_buf - a zero-copy buffer of a communicator (kcoll_buf.c)
 * @ref:	references: the comm's table (until destroy), the ctx's mmap table (until
 *		destroy), every mapping (vm_ops open/close) and every transfer using it
 * @comm:	owner (a reference: the comm's memory outlives the buffer's users)
 * @handle:	handle in comm->bufs; @seq: creation order on the comm (matches the peers')
 * @cookie:	key in ctx->maps: mmap offset = cookie << PAGE_SHIFT
 * @len:	length asked for; the region holds whole pages
 * @region:	the pages: module-owned, mapped for DMA, CPU and remote writes until
 *		@unmapped
 * @busy:	transfers and collectives in flight on it (destroy: -EBUSY)
 * @unmapped:	the device mappings are gone (destroy or comm shutdown; teardown_mutex)
 * @remote, @remote_len: the segments every peer announced for its copy (nranks entries,
 *		NULL at our own rank), kept for one-sided access by later protocol versions
 *
 * The pages are freed with the last reference, so a mapping outlives destroy safely.
 */
struct kcoll_buf {
	struct kref ref;
	struct kcoll_comm *comm;
	u32 handle;
	u32 seq;
	u32 cookie;
	u64 len;
	struct kcoll_region region;
	atomic_t busy;
	bool unmapped;
	struct kcoll_peer_segs **remote;
};

/* Progress of one step of a collective (kcoll_op.sstate). */
enum kcoll_op_step_state {
	KCOLL_OP_STEP_NEW,	/* not started */
	KCOLL_OP_STEP_POSTED,	/* its request is in flight */
	KCOLL_OP_STEP_ARRIVED,	/* RECV_REDUCE: data in scratch, reduction pending */
	KCOLL_OP_STEP_DONE,
};

/**
 * struct kcoll_op - one collective call executing a core/ schedule (kcoll_op.c)
 * @ref:	references: the comm's queue while not done, every step request, the ctx's
 *		request table (non-blocking) and a blocking caller
 * @comm:	owner (a comm reference)
 * @pending:	how the file's request table and WAIT see it (its id: 0 when blocking)
 * @args, @algo, @dtype, @redop, @chunk: the call
 * @counts:	the v-collectives' arrays (one allocation), referenced by @args
 * @tag:	(op sequence << 32) | schedule fingerprint, checked by the peers in every CTS
 * @steps, @nsteps: the schedule; @next: first step of the next stage
 * @stage_begin, @stage_end: the current stage's steps (comm->lock)
 * @sstate:	per step: KCOLL_STEP_* progress (comm->lock for posted steps)
 * @left:	steps of the current stage not finished
 * @regions:	send, receive and (borrowed) scratch regions, indexed by enum kcoll_buf_id
 * @base:	byte offset of each region's start (buffers: the caller's offset)
 * @own:	regions of pinned user memory the op owns
 * @bufs:	buffers used (their busy counts held), or NULL
 * @state, @status: enum kcoll_op_state and the outcome (comm->lock)
 * @list:	in comm->ops (comm->lock)
 * @work:	the progress engine: runs every local step and posts the next stage
 * @nreqs:	step requests still holding hardware; the regions live until it is zero
 * @counted:	counts in comm->nhw from creation until released (comm->lock)
 * @released:	regions released, the comm's hardware count dropped (comm->lock)
 */
struct kcoll_op {
	struct kref ref;
	struct kcoll_comm *comm;
	struct kcoll_pending pending;
	struct kcoll_coll_args args;
	int algo;
	int dtype;
	int redop;
	u64 chunk;
	u64 *counts;
	u64 tag;
	struct kcoll_step *steps;
	u32 nsteps;
	u32 next;
	u32 stage_begin;
	u32 stage_end;
	u8 *sstate;
	int *sstatus;
	u32 left;
	struct kcoll_region *regions[3];
	u64 base[3];
	struct kcoll_region own[2];
	struct kcoll_buf *bufs[2];
	int state;
	int status;
	struct list_head list;
	struct work_struct work;
	atomic_t nreqs;
	bool counted;
	bool released;
};

/**
 * struct kcoll_cts - a CTS that arrived before its send got to it (conn->cts_early), then
 * owned by that send; or an EAGER message that arrived before its receive was announced
 * (conn->eager_early, freed when a receive takes its data)
 */
struct kcoll_cts {
	struct list_head list;
	u32 len;
	union {		/* followed by the CTS's segments or the EAGER's data */
		struct kcoll_wire_cts cts;
		struct kcoll_wire_eager eager;
	};
};

/* kcoll_main.c: module parameters (the configuration store's: kcoll_config.h) */
extern unsigned int kcoll_max_buf_mb;
extern unsigned int kcoll_max_comms_per_file;
extern unsigned int kcoll_max_reqs_per_file;
extern unsigned int kcoll_max_bufs_per_file;
extern unsigned int kcoll_proto_version;
extern bool kcoll_require_secret;
u64 kcoll_wire_mac(const struct kcoll_comm *comm, const struct kcoll_wire_hello *h, u32 tag);
extern struct workqueue_struct *kcoll_wq;

/**
 * struct kcoll_rx_handler - what the layer that owns a message type does with it
 * @handler:	called with the message (at least KCOLL_WIRE_FIXED_SIZE bytes, the magic
 *		checked) from the connection's receive completion, comm->lock not held
 * @type:	enum kcoll_wire_type
 * @after_bye:	still called once the peer said BYE (the connection layer's own types)
 */
struct kcoll_rx_handler {
	void (*handler)(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len);
	u8 type;
	bool after_bye;
};

/*
 * Send a message that is only its type (NOP, READY) in @c, from the transport's ctrl_get.
 * Context: comm->lock held; on failure the slot is back already.
 */
static inline int kcoll_tp_signal(struct kcoll_conn *conn, struct kcoll_ctrl *c, u8 type)
{
	struct kcoll_wire_signal *m = c->msg;

	m->hdr.type = type;
	return conn->tp->ctrl_post(conn, c, sizeof(*m));
}

/* A transport lost @conn's peer or its resources: the upcall, for callers without comm->lock. */
static inline void kcoll_transport_fail(struct kcoll_conn *conn, int err)
{
	spin_lock_bh(&conn->comm->lock);
	kcoll_transport_up->fail(conn, err);
	spin_unlock_bh(&conn->comm->lock);
}

/* kcoll_rx.c */
int kcoll_rx_register_handler(const struct kcoll_rx_handler *h);
int kcoll_rx_register_handlers(const struct kcoll_rx_handler *hs, unsigned int n);
int kcoll_rx_dispatch(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len);

/* kcoll_comm.c */
int kcoll_comm_init(void);
void kcoll_comm_exit(void);
long kcoll_ioctl_comm_create(struct kcoll_ctx *ctx, void __user *uarg);

/* kcoll_locality.c */
int kcoll_comm_check_locality(const struct kcoll_comm_create *arg);
int kcoll_comm_read_locality(struct kcoll_comm *comm, const struct kcoll_comm_create *arg);
void kcoll_comm_free_locality(struct kcoll_comm *comm);
u32 kcoll_comm_sched_local_size(const struct kcoll_comm *comm);
long kcoll_ioctl_comm_destroy(struct kcoll_ctx *ctx, void __user *uarg);
long kcoll_ioctl_comm_abort(struct kcoll_ctx *ctx, void __user *uarg);
long kcoll_ioctl_comm_query(struct kcoll_ctx *ctx, void __user *uarg);
void kcoll_buf_shutdown(struct kcoll_comm *comm);
void kcoll_ctx_destroy_comms(struct kcoll_ctx *ctx);
void kcoll_comm_fail(struct kcoll_comm *comm, int err, u32 rank);
void kcoll_comm_set_error_locked(struct kcoll_comm *comm, int err, u32 rank);
void kcoll_comm_shutdown_dev(struct kcoll_dev *dev);
struct kcoll_comm *kcoll_comm_find_get(struct net *net, u64 comm_id, u32 rank);
unsigned int kcoll_comm_count(void);
int kcoll_comm_walk(unsigned long *pos, int (*fn)(struct kcoll_comm *comm, void *arg),
		    void *arg);
void kcoll_comm_admin_abort(struct kcoll_comm *comm);

/**
 * struct kcoll_comm_upcalls - what the layers below the control plane need of a
 * communicator's owner; registered by kcoll_comm.c at load (kcoll_comm_set_upcalls())
 * @fail:		move @comm to the error state with a sticky error (the first wins):
 *			every pending and later operation fails with @err; @rank is the
 *			peer involved, or U32_MAX.  Context: process or softirq, comm->lock
 *			not held
 * @fail_locked:	the same with comm->lock held
 * @teardown_unlock:	unlock comm->teardown_mutex, and restart a collective that found
 *			it taken (kcoll_op.c).  Context: process
 */
struct kcoll_comm_upcalls {
	void (*fail)(struct kcoll_comm *comm, int err, u32 rank);
	void (*fail_locked)(struct kcoll_comm *comm, int err, u32 rank);
	void (*teardown_unlock)(struct kcoll_comm *comm);
};

/* kcoll_state.c: set once at load, read-only afterwards. */
extern const struct kcoll_comm_upcalls *kcoll_comm_up;
void kcoll_comm_set_upcalls(const struct kcoll_comm_upcalls *up);

/*
 * The communicator's own primitives, inline so that every layer may use them: its
 * references (the last put frees it, kcoll_comm.c's kobject release), the file's handle
 * table, and the count of users of its device and PD.
 */
static inline void kcoll_comm_get(struct kcoll_comm *comm)
{
	kobject_get(&comm->kobj);
}

static inline void kcoll_comm_put(struct kcoll_comm *comm)
{
	kobject_put(&comm->kobj);
}

/* The communicator of @ctx's @handle, referenced, or NULL. */
static inline struct kcoll_comm *kcoll_comm_lookup(struct kcoll_ctx *ctx, u32 handle)
{
	struct kcoll_comm *comm;

	mutex_lock(&ctx->lock);
	comm = xa_load(&ctx->comms, handle);
	if (comm)
		kcoll_comm_get(comm);
	mutex_unlock(&ctx->lock);
	return comm;
}

/**
 * kcoll_comm_hw_hold - count a user of the comm's device and PD in nhw
 * @comm:	the communicator
 *
 * Context: teardown_mutex held, comm not shut: shutdown, which waits for nhw to reach zero
 * before it releases the device, then waits for this user too.
 */
static inline void kcoll_comm_hw_hold(struct kcoll_comm *comm)
{
	lockdep_assert_held(&comm->teardown_mutex);
	atomic_inc(&comm->nhw);
}

/* Drop a kcoll_comm_hw_hold() count; under comm->lock, which shutdown takes after nhw is 0. */
static inline void kcoll_comm_hw_unhold(struct kcoll_comm *comm)
{
	spin_lock_bh(&comm->lock);
	if (atomic_dec_and_test(&comm->nhw))
		wake_up_all(&comm->wq);
	spin_unlock_bh(&comm->lock);
}

/* kcoll_conn.c: a connection's transport-neutral life (READY, BYE, up and down) */
int kcoll_conn_init(void);
void kcoll_comm_nudge(struct kcoll_comm *comm);

/* transport/rdma_conn.c, rdma_cm.c (the RDMA transport; its operations: transport/rdma.h) */
int kcoll_conn_accept(struct kcoll_comm *comm, struct rdma_cm_id *id,
		      const struct kcoll_wire_hello *h);
int kcoll_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
void kcoll_conn_retry_work(struct work_struct *work);

/* transport/rdma_listen.c */
struct kcoll_listener;
struct kcoll_listener *kcoll_listener_get(struct net *net, u16 port);
void kcoll_listener_put(struct kcoll_listener *l);
void kcoll_listen_keep(u16 port);
void kcoll_listeners_exit(void);
int kcoll_listen_request(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/* kcoll_region.c */
int kcoll_region_charge(struct kcoll_region *r, unsigned long npages);
int kcoll_region_pin(struct kcoll_region *r, u64 uaddr, u64 len, bool write);
int kcoll_region_alloc(struct kcoll_region *r, u64 len, gfp_t gfp);
int kcoll_region_map(struct kcoll_comm *comm, struct kcoll_region *r, bool remote, bool cpu);
void kcoll_region_revoke(struct kcoll_region *r);
void kcoll_region_unmap(struct kcoll_region *r);
void kcoll_region_release(struct kcoll_region *r);
int kcoll_region_register(struct kcoll_comm *comm, struct kcoll_region *r);
int kcoll_region_segs(struct kcoll_region *r, u64 off, u64 len, struct kcoll_wire_seg *segs,
		      unsigned int max);
void *kcoll_region_ptr(struct kcoll_region *r, u64 off);
void kcoll_region_copy(struct kcoll_region *r, u64 off, void *buf, u64 len, bool to_region);

/* kcoll_buf.c */
long kcoll_ioctl_buf_create(struct kcoll_ctx *ctx, void __user *uarg);
long kcoll_ioctl_buf_destroy(struct kcoll_ctx *ctx, void __user *uarg);
int kcoll_buf_mmap(struct kcoll_ctx *ctx, struct vm_area_struct *vma);
struct kcoll_buf *kcoll_buf_use(struct kcoll_comm *comm, u32 handle, u64 off, u64 len);
void kcoll_buf_unuse(struct kcoll_buf *buf);
int kcoll_buf_rx_init(void);
void kcoll_buf_drop_all(struct kcoll_comm *comm);
void kcoll_ctx_drop_maps(struct kcoll_ctx *ctx);

/* kcoll_coll.c, kcoll_op.c */
long kcoll_ioctl_coll(struct kcoll_ctx *ctx, void __user *uarg);
void kcoll_op_put(struct kcoll_op *op);
void kcoll_coll_kick(struct kcoll_comm *comm);
void kcoll_coll_shutdown(struct kcoll_comm *comm);
void kcoll_local_leave(struct kcoll_comm *comm);
void kcoll_teardown_unlock(struct kcoll_comm *comm);

/* kcoll_engine.c */
/* What the control plane shows of an engine; serves: 0 no, 1 declares, 2 serves now. */
struct kcoll_engine_info {
	char name[32];
	bool builtin;
	u32 priority;
	u8 serves[KCOLL_NUM_DATATYPES][KCOLL_NUM_RED_OPS];
};

int kcoll_engine_info_get(u32 idx, struct kcoll_engine_info *out);
int kcoll_engine_choose(const char *name, u32 dt, u32 op);
int kcoll_engine_init(struct kobject *dir, void (*event)(const char *name, u32 priority));
void kcoll_engine_exit(void);
void kcoll_engine_reduce3(void *dst, const void *a, const void *b, size_t count,
			  enum kcoll_datatype dt, enum kcoll_red_op op);
void kcoll_engine_finalize(void *buf, size_t count, enum kcoll_datatype dt, enum kcoll_red_op op,
			   unsigned int nranks);

/* kcoll_p2p.c */
int kcoll_req_queue(struct kcoll_req *req);
struct kcoll_req *kcoll_req_new(struct kcoll_comm *comm, u32 peer, bool send);
long kcoll_ioctl_p2p(struct kcoll_ctx *ctx, void __user *uarg);
int kcoll_p2p_init(void);
void kcoll_req_complete(struct kcoll_req *req, int status, u64 result);
void kcoll_req_put(struct kcoll_req *req);
void kcoll_proto_error(struct kcoll_conn *conn, const char *what);
void kcoll_proto_error_locked(struct kcoll_conn *conn, const char *what);
void kcoll_comm_watchdog(struct work_struct *work);

/* transport/rdma_dev.c */
int kcoll_ib_init(void);
void kcoll_ib_exit(void);
unsigned int kcoll_dev_count(void);
struct kcoll_dev *kcoll_dev_get_by_name(const char *name);
struct kcoll_dev *kcoll_dev_get_by_ibdev(struct ib_device *ibdev);
struct kcoll_dev *kcoll_dev_get_nth(unsigned long pos);
void kcoll_dev_put(struct kcoll_dev *dev);
const char *kcoll_dev_node_type(struct kcoll_dev *dev);

/*
 * The kobj_type of a sysfs directory embedded as @member in a kmalloc'ed @type that its
 * last kobject_put() frees; @name##_groups comes from ATTRIBUTE_GROUPS(@name).
 */
#define KCOLL_KOBJ_TYPE_KFREE(name, type, member)				\
static void name##_release(struct kobject *kobj)				\
{										\
	kfree(container_of(kobj, type, member));				\
}										\
static const struct kobj_type name##_ktype = {					\
	.release	= name##_release,					\
	.sysfs_ops	= &kobj_sysfs_ops,					\
	.default_groups	= name##_groups,					\
}

/* kcoll_sysfs.c */
int kcoll_sysfs_init(void);
void kcoll_sysfs_exit(void);
int kcoll_sysfs_dev_add(struct kcoll_dev *dev);
void kcoll_sysfs_dev_del(struct kcoll_dev *dev);
void kcoll_sysfs_dev_rename(struct kcoll_dev *dev);
struct kobject *kcoll_sysfs_subdir(const char *name, umode_t mode);

/*
 * What a call on @comm gets once it is not ready (shut down, or shutting down): its sticky
 * error (ENODEV after device removal, ...), or ENOTCONN before it had one (still
 * connecting, destroyed).  The error is set once, under comm->lock, before shutdown.
 */
static inline int kcoll_comm_unready(const struct kcoll_comm *comm)
{
	int err = READ_ONCE(comm->error);

	return err ? err : -ENOTCONN;
}

/* What a new call on @comm gets: 0 while it is ready, else as kcoll_comm_unready(). */
static inline int kcoll_comm_usable(struct kcoll_comm *comm)
{
	int ret;

	spin_lock_bh(&comm->lock);
	ret = comm->state == KCOLL_COMM_READY ? 0 : kcoll_comm_unready(comm);
	spin_unlock_bh(&comm->lock);
	return ret;
}

/*
 * The transport a comm's memory is mapped and registered with: its own slot's, which is
 * every peer's today (a comm that mixes transports needs one mapping per transport).
 */
static inline const struct kcoll_transport *kcoll_comm_mem_tp(const struct kcoll_comm *comm)
{
	return comm->conns[comm->rank].tp;
}

/* kcoll_chrdev.c */
int kcoll_chrdev_init(void);
void kcoll_chrdev_exit(void);
unsigned int kcoll_ctx_count(void);
u64 kcoll_features(void);
u64 kcoll_ioctls(void);

/**
 * kcoll_ctx_take - take one of a file's @max slots for a communicator, request or buffer
 * @count:	the file's counter (ctx->ncomms, ->nreqs or ->nbufs)
 * @max:	the module parameter capping it (a value: writable at any time, read once)
 *
 * Bounds the kernel memory one open file can hold beyond RLIMIT_MEMLOCK and its memory
 * cgroup (Documentation/security.rst).  kcoll_ctx_give() returns the slot.
 * Return: 0, or -EMFILE when all are taken.
 */
static inline int kcoll_ctx_take(atomic_t *count, unsigned int max)
{
	if (atomic_inc_return(count) > max) {
		atomic_dec(count);
		return -EMFILE;
	}
	return 0;
}

/* Give back a slot kcoll_ctx_take() took. */
static inline void kcoll_ctx_give(atomic_t *count)
{
	atomic_dec(count);
}

/* kcoll_uarg.c */
int kcoll_uarg_copy_in(void *karg, size_t ksize, size_t min_size, void __user *uarg,
		       u32 *usize);
int kcoll_uarg_copy_out(void __user *uarg, u32 usize, const void *karg, size_t ksize);

/* kcoll_main.c */
bool kcoll_dev_name_allowed(const char *name);

#endif /* _KCOLL_H */
