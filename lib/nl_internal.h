/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libkcoll's control plane (the "kcoll" generic netlink family through libmnl): what its
 * files share.  nl_core.c: the handle, requests, family lookup; nl_dev.c, nl_comm.c,
 * nl_config.c, nl_engine.c: one object each; nl_event.c: the events group.
 */
#ifndef KCOLL_NL_INTERNAL_H
#define KCOLL_NL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

struct kcoll_nl {
	struct mnl_socket *sock;
	uint16_t family;
	uint32_t events_grp;	/* 0: the family has no events group */
	uint32_t portid;
	uint32_t seq;
	char *buf;		/* MNL_SOCKET_BUFFER_SIZE bytes, at least 8 KiB */
	size_t bufsz;
};

struct nlmsghdr *kcoll_nl_req(struct kcoll_nl *nl, uint16_t type, uint16_t flags,
			      uint8_t cmd, uint8_t version);
int kcoll_nl_talk(struct kcoll_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);
void *kcoll_nl_grow(void **arr, size_t *n, size_t size);
void kcoll_nl_strcpy(char *dst, size_t len, const struct nlattr *a);

#endif /* KCOLL_NL_INTERNAL_H */
