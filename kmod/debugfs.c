// SPDX-License-Identifier: GPL-2.0
/*
 * Counters: /sys/kernel/debug/cider/mn<N>, one line per channel and a
 * total, as key=value pairs so that people and tools (ciderctl stats,
 * cider-bench) read the same thing.  wrs/doorbells is the batching factor;
 * done_* against KV operations gives MN operations per KV operation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "debugfs.h"
#include "fault.h"
#include "kvstore.h"
#include "mn.h"
#include "peer.h"
#include "stats.h"

static struct dentry *cider_debugfs_root;

static void cider_snap_show(struct seq_file *m, const char *what, int idx,
			    const struct cider_chan_snap *c)
{
	if (idx >= 0)
		seq_printf(m, "%s=%d ", what, idx);
	else
		seq_printf(m, "%s ", what);
	seq_printf(m, "batches=%llu doorbells=%llu wrs=%llu cqes=%llu read=%llu write=%llu cas=%llu faa=%llu errors=%llu post_errors=%llu backlogged=%llu canceled=%llu keepalives=%llu heartbeats=%llu inflight=%u",
		   c->s.batches, c->s.doorbells, c->s.wrs, c->s.cqes,
		   c->s.done[CIDER_RDMA_READ], c->s.done[CIDER_RDMA_WRITE],
		   c->s.done[CIDER_RDMA_CAS], c->s.done[CIDER_RDMA_FAA],
		   c->s.errors, c->s.post_errors, c->s.backlogged, c->s.canceled,
		   c->s.keepalives, c->s.heartbeats, c->inflight);
	if (idx >= 0)
		seq_printf(m, " credit_limit=%u credit_updates=%llu backoff_tmax_ns=%llu state=%s reason=%d",
			   c->limit, c->updates, c->tmax, cider_chan_state_name(c->state),
			   c->reason);
	seq_putc(m, '\n');
}

static int cider_mn_stats_show(struct seq_file *m, void *unused)
{
	struct cider_mn *mn = m->private;
	enum cider_mn_state state = READ_ONCE(mn->state);
	struct cider_chan_snap c, total = {};
	unsigned int i;

	seq_printf(m, "mn=%u state=%s reason=%d cn=%u incarnation=%llu beats=%lld claim_waited_ms=%llu dev=%s channels=%u region=%llu reconnects=%u reconnect_attempts=%u lost_reason=%d last_reason=%d\n",
		   mn->id, cider_mn_state_name(state),
		   state == CIDER_MN_STATE_LIVE ? 0 : READ_ONCE(mn->dead_reason),
		   mn->cn_id, cider_member_incarnation(&mn->member),
		   (long long)atomic64_read(&mn->member.beats), mn->member.waited_ms,
		   mn->ibdev_name, mn->nr_chans, mn->size, READ_ONCE(mn->reconnects),
		   READ_ONCE(mn->reconnect_attempts), READ_ONCE(mn->lost_reason),
		   READ_ONCE(mn->last_reason));
	for (i = 0; i < mn->nr_chans; i++) {
		cider_chan_snapshot(&mn->chans[i], &c);
		cider_snap_add(&total, &c);
		cider_snap_show(m, "chan", i, &c);
	}
	cider_snap_show(m, "total", -1, &total);
	cider_kvs_stats_show(m, mn);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(cider_mn_stats);

static int cider_mn_kv_show(struct seq_file *m, void *unused)
{
	cider_kvs_show(m, m->private);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(cider_mn_kv);

static int cider_kv_reqs_file_show(struct seq_file *m, void *unused)
{
	cider_kv_reqs_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(cider_kv_reqs_file);

/*
 * mnN-peer: each write is one message as another compute node would send
 * it (struct cider_peer_wire, or anything else), received by the node's
 * store: a test injects malformed, misaddressed and stale messages and
 * reads the counters that say they were dropped.
 */
static ssize_t cider_mn_peer_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	struct cider_mn *mn = file->private_data;
	u8 buf[2 * sizeof(struct cider_peer_wire)];
	int ret;

	if (!len || len > sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	ret = cider_kvs_peer_inject(mn, buf, len);
	return ret ?: len;
}

static const struct file_operations cider_mn_peer_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = cider_mn_peer_write,
	.llseek = noop_llseek,
};

void cider_debugfs_add_mn(struct cider_mn *mn)
{
	char name[16];

	snprintf(name, sizeof(name), "mn%u", mn->id);
	mn->debugfs = debugfs_create_file(name, 0400, cider_debugfs_root, mn,
					  &cider_mn_stats_fops);
	snprintf(name, sizeof(name), "mn%u-kv", mn->id);
	mn->debugfs_kv = debugfs_create_file(name, 0400, cider_debugfs_root, mn,
					     &cider_mn_kv_fops);
	snprintf(name, sizeof(name), "mn%u-peer", mn->id);
	mn->debugfs_peer = debugfs_create_file(name, 0200, cider_debugfs_root, mn,
					       &cider_mn_peer_fops);
}

/* Waits for readers: the node may be freed afterwards. */
void cider_debugfs_remove_mn(struct cider_mn *mn)
{
	debugfs_remove(mn->debugfs_peer);
	debugfs_remove(mn->debugfs_kv);
	debugfs_remove(mn->debugfs);
	mn->debugfs = NULL;
	mn->debugfs_kv = NULL;
	mn->debugfs_peer = NULL;
}

void cider_debugfs_init(void)
{
	cider_debugfs_root = debugfs_create_dir("cider", NULL);
	debugfs_create_file("requests", 0400, cider_debugfs_root, NULL, &cider_kv_reqs_file_fops);
	cider_fault_init(cider_debugfs_root);
}

void cider_debugfs_exit(void)
{
	debugfs_remove(cider_debugfs_root);
}
