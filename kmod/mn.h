/* SPDX-License-Identifier: GPL-2.0 */
/* Memory nodes: attach, detach, loss, and their channels. */
#ifndef _CIDER_MN_H
#define _CIDER_MN_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/socket.h>
#include <linux/workqueue.h>

#include "channel.h"
#include "params.h"

struct cider_mn {
	u32 id;
	u32 cn_id;
	struct sockaddr_storage addr;
	struct kref ref;
	struct rcu_head rcu;
	atomic_t state;			/* 0 while attaching, CIDER_MN_LIVE, _DEAD */
	int dead_reason;
	struct ib_device *ibdev;	/* set once connected */
	char ibdev_name[IB_DEVICE_NAME_MAX];
	struct cider_mn_sb sb;		/* as read at attach (core/store.h) */
	struct cider_kvs *kvs;		/* its KV store (kvstore.h) */
	u64 base;			/* remote address of offset 0 */
	u64 size;
	u32 rkey;
	/*
	 * Read-held while a batch is built and submitted, write-held while
	 * channel resources are destroyed: nobody maps or posts on a
	 * channel being torn down.
	 */
	struct rw_semaphore res_sem;
	bool torn_down;
	bool listed;			/* visible to lookups; cider_mns_lock */
	struct work_struct kill_work;
	struct delayed_work watchdog;
	struct dentry *debugfs;
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

struct cider_mn *cider_mn_get(u32 id);
void cider_mn_put(struct cider_mn *mn);
void cider_mn_lost(struct cider_mn *mn, int reason);
struct cider_channel *cider_mn_channel(struct cider_mn *mn);
int cider_mn_submit(struct cider_mn *mn, struct cider_channel *ch,
		    struct cider_batch *b, bool nowait);
void cider_mn_device_removed(struct ib_device *ibdev);
void cider_mn_exit(void);

long cider_ioctl_attach(void __user *uarg);
long cider_ioctl_detach(void __user *uarg);
long cider_ioctl_mn_info(void __user *uarg);

/* debugfs.c */
void cider_debugfs_init(void);
void cider_debugfs_exit(void);
void cider_debugfs_add_mn(struct cider_mn *mn);
void cider_debugfs_remove_mn(struct cider_mn *mn);

#endif
