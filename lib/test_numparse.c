// SPDX-License-Identifier: LGPL-2.1-or-later
/* The tools' number parser (numparse.c), table-driven. */
#include <string.h>

#include "kselftest_harness.h"
#include "numparse.h"

#define SZ	CIDER_NUM_SIZE
#define HEX	CIDER_NUM_HEX

static const struct {
	const char *s;
	uint64_t min, max;
	unsigned int flags;
	int ret;
	uint64_t want;		/* ret 0 */
	const char *msg;	/* ret -1: in the message */
} cases[] = {
	{ "0", 0, 10, 0, 0, 0, NULL },
	{ "10", 0, 10, 0, 0, 10, NULL },
	{ "11", 0, 10, 0, -1, 0, "out of range 0..10" },
	{ "65536", 1, 65535, 0, -1, 0, "out of range 1..65535" },
	{ "0", 1, 65535, 0, -1, 0, "out of range 1..65535" },
	{ "", 0, 10, 0, -1, 0, "not a number" },
	{ "-1", 0, 10, 0, -1, 0, "not a number" },
	{ "+1", 0, 10, 0, -1, 0, "not a number" },
	{ " 1", 0, 10, 0, -1, 0, "not a number" },
	{ "1 ", 0, 10, 0, -1, 0, "not a number" },
	{ "1x", 0, 10, 0, -1, 0, "not a number" },
	{ "0x10", 0, 100, 0, -1, 0, "not a number" },
	{ "0x10", 0, 100, HEX, 0, 16, NULL },
	{ "0XfF", 0, 1000, HEX, 0, 255, NULL },
	{ "0x", 0, 100, HEX, -1, 0, "not a number" },
	{ "010", 0, 100, HEX, 0, 10, NULL },		/* no octal */
	{ "18446744073709551615", 0, UINT64_MAX, 0, 0, UINT64_MAX, NULL },
	{ "18446744073709551616", 0, UINT64_MAX, 0, -1, 0, "out of range" },
	{ "99999999999999999999999", 0, UINT64_MAX, 0, -1, 0, "out of range" },
	{ "4K", 0, UINT64_MAX, SZ, 0, 4096, NULL },
	{ "64m", 0, UINT64_MAX, SZ, 0, 64ULL << 20, NULL },
	{ "1G", 0, UINT64_MAX, SZ, 0, 1ULL << 30, NULL },
	{ "1T", 0, UINT64_MAX, SZ, 0, 1ULL << 40, NULL },
	{ "64T", 0, 64ULL << 40, SZ, 0, 64ULL << 40, NULL },
	{ "65T", 0, 64ULL << 40, SZ, -1, 0, "out of range" },
	{ "16777216T", 0, UINT64_MAX, SZ, -1, 0, "out of range" },	/* 2^64 */
	{ "1P", 0, UINT64_MAX, SZ, -1, 0, "with K, M, G or T" },
	{ "1KB", 0, UINT64_MAX, SZ, -1, 0, "not a number" },
	{ "4K", 0, UINT64_MAX, 0, -1, 0, "not a number" },	/* no suffix here */
	{ "0x1000K", 0, UINT64_MAX, SZ | HEX, 0, 0x1000ULL << 10, NULL },
};

TEST(every_case_of_the_table)
{
	char err[128];
	unsigned int i;
	uint64_t v;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 12345;
		err[0] = '\0';
		EXPECT_EQ(cases[i].ret, cider_num_parse(cases[i].s, cases[i].min, cases[i].max,
							cases[i].flags, &v, err, sizeof(err)))
			TH_LOG("'%s': %s", cases[i].s, err);
		if (!cases[i].ret) {
			EXPECT_EQ(cases[i].want, v) TH_LOG("'%s'", cases[i].s);
		} else {
			EXPECT_EQ(12345U, v) TH_LOG("'%s': the value is left alone", cases[i].s);
			EXPECT_NE(NULL, strstr(err, cases[i].msg)) TH_LOG("'%s': %s", cases[i].s, err);
		}
	}
}

TEST(the_unsigned_int_form_keeps_its_range)
{
	unsigned int v = 7;
	char err[128];

	EXPECT_EQ(0, cider_num_parse_uint("255", 0, 255, 0, &v, err, sizeof(err)));
	EXPECT_EQ(255U, v);
	EXPECT_EQ(-1, cider_num_parse_uint("4294967296", 0, 4294967295U, 0, &v, err, sizeof(err)));
	EXPECT_EQ(255U, v);
}

/* A number inside a line: exactly @len characters, the rest not read. */
TEST(the_counted_form_reads_only_its_length)
{
	char err[128], big[100];
	uint64_t v = 7;

	EXPECT_EQ(0, cider_num_parse_n("123,\"b\":4", 3, 0, UINT64_MAX, 0, &v, err, sizeof(err)));
	EXPECT_EQ(123U, v);
	EXPECT_EQ(0, cider_num_parse_n("64-128", 2, 8, 1000, 0, &v, err, sizeof(err)));
	EXPECT_EQ(64U, v);
	EXPECT_EQ(-1, cider_num_parse_n("4-128", 1, 8, 1000, 0, &v, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "out of range 8..1000"));
	EXPECT_EQ(-1, cider_num_parse_n("x1", 0, 0, 10, 0, &v, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "not a number"));
	memset(big, '1', sizeof(big));
	EXPECT_EQ(-1, cider_num_parse_n(big, sizeof(big), 0, UINT64_MAX, 0, &v, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "too long"));
	EXPECT_EQ(64U, v);	/* left alone on every failure */
}

TEST_HARNESS_MAIN
