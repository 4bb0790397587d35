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

#include "kselftest_harness.h"
#include "cider.h"
#include "../../kmod/core/proto.h"
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

FIXTURE_SETUP(peer)
{
	static const char *const store[] = { "--index", "array", "--keys", "64", "--mode", "mcs",
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
	bad[3].type = CIDER_MSG_RESULT + 1;
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

TEST_HARNESS_MAIN
