// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll_fuzz: the kcoll generic netlink family.  Messages are built by hand (no libmnl) so
 * that any length, type or nesting can be wrong; each command gets the attributes of its
 * policy (Documentation/netlink/specs/kcoll.yaml) with plausible values, and a mutation
 * breaks one thing.  The parent snapshots the configuration once and puts it back after
 * every iteration that may have changed it (fz_nl_restore()).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <linux/kcoll.h>
#include <linux/kcoll_netlink.h>

#include "kcoll_fuzz.h"

#define FZ_NLA_OK(a, len)	((len) >= (int)NLA_HDRLEN && (a)->nla_len >= NLA_HDRLEN && \
				 (a)->nla_len <= (len))
#define FZ_NLA_NEXT(a, len)	((len) -= NLA_ALIGN((a)->nla_len), \
				 (struct nlattr *)((char *)(a) + NLA_ALIGN((a)->nla_len)))

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

enum { T_U8, T_U16, T_U32, T_S32, T_U64, T_STR, T_ALGO, T_XPORT };

struct fz_nl_attr { uint16_t type; uint8_t kind; };

/* The attributes each command's policy knows, by command number. */
#define FZ_NL_NATTR	12
static const struct fz_nl_attr fz_nl_attrs[KCOLL_CMD_ENGINE_SET + 1][FZ_NL_NATTR] = {
	[KCOLL_CMD_DEV_GET] = { { KCOLL_A_DEV_NAME, T_STR } },
	[KCOLL_CMD_DEV_SET] = { { KCOLL_A_DEV_NAME, T_STR }, { KCOLL_A_DEV_ALLOWED, T_U8 },
				{ KCOLL_A_DEV_TOS, T_S32 }, { KCOLL_A_DEV_GID_INDEX, T_S32 } },
	[KCOLL_CMD_COMM_GET] = { { KCOLL_A_COMM_ID, T_U64 }, { KCOLL_A_COMM_RANK, T_U32 } },
	[KCOLL_CMD_COMM_ABORT] = { { KCOLL_A_COMM_ID, T_U64 }, { KCOLL_A_COMM_RANK, T_U32 } },
	[KCOLL_CMD_CONFIG_SET] = {
		{ KCOLL_A_CONFIG_LISTEN_PORT, T_U16 }, { KCOLL_A_CONFIG_CONNECT_TIMEOUT_MS, T_U32 },
		{ KCOLL_A_CONFIG_OP_TIMEOUT_MS, T_U32 }, { KCOLL_A_CONFIG_TOS, T_S32 },
		{ KCOLL_A_CONFIG_CHUNK_BYTES, T_U32 }, { KCOLL_A_CONFIG_SMALL_BYTES, T_U32 },
		{ KCOLL_A_CONFIG_MEDIUM_BYTES, T_U32 }, { KCOLL_A_CONFIG_TREE_RANKS, T_U32 },
		{ KCOLL_A_CONFIG_ALGO, T_ALGO }, { KCOLL_A_CONFIG_ALGO, T_ALGO },
		{ KCOLL_A_CONFIG_TRANSPORT, T_XPORT }, { KCOLL_A_CONFIG_TCP_PORT, T_U16 } },
	[KCOLL_CMD_ENGINE_GET] = { { KCOLL_A_ENGINE_NAME, T_STR } },
	[KCOLL_CMD_ENGINE_SET] = { { KCOLL_A_ENGINE_NAME, T_STR }, { KCOLL_A_ENGINE_DTYPE, T_U32 },
				   { KCOLL_A_ENGINE_OP, T_U32 } },
};

struct fz_msg {
	char *buf;
	size_t len, cap;
};

static struct nlattr *fz_put(struct fz_msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (void *)(m->buf + m->len);

	if (m->len + NLA_HDRLEN + NLA_ALIGN(len) > m->cap)
		return NULL;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	m->len += NLA_HDRLEN + NLA_ALIGN(len);
	return a;
}

static void fz_msg_init(struct fz_msg *m, char *buf, size_t cap, int family, uint8_t cmd,
			uint16_t flags)
{
	struct nlmsghdr *h = (void *)buf;
	struct genlmsghdr *g = (void *)(buf + NLMSG_HDRLEN);

	memset(buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	h->nlmsg_type = family;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	g->cmd = cmd;
	g->version = KCOLL_FAMILY_VERSION;
	m->buf = buf;
	m->cap = cap;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/*
 * Send @len bytes of @buf and read the answers until the final ack, error or done.
 * Returns 0, the kernel's -errno, or -ETIME when nothing came back.
 */
static int fz_nl_talk(int s, char *buf, size_t len, char *rx, size_t rxcap)
{
	struct pollfd pfd = { .fd = s, .events = POLLIN };
	struct nlmsghdr *h;
	int ret = -ETIME;
	ssize_t n;

	if (send(s, buf, len, 0) < 0)
		return -errno;
	while (poll(&pfd, 1, 200) > 0) {
		n = recv(s, rx, rxcap, MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? ret : -errno;
		for (h = (void *)rx; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			ret = 0;
			if (!(h->nlmsg_flags & NLM_F_MULTI))
				return 0;
		}
	}
	return ret;
}

static int fz_nl_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC), one = 1;

	if (s < 0)
		return -1;
	setsockopt(s, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (bind(s, (void *)&sa, sizeof(sa))) {
		close(s);
		return -1;
	}
	return s;
}

/* The configuration as CONFIG_GET returned it at start-up: CONFIG_SET puts it back. */
static char fz_cfg[2048];
static size_t fz_cfg_len;

int fz_nl_family(void)
{
	static char buf[4096], rx[16384];
	struct fz_msg m;
	struct nlmsghdr *h;
	struct nlattr *a;
	int s = fz_nl_socket(), family = -1, len;
	ssize_t n;

	if (s < 0)
		return -1;
	fz_msg_init(&m, buf, sizeof(buf), GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	fz_put(&m, CTRL_ATTR_FAMILY_NAME, KCOLL_FAMILY_NAME, sizeof(KCOLL_FAMILY_NAME));
	((struct nlmsghdr *)buf)->nlmsg_len = m.len;
	((struct genlmsghdr *)(buf + NLMSG_HDRLEN))->version = 1;
	n = send(s, buf, m.len, 0) < 0 ? -1 : recv(s, rx, sizeof(rx), 0);
	h = (void *)rx;
	if (n > 0 && NLMSG_OK(h, n) && h->nlmsg_type == GENL_ID_CTRL) {
		len = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
		for (a = (void *)((char *)NLMSG_DATA(h) + GENL_HDRLEN); FZ_NLA_OK(a, len);
		     a = FZ_NLA_NEXT(a, len))
			if (a->nla_type == CTRL_ATTR_FAMILY_ID)
				family = *(uint16_t *)((char *)a + NLA_HDRLEN);
	}
	if (family >= 0) {
		fz_msg_init(&m, buf, sizeof(buf), family, KCOLL_CMD_CONFIG_GET, 0);
		((struct nlmsghdr *)buf)->nlmsg_len = m.len;
		n = send(s, buf, m.len, 0) < 0 ? -1 : recv(s, rx, sizeof(rx), 0);
		if (n > 0 && NLMSG_OK(h, n) && h->nlmsg_type == family &&
		    h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN <= sizeof(fz_cfg)) {
			fz_cfg_len = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
			memcpy(fz_cfg, (char *)NLMSG_DATA(h) + GENL_HDRLEN, fz_cfg_len);
		}
	}
	close(s);
	return family;
}

/* Back to the start-up configuration, every device allowed with its defaults. */
void fz_nl_restore(int family)
{
	static const char *const devs[] = { "rxe0", "siw0" };
	static char buf[4096], rx[16384];
	int32_t minus1 = -1;
	uint8_t one = 1;
	struct fz_msg m;
	unsigned int i;
	int s = fz_nl_socket();

	if (s < 0 || family < 0)
		return;
	if (fz_cfg_len) {
		fz_msg_init(&m, buf, sizeof(buf), family, KCOLL_CMD_CONFIG_SET, NLM_F_ACK);
		memcpy(buf + m.len, fz_cfg, fz_cfg_len);
		m.len += fz_cfg_len;
		((struct nlmsghdr *)buf)->nlmsg_len = m.len;
		fz_nl_talk(s, buf, m.len, rx, sizeof(rx));
	}
	for (i = 0; i < 2; i++) {
		fz_msg_init(&m, buf, sizeof(buf), family, KCOLL_CMD_DEV_SET, NLM_F_ACK);
		fz_put(&m, KCOLL_A_DEV_NAME, devs[i], strlen(devs[i]) + 1);
		fz_put(&m, KCOLL_A_DEV_ALLOWED, &one, 1);
		fz_put(&m, KCOLL_A_DEV_TOS, &minus1, 4);
		fz_put(&m, KCOLL_A_DEV_GID_INDEX, &minus1, 4);
		((struct nlmsghdr *)buf)->nlmsg_len = m.len;
		fz_nl_talk(s, buf, m.len, rx, sizeof(rx));
	}
	close(s);
}

/* A plausible value of one attribute, in @out; returns its length. */
static size_t fz_nl_value(const struct fz_pool *p, const struct fz_nl_attr *at, uint64_t v,
			  char *out)
{
	static const char *const names[] = { "rxe0", "generic", "avx2", "nosuch", "siw0", "" };
	static const uint32_t u32s[] = { 0, 1, 2, 64, 1000, 4096, 30000, 65536, 1 << 20 };
	/* auto, RDMA, TCP; one past them, and far past */
	static const uint8_t xports[] = { 0, 1, 2, 0, 1, 2, 3, 255 };
	uint16_t port = v & 1 ? 18600 : 18601;
	uint64_t id = fz_comm_id(p->env, v % FZ_NCOMM, v >> 8 & 1);
	uint32_t u = u32s[v % 9];
	int32_t s = (int32_t)(v % 258) - 1;

	switch (at->kind) {
	case T_U8:
		out[0] = v & 3 ? 1 : 0;
		return 1;
	case T_U16:
		memcpy(out, &port, 2);
		return 2;
	case T_U32:
		if (at->type == KCOLL_A_COMM_RANK)
			u = v & 1 ? p->env->rank : 0;
		memcpy(out, &u, 4);
		return 4;
	case T_S32:
		memcpy(out, &s, 4);
		return 4;
	case T_U64:
		memcpy(out, &id, 8);
		return 8;
	case T_STR:
		strcpy(out, names[v % 6]);
		return strlen(out) + 1;
	case T_XPORT:
		out[0] = (char)xports[v % 8];
		return 1;
	}
	return 0;
}

void fz_nl_op(struct fz_pool *p, unsigned int thread, const struct fz_op *op)
{
	static __thread char buf[8192], rx[65536];
	uint8_t cmd = 1 + op->v[0] % KCOLL_CMD_ENGINE_SET;
	const struct fz_nl_attr *at;
	struct nlattr *a, *last = NULL;
	char val[80];
	uint16_t flags = NLM_F_ACK;
	unsigned int i, row;
	struct fz_msg m;
	size_t len, sent;
	int s, ret;
	uint32_t nest[2];

	if (p->env->family < 0)
		return;
	if (op->mut == 8)
		cmd = (uint8_t)fz_interesting64(op->v[3]) ^ (uint8_t)(op->v[3] >> 16);
	if ((cmd == KCOLL_CMD_DEV_GET || cmd == KCOLL_CMD_COMM_GET) && op->v[0] >> 8 & 1)
		flags |= NLM_F_DUMP;
	if (cmd == KCOLL_CMD_ENGINE_GET || op->mut == 10)
		flags |= NLM_F_DUMP;
	s = p->nlsock[thread];
	if (s < 0)
		s = p->nlsock[thread] = fz_nl_socket();
	if (s < 0)
		return;
	fz_msg_init(&m, buf, sizeof(buf), p->env->family, cmd, flags);
	for (i = 0; cmd <= KCOLL_CMD_ENGINE_SET && i < FZ_NL_NATTR; i++) {
		at = &fz_nl_attrs[cmd][i];
		if (!at->type)
			break;
		/* Attributes added with v[5] only where it is (a log without it replays alike) */
		if (at->kind == T_XPORT && !(op->v[5] >> 40 & 1))
			continue;
		/* Names and ids are there most of the time, the rest at random. */
		if (at->kind == T_STR || at->kind == T_U64 ? !(op->v[1] >> 40 & 3) : op->v[1] >> i & 1)
			continue;
		if (at->kind == T_ALGO) {
			nest[0] = (op->v[2] >> (4 * i)) % KCOLL_NUM_COLLECTIVES;
			nest[1] = (op->v[2] >> (4 * i + 20)) % KCOLL_NUM_ALGORITHMS;
			a = fz_put(&m, at->type | NLA_F_NESTED, NULL, 0);
			fz_put(&m, KCOLL_A_ALGO_COLL, &nest[0], 4);
			fz_put(&m, KCOLL_A_ALGO_ALGORITHM, &nest[1], 4);
			a->nla_len = buf + m.len - (char *)a;
			continue;
		}
		len = fz_nl_value(p, at, op->v[2] >> (3 * i), val);
		if (op->mut == 7 && at->kind != T_STR) {
			uint64_t x = fz_interesting64(op->v[3] >> i);

			memcpy(val, &x, len);
		}
		last = fz_put(&m, at->type, val, len);
	}
	switch (op->mut) {
	case 1:		/* the last scalar attribute with another length */
		if (last) {
			len = op->v[3] % 9;
			m.len = (char *)last - buf;
			memset(val, 0x41, len);
			fz_put(&m, last->nla_type, val, len);
		}
		break;
	case 2:		/* an attribute the policy does not know */
		fz_put(&m, (uint16_t)fz_interesting64(op->v[3]) & 0x7fff, &op->v[3], 4);
		break;
	case 3:		/* a nest of garbage */
		fz_put(&m, (op->v[3] % 12) | NLA_F_NESTED, &op->v, sizeof(op->v) - 8);
		break;
	case 4:		/* an attribute longer than the message */
		if (last)
			last->nla_len += 4 + op->v[3] % 64;
		break;
	case 6:		/* a string without its NUL, or too long */
		memset(val, 'x', sizeof(val));
		fz_put(&m, 1, val, op->v[3] & 1 ? 4 : sizeof(val));
		break;
	case 9:		/* one attribute many times */
		for (i = 0; last && i < 50; i++)
			fz_put(&m, last->nla_type, (char *)last + NLA_HDRLEN,
			       last->nla_len - NLA_HDRLEN);
		break;
	}
	sent = m.len;
	((struct nlmsghdr *)buf)->nlmsg_len = m.len;
	if (op->mut == 5) {	/* the header's length and the bytes sent disagree */
		((struct nlmsghdr *)buf)->nlmsg_len = op->v[3] & 1 ? m.len + 8 + op->v[3] % 64 :
						      NLMSG_HDRLEN + op->v[3] % GENL_HDRLEN;
		if (op->v[3] & 2)
			sent = ((struct nlmsghdr *)buf)->nlmsg_len;
		if (sent > sizeof(buf))
			sent = m.len;
	}
	ret = fz_nl_talk(s, buf, sent, rx, sizeof(rx));
	row = cmd <= KCOLL_CMD_ENGINE_SET ? cmd : 0;
	fz_note(FZ_NKINDS + row, ret);
}
