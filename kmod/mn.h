/* SPDX-License-Identifier: GPL-2.0 */
/* Memory nodes: attach, detach, loss, and their channels. */
#ifndef _CIDER_MN_H
#define _CIDER_MN_H

#include <linux/cider.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "agent.h"
#include "member.h"
#include "transport.h"
#include "vocab.h"

/*
 * A node's life (vocab.h); changed only by cider_mn_set_state() under
 * state_lock.
 */
enum cider_mn_state { CIDER_MN_STATES(CIDER_MN_STATE_ENUM, CIDER_MN_STATE_ENUM) };

struct cider_mn {
	u32 id;
	u32 cn_id;
	struct sockaddr_storage addr;
	struct kref ref;
	struct rcu_head rcu;
	/*
	 * Any context (a QP event may come from a driver's interrupt
	 * handler), so taken with _irqsave everywhere.
	 */
	spinlock_t state_lock;
	enum cider_mn_state state;	/* READ_ONCE() without the lock */
	int dead_reason;		/* set on entering DEAD or STOPPED */
	/* Reconnecting (cider_mn_lost()): WRITE_ONCE() by its works, read anywhere. */
	int lost_reason;		/* why it was last lost */
	int last_reason;		/* that, or why its last attempt failed */
	unsigned long lost_at;		/* jiffies: it was last lost */
	u32 reconnects;			/* times it came back */
	u32 reconnect_attempts;		/* connects tried while it was lost */
	/*
	 * Its region and member claim are known to be this node's: false
	 * from a loss until a reconnect has checked them, and meanwhile only
	 * probe batches are posted (cider_mn_submit()).  Under state_lock.
	 */
	bool verified;
	bool moved;			/* its region moved: the store is to be checked */
	u32 losses;			/* entries into RECONNECTING, under state_lock */
	struct mutex user_lock;		/* the client's quiesce and resume, in order */
	struct ib_device *ibdev;	/* set once connected */
	char ibdev_name[IB_DEVICE_NAME_MAX];
	struct cider_mn_sb sb;		/* as read at attach (core/store.h) */
	struct cider_member member;	/* our entry in its membership table */
	void *user;			/* the node client's (cider_mn_set_user()) */
	u64 base;			/* remote address of offset 0 */
	u64 size;
	u32 rkey;
	/*
	 * The store's key (keyproof.h) or NULL: every connect proves it,
	 * until the teardown frees it.
	 */
	struct crypto_shash *key;
	/*
	 * Channel resources (CM ids and what hangs off them) are created
	 * and destroyed under res_lock.  Submitters take no lock: they
	 * check for LIVE under rcu_read_lock(), and the teardown leaves
	 * LIVE and waits for them (synchronize_rcu()) before destroying.
	 */
	struct mutex res_lock;
	bool listed;			/* visible to lookups; cider_mns_lock */
	struct work_struct kill_work;
	struct work_struct recover_work;	/* lost: stop, drain, end, free */
	struct delayed_work reconnect_work;	/* then connect again, and again */
	struct delayed_work watchdog;
	/*
	 * Where its atomics go (CIDER_MN_ATOMICS_*, set at attach): the
	 * agent's batches hold one (agent.h).
	 */
	u32 atomics;
	bool atomics_refused;		/* the device refused the kernel's */
	struct cider_agent_dest agent;
	struct dentry *debugfs;
	struct dentry *debugfs_kv;	/* mnN-kv: operations by state */
	struct dentry *debugfs_peer;	/* mnN-peer: inject a peer message */
	u16 *chan_of_cpu;		/* [nr_cpu_ids]: every possible CPU */
	unsigned int nr_chans;
	struct cider_channel chans[];
};

/*
 * Whether the node is listed (attached).  The data path logs only for
 * listed nodes: a failing attach says why in exactly one line of its own.
 */
static inline bool cider_mn_listed(const struct cider_mn *mn)
{
	return READ_ONCE(mn->listed);
}

/* Lost, and connecting again: its users wait for ->resume. */
static inline bool cider_mn_reconnecting(const struct cider_mn *mn)
{
	return READ_ONCE(mn->state) == CIDER_MN_STATE_RECONNECTING;
}

/* What CIDER_IOC_MN_INFO reports: CIDER_MN_LIVE, _RECONNECTING or _DEAD. */
static inline u32 cider_mn_uapi_state(const struct cider_mn *mn)
{
	switch (READ_ONCE(mn->state)) {
	case CIDER_MN_STATE_LIVE:
		return CIDER_MN_LIVE;
	case CIDER_MN_STATE_RECONNECTING:
		return CIDER_MN_RECONNECTING;
	default:
		return CIDER_MN_DEAD;
	}
}

/*
 * What uses a node (the KV store, kvstore.c), registered once at module
 * load as an ib_client is with ib_core: the node calls it at these points
 * of its life and knows nothing else of it.  Process context but for
 * ->release.
 */
struct cider_mn_client {
	/* Probed, not listed yet: set up (cider_mn_set_user()); 0 or -errno. */
	int (*add)(struct cider_mn *mn);
	/* Lost (the kill work, channels drained) or torn down: end every operation. */
	void (*kill)(struct cider_mn *mn, int reason);
	/*
	 * Lost and reconnecting, channels drained: end every operation, keep
	 * the rest; new ones wait for ->resume (or ->kill, if it gives up).
	 */
	void (*quiesce)(struct cider_mn *mn, int reason);
	/* Reconnected, and still the same node and member: carry on. */
	void (*resume)(struct cider_mn *mn);
	/*
	 * Teardown, before the node gives its membership back: answer
	 * nothing from memory any more (writers stop asking it then).
	 */
	void (*leave)(struct cider_mn *mn);
	/* Teardown, channels destroyed, before the device may go. */
	void (*stop)(struct cider_mn *mn);
	/* The node's last reference is gone: free what ->add made.  Any context. */
	void (*release)(struct cider_mn *mn);
};

void cider_mn_register_client(const struct cider_mn_client *client);

/* Publish what ->add built, whole: readers see NULL or all of it. */
static inline void cider_mn_set_user(struct cider_mn *mn, void *user)
{
	smp_store_release(&mn->user, user);	/* pairs with cider_mn_user() */
}

static inline void *cider_mn_user(struct cider_mn *mn)
{
	return smp_load_acquire(&mn->user);	/* pairs with cider_mn_set_user() */
}

const char *cider_mn_state_name(enum cider_mn_state s);
struct cider_mn *cider_mn_get(u32 id);
void cider_mn_put(struct cider_mn *mn);
bool cider_mn_lost(struct cider_mn *mn, int reason);
void cider_mn_agent_gone(void);
void cider_mn_post(struct cider_mn *mn, struct cider_channel *ch, struct cider_batch *b);
struct cider_channel *cider_mn_channel(struct cider_mn *mn);
void cider_mn_submit(struct cider_mn *mn, struct cider_channel *ch,
		     struct cider_batch *b);
int cider_mn_run(struct cider_mn *mn, struct cider_channel *ch, struct cider_batch *b);
void cider_mn_device_removed(struct ib_device *ibdev);
void cider_mn_exit(void);

/* The node operations behind the ioctls (mnctl.c parses those). */
int cider_mn_attach(struct cider_attach *at, struct crypto_shash *key);
int cider_mn_detach(u32 id);
int cider_mn_describe(unsigned long id, void (*describe)(const struct cider_mn *mn, void *arg),
		      void *arg);

long cider_ioctl_attach(void __user *uarg, unsigned int cmd);
long cider_ioctl_detach(void __user *uarg, unsigned int cmd);
long cider_ioctl_mn_info(void __user *uarg, unsigned int cmd);

#endif
