// SPDX-License-Identifier: GPL-2.0
/*
 * Memory nodes: attach (connect every channel, probe the device and the
 * region), detach, loss and reconnect.  A node that loses its link
 * (disconnected, a QP error, an operation overdue) recovers as nvme-rdma
 * does: it stops and drains every channel, its operations end, and it
 * connects again after a jittered delay until it is back or
 * loss_timeout_ms has passed.  A node lost for good (given up, its device
 * removed, its member id taken, a post refused, a restarted memory node)
 * becomes DEAD: every pending and later operation on it fails with its
 * reason, and it stays listed until detached, so operators see why.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "cider.h"
#include "cider_trace.h"
#include "core/store.h"
#include "debugfs.h"
#include "fault.h"
#include "keyproof.h"
#include "mn.h"
#include "params.h"

/*
 * Every node, from the start of its attach; lookups see it only once it
 * is listed.  The array holds one reference.
 */
static DEFINE_XARRAY_ALLOC(cider_mns);
/*
 * Serializes listing and unlisting nodes.  Held only for that, never
 * across a network round trip: connecting, probing and draining run
 * without it, so none of them blocks device removal, MN_INFO or
 * another node's detach.
 */
static DEFINE_MUTEX(cider_mns_lock);

/* What uses every node (the KV store): set at module load, before any attach. */
static const struct cider_mn_client *cider_mn_client;

void cider_mn_register_client(const struct cider_mn_client *client)
{
	cider_mn_client = client;
}

struct cider_mn *cider_mn_get(u32 id)
{
	struct cider_mn *mn;

	rcu_read_lock();
	mn = xa_load(&cider_mns, id);
	if (mn && (!READ_ONCE(mn->listed) || !kref_get_unless_zero(&mn->ref)))
		mn = NULL;
	rcu_read_unlock();
	return mn;
}

static void cider_mn_free_rcu(struct rcu_head *rcu)
{
	struct cider_mn *mn = container_of(rcu, struct cider_mn, rcu);

	kfree(mn->chan_of_cpu);
	kfree(mn);
}

static void cider_mn_release(struct kref *ref)
{
	struct cider_mn *mn = container_of(ref, struct cider_mn, ref);

	if (cider_mn_client)
		cider_mn_client->release(mn);
	cider_member_free(mn);
	call_rcu(&mn->rcu, cider_mn_free_rcu);
}

void cider_mn_put(struct cider_mn *mn)
{
	kref_put(&mn->ref, cider_mn_release);
}

/*
 * The channel of the calling CPU.  Every possible CPU has one, so a CPU
 * that came online after the attach (or a task that migrates right
 * after this) submits safely: online CPUs of the attach have their own,
 * later ones share.
 */
struct cider_channel *cider_mn_channel(struct cider_mn *mn)
{
	return &mn->chans[mn->chan_of_cpu[raw_smp_processor_id()]];
}

/* In the enum's order: both come from the list (vocab.h). */
static const char *const cider_mn_state_names[] = {
	CIDER_MN_STATES(CIDER_VOCAB_NAME, CIDER_VOCAB_NAME)
};

const char *cider_mn_state_name(enum cider_mn_state s)
{
	return s < ARRAY_SIZE(cider_mn_state_names) ? cider_mn_state_names[s] : "?";
}

static bool cider_mn_may_enter(enum cider_mn_state old, enum cider_mn_state new)
{
	switch (new) {
	case CIDER_MN_STATE_LIVE:
		return old == CIDER_MN_STATE_ATTACHING || old == CIDER_MN_STATE_RECONNECTING;
	case CIDER_MN_STATE_RECONNECTING:
		return old == CIDER_MN_STATE_LIVE;
	case CIDER_MN_STATE_DEAD:
		return old == CIDER_MN_STATE_ATTACHING || old == CIDER_MN_STATE_LIVE ||
		       old == CIDER_MN_STATE_RECONNECTING;
	case CIDER_MN_STATE_STOPPED:
		return old != CIDER_MN_STATE_STOPPED;
	default:
		return false;
	}
}

/* Under state_lock: enter @new if the diagram allows it. */
static bool __cider_mn_set_state(struct cider_mn *mn, enum cider_mn_state new, int reason)
{
	enum cider_mn_state old = mn->state;

	lockdep_assert_held(&mn->state_lock);
	if (!cider_mn_may_enter(old, new))
		return false;
	if ((new == CIDER_MN_STATE_DEAD || new == CIDER_MN_STATE_STOPPED) && !mn->dead_reason)
		WRITE_ONCE(mn->dead_reason, reason);
	WRITE_ONCE(mn->state, new);
	trace_cider_mn_state(mn->id, old, new, reason);
	return true;
}

/*
 * The only place a node's state changes (diagram in datapath.rst), but
 * for cider_mn_lose().  Entering DEAD or STOPPED sets dead_reason; the
 * first reason sticks.  Returns whether the state changed: losing a node
 * and stopping it are idempotent.  Any context.
 */
static bool cider_mn_set_state(struct cider_mn *mn, enum cider_mn_state new, int reason)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&mn->state_lock, flags);
	ok = __cider_mn_set_state(mn, new, reason);
	spin_unlock_irqrestore(&mn->state_lock, flags);
	return ok;
}

/*
 * Failures of the link, which a new connection may cure.  Anything else
 * is for good: the device went (ENODEV), our member id was taken
 * (EADDRINUSE), the device refused a post (ENOMEM, EOPNOTSUPP), the node
 * refused an access (EREMOTEIO: a bug, which a reconnect would repeat).
 */
static bool cider_mn_curable(int reason)
{
	switch (reason) {
	case -ETIMEDOUT:
	case -EIO:
	case -ECOMM:
	case -ENOTCONN:
	case -ECONNRESET:
	case -ECONNREFUSED:
	case -ECONNABORTED:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -ENETDOWN:
	case -EADDRNOTAVAIL:	/* the address went with the link, for now */
	case -EKEYEXPIRED:	/* the key's proof out of the window: a clock step */
		return true;
	default:
		return false;
	}
}

/* What a loss made of a node (cider_mn_lose()). */
enum cider_mn_loss {
	CIDER_MN_LOSS_NONE,		/* dead or stopped already */
	CIDER_MN_LOSS_RECONNECT,	/* it starts reconnecting */
	CIDER_MN_LOSS_ABSORBED,		/* it was reconnecting already */
	CIDER_MN_LOSS_DEAD,		/* it is dead now */
};

/*
 * What losing @mn for @reason makes of it, decided under state_lock so
 * that two losses at once agree, and so that the caller's verdict does
 * not depend on a second look (the node may be LIVE again by then): a
 * listed LIVE node whose link failed reconnects while loss_timeout_ms
 * allows it; one already reconnecting takes the errors of its own drain
 * in its stride; anything else is DEAD.
 */
static enum cider_mn_loss cider_mn_lose(struct cider_mn *mn, int reason)
{
	bool curable = cider_mn_curable(reason);
	enum cider_mn_loss loss;
	unsigned long flags;

	spin_lock_irqsave(&mn->state_lock, flags);
	if (mn->state == CIDER_MN_STATE_LIVE && mn->listed && curable &&
	    READ_ONCE(cider_loss_timeout_ms) &&
	    __cider_mn_set_state(mn, CIDER_MN_STATE_RECONNECTING, reason)) {
		WRITE_ONCE(mn->lost_reason, reason);
		WRITE_ONCE(mn->last_reason, reason);
		WRITE_ONCE(mn->lost_at, jiffies);
		WRITE_ONCE(mn->verified, false);
		mn->losses++;
		loss = CIDER_MN_LOSS_RECONNECT;
	} else if (mn->state == CIDER_MN_STATE_RECONNECTING && curable) {
		loss = CIDER_MN_LOSS_ABSORBED;
	} else if (__cider_mn_set_state(mn, CIDER_MN_STATE_DEAD, reason)) {
		loss = CIDER_MN_LOSS_DEAD;
	} else {
		loss = CIDER_MN_LOSS_NONE;
	}
	spin_unlock_irqrestore(&mn->state_lock, flags);
	return loss;
}

/*
 * Map @b and hand it to @ch (NULL: the calling CPU's channel), unless the
 * node is not LIVE.  @b is finished exactly once, at once when it cannot
 * be sent.  Takes no lock and never sleeps: the teardown fences
 * submitters with synchronize_rcu() after leaving LIVE, so a submitter
 * that saw LIVE has queued its batch on a channel whose resources stay
 * until the kill has drained it.
 */
/*
 * Hand @b to @ch, or to the atomics agent when the node's atomics go
 * there and @b holds one: the whole batch, so that its verbs keep their
 * order (Documentation/datapath.rst, "The atomics agent").
 */
static int cider_mn_send(struct cider_mn *mn, struct cider_channel *ch, struct cider_batch *b)
{
	int ret;

	if (mn->atomics == CIDER_MN_ATOMICS_AGENT && cider_batch_has_atomic(b))
		return cider_agent_submit(&mn->agent, b);
	ret = cider_batch_map(b, ch, mn->base, mn->rkey);
	return ret ?: cider_channel_submit(ch, b);
}

/*
 * cider_mn_submit() without the state check, for the membership's release
 * on a node leaving LIVE: its caller keeps @ch's resources.
 */
void cider_mn_post(struct cider_mn *mn, struct cider_channel *ch, struct cider_batch *b)
{
	int ret = cider_mn_send(mn, ch, b);

	if (ret) {
		b->status = ret;
		cider_batch_finish(b);
	}
}

void cider_mn_submit(struct cider_mn *mn, struct cider_channel *ch,
		     struct cider_batch *b)
{
	int ret;

	rcu_read_lock();
	if (likely(READ_ONCE(mn->state) == CIDER_MN_STATE_LIVE &&
		   (READ_ONCE(mn->verified) || b->probe))) {
		ret = cider_mn_send(mn, ch ?: cider_mn_channel(mn), b);
	} else {
		ret = READ_ONCE(mn->dead_reason) ?: -ENOTCONN;
	}
	rcu_read_unlock();
	if (ret) {
		b->status = ret;
		cider_batch_finish(b);
	}
}

/*
 * Run a kernel-owned batch to completion and wait.  Bounded: the node's
 * watchdog declares it lost after op_timeout_ms, and the kill that
 * follows finishes the batch.  Killable: the batch then lives on with
 * the data path's reference; the caller still drops its own.
 */
int cider_mn_run(struct cider_mn *mn, struct cider_channel *ch, struct cider_batch *b)
{
	b->complete = cider_batch_wake;
	cider_mn_submit(mn, ch, b);
	if (wait_for_completion_killable(&b->done))
		return -EINTR;
	return b->status;
}

/*
 * Declare @mn lost (any context): it reconnects (its channels are stopped
 * and connected again from works) or turns DEAD (its channels are stopped
 * from a work), see cider_mn_lose().  Only the first loss counts.
 * Returns whether the node is reconnecting, so that its users keep what
 * they have.
 */
bool cider_mn_lost(struct cider_mn *mn, int reason)
{
	switch (cider_mn_lose(mn, reason)) {
	case CIDER_MN_LOSS_RECONNECT:
		pr_warn("mn%u (%pISpc via %s): lost: %pe; reconnecting\n", mn->id, &mn->addr,
			mn->ibdev_name, ERR_PTR(reason));
		queue_work(system_long_wq, &mn->recover_work);
		return true;
	case CIDER_MN_LOSS_ABSORBED:
		return true;
	case CIDER_MN_LOSS_DEAD:
		if (cider_mn_listed(mn))
			pr_warn("mn%u (%pISpc via %s): lost: %pe\n", mn->id, &mn->addr,
				mn->ibdev_name, ERR_PTR(reason));
		schedule_work(&mn->kill_work);
		return false;
	default:
		return false;
	}
}

/* A channel stopped by itself: the node is lost (transport.h). */
static void cider_mn_chan_error(struct cider_channel *ch, int reason)
{
	cider_mn_lost(ch->owner, reason);
}

static const struct cider_chan_ops cider_mn_chan_ops = {
	.error = cider_mn_chan_error,
};

/*
 * Kill every channel: drain, then cancel.  Runs only while the channels
 * exist: the teardown cancels this work before destroying them.
 */
static void cider_mn_kill_work(struct work_struct *work)
{
	struct cider_mn *mn = container_of(work, struct cider_mn, kill_work);
	unsigned int i;

	/* Not while a reconnect frees or makes them (res_lock). */
	mutex_lock(&mn->res_lock);
	for (i = 0; i < mn->nr_chans; i++)
		cider_channel_kill(&mn->chans[i], READ_ONCE(mn->dead_reason));
	mutex_unlock(&mn->res_lock);
	cider_agent_drain(&mn->agent);
	/* Operations parked on a lock or a timer end too. */
	if (cider_mn_client)
		cider_mn_client->kill(mn, READ_ONCE(mn->dead_reason));
}

static void cider_mn_keepalive_done(struct cider_batch *b)
{
	/* A failure has already declared the node lost (cider_wr_done). */
}

/*
 * A memory node is passive: if it dies while nobody uses it, nothing
 * fails.  So a channel idle for keepalive_ms READs the magic; when the
 * node is gone, that READ fails (transport retries exhausted) or stays
 * outstanding until the watchdog declares the node lost.
 */
static void cider_mn_keepalive(struct cider_mn *mn, struct cider_channel *ch)
{
	struct cider_batch *b = cider_batch_alloc(1, 8, GFP_KERNEL);

	if (!b)
		return;		/* try again on the next tick */
	cider_batch_read(b, 0, offsetof(struct cider_mn_sb, magic), 8, 0);
	b->keepalive = true;
	b->complete = cider_mn_keepalive_done;
	cider_mn_submit(mn, ch, b);
	cider_batch_put(b);
}

/*
 * Every 250 ms: an operation outstanding for op_timeout_ms means the node
 * is unresponsive; an idle channel gets a keep-alive READ.
 */
static void cider_mn_watchdog(struct work_struct *work)
{
	struct cider_mn *mn = container_of(to_delayed_work(work), struct cider_mn,
					   watchdog);
	unsigned long idle = msecs_to_jiffies(READ_ONCE(cider_keepalive_ms));
	unsigned int i;

	/* One scheduled just before a loss: the recovery owns the channels now. */
	if (READ_ONCE(mn->state) != CIDER_MN_STATE_LIVE)
		return;
	for (i = 0; i < mn->nr_chans; i++) {
		if (cider_channel_overdue(&mn->chans[i])) {
			cider_mn_lost(mn, -ETIMEDOUT);
			return;
		}
	}
	for (i = 0; i < mn->nr_chans; i++) {
		if (cider_fault_break_qp())
			cider_channel_break(&mn->chans[i]);
		else if (cider_channel_idle(&mn->chans[i], idle))
			cider_mn_keepalive(mn, &mn->chans[i]);
	}
	cider_member_beat(mn);
	if (READ_ONCE(mn->state) == CIDER_MN_STATE_LIVE)
		schedule_delayed_work(&mn->watchdog, HZ / 4);
}

/*
 * Stop and free every channel resource; the cider_mn itself stays.
 * Idempotent, and safe to run twice at once (device removal during an
 * attach's own teardown).
 */
static void cider_mn_teardown(struct cider_mn *mn, int reason)
{
	unsigned int i;

	cider_mn_set_state(mn, CIDER_MN_STATE_STOPPED, reason);
	/* Every submitter that saw LIVE has queued its batch by now. */
	synchronize_rcu();
	cancel_delayed_work_sync(&mn->watchdog);
	cancel_work_sync(&mn->kill_work);
	mutex_lock(&mn->res_lock);
	/* The first channel last: it carries the membership's release. */
	for (i = mn->nr_chans; i-- > 1; )
		cider_channel_destroy(&mn->chans[i]);
	if (cider_mn_client)
		cider_mn_client->leave(mn);
	cider_member_release(mn);
	cider_agent_drain(&mn->agent);
	cider_channel_destroy(&mn->chans[0]);
	/* No channel connects again: the key goes (a second teardown finds none). */
	for (i = 0; i < mn->nr_chans; i++)
		mn->chans[i].key = NULL;
	cider_key_free(mn->key);
	mn->key = NULL;
	mutex_unlock(&mn->res_lock);
	/*
	 * After the destroy, which ends a reconnect's wait for its connects:
	 * a reconnect finds the node STOPPED and leaves the channels alone.
	 */
	cancel_work_sync(&mn->recover_work);
	cancel_delayed_work_sync(&mn->reconnect_work);
	cancel_delayed_work_sync(&mn->watchdog);	/* a reconnect may have started it */
	if (cider_mn_client) {
		cider_mn_client->kill(mn, READ_ONCE(mn->dead_reason));
		/* Before the device can go: nothing of the user is mapped. */
		cider_mn_client->stop(mn);
	}
}

/*
 * One channel per CPU online now, in the order of their ids; a CPU that
 * is possible but offline now uses channel cpu % n, so that a CPU
 * plugged in later has a channel too.  Returns n; NULL map on failure.
 */
static unsigned int cider_mn_map_cpus(u16 **mapp)
{
	unsigned int cpu, n = 0;
	u16 *map;

	map = kcalloc(nr_cpu_ids, sizeof(*map), GFP_KERNEL);
	*mapp = map;
	if (!map)
		return 0;
	cpus_read_lock();
	for_each_online_cpu(cpu)
		map[cpu] = n++;
	for_each_possible_cpu(cpu)
		if (!cpu_online(cpu))
			map[cpu] = cpu % n;
	cpus_read_unlock();
	return n;
}

static void cider_mn_set_addr(struct cider_mn *mn, const struct cider_attach *at)
{
	if (at->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&mn->addr;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(at->port);
		memcpy(&sin->sin_addr, at->addr, 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&mn->addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(at->port);
		memcpy(&sin6->sin6_addr, at->addr, 16);
	}
}

static void cider_mn_recover_work(struct work_struct *work);
static void cider_mn_reconnect_work(struct work_struct *work);

/*
 * A new generation for the agent's connection to @mn: at attach and at
 * each reconnect, so that the agent connects again too (the memory node
 * may have restarted).
 */
static void cider_mn_agent_renew(struct cider_mn *mn)
{
	static atomic_t gen = ATOMIC_INIT(0);

	WRITE_ONCE(mn->agent.generation, atomic_inc_return(&gen));
}

/* The atomics agent is gone: every node whose atomics it ran is lost. */
void cider_mn_agent_gone(void)
{
	struct cider_mn *mn;
	unsigned long id;

	mutex_lock(&cider_mns_lock);
	xa_for_each(&cider_mns, id, mn)
		if (mn->atomics == CIDER_MN_ATOMICS_AGENT)
			cider_mn_lost(mn, -ENOTCONN);
	mutex_unlock(&cider_mns_lock);
}

static struct cider_mn *cider_mn_alloc(const struct cider_attach *at,
				       struct crypto_shash *key)
{
	struct cider_mn *mn;
	unsigned int n;
	u16 *map;

	n = cider_mn_map_cpus(&map);
	if (!map)
		return NULL;
	mn = kzalloc(struct_size(mn, chans, n), GFP_KERNEL);
	if (!mn) {
		kfree(map);
		return NULL;
	}
	mn->chan_of_cpu = map;
	mn->nr_chans = n;
	mn->cn_id = at->cn_id;
	kref_init(&mn->ref);
	spin_lock_init(&mn->state_lock);
	mn->state = CIDER_MN_STATE_ATTACHING;
	mutex_init(&mn->res_lock);
	mutex_init(&mn->user_lock);
	mn->verified = true;	/* an attach probes before it lists the node */
	INIT_WORK(&mn->kill_work, cider_mn_kill_work);
	INIT_WORK(&mn->recover_work, cider_mn_recover_work);
	INIT_DELAYED_WORK(&mn->reconnect_work, cider_mn_reconnect_work);
	INIT_DELAYED_WORK(&mn->watchdog, cider_mn_watchdog);
	cider_mn_set_addr(mn, at);
	mn->key = key;
	mn->atomics = at->flags & CIDER_ATTACH_ATOMICS_AGENT ? CIDER_MN_ATOMICS_AGENT :
		      CIDER_MN_ATOMICS_KERNEL;
	cider_agent_dest_init(&mn->agent);
	mn->agent.cn_id = at->cn_id;
	mn->agent.family = at->family;
	mn->agent.port = at->port;
	memcpy(mn->agent.addr, at->addr, sizeof(mn->agent.addr));
	return mn;
}

/* Once the node has its id: its channels are named after it. */
static void cider_mn_init_chans(struct cider_mn *mn)
{
	char name[16];
	unsigned int i;

	snprintf(name, sizeof(name), "mn%u", mn->id);
	mn->agent.mn_id = mn->id;
	cider_mn_agent_renew(mn);
	for (i = 0; i < mn->nr_chans; i++) {
		cider_channel_init(&mn->chans[i], &cider_mn_chan_ops, mn, name,
				   mn->cn_id, i);
		mn->chans[i].key = mn->key;
	}
}

/*
 * Start connecting every channel, unless the node is already stopped
 * (its device went away).  Returns how many started, or -errno when one
 * failed at once (that one will never report; the teardown stops the
 * others).
 */
static int cider_mn_start_connect(struct cider_mn *mn, unsigned long timeout_ms)
{
	unsigned int i;
	int ret = 0;

	mutex_lock(&mn->res_lock);
	for (i = 0; i < mn->nr_chans && !ret; i++) {
		if (READ_ONCE(mn->state) != CIDER_MN_STATE_ATTACHING &&
		    READ_ONCE(mn->state) != CIDER_MN_STATE_RECONNECTING)
			ret = READ_ONCE(mn->dead_reason) ?: -ENODEV;
		else
			ret = cider_channel_connect(&mn->chans[i], (struct sockaddr *)&mn->addr,
						    timeout_ms);
	}
	mutex_unlock(&mn->res_lock);
	return ret;
}

/* Every channel reached the same region through the same device. */
static int cider_mn_check_chans(struct cider_mn *mn)
{
	unsigned int i;

	WRITE_ONCE(mn->ibdev, mn->chans[0].dev);
	strscpy(mn->ibdev_name, mn->ibdev->name, sizeof(mn->ibdev_name));
	mn->base = mn->chans[0].hello.addr;
	mn->rkey = mn->chans[0].hello.rkey;
	mn->size = mn->chans[0].hello.size;
	for (i = 1; i < mn->nr_chans; i++)
		if (mn->chans[i].dev != mn->ibdev ||
		    mn->chans[i].hello.addr != mn->base ||
		    mn->chans[i].hello.rkey != mn->rkey ||
		    mn->chans[i].hello.size != mn->size)
			return -EPROTO;
	return 0;
}

/* Connect every channel in parallel, within one deadline. */
static int cider_mn_connect_chans(struct cider_mn *mn, unsigned long timeout_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	unsigned int i;
	int ret;

	ret = cider_mn_start_connect(mn, timeout_ms);
	for (i = 0; i < mn->nr_chans && !ret; i++) {
		struct cider_channel *ch = &mn->chans[i];
		long left = max_t(long, (long)(deadline - jiffies), 1);

		if (!wait_for_completion_timeout(&ch->cm_done, left))
			ret = -ETIMEDOUT;
		else
			ret = READ_ONCE(ch->cm_status);
	}
	return ret;
}

static int cider_mn_connect(struct cider_mn *mn, unsigned long timeout_ms)
{
	return cider_mn_connect_chans(mn, timeout_ms) ?: cider_mn_check_chans(mn);
}

/*
 * Atomics first and alone: a device that refuses them at post time (as
 * upstream mlx5 does for kernel consumers) then refuses the batch's first
 * work request and nothing else is on the wire.  FAA 0 and CAS
 * magic->magic on the superblock's magic change nothing, and the magic is
 * not a palindrome, so a device that returns atomic results byte-swapped
 * is caught too.
 */
static int cider_mn_probe_atomics(struct cider_mn *mn)
{
	u64 magic_off = offsetof(struct cider_mn_sb, magic), faa, cas;
	struct cider_batch *b;
	int ret;

	b = cider_batch_alloc(2, 16, GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	cider_batch_faa(b, 0, magic_off, 0, 0);
	cider_batch_cas(b, 1, magic_off, CIDER_MN_MAGIC, CIDER_MN_MAGIC, 8);
	ret = cider_mn_run(mn, &mn->chans[0], b);
	if (ret == -EINTR)
		goto out;
	if ((ret == -EOPNOTSUPP || ret == -EINVAL) && mn->atomics == CIDER_MN_ATOMICS_KERNEL) {
		pr_err("mn%u: %s refuses atomic operations posted from the kernel (%pe); CIDER needs 8-byte CAS and FAA\n",
		       mn->id, mn->ibdev_name, ERR_PTR(ret));
		mn->atomics_refused = true;
		ret = -EOPNOTSUPP;
		goto out;
	}
	if (ret) {
		/* Lost meanwhile: the attach says so (cider_mn_attach_lost). */
		if (READ_ONCE(mn->state) == CIDER_MN_STATE_LIVE)
			pr_err("mn%u: atomic probe of %pISpc failed: %pe\n", mn->id,
			       &mn->addr, ERR_PTR(ret));
		goto out;
	}
	faa = cider_batch_u64(b, 0);
	cas = cider_batch_u64(b, 1);
	if (faa == swab64(CIDER_MN_MAGIC) || cas == swab64(CIDER_MN_MAGIC)) {
		pr_err("mn%u: %s returns atomic results byte-swapped; CIDER needs 8-byte CAS and FAA\n",
		       mn->id, mn->ibdev_name);
		ret = -EOPNOTSUPP;
	} else if (faa != CIDER_MN_MAGIC || cas != CIDER_MN_MAGIC) {
		pr_err("mn%u: %pISpc is not a CIDER memory node (atomics read %#llx, %#llx)\n",
		       mn->id, &mn->addr, faa, cas);
		ret = -EPROTO;
	}
out:
	cider_batch_put(b);
	return ret;
}

/* READ the node's superblock into @sb: 0 or -errno. */
static int cider_mn_read_sb(struct cider_mn *mn, struct cider_mn_sb *sb)
{
	struct cider_batch *b;
	int ret;

	b = cider_batch_alloc(1, sizeof(*sb), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	cider_batch_read(b, 0, 0, sizeof(*sb), 0);
	b->probe = true;	/* a reconnect's check of the store */
	ret = cider_mn_run(mn, &mn->chans[0], b);
	if (!ret)
		memcpy(sb, b->buf, sizeof(*sb));
	cider_batch_put(b);
	return ret;
}

/* The superblock must say what the connection's hello said. */
static int cider_mn_probe_sb(struct cider_mn *mn)
{
	struct cider_mn_sb *sb = &mn->sb;
	const char *why;
	int ret;

	ret = cider_mn_read_sb(mn, sb);
	if (!ret) {
		why = cider_store_check(sb, mn->size);
		if (why && sb->magic == CIDER_MN_MAGIC && sb->region_size != mn->size) {
			pr_err("mn%u: %pISpc: superblock (region %llu bytes) does not match its hello (%llu bytes)\n",
			       mn->id, &mn->addr, sb->region_size, mn->size);
			ret = -EPROTO;
		} else if (why) {
			pr_err("mn%u: %pISpc: not a store this module can use: %s\n",
			       mn->id, &mn->addr, why);
			ret = -EPROTO;
		}
	} else if (ret != -EINTR && READ_ONCE(mn->state) == CIDER_MN_STATE_LIVE) {
		pr_err("mn%u: superblock READ from %pISpc failed: %pe\n", mn->id, &mn->addr,
		       ERR_PTR(ret));
	}
	return ret;
}

/* The device must do what CIDER needs, and the region be a CIDER one. */
static int cider_mn_probe(struct cider_mn *mn)
{
	int ret;

	mn->agent.region_size = mn->size;
	if (mn->atomics == CIDER_MN_ATOMICS_KERNEL &&
	    mn->ibdev->attrs.atomic_cap == IB_ATOMIC_NONE) {
		pr_err("mn%u: %s reports no atomic operations; CIDER needs 8-byte CAS and FAA\n",
		       mn->id, mn->ibdev_name);
		return -EOPNOTSUPP;
	}
	ret = cider_mn_probe_atomics(mn);
	ret = ret ?: cider_mn_probe_sb(mn);
	ret = ret ?: cider_member_claim(mn);
	if (!ret && cider_mn_client)
		ret = cider_mn_client->add(mn);
	return ret;
}

/*
 * An attach step failed with @ret.  If that is because the node was lost
 * meanwhile (a channel's error, e.g. DISCONNECTED or ADDR_CHANGE right
 * after it connected), fail with the loss's reason and one line saying
 * so; a removed device (STOPPED) or a step's own failure stays as is.
 */
static int cider_mn_attach_lost(struct cider_mn *mn, int ret)
{
	if (READ_ONCE(mn->state) != CIDER_MN_STATE_DEAD)
		return ret;
	ret = READ_ONCE(mn->dead_reason) ?: ret;
	pr_err("mn%u: %pISpc: lost while attaching: %pe\n", mn->id, &mn->addr,
	       ERR_PTR(ret));
	return ret;
}

/* List @mn unless it was lost or stopped while attaching. */
static int cider_mn_list(struct cider_mn *mn)
{
	unsigned int i;
	int ret = 0;

	mutex_lock(&cider_mns_lock);
	if (READ_ONCE(mn->state) != CIDER_MN_STATE_LIVE) {
		ret = READ_ONCE(mn->dead_reason) ?: -ENOTCONN;
	} else {
		WRITE_ONCE(mn->listed, true);
		for (i = 0; i < mn->nr_chans; i++)
			cider_channel_set_verbose(&mn->chans[i], true);
		cider_debugfs_add_mn(mn);
	}
	mutex_unlock(&cider_mns_lock);
	return ret;
}

/* Why a (re)connect failed, said once, in words an operator can act on. */
static void cider_mn_say_refused(struct cider_mn *mn, int ret)
{
	if (ret == -EACCES)
		pr_err("mn%u: %pISpc refused this compute node: not on its allow list\n",
		       mn->id, &mn->addr);
	else if (ret == -ESTALE)
		pr_err("mn%u: %pISpc is not the store this node attached (the memory node restarted?): given up\n",
		       mn->id, &mn->addr);
	else if (ret == -EXDEV)
		pr_err("mn%u: %pISpc is now reached through another RDMA device: given up\n",
		       mn->id, &mn->addr);
	else if (ret == -EKEYREJECTED)
		pr_err("mn%u: %pISpc refused this compute node's key (none given, or another)\n",
		       mn->id, &mn->addr);
	else if (ret == -EKEYEXPIRED)
		pr_err("mn%u: %pISpc refused the key's proof as out of its window: are the clocks apart?\n",
		       mn->id, &mn->addr);
	else if (ret == -ENOKEY)
		pr_err("mn%u: %pISpc did not prove it holds the key (it has none, or another)\n",
		       mn->id, &mn->addr);
}

/* Connect and probe; the node is in the array, not listed. */
static int cider_mn_bring_up(struct cider_mn *mn, unsigned long timeout)
{
	int ret;

	ret = cider_mn_connect(mn, timeout);
	if (!ret && !cider_mn_set_state(mn, CIDER_MN_STATE_LIVE, 0))
		ret = -ENOTCONN;
	if (ret == -EACCES || ret == -EKEYREJECTED || ret == -EKEYEXPIRED || ret == -ENOKEY)
		cider_mn_say_refused(mn, ret);
	if (ret)
		return cider_mn_attach_lost(mn, ret);
	/* The watchdog bounds the probe like any other operation. */
	schedule_delayed_work(&mn->watchdog, HZ / 4);
	ret = cider_mn_probe(mn);
	/* The probe's verdict on the device or the region stands. */
	if (ret == -EOPNOTSUPP || ret == -EPROTO || ret == -EINTR || ret == -EADDRINUSE)
		return ret;
	ret = ret ?: cider_mn_list(mn);
	return ret ? cider_mn_attach_lost(mn, ret) : 0;
}

/*
 * Free every channel's connection and, while the node reconnects, make
 * it ready to connect again; returns whether it still reconnects.  A
 * node that went DEAD meanwhile loses its connections now too (a device
 * going away waits for its CM ids, which a detach might destroy only much
 * later); one torn down (STOPPED) is the teardown's.
 */
static bool cider_mn_drop_links(struct cider_mn *mn)
{
	unsigned int i;
	bool mine;

	mutex_lock(&mn->res_lock);
	mine = cider_mn_reconnecting(mn);
	for (i = 0; READ_ONCE(mn->state) != CIDER_MN_STATE_STOPPED && i < mn->nr_chans; i++) {
		cider_channel_destroy(&mn->chans[i]);
		if (mine)
			cider_channel_reset(&mn->chans[i]);
	}
	mutex_unlock(&mn->res_lock);
	return mine;
}

/* Not reconnected within loss_timeout_ms: DEAD, for the reason it was lost. */
static void cider_mn_give_up(struct cider_mn *mn)
{
	if (cider_mn_set_state(mn, CIDER_MN_STATE_DEAD, READ_ONCE(mn->lost_reason)))
		schedule_work(&mn->kill_work);
}

/* Try again in about reconnect_delay_ms: +-25 %, so that CNs cut off together spread out. */
static void cider_mn_reconnect_later(struct cider_mn *mn)
{
	unsigned long delay = msecs_to_jiffies(READ_ONCE(cider_reconnect_delay_ms));

	delay = delay * 3 / 4 + get_random_u32() % (delay / 2 + 1);
	queue_delayed_work(system_long_wq, &mn->reconnect_work, delay);
}

/*
 * The node was lost and reconnects (cider_mn_lost()), as nvme-rdma's
 * error recovery: every channel stops and drains, so that whatever was
 * posted finishes (not executed, or outcome unknown), the store ends the
 * operations still waiting, and the connections are freed.  Then connect
 * again, a while later.
 */
static void cider_mn_recover_work(struct work_struct *work)
{
	struct cider_mn *mn = container_of(work, struct cider_mn, recover_work);
	int reason = READ_ONCE(mn->lost_reason);
	unsigned int i;

	/* Every submitter that saw LIVE has queued its batch by now. */
	synchronize_rcu();
	cancel_delayed_work_sync(&mn->watchdog);
	mutex_lock(&mn->res_lock);
	if (!cider_mn_reconnecting(mn)) {
		mutex_unlock(&mn->res_lock);
		return;
	}
	for (i = 0; i < mn->nr_chans; i++)
		cider_channel_kill(&mn->chans[i], reason);
	mutex_unlock(&mn->res_lock);
	cider_agent_drain(&mn->agent);
	mutex_lock(&mn->user_lock);
	if (cider_mn_client)
		cider_mn_client->quiesce(mn, reason);
	mutex_unlock(&mn->user_lock);
	if (cider_mn_drop_links(mn))
		cider_mn_reconnect_later(mn);
}

/*
 * Every channel connected again through the same device (the store's
 * buffers are mapped on it) to one region of the same size.  The same
 * region: 0.  A region that moved belongs to a restarted memory node:
 * without a store id its store is another one, empty (-ESTALE: what this
 * CN knew of the old one is void); with one (CIDER_SB_F_STORE_ID, a
 * daemon with --backing) it may be the same store, mapped anew: 1, the
 * node now addressed there, and its superblock decides once the node is
 * LIVE again (cider_mn_same_store()).
 */
static int cider_mn_same_node(struct cider_mn *mn)
{
	const struct cider_mn_hello *h = &mn->chans[0].hello;
	unsigned int i;

	for (i = 0; i < mn->nr_chans; i++) {
		const struct cider_channel *ch = &mn->chans[i];

		if (ch->dev != mn->ibdev)
			return -EXDEV;
		if (ch->hello.addr != h->addr || ch->hello.rkey != h->rkey ||
		    ch->hello.size != mn->size)
			return -ESTALE;
	}
	if (h->addr == mn->base && h->rkey == mn->rkey)
		return 0;
	if (!(mn->sb.flags & CIDER_SB_F_STORE_ID))
		return -ESTALE;
	/*
	 * Not LIVE: no submitter maps a batch with them now.  Until its
	 * superblock is checked, a later attempt checks it too (moved).
	 */
	mn->base = h->addr;
	mn->rkey = h->rkey;
	mn->moved = true;
	return 0;
}

/*
 * The region moved: does it hold the store this node attached (its id,
 * and a format its parameters give)?  0, -ESTALE, or the READ's -errno.
 */
static int cider_mn_same_store(struct cider_mn *mn)
{
	struct cider_mn_sb *sb = kmalloc(sizeof(*sb), GFP_KERNEL);
	int ret;

	if (!sb)
		return -ENOMEM;
	ret = cider_mn_read_sb(mn, sb);
	if (!ret && (cider_store_check(sb, mn->size) || sb->store_id != mn->sb.store_id))
		ret = -ESTALE;
	if (!ret)
		mn->moved = false;
	if (!ret)
		pr_info("mn%u: %pISpc serves the same store again (store id %016llx, start %llu)\n",
			mn->id, &mn->addr, sb->store_id, sb->serves);
	kfree(sb);
	return ret;
}

/*
 * A channel that failed after its connect reported success (a disconnect
 * right after ESTABLISHED) was absorbed while the node reconnected: LIVE
 * now, the node is lost again for it.  Returns whether all are up.
 */
static bool cider_mn_chans_up(struct cider_mn *mn)
{
	unsigned int i;

	for (i = 0; i < mn->nr_chans; i++) {
		if (!cider_channel_ready(&mn->chans[i])) {
			cider_mn_lost(mn, READ_ONCE(mn->chans[i].reason) ?: -ENOTCONN);
			return false;
		}
	}
	return true;
}

/*
 * The node checked (its store, its member claim) since loss @gen, and
 * nothing lost it again: it is verified, and the store goes on.  Under
 * user_lock, so that a quiesce of a later loss always comes after.
 */
static bool cider_mn_resume(struct cider_mn *mn, u32 gen)
{
	unsigned long flags;
	bool ok;

	mutex_lock(&mn->user_lock);
	spin_lock_irqsave(&mn->state_lock, flags);
	ok = mn->state == CIDER_MN_STATE_LIVE && mn->losses == gen;
	if (ok)
		WRITE_ONCE(mn->verified, true);
	spin_unlock_irqrestore(&mn->state_lock, flags);
	if (ok && cider_mn_client)
		cider_mn_client->resume(mn);
	mutex_unlock(&mn->user_lock);
	return ok;
}

/*
 * Connect, check, go LIVE, check the store and the membership with probe
 * batches (nothing else is posted until then: cider_mn_submit()), and
 * give the store back.
 */
static int cider_mn_reconnect(struct cider_mn *mn)
{
	u32 gen = READ_ONCE(mn->losses);
	int ret;

	ret = cider_mn_connect_chans(mn, CIDER_ATTACH_TIMEOUT_MS);
	ret = ret ?: cider_mn_same_node(mn);
	if (ret)
		return ret;
	cider_mn_agent_renew(mn);
	if (!cider_mn_set_state(mn, CIDER_MN_STATE_LIVE, 0))
		return -ENOTCONN;	/* given up or torn down meanwhile */
	/* The watchdog bounds the probes; heartbeats wait for the check. */
	schedule_delayed_work(&mn->watchdog, HZ / 4);
	if (!cider_mn_chans_up(mn))
		return 0;
	ret = mn->moved ? cider_mn_same_store(mn) : 0;
	ret = ret ?: cider_member_rejoin(mn);
	if (ret) {
		/* Lost again (then reconnecting again), or refused for good. */
		WRITE_ONCE(mn->last_reason, ret);
		cider_mn_say_refused(mn, ret);
		cider_mn_lost(mn, ret);
		return 0;
	}
	if (!cider_mn_resume(mn, gen))
		return 0;	/* lost again meanwhile: its recovery goes on */
	WRITE_ONCE(mn->reconnects, mn->reconnects + 1);
	pr_info("mn%u: %pISpc reconnected after %u ms (attempt %u)\n", mn->id, &mn->addr,
		jiffies_to_msecs(jiffies - mn->lost_at), mn->reconnect_attempts);
	return 0;
}

static void cider_mn_reconnect_work(struct work_struct *work)
{
	struct cider_mn *mn = container_of(to_delayed_work(work), struct cider_mn,
					   reconnect_work);
	unsigned long tmo = msecs_to_jiffies(READ_ONCE(cider_loss_timeout_ms));
	int ret;

	if (!cider_mn_reconnecting(mn))
		return;
	WRITE_ONCE(mn->reconnect_attempts, mn->reconnect_attempts + 1);
	ret = cider_mn_reconnect(mn);
	if (!ret)
		return;
	WRITE_ONCE(mn->last_reason, ret);
	if (!cider_mn_drop_links(mn))
		return;
	if (!cider_mn_curable(ret)) {
		cider_mn_say_refused(mn, ret);
		cider_mn_lost(mn, ret);
	} else if (!tmo || time_after(jiffies, mn->lost_at + tmo)) {
		pr_err("mn%u: %pISpc not reconnected within %u ms (%u attempts, the last: %pe): given up\n",
		       mn->id, &mn->addr, READ_ONCE(cider_loss_timeout_ms),
		       mn->reconnect_attempts, ERR_PTR(ret));
		cider_mn_give_up(mn);
	} else {
		cider_mn_reconnect_later(mn);
	}
}

/*
 * Attach the node @at names (validated by the caller), proving @key, the
 * store's (or NULL), on every connect: 0 with its id, channels and
 * region size in @at, listed; or -errno, nothing left.  The node owns
 * @key from here on, on failure too.
 */
static int cider_mn_attach_as(struct cider_attach *at, struct crypto_shash *key,
			      bool *refused)
{
	unsigned long timeout = at->timeout_ms ?: CIDER_ATTACH_TIMEOUT_MS;
	struct cider_mn *mn;
	int ret;

	mn = cider_mn_alloc(at, key);
	if (!mn) {
		cider_key_free(key);
		return -ENOMEM;
	}
	/*
	 * In the array from now on, so that device removal finds it, but
	 * not listed: lookups, MN_INFO and detach see nothing yet.
	 */
	ret = xa_alloc(&cider_mns, &mn->id, mn, xa_limit_31b, GFP_KERNEL);
	if (ret) {
		cider_key_free(key);
		kfree(mn->chan_of_cpu);
		kfree(mn);
		return ret;
	}
	cider_mn_init_chans(mn);
	ret = cider_mn_bring_up(mn, timeout);
	if (ret) {
		*refused = mn->atomics_refused;
		cider_mn_teardown(mn, ret);
		xa_erase(&cider_mns, mn->id);
		cider_mn_put(mn);
		return ret;
	}
	pr_info("mn%u: attached %pISpc via %s as cn %u: %u channels, region %llu bytes%s\n",
		mn->id, &mn->addr, mn->ibdev_name, mn->cn_id, mn->nr_chans, mn->size,
		mn->atomics == CIDER_MN_ATOMICS_AGENT ? ", atomics through the agent" : "");
	at->mn_id = mn->id;
	at->nr_channels = mn->nr_chans;
	at->region_size = mn->size;
	return 0;
}

/*
 * Attach as @at asks; without a choice of path for the atomics, a device
 * that refuses the kernel's is tried again through the atomics agent,
 * when one is registered (a store with a key cannot use it yet).
 */
int cider_mn_attach(struct cider_attach *at, struct crypto_shash *key)
{
	bool refused = false, keyed = key;
	int ret;

	ret = cider_mn_attach_as(at, key, &refused);
	if (ret != -EOPNOTSUPP || !refused || keyed || at->flags || !cider_agent_registered())
		return ret;
	pr_info("the device refuses the kernel's atomics: attaching through the atomics agent\n");
	at->flags |= CIDER_ATTACH_ATOMICS_AGENT;
	ret = cider_mn_attach_as(at, NULL, &refused);
	at->flags &= ~CIDER_ATTACH_ATOMICS_AGENT;
	return ret;
}

/*
 * @mn leaves the array, its debugfs files first: once its id is free,
 * the next attach may take it and create files of the same names.
 * Under cider_mns_lock, as the files' creation (no reader takes it).
 */
static void cider_mn_unlist(struct cider_mn *mn)
{
	lockdep_assert_held(&cider_mns_lock);
	cider_debugfs_remove_mn(mn);
	xa_erase(&cider_mns, mn->id);
}

/* The caller has unlisted @mn: only it can get here. */
static void cider_mn_remove(struct cider_mn *mn)
{
	cider_mn_teardown(mn, -ENOTCONN);
	pr_info("mn%u: detached\n", mn->id);
	cider_mn_put(mn);
}

/* Detach listed node @id: 0, or -ENOENT. */
int cider_mn_detach(u32 id)
{
	struct cider_mn *mn;

	mutex_lock(&cider_mns_lock);
	mn = xa_load(&cider_mns, id);
	if (mn && mn->listed)
		cider_mn_unlist(mn);
	else
		mn = NULL;
	mutex_unlock(&cider_mns_lock);
	if (!mn)
		return -ENOENT;
	cider_mn_remove(mn);
	return 0;
}

/*
 * @describe the listed node with the smallest id at least @id, under the
 * list lock, so that no detach is half-way through it: 0, or -ENOENT.
 */
int cider_mn_describe(unsigned long id, void (*describe)(const struct cider_mn *mn, void *arg),
		      void *arg)
{
	struct cider_mn *mn;
	int ret = -ENOENT;

	mutex_lock(&cider_mns_lock);
	xa_for_each_start(&cider_mns, id, mn, id) {
		if (mn->listed) {
			describe(mn, arg);
			ret = 0;
			break;
		}
	}
	mutex_unlock(&cider_mns_lock);
	return ret;
}

/* Does @mn, attached or still attaching, use @ibdev? */
static bool cider_mn_uses(const struct cider_mn *mn, const struct ib_device *ibdev)
{
	unsigned int i;

	if (READ_ONCE(mn->ibdev) == ibdev)
		return true;
	for (i = 0; i < mn->nr_chans; i++)
		if (READ_ONCE(mn->chans[i].dev) == ibdev)
			return true;
	return false;
}

/*
 * ib_client .remove: every node reached through @ibdev, attached or still
 * attaching, is lost now, and its channels are gone before this returns
 * (rdma_cm's own .remove, which runs next, waits for our CM ids).  One
 * node at a time, each pinned by a reference, with the list lock held
 * only to find it.
 */
void cider_mn_device_removed(struct ib_device *ibdev)
{
	unsigned long start = 0, id;
	struct cider_mn *mn;

	for (;;) {
		mutex_lock(&cider_mns_lock);
		xa_for_each_start(&cider_mns, id, mn, start)
			if (cider_mn_uses(mn, ibdev) && kref_get_unless_zero(&mn->ref))
				break;
		mutex_unlock(&cider_mns_lock);
		if (!mn)
			return;
		cider_mn_lost(mn, -ENODEV);
		cider_mn_teardown(mn, -ENODEV);
		cider_mn_put(mn);
		start = id + 1;
	}
}

void cider_mn_exit(void)
{
	unsigned long id = 0;
	struct cider_mn *mn;

	/* An open /dev/cider pins the module: no attach is under way. */
	for (;;) {
		mutex_lock(&cider_mns_lock);
		mn = xa_find(&cider_mns, &id, ULONG_MAX, XA_PRESENT);
		if (mn)
			cider_mn_unlist(mn);
		mutex_unlock(&cider_mns_lock);
		if (!mn)
			break;
		cider_mn_remove(mn);
	}
	rcu_barrier();	/* the kfree_rcu()s of released nodes */
}
