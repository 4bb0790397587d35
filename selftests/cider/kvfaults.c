// SPDX-License-Identifier: GPL-2.0
/*
 * The KV path under allocation failure (debug kernel only): attach to a
 * node with an array store, KV operations by ioctl and io_uring, detach,
 * each with the calling thread's Nth allocation failing, for every N the
 * call reaches.  A call must succeed or fail with a documented errno that
 * tells the truth: -ENOMEM means the operation did not happen (the key
 * reads as before), -ECOMM that it may have; the node stays LIVE and the
 * store keeps serving with all its operation slots.  Leaks are found by
 * the kmemleak scan after the VM run, crashes and lockdep reports by the
 * kernel log check.
 *
 * Needs cider.ko loaded, $CIDER_MN_ADDR, and a kernel with fault
 * injection (tools/debug-kernel); skips without one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "cider-uring.h"
#include "faults.h"
#include "kv8.h"
#include "memd.h"

#define KEYS 64
#define MAX_NTH 5000
/* Far more than a shard's operation slots (kmod/kvstore.c: 32). */
#define SLOT_ROUNDS 100

static unsigned int test_port(void)
{
	return 8400 + getpid() % 1000;
}

static int nodes_attached(int fd)
{
	struct cider_mn_info mi;
	unsigned int id = 0;
	int n = 0;

	while (cider_mn_info(fd, id, &mi) == 0) {
		n++;
		id = mi.mn_id + 1;
	}
	return n;
}

static void detach_all(int fd)
{
	struct cider_mn_info mi;

	while (cider_mn_info(fd, 0, &mi) == 0)
		if (cider_detach(fd, mi.mn_id))
			break;
}

static bool node_is_live(int fd, unsigned int mn)
{
	struct cider_mn_info mi;

	return cider_mn_info(fd, mn, &mi) == 0 && mi.mn_id == mn &&
	       mi.state == CIDER_MN_LIVE;
}

/* How many allocations the calling thread makes in what follows. */
#define COUNT_FROM 100000
static long allocations_since_count(void)
{
	char buf[32] = "";
	long left;

	if (pread(fi_nth_fd(), buf, sizeof(buf) - 1, 0) <= 0)
		return -1;
	left = strtol(buf, NULL, 10);
	fi_fail_nth(0);
	return COUNT_FROM - left;
}

FIXTURE(kvalloc) {
	int fd;
	bool skip;
	struct memd memd;
	struct cider_attach at;
};

FIXTURE_VARIANT(kvalloc) {
	const char *mode;
};

/* Local write-combining, and the MCS queue's handover messages. */
FIXTURE_VARIANT_ADD(kvalloc, cider) { .mode = "cider" };
FIXTURE_VARIANT_ADD(kvalloc, mcs) { .mode = "mcs" };

FIXTURE_SETUP(kvalloc)
{
	const char *store[] = { "--index", "array", "--keys", "64", "--mode", variant->mode,
				NULL };

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	/* 6.1's harness runs the body after a SKIP here: flag it instead. */
	self->skip = !getenv("CIDER_MN_ADDR") || !fi_available();
	if (self->skip)
		return;
	ASSERT_EQ(0, fi_setup(0));
	detach_all(self->fd);
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store))
		TH_LOG("cider-memd did not start; log %s", self->memd.log);
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 7, 0, &self->at));
}

FIXTURE_TEARDOWN(kvalloc)
{
	if (!self->skip) {
		fi_fail_nth(0);
		detach_all(self->fd);
		memd_stop(&self->memd, SIGTERM);
	}
	close(self->fd);
}

#define NEED_FI() do { \
	if (self->skip) \
		SKIP(return, "needs $CIDER_MN_ADDR and a fault-injection kernel"); \
} while (0)

/*
 * The store is built at the end of an attach (after connecting and
 * probing, which faults' attach test covers allocation by allocation):
 * fail each of the attach's last 40 allocations.
 */
TEST_F_TIMEOUT(kvalloc, attach_with_a_store_fails_cleanly_at_its_last_allocations, 300)
{
	struct cider_attach at;
	unsigned int injected = 0;
	long total, n;
	uint64_t v;
	int ret, hit;

	NEED_FI();
	ASSERT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	ASSERT_EQ(0, fi_fail_nth(COUNT_FROM));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 7, 0, &at));
	total = allocations_since_count();
	ASSERT_LT(0, total);
	TH_LOG("an attach with an array store makes %ld allocations", total);
	ASSERT_EQ(0, cider_detach(self->fd, at.mn_id));
	for (n = total + 2; n > 0 && n > total - 40; n--) {
		ASSERT_EQ(0, fi_fail_nth(n));
		ret = cider_attach(self->fd, self->memd.addr, 7, 0, &at);
		hit = fi_fail_nth_hit();
		ASSERT_LE(0, hit);
		injected += hit;
		if (ret == 0) {
			ASSERT_EQ(1, nodes_attached(self->fd));
			/* A node that says it attached serves its store. */
			ASSERT_EQ(0, put8(self->fd, at.mn_id, 3, n)) TH_LOG("allocation %ld", n);
			ASSERT_EQ(0, get8(self->fd, at.mn_id, 3, &v));
			ASSERT_EQ((uint64_t)n, v);
			ASSERT_EQ(0, cider_detach(self->fd, at.mn_id));
		} else {
			ASSERT_TRUE(ret == -ENOMEM || ret == -ENOBUFS)
				TH_LOG("attach, allocation %ld: %s", n, strerror(-ret));
			ASSERT_EQ(0, nodes_attached(self->fd)) TH_LOG("allocation %ld", n);
		}
	}
	TH_LOG("%u of the last allocations failed in turn", injected);
	ASSERT_LT(0, injected);
	/* The fixture's node, for the teardown. */
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 7, 0, &self->at));
}

enum kv_step { KV_PUT, KV_INSERT, KV_UPDATE, KV_DELETE, KV_GET, KV_NR };
static const char *const kv_step_name[] = { "PUT", "INSERT", "UPDATE", "DELETE", "GET" };

/*
 * @step on @key (which holds @old, or is absent for INSERT) with @new,
 * through io_uring when @ring is set; the call's result.
 */
static int kv_step(int fd, struct io_uring *ring, unsigned int s, enum kv_step step,
		   uint64_t *key, uint64_t *new, uint64_t *got)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	size_t len = 8;
	int ret;

	if (!ring) {
		switch (step) {
		case KV_PUT: return cider_put(fd, s, key, 8, new, 8);
		case KV_INSERT: return cider_insert(fd, s, key, 8, new, 8);
		case KV_UPDATE: return cider_update(fd, s, key, 8, new, 8);
		case KV_DELETE: return cider_delete(fd, s, key, 8);
		default:
			ret = cider_get(fd, s, key, 8, got, &len);
			return ret ? ret : (int)len;
		}
	}
	sqe = io_uring_get_sqe(ring);
	switch (step) {
	case KV_PUT: cider_uring_prep_put(sqe, fd, s, key, 8, new, 8); break;
	case KV_INSERT: cider_uring_prep_insert(sqe, fd, s, key, 8, new, 8); break;
	case KV_UPDATE: cider_uring_prep_update(sqe, fd, s, key, 8, new, 8); break;
	case KV_DELETE: cider_uring_prep_delete(sqe, fd, s, key, 8); break;
	default: cider_uring_prep_get(sqe, fd, s, key, 8, got, 8); break;
	}
	ret = io_uring_submit(ring);
	/*
	 * io_uring's own allocation failed: the SQE stays in the ring and
	 * the failure is spent (fail-nth fails one allocation); submit it.
	 */
	if (ret == -EAGAIN || ret == -ENOMEM)
		ret = io_uring_submit(ring);
	if (ret != 1)
		return ret < 0 ? ret : -EBADMSG;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/*
 * Whether @ret of @step tells the truth about the key's state now (@now,
 * @present), given that it held @old (absent for INSERT) and @step
 * wanted @new: success did it, -ENOMEM did nothing, -ECOMM either.
 */
static bool kv_truthful(enum kv_step step, int ret, uint64_t old, uint64_t new,
			bool present, uint64_t now)
{
	bool done, untouched;

	if (step == KV_GET)
		return ret == 8 || ret == -ENOMEM;
	done = step == KV_DELETE ? !present : present && now == new;
	untouched = step == KV_INSERT ? !present : present && now == old;
	if (ret == 0)
		return done;
	if (ret == -ENOMEM)
		return untouched;
	return ret == -ECOMM && (done || untouched);
}

/* Every step of every kind fails at each allocation it makes, in turn. */
static void kv_fail_every_allocation(struct __test_metadata *_metadata, int fd,
				     unsigned int s, struct io_uring *ring)
{
	unsigned int injected[KV_NR] = { 0 }, n;
	uint64_t key, old, new, now, got;
	enum kv_step step;
	int ret, hit, r;

	for (step = 0; step < KV_NR; step++) {
		for (n = 1; n < MAX_NTH; n++) {
			key = (n * 7 + step) % KEYS;
			old = 1000 * n + step;
			new = old + 1;
			got = 0;
			/* The key's state before, without injection. */
			if (step == KV_INSERT) {
				r = cider_delete(fd, s, &key, 8);
				ASSERT_TRUE(r == 0 || r == -ENOENT) TH_LOG("DELETE before: %d", r);
			} else {
				ASSERT_EQ(0, put8(fd, s, key, old)) TH_LOG("%s, %u", kv_step_name[step], n);
			}
			ASSERT_EQ(0, fi_fail_nth(n));
			ret = kv_step(fd, ring, s, step, &key, &new, &got);
			hit = fi_fail_nth_hit();
			ASSERT_LE(0, hit);
			r = get8(fd, s, key, &now);
			ASSERT_TRUE(r == 0 || r == -ENOENT) TH_LOG("GET after: %d", r);
			EXPECT_TRUE(kv_truthful(step, ret, old, new, r == 0, now))
				TH_LOG("%s%s, allocation %u: %d (%s), key %s%llu (was %llu, wanted %llu)",
				       kv_step_name[step], ring ? " by io_uring" : "", n, ret,
				       strerror(ret < 0 ? -ret : 0), r ? "absent " : "",
				       (unsigned long long)now, (unsigned long long)old,
				       (unsigned long long)new);
			if (step == KV_GET && ret == 8) {
				EXPECT_EQ(old, got);
			}
			ASSERT_TRUE(node_is_live(fd, s)) TH_LOG("allocation %u", n);
			if (!hit)
				break;
			injected[step]++;
		}
		/*
		 * cider.ko allocates nothing for an operation (its request is
		 * the store's pool's, its slot's buffers and batch are the
		 * slot's): what fails here is the rest of the kernel's
		 * (io_uring's, the RDMA device's), or nothing at all.
		 */
		TH_LOG("%s%s: %u allocations failed in turn", kv_step_name[step],
		       ring ? " by io_uring" : "", injected[step]);
	}
}

TEST_F_TIMEOUT(kvalloc, kv_ioctl_fails_cleanly_at_every_allocation, 300)
{
	NEED_FI();
	kv_fail_every_allocation(_metadata, self->fd, self->at.mn_id, NULL);
}

TEST_F_TIMEOUT(kvalloc, kv_io_uring_fails_cleanly_at_every_allocation, 300)
{
	struct io_uring ring;

	NEED_FI();
	ASSERT_EQ(0, cider_uring_init(&ring, 4));
	kv_fail_every_allocation(_metadata, self->fd, self->at.mn_id, &ring);
	io_uring_queue_exit(&ring);
}

/*
 * An operation during which an allocation fails must not cost the store
 * one of its operation slots for good: far more such failures than a
 * shard has slots, on one key (one shard), each allocation the PUT makes
 * in its caller in turn (cider.ko makes none: they are the kernel's), and
 * the key still serves at once, by ioctl and by io_uring.
 */
TEST_F_TIMEOUT(kvalloc, allocation_failures_cost_no_operation_slot, 300)
{
	unsigned int s = self->at.mn_id, i, injected = 0;
	uint64_t key = 5, v, got;
	long total;
	double t0;
	int ret, hit;

	NEED_FI();
	ASSERT_EQ(0, put8(self->fd, s, key, 1));
	ASSERT_EQ(0, fi_fail_nth(COUNT_FROM));
	ASSERT_EQ(0, put8(self->fd, s, key, 2));
	total = allocations_since_count();
	TH_LOG("a PUT makes %ld allocations in the caller", total);
	if (!total)
		SKIP(return, "a PUT allocates nothing in its caller: nothing to fail");
	for (i = 0; i < SLOT_ROUNDS; i++) {
		v = 100 + i;
		/* Every allocation in turn. */
		ASSERT_EQ(0, fi_fail_nth(1 + i % total));
		ret = put8(self->fd, s, key, v);
		hit = fi_fail_nth_hit();
		ASSERT_LE(0, hit);
		injected += hit;
		ASSERT_TRUE(ret == 0 || ret == -ENOMEM || ret == -ECOMM)
			TH_LOG("round %u: %d (%s)", i, ret, strerror(-ret));
	}
	TH_LOG("%u allocations failed", injected);
	ASSERT_LT(0, injected);
	t0 = memd_now();
	ASSERT_EQ(0, put8(self->fd, s, key, 7));
	ASSERT_EQ(0, get8(self->fd, s, key, &got));
	ASSERT_EQ(7U, got);
	/* Not after waiting op_timeout_ms for a slot. */
	ASSERT_GT(2.0, memd_now() - t0);
}

/* Detach at every allocation it makes, with the store in use before. */
TEST_F_TIMEOUT(kvalloc, detach_with_a_store_fails_cleanly_at_every_allocation, 300)
{
	unsigned int n, injected = 0;
	struct cider_attach at;
	uint64_t v;
	int ret, hit;

	NEED_FI();
	ASSERT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	for (n = 1; n < MAX_NTH; n++) {
		ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 7, 0, &at));
		ASSERT_EQ(0, put8(self->fd, at.mn_id, 1, n));
		ASSERT_EQ(0, get8(self->fd, at.mn_id, 1, &v));
		ASSERT_EQ(0, fi_fail_nth(n));
		ret = cider_detach(self->fd, at.mn_id);
		hit = fi_fail_nth_hit();
		ASSERT_LE(0, hit);
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret);
			ASSERT_TRUE(node_is_live(self->fd, at.mn_id));
			ASSERT_EQ(0, cider_detach(self->fd, at.mn_id));
		}
		ASSERT_EQ(0, nodes_attached(self->fd));
		/* A detached store is gone for KV too. */
		ASSERT_EQ(-ENXIO, get8(self->fd, at.mn_id, 1, &v));
		if (!hit)
			break;
		injected++;
	}
	TH_LOG("detach: %u allocations failed in turn", injected);
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 7, 0, &self->at));
}

TEST_HARNESS_MAIN
