/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A compute node's entry in its memory node's membership table: claimed
 * at attach, kept alive by a heartbeat, released at detach (member.c).
 */
#ifndef _CIDER_MEMBER_H
#define _CIDER_MEMBER_H

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/types.h>

#include "core/layout.h"

struct cider_batch;
struct cider_mn;

struct cider_member {
	u64 claim;			/* ours (layout.h); 0 until claimed */
	bool released;			/* given back (or given up) at teardown */
	struct cider_batch *hb;		/* the heartbeat: FAA, then READ the claim */
	atomic_t hb_busy;		/* a heartbeat is out */
	atomic64_t beats;		/* heartbeats that came back ours */
	atomic64_t reannounced;		/* announced again (see announced[]) */
	u64 waited_ms;			/* the claim waited out a dead holder */
	u64 hb_t;			/* when the heartbeat out was posted */
	/*
	 * The table as the last heartbeat read it: the other compute nodes
	 * with a live claim, and when that READ was posted (0: none yet).
	 * Updated in place, view_t last: a reader that loads view_t first
	 * sees every CN live at that time (and maybe newer ones).
	 */
	unsigned long view[BITS_TO_LONGS(CIDER_MN_MAX_CNS)];
	u64 view_t;
	/*
	 * The address entry as last announced (addr, port, family, reserved0),
	 * and the heartbeat's finding that the table holds another: a rejoin's
	 * late WRITE after a takeover names the old owner (protocol.rst, the
	 * audit's finding 2); the watchdog announces again.
	 */
	u8 announced[24];
	bool announced_ok;
	atomic_t reannounce;
};

struct cider_mn_member;

int cider_member_claim(struct cider_mn *mn);
/* Compute node @cn_id's entry in @mn's table (process context): 0 or -errno. */
int cider_member_lookup(struct cider_mn *mn, u32 cn_id, struct cider_mn_member *e);
int cider_member_rejoin(struct cider_mn *mn);
void cider_member_beat(struct cider_mn *mn);
/*
 * The other live compute nodes into @live, as of a READ posted no more
 * than @max_age_ns ago: their number, or -ESTALE (no such view).
 */
int cider_member_view(struct cider_mn *mn, unsigned long *live, u64 max_age_ns);
void cider_member_release(struct cider_mn *mn);
void cider_member_free(struct cider_mn *mn);

static inline u64 cider_member_incarnation(const struct cider_member *m)
{
	return m->claim >> 1;
}

#endif
