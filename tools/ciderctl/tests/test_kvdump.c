// SPDX-License-Identifier: GPL-2.0
/*
 * The dump file codec (kvdump.c), in memory: binary records round-trip,
 * the bytes are the documented layout, and every kind of damage is
 * refused with its byte offset.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "kvdump.h"

/* A dump built in memory: its bytes in buf, len of them. */
struct mem {
	char *buf;
	size_t len;
};

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static const size_t key_lens[] = { 1, 2, 8, 1023, 1024 };
static const size_t value_lens[] = { 0, 1, 255, 4096, 65535, 65536 };
#define NK	(sizeof(key_lens) / sizeof(key_lens[0]))
#define NV	(sizeof(value_lens) / sizeof(value_lens[0]))

/* Every key length with every value length; 0 or the write's error. */
static int build(struct mem *m, uint32_t flags)
{
	static uint8_t key[KVDUMP_MAX_KEY], val[KVDUMP_MAX_VALUE];
	struct kvdump_writer w;
	FILE *f = open_memstream(&m->buf, &m->len);
	unsigned int k, v;
	int ret;

	if (!f)
		return -ENOMEM;
	ret = kvdump_write_header(&w, f, flags);
	for (k = 0; !ret && k < NK; k++) {
		for (v = 0; !ret && v < NV; v++) {
			size_t kl = flags & KVDUMP_F_ARRAY ? 8 : key_lens[k];

			fill(key, kl, k * 16 + v);
			fill(val, value_lens[v], k * 16 + v + 500);
			ret = kvdump_write_record(&w, key, kl, val, value_lens[v]);
		}
	}
	if (!ret)
		ret = kvdump_write_trailer(&w);
	fclose(f);
	return ret;
}

/* Read @len bytes of @buf to the end: the records read, or -1 with @err. */
static int read_all(const void *buf, size_t len, char *err, size_t errlen)
{
	static struct kvdump_reader r;
	struct kvdump_record rec;
	FILE *f = fmemopen((void *)buf, len, "r");
	int n = 0, ret;

	if (!f)
		return -2;
	ret = kvdump_read_header(&r, f);
	while (!ret && kvdump_read_record(&r, &rec) == 1)
		n++;
	if (!ret && r.err[0])
		ret = -1;
	fclose(f);
	snprintf(err, errlen, "%s", r.err);
	return ret ? -1 : n;
}

static void put32(char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (char)(v >> (8 * i));
}

/* Re-seal @m's CRC after an edit: the damage must be found for itself. */
static void reseal(struct mem *m)
{
	put32(m->buf + m->len - 4, kvdump_crc32c(0, m->buf, m->len - 4));
}

TEST(crc32c_check_value)
{
	/* The standard check value of CRC-32C over "123456789". */
	ASSERT_EQ(0xe3069283U, kvdump_crc32c(0, "123456789", 9));
	ASSERT_EQ(0U, kvdump_crc32c(0, "", 0));
	/* Fed in pieces, the same. */
	ASSERT_EQ(0xe3069283U, kvdump_crc32c(kvdump_crc32c(0, "1234", 4), "56789", 5));
}

TEST(the_bytes_are_the_documented_layout)
{
	static const char want[] =
		"CIDERDMP" "\x01\0\0\0" "\0\0\0\0"
		"\x02\0\0\0" "\x03\0\0\0" "k\0" "v\xff\n"
		"\0\0\0\0" "\0\0\0\0" "\x01\0\0\0\0\0\0\0";
	struct kvdump_writer w;
	struct mem m = { 0 };
	FILE *f = open_memstream(&m.buf, &m.len);
	size_t body = sizeof(want) - 1;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_write_header(&w, f, 0));
	ASSERT_EQ(0, kvdump_write_record(&w, "k\0", 2, "v\xff\n", 3));
	ASSERT_EQ(0, kvdump_write_trailer(&w));
	fclose(f);
	ASSERT_EQ(body + 4, m.len);
	ASSERT_EQ(0, memcmp(want, m.buf, body));
	ASSERT_EQ(kvdump_crc32c(0, want, body), (uint32_t)((uint8_t)m.buf[body] |
		  (uint8_t)m.buf[body + 1] << 8 | (uint8_t)m.buf[body + 2] << 16 |
		  (uint32_t)(uint8_t)m.buf[body + 3] << 24));
	ASSERT_EQ(m.len, w.offset);
	free(m.buf);
}

TEST(binary_records_round_trip)
{
	static uint8_t key[KVDUMP_MAX_KEY], val[KVDUMP_MAX_VALUE];
	static struct kvdump_reader r;
	struct kvdump_record rec;
	struct mem m = { 0 };
	unsigned int k, v;
	FILE *f;

	ASSERT_EQ(0, build(&m, 0));
	f = fmemopen(m.buf, m.len, "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_read_header(&r, f));
	ASSERT_EQ(0U, r.flags);
	for (k = 0; k < NK; k++) {
		for (v = 0; v < NV; v++) {
			ASSERT_EQ(1, kvdump_read_record(&r, &rec)) TH_LOG("%s", r.err);
			fill(key, key_lens[k], k * 16 + v);
			fill(val, value_lens[v], k * 16 + v + 500);
			ASSERT_EQ(key_lens[k], rec.key_len);
			ASSERT_EQ(value_lens[v], rec.value_len);
			ASSERT_EQ(0, memcmp(key, rec.key, rec.key_len));
			ASSERT_EQ(0, memcmp(val, rec.value, rec.value_len));
		}
	}
	ASSERT_EQ(0, kvdump_read_record(&r, &rec)) TH_LOG("%s", r.err);
	ASSERT_EQ(m.len, r.offset);
	fclose(f);
	free(m.buf);
}

TEST(an_array_dump_carries_its_flag_and_8_byte_keys)
{
	struct mem m = { 0 };
	char err[160];
	struct kvdump_writer w;
	FILE *f = fopen("/dev/null", "w");

	ASSERT_EQ(0, build(&m, KVDUMP_F_ARRAY));
	ASSERT_EQ((int)(NK * NV), read_all(m.buf, m.len, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(1, m.buf[12]);
	/* The writer refuses another key length for an array store. */
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_write_header(&w, f, KVDUMP_F_ARRAY));
	ASSERT_EQ(-EINVAL, kvdump_write_record(&w, "abc", 3, "", 0));
	/* And the reader: record 1's key length made 9. */
	put32(m.buf + 16, 9);
	reseal(&m);
	ASSERT_EQ(-1, read_all(m.buf, m.len, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "byte 16: key length 9 in an array store's dump")) TH_LOG("%s", err);
	fclose(f);
	free(m.buf);
}

TEST(the_writer_refuses_what_the_format_cannot_carry)
{
	static uint8_t big[KVDUMP_MAX_VALUE + 1];
	struct kvdump_writer w;
	FILE *f = fopen("/dev/null", "w");

	ASSERT_NE(NULL, f);
	ASSERT_EQ(-EINVAL, kvdump_write_header(&w, f, 0x2));
	ASSERT_EQ(0, kvdump_write_header(&w, f, 0));
	ASSERT_EQ(-EINVAL, kvdump_write_record(&w, big, 0, big, 1));
	ASSERT_EQ(-EINVAL, kvdump_write_record(&w, big, KVDUMP_MAX_KEY + 1, big, 1));
	ASSERT_EQ(-EINVAL, kvdump_write_record(&w, big, 1, big, KVDUMP_MAX_VALUE + 1));
	ASSERT_EQ(0U, w.records);
	ASSERT_EQ((uint64_t)KVDUMP_HEADER_LEN, w.offset);
	fclose(f);
}

/* A damaged copy of a small good dump: refused, the message as said. */
struct damage {
	const char *what;
	size_t at;		/* where to write @val (4 bytes), or SIZE_MAX */
	uint32_t val;
	bool reseal;		/* fix the CRC after it: the check is another one */
	long resize;		/* bytes cut (<0) or added (>0) at the end */
	const char *msg;
};

/* The small dump: header, records "a"=>"" at 16 and "bc"=>"xyz" at 25, trailer at 38. */
static const struct damage damages[] = {
	{ "bad magic", 0, 0x44494358, false, 0, "byte 0: not a CIDER dump file" },
	{ "version 2", 8, 2, false, 0, "byte 8: format version 2, this reader knows 1" },
	{ "version 0", 8, 0, false, 0, "byte 8: format version 0" },
	{ "unknown flag", 12, 0x80000001, false, 0, "byte 12: unknown flags 0x80000000" },
	{ "key length 1025", 25, 1025, true, 0, "byte 25: key length 1025 out of range 1..1024" },
	{ "key length 0 with a value", 25, 0, true, 0, "byte 25: key length 0 out of range" },
	{ "value length 65537", 29, 65537, true, 0, "byte 29: value length 65537 out of range 0..65536" },
	{ "a count one too high", 46, 3, true, 0, "byte 46: the trailer counts 3 records, the file has 2" },
	{ "a changed value byte", 35, 0x7a7958, false, 0, "byte 54: CRC-32C mismatch" },
	{ "a flipped CRC", 54, 0, false, 0, "byte 54: CRC-32C mismatch: the file says 00000000" },
	{ "bytes after the trailer", SIZE_MAX, 0, false, 1, "byte 58: bytes after the trailer" },
	{ "cut in the magic", SIZE_MAX, 0, false, -55, "byte 0: truncated in the header's magic: 3 of its 8" },
	{ "cut in the header", SIZE_MAX, 0, false, -47, "byte 8: truncated in the header: 3 of its 8" },
	{ "cut after the header", SIZE_MAX, 0, false, -42, "byte 16: truncated in the record header (or trailer): 0 of its 8" },
	{ "cut in a key", SIZE_MAX, 0, false, -25, "byte 33: truncated in the key: 0 of its 2" },
	{ "cut in a value", SIZE_MAX, 0, false, -21, "byte 35: truncated in the value: 2 of its 3" },
	{ "cut in the count", SIZE_MAX, 0, false, -8, "byte 46: truncated in the trailer's record count: 4 of its 8" },
	{ "cut in the CRC", SIZE_MAX, 0, false, -1, "byte 54: truncated in the trailer's CRC: 3 of its 4" },
};

TEST(each_kind_of_damage_is_refused_where_it_is)
{
	struct kvdump_writer w;
	struct mem m = { 0 };
	char err[160], *copy;
	unsigned int i;
	size_t len;
	FILE *f = open_memstream(&m.buf, &m.len);

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_write_header(&w, f, 0));
	ASSERT_EQ(0, kvdump_write_record(&w, "a", 1, "", 0));
	ASSERT_EQ(0, kvdump_write_record(&w, "bc", 2, "xyz", 3));
	ASSERT_EQ(0, kvdump_write_trailer(&w));
	fclose(f);
	ASSERT_EQ(58U, m.len);
	ASSERT_EQ(2, read_all(m.buf, m.len, err, sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < sizeof(damages) / sizeof(damages[0]); i++) {
		const struct damage *d = &damages[i];
		struct mem c;

		len = m.len + d->resize;
		copy = calloc(1, m.len + 8);
		ASSERT_NE(NULL, copy);
		memcpy(copy, m.buf, m.len);
		c = (struct mem){ copy, m.len };
		if (d->at != SIZE_MAX)
			put32(copy + d->at, d->val);
		if (d->reseal)
			reseal(&c);
		ASSERT_EQ(-1, read_all(copy, len, err, sizeof(err))) TH_LOG("%s: accepted", d->what);
		EXPECT_NE(NULL, strstr(err, d->msg)) TH_LOG("%s: '%s', want '%s'", d->what, err, d->msg);
		free(copy);
	}
	free(m.buf);
}

TEST(an_empty_dump_is_valid)
{
	struct kvdump_writer w;
	struct mem m = { 0 };
	char err[160];
	FILE *f = open_memstream(&m.buf, &m.len);

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_write_header(&w, f, 0));
	ASSERT_EQ(0, kvdump_write_trailer(&w));
	fclose(f);
	ASSERT_EQ(36U, m.len);
	ASSERT_EQ(0, read_all(m.buf, m.len, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(-1, read_all(m.buf, 0, err, sizeof(err)));
	ASSERT_NE(NULL, strstr(err, "byte 0: truncated in the header's magic: 0 of its 8"));
	free(m.buf);
}

TEST_HARNESS_MAIN
