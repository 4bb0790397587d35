// SPDX-License-Identifier: GPL-2.0
/*
 * KV blocks (one class: cfg->block_size, 16 bytes for the pointer array,
 * 64 for the hash index, whose slots count 64-byte units) from the CN's
 * slab (slab.h): recycled blocks once their grace period is over, else
 * carved from chunks claimed by FAA on the superblock's cursor.  The MN's
 * CPU never takes part.
 */
#include "core.h"

/* Sub-protothread: c->blk = a block, or 0 when the MN is full. */
bool cider_alloc_block(struct cider_client *c)
{
	struct cider_cn *cn = c->cn;
	const struct cider_cfg *cfg = cfg_of(c);

	PT_BEGIN(&c->pt_l2);
	if (cider_slab_fence_due(&cn->slab, cider_hashed(c) ? c->cls : 0, cider_now(c))) {
		/* The oldest freed block waits for the reader fence (slab.h). */
		c->fence_t = cider_now(c);
		v_reset(c);
		v_read(c, cfg->rfence, 8);
		cider_post(c);
		PT_YIELD(&c->pt_l2);
		if (!c->v[0].data[0])
			cider_slab_fence_clear(&cn->slab, c->fence_t);
	}
	while (cider_slab_alloc(&cn->slab, cider_hashed(c) ? c->cls : 0, cider_now(c), &c->blk)) {
		v_reset(c);
		v_faa(c, cfg->alloc_cursor, cfg->chunk_size);
		cider_post(c);
		PT_YIELD(&c->pt_l2);
		if (c->v[0].old + cfg->chunk_size > cfg->data_size_limit) {
			c->blk = 0;
			PT_EXIT(&c->pt_l2);
		}
		cider_slab_add_chunk(&cn->slab, cider_hashed(c) ? c->cls : 0,
				     cfg->data_off + c->v[0].old);
	}
	PT_END(&c->pt_l2);
}

/*
 * The block a data pointer @word linked, just unlinked by this client's
 * CAS: recycle it after the grace period.  Blocks outside the data area
 * (preloaded ones) are not ours.
 */
void cider_block_unlinked(struct cider_client *c, u64 word)
{
	const struct cider_cfg *cfg = cfg_of(c);
	u64 off = w_off(c, word);

	if (off >= cfg->data_off && off < cfg->data_off + cfg->data_size_limit)
		cider_slab_free(&c->cn->slab, cider_hashed(c) ? cider_slot_class(word) : 0,
				off, cider_now(c));
}

/*
 * Hash index: build the KV block for (c->key, c->wval, c->wvlen) in c->buf
 * and describe the WRITE of it; the key is its 8-byte id and filler, the
 * value its 8-byte id and filler, so that every byte is checked by CRC.
 */
bool cider_block_build(struct cider_client *c)
{
	u32 klen = cfg_of(c)->key_len;
	int n;

	cider_key_bytes(c, c->buf + CIDER_BLOCK_HDR);
	cider_fill(c->buf + CIDER_BLOCK_HDR + klen, c->wval, c->wvlen);
	/* A block no class holds must not become a 4 GiB WRITE. */
	n = cider_block_seal(c->buf, c->wop, klen, c->wvlen);
	if (n < 0)
		return false;
	v_add(c, CIDER_V_WRITE, c->blk, (u32)n)->buf = c->buf;
	return true;
}

/* The bytes of c->key: its id (little-endian), then filler from it. */
void cider_key_bytes(const struct cider_client *c, u8 *out)
{
	cider_fill(out, c->key, cfg_of(c)->key_len);
}

void cider_fill(u8 *out, u64 id, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		out[i] = i < 8 ? (u8)(id >> (8 * i)) : (u8)(id * 31 + i);
}

/* A block this client allocated but never linked. */
void cider_block_unused(struct cider_client *c)
{
	if (c->blk)
		cider_slab_unused(&c->cn->slab, cider_hashed(c) ? c->cls : 0, c->blk);
	c->blk = 0;
}

/* Sub-protothread: announce this client on the reader fence (slab.h). */
bool cider_fence_enter(struct cider_client *c)
{
	PT_BEGIN(&c->pt_l1);
	v_reset(c);
	v_faa(c, cfg_of(c)->rfence, 1);
	cider_post(c);
	PT_YIELD(&c->pt_l1);
	c->fenced = true;
	c->fences++;
	PT_END(&c->pt_l1);
}

/* Sub-protothread: this client's READs are done; reuse may go on. */
bool cider_fence_leave(struct cider_client *c)
{
	PT_BEGIN(&c->pt_l1);
	v_reset(c);
	v_faa(c, cfg_of(c)->rfence, (u64)-1);
	cider_post(c);
	PT_YIELD(&c->pt_l1);
	c->fenced = false;
	c->late = 0;
	PT_END(&c->pt_l1);
}
