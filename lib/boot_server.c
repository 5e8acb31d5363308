// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll bootstrap: the root, a thread that runs the rendezvous (lib/bootstrap.c has the
 * overview).
 */
#include "bootstrap.h"

/* The root ------------------------------------------------------------------------------------ */

enum { KCOLL_CONN_HELLO, KCOLL_CONN_JOINED };

struct kcoll_boot_conn {
	int fd;
	int state;
	unsigned int got;			/* bytes of buf received */
	int64_t hello_deadline;
	uint32_t rank;				/* once joined */
	struct kcoll_sockaddr peer;		/* TCP peer, for messages */
	struct kcoll_sockaddr addr;		/* what it advertises */
	struct kcoll_rank_locality loc;		/* where it runs, as it says */
	unsigned char buf[KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_HELLO_LEN];
};

struct kcoll_boot_server {
	struct kcoll_boot_server *next;		/* on kcoll_boot_list until claimed */
	pid_t pid;				/* the process whose thread this is */
	pthread_t tid;
	bool done;				/* the thread has finished */
	int lfd;				/* -1 once closed; under kcoll_boot_lock */
	int wake[2];				/* a byte on wake[1] cancels */

	uint64_t comm_id;			/* sent in the table */
	uint64_t expect_comm_id;		/* what hellos carry: comm_id, or 0 (env) */
	unsigned char secret[KCOLL_SECRET_LEN];	/* sent in the table: env init, else 0 */
	uint64_t job_tag;
	uint32_t nranks;			/* 0: set by the first hello */
	unsigned int timeout_ms;
	int64_t deadline;
	char where[KCOLL_ADDRSTR_MAX + 256];

	struct kcoll_boot_conn *conns;
	size_t nconns, cap, npending;
	int *slot;				/* rank -> index in conns, or -1 */
	uint32_t njoined;
	uint32_t first_rank;			/* who set nranks */
	int64_t accept_pause;			/* out of file descriptors: until then */
	/*
	 * The thread's allocations all hang off this struct: a child forked while it runs
	 * keeps them reachable (see kcoll_boot_atfork_child()).
	 */
	struct pollfd *pfd;
	size_t pcap;
	unsigned char *tbuf;

	int err;
	char msg[KCOLL_ERRMSG_MAX];
};

static pthread_mutex_t kcoll_boot_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kcoll_boot_server *kcoll_boot_list;
/* Copies inherited through fork(): never freed, their memory is the parent's state. */
static struct kcoll_boot_server *kcoll_boot_orphans;
static pthread_once_t kcoll_boot_once = PTHREAD_ONCE_INIT;

static void kcoll_boot_msg(struct kcoll_boot_server *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void kcoll_boot_msg(struct kcoll_boot_server *s, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	s->err = err;
	va_start(ap, fmt);
	n = vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(s->msg))
		memcpy(s->msg + sizeof(s->msg) - 4, "...", 4);
}

static void kcoll_conn_drop(struct kcoll_boot_server *s, size_t i)
{
	struct kcoll_boot_conn *c = &s->conns[i];

	close(c->fd);
	if (c->state == KCOLL_CONN_JOINED) {
		s->slot[c->rank] = -1;
		s->njoined--;
	} else {
		s->npending--;
	}
	if (i != s->nconns - 1) {
		*c = s->conns[s->nconns - 1];
		if (c->state == KCOLL_CONN_JOINED)
			s->slot[c->rank] = (int)i;
	}
	s->nconns--;
}

static void kcoll_boot_accept(struct kcoll_boot_server *s, int64_t now)
{
	struct kcoll_boot_conn *c;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, n;

	for (n = 0; n < 64; n++) {
		len = sizeof(ss);
		fd = accept4(s->lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				s->accept_pause = now + 100;
			return;
		}
		if (s->npending >= KCOLL_BOOT_MAX_PENDING) {
			close(fd);
			continue;
		}
		if (s->nconns == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 16;
			void *p = realloc(s->conns, cap * sizeof(*s->conns));

			if (!p) {
				close(fd);
				continue;
			}
			s->conns = p;
			s->cap = cap;
		}
		c = &s->conns[s->nconns++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->state = KCOLL_CONN_HELLO;
		c->hello_deadline = now + KCOLL_BOOT_HELLO_MS;
		if (kcoll_ksa_from_sockaddr((struct sockaddr *)&ss, &c->peer))
			c->peer.family = 0;
		s->npending++;
	}
}

/*
 * Fail the rendezvous: every rank that joined (and @extra, the culprit) gets s->msg.  So do
 * connections whose hello has not been read yet, most likely ranks that came just too late,
 * but only as far as their socket buffer takes it at once: they may be anything.
 */
static void kcoll_boot_fail_all(struct kcoll_boot_server *s, int extra_fd)
{
	int64_t now = kcoll_now_ms(), deadline = now + 1000;
	size_t i;

	for (i = 0; i < s->nconns; i++) {
		if (s->conns[i].state == KCOLL_CONN_JOINED)
			kcoll_send_error(s->conns[i].fd, s->err, s->msg, deadline);
	}
	if (extra_fd >= 0)
		kcoll_send_error(extra_fd, s->err, s->msg, deadline);
	for (i = 0; i < s->nconns; i++) {
		if (s->conns[i].state == KCOLL_CONN_HELLO && s->conns[i].fd != extra_fd)
			kcoll_send_error(s->conns[i].fd, s->err, s->msg, now);
	}
}

#define KCOLL_EV_MORE	0	/* keep going */
#define KCOLL_EV_END	1	/* the rendezvous is over: s->err says how */

/* A complete hello from conns[i]. */
static int kcoll_boot_hello(struct kcoll_boot_server *s, size_t i, int64_t now)
{
	struct kcoll_boot_conn *c = &s->conns[i];
	const unsigned char *b = c->buf + KCOLL_BOOT_HDR_LEN;
	char peer[KCOLL_ADDRSTR_MAX], other[KCOLL_ADDRSTR_MAX], msg[KCOLL_BOOT_MSG_MAX];
	uint64_t comm_id = get_be64(b), job = get_be64(b + 8);
	uint32_t rank = get_be32(b + 16), nranks = get_be32(b + 20);
	struct kcoll_rank_locality loc;
	struct kcoll_sockaddr addr;
	int j;

	if (kcoll_wire_get_addr(b + 24, &addr) ||
	    kcoll_loc_get(b + 24 + KCOLL_BOOT_ADDR_LEN, KCOLL_BOOT_LOC_LEN, &loc)) {
		kcoll_conn_drop(s, i);
		return KCOLL_EV_MORE;
	}
	kcoll_sockaddr_str(&c->peer, peer, sizeof(peer));
	/* Someone else's communicator (a stale rank of an earlier job): turn it away alone. */
	if (comm_id != s->expect_comm_id || job != s->job_tag) {
		snprintf(msg, sizeof(msg), "the bootstrap root at %s serves another communicator "
			 "(the %s does not match)", s->where,
			 comm_id != s->expect_comm_id ? "communicator id" : "job id");
		kcoll_send_error(c->fd, -ECONNREFUSED, msg, now + 1000);
		kcoll_conn_drop(s, i);
		return KCOLL_EV_MORE;
	}
	if (!nranks || nranks > KCOLL_MAX_RANKS || rank >= nranks) {
		snprintf(msg, sizeof(msg), "rank %u of %u is not a valid rank", rank, nranks);
		kcoll_send_error(c->fd, -EINVAL, msg, now + 1000);
		kcoll_conn_drop(s, i);
		return KCOLL_EV_MORE;
	}
	if (!s->nranks) {
		s->slot = malloc(nranks * sizeof(*s->slot));
		if (!s->slot) {
			kcoll_boot_msg(s, -ENOMEM, "the bootstrap root at %s is out of memory",
				       s->where);
			kcoll_boot_fail_all(s, c->fd);
			return KCOLL_EV_END;
		}
		for (j = 0; j < (int)nranks; j++)
			s->slot[j] = -1;
		s->nranks = nranks;
		s->first_rank = rank;
		/* From now on the ranks have timeout_ms to gather. */
		s->deadline = now + s->timeout_ms;
	}
	if (nranks != s->nranks) {
		if (s->expect_comm_id)
			kcoll_boot_msg(s, -EINVAL, "nranks mismatch: rank %u (from %s) joined the "
				       "rendezvous at %s with nranks %u, but rank %u with nranks "
				       "%u", rank, peer, s->where, nranks, s->first_rank,
				       s->nranks);
		else
			kcoll_boot_msg(s, -EINVAL, "nranks mismatch: rank %u (from %s) joined the "
				       "rendezvous at %s with nranks %u, but rank 0 has %u", rank,
				       peer, s->where, nranks, s->nranks);
		kcoll_boot_fail_all(s, c->fd);
		return KCOLL_EV_END;
	}
	if (s->slot[rank] >= 0) {
		kcoll_sockaddr_str(&s->conns[s->slot[rank]].peer, other, sizeof(other));
		kcoll_boot_msg(s, -EINVAL, "duplicate rank: rank %u of %u joined the rendezvous "
			       "at %s twice (from %s and from %s)", rank, s->nranks, s->where,
			       other, peer);
		kcoll_boot_fail_all(s, c->fd);
		return KCOLL_EV_END;
	}
	c->state = KCOLL_CONN_JOINED;
	c->rank = rank;
	c->addr = addr;
	c->loc = loc;
	s->slot[rank] = (int)i;
	s->npending--;
	s->njoined++;
	if (s->njoined == s->nranks) {
		s->err = 0;
		return KCOLL_EV_END;
	}
	return KCOLL_EV_MORE;
}

/* conns[i] is readable. */
static int kcoll_boot_conn_event(struct kcoll_boot_server *s, size_t i, int64_t now)
{
	struct kcoll_boot_conn *c = &s->conns[i];
	char msg[KCOLL_BOOT_MSG_MAX];
	unsigned int need, ver;
	unsigned char byte;
	ssize_t n;

	if (c->state == KCOLL_CONN_JOINED) {
		/* A joined rank only waits: EOF means it gave up, data means it is not one. */
		n = recv(c->fd, &byte, 1, 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return KCOLL_EV_MORE;
		kcoll_conn_drop(s, i);
		return KCOLL_EV_MORE;
	}
	for (;;) {
		need = c->got < KCOLL_BOOT_HDR_LEN ? KCOLL_BOOT_HDR_LEN : sizeof(c->buf);
		n = recv(c->fd, c->buf + c->got, need - c->got, 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return KCOLL_EV_MORE;
		if (n <= 0) {
			kcoll_conn_drop(s, i);
			return KCOLL_EV_MORE;
		}
		c->got += n;
		if (c->got < need)
			continue;
		if (need == sizeof(c->buf))
			return kcoll_boot_hello(s, i, now);
		/* The header: judged before a byte of the body is read. */
		if (get_be32(c->buf) != KCOLL_BOOT_MAGIC) {
			kcoll_conn_drop(s, i);
			return KCOLL_EV_MORE;
		}
		ver = get_be16(c->buf + 4);
		if (ver != KCOLL_BOOT_VERSION) {
			snprintf(msg, sizeof(msg), "bootstrap protocol version %u is not supported "
				 "by the root at %s (it speaks version %u)", ver, s->where,
				 KCOLL_BOOT_VERSION);
			kcoll_send_error(c->fd, -EPROTONOSUPPORT, msg, now + 1000);
			kcoll_conn_drop(s, i);
			return KCOLL_EV_MORE;
		}
		if (get_be16(c->buf + 6) != KCOLL_BOOT_HELLO ||
		    get_be32(c->buf + 8) != KCOLL_BOOT_HELLO_LEN) {
			kcoll_conn_drop(s, i);
			return KCOLL_EV_MORE;
		}
	}
}

/* "1,3" or "2-5,7" (runs of three or more as ranges) into @buf; ",..." if it is cut. */
static void kcoll_boot_missing(struct kcoll_boot_server *s, char *buf, size_t len,
			       uint32_t *count)
{
	uint32_t r = 0, end;
	size_t off = 0;
	int n;

	*count = 0;
	buf[0] = '\0';
	while (r < s->nranks) {
		if (s->slot[r] >= 0) {
			r++;
			continue;
		}
		for (end = r; end + 1 < s->nranks && s->slot[end + 1] < 0; end++)
			;
		if (end == r + 1)
			end = r;	/* a pair reads better as "2,3" */
		*count += end - r + 1;
		if (off < len) {
			if (end == r)
				n = snprintf(buf + off, len - off, "%s%u", off ? "," : "", r);
			else
				n = snprintf(buf + off, len - off, "%s%u-%u", off ? "," : "", r,
					     end);
			if (n < 0 || (size_t)n >= len - off) {
				/* Cut at the last complete item. */
				buf[off] = '\0';
				if (off + 5 <= len)
					strcpy(buf + off, ",...");
				off = len;
			} else {
				off += n;
			}
		}
		r = end + 1;
	}
}

static void kcoll_boot_send_table(struct kcoll_boot_server *s)
{
	size_t len = KCOLL_BOOT_HDR_LEN + KCOLL_BOOT_TABLE_HDR +
		     (size_t)s->nranks * KCOLL_BOOT_ENTRY_LEN;
	int64_t deadline = kcoll_now_ms() + s->timeout_ms;
	unsigned char *buf, *p;
	uint32_t r;

	buf = s->tbuf = malloc(len);
	if (!buf) {
		kcoll_boot_msg(s, -ENOMEM, "the bootstrap root at %s is out of memory", s->where);
		kcoll_boot_fail_all(s, -1);
		return;
	}
	kcoll_put_hdr(buf, KCOLL_BOOT_TABLE, len - KCOLL_BOOT_HDR_LEN);
	p = buf + KCOLL_BOOT_HDR_LEN;
	put_be64(p, s->comm_id);
	put_be32(p + 8, s->nranks);
	put_be32(p + 12, 0);
	memcpy(p + 16, s->secret, KCOLL_SECRET_LEN);
	p += KCOLL_BOOT_TABLE_HDR;
	for (r = 0; r < s->nranks; r++, p += KCOLL_BOOT_ENTRY_LEN) {
		kcoll_wire_put_addr(p, &s->conns[s->slot[r]].addr);
		kcoll_loc_put(p + KCOLL_BOOT_ADDR_LEN, &s->conns[s->slot[r]].loc);
	}
	/* A rank that does not take its table times out on its side; the others go on. */
	for (r = 0; r < s->nranks; r++)
		kcoll_send_all(s->conns[s->slot[r]].fd, buf, len, deadline);
	free(buf);
	s->tbuf = NULL;
}

static void kcoll_boot_run(struct kcoll_boot_server *s)
{
	struct pollfd *pfd;
	size_t i, np;
	int64_t now, wake_at;
	char missing[256];
	uint32_t count;
	int r;

	for (;;) {
		now = kcoll_now_ms();
		wake_at = s->deadline;
		for (i = s->nconns; i-- > 0;) {
			if (s->conns[i].state != KCOLL_CONN_HELLO)
				continue;
			if (s->conns[i].hello_deadline <= now)
				kcoll_conn_drop(s, i);
		}
		for (i = 0; i < s->nconns; i++) {
			if (s->conns[i].state == KCOLL_CONN_HELLO &&
			    s->conns[i].hello_deadline < wake_at)
				wake_at = s->conns[i].hello_deadline;
		}
		if (now >= s->deadline) {
			/*
			 * Whoever connected but waits in the backlog (a root thread starved on a
			 * loaded host) is told why too, not just closed on.
			 */
			if (s->accept_pause <= now)
				kcoll_boot_accept(s, now);
			if (!s->nranks) {
				kcoll_boot_msg(s, -ETIMEDOUT, "no rank joined the rendezvous at %s "
					       "within %u ms", s->where, s->timeout_ms);
				kcoll_boot_fail_all(s, -1);
				break;
			}
			kcoll_boot_missing(s, missing, sizeof(missing), &count);
			kcoll_boot_msg(s, -ETIMEDOUT, "%s %s of %u never joined the rendezvous "
				       "at %s within %u ms", count == 1 ? "rank" : "ranks",
				       missing, s->nranks, s->where, s->timeout_ms);
			kcoll_boot_fail_all(s, -1);
			break;
		}
		if (s->accept_pause > now && s->accept_pause < wake_at)
			wake_at = s->accept_pause;
		if (s->pcap < s->nconns + 2) {
			void *p = realloc(s->pfd, (s->nconns + 2) * sizeof(*s->pfd));

			if (!p) {
				kcoll_boot_msg(s, -ENOMEM, "the bootstrap root at %s is out of "
					       "memory", s->where);
				kcoll_boot_fail_all(s, -1);
				break;
			}
			s->pfd = p;
			s->pcap = s->nconns + 2;
		}
		pfd = s->pfd;
		pfd[0] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->accept_pause > now ? -1 : s->lfd,
					  .events = POLLIN };
		np = s->nconns;
		for (i = 0; i < np; i++)
			pfd[i + 2] = (struct pollfd){ .fd = s->conns[i].fd, .events = POLLIN };
		r = poll(pfd, np + 2, kcoll_left_ms(wake_at));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			kcoll_boot_msg(s, -errno, "the bootstrap root at %s: poll: %s", s->where,
				       strerror(errno));
			kcoll_boot_fail_all(s, -1);
			break;
		}
		if (pfd[0].revents) {
			kcoll_boot_msg(s, -ECANCELED, "the rendezvous at %s was cancelled by the "
				       "root process", s->where);
			kcoll_boot_fail_all(s, -1);
			break;
		}
		now = kcoll_now_ms();
		/* Backwards: dropping conns[i] moves the last one, already seen, into i. */
		r = KCOLL_EV_MORE;
		for (i = np; i-- > 0 && r == KCOLL_EV_MORE;) {
			if (pfd[i + 2].revents)
				r = kcoll_boot_conn_event(s, i, now);
		}
		if (r == KCOLL_EV_END) {
			if (!s->err)
				kcoll_boot_send_table(s);
			break;
		}
		if (pfd[1].revents)
			kcoll_boot_accept(s, now);
	}
	free(s->pfd);
	s->pfd = NULL;
}

static void *kcoll_boot_thread(void *arg)
{
	struct kcoll_boot_server *s = arg;
	size_t i;

	kcoll_boot_run(s);
	for (i = 0; i < s->nconns; i++) {
		/* FIN after the last byte: the ranks read their answer before the close. */
		shutdown(s->conns[i].fd, SHUT_WR);
		close(s->conns[i].fd);
	}
	s->nconns = 0;
	free(s->conns);
	s->conns = NULL;
	free(s->slot);
	s->slot = NULL;
	pthread_mutex_lock(&kcoll_boot_lock);
	close(s->lfd);
	s->lfd = -1;
	s->done = true;
	pthread_mutex_unlock(&kcoll_boot_lock);
	return NULL;
}

/* Registry of this process's root threads ------------------------------------------------ */

/* Close a root's listening socket and wake pipe (those still open), and mark them closed. */
static void kcoll_boot_close(struct kcoll_boot_server *s)
{
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	s->lfd = s->wake[0] = s->wake[1] = -1;
}

static void kcoll_boot_free(struct kcoll_boot_server *s)
{
	kcoll_boot_close(s);
	explicit_bzero(s->secret, sizeof(s->secret));
	free(s);
}

/* Stop (when @stop) and join a root thread of this process, and free it. */
static void kcoll_boot_finish(struct kcoll_boot_server *s, bool stop)
{
	if (stop && write(s->wake[1], "x", 1) < 0) {
		/* The pipe holds a byte already: the thread is being stopped. */
	}
	pthread_join(s->tid, NULL);
	kcoll_boot_free(s);
}

static void kcoll_boot_atfork_prepare(void)
{
	pthread_mutex_lock(&kcoll_boot_lock);
}

static void kcoll_boot_atfork_parent(void)
{
	pthread_mutex_unlock(&kcoll_boot_lock);
}

/*
 * The child has no root threads.  Close its copies of their sockets at once, so that it does
 * not keep a listening port of its parent open (ranks would connect to a socket nobody
 * accepts on), and set the entries aside: what their threads had allocated is a snapshot
 * that may be mid-update, not safe to free.
 */
static void kcoll_boot_atfork_child(void)
{
	struct kcoll_boot_server *s;

	while ((s = kcoll_boot_list)) {
		kcoll_boot_list = s->next;
		kcoll_boot_close(s);
		s->next = kcoll_boot_orphans;
		kcoll_boot_orphans = s;
	}
	pthread_mutex_unlock(&kcoll_boot_lock);
}

static void kcoll_boot_init_once(void)
{
	pthread_atfork(kcoll_boot_atfork_prepare, kcoll_boot_atfork_parent,
		       kcoll_boot_atfork_child);
}

/* Join root threads that have finished unclaimed. */
void kcoll_boot_reap(void)
{
	struct kcoll_boot_server **pp, *s, *dead = NULL;
	pid_t pid = getpid();

	pthread_mutex_lock(&kcoll_boot_lock);
	for (pp = &kcoll_boot_list; (s = *pp);) {
		if (s->done && s->pid == pid) {
			*pp = s->next;
			s->next = dead;
			dead = s;
		} else {
			pp = &s->next;
		}
	}
	pthread_mutex_unlock(&kcoll_boot_lock);
	while ((s = dead)) {
		dead = s->next;
		kcoll_boot_finish(s, false);
	}
}

/* At exit or dlclose(): no thread may outlive the code it runs. */
__attribute__((destructor)) static void kcoll_boot_fini(void)
{
	struct kcoll_boot_server *s, *list;

	pthread_mutex_lock(&kcoll_boot_lock);
	list = kcoll_boot_list;
	kcoll_boot_list = NULL;
	pthread_mutex_unlock(&kcoll_boot_lock);
	while ((s = list)) {
		list = s->next;
		kcoll_boot_finish(s, true);
	}
}

int kcoll_bootstrap_root_join(uint64_t comm_id, bool stop, char *msg, size_t len)
{
	struct kcoll_boot_server **pp, *s;
	pid_t pid = getpid();
	int err;

	pthread_mutex_lock(&kcoll_boot_lock);
	for (pp = &kcoll_boot_list; (s = *pp); pp = &s->next) {
		if (s->pid == pid && s->comm_id == comm_id) {
			*pp = s->next;
			break;
		}
	}
	pthread_mutex_unlock(&kcoll_boot_lock);
	if (!s)
		return -ENOENT;
	if (stop && write(s->wake[1], "x", 1) < 0) {
		/* Full pipe: a stop is pending already. */
	}
	pthread_join(s->tid, NULL);
	err = s->err;
	if (msg && len)
		snprintf(msg, len, "%s", s->msg);
	s->pid = 0;
	kcoll_boot_free(s);
	return err;
}

int kcoll_bootstrap_root_count(void)
{
	struct kcoll_boot_server *s;
	pid_t pid = getpid();
	int n = 0;

	pthread_mutex_lock(&kcoll_boot_lock);
	for (s = kcoll_boot_list; s; s = s->next)
		n += s->pid == pid;
	pthread_mutex_unlock(&kcoll_boot_lock);
	return n;
}

/*
 * Start a root thread listening on @lfd (taken over, closed on failure too).  @where names it
 * in messages.
 */
int kcoll_boot_start(int lfd, const char *where, uint64_t comm_id,
		     uint64_t expect_comm_id, const unsigned char *secret,
		     uint64_t job_tag, uint32_t nranks, unsigned int timeout_ms)
{
	struct kcoll_boot_server *s;
	sigset_t all, old;
	int err;

	pthread_once(&kcoll_boot_once, kcoll_boot_init_once);
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(lfd);
		return kcoll_fail(-ENOMEM, "out of memory");
	}
	s->lfd = lfd;
	s->wake[0] = s->wake[1] = -1;
	if (pipe2(s->wake, O_CLOEXEC | O_NONBLOCK)) {
		err = -errno;
		kcoll_boot_free(s);
		return kcoll_fail(err, "pipe: %s", strerror(-err));
	}
	s->pid = getpid();
	s->comm_id = comm_id;
	s->expect_comm_id = expect_comm_id;
	if (secret)
		memcpy(s->secret, secret, KCOLL_SECRET_LEN);
	s->job_tag = job_tag;
	s->nranks = nranks;
	s->timeout_ms = timeout_ms;
	s->deadline = kcoll_now_ms() + timeout_ms;
	snprintf(s->where, sizeof(s->where), "%s", where);
	if (nranks) {
		s->slot = malloc(nranks * sizeof(*s->slot));
		if (!s->slot) {
			kcoll_boot_free(s);
			return kcoll_fail(-ENOMEM, "out of memory");
		}
		memset(s->slot, 0xff, nranks * sizeof(*s->slot));
	}

	/* The thread takes no signal of the application's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_mutex_lock(&kcoll_boot_lock);
	err = pthread_create(&s->tid, NULL, kcoll_boot_thread, s);
	if (!err) {
		s->next = kcoll_boot_list;
		kcoll_boot_list = s;
	}
	pthread_mutex_unlock(&kcoll_boot_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(s->slot);
		kcoll_boot_free(s);
		return kcoll_fail(-err, "cannot start the bootstrap root thread: %s",
				  strerror(err));
	}
	return 0;
}
