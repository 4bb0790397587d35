// SPDX-License-Identifier: GPL-2.0
/*
 * Messages between compute nodes of one store (peer.h).
 *
 * Every message crosses the wire format, whatever its way: encoded by
 * the sender, validated and decoded by the receiver (magic, version,
 * length, type, result, addressee's id and incarnation), so that a
 * malformed, misaddressed or stale message is counted and dropped, never
 * trusted.  A store of this kernel is found in the registry of stores
 * (the local shortcut: two attaches of one store in one kernel are two
 * compute nodes, and talk through the same code).  A peer that is not
 * reachable costs nothing but the message: the lock's lease recovers
 * what the message would have done (Documentation/kv.rst).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/socket.h>

#include "mn.h"
#include "peer.h"
#include "peerlink.h"

/*
 * Two attaches of one store in this kernel talk directly; with this off
 * they use links over RDMA as compute nodes in different kernels do (the
 * tests exercise the links in one guest so).
 */
static bool cider_peer_local = true;
module_param_named(peer_local, cider_peer_local, bool, 0644);
MODULE_PARM_DESC(peer_local, "Messages between attaches of one store in this kernel skip the network (default on)");

static_assert(sizeof(struct cider_peer_wire) == 72);	/* selftests/cider/peer.c mirrors it */

/* Every registered store of this kernel; readers under RCU. */
static LIST_HEAD(cider_peer_sinks);
static DEFINE_MUTEX(cider_peer_sinks_lock);

void cider_peer_register(struct cider_peer_sink *sink)
{
	cider_peerlink_sink_init(sink);
	mutex_lock(&cider_peer_sinks_lock);
	WRITE_ONCE(sink->live, true);
	list_add_tail_rcu(&sink->node, &cider_peer_sinks);
	mutex_unlock(&cider_peer_sinks_lock);
}

void cider_peer_unregister(struct cider_peer_sink *sink)
{
	mutex_lock(&cider_peer_sinks_lock);
	if (sink->live)
		list_del_rcu(&sink->node);
	WRITE_ONCE(sink->live, false);
	mutex_unlock(&cider_peer_sinks_lock);
	/* Every sender that found it has left ->deliver. */
	synchronize_rcu();
	cider_peerlink_close(sink);
}

/*
 * The store @mn serves, as a peer hello names it: its id, or for a store
 * formatted without one its region's base and rkey.
 */
static void cider_peer_store_of(const struct cider_mn *mn, u64 *store, u32 *rkey)
{
	if (mn->sb.flags & CIDER_SB_F_STORE_ID) {
		*store = mn->sb.store_id;
		*rkey = 0;
	} else {
		*store = READ_ONCE(mn->base);
		*rkey = READ_ONCE(mn->rkey);
	}
}

/* Are @a and @b attaches of the same memory node's store? */
static bool cider_peer_same_store(const struct cider_mn *a, const struct cider_mn *b)
{
	u64 sa, sb;
	u32 ra, rb;

	cider_peer_store_of(a, &sa, &ra);
	cider_peer_store_of(b, &sb, &rb);
	return sa == sb && ra == rb && !memcmp(&a->addr, &b->addr, sizeof(a->addr));
}

/* The store of compute node @cn_id that shares @from's; under RCU. */
static struct cider_peer_sink *cider_peer_find(const struct cider_peer_sink *from, u32 cn_id)
{
	struct cider_peer_sink *s;

	list_for_each_entry_rcu(s, &cider_peer_sinks, node)
		if (s->cn_id == cn_id && cider_peer_same_store(s->mn, from->mn))
			return s;
	return NULL;
}

void cider_peer_encode(const struct cider_peer_sink *from, u64 to_inc, u32 to_cn,
		       const struct cider_msg *m, struct cider_peer_wire *w)
{
	memset(w, 0, sizeof(*w));
	w->magic = cpu_to_le16(CIDER_PEER_MAGIC);
	w->version = CIDER_PEER_VERSION;
	w->type = m->type;
	w->len = cpu_to_le16(sizeof(*w));
	w->result = m->result;
	w->to_cn = cpu_to_le32(to_cn);
	w->from_cn = cpu_to_le32(m->from_cn);
	w->to_inc = cpu_to_le64(to_inc);
	w->from_inc = cpu_to_le64(from->incarnation);
	w->to_slot = cpu_to_le32(m->to_slot);
	w->ticket = cpu_to_le32(m->ticket);
	w->laddr = cpu_to_le64(m->laddr);
	w->from_slot = cpu_to_le32(m->from_slot);
	w->from_ticket = cpu_to_le32(m->from_ticket);
	w->count = cpu_to_le32(m->count);
	w->writer = cpu_to_le32(m->writer);
	w->ptr = cpu_to_le64(m->ptr);
}

/*
 * @len bytes at @w for store @to: 0 with the message in @m and its shard
 * in @shard, -EBADMSG malformed or not for @to, -ESTALE for an earlier
 * incarnation of @to.
 */
int cider_peer_decode(const struct cider_peer_sink *to, const struct cider_peer_wire *w,
		      size_t len, struct cider_msg *m, unsigned int *shard)
{
	u32 to_cn;

	if (len != sizeof(*w) || le16_to_cpu(w->magic) != CIDER_PEER_MAGIC ||
	    w->version != CIDER_PEER_VERSION || le16_to_cpu(w->len) != sizeof(*w) ||
	    w->type >= CIDER_MSG_NR || w->result >= CIDER_RES_NR || w->reserved)
		return -EBADMSG;
	to_cn = le32_to_cpu(w->to_cn);
	if (to_cn / CIDER_PEER_SHARDS != to->cn_id)
		return -EBADMSG;
	if (le64_to_cpu(w->to_inc) != to->incarnation)
		return -ESTALE;
	memset(m, 0, sizeof(*m));
	m->type = w->type;
	m->result = w->result;
	m->to_slot = le32_to_cpu(w->to_slot);
	m->ticket = le32_to_cpu(w->ticket);
	m->laddr = le64_to_cpu(w->laddr);
	m->from_cn = le32_to_cpu(w->from_cn);
	m->from_slot = le32_to_cpu(w->from_slot);
	m->from_ticket = le32_to_cpu(w->from_ticket);
	m->count = le32_to_cpu(w->count);
	m->writer = le32_to_cpu(w->writer);
	m->ptr = le64_to_cpu(w->ptr);
	*shard = to_cn % CIDER_PEER_SHARDS;
	return 0;
}

/* A message @to received: validate, decode, deliver; counted either way. */
void cider_peer_receive(struct cider_peer_sink *to, const struct cider_peer_wire *w,
			size_t len)
{
	unsigned int shard;
	struct cider_msg m;
	int ret;

	ret = cider_peer_decode(to, w, len, &m, &shard);
	if (!ret)
		ret = to->deliver(to, shard, &m);
	if (!ret)
		atomic64_inc(&to->stats.received);
	else if (ret == -ESTALE)
		atomic64_inc(&to->stats.stale);
	else if (ret == -ENOBUFS)
		atomic64_inc(&to->stats.full);
	else
		atomic64_inc(&to->stats.invalid);
}

void cider_peer_send(struct cider_peer_sink *from, u32 to_cn, const struct cider_msg *m)
{
	struct cider_peer_wire w;
	struct cider_peer_sink *to;

	if (m->type < CIDER_MSG_NR)
		atomic64_inc(&from->stats.sent[m->type]);
	rcu_read_lock();
	to = READ_ONCE(cider_peer_local) ? cider_peer_find(from, to_cn / CIDER_PEER_SHARDS) :
	     NULL;
	if (to) {
		cider_peer_encode(from, to->incarnation, to_cn, m, &w);
		atomic64_inc(&from->stats.local);
		cider_peer_receive(to, &w, sizeof(w));
	} else if (!READ_ONCE(from->live) ||
		   cider_peerlink_send(from, to_cn / CIDER_PEER_SHARDS, to_cn, m)) {
		atomic64_inc(&from->stats.unreachable);
	}	/* else the link counts it, remote when posted or unreachable when lost */
	rcu_read_unlock();
}

void cider_peer_inject(struct cider_peer_sink *to, const void *buf, size_t len)
{
	rcu_read_lock();
	if (READ_ONCE(to->live))
		cider_peer_receive(to, buf, len);
	rcu_read_unlock();
}

/* @mn's address, as a hello carries it. */
static void cider_peer_hello_mn(const struct cider_mn *mn, struct cider_peer_hello *h)
{
	if (mn->addr.ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&mn->addr;

		h->mn_port = sin->sin_port;
		memcpy(h->mn_addr, &sin->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&mn->addr;

		h->mn_port = sin6->sin6_port;
		memcpy(h->mn_addr, &sin6->sin6_addr, 16);
	}
	h->mn_family = cpu_to_le16(mn->addr.ss_family);
}

void cider_peer_hello_fill(const struct cider_peer_sink *from, u32 to_cn, u64 to_inc,
			   struct cider_peer_hello *h)
{
	u64 store;
	u32 rkey;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_le32(CIDER_PEER_HELLO_MAGIC);
	h->version = CIDER_PEER_VERSION;
	h->from_cn = from->cn_id;
	h->to_cn = to_cn;
	h->from_inc = cpu_to_le64(from->incarnation);
	h->to_inc = cpu_to_le64(to_inc);
	cider_peer_store_of(from->mn, &store, &rkey);
	h->store = cpu_to_le64(store);
	h->rkey = cpu_to_le32(rkey);
	cider_peer_hello_mn(from->mn, h);
}

struct cider_peer_sink *cider_peer_get_sink(const struct cider_peer_hello *hello)
{
	struct cider_peer_hello mine;
	struct cider_peer_sink *s, *found = NULL;
	u64 store;
	u32 rkey;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &cider_peer_sinks, node) {
		cider_peer_store_of(s->mn, &store, &rkey);
		if (s->cn_id != hello->to_cn || store != le64_to_cpu(hello->store) ||
		    rkey != le32_to_cpu(hello->rkey))
			continue;
		memset(&mine, 0, sizeof(mine));
		cider_peer_hello_mn(s->mn, &mine);
		if (mine.mn_port != hello->mn_port || mine.mn_family != hello->mn_family ||
		    memcmp(mine.mn_addr, hello->mn_addr, sizeof(mine.mn_addr)))
			continue;
		if (kref_get_unless_zero(&s->mn->ref))
			found = s;
		break;
	}
	rcu_read_unlock();
	return found;
}

void cider_peer_put_sink(struct cider_peer_sink *sink)
{
	cider_mn_put(sink->mn);
}
