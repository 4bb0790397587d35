// SPDX-License-Identifier: GPL-2.0
/*
 * Out-of-place KV blocks: each CN claims chunks of the data area by FAA on
 * the superblock's cursor and hands out 16-byte blocks from the current
 * chunk; the MN's CPU never takes part.  Blocks are never reused here
 * (reclamation comes with the hash index).
 */
#include "core.h"

/* Sub-protothread: c->blk = a fresh block, or 0 when the MN is full. */
bool cider_alloc_block(struct cider_client *c)
{
	struct cider_cn *cn = c->cn;
	const struct cider_cfg *cfg = cfg_of(c);

	PT_BEGIN(&c->pt_l2);
	while (cn->chunk_next + CIDER_BLOCK_SIZE > cn->chunk_end) {
		v_reset(c);
		v_faa(c, cfg->alloc_cursor, cfg->chunk_size);
		cider_post(c);
		PT_YIELD(&c->pt_l2);
		if (c->v[0].old + cfg->chunk_size > cfg->data_size_limit) {
			c->blk = 0;
			PT_EXIT(&c->pt_l2);
		}
		cn->chunk_next = cfg->data_off + c->v[0].old;
		cn->chunk_end = cn->chunk_next + cfg->chunk_size;
	}
	c->blk = cn->chunk_next;
	cn->chunk_next += CIDER_BLOCK_SIZE;
	PT_END(&c->pt_l2);
}
