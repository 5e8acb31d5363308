// SPDX-License-Identifier: GPL-2.0
/*
 * The same-host path of blocking all-reduces: when every peer of a communicator is
 * reached by a same-host transport (struct kcoll_transport.same_host: the loop transport,
 * every rank in this kernel and network namespace), a blocking all-reduce is a rendezvous
 * in memory instead of a schedule of point-to-point messages: through the group's slots up
 * to KCOLL_LOCAL_MAX_BYTES a rank (this file), from the ranks' own pages above that
 * (kcoll_local_big.c).  The schedule
 * costs every rank about a dozen work items per call and the wake-ups between them
 * (Documentation/perf.rst, "Where the 8-byte time goes"); the rendezvous costs one copy in,
 * one wake-up and one copy out.
 *
 * The ranks' ends on this host share one struct kcoll_local_group, found by what the loop
 * transport links ends by: the network namespace, the comm id and the comm's secret
 * (compared with crypto_memneq(): a comm id is not a secret).  A rank joins at its first
 * fast call (only a ready comm calls, and a ready comm proved that secret to every peer)
 * and leaves at shutdown (error, abort, destroy), which poisons the group: a later or a
 * waiting call of any rank fails with the error a lost peer gives (ECONNRESET) instead of
 * waiting for a rank that is gone, and no later call can mix generations.
 *
 * A small call: copy the input into the rank's slot, arrive under the group lock; the last
 * arrival reduces the slots in rank order into the result with the engines of the normal
 * path (kcoll_engine_reduce3()), bumps the generation and wakes the others; each copies
 * the result out.  A slot and the result are stable without the lock between generations:
 * a rank writes its slot only after it left the previous call, whose reduction was done
 * before anyone left it, and the result is rewritten only once every rank arrived at the
 * next call, after copying this one's out.
 *
 * Lock order: kcoll_local_mutex, group->lock, comm->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>

#include "kcoll.h"
#include "kcoll_coll.h"
#include "kcoll_local_int.h"

static LIST_HEAD(kcoll_local_groups);
static DEFINE_MUTEX(kcoll_local_mutex);

static void kcoll_local_free(struct kref *ref)
{
	struct kcoll_local_group *g = container_of(ref, struct kcoll_local_group, ref);
	u32 r;

	/* A single-copy call's memory the group still holds: its rendezvous never ended. */
	for (r = 0; r < g->nranks; r++)
		if (g->mem[r])
			kcoll_local_mem_put(g->mem[r]);
	memzero_explicit(&g->secret, sizeof(g->secret));
	put_net(g->net);
	kvfree(g);
}

void kcoll_local_put(struct kcoll_local_group *g)
{
	kref_put(&g->ref, kcoll_local_free);
}

/*
 * Every peer on this host, few enough ranks, and no locality table that says otherwise:
 * a launcher's table of several hosts (ranks placed as if on several, as the tests do)
 * gets the schedules it describes.
 */
static bool kcoll_local_comm(const struct kcoll_comm *comm)
{
	u32 i;

	if (comm->nranks < 2 || comm->nranks > KCOLL_LOCAL_MAX_RANKS)
		return false;
	if (comm->loc.host && comm->loc.nhosts > 1)
		return false;
	for (i = 0; i < comm->nranks; i++)
		if (i != comm->rank && !comm->conns[i].tp->same_host)
			return false;
	return true;
}

/**
 * kcoll_local_wanted - whether a KCOLL_IOC_COLL call takes the same-host fast path
 * @comm:	the communicator (ready)
 * @arg:	the call, checked (kcoll_op_check())
 * @cfg_algo:	the node's configured algorithm for the collective
 *
 * The same answer on every rank of a correct program: it reads only what the ranks' calls
 * agree on and what is the same for all of them (the transport, the node's configuration).
 * Non-blocking calls take the normal path (a rendezvous cannot complete into memory of a
 * caller that left), so blocking and non-blocking calls of one collective must not be
 * mixed across the ranks under the bound (Documentation/uapi.rst).
 */
bool kcoll_local_wanted(struct kcoll_comm *comm, const struct kcoll_coll *arg, u8 cfg_algo)
{
	/* An algorithm the caller or the administrator (@cfg_algo) set runs as it is set. */
	return arg->coll == KCOLL_ALLREDUCE && arg->algo == KCOLL_ALG_AUTO &&
	       cfg_algo == KCOLL_ALG_AUTO && !(arg->flags & KCOLL_COLL_NONBLOCK) &&
	       arg->count && kcoll_local_comm(comm);
}

/* Wake every joined rank.  Context: group->lock held. */
static void kcoll_local_wake(struct kcoll_local_group *g)
{
	u32 r;

	lockdep_assert_held(&g->lock);
	for (r = 0; r < g->nranks; r++)
		if (g->wq[r])
			wake_up_all(g->wq[r]);
}

/* Mark @g dead with @err and wake its waiters.  Context: group->lock held. */
static void kcoll_local_poison_locked(struct kcoll_local_group *g, int err)
{
	lockdep_assert_held(&g->lock);
	if (!g->error)
		g->error = err;
	g->dead = true;
	kcoll_local_wake(g);
}

/* Poison and unlist @g.  Context: process, no group lock held. */
void kcoll_local_poison(struct kcoll_local_group *g, int err)
{
	mutex_lock(&kcoll_local_mutex);
	if (!list_empty(&g->list))
		list_del_init(&g->list);
	mutex_lock(&g->lock);
	kcoll_local_poison_locked(g, err);
	mutex_unlock(&g->lock);
	mutex_unlock(&kcoll_local_mutex);
}

/* The live group of @comm's key, or NULL.  Context: kcoll_local_mutex held. */
static struct kcoll_local_group *kcoll_local_find(const struct kcoll_comm *comm)
{
	struct kcoll_local_group *g;

	lockdep_assert_held(&kcoll_local_mutex);
	list_for_each_entry(g, &kcoll_local_groups, list) {
		if (g->comm_id == comm->comm_id && g->nranks == comm->nranks &&
		    net_eq(g->net, comm->net) &&
		    !crypto_memneq(&g->secret, &comm->secret, sizeof(g->secret)))
			return g;
	}
	return NULL;
}

static struct kcoll_local_group *kcoll_local_alloc(const struct kcoll_comm *comm)
{
	struct kcoll_local_group *g;

	g = kcoll_fi(ALLOC, NULL,
		     kvzalloc(struct_size(g, slots, (size_t)(comm->nranks + 1) *
					  KCOLL_LOCAL_MAX_BYTES), GFP_KERNEL_ACCOUNT));
	if (!g)
		return NULL;
	INIT_LIST_HEAD(&g->list);
	kref_init(&g->ref);
	g->net = get_net(comm->net);
	g->comm_id = comm->comm_id;
	g->secret = comm->secret;
	g->nranks = comm->nranks;
	mutex_init(&g->lock);
	g->result = g->slots + (size_t)comm->nranks * KCOLL_LOCAL_MAX_BYTES;
	return g;
}

/*
 * @comm's group, referenced for a call: joined now on the first call.  A rank whose slot
 * is taken already is not of that group (a group outlives none of its ranks' comms: each
 * leave kills it), so it starts a group of its own, which its peers will not find: they
 * wait for it until their timeout, as they would for a peer that never calls.
 */
struct kcoll_local_group *kcoll_local_get(struct kcoll_comm *comm)
{
	struct kcoll_local_group *g, *fresh;
	int err;

	spin_lock_bh(&comm->lock);
	g = comm->local;
	if (g)
		kref_get(&g->ref);
	spin_unlock_bh(&comm->lock);
	if (g)
		return g;

	fresh = kcoll_local_alloc(comm);
	if (!fresh)
		return ERR_PTR(-ENOMEM);
	mutex_lock(&kcoll_local_mutex);
	g = kcoll_local_find(comm);
	if (!g || test_bit(comm->rank, g->joined)) {
		if (g) {
			list_del_init(&g->list);	/* a stale group: nobody finds it again */
			mutex_lock(&g->lock);
			kcoll_local_poison_locked(g, -ECONNRESET);
			mutex_unlock(&g->lock);
		}
		g = fresh;
		fresh = NULL;
		list_add(&g->list, &kcoll_local_groups);
	}
	mutex_lock(&g->lock);
	spin_lock_bh(&comm->lock);
	if (comm->local_gone) {			/* shut down meanwhile: it never joins */
		err = kcoll_comm_unready(comm);
		spin_unlock_bh(&comm->lock);
		if (!fresh) {			/* the group it listed: nobody joined it */
			list_del_init(&g->list);
			kcoll_local_poison_locked(g, -ECONNRESET);
		}
		mutex_unlock(&g->lock);
		mutex_unlock(&kcoll_local_mutex);
		kcoll_local_put(fresh ?: g);
		return ERR_PTR(err);
	}
	set_bit(comm->rank, g->joined);
	g->wq[comm->rank] = &comm->wq;
	kref_get(&g->ref);			/* comm->local's, put by kcoll_local_leave() */
	comm->local = g;
	kref_get(&g->ref);			/* the call's */
	spin_unlock_bh(&comm->lock);
	mutex_unlock(&g->lock);
	mutex_unlock(&kcoll_local_mutex);
	if (fresh)
		kcoll_local_put(fresh);
	else
		kcoll_local_put(g);		/* a fresh group's initial reference */
	return g;
}

/**
 * kcoll_local_leave - a rank's communicator shuts down: its group dies
 * @comm:	the communicator
 *
 * The other ranks' waiting and later calls fail with ECONNRESET.  A rank that never
 * joined kills the group of its key too: its peers may be waiting for it in there.
 * Context: process (shutdown), idempotent.
 */
void kcoll_local_leave(struct kcoll_comm *comm)
{
	struct kcoll_local_group *g;
	bool was_ready;

	spin_lock_bh(&comm->lock);
	g = comm->local;
	comm->local = NULL;
	comm->local_gone = true;
	was_ready = comm->was_ready;
	spin_unlock_bh(&comm->lock);
	if (g) {
		kcoll_local_poison(g, -ECONNRESET);
		mutex_lock(&g->lock);
		g->wq[comm->rank] = NULL;
		mutex_unlock(&g->lock);
		kcoll_local_put(g);
		return;
	}
	if (!was_ready || !kcoll_local_comm(comm))
		return;
	mutex_lock(&kcoll_local_mutex);
	g = kcoll_local_find(comm);
	if (g) {
		list_del_init(&g->list);
		mutex_lock(&g->lock);
		kcoll_local_poison_locked(g, -ECONNRESET);
		mutex_unlock(&g->lock);
	}
	mutex_unlock(&kcoll_local_mutex);
}

/* Reduce every slot, in rank order, into the result.  Context: group->lock held. */
static void kcoll_local_reduce(struct kcoll_local_group *g)
{
	const struct kcoll_local_sig *s = &g->sig;
	size_t bytes = s->count * kcoll_dtype_size(s->dtype);
	u32 r;

	lockdep_assert_held(&g->lock);
	memcpy(g->result, g->slots, bytes);
	for (r = 1; r < g->nranks; r++)
		kcoll_engine_reduce3(g->result, g->result, g->slots + r * KCOLL_LOCAL_MAX_BYTES,
				     s->count, s->dtype, s->op);
	kcoll_engine_finalize(g->result, s->count, s->dtype, s->op, g->nranks);
}

/*
 * Copy one side of the call between @kbuf and the caller's memory or zero-copy buffer.
 * @to_user: the result goes out.  Return: 0, -EFAULT, or kcoll_buf_use()'s error.
 */
static int kcoll_local_copy(struct kcoll_comm *comm, bool is_buf, u32 handle, u64 addr,
			    void *kbuf, size_t bytes, bool out)
{
	struct kcoll_buf *buf;

	if (!is_buf) {
		void __user *p = u64_to_user_ptr(addr);

		if (!addr)
			return -EFAULT;
		if (out)
			return copy_to_user(p, kbuf, bytes) ? -EFAULT : 0;
		return copy_from_user(kbuf, p, bytes) ? -EFAULT : 0;
	}
	buf = kcoll_buf_use(comm, handle, addr, bytes);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	kcoll_region_copy(&buf->region, addr, kbuf, bytes, out);
	kcoll_buf_unuse(buf);
	return 0;
}

/*
 * Whether the caller's @bytes at @addr can take the result, checked before arriving (a bad
 * buffer then fails this call alone, as the normal path's pinning does).  Not
 * fault_in_writeable(): it stores a zero at @addr, which an in-place call's input is.
 */
static int kcoll_local_probe(u64 addr, size_t bytes)
{
	struct page *pages[2];		/* bytes <= KCOLL_LOCAL_MAX_BYTES: at most 2 pages */
	unsigned long first = addr & PAGE_MASK;
	int n = DIV_ROUND_UP(offset_in_page(addr) + bytes, PAGE_SIZE), got, i;

	if (!addr || n > ARRAY_SIZE(pages))
		return -EFAULT;
	got = get_user_pages_fast(first, n, FOLL_WRITE, pages);
	for (i = 0; i < got; i++)
		put_page(pages[i]);
	return got == n ? 0 : -EFAULT;
}

/*
 * A peer left (BYE) or the link to it broke, or the comm failed: a rank that never joined
 * may be gone before its group existed, so a waiter also watches its own comm (whose
 * events wake comm->wq).
 */
static bool kcoll_local_peer_gone(const struct kcoll_comm *comm)
{
	u32 i;

	if (READ_ONCE(comm->state) != KCOLL_COMM_READY)
		return true;
	for (i = 0; i < comm->nranks; i++)
		if (i != comm->rank && (READ_ONCE(comm->conns[i].peer_left) ||
					READ_ONCE(comm->conns[i].state) != KCOLL_CONN_UP))
			return true;
	return false;
}

/*
 * Wait for the rendezvous of generation @gen to complete.  Return: 0, the group's error,
 * -ECONNRESET or the comm's error (a peer is gone), or -EINTR/-ETIMEDOUT; but for 0 the
 * group dies: the peers must not wait for this rank.
 */
int kcoll_local_wait(struct kcoll_comm *comm, struct kcoll_local_group *g, u64 gen,
		     u32 timeout_ms)
{
	long left;
	int err;

	left = wait_event_killable_timeout(comm->wq, READ_ONCE(g->gen) != gen ||
					   READ_ONCE(g->error) || kcoll_local_peer_gone(comm),
					   timeout_ms ? msecs_to_jiffies(timeout_ms) :
							MAX_SCHEDULE_TIMEOUT);
	mutex_lock(&g->lock);
	if (g->gen != gen) {
		err = 0;		/* done, even if the group died just after */
	} else if (g->error) {
		err = g->error;
	} else {
		if (kcoll_local_peer_gone(comm))
			err = READ_ONCE(comm->error) ?: -ECONNRESET;
		else
			err = left ? -EINTR : -ETIMEDOUT;
		kcoll_local_poison_locked(g, -ECONNRESET);
	}
	mutex_unlock(&g->lock);
	return err;
}

/**
 * kcoll_local_arrive - arrive at the group's current rendezvous
 * @comm:	the arriving rank's communicator
 * @g:		its group
 * @sig:	the call, as every rank's must be
 * @mem:	published as @comm's rank's (a reference the group holds), or NULL
 * @last:	run by the last arrival before the others wake, or NULL
 * @gen:	set to the rendezvous' generation, for kcoll_local_wait()
 *
 * Return: 0, the group's error, -EPROTO (the ranks' calls differ: the group dies) or
 * -EINTR (killed waiting for the lock: the group dies).
 */
int kcoll_local_arrive(struct kcoll_comm *comm, struct kcoll_local_group *g,
		       const struct kcoll_local_sig *sig, struct kcoll_local_mem *mem,
		       kcoll_local_last_fn last, u64 *gen)
{
	int err;

	if (mutex_lock_killable(&g->lock)) {
		kcoll_local_poison(g, -ECONNRESET);
		return -EINTR;
	}
	err = g->error;
	if (!err && g->narrived && memcmp(&g->sig, sig, sizeof(*sig))) {
		err = -EPROTO;
		kcoll_local_poison_locked(g, err);
	}
	if (err) {
		mutex_unlock(&g->lock);
		return err;
	}
	if (!g->narrived)
		memcpy(&g->sig, sig, sizeof(*sig));
	if (mem && !WARN_ON_ONCE(g->mem[comm->rank])) {
		kcoll_local_mem_get(mem);
		g->mem[comm->rank] = mem;
	}
	*gen = g->gen;
	if (++g->narrived == g->nranks) {
		if (last)
			last(g);
		g->narrived = 0;
		WRITE_ONCE(g->gen, *gen + 1);
		kcoll_local_wake(g);
	}
	mutex_unlock(&g->lock);
	return 0;
}

/*
 * A small call: copy the input into this rank's slot, arrive; the last arrival reduces
 * the slots; copy the result out.
 */
static int kcoll_local_run_small(struct kcoll_comm *comm, const struct kcoll_coll *arg,
				 const struct kcoll_local_sig *sig, bool *fatal)
{
	bool recv_is_buf = arg->flags & KCOLL_COLL_RECV_BUF;
	size_t bytes = arg->count * kcoll_dtype_size(arg->dtype);
	struct kcoll_local_group *g;
	u64 gen;
	int err;

	/* As the normal path pins it first: a receive side that cannot take the result. */
	if (!recv_is_buf && kcoll_local_probe(arg->recvbuf, bytes))
		return -EFAULT;
	g = kcoll_local_get(comm);
	if (IS_ERR(g))
		return PTR_ERR(g);
	/* This rank's slot: nobody reads it until every rank arrived (file comment). */
	if (sig->in_place)
		err = kcoll_local_copy(comm, recv_is_buf, arg->recv_handle, arg->recvbuf,
				       g->slots + comm->rank * KCOLL_LOCAL_MAX_BYTES, bytes,
				       false);
	else
		err = kcoll_local_copy(comm, arg->flags & KCOLL_COLL_SEND_BUF, arg->send_handle,
				       arg->sendbuf, g->slots + comm->rank * KCOLL_LOCAL_MAX_BYTES,
				       bytes, false);
	if (err)
		goto out_put;

	*fatal = true;
	err = kcoll_local_arrive(comm, g, sig, NULL, kcoll_local_reduce, &gen);
	if (!err)
		err = kcoll_local_wait(comm, g, gen, arg->timeout_ms);
	if (err)
		goto out_put;

	/* Stable until this rank arrives at its next call (file comment). */
	*fatal = false;
	err = kcoll_local_copy(comm, recv_is_buf, arg->recv_handle, arg->recvbuf, g->result,
			       bytes, true);
out_put:
	kcoll_local_put(g);
	return err;
}

/**
 * kcoll_local_run - a blocking call kcoll_local_wanted() took, start to end
 * @comm:	the communicator
 * @arg:	the call
 * @fatal:	set when the error came after this rank arrived: the caller fails the comm,
 *		as the normal path fails it once its messages went out
 *
 * Return: 0, or an errno of the normal path for the same cause: -EFAULT, -ENOENT and
 * -ERANGE (buffers, before arriving), -ENOMEM, -EPROTO (the ranks' calls differ),
 * -ECONNRESET (a rank left or failed), -EINTR, -ETIMEDOUT.
 */
int kcoll_local_run(struct kcoll_comm *comm, const struct kcoll_coll *arg, bool *fatal)
{
	size_t bytes = arg->count * kcoll_dtype_size(arg->dtype);
	struct kcoll_local_sig sig;
	int err;

	memset(&sig, 0, sizeof(sig));	/* compared with memcmp(): no stray padding */
	sig.count = arg->count;
	sig.coll = arg->coll;
	sig.dtype = arg->dtype;
	sig.op = arg->op;
	sig.in_place = arg->flags & KCOLL_COLL_IN_PLACE;
	*fatal = false;
	if (bytes <= KCOLL_LOCAL_MAX_BYTES)
		err = kcoll_local_run_small(comm, arg, &sig, fatal);
	else
		err = kcoll_local_run_big(comm, arg, &sig, fatal);
	if (!err) {
		atomic64_inc(&comm->coll_ops);
		atomic64_add(bytes, &comm->coll_bytes);
	}
	return err;
}
