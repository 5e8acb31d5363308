// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Minimal streaming JSON writer for the kcoll tools (RFC 8259 output).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "json_writer.h"

#define KCOLL_JW_INDENT	4	/* as iproute2's json_writer, so -p output looks familiar */

void kcoll_jw_init(struct kcoll_jw *jw, FILE *f, bool pretty)
{
	jw->f = f;
	jw->pretty = pretty;
	jw->after_key = false;
	jw->depth = 0;
	jw->err = 0;
}

static void kcoll_jw_newline(struct kcoll_jw *jw, int depth)
{
	if (!jw->pretty)
		return;
	fprintf(jw->f, "\n%*s", depth * KCOLL_JW_INDENT, "");
}

/*
 * Called before every key and every value that is not a key's value: the comma between
 * siblings and, when pretty, the line break and indentation.
 */
static void kcoll_jw_sep(struct kcoll_jw *jw)
{
	if (jw->after_key) {
		jw->after_key = false;
		return;
	}
	if (!jw->depth)
		return;
	if (!jw->first[jw->depth - 1])
		fputc(',', jw->f);
	jw->first[jw->depth - 1] = false;
	kcoll_jw_newline(jw, jw->depth);
}

static void kcoll_jw_open(struct kcoll_jw *jw, char c)
{
	kcoll_jw_sep(jw);
	if (jw->depth == KCOLL_JW_MAX_DEPTH) {
		jw->err = jw->err ?: -E2BIG;
		return;
	}
	fputc(c, jw->f);
	jw->open[jw->depth] = c;
	jw->first[jw->depth] = true;
	jw->depth++;
}

static void kcoll_jw_close(struct kcoll_jw *jw, char open, char close)
{
	if (!jw->depth || jw->open[jw->depth - 1] != open || jw->after_key) {
		jw->err = jw->err ?: -EINVAL;
		return;
	}
	jw->depth--;
	/* An empty container stays on one line: [] and {}. */
	if (!jw->first[jw->depth])
		kcoll_jw_newline(jw, jw->depth);
	fputc(close, jw->f);
}

void kcoll_jw_obj_open(struct kcoll_jw *jw)
{
	kcoll_jw_open(jw, '{');
}

void kcoll_jw_obj_close(struct kcoll_jw *jw)
{
	kcoll_jw_close(jw, '{', '}');
}

void kcoll_jw_arr_open(struct kcoll_jw *jw)
{
	kcoll_jw_open(jw, '[');
}

void kcoll_jw_arr_close(struct kcoll_jw *jw)
{
	kcoll_jw_close(jw, '[', ']');
}

/* Length of the valid UTF-8 sequence at @s (RFC 3629: no overlong forms, no surrogates), or 0. */
static size_t kcoll_jw_utf8_len(const unsigned char *s)
{
	unsigned int cp;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	/* A NUL (0x00) fails the continuation test, so this never reads past the string. */
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* One ASCII character, escaped where JSON requires it (quote, backslash, controls). */
static void kcoll_jw_escape_ascii(FILE *f, unsigned char c)
{
	switch (c) {
	case '"':
		fputs("\\\"", f);
		break;
	case '\\':
		fputs("\\\\", f);
		break;
	case '\b':
		fputs("\\b", f);
		break;
	case '\f':
		fputs("\\f", f);
		break;
	case '\n':
		fputs("\\n", f);
		break;
	case '\r':
		fputs("\\r", f);
		break;
	case '\t':
		fputs("\\t", f);
		break;
	default:
		/* DEL is legal JSON but unreadable on a terminal; escape it with the controls. */
		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

void kcoll_jw_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len;

	fputc('"', f);
	while (*s) {
		if (*s < 0x80) {
			kcoll_jw_escape_ascii(f, *s++);
			continue;
		}
		len = kcoll_jw_utf8_len(s);
		if (len) {
			fwrite(s, 1, len, f);
			s += len;
		} else {
			fputs("\\ufffd", f);
			s++;
		}
	}
	fputc('"', f);
}

void kcoll_jw_key(struct kcoll_jw *jw, const char *key)
{
	if (!jw->depth || jw->open[jw->depth - 1] != '{' || jw->after_key) {
		jw->err = jw->err ?: -EINVAL;
		return;
	}
	kcoll_jw_sep(jw);
	kcoll_jw_escape(jw->f, key);
	fputs(jw->pretty ? ": " : ":", jw->f);
	jw->after_key = true;
}

/* A value inside an object needs a key first; anywhere else it is fine. */
static void kcoll_jw_value(struct kcoll_jw *jw)
{
	if (jw->depth && jw->open[jw->depth - 1] == '{' && !jw->after_key)
		jw->err = jw->err ?: -EINVAL;
	kcoll_jw_sep(jw);
}

void kcoll_jw_str(struct kcoll_jw *jw, const char *s)
{
	kcoll_jw_value(jw);
	kcoll_jw_escape(jw->f, s ? s : "");
}

void kcoll_jw_uint(struct kcoll_jw *jw, uint64_t v)
{
	kcoll_jw_value(jw);
	fprintf(jw->f, "%" PRIu64, v);
}

void kcoll_jw_double(struct kcoll_jw *jw, double v)
{
	kcoll_jw_value(jw);
	if (isfinite(v))
		fprintf(jw->f, "%.9g", v);
	else
		fputs("null", jw->f);	/* JSON has no Inf or NaN */
}

void kcoll_jw_int(struct kcoll_jw *jw, int64_t v)
{
	kcoll_jw_value(jw);
	fprintf(jw->f, "%" PRId64, v);
}

void kcoll_jw_bool(struct kcoll_jw *jw, bool v)
{
	kcoll_jw_value(jw);
	fputs(v ? "true" : "false", jw->f);
}

void kcoll_jw_null(struct kcoll_jw *jw)
{
	kcoll_jw_value(jw);
	fputs("null", jw->f);
}

void kcoll_jw_kv_str(struct kcoll_jw *jw, const char *key, const char *s)
{
	kcoll_jw_key(jw, key);
	kcoll_jw_str(jw, s);
}

void kcoll_jw_kv_uint(struct kcoll_jw *jw, const char *key, uint64_t v)
{
	kcoll_jw_key(jw, key);
	kcoll_jw_uint(jw, v);
}

void kcoll_jw_kv_bool(struct kcoll_jw *jw, const char *key, bool v)
{
	kcoll_jw_key(jw, key);
	kcoll_jw_bool(jw, v);
}

/* End the document with a newline; 0, or the first misuse / an output error as -errno. */
int kcoll_jw_finish(struct kcoll_jw *jw)
{
	if (!jw->err && (jw->depth || jw->after_key))
		jw->err = -EINVAL;
	fputc('\n', jw->f);
	if (!jw->err && ferror(jw->f))
		jw->err = -EIO;
	return jw->err;
}
