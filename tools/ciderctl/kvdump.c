// SPDX-License-Identifier: GPL-2.0
/* CIDER dump files: the encoder and the decoder (kvdump.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "kvdump.h"

/* ---- CRC-32C: Castagnoli's polynomial, reflected, one table lookup a byte ---- */

#define CRC32C_POLY	0x82f63b78U	/* 0x1edc6f41 bit-reversed */

static uint32_t crc_table[256];

static void crc_init(void)
{
	uint32_t i, c;
	int k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t kvdump_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	/* Entry 1 is never 0 once built: no separate flag, no lock needed
	 * (ciderctl is single-threaded; a race would build the same table). */
	if (!crc_table[1])
		crc_init();
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- little-endian fields, whatever the host's order ---- */

static void put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* ---- writer ---- */

static int w_put(struct kvdump_writer *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n)
		return -EIO;
	w->crc = kvdump_crc32c(w->crc, p, n);
	w->offset += n;
	return 0;
}

int kvdump_write_header(struct kvdump_writer *w, FILE *f, uint32_t flags)
{
	uint8_t h[KVDUMP_HEADER_LEN];

	if (flags & ~KVDUMP_F_KNOWN)
		return -EINVAL;
	*w = (struct kvdump_writer){ .f = f, .flags = flags };
	memcpy(h, KVDUMP_MAGIC, 8);
	put_le(h + 8, KVDUMP_VERSION, 4);
	put_le(h + 12, flags, 4);
	return w_put(w, h, sizeof(h));
}

int kvdump_write_record(struct kvdump_writer *w, const void *key, size_t key_len,
			const void *value, size_t value_len)
{
	uint8_t h[8];
	int ret;

	if (!key_len || key_len > KVDUMP_MAX_KEY || value_len > KVDUMP_MAX_VALUE ||
	    ((w->flags & KVDUMP_F_ARRAY) && key_len != KVDUMP_ARRAY_KEY))
		return -EINVAL;
	put_le(h, key_len, 4);
	put_le(h + 4, value_len, 4);
	ret = w_put(w, h, sizeof(h));
	if (!ret)
		ret = w_put(w, key, key_len);
	if (!ret)
		ret = w_put(w, value, value_len);
	if (!ret)
		w->records++;
	return ret;
}

int kvdump_write_trailer(struct kvdump_writer *w)
{
	uint8_t t[16] = { 0 };
	uint8_t c[4];
	int ret;

	put_le(t + 8, w->records, 8);
	ret = w_put(w, t, sizeof(t));
	if (ret)
		return ret;
	put_le(c, w->crc, 4);
	if (fwrite(c, 1, 4, w->f) != 4 || fflush(w->f))
		return -EIO;
	w->offset += 4;
	return 0;
}

/* ---- reader ---- */

static int r_fail(struct kvdump_reader *r, uint64_t at, const char *what)
{
	snprintf(r->err, sizeof(r->err), "byte %llu: %s", (unsigned long long)at, what);
	return -1;
}

/*
 * @n bytes of @what into @p, counted in the CRC unless @crc is false;
 * -1 with the offset where the file ended or failed.
 */
static int r_get(struct kvdump_reader *r, void *p, size_t n, const char *what, bool crc)
{
	size_t got = n ? fread(p, 1, n, r->f) : 0;
	char msg[120];

	if (got != n) {
		snprintf(msg, sizeof(msg), "%s %s: %zu of its %zu bytes there",
			 ferror(r->f) ? "read error in the" : "truncated in the", what, got, n);
		return r_fail(r, r->offset, msg);
	}
	if (crc)
		r->crc = kvdump_crc32c(r->crc, p, n);
	r->offset += n;
	return 0;
}

int kvdump_read_header(struct kvdump_reader *r, FILE *f)
{
	uint8_t h[KVDUMP_HEADER_LEN];
	char msg[120];

	r->f = f;
	r->crc = 0;
	r->records = 0;
	r->offset = 0;
	r->err[0] = '\0';
	if (r_get(r, h, 8, "header's magic", true))
		return -1;
	if (memcmp(h, KVDUMP_MAGIC, 8))
		return r_fail(r, 0, "not a CIDER dump file (no CIDERDMP magic)");
	if (r_get(r, h + 8, 8, "header", true))
		return -1;
	r->version = (uint32_t)get_le(h + 8, 4);
	r->flags = (uint32_t)get_le(h + 12, 4);
	if (r->version != KVDUMP_VERSION) {
		snprintf(msg, sizeof(msg), "format version %u, this reader knows %u",
			 r->version, KVDUMP_VERSION);
		return r_fail(r, 8, msg);
	}
	if (r->flags & ~KVDUMP_F_KNOWN) {
		snprintf(msg, sizeof(msg), "unknown flags 0x%x (known: 0x%x)",
			 r->flags & ~KVDUMP_F_KNOWN, KVDUMP_F_KNOWN);
		return r_fail(r, 12, msg);
	}
	return 0;
}

/* The trailer after its zero lengths: the count, the CRC, then the end. */
static int r_trailer(struct kvdump_reader *r)
{
	uint8_t b[8];
	uint64_t count, at = r->offset;
	uint32_t want = 0, crc;
	char msg[120];

	if (r_get(r, b, 8, "trailer's record count", true))
		return -1;
	count = get_le(b, 8);
	if (count != r->records) {
		snprintf(msg, sizeof(msg), "the trailer counts %llu records, the file has %llu",
			 (unsigned long long)count, (unsigned long long)r->records);
		return r_fail(r, at, msg);
	}
	want = r->crc;
	at = r->offset;
	if (r_get(r, b, 4, "trailer's CRC", false))
		return -1;
	crc = (uint32_t)get_le(b, 4);
	if (crc != want) {
		snprintf(msg, sizeof(msg), "CRC-32C mismatch: the file says %08x, its bytes give %08x",
			 crc, want);
		return r_fail(r, at, msg);
	}
	if (fgetc(r->f) != EOF)
		return r_fail(r, r->offset, "bytes after the trailer");
	if (ferror(r->f))
		return r_fail(r, r->offset, "read error after the trailer");
	return 0;
}

/* A record's lengths at @at: -1 with why when the format cannot hold them. */
static int r_check_lens(struct kvdump_reader *r, uint64_t at, uint32_t klen, uint32_t vlen)
{
	char msg[120];

	if (klen > KVDUMP_MAX_KEY || (!klen && vlen)) {
		snprintf(msg, sizeof(msg), "key length %u out of range 1..%u", klen, KVDUMP_MAX_KEY);
		return r_fail(r, at, msg);
	}
	if (vlen > KVDUMP_MAX_VALUE) {
		snprintf(msg, sizeof(msg), "value length %u out of range 0..%u", vlen,
			 KVDUMP_MAX_VALUE);
		return r_fail(r, at + 4, msg);
	}
	if ((r->flags & KVDUMP_F_ARRAY) && klen != KVDUMP_ARRAY_KEY) {
		snprintf(msg, sizeof(msg), "key length %u in an array store's dump (its keys are %u bytes)",
			 klen, KVDUMP_ARRAY_KEY);
		return r_fail(r, at, msg);
	}
	return 0;
}

int kvdump_read_record(struct kvdump_reader *r, struct kvdump_record *rec)
{
	uint8_t h[8];
	uint64_t at = r->offset;
	uint32_t klen, vlen;

	if (r_get(r, h, 8, "record header (or trailer)", true))
		return -1;
	klen = (uint32_t)get_le(h, 4);
	vlen = (uint32_t)get_le(h + 4, 4);
	if (!klen && !vlen)
		return r_trailer(r);
	if (r_check_lens(r, at, klen, vlen))
		return -1;
	if (r_get(r, r->key, klen, "key", true) || r_get(r, r->value, vlen, "value", true))
		return -1;
	r->records++;
	*rec = (struct kvdump_record){ .offset = at, .key = r->key, .value = r->value,
				       .key_len = klen, .value_len = vlen };
	return 1;
}
