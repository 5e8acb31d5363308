// SPDX-License-Identifier: GPL-2.0-only
/*
 * core/kcoll_sim.c - the schedule simulator for host tests (see kcoll_sim.h).  Userspace
 * only: it allocates, prints and uses libc freely.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>

#include "kcoll_sim.h"

static int sim_fail(struct kcoll_sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int sim_fail(struct kcoll_sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->err[0])
		return -1;	/* keep the first error */
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return -1;
}

static const char *const op_names[] = { "SEND", "RECV", "RECV_REDUCE", "COPY", "REDUCE" };

static bool is_xfer(u8 op)
{
	return op == KCOLL_STEP_SEND || op == KCOLL_STEP_RECV || op == KCOLL_STEP_RECV_REDUCE;
}

static bool is_recv(u8 op)
{
	return op == KCOLL_STEP_RECV || op == KCOLL_STEP_RECV_REDUCE;
}

static bool is_reduction(enum kcoll_collective c)
{
	return c == KCOLL_REDUCE || c == KCOLL_ALLREDUCE ||
	       c == KCOLL_REDUCE_SCATTER || c == KCOLL_REDUCE_SCATTERV;
}

static u8 *buf_ptr(struct kcoll_sim_rank *k, u8 buf, u64 off)
{
	switch (buf) {
	case KCOLL_BUF_SEND:
		return k->send + off;
	case KCOLL_BUF_RECV:
		return k->recv + off;
	case KCOLL_BUF_SCRATCH:
		return k->scratch + off;
	default:
		return NULL;
	}
}

static bool region_ok(struct kcoll_sim_rank *k, u8 buf, u64 off, u64 bytes, bool write)
{
	u64 len;

	switch (buf) {
	case KCOLL_BUF_SEND:
		if (write)
			return false;
		len = k->send_len;
		break;
	case KCOLL_BUF_RECV:
		len = k->recv_len;
		break;
	case KCOLL_BUF_SCRATCH:
		len = k->scratch_len;
		break;
	default:
		return false;
	}
	return off <= len && bytes <= len - off;
}

/* ---- static checks ---------------------------------------------------------------------- */

struct ival {
	u64 start, end;
	u32 step;
	u8 buf;
	u8 write;
};

static int ival_cmp(const void *x, const void *y)
{
	const struct ival *a = x, *b = y;

	if (a->buf != b->buf)
		return a->buf < b->buf ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return 0;
}

static bool ov(u8 b1, u64 o1, u8 b2, u64 o2, u64 n)
{
	return b1 == b2 && o1 < o2 + n && o2 < o1 + n;
}

/* Within one step: aliasing allowed only as documented (exactly equal or disjoint). */
static int check_step_alias(struct kcoll_sim *s, u32 r, u32 i)
{
	struct kcoll_step *st = &s->rk[r].steps[i];
	u64 n = st->bytes;

	switch (st->op) {
	case KCOLL_STEP_COPY:
		if (ov(st->src_buf, st->src_off, st->dst_buf, st->dst_off, n))
			return sim_fail(s, "rank %u step %u: COPY regions overlap", r, i);
		break;
	case KCOLL_STEP_RECV_REDUCE:
	case KCOLL_STEP_REDUCE:
		if (ov(st->src_buf, st->src_off, st->dst_buf, st->dst_off, n) &&
		    !(st->src_buf == st->dst_buf && st->src_off == st->dst_off))
			return sim_fail(s, "rank %u step %u: %s src/dst partly overlap", r, i,
					op_names[st->op]);
		if (ov(KCOLL_BUF_SCRATCH, st->tmp_off, st->dst_buf, st->dst_off, n) &&
		    !(st->dst_buf == KCOLL_BUF_SCRATCH && st->tmp_off == st->dst_off))
			return sim_fail(s, "rank %u step %u: %s tmp/dst partly overlap", r, i,
					op_names[st->op]);
		if (ov(KCOLL_BUF_SCRATCH, st->tmp_off, st->src_buf, st->src_off, n))
			return sim_fail(s, "rank %u step %u: %s tmp overlaps src", r, i,
					op_names[st->op]);
		break;
	default:
		break;
	}
	return 0;
}

static int check_stage_hazards(struct kcoll_sim *s, u32 r, u32 b, u32 e, struct ival **iv,
			       size_t *cap)
{
	struct kcoll_sim_rank *k = &s->rk[r];
	size_t n = 0, i, j;
	u32 x;

	if (*cap < 3 * (size_t)(e - b)) {
		*cap = 3 * (size_t)(e - b) + 16;
		free(*iv);
		*iv = malloc(*cap * sizeof(**iv));
		if (!*iv)
			return sim_fail(s, "out of memory");
	}
#define ADD(BUF, OFF, W)							\
	do {									\
		if (st->bytes) {						\
			(*iv)[n].start = (OFF);					\
			(*iv)[n].end = (OFF) + st->bytes;			\
			(*iv)[n].step = x;					\
			(*iv)[n].buf = (BUF);					\
			(*iv)[n].write = (W);					\
			n++;							\
		}								\
	} while (0)
	for (x = b; x < e; x++) {
		struct kcoll_step *st = &k->steps[x];

		switch (st->op) {
		case KCOLL_STEP_SEND:
			ADD(st->src_buf, st->src_off, 0);
			break;
		case KCOLL_STEP_RECV:
			ADD(st->dst_buf, st->dst_off, 1);
			break;
		case KCOLL_STEP_COPY:
			ADD(st->src_buf, st->src_off, 0);
			ADD(st->dst_buf, st->dst_off, 1);
			break;
		default:	/* RECV_REDUCE, REDUCE */
			if (!(st->src_buf == st->dst_buf && st->src_off == st->dst_off))
				ADD(st->src_buf, st->src_off, 0);
			ADD(st->dst_buf, st->dst_off, 1);
			if (!(st->dst_buf == KCOLL_BUF_SCRATCH && st->dst_off == st->tmp_off))
				ADD(KCOLL_BUF_SCRATCH, st->tmp_off, st->op == KCOLL_STEP_RECV_REDUCE);
			break;
		}
	}
#undef ADD
	if (n < 2)
		return 0;
	if (n <= 24) {	/* insertion sort: most stages have a handful of steps */
		for (i = 1; i < n; i++) {
			struct ival v = (*iv)[i];

			for (j = i; j > 0 && ival_cmp(&(*iv)[j - 1], &v) > 0; j--)
				(*iv)[j] = (*iv)[j - 1];
			(*iv)[j] = v;
		}
	} else {
		qsort(*iv, n, sizeof(**iv), ival_cmp);
	}
	for (i = 0; i < n; i++) {
		struct ival *a = &(*iv)[i];

		for (j = i + 1; j < n; j++) {
			struct ival *c = &(*iv)[j];

			if (c->buf != a->buf || c->start >= a->end)
				break;
			if (c->step != a->step && (a->write || c->write))
				return sim_fail(s, "rank %u stage %u: steps %u (%s) and %u (%s) touch "
						"buffer %u bytes [%llu,%llu) and [%llu,%llu) concurrently",
						r, k->steps[a->step].stage, a->step,
						op_names[k->steps[a->step].op], c->step,
						op_names[k->steps[c->step].op], a->buf,
						(unsigned long long)a->start, (unsigned long long)a->end,
						(unsigned long long)c->start, (unsigned long long)c->end);
		}
	}
	return 0;
}

static int check_rank(struct kcoll_sim *s, u32 r, struct ival **iv, size_t *cap)
{
	struct kcoll_sim_rank *k = &s->rk[r];
	const struct kcoll_coll_args *a = &k->args;
	u32 i, b, *sctr = s->ctr, *rctr = s->ctr + s->p;
	u64 es = a->elem_size;

	for (i = 0; i < k->info.nsteps; i++) {
		struct kcoll_step *st = &k->steps[i];
		u32 prev = i ? k->steps[i - 1].stage : 0;

		if (st->stage != prev && st->stage != prev + 1)
			return sim_fail(s, "rank %u step %u: stage %u after %u", r, i, st->stage,
					prev);
		if (st->op > KCOLL_STEP_REDUCE)
			return sim_fail(s, "rank %u step %u: bad op %u", r, i, st->op);
		if (is_xfer(st->op) && (st->peer >= s->p || st->peer == r))
			return sim_fail(s, "rank %u step %u: bad peer %u", r, i, st->peer);
		if (!st->bytes) {
			if (a->coll != KCOLL_BARRIER || !is_xfer(st->op) ||
			    st->op == KCOLL_STEP_RECV_REDUCE)
				return sim_fail(s, "rank %u step %u: %s of 0 bytes", r, i,
						op_names[st->op]);
		} else {
			bool srd = st->op != KCOLL_STEP_RECV, dwr = st->op != KCOLL_STEP_SEND;

			if (srd && !region_ok(k, st->src_buf, st->src_off, st->bytes, false))
				return sim_fail(s, "rank %u step %u: %s source buf %u [%llu,+%llu) "
						"outside its buffer", r, i, op_names[st->op],
						st->src_buf, (unsigned long long)st->src_off,
						(unsigned long long)st->bytes);
			if (dwr && !region_ok(k, st->dst_buf, st->dst_off, st->bytes, true))
				return sim_fail(s, "rank %u step %u: %s destination buf %u "
						"[%llu,+%llu) outside its buffer or not writable", r, i,
						op_names[st->op], st->dst_buf,
						(unsigned long long)st->dst_off,
						(unsigned long long)st->bytes);
			if ((st->op == KCOLL_STEP_RECV_REDUCE || st->op == KCOLL_STEP_REDUCE) &&
			    !region_ok(k, KCOLL_BUF_SCRATCH, st->tmp_off, st->bytes, true))
				return sim_fail(s, "rank %u step %u: tmp [%llu,+%llu) outside scratch "
						"of %llu", r, i, (unsigned long long)st->tmp_off,
						(unsigned long long)st->bytes,
						(unsigned long long)k->scratch_len);
			if (st->bytes % es)
				return sim_fail(s, "rank %u step %u: %llu bytes, not whole elements",
						r, i, (unsigned long long)st->bytes);
		}
		if ((st->op == KCOLL_STEP_RECV_REDUCE || st->op == KCOLL_STEP_REDUCE) &&
		    !is_reduction(a->coll))
			return sim_fail(s, "rank %u step %u: reduction in a non-reducing collective",
					r, i);
		if (check_step_alias(s, r, i))
			return -1;
		if (st->op == KCOLL_STEP_SEND)
			k->seq[i] = sctr[st->peer]++;
		else if (is_recv(st->op))
			k->seq[i] = rctr[st->peer]++;
	}
	if (k->info.nsteps && k->steps[k->info.nsteps - 1].stage + 1 != k->info.nstages)
		return sim_fail(s, "rank %u: nstages %u but last stage %u", r, k->info.nstages,
				k->steps[k->info.nsteps - 1].stage);
	for (i = 0; i < k->info.nsteps; i++)
		if (is_xfer(k->steps[i].op))
			sctr[k->steps[i].peer] = rctr[k->steps[i].peer] = 0;
	if (s->cfg.no_hazard_check)
		return 0;
	if (s->cfg.hazard_sample && s->p > 3 * s->cfg.hazard_sample) {
		u32 n = s->cfg.hazard_sample;

		if (r >= n && r < s->p - n && r % (s->p / n))
			return 0;
	}
	for (b = 0; b < k->info.nsteps;) {
		u32 e = b;

		while (e < k->info.nsteps && k->steps[e].stage == k->steps[b].stage)
			e++;
		if (e - b > 1 && check_stage_hazards(s, r, b, e, iv, cap))
			return -1;
		b = e;
	}
	return 0;
}

/* ---- setup ------------------------------------------------------------------------------ */

static u64 al16(u64 n)
{
	return (n + 15) & ~(u64)15;
}

int kcoll_sim_setup(struct kcoll_sim *s, const struct kcoll_sim_cfg *cfg)
{
	u32 p = cfg->args.nranks, r;
	struct ival *iv = NULL;
	size_t cap = 0;
	u64 rng = 0x9e3779b97f4a7c15ULL, total = 0, kw = ((u64)p + 63) / 64;
	u8 *ap;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (!s->cfg.engine)
		s->cfg.engine = &kcoll_reduce_engine_generic;
	s->p = p;
	if (!p)
		return sim_fail(s, "no ranks");
	s->rk = calloc(p, sizeof(*s->rk));
	s->ctr = calloc(2 * (size_t)p, sizeof(u32));
	if (!s->rk || !s->ctr)
		return sim_fail(s, "out of memory");
	/* pass 1: arguments, buffer sizes, step counts */
	for (r = 0; r < p; r++) {
		struct kcoll_sim_rank *k = &s->rk[r];
		int err;

		k->args = cfg->args;
		k->args.rank = r;
		if (cfg->rank_args)
			cfg->rank_args(cfg->ctx, r, &k->args);
		err = kcoll_sched_buf_bytes(&k->args, &k->send_len, &k->recv_len);
		if (err)
			return sim_fail(s, "rank %u: buf_bytes: %d", r, err);
		err = kcoll_sched_build(&k->args, cfg->algo, cfg->chunk_bytes, NULL, 0, &k->info);
		if (err)
			return sim_fail(s, "rank %u: counting build: %d", r, err);
		total += al16((u64)k->info.nsteps * sizeof(*k->steps)) +
			 al16((u64)k->info.nsteps * sizeof(u32)) + al16(k->info.nsteps) +
			 al16(k->send_len) + al16(k->recv_len) + al16(k->info.scratch_bytes) +
			 (cfg->check_barrier ? 2 * kw * 8 : 0);
	}
	s->arena = malloc(total ? total : 1);
	if (!s->arena)
		return sim_fail(s, "out of memory");
	ap = s->arena;
	/* pass 2: build into the arena, check */
	for (r = 0; r < p; r++) {
		struct kcoll_sim_rank *k = &s->rk[r];
		struct kcoll_sched_info info2;
		u64 i;
		int err;

		k->steps = (struct kcoll_step *)ap;
		ap += al16((u64)k->info.nsteps * sizeof(*k->steps));
		k->seq = (u32 *)ap;
		ap += al16((u64)k->info.nsteps * sizeof(u32));
		k->done = ap;
		ap += al16(k->info.nsteps);
		k->send = ap;
		ap += al16(k->send_len);
		k->recv = ap;
		ap += al16(k->recv_len);
		k->scratch = ap;
		ap += al16(k->info.scratch_bytes);
		if (cfg->check_barrier) {
			k->know = (u64 *)ap;
			k->know_next = k->know + kw;
			ap += 2 * kw * 8;
			memset(k->know, 0, 2 * kw * 8);
			k->know[r / 64] |= 1ULL << (r % 64);
		}
		memset(k->send, 0, k->send_len);
		memset(k->recv, 0, k->recv_len);
		if (k->info.nsteps && (p <= 64 || r == 0)) {
			err = kcoll_sched_build(&k->args, cfg->algo, cfg->chunk_bytes, k->steps,
						k->info.nsteps - 1, &info2);
			if (err != -ENOSPC)
				return sim_fail(s, "rank %u: build into %u-1 steps gave %d, not "
						"-ENOSPC", r, k->info.nsteps, err);
		}
		err = kcoll_sched_build(&k->args, cfg->algo, cfg->chunk_bytes, k->steps,
					k->info.nsteps, &info2);
		if (err)
			return sim_fail(s, "rank %u: build: %d", r, err);
		if (memcmp(&info2, &k->info, sizeof(info2)))
			return sim_fail(s, "rank %u: counting mode said %u steps/%u stages/%llu "
					"scratch, building %u/%u/%llu", r, k->info.nsteps,
					k->info.nstages, (unsigned long long)k->info.scratch_bytes,
					info2.nsteps, info2.nstages,
					(unsigned long long)info2.scratch_bytes);
		if (cfg->mutate)
			cfg->mutate(cfg->ctx, r, k->steps, &k->info);
		k->scratch_len = k->info.scratch_bytes;
		/* junk in scratch, so that reading it before writing shows */
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		memset(k->scratch, 0x80 | (u8)rng, k->scratch_len);
		for (i = 0; i < k->scratch_len; i += 61)
			k->scratch[i] ^= (u8)(i >> 3);
		if (check_rank(s, r, &iv, &cap)) {
			free(iv);
			return -1;
		}
		s->steps += k->info.nsteps;
		if (k->info.nstages > s->max_stages)
			s->max_stages = k->info.nstages;
	}
	free(iv);
	return 0;
}

void kcoll_sim_free(struct kcoll_sim *s)
{
	free(s->arena);
	free(s->rk);
	free(s->ctr);
	s->arena = NULL;
	s->rk = NULL;
	s->ctr = NULL;
}

/* ---- execution -------------------------------------------------------------------------- */

static void exec_reduce(struct kcoll_sim *s, struct kcoll_sim_rank *k, struct kcoll_step *st)
{
	size_t n = st->bytes / k->args.elem_size;

	s->cfg.engine->reduce3(buf_ptr(k, st->dst_buf, st->dst_off),
			       buf_ptr(k, st->src_buf, st->src_off), k->scratch + st->tmp_off, n,
			       s->cfg.dtype, s->cfg.op);
}

static void exec_local(struct kcoll_sim *s, struct kcoll_sim_rank *k, struct kcoll_step *st)
{
	if (st->op == KCOLL_STEP_COPY)
		memcpy(buf_ptr(k, st->dst_buf, st->dst_off), buf_ptr(k, st->src_buf, st->src_off),
		       st->bytes);
	else
		exec_reduce(s, k, st);
}

static int exec_xfer(struct kcoll_sim *s, u32 a, u32 i, u32 b, u32 j)
{
	struct kcoll_sim_rank *ka = &s->rk[a], *kb = &s->rk[b];
	struct kcoll_step *sa = &ka->steps[i], *sb = &kb->steps[j];

	if (sa->bytes != sb->bytes)
		return sim_fail(s, "message %u->%u #%u: send of %llu bytes (step %u, stage %u) "
				"matched a %s of %llu bytes (step %u, stage %u)", a, b, ka->seq[i],
				(unsigned long long)sa->bytes, i, sa->stage, op_names[sb->op],
				(unsigned long long)sb->bytes, j, sb->stage);
	if (sa->bytes) {
		const u8 *src = buf_ptr(ka, sa->src_buf, sa->src_off);

		if (sb->op == KCOLL_STEP_RECV) {
			memcpy(buf_ptr(kb, sb->dst_buf, sb->dst_off), src, sa->bytes);
		} else {
			memcpy(kb->scratch + sb->tmp_off, src, sa->bytes);
			exec_reduce(s, kb, sb);
		}
	}
	if (kb->know_next) {
		size_t w, nw = (s->p + 63) / 64;

		for (w = 0; w < nw; w++)
			kb->know_next[w] |= ka->know[w];
	}
	s->messages++;
	s->bytes += sa->bytes;
	ka->done[i] = kb->done[j] = 1;
	ka->pending--;
	kb->pending--;
	return 0;
}

/* Find the counterpart of rank r's transfer step i in the peer's posted stage. */
static int try_match(struct kcoll_sim *s, u32 r, u32 i)
{
	struct kcoll_sim_rank *k = &s->rk[r];
	struct kcoll_step *st = &k->steps[i];
	u32 q = st->peer, j;
	struct kcoll_sim_rank *kq = &s->rk[q];
	bool want_recv = st->op == KCOLL_STEP_SEND;

	for (j = kq->pos; j < kq->end; j++) {
		struct kcoll_step *o = &kq->steps[j];

		if (kq->done[j] || o->peer != r || !is_xfer(o->op) || kq->seq[j] != k->seq[i])
			continue;
		if (is_recv(o->op) != want_recv)
			continue;
		return want_recv ? exec_xfer(s, r, i, q, j) : exec_xfer(s, q, j, r, i);
	}
	return 0;
}

static int post_stage(struct kcoll_sim *s, u32 r)
{
	struct kcoll_sim_rank *k = &s->rk[r];
	u32 i, e = k->pos;

	while (e < k->info.nsteps && k->steps[e].stage == k->steps[k->pos].stage)
		e++;
	k->end = e;
	k->pending = 0;
	for (i = k->pos; i < e; i++) {
		if (is_xfer(k->steps[i].op)) {
			k->pending++;
		} else {
			exec_local(s, k, &k->steps[i]);
			k->done[i] = 1;
		}
	}
	for (i = k->pos; i < e; i++)
		if (!k->done[i] && is_xfer(k->steps[i].op) && try_match(s, r, i))
			return -1;
	return 0;
}

static void diagnose(struct kcoll_sim *s)
{
	u32 r, i, shown = 0;
	char msg[400];
	size_t len = 0;

	for (r = 0; r < s->p && shown < 4; r++) {
		struct kcoll_sim_rank *k = &s->rk[r];

		if (k->pos >= k->info.nsteps)
			continue;
		for (i = k->pos; i < k->end; i++) {
			struct kcoll_step *st = &k->steps[i];
			struct kcoll_sim_rank *kq;
			u32 j, total = 0;
			bool want_recv;

			if (k->done[i] || !is_xfer(st->op))
				continue;
			kq = &s->rk[st->peer];
			want_recv = st->op == KCOLL_STEP_SEND;
			for (j = 0; j < kq->info.nsteps; j++)
				if (is_xfer(kq->steps[j].op) && kq->steps[j].peer == r &&
				    is_recv(kq->steps[j].op) == want_recv)
					total++;
			len += snprintf(msg + len, sizeof(msg) - len,
					"%s rank %u stage %u: %s #%u with %u%s (peer %s %d); ",
					total <= k->seq[i] ? "UNMATCHED" : "waiting", r, st->stage,
					op_names[st->op], k->seq[i], st->peer,
					total <= k->seq[i] ? ", which has no counterpart" : "",
					kq->pos < kq->info.nsteps ? "at stage" : "finished, steps",
					kq->pos < kq->info.nsteps ? (int)kq->steps[kq->pos].stage :
					(int)kq->info.nsteps);
			if (len >= sizeof(msg))
				len = sizeof(msg) - 1;
			shown++;
			break;
		}
	}
	sim_fail(s, "deadlock or unmatched message: %s", msg);
}

int kcoll_sim_run(struct kcoll_sim *s)
{
	u32 p = s->p, r, *work, nwork = 0, finished = 0;
	u8 *queued;
	int ret = 0;

	work = malloc(p * sizeof(u32));
	queued = calloc(p, 1);
	if (!work || !queued) {
		free(work);
		free(queued);
		return sim_fail(s, "out of memory");
	}
	s->messages = s->bytes = 0;
	for (r = 0; r < p; r++) {
		struct kcoll_sim_rank *k = &s->rk[r];

		k->pos = k->end = 0;
		memset(k->done, 0, k->info.nsteps);
		if (!k->info.nsteps) {
			finished++;
			continue;
		}
		if (post_stage(s, r)) {
			ret = -1;
			goto out;
		}
	}
	for (r = 0; r < p; r++) {
		if (s->rk[r].info.nsteps && !s->rk[r].pending) {
			work[nwork++] = r;
			queued[r] = 1;
		}
	}
	/* the ranks whose pending count reached 0 through a match are found by rescans */
	while (finished < p) {
		bool progress = false;

		while (nwork) {
			struct kcoll_sim_rank *k;

			r = work[--nwork];
			queued[r] = 0;
			k = &s->rk[r];
			while (k->pos < k->info.nsteps && !k->pending) {
				if (k->know) {
					size_t w, nw = (p + 63) / 64;

					for (w = 0; w < nw; w++)
						k->know[w] |= k->know_next[w];
				}
				k->pos = k->end;
				progress = true;
				if (k->pos >= k->info.nsteps) {
					finished++;
					break;
				}
				if (post_stage(s, r)) {
					ret = -1;
					goto out;
				}
				/* peers completed by this post */
				{
					u32 i;

					for (i = k->pos; i < k->end; i++) {
						u32 q = k->steps[i].peer;

						if (!is_xfer(k->steps[i].op) || queued[q])
							continue;
						if (s->rk[q].pos < s->rk[q].info.nsteps &&
						    !s->rk[q].pending && q != r) {
							work[nwork++] = q;
							queued[q] = 1;
						}
					}
				}
			}
		}
		if (finished >= p)
			break;
		if (!progress) {
			diagnose(s);
			ret = -1;
			goto out;
		}
		/* rescan for ranks unblocked by matches made while posting */
		for (r = 0; r < p; r++) {
			struct kcoll_sim_rank *k = &s->rk[r];

			if (k->pos < k->info.nsteps && !k->pending && !queued[r]) {
				work[nwork++] = r;
				queued[r] = 1;
			}
		}
		if (!nwork) {
			diagnose(s);
			ret = -1;
			goto out;
		}
	}
	if (s->cfg.check_barrier) {
		for (r = 0; r < p; r++) {
			u32 q;

			for (q = 0; q < p; q++)
				if (!(s->rk[r].know[q / 64] & (1ULL << (q % 64)))) {
					ret = sim_fail(s, "barrier: rank %u finished without hearing "
						       "from rank %u", r, q);
					goto out;
				}
		}
	}
out:
	free(work);
	free(queued);
	return ret;
}
