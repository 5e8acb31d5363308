// SPDX-License-Identifier: GPL-2.0
/*
 * Communicators' lifetime: the state machine, errors, abort, BYE, shutdown and destroy.
 * Their uAPI (COMM_CREATE/DESTROY/ABORT) is kcoll_comm_ioctl.c's.
 *
 * States (KCOLL_COMM_* in the uAPI; Documentation/design.rst has the diagram), changed only
 * by kcoll_comm_change_state() (kcoll_state.c):
 *
 *   CREATING --(addresses checked, device found, listener up)--> CONNECTING
 *   CONNECTING --(every peer connected)--> READY
 *   CONNECTING, READY --(peer lost, timeout, device gone)--> ERROR
 *   CREATING, CONNECTING, READY --(COMM_ABORT)--> ABORTED
 *   any --(COMM_DESTROY, close of the file)--> DESTROYED
 *
 * ERROR and ABORTED are sticky: every pending and later operation fails with the stored
 * error.  Leaving CONNECTING/READY queues shutdown_work, which disconnects and drains every
 * QP and only then releases the memory operations were using.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/unaligned.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>

#include "kcoll.h"
#include "kcoll_comm.h"
#include "kcoll_comm_desc.h"
#include "kcoll_nl.h"

/* Every comm on the node (admins see them all); guarded by kcoll_comms_mutex. */
static LIST_HEAD(kcoll_comms);
static DEFINE_MUTEX(kcoll_comms_mutex);
static unsigned int kcoll_ncomms;
static struct kobject *kcoll_comms_kobj;

const char *const kcoll_comm_state_names[] = {
	[KCOLL_COMM_CREATING]	= "creating",
	[KCOLL_COMM_CONNECTING]	= "connecting",
	[KCOLL_COMM_READY]	= "ready",
	[KCOLL_COMM_ERROR]	= "error",
	[KCOLL_COMM_ABORTED]	= "aborted",
	[KCOLL_COMM_DESTROYED]	= "destroyed",
};

unsigned int kcoll_comm_count(void)
{
	return READ_ONCE(kcoll_ncomms);
}

static inline struct kcoll_comm *to_kcoll_comm(struct kobject *kobj)
{
	return container_of(kobj, struct kcoll_comm, kobj);
}

/* Its sysfs directory shows its description: kcoll_comm_groups, kcoll_comm_desc.c. */

/* The last reference: every hardware resource is gone already (kcoll_comm_destroy()). */
static void kcoll_comm_release(struct kobject *kobj)
{
	struct kcoll_comm *comm = to_kcoll_comm(kobj);

	memzero_explicit(&comm->secret, sizeof(comm->secret));
	xa_destroy(&comm->bufs);
	kvfree(comm->addrs);
	kcoll_comm_free_locality(comm);
	if (comm->net)
		put_net(comm->net);
	kvfree(comm);		/* kvzalloc()ed: vmalloc for large nranks */
}

static const struct kobj_type kcoll_comm_ktype = {
	.release	= kcoll_comm_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= kcoll_comm_groups,
};

/**
 * kcoll_comm_find_get - the comm of a namespace with a comm id and rank, referenced
 * @net:	network namespace
 * @comm_id:	communicator id
 * @rank:	rank on this node
 *
 * Used by the listener to route a connect request.  Return: the comm or NULL.
 */
struct kcoll_comm *kcoll_comm_find_get(struct net *net, u64 comm_id, u32 rank)
{
	struct kcoll_comm *comm;

	mutex_lock(&kcoll_comms_mutex);
	list_for_each_entry(comm, &kcoll_comms, list) {
		if (comm->comm_id == comm_id && comm->rank == rank && net_eq(comm->net, net)) {
			kcoll_comm_get(comm);
			mutex_unlock(&kcoll_comms_mutex);
			return comm;
		}
	}
	mutex_unlock(&kcoll_comms_mutex);
	return NULL;
}

/*
 * Fail every request still queued on the comm's connections.  Their memory stays until
 * shutdown has drained the QPs.
 */
static void kcoll_comm_fail_reqs(struct kcoll_comm *comm)
{
	struct kcoll_req *req, *tmp;
	u32 i;

	lockdep_assert_held(&comm->lock);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		list_for_each_entry_safe(req, tmp, &conn->sendq, qlist)
			kcoll_req_complete(req, comm->error, 0);
		list_for_each_entry_safe(req, tmp, &conn->recvq, qlist)
			kcoll_req_complete(req, comm->error, 0);
	}
}

static void kcoll_comm_set_error(struct kcoll_comm *comm, int state, int err, u32 rank)
{
	int old = comm->state;

	lockdep_assert_held(&comm->lock);
	if (comm->state >= KCOLL_COMM_ERROR)
		return;
	if (comm->state != KCOLL_COMM_CREATING && rank < comm->nranks)
		pr_info("comm %llx rank %u: %s (%d) with rank %u\n", comm->comm_id, comm->rank,
			kcoll_comm_state_names[state], err, rank);
	else if (comm->state != KCOLL_COMM_CREATING)
		pr_info("comm %llx rank %u: %s (%d)\n", comm->comm_id, comm->rank,
			kcoll_comm_state_names[state], err);
	kcoll_comm_change_state(comm, state, err);
	comm->error = err;
	if (rank < comm->nranks && comm->failed_rank == U32_MAX)
		comm->failed_rank = rank;
	kcoll_comm_fail_reqs(comm);
	kcoll_coll_kick(comm);
	wake_up_all(&comm->wq);
	queue_work(kcoll_wq, &comm->shutdown_work);
	if (old != KCOLL_COMM_CREATING && state == KCOLL_COMM_ERROR)
		kcoll_nl_event_comm_locked(comm, KCOLL_NL_COMM_FAILED);
	if (old != KCOLL_COMM_CREATING && rank < comm->nranks)
		kcoll_nl_event_peer_lost(comm, rank, err);
}

/**
 * kcoll_comm_fail - move a comm to the error state with a sticky error (first error wins)
 * @comm:	the communicator
 * @err:	negative errno every pending and later operation fails with
 * @rank:	the peer involved, or U32_MAX
 *
 * Context: any process context without comm->lock.
 */
void kcoll_comm_fail(struct kcoll_comm *comm, int err, u32 rank)
{
	spin_lock_bh(&comm->lock);
	kcoll_comm_set_error(comm, KCOLL_COMM_ERROR, err, rank);
	spin_unlock_bh(&comm->lock);
}

/* kcoll_comm_fail() for callers that hold comm->lock. */
void kcoll_comm_set_error_locked(struct kcoll_comm *comm, int err, u32 rank)
{
	kcoll_comm_set_error(comm, KCOLL_COMM_ERROR, err, rank);
}

void kcoll_comm_abort(struct kcoll_comm *comm)
{
	spin_lock_bh(&comm->lock);
	kcoll_comm_set_error(comm, KCOLL_COMM_ABORTED, -ECONNABORTED, U32_MAX);
	spin_unlock_bh(&comm->lock);
}

/*
 * Release every hardware resource: connections (disconnected and drained first), the
 * memory of requests, buffer registrations, the PD and the device reference.  Idempotent;
 * the comm stays as a shell that still answers queries.
 */
void kcoll_comm_shutdown(struct kcoll_comm *comm)
{
	struct kcoll_req *req;
	u32 i;

	for (i = 0; i < comm->nranks; i++)
		cancel_delayed_work_sync(&comm->conns[i].retry_work);
	cancel_delayed_work_sync(&comm->watchdog);
	/* First: peers waiting in a same-host rendezvous for this rank fail now. */
	kcoll_local_leave(comm);

	mutex_lock(&comm->teardown_mutex);
	if (comm->shut) {
		mutex_unlock(&comm->teardown_mutex);
		return;
	}
	for (i = 0; i < comm->nranks; i++)
		comm->conns[i].tp->teardown(&comm->conns[i]);

	/* Drained: whatever requests still hold may now be released. */
	spin_lock_bh(&comm->lock);
	list_for_each_entry(req, &comm->reqs, all) {
		if (!req->hw_queued) {
			req->hw_queued = true;
			queue_work(kcoll_wq, &req->hw_work);
		}
	}
	spin_unlock_bh(&comm->lock);
	wait_event(comm->wq, !atomic_read(&comm->nhw));
	/* The last hw_work drops the lock after it woke us: let it leave the comm. */
	spin_lock_bh(&comm->lock);
	spin_unlock_bh(&comm->lock);

	spin_lock_bh(&comm->lock);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_cts *cts, *tmp;

		list_for_each_entry_safe(cts, tmp, &comm->conns[i].cts_early, list) {
			list_del(&cts->list);
			kfree(cts);
		}
		list_for_each_entry_safe(cts, tmp, &comm->conns[i].eager_early, list) {
			list_del(&cts->list);
			kfree(cts);
		}
	}
	spin_unlock_bh(&comm->lock);
	kcoll_coll_shutdown(comm);
	kcoll_buf_shutdown(comm);
	kcoll_comm_mem_tp(comm)->detach(comm);
	/* The device reference the RDMA transport's attach took (comm->dev, read by dumps). */
	if (comm->dev) {
		struct kcoll_dev *dev = comm->dev;

		/* Dumps read comm->dev under this mutex (kcoll_comm_walk()): clear it there. */
		mutex_lock(&kcoll_comms_mutex);
		WRITE_ONCE(comm->dev, NULL);
		mutex_unlock(&kcoll_comms_mutex);
		kcoll_dev_put(dev);
	}
	comm->shut = true;
	mutex_unlock(&comm->teardown_mutex);
}

static void kcoll_comm_shutdown_work(struct work_struct *work)
{
	kcoll_comm_shutdown(container_of(work, struct kcoll_comm, shutdown_work));
}

/**
 * kcoll_comm_shutdown_dev - ib_client remove(): shut down every comm on a device
 * @dev:	the device going away
 *
 * Their users get -ENODEV; the comms stay as shells until their owners destroy them.
 */
void kcoll_comm_shutdown_dev(struct kcoll_dev *dev)
{
	struct kcoll_comm *comm, **victims;
	unsigned int n = 0, i;

	mutex_lock(&kcoll_comms_mutex);
	victims = kcalloc(kcoll_ncomms + 1, sizeof(*victims), GFP_KERNEL | __GFP_NOFAIL);
	list_for_each_entry(comm, &kcoll_comms, list) {
		if (READ_ONCE(comm->dev) == dev) {
			kcoll_comm_get(comm);
			victims[n++] = comm;
		}
	}
	mutex_unlock(&kcoll_comms_mutex);
	for (i = 0; i < n; i++) {
		kcoll_comm_fail(victims[i], -ENODEV, U32_MAX);
		flush_work(&victims[i]->shutdown_work);
		kcoll_comm_shutdown(victims[i]);
		kcoll_comm_put(victims[i]);
	}
	kfree(victims);
}

/*
 * Post a BYE on every connection still up that has none yet, telling each peer how many
 * of its sends we took.  Return: how many wait for a free control slot.
 * Context: comm->lock held.
 */
static u32 kcoll_comm_post_byes(struct kcoll_comm *comm, u32 *sent)
{
	u32 i, missing = 0;

	lockdep_assert_held(&comm->lock);
	for (i = 0; i < comm->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];
		struct kcoll_wire_bye *m;
		struct kcoll_ctrl *c;

		if (i == comm->rank || conn->state != KCOLL_CONN_UP || conn->bye_sent)
			continue;
		c = conn->tp->ctrl_get(conn);
		if (!c) {
			missing++;
			continue;
		}
		m = c->msg;
		m->hdr.type = KCOLL_MSG_BYE;
		m->taken = cpu_to_be32(conn->rx_taken);
		conn->bye_sent = true;
		if (!conn->tp->ctrl_post(conn, c, sizeof(*m)))
			(*sent)++;
	}
	return missing;
}

/*
 * An orderly departure: BYE on every connection still up, and wait (at most 2 s in all)
 * for the acknowledgments, so peers see the BYE before the disconnect and fail only what
 * they had pending with this rank.  A connection whose control slots are all in flight
 * gets its BYE when one comes back: without it the peer would see a crash.
 */
static void kcoll_comm_say_bye(struct kcoll_comm *comm)
{
	unsigned long deadline = jiffies + 2 * HZ;
	u32 sent = 0;
	long left;

	spin_lock_bh(&comm->lock);
	if (comm->state != KCOLL_COMM_READY) {
		spin_unlock_bh(&comm->lock);
		return;
	}
	/* BYE is the last message: no write or DONE may follow it to a peer. */
	comm->leaving = true;
	while (kcoll_comm_post_byes(comm, &sent)) {
		spin_unlock_bh(&comm->lock);
		left = (long)(deadline - jiffies);
		if (left <= 0)
			return;
		/* Send completions wake ctrl waiters; poll too, as kcoll_buf_wait_ctrl(). */
		atomic_inc(&comm->ctrl_waiters);
		wait_event_timeout(comm->wq, READ_ONCE(comm->state) != KCOLL_COMM_READY,
				   min_t(long, left, HZ / 10));
		atomic_dec(&comm->ctrl_waiters);
		spin_lock_bh(&comm->lock);
		if (comm->state != KCOLL_COMM_READY)
			break;
	}
	spin_unlock_bh(&comm->lock);
	left = (long)(deadline - jiffies);
	if (left > 0)
		wait_event_timeout(comm->wq, READ_ONCE(comm->nbye_acked) >= sent ||
				   READ_ONCE(comm->state) != KCOLL_COMM_READY, left);
}

/* Destroy: say bye, abort, shut down, unlist, drop the table's reference. */
void kcoll_comm_destroy(struct kcoll_comm *comm)
{
	bool listed;

	kcoll_comm_say_bye(comm);
	kcoll_comm_abort(comm);
	flush_work(&comm->shutdown_work);
	kcoll_comm_shutdown(comm);
	kcoll_buf_drop_all(comm);
	spin_lock_bh(&comm->lock);
	kcoll_comm_change_state(comm, KCOLL_COMM_DESTROYED, comm->error);
	spin_unlock_bh(&comm->lock);
	/*
	 * Unlisted and out of sysfs together, as kcoll_comm_publish() adds both under the
	 * mutex: else a create of the same id and rank in between passes the list check and
	 * then fails on the sysfs name still taken (a spurious EEXIST and a kernel stack).
	 */
	mutex_lock(&kcoll_comms_mutex);
	listed = !list_empty(&comm->list);
	if (listed) {
		list_del_init(&comm->list);
		kcoll_ncomms--;
	}
	if (comm->kobj.state_in_sysfs)
		kobject_del(&comm->kobj);
	mutex_unlock(&kcoll_comms_mutex);
	if (listed)
		kcoll_nl_event_comm(comm, KCOLL_NL_COMM_DESTROYED);
	kcoll_comm_put(comm);
}

/* List the comm on the node unless this comm id and rank exist already. */
int kcoll_comm_publish(struct kcoll_comm *comm)
{
	struct kcoll_comm *other;
	int ret;

	mutex_lock(&kcoll_comms_mutex);
	list_for_each_entry(other, &kcoll_comms, list) {
		if (other->comm_id == comm->comm_id && other->rank == comm->rank &&
		    net_eq(other->net, comm->net)) {
			mutex_unlock(&kcoll_comms_mutex);
			return -EEXIST;
		}
	}
	if (comm->dev && READ_ONCE(comm->dev->removing))
		ret = -ENODEV;	/* remove() already scanned for comms: do not add one */
	else if (net_eq(comm->net, &init_net))
		ret = kobject_add(&comm->kobj, kcoll_comms_kobj, "%016llx-%u", comm->comm_id,
				  comm->rank);
	else
		ret = kobject_add(&comm->kobj, kcoll_comms_kobj, "%016llx-%u-ns%u",
				  comm->comm_id, comm->rank, comm->net->ns.inum);
	if (!ret) {
		list_add_tail(&comm->list, &kcoll_comms);
		kcoll_ncomms++;
	}
	mutex_unlock(&kcoll_comms_mutex);
	return ret;
}

struct kcoll_comm *kcoll_comm_alloc(const struct kcoll_comm_create *arg)
{
	struct kcoll_comm *comm;
	u32 i;

	comm = kcoll_fi(ALLOC, NULL,
			kvzalloc(struct_size(comm, conns, arg->nranks), GFP_KERNEL_ACCOUNT));
	if (!comm)
		return NULL;
	kobject_init(&comm->kobj, &kcoll_comm_ktype);
	comm->comm_id = arg->comm_id;
	/* Little endian, as SipHash reads its key, whatever this host's byte order. */
	comm->secret.key[0] = get_unaligned_le64(arg->secret);
	comm->secret.key[1] = get_unaligned_le64(arg->secret + 8);
	comm->authenticated = !!memchr_inv(arg->secret, 0, sizeof(arg->secret));
	comm->rank = arg->rank;
	comm->nranks = arg->nranks;
	comm->owner_pid = task_tgid_nr(current);
	comm->owner_uid = current_euid();
	comm->failed_rank = U32_MAX;
	comm->state = KCOLL_COMM_CREATING;	/* initial: nobody else sees it yet */
	INIT_LIST_HEAD(&comm->list);
	INIT_LIST_HEAD(&comm->reqs);
	INIT_LIST_HEAD(&comm->ops);
	mutex_init(&comm->teardown_mutex);
	spin_lock_init(&comm->lock);
	init_waitqueue_head(&comm->wq);
	INIT_DELAYED_WORK(&comm->watchdog, kcoll_comm_watchdog);
	INIT_WORK(&comm->shutdown_work, kcoll_comm_shutdown_work);
	xa_init_flags(&comm->bufs, XA_FLAGS_ALLOC1);
	for (i = 0; i < arg->nranks; i++) {
		struct kcoll_conn *conn = &comm->conns[i];

		conn->comm = comm;
		conn->peer = i;
		conn->tp = &kcoll_rdma_transport;
		conn->sgid_index = -1;
		conn->gid_type = -1;
		INIT_DELAYED_WORK(&conn->retry_work, kcoll_conn_retry_work);
		INIT_LIST_HEAD(&conn->tx_free);
		INIT_LIST_HEAD(&conn->sendq);
		INIT_LIST_HEAD(&conn->recvq);
		INIT_LIST_HEAD(&conn->cts_early);
		INIT_LIST_HEAD(&conn->buf_early);
		INIT_LIST_HEAD(&conn->eager_early);
	}
	return comm;
}

/* Why the comm did not become ready, for the caller: the first peer that is not up. */
int kcoll_comm_connect_error(struct kcoll_comm *comm, u32 *failed_rank)
{
	int err;
	u32 i;

	spin_lock_bh(&comm->lock);
	err = comm->error;
	*failed_rank = comm->failed_rank;
	if (!err) {
		err = -ETIMEDOUT;
		for (i = 0; i < comm->nranks; i++) {
			if (i != comm->rank && (comm->conns[i].state != KCOLL_CONN_UP ||
						!comm->conns[i].peer_ready)) {
				*failed_rank = i;
				if (comm->conns[i].last_err == -EHOSTUNREACH)
					err = -EHOSTUNREACH;
				break;
			}
		}
		kcoll_comm_set_error(comm, KCOLL_COMM_ERROR, err, *failed_rank);
	}
	spin_unlock_bh(&comm->lock);
	return err;
}

static const struct kcoll_comm_upcalls kcoll_comm_upcalls = {
	.fail		 = kcoll_comm_fail,
	.fail_locked	 = kcoll_comm_set_error_locked,
	.teardown_unlock = kcoll_teardown_unlock,
};

int kcoll_comm_init(void)
{
	kcoll_comm_set_upcalls(&kcoll_comm_upcalls);
	/* Its entries name other users' communicators: root lists it (security.rst). */
	kcoll_comms_kobj = kcoll_sysfs_subdir("comms", 0700);
	return kcoll_comms_kobj ? 0 : -ENOMEM;
}

void kcoll_comm_exit(void)
{
	/* Files pin the module, so every comm is gone by now. */
	if (!list_empty(&kcoll_comms))
		pr_err("unloading with communicators left\n");
	kobject_put(kcoll_comms_kobj);
}

/**
 * kcoll_comm_walk - call @fn on every listed comm from position @pos on
 * @pos:	position to start at (0: the first comm); advanced past each comm @fn accepts
 * @fn:		returns 0 to go on, anything else to stop at this comm (not counted)
 * @arg:	passed to @fn
 *
 * For the control plane's dumps and lookups.  @fn runs under kcoll_comms_mutex: it may
 * take comm->lock but nothing outside it in the lock order, and must not sleep for long.
 * While it runs, comm->ctx of a listed comm is valid and comm->dev, if set, too: shutdown
 * clears comm->dev under this mutex before it drops its device reference.
 *
 * Return: 0 when every comm was walked, else what @fn returned.
 */
int kcoll_comm_walk(unsigned long *pos, int (*fn)(struct kcoll_comm *comm, void *arg),
		    void *arg)
{
	struct kcoll_comm *comm;
	unsigned long i = 0;
	int ret = 0;

	mutex_lock(&kcoll_comms_mutex);
	list_for_each_entry(comm, &kcoll_comms, list) {
		if (i++ < *pos)
			continue;
		ret = fn(comm, arg);
		if (ret)
			break;
		(*pos)++;
	}
	mutex_unlock(&kcoll_comms_mutex);
	return ret;
}

/* For the callers of kcoll_comm_walk() that rely on it (kcoll_comm_describe()). */
void kcoll_comm_walk_assert_held(void)
{
	lockdep_assert_held(&kcoll_comms_mutex);
}

/**
 * kcoll_comm_admin_abort - abort a comm on an administrator's request (netlink COMM_ABORT)
 * @comm:	the communicator (referenced by the caller)
 *
 * As COMM_ABORT by its owner: state ABORTED with -ECONNABORTED, pending operations fail,
 * waiters wake (a COMM_CREATE still connecting returns ECONNABORTED).  The owner still
 * destroys it.
 */
void kcoll_comm_admin_abort(struct kcoll_comm *comm)
{
	pr_info("comm %llx rank %u: abort requested by an administrator\n", comm->comm_id,
		comm->rank);
	/* The event under the lock: it reports the state the abort left, not a later one. */
	spin_lock_bh(&comm->lock);
	kcoll_comm_set_error(comm, KCOLL_COMM_ABORTED, -ECONNABORTED, U32_MAX);
	kcoll_nl_event_comm_locked(comm, KCOLL_NL_COMM_FAILED);
	spin_unlock_bh(&comm->lock);
}
