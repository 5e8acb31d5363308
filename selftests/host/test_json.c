// SPDX-License-Identifier: GPL-2.0-only
/*
 * tools/common/json_writer: exact output, escaping, and misuse detection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "json_writer.h"

FIXTURE(jw) {
	char *buf;
	size_t len;
	FILE *f;
	struct kcoll_jw jw;
};

FIXTURE_SETUP(jw)
{
	self->f = open_memstream(&self->buf, &self->len);
	ASSERT_NE(NULL, self->f);
	kcoll_jw_init(&self->jw, self->f, false);
}

FIXTURE_TEARDOWN(jw)
{
	if (self->f)
		fclose(self->f);
	free(self->buf);
}

/* Finish the document and return what was written. */
static const char *kcoll_jw_text(FIXTURE_DATA(jw) *self, int *err)
{
	*err = kcoll_jw_finish(&self->jw);
	fflush(self->f);
	return self->buf;
}

/* The escaped form of one string, as a whole document. */
static const char *kcoll_jw_esc(FIXTURE_DATA(jw) *self, const char *s)
{
	int err;

	kcoll_jw_str(&self->jw, s);
	return kcoll_jw_text(self, &err);
}

TEST_F(jw, compact_document)
{
	struct kcoll_jw *jw = &self->jw;
	int err;

	kcoll_jw_obj_open(jw);
	kcoll_jw_kv_str(jw, "name", "rxe0");
	kcoll_jw_kv_uint(jw, "ports", 18446744073709551615ULL);
	kcoll_jw_key(jw, "delta");
	kcoll_jw_int(jw, -5);
	kcoll_jw_kv_bool(jw, "allowed", true);
	kcoll_jw_kv_bool(jw, "off", false);
	kcoll_jw_key(jw, "none");
	kcoll_jw_null(jw);
	kcoll_jw_key(jw, "list");
	kcoll_jw_arr_open(jw);
	kcoll_jw_uint(jw, 1);
	kcoll_jw_str(jw, "two");
	kcoll_jw_obj_open(jw);
	kcoll_jw_obj_close(jw);
	kcoll_jw_arr_close(jw);
	kcoll_jw_obj_close(jw);
	EXPECT_STREQ("{\"name\":\"rxe0\",\"ports\":18446744073709551615,\"delta\":-5,"
		     "\"allowed\":true,\"off\":false,\"none\":null,"
		     "\"list\":[1,\"two\",{}]}\n", kcoll_jw_text(self, &err));
	EXPECT_EQ(0, err);
}

TEST_F(jw, pretty_document)
{
	struct kcoll_jw *jw = &self->jw;
	int err;

	kcoll_jw_init(jw, self->f, true);
	kcoll_jw_arr_open(jw);
	kcoll_jw_obj_open(jw);
	kcoll_jw_kv_str(jw, "a", "b");
	kcoll_jw_key(jw, "e");
	kcoll_jw_arr_open(jw);
	kcoll_jw_arr_close(jw);
	kcoll_jw_key(jw, "n");
	kcoll_jw_arr_open(jw);
	kcoll_jw_uint(jw, 1);
	kcoll_jw_arr_close(jw);
	kcoll_jw_obj_close(jw);
	kcoll_jw_arr_close(jw);
	EXPECT_STREQ("[\n"
		     "    {\n"
		     "        \"a\": \"b\",\n"
		     "        \"e\": [],\n"
		     "        \"n\": [\n"
		     "            1\n"
		     "        ]\n"
		     "    }\n"
		     "]\n", kcoll_jw_text(self, &err));
	EXPECT_EQ(0, err);
}

TEST_F(jw, empty_array)
{
	int err;

	kcoll_jw_arr_open(&self->jw);
	kcoll_jw_arr_close(&self->jw);
	EXPECT_STREQ("[]\n", kcoll_jw_text(self, &err));
	EXPECT_EQ(0, err);
}

TEST_F(jw, escape_quote_backslash)
{
	EXPECT_STREQ("\"a\\\"b\\\\c/\"\n", kcoll_jw_esc(self, "a\"b\\c/"));
}

TEST_F(jw, escape_named_controls)
{
	EXPECT_STREQ("\"\\b\\f\\n\\r\\t\"\n", kcoll_jw_esc(self, "\b\f\n\r\t"));
}

TEST_F(jw, escape_other_controls)
{
	EXPECT_STREQ("\"\\u0001\\u001f\\u007f\"\n", kcoll_jw_esc(self, "\x01\x1f\x7f"));
}

TEST_F(jw, utf8_passes_through)
{
	/* é (2 bytes), € (3 bytes), U+1F600 (4 bytes) */
	EXPECT_STREQ("\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"\n",
		     kcoll_jw_esc(self, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
}

TEST_F(jw, invalid_utf8_replaced)
{
	/* lone continuation, overlong '/', truncated sequence, surrogate, > U+10FFFF */
	EXPECT_STREQ("\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
		     "\\ufffd\\ufffd\\ufffd\\ufffd\"\n",
		     kcoll_jw_esc(self, "\x80|\xc0\xaf|\xe2\x82|\xed\xa0\x80|\xf4\x90\x80\x80"));
}

TEST_F(jw, null_string_is_empty)
{
	EXPECT_STREQ("\"\"\n", kcoll_jw_esc(self, NULL));
}

TEST_F(jw, key_escaped)
{
	int err;

	kcoll_jw_obj_open(&self->jw);
	kcoll_jw_kv_uint(&self->jw, "k\"\n", 1);
	kcoll_jw_obj_close(&self->jw);
	EXPECT_STREQ("{\"k\\\"\\n\":1}\n", kcoll_jw_text(self, &err));
}

TEST_F(jw, misuse_unclosed)
{
	int err;

	kcoll_jw_obj_open(&self->jw);
	kcoll_jw_text(self, &err);
	EXPECT_EQ(-EINVAL, err);
}

TEST_F(jw, misuse_wrong_close)
{
	int err;

	kcoll_jw_obj_open(&self->jw);
	kcoll_jw_arr_close(&self->jw);
	kcoll_jw_obj_close(&self->jw);
	kcoll_jw_text(self, &err);
	EXPECT_EQ(-EINVAL, err);
}

TEST_F(jw, misuse_value_without_key)
{
	int err;

	kcoll_jw_obj_open(&self->jw);
	kcoll_jw_uint(&self->jw, 1);
	kcoll_jw_obj_close(&self->jw);
	kcoll_jw_text(self, &err);
	EXPECT_EQ(-EINVAL, err);
}

TEST_F(jw, misuse_key_in_array)
{
	int err;

	kcoll_jw_arr_open(&self->jw);
	kcoll_jw_key(&self->jw, "k");
	kcoll_jw_arr_close(&self->jw);
	kcoll_jw_text(self, &err);
	EXPECT_EQ(-EINVAL, err);
}

TEST_F(jw, misuse_too_deep)
{
	int i, err;

	for (i = 0; i <= KCOLL_JW_MAX_DEPTH; i++)
		kcoll_jw_arr_open(&self->jw);
	for (i = 0; i < KCOLL_JW_MAX_DEPTH; i++)
		kcoll_jw_arr_close(&self->jw);
	kcoll_jw_text(self, &err);
	EXPECT_EQ(-E2BIG, err);
}

TEST(output_error)
{
	FILE *f = fopen("/dev/full", "w");
	struct kcoll_jw jw;

	if (!f)
		SKIP(return, "no /dev/full");
	setvbuf(f, NULL, _IONBF, 0);
	kcoll_jw_init(&jw, f, false);
	kcoll_jw_arr_open(&jw);
	kcoll_jw_arr_close(&jw);
	EXPECT_EQ(-EIO, kcoll_jw_finish(&jw));
	fclose(f);
}

TEST_HARNESS_MAIN
