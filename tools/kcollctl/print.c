// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl's output: one call per field writes it as text or as JSON, whichever the command
 * line asked for (iproute2's print_color_string() and friends, rdma/utils.c).  An object's
 * printer is therefore one function for both forms, and the two cannot list different
 * things: the text and the JSON of a field come from the same call with the same value.
 *
 * @where: KCOLL_CTL_ANY prints in both forms; KCOLL_CTL_JSON only in JSON (a key the text
 * folds into another field, e.g. the comm id in "<comm_id>-<rank>"); KCOLL_CTL_TEXT only
 * as text (a label, an explanation).  @key is the JSON key (NULL inside an array), @fmt the
 * text's printf format for the one value.
 */
#include <inttypes.h>
#include <stdarg.h>

#include "kcollctl.h"

static bool kcoll_ctl_as_json(const struct kcoll_ctl *ctl, enum kcoll_ctl_where where)
{
	return ctl->json && where != KCOLL_CTL_TEXT;
}

static bool kcoll_ctl_as_text(const struct kcoll_ctl *ctl, enum kcoll_ctl_where where)
{
	return !ctl->json && where != KCOLL_CTL_JSON;
}

static void kcoll_ctl_key(struct kcoll_ctl *ctl, const char *key)
{
	if (key)
		kcoll_jw_key(&ctl->jw, key);
}

void kcoll_ctl_doc_begin(struct kcoll_ctl *ctl, bool list)
{
	if (!ctl->json)
		return;
	kcoll_jw_init(&ctl->jw, stdout, ctl->pretty);
	if (list)
		kcoll_jw_arr_open(&ctl->jw);
	else
		kcoll_jw_obj_open(&ctl->jw);
}

int kcoll_ctl_doc_end(struct kcoll_ctl *ctl)
{
	int err;

	if (!ctl->json)
		return KCOLL_CTL_OK;
	if (ctl->jw.depth && ctl->jw.open[0] == '[')
		kcoll_jw_arr_close(&ctl->jw);
	else
		kcoll_jw_obj_close(&ctl->jw);
	err = kcoll_jw_finish(&ctl->jw);
	/* Output errors are reported once, in main(); anything else is a bug in this tool. */
	if (err && err != -EIO)
		return kcoll_ctl_err("internal error: malformed JSON output (%s)", strerror(-err));
	return KCOLL_CTL_OK;
}

void kcoll_ctl_obj_begin(struct kcoll_ctl *ctl, const char *key)
{
	if (!ctl->json)
		return;
	kcoll_ctl_key(ctl, key);
	kcoll_jw_obj_open(&ctl->jw);
}

void kcoll_ctl_obj_end(struct kcoll_ctl *ctl)
{
	if (ctl->json)
		kcoll_jw_obj_close(&ctl->jw);
}

void kcoll_ctl_arr_begin(struct kcoll_ctl *ctl, const char *key)
{
	if (!ctl->json)
		return;
	kcoll_ctl_key(ctl, key);
	kcoll_jw_arr_open(&ctl->jw);
}

void kcoll_ctl_arr_end(struct kcoll_ctl *ctl)
{
	if (ctl->json)
		kcoll_jw_arr_close(&ctl->jw);
}

/*
 * The typed printers kcoll_ctl_str(), _uint(), _int() and _bool() (kcollctl.h): one body,
 * made by this macro as iproute2's _PRINT_FUNC() makes its print_color_*(); @text is what
 * the text's @fmt gets.
 */
#define KCOLL_CTL_PRINTER(name, type, jw_fn, text)					\
void kcoll_ctl_##name(struct kcoll_ctl *ctl, enum kcoll_ctl_where where, const char *key,	\
		      const char *fmt, type v)						\
{											\
	if (kcoll_ctl_as_json(ctl, where)) {						\
		kcoll_ctl_key(ctl, key);						\
		jw_fn(&ctl->jw, v);							\
	} else if (kcoll_ctl_as_text(ctl, where)) {					\
		printf(fmt, text);							\
	}										\
}

KCOLL_CTL_PRINTER(str, const char *, kcoll_jw_str, v)
KCOLL_CTL_PRINTER(uint, uint64_t, kcoll_jw_uint, v)
KCOLL_CTL_PRINTER(int, int64_t, kcoll_jw_int, v)
/* As text, @fmt gets "yes" or "no". */
KCOLL_CTL_PRINTER(bool, bool, kcoll_jw_bool, v ? "yes" : "no")

void kcoll_ctl_text(struct kcoll_ctl *ctl, const char *fmt, ...)
{
	va_list ap;

	if (ctl->json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void kcoll_ctl_nl(struct kcoll_ctl *ctl)
{
	if (!ctl->json)
		putchar('\n');
}

/* Traffic counters: "tx <bytes>B/<ops> rx <bytes>B/<ops>" as text. */
void kcoll_ctl_traffic(struct kcoll_ctl *ctl, const struct kcoll_ctl_traffic *t)
{
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "tx_bytes", " tx %" PRIu64 "B", t->tx_bytes);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "tx_ops", "/%" PRIu64, t->tx_ops);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "rx_bytes", " rx %" PRIu64 "B", t->rx_bytes);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "rx_ops", "/%" PRIu64, t->rx_ops);
}
