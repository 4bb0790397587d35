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
	while (cider_slab_alloc(&cn->slab, 0, cider_now(c), &c->blk)) {
		v_reset(c);
		v_faa(c, cfg->alloc_cursor, cfg->chunk_size);
		cider_post(c);
		PT_YIELD(&c->pt_l2);
		if (c->v[0].old + cfg->chunk_size > cfg->data_size_limit) {
			c->blk = 0;
			PT_EXIT(&c->pt_l2);
		}
		cider_slab_add_chunk(&cn->slab, 0, cfg->data_off + c->v[0].old);
	}
	PT_END(&c->pt_l2);
}

/*
 * A block just unlinked by this client's CAS: recycle it after the grace
 * period.  Blocks outside the data area (preloaded ones) are not ours.
 */
void cider_block_unlinked(struct cider_client *c, u64 off)
{
	const struct cider_cfg *cfg = cfg_of(c);

	if (off >= cfg->data_off && off < cfg->data_off + cfg->data_size_limit)
		cider_slab_free(&c->cn->slab, 0, off, cider_now(c));
}

/* A block this client allocated but never linked. */
void cider_block_unused(struct cider_client *c)
{
	if (c->blk)
		cider_slab_unused(&c->cn->slab, 0, c->blk);
	c->blk = 0;
}
