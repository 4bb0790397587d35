/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KV blocks of variable size, written out of place (one per write) and
 * never modified while reachable:
 *
 *   header (16 bytes): crc32c, key_len (u16), size class (u8), flags (u8),
 *                      value_len (u32), incarnation (u32)
 *   key bytes, value bytes, zero padding to the class size
 *
 * The CRC-32C covers everything after itself: the rest of the header, the
 * key and the value, so
 * a reader that fetched a block while it was being rewritten (a reuse
 * racing with the read) sees a bad CRC, and one that fetched a block
 * since reused for another key sees the wrong key; either retries.  The
 * incarnation counts reuses of the block's memory: it makes two
 * successive contents differ even with the same key and value.
 *
 * Sizes come in classes of 64 << c bytes (c = 0..11: 64 B .. 128 KiB), so
 * keys up to CIDER_MAX_KEY and values up to CIDER_MAX_VALUE fit.
 */
#ifndef _CIDER_CORE_BLOCK_H
#define _CIDER_CORE_BLOCK_H

#include "platform.h"

#define CIDER_MAX_KEY		1024
#define CIDER_MAX_VALUE		(64 * 1024)
#define CIDER_BLOCK_HDR		16
#define CIDER_NR_CLASSES	12
#define CIDER_CLASS_MIN		64

struct cider_block_hdr {
	u32 crc;
	u16 key_len;
	u8 cls;
	u8 flags;
	u32 value_len;
	u32 incarnation;
};

static inline u32 cider_class_size(u32 cls)
{
	return CIDER_CLASS_MIN << cls;
}

/* The smallest class that holds the key and value; -1 if too large. */
int cider_block_class(u32 key_len, u32 value_len);

/*
 * Lay out a block in @buf (at least the class size): returns its size, or
 * -1 for a bad length.
 */
int cider_block_encode(void *buf, u32 incarnation, const void *key, u32 key_len,
		       const void *value, u32 value_len);

/*
 * Finish a block whose key and value were written in place (at
 * CIDER_BLOCK_HDR and after the key): header, padding, CRC.  Returns the
 * bytes to write (rounded up to 8), or -1 for a bad length.
 */
int cider_block_seal(void *buf, u32 incarnation, u32 key_len, u32 value_len);

enum cider_block_check {
	CIDER_BLOCK_OK,
	CIDER_BLOCK_TORN,	/* lengths or CRC do not add up: reused or corrupt */
	CIDER_BLOCK_OTHER_KEY,	/* a valid block of another key: retry */
};

/*
 * Check @len bytes fetched from a block that should hold @key; on success
 * *value and *value_len point into @buf.
 */
enum cider_block_check cider_block_check(const void *buf, u32 len, const void *key,
					 u32 key_len, const void **value, u32 *value_len);

#endif
