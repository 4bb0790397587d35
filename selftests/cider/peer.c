// SPDX-License-Identifier: GPL-2.0
/*
 * Messages between compute nodes (kmod/peer.c) against a real cider-memd
 * over rxe: two attaches of one store are two compute nodes.  Messages
 * written to a node's debugfs injector (mnN-peer) are received as if
 * another compute node had sent them: every malformed, misaddressed or
 * stale one is dropped and counted, a well-formed one for a queue node
 * that does not exist reaches the protocol core, which drops it, and the
 * kernel stays healthy (the runner checks its log).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "../../kmod/core/proto.h"
#include "flood.h"
#include "memd.h"
#include "sysfs.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 180

/* kmod/peer.h's struct cider_peer_wire, as the wire has it (little-endian). */
struct wire {
	uint16_t magic;
	uint8_t version;
	uint8_t type;
	uint16_t len;
	uint8_t result;
	uint8_t reserved;
	uint32_t to_cn, from_cn;
	uint64_t to_inc, from_inc;
	uint32_t to_slot, ticket;
	uint64_t laddr;
	uint32_t from_slot, from_ticket;
	uint32_t count, writer;
	uint64_t ptr;
} __attribute__((packed));

_Static_assert(sizeof(struct wire) == 72, "the peer wire format");

#define SHARDS 16	/* core CN ids per compute node */

static unsigned int test_port(void)
{
	return 11900 + getpid() % 500;
}

FIXTURE(peer) {
	int fd;
	bool skip;
	struct memd memd;
	struct cider_attach at;		/* cn 3 */
	struct cider_mn_info mi;
};

FIXTURE_VARIANT(peer) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(peer, mcs) { .mode = "mcs" };
FIXTURE_VARIANT_ADD(peer, cider) { .mode = "cider" };

#define PARAM "/sys/module/cider/parameters/"

FIXTURE_SETUP(peer)
{
	const char *const store[] = { "--index", "array", "--keys", "64", "--mode", variant->mode,
				      NULL };

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	self->skip = !getenv("CIDER_MN_ADDR");
	if (self->skip)
		return;
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store))
		TH_LOG("cider-memd did not start; log %s", self->memd.log);
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &self->at));
	ASSERT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &self->mi));
	ASSERT_NE(0, self->mi.cn_incarnation);
}

FIXTURE_TEARDOWN(peer)
{
	sysfs_write(PARAM "peer_local", "Y");
	if (!self->skip) {
		cider_detach(self->fd, self->at.mn_id);
		memd_stop(&self->memd, SIGTERM);
	}
	close(self->fd);
}

#define NEED_MN() do { if (self->skip) SKIP(return, "CIDER_MN_ADDR not set"); } while (0)

/* A well-formed HANDOVER from cn 4 to shard 0 of the fixture's CN. */
static struct wire good(FIXTURE_DATA(peer) *self)
{
	struct wire w = {
		.magic = 0x4350, .version = 1, .type = CIDER_MSG_HANDOVER, .len = sizeof(w),
		.to_cn = 3 * SHARDS, .from_cn = 4 * SHARDS, .to_inc = self->mi.cn_incarnation,
		.from_inc = 1, .to_slot = 5, .ticket = 77, .laddr = 4096,
	};
	return w;
}

static __u64 incarnation_of(int fd, unsigned int mn)
{
	struct cider_mn_info mi;

	return cider_mn_info(fd, mn, &mi) || mi.mn_id != mn ? 0 : mi.cn_incarnation;
}

static int inject(unsigned int mn, const void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/debug/cider/mn%u-peer", mn);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

TEST_F(peer, malformed_misaddressed_and_stale_messages_are_dropped_and_counted)
{
	unsigned int mn = self->at.mn_id, i;
	long long invalid, stale, received, dropped;
	struct wire w, bad[9];
	char junk[100];

	NEED_MN();
	invalid = kv_counter(mn, "invalid");
	stale = kv_counter(mn, "stale");
	received = kv_counter(mn, "received");
	dropped = kv_counter(mn, "msgs_dropped");
	ASSERT_LE(0, invalid);
	ASSERT_LE(0, stale);
	ASSERT_LE(0, received);
	ASSERT_LE(0, dropped);

	for (i = 0; i < 9; i++)
		bad[i] = good(self);
	bad[0].magic = 0x5043;			/* byte-swapped */
	bad[1].version = 2;
	bad[2].len = sizeof(w) + 8;
	bad[3].type = CIDER_MSG_NR;
	bad[4].result = CIDER_RES_NR;
	bad[5].reserved = 1;
	bad[6].to_cn = 9 * SHARDS;		/* another compute node's */
	bad[7].to_cn = 3 * SHARDS + SHARDS - 1;	/* a shard this store does not run */
	bad[8].to_cn = 3 * SHARDS | 0x80000000u;
	for (i = 0; i < 9; i++)
		ASSERT_EQ(0, inject(mn, &bad[i], sizeof(bad[i]))) TH_LOG("message %u", i);
	w = good(self);
	ASSERT_EQ(0, inject(mn, &w, sizeof(w) - 1));	/* short */
	memset(junk, 0xa5, sizeof(junk));
	ASSERT_EQ(0, inject(mn, junk, sizeof(junk)));	/* long, and garbage */
	EXPECT_EQ(invalid + 11, kv_counter(mn, "invalid"));

	w.to_inc = self->mi.cn_incarnation + 1;		/* a later incarnation's */
	ASSERT_EQ(0, inject(mn, &w, sizeof(w)));
	w.to_inc = self->mi.cn_incarnation - 1;		/* an earlier one's */
	ASSERT_EQ(0, inject(mn, &w, sizeof(w)));
	EXPECT_EQ(stale + 2, kv_counter(mn, "stale"));
	EXPECT_EQ(received, kv_counter(mn, "received"));

	/* Well-formed, for a queue node that does not exist: the core drops it. */
	w = good(self);
	ASSERT_EQ(0, inject(mn, &w, sizeof(w)));
	w.type = CIDER_MSG_RESULT;
	w.to_slot = 100000;			/* past every queue node */
	ASSERT_EQ(0, inject(mn, &w, sizeof(w)));
	EXPECT_EQ(received + 2, kv_counter(mn, "received"));
	/* The shard's inbox work runs them: bounded wait. */
	for (i = 0; i < 100 && kv_counter(mn, "msgs_dropped") < dropped + 2; i++)
		usleep(50 * 1000);
	EXPECT_EQ(dropped + 2, kv_counter(mn, "msgs_dropped"));

	/* And the store still works. */
	{
		uint64_t k = 1, v = 42, got = 0;
		size_t len = sizeof(got);

		ASSERT_EQ(0, cider_put(self->fd, mn, &k, sizeof(k), &v, sizeof(v)));
		ASSERT_EQ(0, cider_get(self->fd, mn, &k, sizeof(k), &got, &len));
		EXPECT_EQ(42, got);
	}
}

#define CNS 3

/*
 * With the shortcut off, attaches of one store in one kernel are compute
 * nodes that reach each other as if in different kernels: through the
 * membership table (address, listener port, incarnation) and RC links
 * over rxe, made on the first message.  Three of them flood one key:
 * every PUT succeeds, locks pass between them over the links, nothing
 * arrives malformed, misaddressed, stale or to a full inbox, and none is
 * lost: a message sent before its link is up waits for it (the store's
 * early list) instead of costing its waiter a lease.
 */
/*
 * CNS compute nodes on the store at @addr, @at[0] attached already and
 * the others attached here as cn @cn0 + i: they flood a hot key until
 * locks have passed between them over links, every message a link
 * carried arrives, and none is lost.  Detaches all but @at[0].
 */
static void reach_each_other(struct __test_metadata *_metadata, int fd, const char *addr,
			     struct cider_attach *at, unsigned int cn0, const char *what)
{
	struct flood f[CNS];
	pthread_t t[CNS];
	long long p[P_NR];
	unsigned int i, round;

	ASSERT_EQ(0, sysfs_write(PARAM "peer_local", "N"));
	for (i = 1; i < CNS; i++)
		ASSERT_EQ(0, cider_attach(fd, addr, cn0 + i, 0, &at[i]));
	for (round = 0; round < 10; round++) {
		for (i = 0; i < CNS; i++) {
			f[i] = (struct flood){ .fd = fd, .store = at[i].mn_id, .ops = 200 };
			ASSERT_EQ(0, pthread_create(&t[i], NULL, flood_run, &f[i]));
		}
		for (i = 0; i < CNS; i++) {
			pthread_join(t[i], NULL);
			EXPECT_EQ(0, f[i].bad) TH_LOG("cn %u: %d", cn0 + i, f[i].bad);
			EXPECT_EQ(0U, f[i].ecomm + f[i].timedout);
		}
		ASSERT_EQ(0, peer_sum(at, CNS, p));
		if (p[P_REMOTE] > 0 && p[P_HANDOVER] > 0)
			break;
	}
	TH_LOG("%s: %u rounds; links %lld made, %lld accepted, %lld failed; %lld sent: %lld over links, %lld unreachable; %lld received; %lld handovers; %lld locks reset",
	       what, round + 1, p[P_LINKS_MADE], p[P_LINKS_ACCEPTED],
	       p[P_LINK_FAILURES], peer_sent(p), p[P_REMOTE], p[P_UNREACHABLE], p[P_RECEIVED],
	       p[P_HANDOVER], p[P_RESETS]);
	EXPECT_EQ(0, p[P_LOCAL]);
	EXPECT_LT(0, p[P_REMOTE]);
	EXPECT_LT(0, p[P_HANDOVER]);
	EXPECT_LT(0, p[P_LINKS_MADE]);
	EXPECT_EQ(p[P_LINKS_MADE], p[P_LINKS_ACCEPTED]);
	EXPECT_EQ(0, p[P_LINK_FAILURES]);
	EXPECT_EQ(peer_sent(p), p[P_REMOTE] + p[P_UNREACHABLE]);
	/* Every message a link carried arrives (a late handover may still fly). */
	for (i = 0; i < 40 && p[P_RECEIVED] < p[P_REMOTE]; i++) {
		usleep(50 * 1000);
		ASSERT_EQ(0, peer_sum(at, CNS, p));
	}
	EXPECT_EQ(p[P_REMOTE], p[P_RECEIVED]);
	EXPECT_EQ(0, p[P_INVALID] + p[P_STALE] + p[P_FULL]);
	EXPECT_EQ(0, p[P_UNREACHABLE]);
	for (i = 1; i < CNS; i++)
		EXPECT_EQ(0, cider_detach(fd, at[i].mn_id));
}

TEST_F_TIMEOUT(peer, compute_nodes_reach_each_other_over_rdma_links, 300)
{
	struct cider_attach at[CNS];

	NEED_MN();
	at[0] = self->at;
	reach_each_other(_metadata, self->fd, self->memd.addr, at, 3, variant->mode);
}

/*
 * The same over IPv6 ($CIDER_MN_ADDR6: the runner puts a ULA on the rxe
 * netdev): the memory node listens there, the CNs attach from there and
 * announce that address with the listener's port (a dual-stack one), and
 * their links are made to it.
 */
TEST_F_TIMEOUT(peer, compute_nodes_reach_each_other_over_ipv6, 300)
{
	const char *const store[] = { "--index", "array", "--keys", "64", "--mode", variant->mode,
				      NULL };
	const char *host = getenv("CIDER_MN_ADDR6");
	struct cider_attach at[CNS];
	struct memd m6;
	char what[32];

	NEED_MN();
	if (!host)
		SKIP(return, "CIDER_MN_ADDR6 not set");
	ASSERT_EQ(0, memd_start_on(&m6, host, "4M", test_port() + 500, store))
		TH_LOG("cider-memd did not start on %s; log %s", host, m6.log);
	ASSERT_EQ(0, cider_attach(self->fd, m6.addr, 7, 0, &at[0]));
	snprintf(what, sizeof(what), "%s over IPv6", variant->mode);
	reach_each_other(_metadata, self->fd, m6.addr, at, 7, what);
	EXPECT_EQ(0, cider_detach(self->fd, at[0].mn_id));
	memd_stop(&m6, SIGTERM);
}

/* Three CNs over links (peer_local off) flood one key for @ops PUTs each. */
static void flood_all(struct __test_metadata *_metadata, int fd, const struct cider_attach *at,
		      unsigned int skip_checks, unsigned int ops, struct flood *f)
{
	pthread_t t[CNS];
	unsigned int i;

	for (i = 0; i < CNS; i++) {
		f[i] = (struct flood){ .fd = fd, .store = at[i].mn_id, .ops = ops };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, flood_run, &f[i]));
	}
	for (i = 0; i < CNS; i++) {
		pthread_join(t[i], NULL);
		if (i == skip_checks)
			continue;
		EXPECT_EQ(0, f[i].bad) TH_LOG("cn %u: %d", 3 + i, f[i].bad);
		EXPECT_EQ(0U, f[i].ecomm + f[i].timedout);
	}
}

/*
 * A CN detached while the others send to it: their messages to it are
 * dropped and its links go; their PUTs all succeed (the lease recovers
 * what the lost messages would have done).  Attached again it is a new
 * incarnation, and links to it are made again.
 */
TEST_F_TIMEOUT(peer, a_cn_that_leaves_and_comes_back_costs_the_others_nothing_but_time, 300)
{
	struct cider_attach at[CNS];
	struct flood f[CNS];
	long long p[P_NR], made;
	unsigned int i;

	NEED_MN();
	ASSERT_EQ(0, sysfs_write(PARAM "peer_local", "N"));
	at[0] = self->at;
	for (i = 1; i < CNS; i++)
		ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3 + i, 0, &at[i]));
	/*
	 * Links are made by the first message between two CNs: a flood that
	 * met no contention across CNs (a loaded host serializes them) sent
	 * none, so flood again, a few times at most.
	 */
	for (i = 0, made = 0; i < 5 && made <= 0; i++) {
		flood_all(_metadata, self->fd, at, CNS, 200, f);
		ASSERT_EQ(0, peer_sum(at, 2, p));
		made = p[P_LINKS_MADE];
	}
	ASSERT_LT(0, made);

	/* cn 5 goes while everyone floods: its own PUTs may fail, nobody else's. */
	for (i = 0; i < CNS; i++) {
		f[i] = (struct flood){ .fd = self->fd, .store = at[i].mn_id, .ops = 400 };
	}
	{
		pthread_t t[CNS];

		for (i = 0; i < CNS; i++)
			ASSERT_EQ(0, pthread_create(&t[i], NULL, flood_run, &f[i]));
		usleep(300 * 1000);
		EXPECT_EQ(0, cider_detach(self->fd, at[2].mn_id));
		for (i = 0; i < CNS; i++)
			pthread_join(t[i], NULL);
		for (i = 0; i < 2; i++) {
			EXPECT_EQ(0, f[i].bad) TH_LOG("cn %u: %d", 3 + i, f[i].bad);
			EXPECT_EQ(0U, f[i].ecomm + f[i].timedout);
		}
	}
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 5, 0, &at[2]));
	EXPECT_EQ(2, incarnation_of(self->fd, at[2].mn_id));
	flood_all(_metadata, self->fd, at, CNS, 200, f);
	ASSERT_EQ(0, peer_sum(at, 2, p));
	TH_LOG("%s: links made %lld then %lld, %lld failures, %lld unreachable", variant->mode,
	       made, p[P_LINKS_MADE], p[P_LINK_FAILURES], p[P_UNREACHABLE]);
	EXPECT_EQ(0, p[P_INVALID] + p[P_STALE] + p[P_FULL]);
	for (i = 1; i < CNS; i++)
		EXPECT_EQ(0, cider_detach(self->fd, at[i].mn_id));
}

/* rmmod with links up between attached CNs: everything goes, nothing is left. */
TEST_F_TIMEOUT(peer, unload_with_links_up, 300)
{
	struct cider_attach at[CNS];
	struct flood f[CNS];
	long long p[P_NR];
	unsigned int i;

	NEED_MN();
	if (!getenv("CIDER_KO"))
		SKIP(return, "CIDER_KO not set");
	ASSERT_EQ(0, sysfs_write(PARAM "peer_local", "N"));
	at[0] = self->at;
	for (i = 1; i < CNS; i++)
		ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3 + i, 0, &at[i]));
	flood_all(_metadata, self->fd, at, CNS, 200, f);
	ASSERT_EQ(0, peer_sum(at, CNS, p));
	EXPECT_LT(0, p[P_LINKS_MADE]);
	close(self->fd);
	ASSERT_EQ(0, module_unload());		/* three nodes and their links */
	ASSERT_EQ(0, module_load());
	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	self->skip = true;			/* nothing to detach */
	memd_stop(&self->memd, SIGTERM);
}

TEST_HARNESS_MAIN
