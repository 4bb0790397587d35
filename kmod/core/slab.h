/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation and reclamation of KV blocks on the memory node, with no MN
 * CPU involved.
 *
 * Each CN claims chunks of the data area by FAA on the superblock's cursor
 * and carves each into blocks of one size class.  The writer that unlinks
 * a block (an UPDATE's CAS replaced it, a DELETE's CAS removed it) frees
 * it into its CN's FIFO for that class, and the block is handed out again
 * only after a grace period G.
 *
 * The reclamation rule: a reader may return a block's bytes only if, by
 * its own clock, less than G/2 passed between issuing the READ of the
 * pointer that led to the block and receiving the block; otherwise it
 * retries.  The pointer still led to the block when it was read, so the
 * block was unlinked after that, freed after that, and cannot be written
 * again before G (by the freeing CN's clock) after that: the bytes read
 * are the ones that were reachable.  G/2 leaves room for the two clocks
 * to run at different rates.  The block CRC (block.h) is the second line
 * of defence: a reader that did see a reuse sees a bad CRC or another key.
 *
 * The reader fence: the rule alone cannot promise progress.  Under load a
 * READ can take longer than G/2, and a reader that misses the rule every
 * time never finishes (the random soak found SEARCHes that spun forever).
 * So a reader that missed it CIDER_LATE_READS times in a row announces
 * itself: FAA +1 on the MN's reader fence word, then reads with no time
 * limit, then FAA -1.  A CN reuses a block only if, besides its grace
 * period, a READ of the fence that returned 0 was posted after the block
 * was unlinked (fence_ok below).  An announced reader's pointer READ runs
 * after its FAA, so any block it can reach is unlinked after that FAA; a
 * fence READ that follows the unlink sees the announcement until the
 * reader is done.  The fence is READ at most every G/4 per CN, and only
 * when the oldest freed block waits for it.
 */
#ifndef _CIDER_CORE_SLAB_H
#define _CIDER_CORE_SLAB_H

#include "block.h"

#define CIDER_SLAB_NOW (~0ULL)	/* freed never-linked: no grace */

struct cider_slab_ent {
	u64 off;		/* block offset in the region */
	u64 t;			/* when it was freed (ns) */
};

struct cider_slab {
	u32 unit;		/* size of class 0; class c is unit << c */
	u32 nr_cls;
	u64 grace_ns;
	u64 chunk_size;		/* a multiple of the largest class */
	u64 next[CIDER_NR_CLASSES], end[CIDER_NR_CLASSES];	/* carving */
	struct cider_slab_ent *ring;	/* cap entries per class */
	u32 cap;
	u32 head[CIDER_NR_CLASSES], n[CIDER_NR_CLASSES];
	u64 claimed;		/* bytes of chunks claimed from the MN */
	u64 live;		/* bytes of blocks handed out, not freed */
	u64 leaked;		/* frees that found the FIFO full */
	u64 fence_ok;		/* a zero reader fence was READ from here on */
	u64 fence_asked;	/* when the fence was last READ */
	/*
	 * The client claiming a chunk of each class, index + 1 (0: none):
	 * the others wait for its chunk instead of claiming one each, which
	 * the next claim would discard (cider_slab_add_chunk()).
	 */
	u32 claimer[CIDER_NR_CLASSES];
};

#define CIDER_LATE_READS 3

/* @ring: caller-provided room for @cap entries for each of @nr_cls classes. */
void cider_slab_init(struct cider_slab *s, u32 unit, u32 nr_cls, u64 chunk_size,
		     u64 grace_ns, struct cider_slab_ent *ring, u32 cap);
/*
 * A block of class @cls: 0 and *off; 1 when a new chunk is needed (claim
 * one, pass it to cider_slab_add_chunk(), call again).
 */
int cider_slab_alloc(struct cider_slab *s, u32 cls, u64 now, u64 *off);
void cider_slab_add_chunk(struct cider_slab *s, u32 cls, u64 off);
/* Free an unlinked block; false if the FIFO was full (the block leaks). */
bool cider_slab_free(struct cider_slab *s, u32 cls, u64 off, u64 now);
/* Free a block that was never linked: reusable at once. */
void cider_slab_unused(struct cider_slab *s, u32 cls, u64 off);
/* Reuse blocks only after a zero reader fence (off until this is called). */
void cider_slab_use_fence(struct cider_slab *s);
/* Should the fence be READ now?  True at most once per G/4. */
bool cider_slab_fence_due(struct cider_slab *s, u32 cls, u64 now);
/* A READ of the fence posted at @asked returned 0. */
void cider_slab_fence_clear(struct cider_slab *s, u64 asked);

#endif
