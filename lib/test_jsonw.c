// SPDX-License-Identifier: LGPL-2.1-or-later
/* The tools' JSON strings (jsonw.c): hostile strings, UTF-8, base64. */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "jsonw.h"

/* What @fn wrote for @n bytes at @s, in a static buffer. */
static const char *out(void (*fn)(FILE *, const char *, size_t), const char *s, size_t n)
{
	static char buf[256];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	fn(f, s, n);
	fclose(f);
	return buf;
}

static void b64(FILE *f, const char *s, size_t n)
{
	cider_json_base64(f, s, n);
}

TEST(hostile_strings_are_escaped)
{
	EXPECT_STREQ("\"plain\"", out(cider_json_str, "plain", 5));
	EXPECT_STREQ("\"a\\\"b\\\\c\"", out(cider_json_str, "a\"b\\c", 5));
	EXPECT_STREQ("\"\\n\\u0001\\u001f\\u007f\"", out(cider_json_str, "\n\x01\x1f\x7f", 4));
	EXPECT_STREQ("\"a\\u0000b\"", out(cider_json_str, "a\0b", 3));	/* a NUL inside */
	EXPECT_STREQ("\"\\\"}],\\\"x\\\":1\"", out(cider_json_str, "\"}],\"x\":1", 9));
	EXPECT_STREQ("\"h\xc3\xa9\"", out(cider_json_str, "h\xc3\xa9", 3));	/* UTF-8 kept */
}

TEST(only_well_formed_utf8_is_text)
{
	EXPECT_TRUE(cider_utf8_ok("", 0));
	EXPECT_TRUE(cider_utf8_ok("ascii", 5));
	EXPECT_TRUE(cider_utf8_ok("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9));	/* é € 😀 */
	EXPECT_TRUE(cider_utf8_ok("\xf4\x8f\xbf\xbf", 4));		/* U+10FFFF */
	EXPECT_FALSE(cider_utf8_ok("\xff", 1));
	EXPECT_FALSE(cider_utf8_ok("\xc3", 1));				/* truncated */
	EXPECT_FALSE(cider_utf8_ok("\xc0\xaf", 2));			/* overlong '/' */
	EXPECT_FALSE(cider_utf8_ok("\xe0\x80\xaf", 3));			/* overlong */
	EXPECT_FALSE(cider_utf8_ok("\xed\xa0\x80", 3));			/* a surrogate */
	EXPECT_FALSE(cider_utf8_ok("\xf4\x90\x80\x80", 4));		/* past U+10FFFF */
	EXPECT_FALSE(cider_utf8_ok("\xe2\x28\xa1", 3));			/* a bad continuation */
	EXPECT_FALSE(cider_utf8_ok("\x80", 1));				/* a lone continuation */
}

TEST(base64_follows_rfc_4648)
{
	static const char *const want[] = {
		"\"\"", "\"Zg==\"", "\"Zm8=\"", "\"Zm9v\"", "\"Zm9vYg==\"", "\"Zm9vYmE=\"",
		"\"Zm9vYmFy\"",
	};
	unsigned int i;

	for (i = 0; i < 7; i++)
		EXPECT_STREQ(want[i], out(b64, "foobar", i));
	EXPECT_STREQ("\"AP8A/w==\"", out(b64, "\x00\xff\x00\xff", 4));
}

TEST_HARNESS_MAIN
