// SPDX-License-Identifier: GPL-2.0-only
/*
 * tools/kcoll-sim/simnet.c - the event-driven model (see simnet.h, Documentation/sim.rst).
 *
 * Schedules are kept compact (16 bytes a step) and in relative form (peer - rank mod p):
 * ranks whose relative schedules are equal (a ring's, a pairwise exchange's when the count
 * divides evenly) share one copy, which is what lets 16,384 ranks of a ring fit in memory.
 * Events are kept in buckets of one time each, in insertion order (evq.c), so runs are
 * deterministic.  Flow rates are re-solved after every batch of events of one instant, by
 * progressive filling over the flows reachable from the links that changed (share.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simnet_int.h"

/* ---- schedules ---------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static int sched_build(const struct simnet_cfg *c, const struct kcoll_coll_args *a,
		       struct kcoll_step *steps, uint32_t max, struct kcoll_sched_info *info)
{
	if (c->build)
		return c->build(c->ctx, a, steps, max, info);
	return kcoll_sched_build(a, c->algo, c->chunk_bytes, steps, max, info);
}

static int build_scheds(struct sim *s)
{
	const struct simnet_cfg *c = s->c;
	uint32_t p = s->p, r, i, *sctr, *rctr;
	struct kcoll_step *tmp = NULL;
	struct cstep *cs = NULL;
	size_t ctmp = 0, ccs = 0;
	uint64_t mem = 0, limit = c->mem_limit ? c->mem_limit : 4ULL << 30;
	uint32_t *hidx = NULL, hsize = 1024;
	int ret = -1;

	sctr = calloc(2 * (size_t)p, sizeof(*sctr));
	hidx = malloc(hsize * sizeof(*hidx));
	if (!sctr || !hidx)
		goto oom;
	memset(hidx, 0xff, hsize * sizeof(*hidx));
	rctr = sctr + p;
	for (r = 0; r < p; r++) {
		struct kcoll_coll_args a = c->args;
		struct kcoll_sched_info info;
		uint64_t h = 0xcbf29ce484222325ULL;
		uint32_t stage_n = 0, max_stage = 0, u, slotpos;
		int err;

		a.rank = r;
		/* the previous rank's size usually fits: count only when it does not */
		err = tmp ? sched_build(c, &a, tmp, ctmp > UINT32_MAX ? UINT32_MAX :
					(uint32_t)ctmp, &info) : -ENOSPC;
		if (err == -ENOSPC) {
			err = sched_build(c, &a, NULL, 0, &info);
			if (err) {
				snprintf(s->res->err, sizeof(s->res->err), "rank %u: %s cannot build "
					 "this call (%d)", r, kcoll_algo_name(c->algo), err);
				goto out;
			}
			if (grow((void **)&tmp, &ctmp, info.nsteps + 1, sizeof(*tmp)))
				goto oom;
			err = sched_build(c, &a, tmp, info.nsteps, &info);
		}
		if (!err && grow((void **)&cs, &ccs, info.nsteps + 1, sizeof(*cs)))
			goto oom;
		if (err) {
			snprintf(s->res->err, sizeof(s->res->err), "rank %u: build: %d", r, err);
			goto out;
		}
		for (i = 0; i < info.nsteps; i++) {
			const struct kcoll_step *st = &tmp[i];
			bool first = !i || st->stage != tmp[i - 1].stage;

			cs[i].peer_rel = 0;
			cs[i].seq = 0;
			if (op_xfer(st->op)) {
				if (st->peer >= p || st->peer == r) {
					snprintf(s->res->err, sizeof(s->res->err),
						 "rank %u step %u: bad peer %u", r, i, st->peer);
					goto out;
				}
				cs[i].peer_rel = (st->peer + p - r) % p;
				cs[i].seq = st->op == KCOLL_STEP_SEND ? sctr[st->peer]++ :
					    rctr[st->peer]++;
			}
			cs[i].w = st->bytes << 4 | (uint64_t)st->op << 1 | first;
			stage_n = first ? 1 : stage_n + 1;
			if (stage_n > max_stage)
				max_stage = stage_n;
			h = mix(mix(h, (uint64_t)cs[i].peer_rel << 32 | cs[i].seq), cs[i].w);
		}
		for (i = 0; i < info.nsteps; i++)
			if (op_xfer(tmp[i].op))
				sctr[tmp[i].peer] = rctr[tmp[i].peer] = 0;
		h = mix(h, info.nsteps);
		/* share an equal relative schedule */
		for (slotpos = h % hsize; (u = hidx[slotpos]) != NONE; slotpos = (slotpos + 1) % hsize)
			if (s->us[u].hash == h && s->us[u].n == info.nsteps &&
			    !memcmp(s->us[u].s, cs, info.nsteps * sizeof(*cs)))
				break;
		if (u == NONE) {
			size_t bytes = (size_t)info.nsteps * sizeof(*cs);

			mem += bytes + (uint64_t)max_stage * sizeof(struct slot);
			if (mem > limit) {
				snprintf(s->res->err, sizeof(s->res->err), "schedules need more than "
					 "%llu MiB (rank %u of %u); use fewer ranks or larger chunks",
					 (unsigned long long)(limit >> 20), r, p);
				goto out;
			}
			{
				size_t cus = s->cus;

				if (grow((void **)&s->us, &cus, s->nus + 1, sizeof(*s->us)))
					goto oom;
				s->cus = (uint32_t)cus;
			}
			u = s->nus++;
			s->us[u].hash = h;
			s->us[u].n = info.nsteps;
			s->us[u].max_stage = max_stage;
			s->us[u].s = malloc(bytes ? bytes : 1);
			if (!s->us[u].s)
				goto oom;
			memcpy(s->us[u].s, cs, bytes);
			if (2 * s->nus > hsize) {	/* rehash */
				uint32_t *nh = malloc(2 * hsize * sizeof(*nh)), k;

				if (!nh)
					goto oom;
				hsize *= 2;
				memset(nh, 0xff, hsize * sizeof(*nh));
				for (k = 0; k < s->nus; k++) {
					uint32_t q = s->us[k].hash % hsize;

					while (nh[q] != NONE)
						q = (q + 1) % hsize;
					nh[q] = k;
				}
				free(hidx);
				hidx = nh;
			} else {
				hidx[slotpos] = u;
			}
		}
		s->rk[r].s = s->us[u].s;
		s->rk[r].n = s->us[u].n;
		s->rk[r].sl = calloc(s->us[u].max_stage ? s->us[u].max_stage : 1,
				     sizeof(struct slot));
		if (!s->rk[r].sl)
			goto oom;
		s->res->sched_steps += info.nsteps;
	}
	s->res->unique_scheds = s->nus;
	ret = 0;
	goto out;
oom:
	snprintf(s->res->err, sizeof(s->res->err), "out of memory");
out:
	free(tmp);
	free(cs);
	free(sctr);
	free(hidx);
	return ret;
}

/* ---- ranks and messages ------------------------------------------------------------------- */

static void complete(struct sim *s, uint32_t r, uint32_t slot, double t)
{
	struct rank *k = &s->rk[r];

	if (t > s->now) {
		sn_push(s, t, EV_COMPLETE, r, slot);
		return;
	}
	(void)slot;
	if (!--k->pending)
		sn_push(s, k->cpu > s->now ? k->cpu : s->now, EV_STAGE, r, 0);
}

static uint32_t msg_new(struct sim *s)
{
	uint32_t m;

	if (s->msg_free != NONE) {
		m = s->msg_free;
		s->msg_free = s->msgs[m].next_free;
	} else {
		size_t c = s->cmsg;

		if (grow((void **)&s->msgs, &c, s->nmsg + 1, sizeof(*s->msgs))) {
			s->err = 1;
			return 0;
		}
		s->cmsg = (uint32_t)c;
		m = s->nmsg++;
	}
	memset(&s->msgs[m], 0, sizeof(s->msgs[m]));
	s->msgs[m].dslot = NONE;
	s->msgs[m].t_recv = -1;
	s->res->messages++;
	return m;
}

static void msg_free(struct sim *s, uint32_t m)
{
	s->msgs[m].next_free = s->msg_free;
	s->msg_free = m;
}

static void flow_start(struct sim *s, uint32_t m)
{
	struct msg *g = &s->msgs[m];
	struct flow *f;
	uint32_t fi;
	int j;

	s->res->bytes += g->bytes;
	if (!g->bytes) {
		sn_push(s, s->now + g->lat, EV_DELIVER, m, 0);
		return;
	}
	if (s->flow_free != NONE) {
		fi = s->flow_free;
		s->flow_free = s->flows[fi].next_free;
	} else {
		size_t c = s->cflow;

		GROW(s, s->flows, c, s->nflow + 1);
		s->cflow = (uint32_t)c;
		fi = s->nflow++;
		memset(&s->flows[fi], 0, sizeof(s->flows[fi]));
	}
	f = &s->flows[fi];
	f->solved = 0;
	f->msg = m;
	f->nl = g->nl;
	f->rem = (double)g->bytes;
	f->rate = 0;
	f->t_last = s->now;
	f->stamp = 0;
	for (j = 0; j < g->nl; j++) {
		f->link[j] = g->links[j];
		s->links[g->links[j]].bytes += (double)g->bytes;
		sn_link_add(s, g->links[j], fi, j);
	}
}

static void flow_end(struct sim *s, uint32_t fi, uint32_t ver)
{
	struct flow *f = &s->flows[fi];
	int j;

	if (f->version != ver || f->nl == 0)
		return;
	for (j = 0; j < f->nl; j++)
		sn_link_del(s, f->link[j], fi, j);
	f->nl = 0;
	f->version++;
	sn_push(s, s->now + s->msgs[f->msg].lat, EV_DELIVER, f->msg, 0);
	f->next_free = s->flow_free;
	s->flow_free = fi;
}

/* The receive side has its data at time t (>= now): receive, or reduce on the CPU. */
static void recv_done(struct sim *s, struct msg *g, double t)
{
	struct rank *k = &s->rk[g->dst];

	if (g->recv_reduce && s->red_bw > 0) {
		double start = t > k->cpu ? t : k->cpu, cost = g->bytes / s->red_bw;

		k->cpu = start + cost;
		if (g->dst == s->trace)
			k->t_red += cost;
		t = k->cpu;
	}
	complete(s, g->dst, g->dslot, t);
}

/* Both ends posted, data arrived: the sender's completion is one latency after both. */
static void maybe_finish(struct sim *s, uint32_t m)
{
	struct msg *g = &s->msgs[m];
	double t;

	if (!g->delivered || g->dslot == NONE)
		return;
	t = g->arrive > g->t_recv ? g->arrive : g->t_recv;
	recv_done(s, g, t > s->now ? t : s->now);
	complete(s, g->src, g->sslot, t + g->lat);
	msg_free(s, m);
}

static void deliver(struct sim *s, uint32_t m)
{
	struct msg *g = &s->msgs[m];

	g->delivered = 1;
	g->arrive = s->now;
	maybe_finish(s, m);
}

static uint32_t find_peer_slot(struct sim *s, uint32_t r, uint32_t q, uint32_t seq, bool want_recv)
{
	struct rank *kq = &s->rk[q];
	uint32_t i;

	for (i = kq->pos; i < kq->end; i++) {
		const struct cstep *o = &kq->s[i];
		struct slot *sl = &kq->sl[i - kq->pos];
		unsigned int op = cs_op(o);

		if (!op_xfer(op) || (op != KCOLL_STEP_SEND) != want_recv || o->seq != seq ||
		    (q + o->peer_rel) % s->p != r)
			continue;
		if (!(sl->state & SL_POSTED) || (sl->state & SL_MATCHED))
			return NONE;
		return i - kq->pos;
	}
	return NONE;
}

static uint32_t msg_make(struct sim *s, uint32_t src, uint32_t sslot, uint32_t dst, uint64_t bytes)
{
	uint32_t m = msg_new(s);
	struct msg *g;

	if (s->err)
		return 0;
	g = &s->msgs[m];
	g->src = src;
	g->dst = dst;
	g->sslot = sslot;
	g->bytes = bytes;
	g->eager = bytes <= s->c->eager_max;
	g->nl = (uint8_t)simnet_path(&s->topo, src, dst, g->links, &g->lat);
	return m;
}

/*
 * Rank r posts its step at time tp (>= now: the CPU may still be busy posting the steps
 * before it; what follows from the post is scheduled at or after tp).
 */
static void post(struct sim *s, uint32_t r, uint32_t slot, double tp)
{
	struct rank *k = &s->rk[r];
	const struct cstep *st = &k->s[k->pos + slot];
	struct slot *sl = &k->sl[slot];
	uint32_t q = (r + st->peer_rel) % s->p, o, m;
	unsigned int op = cs_op(st);
	uint64_t bytes = cs_bytes(st);

	sl->state = SL_POSTED;
	sl->post_t = tp;
	o = find_peer_slot(s, r, q, st->seq, op == KCOLL_STEP_SEND);
	if (op == KCOLL_STEP_SEND) {
		bool eager = bytes <= s->c->eager_max;

		if (!eager && o == NONE)
			return;		/* waits for the receive */
		m = msg_make(s, r, slot, q, bytes);
		if (s->err)
			return;
		sl->msg = m;
		s->msgs[m].t_send = tp;
		if (o != NONE) {
			struct slot *po = &s->rk[q].sl[o];
			const struct cstep *ps = &s->rk[q].s[s->rk[q].pos + o];

			s->msgs[m].dslot = o;
			s->msgs[m].t_recv = po->post_t;
			s->msgs[m].recv_reduce = cs_op(ps) == KCOLL_STEP_RECV_REDUCE;
			po->state |= SL_MATCHED;
			sl->state |= SL_MATCHED;
		}
		if (eager) {
			if (tp > s->now)
				sn_push(s, tp, EV_FLOW_START, m, 0);
			else
				flow_start(s, m);
		} else {
			double t0 = s->msgs[m].t_recv + s->msgs[m].lat;	/* its CTS */

			if (t0 < tp)
				t0 = tp;
			if (t0 > s->now)
				sn_push(s, t0, EV_FLOW_START, m, 0);
			else
				flow_start(s, m);
		}
		return;
	}
	/* a receive */
	if (o == NONE)
		return;		/* waits for the send */
	{
		struct slot *po = &s->rk[q].sl[o];
		const struct cstep *ps = &s->rk[q].s[s->rk[q].pos + o];
		double t0;

		po->state |= SL_MATCHED;
		sl->state |= SL_MATCHED;
		if (cs_bytes(ps) <= s->c->eager_max) {	/* already on its way */
			m = po->msg;
		} else {
			m = msg_make(s, q, o, r, cs_bytes(ps));
			if (s->err)
				return;
			s->msgs[m].t_send = po->post_t;
			t0 = tp + s->msgs[m].lat;	/* its CTS */
			sn_push(s, t0 > po->post_t ? t0 : po->post_t, EV_FLOW_START, m, 0);
		}
		s->msgs[m].dslot = slot;
		s->msgs[m].t_recv = tp;
		s->msgs[m].recv_reduce = op == KCOLL_STEP_RECV_REDUCE;
		maybe_finish(s, m);
	}
}

static void trace_stage(struct sim *s, struct rank *k, bool end)
{
	struct simnet_result *res = s->res;
	struct simnet_phase ph = { 0 }, *last;
	uint32_t i;

	if (end) {
		if (res->nphases)
			res->phases[res->nphases - 1].time = s->now -
				res->phases[res->nphases - 1].start;
		return;
	}
	for (i = k->pos; i < k->end; i++) {
		switch (cs_op(&k->s[i])) {
		case KCOLL_STEP_SEND:
			ph.sends++;
			break;
		case KCOLL_STEP_RECV:
			ph.recvs++;
			break;
		case KCOLL_STEP_RECV_REDUCE:
			ph.recv_reduces++;
			break;
		default:
			ph.locals++;
			continue;
		}
		ph.bytes += cs_bytes(&k->s[i]);
	}
	last = res->nphases ? &res->phases[res->nphases - 1] : NULL;
	if (last && last->sends == ph.sends && last->recvs == ph.recvs &&
	    last->recv_reduces == ph.recv_reduces && last->locals == ph.locals &&
	    last->bytes == ph.bytes) {
		last->nstages++;
		return;
	}
	{
		size_t c = res->nphases;	/* grown one by one: phases are few */
		struct simnet_phase *q = realloc(res->phases, (c + 1) * sizeof(*q));

		if (!q) {
			s->err = 1;
			return;
		}
		res->phases = q;
	}
	ph.first_stage = k->stage;
	ph.nstages = 1;
	ph.start = s->now;
	res->phases[res->nphases++] = ph;
}

/* The previous stage (if any) is done: start the next, or finish. */
static void stage(struct sim *s, uint32_t r)
{
	struct rank *k = &s->rk[r];
	double cpu;
	uint32_t i;

	if (k->end > k->pos) {		/* a stage just ended */
		if (r == s->trace)
			trace_stage(s, k, true);
		k->stage++;
	}
	k->pos = k->end;
	if (k->pos >= k->n) {
		k->finish = s->now;
		return;
	}
	k->end = k->pos + 1;
	while (k->end < k->n && !cs_first(&k->s[k->end]))
		k->end++;
	if (r == s->trace)
		trace_stage(s, k, false);
	cpu = k->cpu > s->now ? k->cpu : s->now;
	k->pending = 1;		/* held until every step is out */
	for (i = k->pos; i < k->end; i++) {
		const struct cstep *st = &k->s[i];
		unsigned int op = cs_op(st);

		k->sl[i - k->pos].state = 0;
		if (!op_xfer(op)) {
			double bw = op == KCOLL_STEP_COPY ? s->copy_bw : s->red_bw;
			double cost = bw > 0 ? cs_bytes(st) / bw : 0;

			cpu += cost;
			if (r == s->trace)
				k->t_loc += cost;
			continue;
		}
		cpu += s->c->overhead;
		if (r == s->trace)
			k->t_ovh += s->c->overhead;
		k->pending++;
		post(s, r, i - k->pos, cpu);
	}
	/* posting comes first (kcoll_op_stage()), reductions of early arrivals after it */
	if (cpu > k->cpu)
		k->cpu = cpu;
	k->stage_start = s->now;
	complete(s, r, NONE, s->now);	/* drop the hold */
}

static void dispatch(struct sim *s, const struct ev *e)
{
	switch (e->type) {
	case EV_STAGE:
		stage(s, e->a);
		break;
	case EV_FLOW_START:
		flow_start(s, e->a);
		break;
	case EV_FLOW_END:
		flow_end(s, e->a, e->b);
		break;
	case EV_DELIVER:
		deliver(s, e->a);
		break;
	case EV_COMPLETE:
		complete(s, e->a, e->b, s->now);
		break;
	}
}

/* ---- entry points ------------------------------------------------------------------------- */

void simnet_cfg_default(struct simnet_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->fab.topo = SIMNET_STAR;
	c->fab.ranks_per_node = 1;
	c->fab.rails = 1;
	c->fab.link_bw = 12.5e9;
	c->fab.mem_bw = 20e9;
	c->fab.spines = 1;
	c->fab.oversub = 1;
	c->args.elem_size = 4;
	c->chunk_bytes = 256 << 10;
	c->red_bw = 10e9;
	c->trace_rank = 0;
	simnet_transport(c, "rdma");
}

int simnet_transport(struct simnet_cfg *c, const char *name)
{
	if (!strcmp(name, "rdma")) {		/* a 100 Gb/s RoCE/InfiniBand NIC */
		c->fab.lat = 2e-6;
		c->fab.hop_lat = 0.3e-6;
		c->fab.shm_lat = 1e-6;
		c->overhead = 1e-6;
		c->eager_max = 4064;
	} else if (!strcmp(name, "tcp")) {	/* software RDMA over kernel TCP (siw, rxe) */
		c->fab.lat = 25e-6;
		c->fab.hop_lat = 1e-6;
		c->fab.shm_lat = 10e-6;
		c->overhead = 5e-6;
		c->eager_max = 4064;
	} else if (!strcmp(name, "same-host")) {	/* every rank on one node */
		c->fab.shm_lat = 1e-6;
		c->fab.ranks_per_node = 0;	/* all: set by the caller for nranks */
		c->overhead = 1e-6;
		c->eager_max = 4064;
	} else {
		return -1;
	}
	return 0;
}

int simnet_fabric_check(struct simnet_fabric *f, uint32_t nranks, char *err, size_t errlen)
{
	struct simnet_topo_info t;

	if (!f->ranks_per_node)
		f->ranks_per_node = nranks;
	return simnet_topo_init(&t, f, nranks, err, errlen);
}

void simnet_result_free(struct simnet_result *res)
{
	free(res->phases);
	res->phases = NULL;
	res->nphases = 0;
}

int simnet_run(const struct simnet_cfg *cfg, struct simnet_result *res)
{
	struct simnet_fabric fab = cfg->fab;
	double best;
	struct sim s;
	uint32_t r, l;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	s.c = cfg;
	s.res = res;
	s.p = cfg->args.nranks;
	s.msg_free = s.flow_free = s.bk_free = s.cur = NONE;
	s.red_bw = cfg->red_bw;
	s.copy_bw = cfg->copy_bw > 0 ? cfg->copy_bw : cfg->fab.mem_bw;
	if (!fab.ranks_per_node)
		fab.ranks_per_node = s.p;
	if (simnet_topo_init(&s.topo, &fab, s.p, res->err, sizeof(res->err)))
		return -1;
	s.trace = cfg->trace_rank >= 0 && (uint32_t)cfg->trace_rank < s.p ? cfg->trace_rank : 0;
	res->trace_rank = s.trace;
	s.rk = calloc(s.p, sizeof(*s.rk));
	s.links = calloc(s.topo.nlinks, sizeof(*s.links));
	s.dirty = malloc((size_t)s.topo.nlinks * sizeof(*s.dirty));
	if (!s.rk || !s.links || !s.dirty) {
		snprintf(res->err, sizeof(res->err), "out of memory");
		goto out;
	}
	for (l = 0; l < s.topo.nlinks; l++)
		s.links[l].cap = simnet_link_cap(&s.topo, l);
	if (build_scheds(&s))
		goto out;
	s.cur = s.bk_free = NONE;
	for (r = 0; r < s.p; r++)
		sn_push(&s, 0, EV_STAGE, r, 0);
	while (s.nth && !s.err) {
		uint32_t b = s.theap[0], i;

		s.now = s.bk[b].t;
		s.theap[0] = s.theap[--s.nth];
		sn_tq_heap_down(&s);
		s.cur = b;	/* events for now append to this bucket */
		for (i = 0; i < s.bk[b].n && !s.err; i++) {
			struct ev e = s.bk[b].ev[i];

			res->events++;
			dispatch(&s, &e);
			if (i + 1 == s.bk[b].n && s.ndirty && !s.err)
				sn_resolve(&s);	/* may add flow ends for now */
		}
		s.cur = NONE;
		sn_tq_unhash(&s, b);
		s.bk[b].n = 0;
		s.bk[b].next_free = s.bk_free;
		s.bk_free = b;
	}
	if (s.err) {
		snprintf(res->err, sizeof(res->err), "out of memory");
		goto out;
	}
	res->first_end = INFINITY;
	for (r = 0; r < s.p; r++) {
		struct rank *k = &s.rk[r];

		if (k->pos < k->n) {
			snprintf(res->err, sizeof(res->err), "rank %u stuck at step %u of %u "
				 "(deadlock or unmatched message)", r, k->pos, k->n);
			goto out;
		}
		if (k->finish > res->time)
			res->time = k->finish;
		if (k->finish < res->first_end)
			res->first_end = k->finish;
	}
	res->t_reduce = s.rk[s.trace].t_red;
	res->t_local = s.rk[s.trace].t_loc;
	res->t_overhead = s.rk[s.trace].t_ovh;
	res->nlinks = s.topo.nlinks;
	/* the busiest link: the most bytes for its capacity (the first of equals) */
	for (l = 0, best = 0; l < s.topo.nlinks; l++) {
		double busy = s.links[l].bytes / s.links[l].cap;

		if (busy > best) {
			best = busy;
			res->busiest_bytes = s.links[l].bytes;
			simnet_link_name(&s.topo, l, res->busiest, sizeof(res->busiest));
			res->busiest_util = res->time > 0 ? busy / res->time : 0;
		}
	}
	ret = 0;
out:
	if (s.rk)
		for (r = 0; r < s.p; r++)
			free(s.rk[r].sl);
	if (s.links)
		for (l = 0; l < s.topo.nlinks; l++)
			free(s.links[l].fl);
	for (r = 0; r < s.nus; r++)
		free(s.us[r].s);
	free(s.us);
	free(s.rk);
	free(s.links);
	free(s.dirty);
	for (r = 0; r < s.nbk; r++)
		free(s.bk[r].ev);
	free(s.bk);
	free(s.htab);
	free(s.theap);
	free(s.msgs);
	free(s.flows);
	free(s.S);
	free(s.Ls);
	free(s.lheap);
	if (ret)
		simnet_result_free(res);
	return ret;
}
