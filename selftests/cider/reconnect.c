// SPDX-License-Identifier: GPL-2.0
/*
 * A memory node whose link breaks comes back by itself (Documentation/
 * datapath.rst, "Reconnect"): the fault knob break_qps moves channels' QPs
 * to the error state, where a broken link leaves them once the NIC's
 * retries ran out.  Operations under way end (ENOTCONN, ECOMM, ETIMEDOUT)
 * within their bound, those submitted meanwhile wait for the node, no
 * acknowledged write is lost, and the node serves again.  A node that
 * stays away is given up after loss_timeout_ms; a restarted memory node
 * (a new, empty store) is refused with ESTALE.
 *
 * Needs cider.ko loaded and $CIDER_MN_ADDR; skips otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "kv8.h"
#include "memd.h"
#include "sysfs.h"

#define PARAM_DIR	"/sys/module/cider/parameters/"
#define FAULT_DIR	"/sys/kernel/debug/cider/fault/"
#define OP_TIMEOUT_MS	1000
#define LEASE_MS	50
/* An operation's bound (kv.rst), plus the wait for a slot of a node away. */
#define BOUND_S		((3.0 * OP_TIMEOUT_MS + 10 * LEASE_MS) / 1000)
#define WRITERS		4
#define KEYS_EACH	2
#define MAX_OPS		200000

static unsigned int test_port(void)
{
	return 11600 + getpid() % 400;
}

FIXTURE(reconnect) {
	int fd;
	bool skip;
	struct memd memd;
	struct cider_attach at;
	unsigned int port;
	const char *store[9];		/* cider-memd's store arguments */
	char backing[96];		/* a backing file to remove, or "" */
};

FIXTURE_VARIANT(reconnect) {
	const char *mode;
};

/* Optimistic first, locked when contended; and every operation locked. */
FIXTURE_VARIANT_ADD(reconnect, cider) { .mode = "cider" };
FIXTURE_VARIANT_ADD(reconnect, mcs) { .mode = "mcs" };

static void params_default(void)
{
	sysfs_write(FAULT_DIR "break_qps", "0");
	sysfs_write(FAULT_DIR "drop_cqes", "0");
	sysfs_write(PARAM_DIR "op_timeout_ms", "10000");
	sysfs_write(PARAM_DIR "keepalive_ms", "1000");
	sysfs_write(PARAM_DIR "reconnect_delay_ms", "1000");
	sysfs_write(PARAM_DIR "loss_timeout_ms", "30000");
}

FIXTURE_SETUP(reconnect)
{
	const char *store[] = { "--index", "array", "--keys", "256", "--mode", variant->mode,
				"--lease-ms", "50", NULL };

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	/* 6.1's harness runs the body after a SKIP here: flag it instead. */
	self->skip = !getenv("CIDER_MN_ADDR") || access(FAULT_DIR "break_qps", F_OK);
	if (self->skip)
		return;
	params_default();
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "1000"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "keepalive_ms", "300"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "reconnect_delay_ms", "300"));
	self->port = test_port();
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", self->port, store))
		TH_LOG("cider-memd did not start; log %s", self->memd.log);
	memcpy(self->store, store, sizeof(store));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &self->at));
}

FIXTURE_TEARDOWN(reconnect)
{
	if (!self->skip) {
		params_default();
		cider_detach(self->fd, self->at.mn_id);
		memd_stop(&self->memd, SIGTERM);
		if (self->backing[0])
			unlink(self->backing);
	}
	close(self->fd);
}

#define NEED_MN() do { if (self->skip) SKIP(return, "CIDER_MN_ADDR not set"); } while (0)

static int mn_info(int fd, unsigned int mn, struct cider_mn_info *mi)
{
	int ret = cider_mn_info(fd, mn, mi);

	return ret ? ret : mi->mn_id == mn ? 0 : -ENOENT;
}

/* Poll until node @mn is in @state (and, if @reconnects, came back that often), or @secs pass. */
static int wait_state(int fd, unsigned int mn, unsigned int state, unsigned int reconnects,
		      double secs, struct cider_mn_info *mi)
{
	double end = memd_now() + secs;
	int ret;

	do {
		ret = mn_info(fd, mn, mi);
		if (ret)
			return ret;
		if (mi->state == state && mi->reconnects >= reconnects)
			return 0;
		usleep(20 * 1000);
	} while (memd_now() < end);
	return -ETIMEDOUT;
}

/* Break every channel's QP (the watchdog visits them within a period). */
static int break_link(unsigned int channels)
{
	char s[16];

	snprintf(s, sizeof(s), "%u", channels);
	return sysfs_write(FAULT_DIR "break_qps", s);
}

struct put_rec {
	uint64_t val;
	int ret;
};

struct writer {
	int fd;
	unsigned int store, id;
	volatile bool *stop;
	unsigned int n;
	double worst;			/* s: the longest operation */
	int bad;			/* an errno no operation may end with */
	unsigned int ok_after;		/* successful puts once the node came back */
	unsigned int failed;		/* puts that failed (allowed errnos) */
	volatile unsigned int *back;	/* the node came back */
	struct put_rec *puts;		/* by op: KEYS_EACH keys, round robin */
};

/* One writer per key: the last acknowledged PUT of each is known exactly. */
static void *writer_run(void *arg)
{
	struct writer *w = arg;
	uint64_t v;

	while (!*w->stop && w->n < MAX_OPS) {
		uint64_t key = w->id * KEYS_EACH + w->n % KEYS_EACH;
		uint64_t val = ((uint64_t)w->id << 32) | (w->n + 1);
		double t = memd_now();
		int ret = put8(w->fd, w->store, key, val);

		t = memd_now() - t;
		w->worst = t > w->worst ? t : w->worst;
		w->puts[w->n].val = val;
		w->puts[w->n].ret = ret;
		w->n++;
		if (ret && ret != -ENOTCONN && ret != -ECOMM && ret != -ETIMEDOUT)
			w->bad = ret;
		if (!ret && *w->back)
			w->ok_after++;
		w->failed += ret != 0;
		/* A hot key of another writer: reads contend with its writes. */
		ret = get8(w->fd, w->store, ((w->id + 1) % WRITERS) * KEYS_EACH, &v);
		/* A GET changes nothing, yet ends as any operation may. */
		if (ret && ret != -ENOTCONN && ret != -ENOENT && ret != -ETIMEDOUT && ret != -ECOMM)
			w->bad = ret;
	}
	return NULL;
}

/*
 * What key @k may read now: its writer's last acknowledged PUT, or a
 * later one whose outcome is unknown (ECOMM).  Did it?
 */
static bool key_holds_its_writes(const struct writer *w, unsigned int k, uint64_t got)
{
	int i, last_ok = -1;

	for (i = 0; i < (int)w->n; i++)
		if (i % KEYS_EACH == (int)k && w->puts[i].ret == 0)
			last_ok = i;
	if (last_ok >= 0 && got == w->puts[last_ok].val)
		return true;
	for (i = last_ok + 1; i < (int)w->n; i++)
		if (i % KEYS_EACH == (int)k && w->puts[i].ret == -ECOMM && got == w->puts[i].val)
			return true;
	return false;
}

/*
 * Four writers flood the hot keys while @knob (a fault knob, set to
 * @count) makes the node lose its link.  The node must come back by
 * itself, once; every operation must end as documented and within its
 * bound, no acknowledged write may be lost, and every writer must be
 * acknowledged again afterwards.  @mi: the node once back.
 */
static void flood_across_a_loss(struct __test_metadata *_metadata,
				FIXTURE_DATA(reconnect) *self,
				int (*cut)(FIXTURE_DATA(reconnect) *self, const void *arg),
				const void *arg, struct cider_mn_info *mi)
{
	struct writer w[WRITERS];
	pthread_t th[WRITERS];
	volatile bool stop = false;
	volatile unsigned int back = 0;
	unsigned int i, k, total = 0;
	double worst = 0, t;

	for (i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .fd = self->fd, .store = self->at.mn_id, .id = i,
					.stop = &stop, .back = &back };
		w[i].puts = calloc(MAX_OPS, sizeof(*w[i].puts));
		ASSERT_NE(NULL, w[i].puts);
		ASSERT_EQ(0, pthread_create(&th[i], NULL, writer_run, &w[i]));
	}
	usleep(700 * 1000);
	t = memd_now();
	ASSERT_EQ(0, cut(self, arg));
	EXPECT_EQ(0, wait_state(self->fd, self->at.mn_id, CIDER_MN_LIVE, 1, 30, mi))
		TH_LOG("state %u after %.1f s", mi->state, memd_now() - t);
	TH_LOG("back after %.2f s: %u reconnects of %u attempts, lost for %d, last %d",
	       memd_now() - t, mi->reconnects, mi->reconnect_attempts, mi->lost_reason,
	       mi->last_reason);
	back = 1;
	usleep(1500 * 1000);
	stop = true;
	for (i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < WRITERS; i++) {
		total += w[i].n;
		worst = w[i].worst > worst ? w[i].worst : worst;
		TH_LOG("writer %u: %u PUTs, %u failed, %u acknowledged after", i, w[i].n,
		       w[i].failed, w[i].ok_after);
		EXPECT_EQ(0, w[i].bad) TH_LOG("writer %u: an operation ended with %d", i, w[i].bad);
		EXPECT_LT(0, w[i].ok_after) TH_LOG("writer %u: nothing acknowledged after", i);
	}
	TH_LOG("%u PUTs, the longest %.2f s (bound %.2f s)", total, worst, BOUND_S);
	EXPECT_GT(BOUND_S + 1.0, worst);
	/* No acknowledged write lost. */
	for (i = 0; i < WRITERS; i++) {
		for (k = 0; k < KEYS_EACH; k++) {
			uint64_t got = 0;
			double t1 = memd_now();
			int r = get8(self->fd, self->at.mn_id, i * KEYS_EACH + k, &got);

			if (r) {
				/* What the node and its store say, for the post-mortem. */
				TH_LOG("get %u: %d after %.3f s", i * KEYS_EACH + k, r, memd_now() - t1);
				if (system("cat /sys/kernel/debug/cider/mn*; dmesg | tail -20"))
					TH_LOG("no post-mortem");
			}
			EXPECT_EQ(0, r);
			EXPECT_TRUE(!r && key_holds_its_writes(&w[i], k, got))
				TH_LOG("key %u reads %#llx", i * KEYS_EACH + k,
				       (unsigned long long)got);
		}
		free(w[i].puts);
	}
	ASSERT_EQ(0, mn_info(self->fd, self->at.mn_id, mi));
	EXPECT_EQ(CIDER_MN_LIVE, mi->state);
	EXPECT_EQ(1, mi->reconnects);
}

/* A fault knob set to the count @arg points to: 0 or -errno. */
static int cut_by_knob(FIXTURE_DATA(reconnect) *self, const void *arg)
{
	const struct { const char *knob; unsigned int n; } *k = arg;
	char n[16];

	(void)self;
	snprintf(n, sizeof(n), "%u", k->n);
	return sysfs_write(k->knob, n);
}

/* The QPs in the error state, where a broken link leaves them. */
TEST_F_TIMEOUT(reconnect, a_broken_link_comes_back_by_itself_under_load, 180)
{
	const struct { const char *knob; unsigned int n; } k = {
		FAULT_DIR "break_qps", self->at.nr_channels
	};
	struct cider_mn_info mi;

	NEED_MN();
	flood_across_a_loss(_metadata, self, cut_by_knob, &k, &mi);
	EXPECT_TRUE(mi.lost_reason == -ENOTCONN || mi.lost_reason == -EIO ||
		    mi.lost_reason == -ECOMM) TH_LOG("lost for %d", mi.lost_reason);
}

/*
 * A completion lost: the watchdog finds its batch overdue after
 * op_timeout_ms, and the node reconnects (ETIMEDOUT), as when a link is
 * down longer than the NIC's retries take.
 */
TEST_F_TIMEOUT(reconnect, an_overdue_operation_reconnects_the_node, 180)
{
	struct cider_mn_info mi;

	const struct { const char *knob; unsigned int n; } k = { FAULT_DIR "drop_cqes", 1 };

	NEED_MN();
	flood_across_a_loss(_metadata, self, cut_by_knob, &k, &mi);
	EXPECT_EQ(-ETIMEDOUT, mi.lost_reason);
}

/*
 * An operation submitted while the node is away waits for it, up to
 * op_timeout_ms, then fails with ENOTCONN: it did not happen.
 */
TEST_F_TIMEOUT(reconnect, operations_wait_for_the_node_within_their_bound, 120)
{
	struct cider_mn_info mi;
	uint64_t v = 0;
	double t;

	NEED_MN();
	ASSERT_EQ(0, put8(self->fd, self->at.mn_id, 5, 55));
	/* Back after 1.5-2.5 s: within a 5 s wait. */
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "reconnect_delay_ms", "2000"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "5000"));
	ASSERT_EQ(0, break_link(self->at.nr_channels));
	ASSERT_EQ(0, wait_state(self->fd, self->at.mn_id, CIDER_MN_RECONNECTING, 0, 10, &mi));
	t = memd_now();
	EXPECT_EQ(0, put8(self->fd, self->at.mn_id, 5, 56));
	t = memd_now() - t;
	TH_LOG("a PUT submitted while reconnecting ended after %.2f s", t);
	EXPECT_LT(0.3, t);
	ASSERT_EQ(0, mn_info(self->fd, self->at.mn_id, &mi));
	EXPECT_EQ(CIDER_MN_LIVE, mi.state);
	EXPECT_EQ(1, mi.reconnects);
	EXPECT_EQ(0, get8(self->fd, self->at.mn_id, 5, &v));
	EXPECT_EQ(56, v);

	/* Back after 4.5-7.5 s: past a 1 s wait. */
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "reconnect_delay_ms", "6000"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "1000"));
	ASSERT_EQ(0, break_link(self->at.nr_channels));
	ASSERT_EQ(0, wait_state(self->fd, self->at.mn_id, CIDER_MN_RECONNECTING, 0, 10, &mi));
	t = memd_now();
	EXPECT_EQ(-ENOTCONN, put8(self->fd, self->at.mn_id, 5, 57));
	t = memd_now() - t;
	TH_LOG("... and with a 1 s bound, after %.2f s", t);
	EXPECT_LT(0.9, t);
	EXPECT_EQ(0, wait_state(self->fd, self->at.mn_id, CIDER_MN_LIVE, 2, 20, &mi));
	EXPECT_EQ(0, get8(self->fd, self->at.mn_id, 5, &v));
	EXPECT_EQ(56, v);
}

/*
 * A memory node that stays away is given up once loss_timeout_ms has
 * passed: DEAD, for the reason it was lost, after several attempts.
 */
TEST_F_TIMEOUT(reconnect, a_node_that_stays_away_is_given_up, 120)
{
	struct cider_mn_info mi;
	double t;

	NEED_MN();
	ASSERT_EQ(0, put8(self->fd, self->at.mn_id, 1, 11));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "loss_timeout_ms", "2000"));
	t = memd_now();
	memd_stop(&self->memd, SIGKILL);
	ASSERT_EQ(0, wait_state(self->fd, self->at.mn_id, CIDER_MN_DEAD, 0, 30, &mi));
	t = memd_now() - t;
	TH_LOG("dead after %.2f s: %u attempts, lost for %d, the last attempt %d", t,
	       mi.reconnect_attempts, mi.lost_reason, mi.last_reason);
	EXPECT_LE(2, mi.reconnect_attempts);
	EXPECT_EQ(0, mi.reconnects);
	EXPECT_NE(0, mi.lost_reason);
	EXPECT_EQ(mi.lost_reason, mi.dead_reason);
	EXPECT_LT(2.0, t);
	EXPECT_EQ(-ENOTCONN, put8(self->fd, self->at.mn_id, 1, 12));
}

/*
 * A memory node restarted on the same address has a new, empty store:
 * reconnecting to it would serve stale knowledge of the old one (and
 * lose every acknowledged write without a word).  Refused: DEAD with
 * ESTALE.  A new attach then works.
 */
TEST_F_TIMEOUT(reconnect, a_restarted_memory_node_is_refused, 120)
{
	struct cider_attach at2;
	struct cider_mn_info mi;
	uint64_t v = 0;

	NEED_MN();
	ASSERT_EQ(0, put8(self->fd, self->at.mn_id, 2, 22));
	memd_stop(&self->memd, SIGKILL);
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", self->port, self->store))
		TH_LOG("cider-memd did not start again; log %s", self->memd.log);
	ASSERT_EQ(0, wait_state(self->fd, self->at.mn_id, CIDER_MN_DEAD, 0, 30, &mi));
	TH_LOG("dead: %d after %u attempts (lost for %d)", mi.dead_reason,
	       mi.reconnect_attempts, mi.lost_reason);
	EXPECT_EQ(-ESTALE, mi.dead_reason);
	EXPECT_EQ(-ESTALE, mi.last_reason);
	EXPECT_EQ(0, mi.reconnects);
	ASSERT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &at2));
	self->at = at2;
	EXPECT_EQ(-ENOENT, get8(self->fd, self->at.mn_id, 2, &v));
	EXPECT_EQ(0, put8(self->fd, self->at.mn_id, 2, 23));
}

/* A tmpfs for backing files (the guest's /tmp need not be one): its path. */
static const char *backing_dir(void)
{
	static const char dir[] = "/tmp/cider-backing";

	mkdir(dir, 0700);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=64m") && errno != EBUSY)
		return NULL;
	return dir;
}

/* cider-memd killed under load and started again on its backing file. */
static int cut_by_restart(FIXTURE_DATA(reconnect) *self, const void *arg)
{
	const char *const *store = arg;

	memd_stop(&self->memd, SIGKILL);
	return memd_start_store(&self->memd, "4M", self->port, store);
}

/*
 * A memory node whose region is a backing file (--backing on tmpfs) is
 * killed with SIGKILL under load and started again: its new region holds
 * the same store (same id), so the compute node reconnects to it by
 * itself, every acknowledged write is there, and the store serves on.
 */
TEST_F_TIMEOUT(reconnect, a_restarted_memory_node_on_its_backing_file_serves_the_same_store, 180)
{
	const char *dir = backing_dir();
	const char *store[] = { "--index", "array", "--keys", "256", "--mode", variant->mode,
				"--lease-ms", "50", "--backing", self->backing, NULL };
	struct cider_mn_info mi;

	NEED_MN();
	ASSERT_NE(NULL, dir) TH_LOG("no tmpfs for the backing file: %s", strerror(errno));
	snprintf(self->backing, sizeof(self->backing), "%s/store-%u", dir, self->port);
	unlink(self->backing);
	ASSERT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	memd_stop(&self->memd, SIGTERM);
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", self->port, store));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &self->at));
	flood_across_a_loss(_metadata, self, cut_by_restart, store, &mi);
	EXPECT_EQ(1, memd_log_count(&self->memd, "serving the store in"));
}

/* A backing file is served only with the options of the store it holds. */
TEST_F_TIMEOUT(reconnect, a_backing_file_of_another_store_is_refused_with_the_difference, 60)
{
	const char *dir = backing_dir();
	const char *other = strcmp(variant->mode, "mcs") ? "mcs" : "cider";
	const char *store[] = { "--index", "array", "--keys", "256", "--mode", variant->mode,
				"--backing", self->backing, NULL };
	const char *again[] = { "--index", "array", "--keys", "256", "--mode", other,
				"--backing", self->backing, NULL };
	struct memd m = { 0 };
	char want[96];

	NEED_MN();
	ASSERT_NE(NULL, dir);
	snprintf(self->backing, sizeof(self->backing), "%s/other-%u", dir, self->port);
	unlink(self->backing);
	ASSERT_EQ(0, memd_start_store(&m, "4M", self->port + 1, store));
	memd_stop(&m, SIGTERM);
	EXPECT_NE(0, memd_start_store(&m, "4M", self->port + 1, again));
	snprintf(want, sizeof(want), "holds a store with --mode %s (the command line: --mode %s)",
		 variant->mode, other);
	EXPECT_EQ(1, memd_log_count(&m, want));
}

TEST_HARNESS_MAIN
