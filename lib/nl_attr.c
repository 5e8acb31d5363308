// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll control plane (nl_core.c): the attribute decoder every object shares.
 *
 * Each object file describes its struct once, as a table indexed by attribute type
 * (struct kcoll_nl_obj, nl_internal.h); this file walks a message or a nest and stores each
 * attribute where its entry says, nested objects and arrays of them included.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "libkcoll_internal.h"
#include "nl_internal.h"

/* How many bytes an integer kind's attribute holds; 0: not an integer. */
static const uint8_t kcoll_nl_width[] = {
	[KCOLL_NL_U8] = 1, [KCOLL_NL_U16] = 2, [KCOLL_NL_U32] = 4, [KCOLL_NL_U64] = 8,
};

/*
 * The unsigned integer of @from bytes at @src into @to bytes at @dst, truncated or
 * zero-extended as an assignment converts it: a u32 attribute fills an int32_t, a u8 an int.
 */
static void kcoll_nl_conv(void *dst, size_t to, const void *src, size_t from)
{
	union { uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64; } x = { .u64 = 0 };
	uint64_t v;

	if (from > sizeof(x) || to > sizeof(x))
		return;
	memcpy(&x, src, from);
	v = from == 1 ? x.u8 : from == 2 ? x.u16 : from == 4 ? x.u32 : x.u64;
	if (to == 1)
		x.u8 = (uint8_t)v;
	else if (to == 2)
		x.u16 = (uint16_t)v;
	else if (to == 4)
		x.u32 = (uint32_t)v;
	else
		x.u64 = v;
	memcpy(dst, &x, to);
}

void kcoll_nl_put_fields(struct nlmsghdr *nlh, const struct kcoll_nl_obj *o, const void *obj,
			 uint32_t mask)
{
	const struct kcoll_nl_attr *f;
	uint64_t buf;
	uint16_t t;

	for (t = 0; t < o->n; t++) {
		f = &o->attrs[t];
		if (!(f->bit & mask) || f->kind >= sizeof(kcoll_nl_width) ||
		    !kcoll_nl_width[f->kind])
			continue;
		kcoll_nl_conv(&buf, kcoll_nl_width[f->kind], (const char *)obj + f->off, f->size);
		mnl_attr_put(nlh, t, kcoll_nl_width[f->kind], &buf);
	}
}

void kcoll_nl_init(const struct kcoll_nl_obj *o, void *obj)
{
	const struct kcoll_nl_attr *f;

	for (f = o->attrs; f < o->attrs + o->n; f++) {
		if (f->kind == KCOLL_NL_NEST)
			kcoll_nl_init(f->sub, (char *)obj + f->off);
		else if (f->dflt)
			kcoll_nl_conv((char *)obj + f->off, f->size, &f->dflt, sizeof(f->dflt));
	}
}

/* One attribute @a, described by @f, into @obj. */
static int kcoll_nl_one(const struct kcoll_nl_attr *f, const struct nlattr *a, void *obj)
{
	static const uint8_t one = 1;
	char *field = (char *)obj + f->off;
	void *e;

	switch (f->kind) {
	case KCOLL_NL_U8:
	case KCOLL_NL_U16:
	case KCOLL_NL_U32:
	case KCOLL_NL_U64:
		/* a short one would be read past its end: the field keeps its default */
		if (mnl_attr_get_payload_len(a) < kcoll_nl_width[f->kind])
			return 0;
		kcoll_nl_conv(field, f->size, mnl_attr_get_payload(a), kcoll_nl_width[f->kind]);
		break;
	case KCOLL_NL_FLAG:
		kcoll_nl_conv(field, f->size, &one, 1);
		break;
	case KCOLL_NL_STR:
		kcoll_nl_strcpy(field, f->size, a);
		break;
	case KCOLL_NL_BIN:
		if (mnl_attr_get_payload_len(a) == f->size)
			memcpy(field, mnl_attr_get_payload(a), f->size);
		break;
	case KCOLL_NL_NEST:
		return kcoll_nl_parse_nest(f->sub, a, field);
	case KCOLL_NL_ARRAY:
		e = kcoll_nl_grow((void **)field, (size_t *)((char *)obj + f->count),
				  f->sub->size);
		if (!e)
			return -ENOMEM;
		kcoll_nl_init(f->sub, e);
		return kcoll_nl_parse_nest(f->sub, a, e);
	case KCOLL_NL_CALL:
		return f->call(a, obj);
	default:
		return 0;
	}
	if (f->bit) {
		uint32_t seen;

		memcpy(&seen, (char *)obj + f->seen, sizeof(seen));
		seen |= f->bit;
		memcpy((char *)obj + f->seen, &seen, sizeof(seen));
	}
	return 0;
}

static int kcoll_nl_parse(const struct kcoll_nl_obj *o, const struct nlattr *a,
			  const char *end, void *obj)
{
	int err;

	for (; mnl_attr_ok(a, (int)(end - (const char *)a)); a = mnl_attr_next(a)) {
		uint16_t t = mnl_attr_get_type(a);

		if (t >= o->n)
			continue;
		err = kcoll_nl_one(&o->attrs[t], a, obj);
		if (err)
			return err;
	}
	return 0;
}

int kcoll_nl_parse_msg(const struct kcoll_nl_obj *o, const struct nlmsghdr *nlh, void *obj)
{
	return kcoll_nl_parse(o, mnl_nlmsg_get_payload_offset(nlh, sizeof(struct genlmsghdr)),
			      mnl_nlmsg_get_payload_tail(nlh), obj);
}

int kcoll_nl_parse_nest(const struct kcoll_nl_obj *o, const struct nlattr *nest, void *obj)
{
	const char *start = mnl_attr_get_payload(nest);

	return kcoll_nl_parse(o, (const struct nlattr *)start,
			      start + mnl_attr_get_payload_len(nest), obj);
}

/* Embedded structs (KCOLL_NL_NEST) hold no arrays: only arrays are walked. */
void kcoll_nl_free(const struct kcoll_nl_obj *o, void *arr, size_t n)
{
	const struct kcoll_nl_attr *f;
	size_t i, count;
	void *sub;

	for (i = 0; arr && i < n; i++) {
		char *e = (char *)arr + i * o->size;

		for (f = o->attrs; f < o->attrs + o->n; f++) {
			if (f->kind != KCOLL_NL_ARRAY)
				continue;
			memcpy(&sub, e + f->off, sizeof(sub));
			memcpy(&count, e + f->count, sizeof(count));
			kcoll_nl_free(f->sub, sub, count);
		}
	}
	free(arr);
}

/*
 * The answers of one request: @o tells how to decode each into one more element of @arr.
 * On the stack of kcoll_nl_list(), which hands @arr to its caller or frees it; one thread.
 */
struct kcoll_nl_answers {
	const struct kcoll_nl_obj *o;
	void *arr;
	size_t n;
};

static int kcoll_nl_list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct kcoll_nl_answers *l = data;
	void *e = kcoll_nl_grow(&l->arr, &l->n, l->o->size);

	if (e)
		kcoll_nl_init(l->o, e);
	if (!e || kcoll_nl_parse_msg(l->o, nlh, e)) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

int kcoll_nl_list(struct kcoll_nl *nl, struct nlmsghdr *nlh, const struct kcoll_nl_obj *o,
		  void **arr, size_t *n)
{
	struct kcoll_nl_answers l = { .o = o };
	int ret;

	ret = kcoll_nl_talk(nl, nlh, kcoll_nl_list_cb, &l);
	if (ret) {
		kcoll_nl_free(o, l.arr, l.n);
		return ret;
	}
	*arr = l.arr;
	*n = l.n;
	return 0;
}
