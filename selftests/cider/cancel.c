// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring commands still pending when their process exits, against a
 * real cider-memd over rxe.  The module's fault injection drops the one
 * completion the command waits for, so only the data path's watchdog
 * (op_timeout_ms) could end it.
 *
 * The exit itself never waits for such a command (io_uring waits at exit
 * only for requests it tracks, and ours are not).  What waited is the
 * ring's teardown, in a kernel worker: it holds the ring, the command and
 * through it the process's open file of /dev/cider, and with it a
 * reference on the module, until every request has ended.  From Linux 6.7
 * cider.ko marks its commands cancelable (kmod/compat.h, kmod/uring.c):
 * the teardown completes them at once (-ECANCELED) and lets go of the
 * file; the operation itself still ends by the watchdog, on its own
 * references.  Before 6.7 io_uring has no such hook and the teardown
 * waits for the watchdog, which bounds it.  Either way nothing is left
 * behind: the node can be attached again and used.
 *
 * Needs cider.ko loaded and $CIDER_MN_ADDR.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "cider-uring.h"
#include "memd.h"
#include "sysfs.h"
#include "rawops.h"

#define FAULT_DIR "/sys/kernel/debug/cider/fault/"
#define PARAM_DIR "/sys/module/cider/parameters/"
/* The watchdog's limit in these tests, in seconds. */
#define OP_TIMEOUT 6
#define OP_TIMEOUT_MS "6000"

static void defaults(void)
{
	sysfs_write(FAULT_DIR "drop_cqes", "0");
	sysfs_write(PARAM_DIR "op_timeout_ms", "10000");
	sysfs_write(PARAM_DIR "keepalive_ms", "1000");
	sysfs_write(PARAM_DIR "loss_timeout_ms", "30000");
}

/* The running kernel is @major.@minor or later. */
static bool kernel_since(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

static unsigned int test_port(void)
{
	return 7400 + getpid() % 500;
}

FIXTURE(pending) {
	int fd;
	bool skip, attached;
	struct memd memd;
	struct cider_attach at;
};

FIXTURE_SETUP(pending)
{
	const char *store[] = { "--index", "array", "--keys", "64", NULL };

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	/* 6.1's harness runs the body after a SKIP here: flag it instead. */
	self->skip = !getenv("CIDER_MN_ADDR") || access(FAULT_DIR, F_OK);
	if (self->skip)
		return;
	defaults();
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store))
		TH_LOG("cider-memd did not start; log %s", self->memd.log);
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &self->at));
	self->attached = true;
}

FIXTURE_TEARDOWN(pending)
{
	if (!self->skip) {
		defaults();
		if (self->attached)
			cider_detach(self->fd, self->at.mn_id);
		memd_stop(&self->memd, SIGTERM);
	}
	close(self->fd);
}

#define NEED() do { if (self->skip) SKIP(return, "no CIDER_MN_ADDR or no " FAULT_DIR); } while (0)

/* /sys/module/cider/refcnt: one per open file of /dev/cider. */
static int module_refs(void)
{
	char buf[16] = "";
	int fd = open("/sys/module/cider/refcnt", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

/*
 * The child: open /dev/cider for itself, submit one command on it (a KV
 * GET, or a raw READ), check that it is still pending, tell the parent
 * ('P'; anything else is a failure) and exit without waiting for it.
 */
static void __attribute__((noreturn)) submit_and_exit(unsigned int mn, bool kv, int w)
{
	static __u64 key = 3, val;
	struct cider_raw_op op = op_rw(CIDER_RAW_READ, 0, &val, 8);
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int fd = cider_open();
	char c = 'E';

	if (fd >= 0 && cider_uring_init(&ring, 4) == 0) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		if (kv)
			cider_uring_prep_get(sqe, fd, mn, &key, 8, &val, 8);
		else
			cider_uring_prep_raw(sqe, fd, mn, &op, 1);
		if (io_uring_submit(&ring) == 1) {
			usleep(300 * 1000);
			c = io_uring_peek_cqe(&ring, &cqe) == -EAGAIN ? 'P' : 'C';
		}
	}
	if (write(w, &c, 1) != 1)
		_exit(2);
	_exit(0);
}

struct exit_times {
	double exit;		/* from the child's report to its reaping */
	double release;		/* from its reaping until its file is released */
};

/*
 * Run the child with one command pending; 0 and the times, or -1 if it
 * did not get that far.
 */
static int exit_with_pending(struct __test_metadata *_metadata, FIXTURE_DATA(pending) *self,
			     bool kv, struct exit_times *et)
{
	int p[2], status = 0, refs = module_refs();
	double t, end;
	char c = 0;
	pid_t pid;

	/* Reconnecting off: the node's death is what ends the command here. */
	if (refs < 1 || sysfs_write(PARAM_DIR "loss_timeout_ms", "0") ||
	    sysfs_write(PARAM_DIR "keepalive_ms", "600000") ||
	    sysfs_write(PARAM_DIR "op_timeout_ms", OP_TIMEOUT_MS) ||
	    sysfs_write(FAULT_DIR "drop_cqes", "1") || pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		submit_and_exit(self->at.mn_id, kv, p[1]);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		c = 0;
	close(p[0]);
	t = memd_now();
	if (pid > 0)
		waitpid(pid, &status, 0);
	et->exit = memd_now() - t;
	EXPECT_EQ('P', c) TH_LOG("the command was not pending (%c)", c ?: '-');
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	t = memd_now();
	for (end = t + OP_TIMEOUT + 20; module_refs() != refs && memd_now() < end;)
		usleep(20 * 1000);
	et->release = memd_now() - t;
	EXPECT_EQ(refs, module_refs());
	return c == 'P' ? 0 : -1;
}

/*
 * The operation still ends by the watchdog (the node dies of
 * ETIMEDOUT), and the node can be attached again and serves the store.
 */
static void ends_and_reattaches(struct __test_metadata *_metadata, FIXTURE_DATA(pending) *self)
{
	__u64 key = 5, val = 42, got = 0;
	struct cider_mn_info mi = { 0 };
	size_t len = sizeof(got);
	double end = memd_now() + OP_TIMEOUT + 20;

	while (memd_now() < end) {
		if (cider_mn_info(self->fd, self->at.mn_id, &mi) || mi.state == CIDER_MN_DEAD)
			break;
		usleep(100 * 1000);
	}
	EXPECT_EQ(CIDER_MN_DEAD, mi.state);
	EXPECT_EQ(-ETIMEDOUT, mi.dead_reason);
	EXPECT_EQ(0, sysfs_write(FAULT_DIR "drop_cqes", "0"));
	EXPECT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	self->attached = false;
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &self->at));
	self->attached = true;
	EXPECT_EQ(0, cider_put(self->fd, self->at.mn_id, &key, 8, &val, 8));
	EXPECT_EQ(0, cider_get(self->fd, self->at.mn_id, &key, 8, &got, &len));
	EXPECT_EQ(42U, got);
}

static void check_times(struct __test_metadata *_metadata, const struct exit_times *et)
{
	/* The exit itself waits for neither, on any kernel. */
	EXPECT_GT(2.0, et->exit);
	if (kernel_since(6, 7)) {
		/* Cancelled: no wait for the watchdog. */
		EXPECT_GT(2.0, et->release);
	} else {
		/* Waited for the watchdog, and only for it. */
		EXPECT_LT(OP_TIMEOUT - 1.5, et->release);
		EXPECT_GT(OP_TIMEOUT + 10, et->release);
	}
}

TEST_F_TIMEOUT(pending, exit_with_a_raw_command_pending, 120)
{
	struct exit_times et;

	NEED();
	ASSERT_EQ(0, exit_with_pending(_metadata, self, false, &et));
	TH_LOG("raw READ pending: exit %.3f s, /dev/cider released %.3f s later (op_timeout %d s)",
	       et.exit, et.release, OP_TIMEOUT);
	check_times(_metadata, &et);
	ends_and_reattaches(_metadata, self);
}

TEST_F_TIMEOUT(pending, exit_with_a_kv_command_pending, 120)
{
	struct exit_times et;

	NEED();
	ASSERT_EQ(0, exit_with_pending(_metadata, self, true, &et));
	TH_LOG("KV GET pending: exit %.3f s, /dev/cider released %.3f s later (op_timeout %d s)",
	       et.exit, et.release, OP_TIMEOUT);
	check_times(_metadata, &et);
	ends_and_reattaches(_metadata, self);
}

TEST_HARNESS_MAIN
