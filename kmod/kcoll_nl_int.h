/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the generic netlink family "kcoll" share (kcoll_nl.c: policies, the
 * family, events; kcoll_nl_dev.c, kcoll_nl_comm.c, kcoll_nl_config.c, kcoll_nl_engine.c:
 * one object each).  Private to them: the rest of the module uses kcoll_nl.h.
 */
#ifndef _KCOLL_NL_INT_H
#define _KCOLL_NL_INT_H

#include <net/genetlink.h>
#include <linux/kcoll_netlink.h>

/*
 * The events group name other users' communicators: only administrators of the namespace
 * may join it.  A kernel without GENL_MCAST_CAP_NET_ADMIN (6.1 before its stable backport)
 * cannot check that at join time, so there kcoll sends no communicator events at all.
 */
#ifdef GENL_MCAST_CAP_NET_ADMIN
#define KCOLL_NL_EVENTS_FLAGS	GENL_MCAST_CAP_NET_ADMIN
#define KCOLL_NL_COMM_EVENTS	true
#else
#define KCOLL_NL_EVENTS_FLAGS	0
#define KCOLL_NL_COMM_EVENTS	false
#endif

/* Index of the "events" group in kcoll_nl_mcgrps. */
#define KCOLL_NL_MCGRP_EVENTS	0

extern struct genl_family kcoll_nl_family;
extern const struct nla_policy kcoll_nl_algo_policy[KCOLL_A_ALGO_MAX + 1];

/**
 * struct kcoll_nl_bound - the range of one integer attribute
 * @lo:		lowest value allowed
 * @hi:		highest value allowed
 * @is_signed:	the attribute is signed (s32)
 * @msg:	extended ACK message when the value is out of range
 */
struct kcoll_nl_bound {
	s64 lo;
	s64 hi;
	bool is_signed;
	const char *msg;
};

/* kcoll_nl.c */
int kcoll_nl_check_bounds(struct nlattr **tb, const struct kcoll_nl_bound *b, int max,
			  struct netlink_ext_ack *extack);
bool kcoll_nl_missing(struct genl_info *info, int type, const char *msg);
int kcoll_nl_dump_check(struct netlink_callback *cb);
struct sk_buff *kcoll_nl_event_new(struct net *net, u8 cmd, void **hdr);
void kcoll_nl_event_send(struct net *net, struct sk_buff *skb, void *hdr);

/* kcoll_nl_dev.c: the commands */
int kcoll_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info);
int kcoll_nl_dev_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int kcoll_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info);

/* kcoll_nl_comm.c: the commands */
int kcoll_nl_comm_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int kcoll_nl_comm_get_doit(struct sk_buff *skb, struct genl_info *info);
int kcoll_nl_comm_abort_doit(struct sk_buff *skb, struct genl_info *info);

/* kcoll_nl_config.c: the commands */
int kcoll_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info);
int kcoll_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info);

/* kcoll_nl_engine.c: the commands */
int kcoll_nl_engine_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int kcoll_nl_engine_set_doit(struct sk_buff *skb, struct genl_info *info);

#endif /* _KCOLL_NL_INT_H */
