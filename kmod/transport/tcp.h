/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll TCP transport, private to kmod/transport/tcp*.c (Documentation/design.rst,
 * "Transports"; the framing: kcoll_wire.h and Documentation/wire.rst, "TCP").
 */
#ifndef _KCOLL_TRANSPORT_TCP_H
#define _KCOLL_TRANSPORT_TCP_H

#include <linux/list.h>
#include <linux/net.h>
#include <linux/workqueue.h>

#include "../kcoll_wire.h"

struct kcoll_comm;
struct kcoll_conn;
struct kcoll_ctrl;
struct kcoll_region;
struct kcoll_req;
struct kcoll_wire_hello;
struct kcoll_wire_seg;

/* The hello and its answer each wait at most this long (a work item waits). */
#define KCOLL_TCP_DIAL_MS	2000
/*
 * A connect waits at most this long: longer than ARP's 3 s, so an address no host answers
 * for fails with its EHOSTUNREACH rather than our timeout.
 */
#define KCOLL_TCP_CONNECT_MS	5000
/* Retry a refused or unanswered connect this often until the comm's deadline. */
#define KCOLL_TCP_RETRY_MS	200

/**
 * struct kcoll_tcp_item - a queued frame
 * @list:	in the conn's @unsent, @inflight or @free list
 * @hdr:	the frame header, big endian
 * @c:		MSG: the control slot
 * @r, @off:	DATA: the local bytes (the frame's @len of them at @off of @r)
 * @done:	bytes of header and payload handed to the socket
 * @end_seq:	TCP sequence just past the frame, once all of it is handed over
 */
struct kcoll_tcp_item {
	struct list_head list;
	struct kcoll_wire_tcp_frame hdr;
	struct kcoll_ctrl *c;
	struct kcoll_region *r;
	u64 off;
	u64 done;
	u32 end_seq;
};

/**
 * struct kcoll_tcp_conn - the TCP transport's end of one peer (conn->tp_priv)
 * @conn:	the connection
 * @sock:	the connected socket, or NULL (comm->lock)
 * @io:		runs kcoll_tcp_io()
 * @dead:	the socket failed or the peer broke the framing: nothing more is read or sent
 * @copy:	the route stays in this kernel: DATA is copied, not sent from our pages (set
 *		when linked, before the io work first runs)
 * @unsent, @inflight, @free: items to send, sent and not acknowledged, unused (comm->lock)
 * @nfree:	entries of @free (comm->lock)
 * @moved:	when the oldest item started waiting or the last one completed (comm->lock)
 * @tx_free:	unused control slots (comm->lock)
 * @orig_*:	the socket's callbacks before ours
 * @rx_hdr, @rx_got: the frame being received and bytes of it so far (header, then payload)
 * @rx_msg:	a MSG frame's payload
 */
struct kcoll_tcp_conn {
	struct kcoll_conn *conn;
	struct socket *sock;
	struct work_struct io;
	bool dead;
	bool copy;
	struct list_head unsent;
	struct list_head inflight;
	struct list_head free;
	unsigned int nfree;
	unsigned long moved;
	struct list_head tx_free;
	void (*orig_data_ready)(struct sock *sk);
	void (*orig_write_space)(struct sock *sk);
	void (*orig_state_change)(struct sock *sk);
	struct kcoll_wire_tcp_frame rx_hdr;
	u64 rx_got;
	void *rx_msg;
	struct kcoll_tcp_item items[KCOLL_SQ_DEPTH];
	struct kcoll_ctrl ctrl[KCOLL_TX_CTRL];
};

static inline struct kcoll_tcp_conn *kcoll_tcp(struct kcoll_conn *conn)
{
	return conn->tp_priv;
}

/* tcp.c: the link's io */
extern void (*kcoll_tcp_def_data_ready)(struct sock *sk);
void kcoll_tcp_set_callbacks(struct kcoll_tcp_conn *tc, struct socket *sock);
void kcoll_tcp_restore_callbacks(struct kcoll_tcp_conn *tc, struct socket *sock);
void kcoll_tcp_io(struct work_struct *work);
bool kcoll_tcp_drop(struct kcoll_tcp_conn *tc);
struct kcoll_ctrl *kcoll_tcp_ctrl_get(struct kcoll_conn *conn);
void kcoll_tcp_ctrl_put(struct kcoll_conn *conn, struct kcoll_ctrl *c);
int kcoll_tcp_ctrl_post(struct kcoll_conn *conn, struct kcoll_ctrl *c, size_t len);
bool kcoll_tcp_ctrl_free(struct kcoll_conn *conn);
bool kcoll_tcp_tx_room(struct kcoll_conn *conn, unsigned int n);
bool kcoll_tcp_tx_stalled(struct kcoll_conn *conn, unsigned long timeout);
int kcoll_tcp_write(struct kcoll_conn *conn, struct kcoll_region *r, u64 off, u64 len,
		    const struct kcoll_wire_seg *seg, u64 seg_off, u64 *bytes);

/* tcp_conn.c: a link's life, the handshake */
int kcoll_tcp_accept(struct kcoll_comm *comm, struct socket *sock,
		     const struct kcoll_wire_hello *h);
int kcoll_tcp_send_frame(struct socket *sock, u8 type, const void *payload, u32 len);
int kcoll_tcp_recv_frame(struct socket *sock, u8 *type, void *payload, u32 max, u32 *len);

/* tcp_listen.c */
int kcoll_tcp_listen_get(struct kcoll_comm *comm);
void kcoll_tcp_listen_put(struct kcoll_comm *comm);
void kcoll_tcp_listen_data_ready(struct sock *sk);
u16 kcoll_tcp_port_get(void);
void kcoll_tcp_listen_exit(void);

#endif /* _KCOLL_TRANSPORT_TCP_H */
