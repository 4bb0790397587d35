// SPDX-License-Identifier: GPL-2.0
/* KV blocks: layout and validation; see block.h. */
#include "block.h"

int cider_block_class(u32 key_len, u32 value_len)
{
	u32 need = CIDER_BLOCK_HDR + key_len + value_len, c;

	if (!key_len || key_len > CIDER_MAX_KEY || value_len > CIDER_MAX_VALUE)
		return -1;
	for (c = 0; c < CIDER_NR_CLASSES; c++)
		if (need <= cider_class_size(c))
			return (int)c;
	return -1;
}

int cider_block_encode(void *buf, u32 incarnation, const void *key, u32 key_len,
		       const void *value, u32 value_len)
{
	int cls = cider_block_class(key_len, value_len);
	u8 *b = buf;
	u32 used = CIDER_BLOCK_HDR + key_len + value_len;

	if (cls < 0)
		return -1;
	memcpy(b + CIDER_BLOCK_HDR, key, key_len);
	if (value_len)
		memcpy(b + CIDER_BLOCK_HDR + key_len, value, value_len);
	memset(b + used, 0, cider_class_size((u32)cls) - used);
	cider_block_seal(buf, incarnation, key_len, value_len);
	return (int)cider_class_size((u32)cls);
}

int cider_block_seal(void *buf, u32 incarnation, u32 key_len, u32 value_len)
{
	struct cider_block_hdr h = { 0 };
	int cls = cider_block_class(key_len, value_len);
	u8 *b = buf;
	u32 used;

	if (cls < 0)
		return -1;
	used = CIDER_BLOCK_HDR + key_len + value_len;
	h.key_len = (u16)key_len;
	h.cls = (u8)cls;
	h.value_len = value_len;
	h.incarnation = incarnation;
	memcpy(b, &h, sizeof(h));
	memset(b + used, 0, (8 - used % 8) % 8);
	h.crc = cider_crc32c(b + sizeof(h.crc), used - sizeof(h.crc));
	memcpy(b, &h.crc, sizeof(h.crc));
	return (int)((used + 7) / 8 * 8);
}

enum cider_block_check cider_block_check(const void *buf, u32 len, const void *key,
					 u32 key_len, const void **value, u32 *value_len)
{
	struct cider_block_hdr h;
	const u8 *b = buf;
	u32 used;

	if (len < CIDER_BLOCK_HDR)
		return CIDER_BLOCK_TORN;
	memcpy(&h, b, sizeof(h));
	used = CIDER_BLOCK_HDR + h.key_len + h.value_len;
	if (!h.key_len || h.key_len > CIDER_MAX_KEY || h.value_len > CIDER_MAX_VALUE ||
	    h.cls >= CIDER_NR_CLASSES || used > cider_class_size(h.cls) || used > len)
		return CIDER_BLOCK_TORN;
	if (cider_crc32c(b + sizeof(h.crc), used - sizeof(h.crc)) != h.crc)
		return CIDER_BLOCK_TORN;
	if (h.key_len != key_len || memcmp(b + CIDER_BLOCK_HDR, key, key_len))
		return CIDER_BLOCK_OTHER_KEY;
	*value = b + CIDER_BLOCK_HDR + key_len;
	*value_len = h.value_len;
	return CIDER_BLOCK_OK;
}
