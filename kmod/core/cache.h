/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CN cache of hot keys (cfg->cache): a compute node answers SEARCHes
 * of a key from its own memory while it holds a read lease on the key's
 * data pointer word (Documentation/protocol.rst, "The CN cache").
 *
 * The lease lives in the word itself, two bits beside the block offset
 * (kv.h, hashindex.h):
 *   LEASED   set by a reader's CAS; while it is set and WAITING is not,
 *            any CN whose READ (posted at t) returns the word may answer
 *            from the block it names until t + the store's cache lease;
 *   WAITING  set by a writer's CAS on a LEASED word: no lease starts any
 *            more, and the writer CASes its new word (neither bit, the
 *            version advanced) once every CN has answered its INVAL
 *            message (it dropped its rights and takes none from a READ
 *            posted before), or at the latest a lease plus the clock
 *            margin after that CAS completed (a CN that died, or that
 *            the messages do not reach).
 * Every change of a key is a CAS of that word from the value read, so a
 * writer cannot slip in between a reader's READ and its right: a right
 * begins before the WAITING bit is set and ends before the writer's CAS,
 * which is the write's linearization point.  A CN that dies holding a
 * right holds nothing: rights end by the clock.
 */
#ifndef _CIDER_CORE_CACHE_H
#define _CIDER_CORE_CACHE_H

#include "platform.h"

struct cider_client;
struct cider_cn;

#define CIDER_CACHE_WAYS	8	/* a key's entry is in one set of 8 */

struct cider_cache_ent {
	u64 key;		/* array: the index; hash: cider_key_id() */
	u64 word;		/* the pointer word the kept bytes belong to */
	u64 paddr;		/* where that word is (the hash slot) */
	u64 until;		/* answers until then (this CN's clock); 0: no right */
	u64 checked;		/* when a READ last showed the word leased */
	u64 used;		/* last use: a set's least recently used goes */
	u64 since;		/* when a READ first showed the word unchanged since */
	u32 seen;		/* SEARCHes in a row that found the same word */
	u32 klen, vlen;		/* bytes kept at the entry's room: key, value */
	bool in_use;
	bool kept;		/* the value is kept (else: heat only) */
};

struct cider_cache {
	struct cider_cache_ent *ent;
	u8 *room;		/* ent_bytes per entry: the key, then the value */
	u32 nr;			/* entries, a multiple of CIDER_CACHE_WAYS; 0: off */
	u32 ent_bytes;
	u64 evictions;		/* entries given up for another key */
	u64 inval_t;		/* when the last INVAL arrived: no right from a READ before */
	u64 invals;		/* INVALs received */
};

void cider_cache_init(struct cider_cache *cc, struct cider_cache_ent *ent, u8 *room,
		      u32 nr, u32 ent_bytes);
/* A SEARCH starts: answered from a right still held?  (No verb.) */
bool cider_cache_serve(struct cider_client *c);
/*
 * The key's word was just read (c->ptr, at c->t0) and is the cached one,
 * leased: the right starts again from c->t0 and the SEARCH is answered
 * without READing the block.
 */
bool cider_cache_refresh(struct cider_client *c);
/* Hash: may the lookup take slot @paddr holding @w without READing its block? */
bool cider_cache_knows_slot(struct cider_client *c, u64 paddr, u64 w);
/*
 * A SEARCH read the key's block (c->ptr at c->t0): keep it under the
 * word's lease, or count the key's heat.  Returns true when the key is
 * hot and its word unleased: the caller CASes the lease bit in and calls
 * cider_cache_marked() with the outcome.
 */
bool cider_cache_note(struct cider_client *c);
/*
 * The lease's CAS, posted at @t, set the bit (@ok); @fresh: it executed
 * within the reclamation rule of the pointer's READ, so the bytes read
 * are that word's.
 */
void cider_cache_marked(struct cider_client *c, bool ok, bool fresh, u64 t);
/*
 * A writer of @key stopped its leases (cache.h): drop the rights on it,
 * and take none from a READ posted before @now (it may have executed
 * before the WAITING bit was set).
 */
void cider_cache_inval(struct cider_cn *cn, u64 key, u64 now);
/*
 * No right from a READ posted before @until: a CN new to the store waits
 * until every writer can know it (the fabric's broadcast, cider.ko).
 */
void cider_cache_hold(struct cider_cn *cn, u64 until);
/* Bytes a cache of @nr entries of @ent_bytes takes (its memory bound). */
u64 cider_cache_bytes(u32 nr, u32 ent_bytes);

#endif
