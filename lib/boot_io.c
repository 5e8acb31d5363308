// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll bootstrap: socket I/O with deadlines, the message header and listening
 * sockets (lib/bootstrap.c has the overview).
 */
#include "bootstrap.h"

/* Socket I/O ------------------------------------------------------------------------------ */

int kcoll_poll1(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	for (;;) {
		r = poll(&p, 1, kcoll_left_ms(deadline));
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* All of @buf or an error; never SIGPIPE. */
int kcoll_send_all(int fd, const void *buf, size_t len, int64_t deadline)
{
	const unsigned char *p = buf;
	ssize_t n;
	int err;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		err = kcoll_poll1(fd, POLLOUT, deadline);
		if (err)
			return err;
	}
	return 0;
}

/* Exactly @len bytes; -ECONNRESET when the peer closes first. */
int kcoll_recv_all(int fd, void *buf, size_t len, int64_t deadline)
{
	unsigned char *p = buf;
	ssize_t n;
	int err;

	while (len) {
		n = recv(fd, p, len, 0);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		err = kcoll_poll1(fd, POLLIN, deadline);
		if (err)
			return err;
	}
	return 0;
}

void kcoll_put_hdr(unsigned char *p, uint16_t type, uint32_t len)
{
	put_be32(p, KCOLL_BOOT_MAGIC);
	put_be16(p + 4, KCOLL_BOOT_VERSION);
	put_be16(p + 6, type);
	put_be32(p + 8, len);
}

/* An ERROR message, best effort: the peer may be gone or not reading. */
void kcoll_send_error(int fd, int err, const char *msg, int64_t deadline)
{
	unsigned char buf[KCOLL_BOOT_HDR_LEN + 8 + KCOLL_BOOT_MSG_MAX];
	size_t n = strnlen(msg, KCOLL_BOOT_MSG_MAX);

	kcoll_put_hdr(buf, KCOLL_BOOT_ERROR, 8 + n);
	put_be32(buf + KCOLL_BOOT_HDR_LEN, err < 0 ? -err : err);
	put_be32(buf + KCOLL_BOOT_HDR_LEN + 4, n);
	memcpy(buf + KCOLL_BOOT_HDR_LEN + 8, msg, n);
	kcoll_send_all(fd, buf, KCOLL_BOOT_HDR_LEN + 8 + n, deadline);
}

int kcoll_listen(const struct sockaddr_storage *ss, socklen_t len, int *out)
{
	int fd, one = 1, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A restarted job must not wait for the last one's connections to leave TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) || listen(fd, SOMAXCONN)) {
		err = -errno;
		close(fd);
		return err;
	}
	*out = fd;
	return 0;
}
