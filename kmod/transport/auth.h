/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcoll connection authentication shared by the transports that connect over the network
 * (RDMA, TCP): the hello a connecting rank sends, the checks its listener makes, the
 * accept's proof that the listener holds the communicator's secret too (kcoll_wire.h).
 */
#ifndef _KCOLL_TRANSPORT_AUTH_H
#define _KCOLL_TRANSPORT_AUTH_H

#include <linux/socket.h>
#include <linux/types.h>

struct kcoll_comm;
struct kcoll_conn;
struct kcoll_wire_hello;
struct kcoll_wire_accept;
struct kcoll_wire_reject;

void kcoll_conn_hello(struct kcoll_conn *conn, struct kcoll_wire_hello *h);
bool kcoll_auth_accept_ok(struct kcoll_conn *conn, const struct kcoll_wire_accept *acc,
			  size_t len);
void kcoll_auth_accept_msg(const struct kcoll_comm *comm, const struct kcoll_wire_hello *h,
			   struct kcoll_wire_accept *acc);
void kcoll_auth_reject_msg(u8 reason, struct kcoll_wire_reject *rej);
int kcoll_auth_hello_ok(const struct kcoll_wire_hello *h, size_t len);
int kcoll_auth_peer_ok(struct kcoll_comm *comm, const struct kcoll_wire_hello *h,
		       const struct sockaddr *from);

#endif /* _KCOLL_TRANSPORT_AUTH_H */
