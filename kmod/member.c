// SPDX-License-Identifier: GPL-2.0
/*
 * Membership: who a compute node is, as its memory node's table says.
 *
 * Entry cn_id of the table (layout.h) is the one authority on CN cn_id:
 * an attach claims it with a CAS to the next incarnation, live; while the
 * node lives its watchdog moves the entry's heartbeat (FAA) and reads
 * the claim back, so a CN that finds itself replaced stops at once; a
 * detach releases the claim after everything else the incarnation posted
 * has executed.  No service runs on the memory node: all of it is
 * one-sided verbs.
 *
 * Taking a live claim over needs proof that its holder is dead: its
 * heartbeat stood still for the store's member lease, or this kernel
 * tore that incarnation down itself (then only a lock lease is waited,
 * as for a client of the store that died: any lock it held can be
 * recovered by then).  A second live CN with the same id is refused with
 * EADDRINUSE, in this kernel or another.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>

#include <linux/in.h>
#include <linux/in6.h>

#include "core/layout.h"
#include "mn.h"
#include "params.h"
#include "peerlink.h"

#define CIDER_CLAIM_TRIES	4	/* CAS races lost before giving up */
/* Bytes of the membership table each heartbeat reads. */
#define CIDER_MEMBER_TABLE	(CIDER_MN_MAX_CNS * sizeof(struct cider_mn_member))

/*
 * Incarnations this kernel held and tore down without releasing them (the
 * node was lost first): dead for sure, whatever their heartbeat says.
 */
struct cider_member_gone {
	struct sockaddr_storage mn;
	u64 base;
	u32 rkey;
	u32 cn_id;
	u64 claim;
	u64 at_ns;
};

#define CIDER_MEMBERS_GONE	16	/* the most recent ones */
static struct cider_member_gone cider_members_gone[CIDER_MEMBERS_GONE];
static unsigned int cider_members_gone_next;
static DEFINE_SPINLOCK(cider_members_gone_lock);

static u64 cider_member_off(const struct cider_mn *mn)
{
	return mn->sb.member_off + (u64)mn->cn_id * sizeof(struct cider_mn_member);
}

static bool cider_member_gone_match(const struct cider_member_gone *g,
				    const struct cider_mn *mn, u64 claim)
{
	return g->claim == claim && g->cn_id == mn->cn_id && g->base == mn->base &&
	       g->rkey == mn->rkey && !memcmp(&g->mn, &mn->addr, sizeof(g->mn));
}

static void cider_member_gone_add(const struct cider_mn *mn)
{
	struct cider_member_gone *g;

	spin_lock(&cider_members_gone_lock);
	g = &cider_members_gone[cider_members_gone_next++ % CIDER_MEMBERS_GONE];
	g->mn = mn->addr;
	g->base = mn->base;
	g->rkey = mn->rkey;
	g->cn_id = mn->cn_id;
	g->claim = mn->member.claim;
	g->at_ns = ktime_get_ns();
	spin_unlock(&cider_members_gone_lock);
}

/* When this kernel tore @claim down, in ns, or 0 if it did not. */
static u64 cider_member_gone_at(const struct cider_mn *mn, u64 claim)
{
	u64 at = 0;
	int i;

	spin_lock(&cider_members_gone_lock);
	for (i = 0; i < CIDER_MEMBERS_GONE; i++)
		if (cider_member_gone_match(&cider_members_gone[i], mn, claim))
			at = cider_members_gone[i].at_ns;
	spin_unlock(&cider_members_gone_lock);
	return at;
}

/* Read the entry's claim and heartbeat: 0 or -errno. */
static int cider_member_read(struct cider_mn *mn, u64 *claim, u64 *hb)
{
	struct cider_batch *b = cider_batch_alloc(1, 16, GFP_KERNEL);
	int ret;

	if (!b)
		return -ENOMEM;
	cider_batch_read(b, 0, cider_member_off(mn), 16, 0);
	b->probe = true;	/* a reconnect's check of the claim */
	ret = cider_mn_run(mn, &mn->chans[0], b);
	if (!ret) {
		*claim = le64_to_cpup((__le64 *)b->buf);
		*hb = le64_to_cpup((__le64 *)(b->buf + 8));
	}
	cider_batch_put(b);
	return ret;
}

/* CAS the claim from @old to @new: 0 and the word's old value, or -errno. */
static int cider_member_cas(struct cider_mn *mn, u64 old, u64 new, u64 *was)
{
	struct cider_batch *b = cider_batch_alloc(1, 8, GFP_KERNEL);
	int ret;

	if (!b)
		return -ENOMEM;
	cider_batch_cas(b, 0, cider_member_off(mn), old, new, 0);
	ret = cider_mn_run(mn, &mn->chans[0], b);
	if (!ret)
		*was = cider_batch_u64(b, 0);
	cider_batch_put(b);
	return ret;
}

int cider_member_lookup(struct cider_mn *mn, u32 cn_id, struct cider_mn_member *e)
{
	struct cider_batch *b;
	int ret;

	if (cn_id >= CIDER_MN_MAX_CNS)
		return -EINVAL;
	b = cider_batch_alloc(1, sizeof(*e), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	cider_batch_read(b, 0, mn->sb.member_off + (u64)cn_id * sizeof(*e), sizeof(*e), 0);
	ret = cider_mn_run(mn, &mn->chans[0], b);
	if (!ret)
		memcpy(e, b->buf, sizeof(*e));	/* little-endian words, as on x86-64 */
	cider_batch_put(b);
	return ret;
}

/*
 * Where other compute nodes reach this one: the address this node's
 * first channel reaches the memory node from, and the peer listener's
 * port (none: 0, and nobody connects).
 */
static int cider_member_announce(struct cider_mn *mn)
{
	const struct sockaddr *src = (struct sockaddr *)&mn->chans[0].cm_id->route.addr.src_addr;
	struct cider_mn_member e = {};
	struct cider_batch *b;
	__le16 le[2];
	int ret;

	if (src->sa_family == AF_INET)
		memcpy(e.addr, &((const struct sockaddr_in *)src)->sin_addr, 4);
	else if (src->sa_family == AF_INET6)
		memcpy(e.addr, &((const struct sockaddr_in6 *)src)->sin6_addr, 16);
	else
		return 0;
	e.family = src->sa_family;
	e.port = cider_peerlink_port(e.family);
	b = cider_batch_alloc(1, 24, GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	/* addr, port, family, reserved0: as struct cider_mn_member lays them out */
	le[0] = cpu_to_le16(e.port);
	le[1] = cpu_to_le16(e.family);
	memcpy(b->buf, e.addr, sizeof(e.addr));
	memcpy(b->buf + sizeof(e.addr), le, sizeof(le));
	cider_batch_write(b, 0, cider_member_off(mn) + offsetof(struct cider_mn_member, addr),
			  24, 0);
	b->probe = true;	/* a reconnect announces itself once its claim is checked */
	ret = cider_mn_run(mn, &mn->chans[0], b);
	if (!ret) {
		memcpy(mn->member.announced, b->buf, sizeof(mn->member.announced));
		/* Pairs with the heartbeat's read: the bytes, then the flag. */
		smp_store_release(&mn->member.announced_ok, true);
	}
	cider_batch_put(b);
	return ret;
}

/* Sleep @ns, killable: 0, or -EINTR. */
static int cider_member_sleep(u64 ns)
{
	if (schedule_timeout_killable(nsecs_to_jiffies(ns) + 1) && fatal_signal_pending(current))
		return -EINTR;
	return 0;
}

/*
 * @claim is live: may it be taken over?  0 if its holder is dead (this
 * kernel tore it down a lock lease ago, or its heartbeat stood still for
 * a member lease), 1 if the entry changed meanwhile (look again),
 * -EADDRINUSE if its holder lives, or -errno.
 */
static int cider_member_holder_dead(struct cider_mn *mn, u64 claim, u64 hb)
{
	u64 gone = cider_member_gone_at(mn, claim), now = ktime_get_ns();
	u64 claim2, hb2;
	int ret;

	if (gone) {
		if (now < gone + mn->sb.lease_ns)
			return cider_member_sleep(gone + mn->sb.lease_ns - now);
		return 0;
	}
	ret = cider_member_sleep(mn->sb.member_lease_ns);
	if (ret)
		return ret;
	mn->member.waited_ms += div_u64(mn->sb.member_lease_ns, NSEC_PER_MSEC);
	ret = cider_member_read(mn, &claim2, &hb2);
	if (ret)
		return ret;
	if (claim2 != claim)
		return 1;
	return hb2 == hb ? 0 : -EADDRINUSE;
}

/*
 * Claim entry cn_id for a new incarnation (process context, at attach,
 * the node LIVE): 0, -EADDRINUSE while another live CN has the id, or
 * -errno.  Then the heartbeat starts with the watchdog.
 */
int cider_member_claim(struct cider_mn *mn)
{
	u64 claim, hb, was;
	int tries, ret;

	mn->member.hb = cider_batch_alloc(2, 8 + CIDER_MEMBER_TABLE, GFP_KERNEL);
	if (!mn->member.hb)
		return -ENOMEM;
	cider_batch_put(mn->member.hb);		/* the node's reference alone */
	for (tries = 0; tries < CIDER_CLAIM_TRIES; tries++) {
		ret = cider_member_read(mn, &claim, &hb);
		if (!ret && (claim & CIDER_CLAIM_LIVE))
			ret = cider_member_holder_dead(mn, claim, hb);
		if (ret == 1)
			continue;
		if (ret)
			break;
		ret = cider_member_cas(mn, claim, cider_claim_next(claim), &was);
		if (ret)
			break;
		if (was == claim) {
			mn->member.claim = cider_claim_next(claim);
			return cider_member_announce(mn);
		}
	}
	if (tries == CIDER_CLAIM_TRIES)
		ret = -EADDRINUSE;
	if (ret == -EADDRINUSE)
		pr_err("mn%u: %pISpc: cn %u is in use by a live compute node (incarnation %llu)\n",
		       mn->id, &mn->addr, mn->cn_id, cider_claim_incarnation(claim));
	return ret;
}

/*
 * After a reconnect (the node LIVE again, its store not yet given back):
 * is the entry still ours?  A store formatted anew (the memory node
 * restarted) does not have our claim any more: -ESTALE, everything this
 * CN knew of the store is void.  A compute node that took our id over
 * while we were cut off (our heartbeat stood still for a member lease)
 * has a later one: -EADDRINUSE.  Still ours: announce our address again,
 * which may have changed with the link.  0 or -errno.
 */
int cider_member_rejoin(struct cider_mn *mn)
{
	u64 claim, hb;
	int ret;

	if (!mn->member.claim)
		return 0;
	ret = cider_member_read(mn, &claim, &hb);
	if (ret)
		return ret;
	if (claim == mn->member.claim)
		return cider_member_announce(mn);
	if (cider_claim_incarnation(claim) > cider_member_incarnation(&mn->member)) {
		pr_err("mn%u: cn %u was taken over while this node was cut off (claim %#llx, ours %#llx): this node stops\n",
		       mn->id, mn->cn_id, claim, mn->member.claim);
		return -EADDRINUSE;
	}
	return -ESTALE;
}

/* The heartbeat's READ of the table at @buf: who else lives, as of mn->member.hb_t. */
static void cider_member_view_update(struct cider_mn *mn, const u8 *buf)
{
	const size_t sz = sizeof(struct cider_mn_member);
	struct cider_member *me = &mn->member;
	unsigned int i, w;

	for (w = 0; w < ARRAY_SIZE(me->view); w++) {
		unsigned long word = 0;

		for (i = 0; i < BITS_PER_LONG && w * BITS_PER_LONG + i < CIDER_MN_MAX_CNS; i++) {
			u32 cn = w * BITS_PER_LONG + i;
			u64 claim = le64_to_cpup((const __le64 *)(buf + cn * sz));

			if (claim & CIDER_CLAIM_LIVE && cn != mn->cn_id)
				word |= 1UL << i;
		}
		WRITE_ONCE(me->view[w], word);
	}
	/* Pairs with cider_member_view(): the bits before the time. */
	smp_store_release(&me->view_t, me->hb_t);
}

static void cider_member_beat_done(struct cider_batch *b)
{
	struct cider_mn *mn = b->priv;
	const void *ours = b->buf + 8 + mn->cn_id * sizeof(struct cider_mn_member);
	u64 claim = le64_to_cpup(ours);

	if (!b->status && claim == mn->member.claim) {
		atomic64_inc(&mn->member.beats);
		cider_member_view_update(mn, b->buf + 8);
		/* Pairs with cider_member_announce(): the flag, then the bytes. */
		if (smp_load_acquire(&mn->member.announced_ok) &&
		    memcmp(ours + offsetof(struct cider_mn_member, addr), mn->member.announced,
			   sizeof(mn->member.announced)))
			atomic_set(&mn->member.reannounce, 1);
	} else if (!b->status && READ_ONCE(mn->state) == CIDER_MN_STATE_LIVE) {
		pr_err("mn%u: cn %u was taken over (claim %#llx, ours %#llx): this node stops\n",
		       mn->id, mn->cn_id, claim, mn->member.claim);
		cider_mn_lost(mn, -EADDRINUSE);
	}
	/* A failed heartbeat: the data path has declared the node lost. */
	atomic_set_release(&mn->member.hb_busy, 0);
}

/*
 * The watchdog's tick: move the heartbeat and read the table back (our
 * claim, and who else may hold rights in the CN cache), one batch at a
 * time, with the node's own batch (nothing is allocated).
 */
void cider_member_beat(struct cider_mn *mn)
{
	struct cider_batch *b = mn->member.hb;
	u64 off = cider_member_off(mn);

	if (!mn->member.claim)
		return;
	/* The entry names another address than ours: say ours again. */
	if (atomic_xchg(&mn->member.reannounce, 0)) {
		atomic64_inc(&mn->member.reannounced);
		pr_info("mn%u: cn %u's entry named another address: announcing ours again\n",
			mn->id, mn->cn_id);
		cider_member_announce(mn);
	}
	if (atomic_cmpxchg_acquire(&mn->member.hb_busy, 0, 1))
		return;
	cider_batch_rearm(b, 2);
	cider_batch_faa(b, 0, off + offsetof(struct cider_mn_member, heartbeat), 1, 0);
	cider_batch_read(b, 1, mn->sb.member_off, CIDER_MEMBER_TABLE, 8);
	b->heartbeat = true;
	b->priv = mn;
	b->complete = cider_member_beat_done;
	mn->member.hb_t = ktime_get_ns();
	cider_mn_submit(mn, &mn->chans[0], b);
	cider_batch_put(b);
}

int cider_member_view(struct cider_mn *mn, unsigned long *live, u64 max_age_ns)
{
	/* Pairs with cider_member_view_update(): the time, then its bits. */
	u64 t = smp_load_acquire(&mn->member.view_t);
	unsigned int w;

	if (!t || ktime_get_ns() - t > max_age_ns)
		return -ESTALE;
	for (w = 0; w < ARRAY_SIZE(mn->member.view); w++)
		live[w] = READ_ONCE(mn->member.view[w]);
	return bitmap_weight(live, CIDER_MN_MAX_CNS);
}

/*
 * Give the entry back (teardown: the node no longer LIVE, every channel
 * but the first destroyed).  The CAS goes out on the first channel after
 * whatever it still carries, and RC executes a QP's operations in order;
 * the other channels were drained, so what they posted has executed or
 * was flushed (a request already on the wire when flushed may still
 * land, within the network's packet lifetime: microseconds).  If the
 * node cannot say so (lost), this kernel remembers the incarnation as
 * dead.
 */
void cider_member_release(struct cider_mn *mn)
{
	struct cider_channel *ch = &mn->chans[0];
	unsigned long tmo = msecs_to_jiffies(READ_ONCE(cider_op_timeout_ms));
	struct cider_batch *b;
	int ret = -ENOMEM;

	if (!mn->member.claim || mn->member.released)
		return;
	mn->member.released = true;
	/* Cut off (reconnecting): the claim stays, and the lease frees it. */
	b = cider_channel_ready(ch) ? cider_batch_alloc(1, 8, GFP_KERNEL) : NULL;
	if (b) {
		cider_batch_cas(b, 0, cider_member_off(mn), mn->member.claim,
				mn->member.claim & ~CIDER_CLAIM_LIVE, 0);
		b->complete = cider_batch_wake;
		cider_mn_post(mn, ch, b);
		if (!wait_for_completion_timeout(&b->done, tmo)) {
			cider_channel_kill(ch, -ETIMEDOUT);
			wait_for_completion(&b->done);
		}
		ret = b->status;
		if (!ret && cider_batch_u64(b, 0) != mn->member.claim)
			ret = -EADDRINUSE;	/* not ours any more: nothing to remember */
		cider_batch_put(b);
	}
	if (ret && ret != -EADDRINUSE)
		cider_member_gone_add(mn);
}

/* The node is freed: every batch of its has finished. */
void cider_member_free(struct cider_mn *mn)
{
	if (mn->member.hb)
		cider_batch_put(mn->member.hb);
	mn->member.hb = NULL;
}
