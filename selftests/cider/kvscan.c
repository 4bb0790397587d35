// SPDX-License-Identifier: GPL-2.0
/*
 * CIDER_KV_SCAN against a real cider-memd over rxe: a full scan returns
 * every key of a hash store and of an array store, a prefix only its
 * keys, through ioctl and io_uring; while another thread inserts and
 * deletes keys, every key present for the whole scan still comes (Redis
 * SCAN's promise, uapi/linux/cider.h), on both indexes; bad commands and
 * made-up cursors are refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "cider-uring.h"
#include "kv8.h"
#include "memd.h"

#define NKEYS		300	/* hash store: keys present throughout */
#define NCHURN		100	/* ...and keys inserted and deleted meanwhile */
#define BUF		CIDER_KV_SCAN_MIN_BUF	/* pages end full often */

static unsigned int test_port(void)
{
	return 11600 + getpid() % 400;
}

/* Key @i: "k:" or "churn:", then its number; its length varies with it. */
static size_t key_of(char *out, const char *kind, unsigned int i)
{
	return (size_t)snprintf(out, 64, "%s%u%.*s", kind, i, (int)(i % 13), "=============");
}

/* The number of a key of @kind, or -1 if it is none of them. */
static int key_index(const void *key, size_t len, const char *kind, unsigned int n)
{
	char want[64], got[64];
	unsigned int i;
	size_t kl = strlen(kind);

	if (len < kl || len >= sizeof(got) || memcmp(key, kind, kl))
		return -1;
	/* A record need not end in a zero: parse a copy that does. */
	memcpy(got, key, len);
	got[len] = '\0';
	i = (unsigned int)strtoul(got + kl, NULL, 10);
	if (i >= n || key_of(want, kind, i) != len || memcmp(want, key, len))
		return -1;
	return (int)i;
}

struct scan_result {
	unsigned int seen[NKEYS];	/* times each "k:" key came */
	unsigned int churn, other, pages, records;
};

/* A key nobody wrote: say what it is (1). */
static unsigned int other_key(const void *key, size_t len)
{
	const unsigned char *b = key;
	char hex[2 * 48 + 1];
	size_t i;

	for (i = 0; i < len && i < 48; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	fprintf(stderr, "# a key nobody wrote: %zu bytes, %s\n", len, hex);
	return 1;
}

/* A whole scan with @prefix through ioctl: each key counted by kind. */
static int scan_all(int fd, unsigned int s, const char *prefix, unsigned int count,
		    struct scan_result *r)
{
	static unsigned char buf[BUF];
	uint64_t cursor = 0;
	size_t len, at, kl;
	const void *k;
	int ret;

	memset(r, 0, sizeof(*r));
	do {
		len = sizeof(buf);
		ret = cider_scan(fd, s, prefix, prefix ? strlen(prefix) : 0, &cursor, count,
				 buf, &len);
		if (ret < 0)
			return ret;
		r->pages++;
		for (at = 0; (k = cider_scan_rec(buf, len, &at, &kl)); ret--) {
			int i = key_index(k, kl, "k:", NKEYS);

			r->records++;
			if (i >= 0)
				r->seen[i]++;
			else if (key_index(k, kl, "churn:", NCHURN) >= 0)
				r->churn++;
			else
				r->other += other_key(k, kl);
		}
		if (ret || at != len)
			return -EBADMSG;	/* the count or the bytes do not add up */
	} while (cursor);
	return 0;
}

/* A store on a memory node, attached: what both fixtures run on. */
struct node {
	int fd;
	bool skip;
	struct memd memd;
	struct cider_attach at;
};

static void node_up(struct __test_metadata *_metadata, struct node *n, const char *size,
		    unsigned int port, const char *const *store)
{
	n->fd = cider_open();
	ASSERT_LE(0, n->fd);
	/* 6.1's harness runs the body after a SKIP here: flag it instead. */
	n->skip = !getenv("CIDER_MN_ADDR");
	if (n->skip)
		return;
	ASSERT_EQ(0, memd_start_store(&n->memd, size, port, store))
		TH_LOG("cider-memd did not start; log %s", n->memd.log);
	ASSERT_EQ(0, cider_attach(n->fd, n->memd.addr, 3, 0, &n->at));
}

static void node_down(struct node *n)
{
	if (!n->skip) {
		cider_detach(n->fd, n->at.mn_id);
		memd_stop(&n->memd, SIGTERM);
	}
	close(n->fd);
}

FIXTURE(kvscan) {
	struct node n;
};

FIXTURE_SETUP(kvscan)
{
	const char *const store[] = { "--index", "hash", "--keys", "1024", "--mode", "cider",
				      NULL };
	char key[64];
	unsigned int i;

	node_up(_metadata, &self->n, "8M", test_port(), store);
	for (i = 0; !self->n.skip && i < NKEYS; i++) {
		size_t n = key_of(key, "k:", i);

		ASSERT_EQ(0, cider_put(self->n.fd, self->n.at.mn_id, key, n, &i, sizeof(i)));
	}
}

FIXTURE_TEARDOWN(kvscan)
{
	node_down(&self->n);
}

#define NEED_MN() do { if (self->n.skip) SKIP(return, "CIDER_MN_ADDR not set"); } while (0)

static void expect_each_once(struct __test_metadata *_metadata, const struct scan_result *r)
{
	unsigned int i, missing = 0, twice = 0;

	for (i = 0; i < NKEYS; i++) {
		missing += !r->seen[i];
		twice += r->seen[i] > 1;
	}
	EXPECT_EQ(0U, missing);
	/* Nothing moved: no key can come twice. */
	EXPECT_EQ(0U, twice);
	EXPECT_EQ(0U, r->other);
}

TEST_F(kvscan, a_scan_returns_every_key_once_page_by_page)
{
	struct scan_result r;

	NEED_MN();
	ASSERT_EQ(0, scan_all(self->n.fd, self->n.at.mn_id, NULL, 64, &r));
	expect_each_once(_metadata, &r);
	TH_LOG("%u records in %u pages of up to 64 positions", r.records, r.pages);
	EXPECT_LT(1U, r.pages);
	/* The default page, and the largest, cover the same keys. */
	ASSERT_EQ(0, scan_all(self->n.fd, self->n.at.mn_id, NULL, 0, &r));
	expect_each_once(_metadata, &r);
	ASSERT_EQ(0, scan_all(self->n.fd, self->n.at.mn_id, NULL, CIDER_KV_SCAN_MAX_COUNT, &r));
	expect_each_once(_metadata, &r);
}

/* Lines of "ciderctl kv -m @s scan @prefix" that are "k:" keys, or -1. */
static int ctl_scan_lines(unsigned int s, const char *prefix)
{
	char cmd[256], line[128];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "tools/ciderctl/ciderctl kv -m %u scan %s count 64", s, prefix);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		n += !strncmp(line, "k:", 2);
	return pclose(p) ? -1 : n;
}

TEST_F(kvscan, a_prefix_returns_its_keys_only)
{
	unsigned int s = self->n.at.mn_id, i, n = 0;
	struct scan_result r;

	NEED_MN();
	ASSERT_EQ(0, scan_all(self->n.fd, s, "k:1", 0, &r));
	for (i = 0; i < NKEYS; i++) {
		char key[64];

		key_of(key, "k:", i);
		EXPECT_EQ(!strncmp(key, "k:1", 3), r.seen[i]) TH_LOG("key %s", key);
		n += r.seen[i];
	}
	EXPECT_EQ(n, r.records);
	EXPECT_LT(0U, n);
	/* ciderctl kv scan prints the same keys, one per line. */
	EXPECT_EQ((int)n, ctl_scan_lines(s, "k:1"));
	EXPECT_EQ(NKEYS, ctl_scan_lines(s, ""));
}

/* Another thread writing and deleting keys until told to stop. */
struct churn {
	int fd;
	unsigned int store;
	unsigned int n;			/* keys it goes through */
	/* write (@put) or delete its key @i: 0 or -errno */
	int (*op)(struct churn *ch, unsigned int i, bool put);
	atomic_bool stop;
	unsigned int rounds;
	int err;
};

/* Rounds of writing every key, then deleting every key. */
static void *churn_run(void *arg)
{
	struct churn *ch = arg;
	unsigned int i;

	while (!atomic_load(&ch->stop) && !ch->err) {
		for (i = 0; i < ch->n && !ch->err; i++)
			ch->err = ch->op(ch, i, true);
		for (i = 0; i < ch->n && !ch->err; i++)
			ch->err = ch->op(ch, i, false);
		ch->rounds++;
	}
	return NULL;
}

/* The hash store's "churn:" keys. */
static int churn_hash(struct churn *ch, unsigned int i, bool put)
{
	char key[64];
	size_t n = key_of(key, "churn:", i);

	return put ? cider_put(ch->fd, ch->store, key, n, &i, sizeof(i)) :
		     cider_delete(ch->fd, ch->store, key, n);
}

/*
 * While another thread inserts and deletes other keys (into the same
 * buckets), every key present for the whole scan comes, and nothing
 * that was never written.
 */
TEST_F_TIMEOUT(kvscan, keys_present_throughout_come_while_others_come_and_go, 300)
{
	struct churn ch = { .fd = self->n.fd, .store = self->n.at.mn_id, .n = NCHURN,
			    .op = churn_hash };
	struct scan_result r;
	unsigned int round, i, missing = 0;
	pthread_t th;

	NEED_MN();
	ASSERT_EQ(0, pthread_create(&th, NULL, churn_run, &ch));
	for (round = 0; round < 3; round++) {
		ASSERT_EQ(0, scan_all(self->n.fd, self->n.at.mn_id, NULL, 32, &r));
		for (i = 0; i < NKEYS; i++) {
			missing += !r.seen[i];
			if (!r.seen[i])
				TH_LOG("round %u missed key %u", round, i);
		}
		EXPECT_EQ(0U, r.other);
		TH_LOG("round %u: %u pages, %u churning keys seen", round, r.pages, r.churn);
	}
	atomic_store(&ch.stop, true);
	pthread_join(th, NULL);
	EXPECT_EQ(0, ch.err);
	EXPECT_EQ(0U, missing);
	TH_LOG("the other thread ran %u rounds of %u inserts and deletes", ch.rounds, NCHURN);
	EXPECT_LT(0U, ch.rounds);
}

/* One page through io_uring: its records, and the next cursor in big_cqe[0]. */
static int uring_page(struct io_uring *ring, int fd, unsigned int s, uint64_t *cursor,
		      void *buf)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	struct cider_kv_cmd cmd;
	int ret;

	cider_kv_cmd_init(&cmd, s, CIDER_KV_SCAN, NULL, 0, buf, BUF);
	cmd.cursor = *cursor;
	cmd.count = 64;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = CIDER_IOC_KV;
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, &cmd, sizeof(cmd));
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	ret = cqe->res;
	if (ret >= 0 && (ring->flags & IORING_SETUP_CQE32))
		*cursor = cqe->big_cqe[0];
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

TEST_F(kvscan, a_scan_through_io_uring_returns_every_key)
{
	static unsigned char buf[BUF];
	unsigned int seen[NKEYS] = { 0 }, i, missing = 0;
	struct io_uring ring;
	uint64_t cursor = 0;
	size_t at, kl;
	const void *k;
	int ret, pages = 0;

	NEED_MN();
	/* Without CQE32 there is no room for the cursor: refused. */
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, IORING_SETUP_SQE128));
	EXPECT_EQ(-EINVAL, uring_page(&ring, self->n.fd, self->n.at.mn_id, &cursor, buf));
	io_uring_queue_exit(&ring);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32));
	do {
		ret = uring_page(&ring, self->n.fd, self->n.at.mn_id, &cursor, buf);
		ASSERT_LE(0, ret);
		for (at = 0; ret > 0 && (k = cider_scan_rec(buf, BUF, &at, &kl)); ret--) {
			int ki = key_index(k, kl, "k:", NKEYS);

			ASSERT_LE(0, ki);
			seen[ki]++;
		}
		ASSERT_EQ(0, ret);
		pages++;
	} while (cursor && pages < 100000);
	io_uring_queue_exit(&ring);
	for (i = 0; i < NKEYS; i++)
		missing += seen[i] != 1;
	EXPECT_EQ(0U, missing);
	EXPECT_EQ(0U, cursor);
}

static int scan_cmd(int fd, struct cider_kv_cmd *cmd)
{
	return ioctl(fd, CIDER_IOC_KV, cmd) < 0 ? -errno : 0;
}

TEST_F(kvscan, bad_commands_and_made_up_cursors_are_refused)
{
	static unsigned char buf[BUF];
	unsigned int s = self->n.at.mn_id;
	struct cider_kv_cmd cmd;
	uint64_t cursor = 0;
	size_t len = sizeof(buf);

	NEED_MN();
	/* A real cursor, from a first page of 8 positions. */
	ASSERT_LE(0, cider_scan(self->n.fd, s, NULL, 0, &cursor, 8, buf, &len));
	ASSERT_NE(0ULL, cursor);
	cider_kv_cmd_init(&cmd, s, CIDER_KV_SCAN, NULL, 0, buf, BUF);
	cmd.cursor = cursor;
	EXPECT_LE(0, scan_cmd(self->n.fd, &cmd));
	/* Its position with another tag, a bare position, a position past the end. */
	cider_kv_cmd_init(&cmd, s, CIDER_KV_SCAN, NULL, 0, buf, BUF);
	cmd.cursor = cursor ^ (1ULL << 50);
	EXPECT_EQ(-EINVAL, scan_cmd(self->n.fd, &cmd));
	cmd.cursor = 8;
	EXPECT_EQ(-EINVAL, scan_cmd(self->n.fd, &cmd));
	cmd.cursor = (cursor & ~((1ULL << 40) - 1)) | ((1ULL << 40) - 1);
	EXPECT_EQ(-EINVAL, scan_cmd(self->n.fd, &cmd));
	/* A buffer smaller than one record of the longest key. */
	cider_kv_cmd_init(&cmd, s, CIDER_KV_SCAN, NULL, 0, buf, BUF - 8);
	EXPECT_EQ(-EINVAL, scan_cmd(self->n.fd, &cmd));
	/* Too many positions; the reserved word. */
	cider_kv_cmd_init(&cmd, s, CIDER_KV_SCAN, NULL, 0, buf, BUF);
	cmd.count = CIDER_KV_SCAN_MAX_COUNT + 1;
	EXPECT_EQ(-EINVAL, scan_cmd(self->n.fd, &cmd));
	cmd.count = 0;
	cmd.scan_reserved = 1;
	EXPECT_EQ(-EINVAL, scan_cmd(self->n.fd, &cmd));
	/* Another operation's reserved words stay reserved. */
	cider_kv_cmd_init(&cmd, s, CIDER_KV_GET, "k:1", 3, buf, BUF);
	cmd.cursor = 1;
	EXPECT_EQ(-EINVAL, scan_cmd(self->n.fd, &cmd));
	/* The buffer not writable. */
	cider_kv_cmd_init(&cmd, s, CIDER_KV_SCAN, NULL, 0, (void *)8, BUF);
	EXPECT_EQ(-EFAULT, scan_cmd(self->n.fd, &cmd));
}

FIXTURE(kvscan_array) {
	struct node n;
};

FIXTURE_SETUP(kvscan_array)
{
	const char *const store[] = { "--index", "array", "--keys", "256", "--mode", "cider",
				      NULL };

	node_up(_metadata, &self->n, "4M", test_port() + 400, store);
}

FIXTURE_TEARDOWN(kvscan_array)
{
	node_down(&self->n);
}

/* A whole scan of the 256-key array store, each index counted in @seen. */
static int array_scan_all(int fd, unsigned int s, unsigned int count, unsigned int *seen)
{
	static unsigned char buf[BUF];
	uint64_t cursor = 0, key;
	size_t len, at, kl;
	const void *k;
	int ret;

	memset(seen, 0, 256 * sizeof(*seen));
	do {
		len = sizeof(buf);
		ret = cider_scan(fd, s, NULL, 0, &cursor, count, buf, &len);
		if (ret < 0)
			return ret;
		for (at = 0; (k = cider_scan_rec(buf, len, &at, &kl)); seen[key]++) {
			if (kl != 8)
				return -EBADMSG;
			memcpy(&key, k, 8);
			if (key >= 256)
				return -EBADMSG;
		}
	} while (cursor);
	return 0;
}

/* The indexes written, each once, as 8-byte keys; a prefix is refused. */
TEST_F(kvscan_array, a_scan_returns_the_indexes_written)
{
	static unsigned char buf[BUF];
	unsigned int s = self->n.at.mn_id, seen[256], i, bad = 0;
	uint64_t cursor = 0;
	size_t len = sizeof(buf);

	NEED_MN();
	for (i = 0; i < 256; i += 3)
		ASSERT_EQ(0, put8(self->n.fd, s, i, i + 1));
	ASSERT_EQ(0, array_scan_all(self->n.fd, s, 40, seen));
	for (i = 0; i < 256; i++)
		bad += seen[i] != (i % 3 == 0);
	EXPECT_EQ(0U, bad);
	EXPECT_EQ(-EINVAL, cider_scan(self->n.fd, s, "x", 1, &cursor, 0, buf, &len));
}

/* The array store's odd indexes. */
static int churn_array(struct churn *ch, unsigned int i, bool put)
{
	uint64_t idx = 2 * i + 1;

	return put ? put8(ch->fd, ch->store, idx, idx) : cider_delete(ch->fd, ch->store, &idx, 8);
}

/*
 * While another thread writes and deletes the odd indexes, every even
 * index (written before, never touched) comes in each of three scans,
 * and nothing outside the store.
 */
TEST_F_TIMEOUT(kvscan_array, even_indexes_come_while_the_odd_ones_come_and_go, 300)
{
	struct churn ch = { .fd = self->n.fd, .store = self->n.at.mn_id, .n = 128,
			    .op = churn_array };
	unsigned int s = self->n.at.mn_id, round, i, missing = 0, odd = 0, seen[256];
	pthread_t th;

	NEED_MN();
	for (i = 0; i < 256; i += 2)
		ASSERT_EQ(0, put8(self->n.fd, s, i, i + 1));
	ASSERT_EQ(0, pthread_create(&th, NULL, churn_run, &ch));
	for (round = 0; round < 3; round++) {
		ASSERT_EQ(0, array_scan_all(self->n.fd, s, 24, seen));
		for (i = 0; i < 256; i += 2)
			missing += !seen[i];
		for (i = 1; i < 256; i += 2)
			odd += seen[i];
	}
	atomic_store(&ch.stop, true);
	pthread_join(th, NULL);
	EXPECT_EQ(0, ch.err);
	EXPECT_EQ(0U, missing);
	TH_LOG("the other thread ran %u rounds; the scans saw %u odd indexes", ch.rounds, odd);
	EXPECT_LT(0U, ch.rounds);
}

TEST_HARNESS_MAIN
