/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SCAN (scan.c): the keys of a run of index positions, a page at a time,
 * with Redis SCAN's promise: a key present for a whole scan (cursor 0 to
 * the end) is returned at least once.
 */
#ifndef _CIDER_CORE_SCAN_H
#define _CIDER_CORE_SCAN_H

#include "sm.h"
#include "platform.h"
#include "block.h"
#include "proto.h"

struct cider_client;
struct cider_cfg;

enum cider_scan_state { CIDER_SCAN_STATES(CIDER_SUB_STATE_ENUM) };

/*
 * A page's records in the caller's buffer: u32 key length (native
 * order), the key, zeroes to the next multiple of 8.  An array store's
 * key is its 8-byte index, little-endian.
 */
#define CIDER_SCAN_REC_HDR	4
#define CIDER_SCAN_REC_SIZE(klen)	((CIDER_SCAN_REC_HDR + (klen) + 7) / 8 * 8)
/* Room for one record of the longest key: a page always moves on. */
#define CIDER_SCAN_MIN_OUT	CIDER_SCAN_REC_SIZE(CIDER_MAX_KEY)
/* A hash candidate's READ: its header and the longest key, no value. */
#define CIDER_SCAN_PEEK		(CIDER_BLOCK_HDR + CIDER_MAX_KEY)
/* Positions read per round: one bucket, or eight pointers (64 bytes). */
#define CIDER_SCAN_GROUP	8

struct cider_scan {
	u8 state;		/* enum cider_scan_state */
	u64 base;		/* the group's first position */
	u32 n;			/* positions in the group */
	u64 w[CIDER_SCAN_GROUP];	/* their words as read */
	u32 cand[CIDER_MAX_VERBS];	/* the candidates whose blocks are out */
	u32 nc;
};

/* The store's positions: the array's keys, the hash index's slots. */
u64 cider_scan_positions(const struct cider_cfg *cfg);
void cider_scan_init(struct cider_client *c);
enum cider_step cider_scan_step(struct cider_client *c);
const char *cider_scan_state_name(u8 state);

#endif
