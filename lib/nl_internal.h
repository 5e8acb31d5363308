/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libkcoll's control plane (the "kcoll" generic netlink family through libmnl): what its
 * files share.  nl_core.c: the handle, requests, family lookup; nl_attr.c: the attribute
 * decoder; nl_dev.c, nl_comm.c, nl_config.c, nl_engine.c: one object each; nl_event.c: the
 * events group.
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

/*
 * Attributes decoded by table (nl_attr.c): an object's table, indexed by attribute type,
 * names the field each attribute lands in.  Integers are stored in the field's own size, so a
 * u32 fills an int32_t and a u8 an int; one shorter than its kind is skipped.  Types the table lacks are skipped.  Tables are const: no lock, nothing to free.
 */
enum kcoll_nl_kind {
	KCOLL_NL_NONE,		/* not decoded */
	KCOLL_NL_U8,
	KCOLL_NL_U16,
	KCOLL_NL_U32,
	KCOLL_NL_U64,
	KCOLL_NL_STR,		/* NUL-terminated; truncated to the field */
	KCOLL_NL_BIN,		/* copied when exactly as long as the field */
	KCOLL_NL_FLAG,		/* present: the field is 1 */
	KCOLL_NL_NEST,		/* the struct embedded at @off, table @sub */
	KCOLL_NL_ARRAY,		/* one more element (table @sub) of the array @off, @count */
	KCOLL_NL_CALL,		/* @call decodes it */
};

struct kcoll_nl_obj;

struct kcoll_nl_attr {
	uint8_t kind;		/* enum kcoll_nl_kind */
	uint16_t off, size;	/* the field: offsetof(), sizeof() */
	int64_t dflt;		/* integers: the value when absent (set by kcoll_nl_init()) */
	uint16_t seen;		/* with @bit: the uint32_t (or int) given @bit when present */
	uint32_t bit;
	uint16_t count;		/* KCOLL_NL_ARRAY: offsetof() its size_t element count */
	const struct kcoll_nl_obj *sub;
	int (*call)(const struct nlattr *a, void *obj);
};

struct kcoll_nl_obj {
	size_t size;		/* sizeof() the struct: an array's element */
	size_t n;		/* entries of @attrs: the highest attribute type + 1 */
	const struct kcoll_nl_attr *attrs;
};

#define KCOLL_NL_OBJ(type, attrs_) \
	{ sizeof(type), sizeof(attrs_) / sizeof((attrs_)[0]), (attrs_) }
/* Attribute -> field @m of struct @type, read as KCOLL_NL_@kind; then designated fields. */
#define KCOLL_NL_F(kind_, type, m, ...)						\
	{ .kind = KCOLL_NL_##kind_, .off = offsetof(type, m),			\
	  .size = sizeof(((type *)0)->m), __VA_ARGS__ }
#define KCOLL_NL_ARRAY_OF(type, m, n_, sub_)					\
	KCOLL_NL_F(ARRAY, type, m, .count = offsetof(type, n_), .sub = (sub_))

/* The defaults of @o's fields (nested structs too) into @obj; zeroes stay. */
void kcoll_nl_init(const struct kcoll_nl_obj *o, void *obj);
/* Decode a generic netlink message's, or a nest's, attributes into @obj; 0 or -ENOMEM. */
int kcoll_nl_parse_msg(const struct kcoll_nl_obj *o, const struct nlmsghdr *nlh, void *obj);
int kcoll_nl_parse_nest(const struct kcoll_nl_obj *o, const struct nlattr *nest, void *obj);
/* Put @obj's integer fields whose @bit is in @mask, in attribute order. */
void kcoll_nl_put_fields(struct nlmsghdr *nlh, const struct kcoll_nl_obj *o, const void *obj,
			 uint32_t mask);
/* The arrays of @n objects at @arr (their nested arrays first), then @arr. */
void kcoll_nl_free(const struct kcoll_nl_obj *o, void *arr, size_t n);
/* Send @nlh; each answer becomes one more object of @o in *@arr (freed on error). */
int kcoll_nl_list(struct kcoll_nl *nl, struct nlmsghdr *nlh, const struct kcoll_nl_obj *o,
		  void **arr, size_t *n);

/* The objects' tables and the event decoder, also for the host tests (test_nlattr.c). */
extern const struct kcoll_nl_obj kcoll_nl_dev_obj, kcoll_nl_comm_obj, kcoll_nl_engine_obj,
	kcoll_nl_config_obj;
struct kcoll_nl_event;
int kcoll_nl_event_parse(const struct nlmsghdr *nlh, uint16_t family,
			 struct kcoll_nl_event *ev);

#endif /* KCOLL_NL_INTERNAL_H */
