// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll loopback transport, in the shape of net/rds/loop.c: every rank of a communicator
 * whose peer table names only loopback addresses (127.0.0.0/8, ::1) lives in this kernel,
 * in the same network namespace, so no device is needed to reach it.
 *
 * Each peer has one ordered queue of work items (struct kcoll_loop_item): control messages
 * and data writes in posting order, so a DONE is delivered after the data it follows.  One
 * work per peer runs the queue in process context and never under our own comm->lock:
 * a message is handed to the peer's rx upcall, a write is a page copy into the peer's
 * region found by id.  Both happen under kcoll_loop_mutex, which guards the links between
 * the two ends: teardown unlinks under it, so nothing is delivered into a torn down end.
 * A copy also holds kcoll_kmem_lock(), which guards the region ids (keyed_mem.c): revoke
 * removes an id under it, so no copy lands in revoked memory (a receive handler may revoke).
 *
 * Lock order: comm->teardown_mutex, kcoll_loop_mutex, kcoll_kmem_lock(), comm->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/highmem.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "../kcoll.h"
#include "../kcoll_nl.h"
#include "ends.h"
#include "keyed_mem.h"

/* A peer that has not created its end yet is looked for again this often. */
#define KCOLL_LOOP_RETRY_MS	100

enum { KCOLL_LOOP_MSG, KCOLL_LOOP_WRITE };

/* One queued message or write of a peer's queue. */
struct kcoll_loop_item {
	struct list_head list;
	int kind;
	struct kcoll_ctrl *c;		/* MSG: the slot, @len bytes */
	size_t len;
	struct kcoll_region *r;		/* WRITE: @len bytes at @off of @r ... */
	u64 off;
	u32 key;			/* ... into the peer's region @key at @dst */
	u64 dst;
};

/**
 * struct kcoll_loop_conn - the loop transport's end of one peer (conn->tp_priv)
 * @conn:	the connection
 * @peer:	the other end, or NULL (kcoll_loop_mutex)
 * @work:	runs @queue
 * @down:	the peer's end went away: report the link down once @queue ran (comm->lock)
 * @queue:	items posted and not done, in order (comm->lock)
 * @free:	unused items (comm->lock)
 * @nfree:	entries of @free (comm->lock)
 * @moved:	when the head of @queue started waiting or last completed (comm->lock)
 * @tx_free:	unused control slots (comm->lock)
 * @items:	the queue's items: at most KCOLL_SQ_DEPTH outstanding, as an RDMA send queue
 * @ctrl:	the control slots, KCOLL_WIRE_MSG_SIZE bytes each
 */
struct kcoll_loop_conn {
	struct kcoll_conn *conn;
	struct kcoll_loop_conn *peer;
	struct work_struct work;
	bool down;
	struct list_head queue;
	struct list_head free;
	unsigned int nfree;
	unsigned long moved;
	struct list_head tx_free;
	struct kcoll_loop_item items[KCOLL_SQ_DEPTH];
	struct kcoll_ctrl ctrl[KCOLL_TX_CTRL];
};

static DEFINE_MUTEX(kcoll_loop_mutex);

static struct kcoll_loop_conn *kcoll_loop(struct kcoll_conn *conn)
{
	return conn->tp_priv;
}

static void kcoll_loop_work(struct work_struct *work);
static void kcoll_loop_retry(struct work_struct *work);

/**
 * kcoll_loop_wants - the loop transport reaches every peer of this comm
 * @comm:	a comm of several ranks, its peer table read
 *
 * True when every rank's address is a loopback address: they can only be on this node, in
 * the creator's namespace (loopback is per namespace).  RDMA never reaches them (no RDMA
 * device has a loopback address), so no comm that works today changes transport.
 */
bool kcoll_loop_wants(const struct kcoll_comm *comm)
{
	u32 i;

	for (i = 0; i < comm->nranks; i++) {
		const struct sockaddr_storage *a = &comm->addrs[i];

		if (a->ss_family == AF_INET &&
		    ipv4_is_loopback(((const struct sockaddr_in *)a)->sin_addr.s_addr))
			continue;
		if (a->ss_family == AF_INET6 &&
		    ipv6_addr_loopback(&((const struct sockaddr_in6 *)a)->sin6_addr))
			continue;
		return false;
	}
	return true;
}

/*
 * Free every end of @comm (none linked, no work queued).  Each is unpublished under
 * kcoll_loop_mutex first: a peer's kcoll_loop_link() reads conn->tp_priv under it.
 */
static void kcoll_loop_free(struct kcoll_comm *comm)
{
	u32 i;

	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_loop_conn *lc = comm->conns[i].tp_priv;

		if (!lc)
			continue;
		mutex_lock(&kcoll_loop_mutex);
		comm->conns[i].tp_priv = NULL;
		mutex_unlock(&kcoll_loop_mutex);
		kcoll_ctrl_slots_free(lc->ctrl, KCOLL_TX_CTRL);
		kvfree(lc);
	}
}

/* One end: its queue items and control slots.  Context: process, the comm not listed. */
static int kcoll_loop_end_init(struct kcoll_conn *conn, void *end)
{
	struct kcoll_loop_conn *lc = end;
	u32 j;

	lc->conn = conn;
	INIT_WORK(&lc->work, kcoll_loop_work);
	INIT_LIST_HEAD(&lc->queue);
	INIT_LIST_HEAD(&lc->free);
	INIT_LIST_HEAD(&lc->tx_free);
	for (j = 0; j < KCOLL_SQ_DEPTH; j++)
		list_add_tail(&lc->items[j].list, &lc->free);
	lc->nfree = KCOLL_SQ_DEPTH;
	/* Not queued yet: the loop's own retry replaces the RDMA one. */
	INIT_DELAYED_WORK(&conn->retry_work, kcoll_loop_retry);
	return kcoll_ctrl_slots_init(conn, lc->ctrl, KCOLL_TX_CTRL, &lc->tx_free);
}

/* attach: one end per peer.  Context: process. */
static int kcoll_loop_attach(struct kcoll_comm *comm)
{
	int ret = kcoll_tp_ends_alloc(comm, sizeof(struct kcoll_loop_conn), kcoll_loop_end_init);

	if (ret)
		kcoll_loop_free(comm);
	return ret;
}

/* detach: free every end; teardown ran on each.  Context: process, teardown_mutex held. */
static void kcoll_loop_detach(struct kcoll_comm *comm)
{
	lockdep_assert_held(&comm->teardown_mutex);
	kcoll_loop_free(comm);
}

/*
 * Link @lc (our end, active side: the higher rank) to its peer's end, if the peer's comm
 * exists, connects, has the same size and proves the same secret.  Return: 0 (linked, or
 * not there yet: *@again), or a negative errno that fails the comm.
 * Context: process, comm->teardown_mutex held.
 */
static int kcoll_loop_link(struct kcoll_conn *conn, bool *again)
{
	struct kcoll_comm *comm = conn->comm, *pc;
	struct kcoll_loop_conn *lc = kcoll_loop(conn), *pl;
	struct kcoll_conn *pconn;
	int ret = 0;

	*again = false;
	pc = kcoll_transport_link->find_get(comm->net, comm->comm_id, conn->peer);
	if (!pc) {
		*again = true;
		return 0;
	}
	mutex_lock(&kcoll_loop_mutex);
	pconn = &pc->conns[comm->rank];
	pl = pc->nranks == comm->nranks ? pconn->tp_priv : NULL;
	if (!pl || pconn->tp != conn->tp) {
		ret = -ECONNREFUSED;	/* a comm of that id, not one of ours: a mismatch */
		goto out;
	}
	if (crypto_memneq(&pc->secret, &comm->secret, sizeof(comm->secret))) {
		ret = -EACCES;
		goto out;
	}
	spin_lock_bh(&pc->lock);
	if (pc->state != KCOLL_COMM_CONNECTING || pconn->state != KCOLL_CONN_IDLE || pl->peer) {
		spin_unlock_bh(&pc->lock);
		*again = pc->state == KCOLL_COMM_CONNECTING;	/* its last attempt lingers */
		goto out;
	}
	kcoll_conn_change_state(pconn, KCOLL_CONN_CONNECTING);
	lc->peer = pl;
	pl->peer = lc;
	kcoll_transport_link->up(pconn);	/* passive: its READY waits for ours */
	spin_unlock_bh(&pc->lock);

	spin_lock_bh(&comm->lock);
	if (comm->state == KCOLL_COMM_CONNECTING) {
		kcoll_conn_change_state(conn, KCOLL_CONN_CONNECTING);
		kcoll_transport_link->up(conn);
	}
	spin_unlock_bh(&comm->lock);
out:
	mutex_unlock(&kcoll_loop_mutex);
	kcoll_transport_link->comm_put(pc);
	return ret;
}

/* connect: the active side links now or keeps looking.  Context: teardown_mutex held. */
static int kcoll_loop_connect(struct kcoll_conn *conn)
{
	bool again;
	int ret;

	lockdep_assert_held(&conn->comm->teardown_mutex);
	ret = kcoll_loop_link(conn, &again);
	if (!ret && again) {
		spin_lock_bh(&conn->comm->lock);
		conn->last_err = -ETIMEDOUT;
		if (conn->comm->state == KCOLL_COMM_CONNECTING)
			queue_delayed_work(kcoll_wq, &conn->retry_work,
					   msecs_to_jiffies(KCOLL_LOOP_RETRY_MS));
		spin_unlock_bh(&conn->comm->lock);
	}
	return ret;
}

static void kcoll_loop_retry(struct work_struct *work)
{
	struct kcoll_conn *conn = container_of(to_delayed_work(work), struct kcoll_conn,
					       retry_work);
	struct kcoll_comm *comm = conn->comm;
	int ret = 0;

	/*
	 * Shutdown cancels this work before it takes the mutex.  A plain unlock: no
	 * collective runs (nor waits for the mutex) before the comm is ready.
	 */
	mutex_lock(&comm->teardown_mutex);
	if (READ_ONCE(comm->state) == KCOLL_COMM_CONNECTING)
		ret = kcoll_loop_connect(conn);
	mutex_unlock(&comm->teardown_mutex);
	if (ret)
		kcoll_transport_fail(conn, ret);
}

/* Copy @it's bytes into the peer's region.  Context: kcoll_kmem_lock() held. */
static int kcoll_loop_copy_locked(struct kcoll_loop_conn *pl, const struct kcoll_loop_item *it)
{
	struct kcoll_region *src = it->r, *dst;
	u64 done = 0;

	/* The key came from the peer's CTS: it must name memory of that peer, in bounds. */
	dst = kcoll_kmem_find(it->key, pl->conn->comm, it->dst, it->len);
	if (!dst)
		return -EFAULT;
	while (done < it->len) {
		u64 s = src->first_off + it->off + done, d = dst->first_off + it->dst + done;
		size_t n = min3((size_t)(it->len - done), PAGE_SIZE - offset_in_page(s),
				PAGE_SIZE - offset_in_page(d));
		void *sp = kmap_local_page(src->pages[s >> PAGE_SHIFT]);
		void *dp = kmap_local_page(dst->pages[d >> PAGE_SHIFT]);

		memcpy(dp + offset_in_page(d), sp + offset_in_page(s), n);
		kunmap_local(dp);
		kunmap_local(sp);
		done += n;
	}
	return 0;
}

static int kcoll_loop_copy(struct kcoll_loop_conn *pl, const struct kcoll_loop_item *it)
{
	int ret;

	kcoll_kmem_lock();
	ret = kcoll_loop_copy_locked(pl, it);
	kcoll_kmem_unlock();
	return ret;
}

/*
 * Run one item: deliver it to the peer (if linked), then complete it here.  Context: our
 * end's work, no lock held.
 */
static void kcoll_loop_run(struct kcoll_loop_conn *lc, struct kcoll_loop_item *it)
{
	struct kcoll_conn *conn = lc->conn;
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_req *req = NULL;
	int err = -ENOTCONN;
	bool bye = false;

	mutex_lock(&kcoll_loop_mutex);
	if (lc->peer) {
		if (it->kind == KCOLL_LOOP_WRITE) {
			err = kcoll_loop_copy(lc->peer, it);
		} else {
			/* The slot stays ours until the handlers return: no copy needed. */
			kcoll_transport_up->rx(lc->peer->conn, it->c->msg, it->len);
			/* Linked still: the peer's teardown waits for the mutex. */
			kcoll_transport_up->progress(lc->peer->conn);
			err = 0;
		}
	}
	mutex_unlock(&kcoll_loop_mutex);

	spin_lock_bh(&comm->lock);
	list_move(&it->list, &lc->free);
	lc->nfree++;
	lc->moved = jiffies;
	if (!err)
		conn->last_ok = jiffies;
	if (it->kind == KCOLL_LOOP_MSG) {
		bye = ((struct kcoll_wire_hdr *)it->c->msg)->type == KCOLL_MSG_BYE;
		if (!err && bye) {
			comm->nbye_acked++;
			wake_up_all(&comm->wq);
		}
		req = it->c->req;
		it->c->req = NULL;
		list_add(&it->c->list, &lc->tx_free);
		if (atomic_read(&comm->ctrl_waiters))
			wake_up_all(&comm->wq);
		if (req && !err)
			kcoll_transport_up->acked(req);
	}
	spin_unlock_bh(&comm->lock);
	if (req)
		kcoll_transport_up->put(req);
	/* Unlinked: the down report fails the comm (or ends a departed peer's requests). */
	if (err == -EFAULT) {
		pr_err_ratelimited("comm %llx: rank %u: write to rank %u outside its memory\n",
				   comm->comm_id, comm->rank, conn->peer);
		kcoll_transport_fail(conn, -ECONNRESET);
		return;
	}
	if (!err)
		kcoll_transport_up->progress(conn);
}

static void kcoll_loop_work(struct work_struct *work)
{
	struct kcoll_loop_conn *lc = container_of(work, struct kcoll_loop_conn, work);
	struct kcoll_conn *conn = lc->conn;
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_loop_item *it;
	bool down, was_up = false;

	for (;;) {
		spin_lock_bh(&comm->lock);
		it = list_first_entry_or_null(&lc->queue, struct kcoll_loop_item, list);
		down = !it && lc->down;
		if (down) {
			lc->down = false;
			was_up = conn->state == KCOLL_CONN_UP;
			if (was_up)
				kcoll_conn_change_state(conn, KCOLL_CONN_DOWN);
		}
		spin_unlock_bh(&comm->lock);
		if (!it)
			break;
		kcoll_loop_run(lc, it);
		cond_resched();
	}
	/* The peer's end went away; everything we had queued ran (or found it gone). */
	if (down && (was_up || READ_ONCE(conn->peer_left)))
		kcoll_transport_link->down(conn);
}

/*
 * teardown: unlink both ends, stop our work, drop what is queued; the peer's end is told
 * the link is down.  Context: process, comm->teardown_mutex held.
 */
static void kcoll_loop_teardown(struct kcoll_conn *conn)
{
	struct kcoll_loop_conn *lc = kcoll_loop(conn), *pl;
	struct kcoll_comm *comm = conn->comm;
	struct kcoll_loop_item *it, *tmp;
	LIST_HEAD(dropped);

	if (!lc)
		return;
	spin_lock_bh(&comm->lock);
	kcoll_conn_change_state(conn, KCOLL_CONN_DOWN);	/* nothing more is posted */
	spin_unlock_bh(&comm->lock);
	mutex_lock(&kcoll_loop_mutex);
	pl = lc->peer;
	lc->peer = NULL;
	if (pl) {
		pl->peer = NULL;
		spin_lock_bh(&pl->conn->comm->lock);
		pl->down = true;
		queue_work(kcoll_wq, &pl->work);
		spin_unlock_bh(&pl->conn->comm->lock);
	}
	mutex_unlock(&kcoll_loop_mutex);
	cancel_work_sync(&lc->work);

	spin_lock_bh(&comm->lock);
	list_for_each_entry_safe(it, tmp, &lc->queue, list) {
		if (it->kind == KCOLL_LOOP_MSG)
			list_add_tail(&it->c->list, it->c->req ? &dropped : &lc->tx_free);
		list_move(&it->list, &lc->free);
		lc->nfree++;
	}
	spin_unlock_bh(&comm->lock);
	/* The references queued messages held, dropped without comm->lock (upcalls put). */
	while (!list_empty(&dropped)) {
		struct kcoll_ctrl *c = list_first_entry(&dropped, struct kcoll_ctrl, list);

		kcoll_transport_up->put(c->req);
		c->req = NULL;
		spin_lock_bh(&comm->lock);
		list_move(&c->list, &lc->tx_free);
		spin_unlock_bh(&comm->lock);
	}
}

static struct kcoll_ctrl *kcoll_loop_ctrl_get(struct kcoll_conn *conn)
{
	struct kcoll_loop_conn *lc = kcoll_loop(conn);
	struct kcoll_ctrl *c;

	lockdep_assert_held(&conn->comm->lock);
	if (conn->state != KCOLL_CONN_UP || !lc->nfree || list_empty(&lc->tx_free))
		return NULL;
	c = list_first_entry(&lc->tx_free, struct kcoll_ctrl, list);
	list_del_init(&c->list);
	memset(c->msg, 0, KCOLL_WIRE_FIXED_SIZE);
	c->req = NULL;
	return c;
}

static void kcoll_loop_ctrl_put(struct kcoll_conn *conn, struct kcoll_ctrl *c)
{
	lockdep_assert_held(&conn->comm->lock);
	list_add(&c->list, &kcoll_loop(conn)->tx_free);
}

/* Take a queue item for @conn's peer and start the work.  Context: comm->lock held. */
static struct kcoll_loop_item *kcoll_loop_queue(struct kcoll_conn *conn, int kind)
{
	struct kcoll_loop_conn *lc = kcoll_loop(conn);
	struct kcoll_loop_item *it;

	lockdep_assert_held(&conn->comm->lock);
	if (conn->state != KCOLL_CONN_UP || !lc->nfree)
		return NULL;
	it = list_first_entry(&lc->free, struct kcoll_loop_item, list);
	if (list_empty(&lc->queue))
		lc->moved = jiffies;	/* the wait for this one starts now */
	list_move_tail(&it->list, &lc->queue);
	lc->nfree--;
	it->kind = kind;
	conn->last_tx = jiffies;
	queue_work(kcoll_wq, &lc->work);
	return it;
}

static int kcoll_loop_ctrl_post(struct kcoll_conn *conn, struct kcoll_ctrl *c, size_t len)
{
	struct kcoll_wire_hdr *hdr = c->msg;
	struct kcoll_loop_item *it;

	lockdep_assert_held(&conn->comm->lock);
	hdr->magic = cpu_to_be32(KCOLL_WIRE_MAGIC);
	it = kcoll_loop_queue(conn, KCOLL_LOOP_MSG);
	if (!it) {
		kcoll_loop_ctrl_put(conn, c);
		return -EIO;
	}
	it->c = c;
	it->len = len;
	return 0;
}

static bool kcoll_loop_ctrl_free(struct kcoll_conn *conn)
{
	lockdep_assert_held(&conn->comm->lock);
	return !list_empty(&kcoll_loop(conn)->tx_free) && kcoll_loop(conn)->nfree;
}

static bool kcoll_loop_tx_room(struct kcoll_conn *conn, unsigned int n)
{
	lockdep_assert_held(&conn->comm->lock);
	return kcoll_loop(conn)->nfree >= n;
}

static bool kcoll_loop_tx_stalled(struct kcoll_conn *conn, unsigned long timeout)
{
	struct kcoll_loop_conn *lc = kcoll_loop(conn);

	lockdep_assert_held(&conn->comm->lock);
	return !list_empty(&lc->queue) && time_after(jiffies, lc->moved + timeout);
}

/* write: queue a copy of at most one segment's worth; it runs in order with messages. */
static int kcoll_loop_write(struct kcoll_conn *conn, struct kcoll_region *r, u64 off, u64 len,
			    const struct kcoll_wire_seg *seg, u64 seg_off, u64 *bytes)
{
	struct kcoll_loop_item *it;
	u64 dst;

	lockdep_assert_held(&conn->comm->lock);
	if (!len || len > KCOLL_KMEM_SEG_MAX || off > kcoll_kmem_span(r) ||
	    len > kcoll_kmem_span(r) - off ||
	    check_add_overflow(be64_to_cpu(seg->addr), seg_off, &dst))
		return -EIO;
	it = kcoll_loop_queue(conn, KCOLL_LOOP_WRITE);
	if (!it)
		return -EIO;
	it->r = r;
	it->off = off;
	it->len = len;
	it->key = be32_to_cpu(seg->rkey);
	it->dst = dst;
	*bytes = len;
	return 0;
}

const struct kcoll_transport kcoll_loop_transport = {
	.name		= "loop",
	.same_host	= true,
	.attach		= kcoll_loop_attach,
	.detach		= kcoll_loop_detach,
	.connect	= kcoll_loop_connect,
	.teardown	= kcoll_loop_teardown,
	.ctrl_get	= kcoll_loop_ctrl_get,
	.ctrl_put	= kcoll_loop_ctrl_put,
	.ctrl_post	= kcoll_loop_ctrl_post,
	.ctrl_free	= kcoll_loop_ctrl_free,
	.tx_room	= kcoll_loop_tx_room,
	.tx_stalled	= kcoll_loop_tx_stalled,
	.write		= kcoll_loop_write,
	.mem		= &kcoll_kmem_ops,
};
