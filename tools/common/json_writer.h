/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Minimal streaming JSON writer for the kcoll tools.
 *
 * The caller describes the document in order (open, key, value, close) and the writer adds
 * separators, indentation and escaping.  Misuse (closing what is not open, nesting deeper than
 * KCOLL_JW_MAX_DEPTH) is recorded and reported by kcoll_jw_finish() instead of corrupting the
 * output silently, so a tool bug shows up as an error rather than as almost-JSON.
 */
#ifndef _KCOLL_JSON_WRITER_H
#define _KCOLL_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define KCOLL_JW_MAX_DEPTH	16

struct kcoll_jw {
	FILE *f;
	bool pretty;
	bool after_key;		/* a key was written; the next value belongs to it */
	int depth;
	int err;		/* first misuse, as a negative errno */
	char open[KCOLL_JW_MAX_DEPTH];	/* '{' or '[' per level */
	bool first[KCOLL_JW_MAX_DEPTH];	/* no element written yet at this level */
};

void kcoll_jw_init(struct kcoll_jw *jw, FILE *f, bool pretty);
int kcoll_jw_finish(struct kcoll_jw *jw);

void kcoll_jw_obj_open(struct kcoll_jw *jw);
void kcoll_jw_obj_close(struct kcoll_jw *jw);
void kcoll_jw_arr_open(struct kcoll_jw *jw);
void kcoll_jw_arr_close(struct kcoll_jw *jw);

void kcoll_jw_key(struct kcoll_jw *jw, const char *key);
void kcoll_jw_str(struct kcoll_jw *jw, const char *s);
void kcoll_jw_uint(struct kcoll_jw *jw, uint64_t v);
void kcoll_jw_int(struct kcoll_jw *jw, int64_t v);
void kcoll_jw_double(struct kcoll_jw *jw, double v);	/* %.9g; null if not finite */
void kcoll_jw_bool(struct kcoll_jw *jw, bool v);
void kcoll_jw_null(struct kcoll_jw *jw);

/* "key": value inside an object. */
void kcoll_jw_kv_str(struct kcoll_jw *jw, const char *key, const char *s);
void kcoll_jw_kv_uint(struct kcoll_jw *jw, const char *key, uint64_t v);
void kcoll_jw_kv_bool(struct kcoll_jw *jw, const char *key, bool v);

/* Write @s as a quoted JSON string; invalid UTF-8 becomes U+FFFD so output always parses. */
void kcoll_jw_escape(FILE *f, const char *s);

#endif /* _KCOLL_JSON_WRITER_H */
