// SPDX-License-Identifier: GPL-2.0
/*
 * A memory node's counters by name: CIDER_IOC_MN_STATS, the stable way
 * to read them (ciderctl stats), for whoever may open the device, as
 * ethtool -S reads a NIC's; debugfs prints the same list for developers,
 * beside what only they need (each channel's state and credits, each
 * shard's operations under way).  One list, so the two cannot drift.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kvstore.h"
#include "mn.h"
#include "stats.h"
#include "uargs.h"

void cider_stat_put(struct cider_stats_out *o, const char *name, u64 value)
{
	if (o->st && o->n < o->room) {
		strscpy(o->st[o->n].name, name, sizeof(o->st[o->n].name));
		o->st[o->n].value = value;
	}
	o->n++;
}

void cider_chan_snapshot(struct cider_channel *ch, struct cider_chan_snap *c)
{
	spin_lock_bh(&ch->lock);
	c->s = ch->stats;
	c->limit = ch->credit.limit;
	c->inflight = ch->credit.inflight;
	c->updates = ch->credit.updates;
	c->tmax = ch->backoff.tmax;
	c->state = ch->state;
	c->reason = ch->reason;
	spin_unlock_bh(&ch->lock);
}

void cider_snap_add(struct cider_chan_snap *t, const struct cider_chan_snap *c)
{
	unsigned int v;

	t->s.batches += c->s.batches;
	t->s.doorbells += c->s.doorbells;
	t->s.wrs += c->s.wrs;
	t->s.cqes += c->s.cqes;
	for (v = 0; v < CIDER_RDMA_NR_OPS; v++)
		t->s.done[v] += c->s.done[v];
	t->s.errors += c->s.errors;
	t->s.post_errors += c->s.post_errors;
	t->s.backlogged += c->s.backlogged;
	t->s.canceled += c->s.canceled;
	t->s.keepalives += c->s.keepalives;
	t->s.heartbeats += c->s.heartbeats;
	t->inflight += c->inflight;
}

/* The node's own: its link's history and its channels' sums. */
static void cider_mn_stats_node(struct cider_mn *mn, struct cider_stats_out *o)
{
	struct cider_chan_snap c, t = {};
	unsigned int i;

	cider_stat_put(o, "reconnects", READ_ONCE(mn->reconnects));
	cider_stat_put(o, "reconnect_attempts", READ_ONCE(mn->reconnect_attempts));
	cider_stat_put(o, "member_beats", atomic64_read(&mn->member.beats));
	cider_stat_put(o, "member_reannounced", atomic64_read(&mn->member.reannounced));
	for (i = 0; i < mn->nr_chans; i++) {
		cider_chan_snapshot(&mn->chans[i], &c);
		cider_snap_add(&t, &c);
	}
	cider_stat_put(o, "chan_batches", t.s.batches);
	cider_stat_put(o, "chan_doorbells", t.s.doorbells);
	cider_stat_put(o, "chan_wrs", t.s.wrs);
	cider_stat_put(o, "chan_cqes", t.s.cqes);
	cider_stat_put(o, "chan_read", t.s.done[CIDER_RDMA_READ]);
	cider_stat_put(o, "chan_write", t.s.done[CIDER_RDMA_WRITE]);
	cider_stat_put(o, "chan_cas", t.s.done[CIDER_RDMA_CAS]);
	cider_stat_put(o, "chan_faa", t.s.done[CIDER_RDMA_FAA]);
	cider_stat_put(o, "chan_errors", t.s.errors);
	cider_stat_put(o, "chan_post_errors", t.s.post_errors);
	cider_stat_put(o, "chan_backlogged", t.s.backlogged);
	cider_stat_put(o, "chan_canceled", t.s.canceled);
	cider_stat_put(o, "chan_keepalives", t.s.keepalives);
	cider_stat_put(o, "chan_heartbeats", t.s.heartbeats);
	/* Batches holding an atomic of a node in agent mode: not on a channel. */
	cider_stat_put(o, "agent_batches", atomic64_read(&mn->agent.batches));
	cider_stat_put(o, "agent_verbs", atomic64_read(&mn->agent.verbs));
	cider_stat_put(o, "agent_failed", atomic64_read(&mn->agent.failed));
}

int cider_mn_stats_collect(struct cider_mn *mn, struct cider_stats_out *o)
{
	cider_mn_stats_node(mn, o);
	return cider_kvs_stats_collect(mn, o, CIDER_KVS_STATS_KV) ?:
	       cider_kvs_stats_collect(mn, o, CIDER_KVS_STATS_PEER);
}

static int cider_mn_stats_check(const struct cider_mn_stats *a)
{
	if (a->flags || memchr_inv(a->reserved, 0, sizeof(a->reserved)) ||
	    a->nr > CIDER_STATS_MAX)
		return -EINVAL;
	return 0;
}

/*
 * @mn's counters into @o, room for at most @room of them: counted first,
 * so that the buffer is what the node has, not what the caller offers.
 */
static int cider_mn_stats_get(struct cider_mn *mn, struct cider_stats_out *o, u32 room)
{
	int ret = cider_mn_stats_collect(mn, o);

	if (ret || !room)
		return ret;
	o->room = min(room, o->n);
	o->n = 0;
	/* Zeroed: the names' padding goes to user space too. */
	o->st = kcalloc(o->room, sizeof(*o->st), GFP_KERNEL);
	if (!o->st)
		return -ENOMEM;
	return cider_mn_stats_collect(mn, o);
}

long cider_ioctl_mn_stats(void __user *uarg, unsigned int cmd)
{
	struct cider_stats_out o = {};
	struct cider_mn_stats a;
	struct cider_mn *mn;
	int ret;

	ret = cider_uargs_in(&a, sizeof(a), CIDER_MN_STATS_SIZE_VER0, uarg, cmd);
	if (!ret)
		ret = cider_mn_stats_check(&a);
	if (ret)
		return ret;
	mn = cider_mn_get(a.mn_id);
	if (!mn)
		return -ENOENT;
	ret = cider_mn_stats_get(mn, &o, a.nr);
	cider_mn_put(mn);
	if (!ret && copy_to_user(u64_to_user_ptr(a.stats), o.st,
				 (size_t)min(o.n, o.room) * sizeof(*o.st)))
		ret = -EFAULT;
	kfree(o.st);
	if (ret)
		return ret;
	a.size = _IOC_SIZE(cmd);
	a.nr = o.n;
	return cider_uargs_out(uarg, &a, sizeof(a), cmd);
}
