// SPDX-License-Identifier: GPL-2.0
/*
 * --scanners N: clients 0..N-1 run SCANs (kmod/core/scan.c) instead of
 * the workload, page after page, from cursor 0 to the end and again,
 * while the others run it.  Each full scan is checked against SCAN's
 * promise: every key present in the MN's memory when the scan began and
 * never the subject of a DELETE while it ran (none in flight at its
 * start, none ending after it) is returned; and every key returned is
 * one the workload could have written (its bytes are sim_fill()'s).
 * A page is an operation like the others: in the event loop, under the
 * bound, crashed and revived; the history checks skip it (SIM_SCAN_KEY).
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "scan.h"

/* Positions a page visits: a few groups, so that a scan takes many pages. */
#define SIM_SCAN_PAGE	64

struct sim_scan {
	u64 cursor;		/* where the next page starts */
	u64 start;		/* when this scan's first page began (ps) */
	u8 *present;		/* by key: in memory when the scan began */
	u8 *seen;		/* by key: returned by a page of this scan */
	/* the smallest buffer the core takes: pages often end full */
	u8 buf[CIDER_SCAN_MIN_OUT];
};

static struct sim_scan *scan_of(struct sim *s, const struct cider_client *c)
{
	return c->id < s->scanners ? &s->scan[c->id] : NULL;
}

/* The key a hash slot's block holds (its first 8 bytes: sim_fill()). */
static u64 slot_key(struct sim *s, u64 w)
{
	return sim_mem_read(s, cider_slot_off(w) + CIDER_BLOCK_HDR);
}

/* Which keys are in the MN's memory now. */
static void snapshot(struct sim *s, u8 *present)
{
	u64 i, w, k;

	memset(present, 0, s->nr_keys);
	if (s->cfg.index == CIDER_INDEX_ARRAY) {
		for (i = 0; i < s->nr_keys; i++)
			present[i] = sim_word_off(s, sim_mem_read(s, s->cfg.index_off + 8 * i)) != 0;
		return;
	}
	for (i = 0; i < s->cfg.nr_buckets * CIDER_BUCKET_SLOTS; i++) {
		w = sim_mem_read(s, s->cfg.bucket_off + 8 * i);
		if (cider_slot_empty(w))
			continue;
		k = slot_key(s, w);
		if (k < s->nr_keys)
			present[k] = 1;
	}
}

void sim_scan_setup(struct sim *s)
{
	u32 i;

	if (!s->scanners)
		return;
	s->scan = calloc(s->scanners, sizeof(*s->scan));
	s->del_live = calloc(s->nr_keys, sizeof(u32));
	s->del_end = calloc(s->nr_keys, sizeof(u64));
	if (!s->scan || !s->del_live || !s->del_end)
		goto oom;
	for (i = 0; i < s->scanners; i++) {
		s->scan[i].present = calloc(s->nr_keys, 1);
		s->scan[i].seen = calloc(s->nr_keys, 1);
		if (!s->scan[i].present || !s->scan[i].seen)
			goto oom;
	}
	return;
oom:
	fprintf(stderr, "cider-sim: out of memory\n");
	exit(1);
}

void sim_scan_free(struct sim *s)
{
	u32 i;

	for (i = 0; s->scan && i < s->scanners; i++) {
		free(s->scan[i].present);
		free(s->scan[i].seen);
	}
	free(s->scan);
	free(s->del_live);
	free(s->del_end);
}

/* A DELETE of @o->key starts (@start) or ends; @pending: it may land later. */
void sim_scan_note_delete(struct sim *s, const struct op_rec *o, bool start, bool pending)
{
	if (!s->scanners || o->op != CIDER_DELETE || o->key >= s->nr_keys)
		return;
	if (start) {
		s->del_live[o->key]++;
		return;
	}
	s->del_live[o->key]--;
	s->del_end[o->key] = pending ? ~0ULL : s->now;
}

/* Start @c's next page if it is a scanner: true when it is. */
bool sim_scan_start(struct sim *s, struct cider_client *c, struct op_rec *o)
{
	struct sim_scan *sc = scan_of(s, c);
	u64 total = cider_scan_positions(&s->cfg);
	struct cider_kv_args a = { .op = CIDER_SCAN, .opid = s->cur_op[c->id] };

	if (!sc)
		return false;
	o->op = CIDER_SCAN;
	o->key = SIM_SCAN_KEY;
	if (!sc->cursor) {		/* a new scan */
		sc->start = s->now;
		snapshot(s, sc->present);
		memset(sc->seen, 0, s->nr_keys);
	}
	a.out = sc->buf;
	a.out_len = sizeof(sc->buf);
	a.cursor = sc->cursor;
	a.count = (u32)(total - sc->cursor < SIM_SCAN_PAGE ? total - sc->cursor : SIM_SCAN_PAGE);
	s->scan_pages++;
	cider_client_start(c, &a);
	return true;
}

/* A record's key: one the workload wrote (sim_fill()'s bytes), or a violation. */
static void scan_record(struct sim *s, struct sim_scan *sc, const u8 *key, u32 klen)
{
	u32 want = s->cfg.index == CIDER_INDEX_HASH ? s->key_len : 8;
	u8 fill[CIDER_MAX_KEY];
	u64 id = 0;

	if (klen == want) {
		memcpy(&id, key, 8);
		sim_fill(fill, id, klen);
	}
	if (klen != want || id >= s->nr_keys || memcmp(fill, key, klen)) {
		sim_violation(s, "a SCAN returned a key of %u bytes nobody wrote", klen);
		return;
	}
	sc->seen[id] = 1;
	s->scan_keys++;
}

/* Every key present throughout the scan was returned. */
static void scan_check(struct sim *s, struct sim_scan *sc)
{
	u64 k;

	for (k = 0; k < s->nr_keys; k++) {
		if (!sc->present[k] || s->del_live[k] ||
		    (s->del_end[k] && s->del_end[k] >= sc->start))
			continue;
		s->scan_held++;		/* a key the scan had to return */
		if (sc->seen[k])
			continue;
		sim_violation(s, "a SCAN from %.1f to %.1f us missed key %llu, present throughout",
			      (double)sc->start / US, (double)s->now / US, (unsigned long long)k);
		return;
	}
	s->scans_full++;
}

/* @c's page ended: its records, and the check when the scan is complete. */
bool sim_scan_done(struct sim *s, struct cider_client *c)
{
	struct sim_scan *sc = scan_of(s, c);
	u32 at = 0, klen;

	if (!sc)
		return false;
	if (c->res != CIDER_RES_OK)	/* this page did not happen: again */
		return true;
	while (at + CIDER_SCAN_REC_HDR <= c->got_len) {
		memcpy(&klen, sc->buf + at, CIDER_SCAN_REC_HDR);
		if (klen > CIDER_MAX_KEY || at + CIDER_SCAN_REC_SIZE(klen) > c->got_len) {
			sim_violation(s, "a SCAN page's records do not add up");
			break;
		}
		scan_record(s, sc, sc->buf + at + CIDER_SCAN_REC_HDR, klen);
		at += CIDER_SCAN_REC_SIZE(klen);
	}
	if (c->got <= sc->cursor)
		sim_violation(s, "a SCAN page did not move on from position %llu",
			      (unsigned long long)sc->cursor);
	sc->cursor = c->got;
	if (sc->cursor >= cider_scan_positions(&s->cfg)) {
		scan_check(s, sc);
		sc->cursor = 0;
	}
	return true;
}
