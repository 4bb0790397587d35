/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CIDER dump files (Documentation/kv.rst, "Dump files"): a store's
 * records, versioned, length-prefixed and binary-safe, for ciderctl kv
 * load (and dump).  All integers little-endian:
 *
 *   header   "CIDERDMP", u32 version (1), u32 flags
 *   record   u32 key_len (1..1024), u32 value_len (0..65536), key, value
 *   trailer  u32 0, u32 0, u64 number of records, u32 CRC-32C of every
 *            byte before the CRC
 *
 * The writer and the reader stream through a FILE: neither holds more
 * than one record.
 */
#ifndef CIDER_KVDUMP_H
#define CIDER_KVDUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KVDUMP_MAGIC		"CIDERDMP"	/* 8 bytes, no terminator in the file */
#define KVDUMP_VERSION		1
#define KVDUMP_F_ARRAY		0x1U	/* keys are an array store's 8-byte LE indexes */
#define KVDUMP_F_KNOWN		KVDUMP_F_ARRAY
#define KVDUMP_HEADER_LEN	16
#define KVDUMP_MAX_KEY		1024
#define KVDUMP_MAX_VALUE	65536
#define KVDUMP_ARRAY_KEY	8

/* CRC-32C (Castagnoli), reflected; start with 0 and feed on. */
uint32_t kvdump_crc32c(uint32_t crc, const void *buf, size_t len);

struct kvdump_writer {
	FILE *f;
	uint32_t flags;
	uint32_t crc;		/* of everything written so far */
	uint64_t records;
	uint64_t offset;	/* bytes written */
};

/*
 * Each returns 0, or -EINVAL (flags or lengths the format cannot carry;
 * nothing written) or -EIO (the stream failed: errno says why).  The
 * trailer flushes @w->f; the caller closes it.
 */
int kvdump_write_header(struct kvdump_writer *w, FILE *f, uint32_t flags);
int kvdump_write_record(struct kvdump_writer *w, const void *key, size_t key_len,
			const void *value, size_t value_len);
int kvdump_write_trailer(struct kvdump_writer *w);

struct kvdump_record {
	uint64_t offset;	/* of its key_len in the file */
	const uint8_t *key;	/* in the reader's buffers: valid until the next read */
	const uint8_t *value;
	size_t key_len, value_len;
};

struct kvdump_reader {
	FILE *f;
	uint32_t version, flags;
	uint32_t crc;		/* of everything read so far */
	uint64_t records;	/* read so far */
	uint64_t offset;	/* bytes read */
	char err[160];		/* why the last read failed, with the byte offset */
	uint8_t key[KVDUMP_MAX_KEY];
	uint8_t value[KVDUMP_MAX_VALUE];
};

/*
 * kvdump_read_header: 0 with @r->flags set, or -1 with @r->err saying
 * what is wrong where.  kvdump_read_record: 1 with the next record in
 * @rec; 0 at the trailer, its count and CRC checked and nothing after
 * it; -1 with @r->err (a truncated file, a length out of range, a count
 * or CRC mismatch, bytes after the trailer, a read error).
 */
int kvdump_read_header(struct kvdump_reader *r, FILE *f);
int kvdump_read_record(struct kvdump_reader *r, struct kvdump_record *rec);

#endif
