// SPDX-License-Identifier: GPL-2.0
/*
 * The data path's failure model, driven by the module's fault injection
 * (/sys/kernel/debug/cider/fault/, see kmod/fault.h) against a real
 * cider-memd over rxe: failures soft-RoCE never produces on its own.
 * Every batch finishes exactly once, every operation reports a true
 * status (-ECOMM: posted, outcome unknown; any other error: not
 * executed), waits are bounded and killable, and the node can be
 * detached and attached again afterwards.
 *
 * Needs cider.ko loaded, $CIDER_MN_ADDR, and $CIDER_KO for the reload.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "cider-uring.h"
#include "../../kmod/core/layout.h"
#include "memd.h"
#include "sysfs.h"
#include "rawops.h"

#define FAULT_DIR "/sys/kernel/debug/cider/fault/"
#define PARAM_DIR "/sys/module/cider/parameters/"

static int knob(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), FAULT_DIR "%s", name);
	return sysfs_write(path, val);
}

static void knobs_off(void)
{
	knob("post_fail_times", "0");
	knob("post_fail_at", "0");
	knob("refuse_atomics", "0");
	knob("drop_cqes", "0");
	knob("swab_atomics", "0");
	knob("cm_event_times", "0");
	knob("cm_event", "0");
	knob("cm_event_channel", "0");
	knob("hello_size_delta", "0");
	knob("cm_delay_ms", "0");
	knob("remove_delay_ms", "0");
	knob("store_delay_ms", "0");
	knob("break_qps", "0");
	sysfs_write(PARAM_DIR "op_timeout_ms", "10000");
	sysfs_write(PARAM_DIR "keepalive_ms", "1000");
	sysfs_write(PARAM_DIR "reconnect_delay_ms", "1000");
	sysfs_write(PARAM_DIR "loss_timeout_ms", "30000");
}

/*
 * Kernel log records so far that contain @what; -1 if the log cannot be
 * read to its end.  A read returns one whole record, up to 8 KiB once
 * escaped (the kernel's limit), or fails with EINVAL: the buffer fits
 * any record, so that no count stops short at a long one.
 */
static int kmsg_count(const char *what)
{
	static char rec[8192 + 1];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK), n = 0;
	ssize_t len;

	if (fd < 0)
		return -1;
	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (len <= 0)
			break;
		rec[len] = '\0';
		n += strstr(rec, what) != NULL;
	}
	if (len < 0 && errno != EAGAIN)
		n = -1;
	close(fd);
	return n;
}

static unsigned int test_port(void)
{
	return 9400 + getpid() % 500;
}

FIXTURE(fault) {
	int fd;
	bool skip, attached;
	struct memd memd;
	struct cider_attach at;
	__u64 word;		/* a data-area word: ours */
};

FIXTURE_SETUP(fault)
{
	struct cider_mn_sb sb;
	struct cider_raw_op op;

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	self->skip = !getenv("CIDER_MN_ADDR") || access(FAULT_DIR, F_OK);
	if (self->skip)
		return;
	knobs_off();
	ASSERT_EQ(0, memd_start(&self->memd, "16M", test_port()))
		TH_LOG("cider-memd did not start; log %s", self->memd.log);
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &self->at));
	self->attached = true;
	op = op_rw(CIDER_RAW_READ, 0, &sb, sizeof(sb));
	ASSERT_EQ(0, cider_raw(self->fd, self->at.mn_id, &op, 1));
	self->word = sb.data_off + 4096;
}

FIXTURE_TEARDOWN(fault)
{
	if (!self->skip) {
		knobs_off();
		if (self->attached)
			cider_detach(self->fd, self->at.mn_id);
		memd_stop(&self->memd, SIGTERM);
	}
	close(self->fd);
}

#define NEED() do { if (self->skip) SKIP(return, "no CIDER_MN_ADDR or no " FAULT_DIR); } while (0)

/* Detach, attach again (the fault is gone), and read the word. */
static int reattach_and_read(struct __test_metadata *_metadata,
			     FIXTURE_DATA(fault) *self, __u64 *v)
{
	struct cider_raw_op op;

	EXPECT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	self->attached = false;
	if (cider_attach(self->fd, self->memd.addr, 3, 0, &self->at))
		return -1;
	self->attached = true;
	op = op_rw(CIDER_RAW_READ, self->word, v, 8);
	return cider_raw(self->fd, self->at.mn_id, &op, 1);
}

static int set_word(FIXTURE_DATA(fault) *self, __u64 v)
{
	struct cider_raw_op op = op_rw(CIDER_RAW_WRITE, self->word, &v, 8);

	return cider_raw(self->fd, self->at.mn_id, &op, 1);
}

/*
 * Upstream mlx5 refuses kernel atomics at post time.  Attach probes the
 * atomics first and alone, so the refusal ends it at once, with one log
 * line, and leaves nothing behind.  The knob refuses every atomic of the
 * device, as mlx5 would: the fixture's node, whose watchdog FAAs its
 * membership heartbeat, would be lost (and say so) if a tick fell in the
 * window, so it is detached first.
 */
TEST_F_TIMEOUT(fault, attach_refused_like_mlx5_fails_fast_with_one_line, 60)
{
	struct cider_attach at2;
	struct cider_mn_info mi;
	int before, lines;
	double t;

	NEED();
	ASSERT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	self->attached = false;
	before = kmsg_count("refuses atomic operations posted from the kernel");
	lines = kmsg_count("cider: ");
	ASSERT_EQ(0, knob("refuse_atomics", "1"));
	t = memd_now();
	EXPECT_EQ(-EOPNOTSUPP, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	t = memd_now() - t;
	TH_LOG("refused after %.3f s", t);
	EXPECT_GT(5.0, t);
	EXPECT_EQ(before + 1, kmsg_count("refuses atomic operations posted from the kernel"));
	EXPECT_EQ(lines + 1, kmsg_count("cider: "));	/* that line and no other */
	/* Nothing was left listed. */
	EXPECT_EQ(-ENOENT, cider_mn_info(self->fd, 0, &mi));
	ASSERT_EQ(0, knob("refuse_atomics", "0"));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	EXPECT_EQ(0, cider_detach(self->fd, at2.mn_id));
}

/* A device returning atomic results byte-swapped is caught at attach. */
TEST_F_TIMEOUT(fault, byte_swapped_atomic_results_are_caught, 60)
{
	struct cider_attach at2;
	int before;

	NEED();
	before = kmsg_count("returns atomic results byte-swapped");
	ASSERT_EQ(0, knob("swab_atomics", "1"));
	EXPECT_EQ(-EOPNOTSUPP, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	EXPECT_EQ(before + 1, kmsg_count("returns atomic results byte-swapped"));
}

/*
 * Like mlx5 on a mixed batch: the READ goes to the NIC (unsignalled), the
 * FAA is refused.  The batch still finishes: the READ delivered nothing,
 * the FAA did not execute, and the node is dead with the reason.
 */
TEST_F_TIMEOUT(fault, refusal_after_a_posted_read_finishes_the_batch, 60)
{
	struct cider_raw_op op[2];
	struct cider_mn_info mi;
	__u64 r = 0xabababababababab, v;

	NEED();
	ASSERT_EQ(0, set_word(self, 5));
	ASSERT_EQ(0, knob("refuse_atomics", "1"));
	op[0] = op_rw(CIDER_RAW_READ, self->word, &r, 8);
	op[1] = op_faa(self->word, 1);
	op[1].old = 0x5a5a;
	EXPECT_EQ(-EOPNOTSUPP, cider_raw(self->fd, self->at.mn_id, op, 2));
	EXPECT_EQ(-EOPNOTSUPP, op[0].result);
	EXPECT_EQ(-EOPNOTSUPP, op[1].result);
	EXPECT_EQ(0xabababababababab, r);	/* not overwritten */
	EXPECT_EQ(0x5a5a, op[1].old);		/* not reported as 0 */
	ASSERT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &mi));
	EXPECT_EQ(CIDER_MN_DEAD, mi.state);
	EXPECT_EQ(-EOPNOTSUPP, mi.dead_reason);
	/* Later operations never reach the NIC and say why. */
	op[0] = op_faa(self->word, 1);
	EXPECT_EQ(-EOPNOTSUPP, cider_raw(self->fd, self->at.mn_id, op, 1));
	EXPECT_EQ(-EOPNOTSUPP, op[0].result);
	ASSERT_EQ(0, knob("refuse_atomics", "0"));
	ASSERT_EQ(0, reattach_and_read(_metadata, self, &v));
	EXPECT_EQ(5, v);
}

/*
 * ib_post_send() fails at the third WR of a batch after the first two
 * were posted: those two may have executed (-ECOMM), the others did not
 * (the post's error), and the word proves it.  The first may also be
 * reported done (0): if its acknowledgment arrived before the drain, the
 * drain flushes only the second, whose completion accounts the first
 * (seen on 6.12's rxe).  Nothing after the second was posted to account
 * it, so the second is never reported done.
 */
TEST_F_TIMEOUT(fault, partial_post_reports_every_operation_truthfully, 60)
{
	struct cider_raw_op op[4];
	__u64 r = 0xcdcdcdcdcdcdcdcd, v = ~0ULL;

	NEED();
	ASSERT_EQ(0, set_word(self, 0));
	ASSERT_EQ(0, knob("post_fail_at", "2"));
	ASSERT_EQ(0, knob("post_fail_times", "1"));
	op[0] = op_faa(self->word, 1);
	op[1] = op_faa(self->word, 2);
	op[2] = op_faa(self->word, 4);
	op[3] = op_rw(CIDER_RAW_READ, self->word, &r, 8);
	EXPECT_EQ(-ECOMM, cider_raw(self->fd, self->at.mn_id, op, 4));
	EXPECT_TRUE(op[0].result == -ECOMM || op[0].result == 0) {
		TH_LOG("first FAA: %d", op[0].result);
	}
	EXPECT_EQ(-ECOMM, op[1].result);
	EXPECT_EQ(-ENOMEM, op[2].result);
	EXPECT_EQ(-ENOMEM, op[3].result);
	EXPECT_EQ(0xcdcdcdcdcdcdcdcd, r);
	ASSERT_EQ(0, reattach_and_read(_metadata, self, &v));
	TH_LOG("word after the partial post: %llu", (unsigned long long)v);
	/* In order: nothing, the first, or both; never the unposted third. */
	EXPECT_TRUE(v == 0 || v == 1 || v == 3);
	if (!op[0].result)
		EXPECT_NE(0, v);	/* reported done: it executed */
}

/* A continuous io_uring load of single FAAs, reaped to the end. */
struct load {
	int fd;
	unsigned int mn;
	__u64 word;
	volatile bool stop;
	unsigned int ok, unknown, not_executed, other, outstanding;
	int other_err;
};

static void *load_thread(void *p)
{
	enum { DEPTH = 16 };
	struct __kernel_timespec ts = { .tv_nsec = 50 * 1000 * 1000 };
	struct cider_raw_op ops[DEPTH];
	unsigned int free_slot[DEPTH], nfree = DEPTH, inflight = 0, i;
	struct load *l = p;
	struct io_uring ring;
	double end = 0;
	bool failed = false;

	if (cider_uring_init(&ring, DEPTH))
		return NULL;
	for (i = 0; i < DEPTH; i++)
		free_slot[i] = i;
	for (;;) {
		struct io_uring_cqe *cqe;

		for (; !failed && !l->stop && nfree; inflight++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			unsigned int k = free_slot[--nfree];

			ops[k] = op_faa(l->word, 1);
			cider_uring_prep_raw(sqe, l->fd, l->mn, &ops[k], 1);
			io_uring_sqe_set_data64(sqe, k);
		}
		io_uring_submit(&ring);
		if ((failed || l->stop) && !end)
			end = memd_now() + 15;
		if (end && (!inflight || memd_now() > end))
			break;
		if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
			continue;
		inflight--;
		i = (unsigned int)io_uring_cqe_get_data64(cqe);
		free_slot[nfree++] = i;
		/* The CQE's result and the op's own must agree. */
		if (cqe->res == 0 && ops[i].result == 0) {
			l->ok++;
		} else if (cqe->res == -ECOMM && ops[i].result == -ECOMM) {
			l->unknown++;
		} else if (cqe->res == ops[i].result &&
			   (cqe->res == -ENOMEM || cqe->res == -ENOTCONN)) {
			l->not_executed++;
		} else {
			l->other++;
			l->other_err = cqe->res;
		}
		failed |= cqe->res != 0;
		io_uring_cqe_seen(&ring, cqe);
	}
	l->outstanding = inflight;
	io_uring_queue_exit(&ring);
	return NULL;
}

/*
 * Mid-load, one post fails: every command completes, each with a true
 * status, and the word counts every FAA that succeeded, none that was
 * not executed, and some of those whose outcome is unknown.
 */
TEST_F_TIMEOUT(fault, partial_post_mid_load_fails_only_the_affected_operations, 90)
{
	struct load l = { .fd = self->fd, .mn = self->at.mn_id };
	struct cider_mn_info mi;
	pthread_t th;
	double end;
	__u64 v;

	NEED();
	l.word = self->word;
	ASSERT_EQ(0, set_word(self, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, load_thread, &l));
	for (end = memd_now() + 20; l.ok < 300 && memd_now() < end; )
		usleep(10000);
	ASSERT_LE(300, l.ok);
	ASSERT_EQ(0, knob("post_fail_at", "0"));
	ASSERT_EQ(0, knob("post_fail_times", "1"));
	pthread_join(th, NULL);
	TH_LOG("%u ok, %u unknown, %u not executed, %u other (%d), %u outstanding",
	       l.ok, l.unknown, l.not_executed, l.other, l.other_err, l.outstanding);
	EXPECT_EQ(0, l.outstanding);
	EXPECT_EQ(0, l.other);
	EXPECT_LE(1, l.not_executed);
	ASSERT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &mi));
	EXPECT_EQ(CIDER_MN_DEAD, mi.state);
	EXPECT_EQ(-ENOMEM, mi.dead_reason);
	ASSERT_EQ(0, reattach_and_read(_metadata, self, &v));
	TH_LOG("word %llu", (unsigned long long)v);
	EXPECT_LE(l.ok, v);
	EXPECT_GE(l.ok + l.unknown, v);
}

/*
 * A lost completion: only the watchdog can end the batch.  It does so
 * within op_timeout_ms and a watchdog period; the FAA's outcome is
 * unknown and the node died of ETIMEDOUT (reconnecting is off: its own
 * tests follow).
 */
TEST_F_TIMEOUT(fault, lost_completion_ends_by_the_watchdog, 60)
{
	struct cider_raw_op op[2];
	struct cider_mn_info mi;
	__u64 r = 7;
	double t;

	NEED();
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "loss_timeout_ms", "0"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "keepalive_ms", "600000"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "1000"));
	ASSERT_EQ(0, knob("drop_cqes", "1"));
	op[0] = op_rw(CIDER_RAW_READ, self->word, &r, 8);
	op[1] = op_faa(self->word, 1);
	t = memd_now();
	EXPECT_EQ(-ECOMM, cider_raw(self->fd, self->at.mn_id, op, 2));
	t = memd_now() - t;
	TH_LOG("ended after %.3f s", t);
	EXPECT_LT(0.9, t);
	EXPECT_GT(3.0, t);
	EXPECT_EQ(-ETIMEDOUT, op[0].result);
	EXPECT_EQ(-ECOMM, op[1].result);
	EXPECT_EQ(7, r);
	ASSERT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &mi));
	EXPECT_EQ(CIDER_MN_DEAD, mi.state);
	EXPECT_EQ(-ETIMEDOUT, mi.dead_reason);
}

/*
 * An idle node's death is noticed: the keep-alive READ of an idle
 * channel never completes (its completion is dropped, as when the node
 * has silently gone), and the watchdog declares the node lost within
 * keepalive_ms + op_timeout_ms + a watchdog period.
 */
TEST_F_TIMEOUT(fault, an_idle_node_is_noticed_dead, 60)
{
	struct cider_mn_info mi;
	double t, end;

	NEED();
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "loss_timeout_ms", "0"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "keepalive_ms", "500"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "1000"));
	ASSERT_EQ(0, knob("drop_cqes", "1"));
	t = memd_now();
	for (end = t + 10; memd_now() < end; usleep(50 * 1000)) {
		ASSERT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &mi));
		if (mi.state == CIDER_MN_DEAD)
			break;
	}
	t = memd_now() - t;
	TH_LOG("dead after %.3f s idle", t);
	EXPECT_EQ(CIDER_MN_DEAD, mi.state);
	EXPECT_EQ(-ETIMEDOUT, mi.dead_reason);
	EXPECT_GT(3.0, t);
}

/*
 * A waiter killed while its batch is outstanding goes at once; the batch
 * outlives it and detach still ends it.
 */
TEST_F_TIMEOUT(fault, a_waiting_ioctl_is_killable, 60)
{
	int status;
	pid_t pid;
	double t;

	NEED();
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "keepalive_ms", "600000"));
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "60000"));
	ASSERT_EQ(0, knob("drop_cqes", "1"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct cider_raw_op op = op_faa(self->word, 1);

		cider_raw(self->fd, self->at.mn_id, &op, 1);
		_exit(0);
	}
	usleep(500 * 1000);
	t = memd_now();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	while (waitpid(pid, &status, WNOHANG) != pid && memd_now() - t < 5)
		usleep(10000);
	t = memd_now() - t;
	TH_LOG("reaped %.3f s after SIGKILL", t);
	EXPECT_GT(1.0, t);
	if (t >= 5)
		waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFSIGNALED(status));
	t = memd_now();
	EXPECT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	self->attached = false;
	EXPECT_GT(5.0, memd_now() - t);
}

/* io_uring passes IORING_URING_CMD_FIXED through; the module refuses it. */
TEST_F(fault, unknown_uring_cmd_flags_are_refused)
{
	struct cider_raw_op op;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	struct iovec iov = { .iov_len = 4096 };

	NEED();
	/* Anonymous memory: io_uring refuses to register file-backed pages. */
	iov.iov_base = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, iov.iov_base);
	op = op_faa(self->word, 1);
	ASSERT_EQ(0, cider_uring_init(&ring, 4));
	ASSERT_EQ(0, io_uring_register_buffers(&ring, &iov, 1));
	sqe = io_uring_get_sqe(&ring);
	cider_uring_prep_raw(sqe, self->fd, self->at.mn_id, &op, 1);
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = 0;
	ASSERT_EQ(1, io_uring_submit_and_wait(&ring, 1));
	ASSERT_EQ(0, io_uring_peek_cqe(&ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	munmap(iov.iov_base, 4096);
}

/* Module parameters are range-checked when written. */
TEST_F(fault, parameters_are_range_checked)
{
	NEED();
	EXPECT_EQ(-EINVAL, sysfs_write(PARAM_DIR "op_timeout_ms", "0"));
	EXPECT_EQ(-EINVAL, sysfs_write(PARAM_DIR "op_timeout_ms", "600001"));
	EXPECT_EQ(-EINVAL, sysfs_write(PARAM_DIR "op_timeout_ms", "-1"));
	EXPECT_EQ(-EINVAL, sysfs_write(PARAM_DIR "keepalive_ms", "0"));
	EXPECT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "100"));
	EXPECT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "10000"));
	EXPECT_EQ(-EINVAL, sysfs_write(PARAM_DIR "reconnect_delay_ms", "99"));
	EXPECT_EQ(-EINVAL, sysfs_write(PARAM_DIR "loss_timeout_ms", "3600001"));
	EXPECT_EQ(0, sysfs_write(PARAM_DIR "loss_timeout_ms", "0"));
	EXPECT_EQ(0, sysfs_write(PARAM_DIR "loss_timeout_ms", "30000"));
}

/* A synchronous failure to resolve the address fails the attach at once. */
TEST_F_TIMEOUT(fault, attach_fails_at_once_when_resolution_fails_at_once, 60)
{
	double t;
	int ret;

	NEED();
	t = memd_now();
	/* No IPv6 route in the VM: rdma_resolve_addr() fails synchronously. */
	ret = cider_attach(self->fd, "[2001:db8::1]:7471", 1, 5000, NULL);
	t = memd_now() - t;
	TH_LOG("%d after %.3f s", ret, t);
	EXPECT_NE(0, ret);
	EXPECT_GT(1.0, t);
}

struct slow_attach {
	int fd;
	const char *addr;
	int ret;
	double took;
	bool keep;		/* leave it attached, in at */
	unsigned int timeout_ms;	/* 0: 8000 */
	struct cider_attach at;
};

static void *slow_attach_thread(void *p)
{
	struct slow_attach *a = p;
	struct cider_attach at;
	double t = memd_now();

	a->ret = cider_attach(a->fd, a->addr, 5, a->timeout_ms ?: 8000, &at);
	a->took = memd_now() - t;
	a->at = at;
	if (!a->ret && !a->keep)
		cider_detach(a->fd, at.mn_id);
	return NULL;
}

/*
 * An attach waiting on a node that does not answer (its daemon stopped
 * before it could accept) holds nothing global: MN_INFO and another
 * node's detach go through at once.
 */
TEST_F_TIMEOUT(fault, a_slow_attach_blocks_nobody, 60)
{
	struct slow_attach a = { .fd = self->fd };
	struct cider_mn_info mi;
	struct memd stopped;
	pthread_t th;
	double t;

	NEED();
	ASSERT_EQ(0, memd_start(&stopped, "16M", test_port() + 500));
	ASSERT_EQ(0, kill(stopped.pid, SIGSTOP));
	a.addr = stopped.addr;
	ASSERT_EQ(0, pthread_create(&th, NULL, slow_attach_thread, &a));
	usleep(300 * 1000);
	t = memd_now();
	EXPECT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &mi));
	EXPECT_GT(0.5, memd_now() - t) TH_LOG("MN_INFO took %.3f s", memd_now() - t);
	t = memd_now();
	EXPECT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	self->attached = false;
	EXPECT_GT(0.5, memd_now() - t) TH_LOG("detach took %.3f s", memd_now() - t);
	pthread_join(th, NULL);
	TH_LOG("the slow attach: %d after %.3f s", a.ret, a.took);
	EXPECT_NE(0, a.ret);
	EXPECT_LT(1.0, a.took);		/* it really was slow */
	kill(stopped.pid, SIGCONT);
	memd_stop(&stopped, SIGKILL);
}

/* The node's hello and its superblock disagree on the region's size. */
TEST_F_TIMEOUT(fault, hello_and_superblock_sizes_must_agree, 60)
{
	struct cider_attach at2;
	struct cider_mn_info mi;
	int before;

	NEED();
	before = kmsg_count("does not match its hello");
	ASSERT_EQ(0, knob("hello_size_delta", "4096"));
	EXPECT_EQ(-EPROTO, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	EXPECT_EQ(before + 1, kmsg_count("does not match its hello"));
	EXPECT_EQ(-ENOENT, cider_mn_info(self->fd, self->at.mn_id + 1, &mi));
	ASSERT_EQ(0, knob("hello_size_delta", "0"));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	EXPECT_EQ(0, cider_detach(self->fd, at2.mn_id));
}

/*
 * A CM event that ends a connection, arriving during an attach (right
 * after a channel's ESTABLISHED), fails that attach with ENOTCONN and one
 * log line; nothing is left listed, and the next attach works.  The last
 * channel gets it: the probe runs on channel 0, so only the node's state
 * can tell.
 */
static void cm_event_during_attach(struct __test_metadata *_metadata,
				   FIXTURE_DATA(fault) *self, const char *event)
{
	struct cider_attach at2;
	struct cider_mn_info mi;
	char last[24];
	int lines;

	snprintf(last, sizeof(last), "%ld", sysconf(_SC_NPROCESSORS_ONLN) - 1);
	lines = kmsg_count("lost while attaching");
	ASSERT_EQ(0, knob("cm_event_channel", last));
	ASSERT_EQ(0, knob("cm_event", event));
	ASSERT_EQ(0, knob("cm_event_times", "1"));
	EXPECT_EQ(-ENOTCONN, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	EXPECT_EQ(lines + 1, kmsg_count("lost while attaching"));
	EXPECT_EQ(-ENOENT, cider_mn_info(self->fd, self->at.mn_id + 1, &mi));
	knobs_off();
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	EXPECT_EQ(0, cider_detach(self->fd, at2.mn_id));
}

TEST_F_TIMEOUT(fault, disconnected_during_attach_fails_the_attach, 60)
{
	NEED();
	cm_event_during_attach(_metadata, self, "10");	/* DISCONNECTED */
}

/* rxe never moves an address; bonding fail-over would. */
TEST_F_TIMEOUT(fault, addr_change_during_attach_fails_the_attach, 60)
{
	NEED();
	cm_event_during_attach(_metadata, self, "14");	/* ADDR_CHANGE */
}

/* An event the module does not expect is ignored and logged once. */
TEST_F_TIMEOUT(fault, unexpected_cm_events_are_logged_once_and_ignored, 60)
{
	struct cider_attach at2;
	struct cider_raw_op op;
	__u64 v;
	int before;

	NEED();
	before = kmsg_count("unexpected CM event multicast join");
	ASSERT_EQ(0, knob("cm_event", "12"));	/* MULTICAST_JOIN */
	/* Every channel of the attach gets one (the VM has at least two). */
	ASSERT_EQ(0, knob("cm_event_times", "64"));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	knobs_off();
	TH_LOG("%u channels", at2.nr_channels);
	EXPECT_EQ(before ? before : 1, kmsg_count("unexpected CM event multicast join"));
	op = op_rw(CIDER_RAW_READ, self->word, &v, 8);
	EXPECT_EQ(0, cider_raw(self->fd, at2.mn_id, &op, 1));
	EXPECT_EQ(0, cider_detach(self->fd, at2.mn_id));
}

static int cpu_set_online(int cpu, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return sysfs_write(path, on ? "1" : "0");
}

struct pinned {
	int fd, cpu, ok, ran_on;
	__u32 mn;
	__u64 word;
};

static void *pinned_faa_thread(void *p)
{
	struct pinned *a = p;
	struct cider_raw_op op;
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		return NULL;
	for (i = 0; i < 100; i++) {
		op = op_faa(a->word, 1);
		a->ok += !cider_raw(a->fd, a->mn, &op, 1) && !op.result;
	}
	a->ran_on = sched_getcpu();
	return NULL;
}

/*
 * One channel per CPU online at attach; a CPU plugged in later has a
 * channel too (it shares one) and submits like any other.
 */
TEST_F_TIMEOUT(fault, channels_follow_online_cpus_and_a_later_cpu_submits, 60)
{
	int last = sysconf(_SC_NPROCESSORS_CONF) - 1, online, ret;
	struct pinned a = { .fd = self->fd, .word = self->word };
	struct cider_attach at2;
	struct cider_raw_op op;
	char path[64];
	pthread_t th;
	__u64 v0, v1;

	NEED();
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", last);
	if (last < 1 || access(path, W_OK))
		SKIP(return, "one CPU, or CPU %d cannot go offline", last);
	ASSERT_EQ(0, cpu_set_online(last, 0));
	online = sysconf(_SC_NPROCESSORS_ONLN);
	ret = cider_attach(self->fd, self->memd.addr, 6, 5000, &at2);
	ASSERT_EQ(0, cpu_set_online(last, 1));
	ASSERT_EQ(0, ret);
	TH_LOG("%d CPUs, %d online at attach: %u channels", last + 1, online,
	       at2.nr_channels);
	EXPECT_EQ(online, (int)at2.nr_channels);
	op = op_rw(CIDER_RAW_READ, self->word, &v0, 8);
	ASSERT_EQ(0, cider_raw(self->fd, at2.mn_id, &op, 1));
	a.cpu = last;
	a.mn = at2.mn_id;
	ASSERT_EQ(0, pthread_create(&th, NULL, pinned_faa_thread, &a));
	pthread_join(th, NULL);
	EXPECT_EQ(last, a.ran_on);
	EXPECT_EQ(100, a.ok);
	op = op_rw(CIDER_RAW_READ, self->word, &v1, 8);
	ASSERT_EQ(0, cider_raw(self->fd, at2.mn_id, &op, 1));
	EXPECT_EQ(v0 + 100, v1);
	EXPECT_EQ(0, cider_detach(self->fd, at2.mn_id));
}

/*
 * The node is lost while its attach builds the KV store (its daemon dies
 * with a shard allocated, not yet set up): the node's kill runs then and
 * must find no store or a whole one.  The attach fails, nothing is left
 * listed, the kernel log has no oops (run-in-vm checks), and the next
 * attach works.
 */
TEST_F_TIMEOUT(fault, node_lost_while_its_store_is_built, 60)
{
	struct slow_attach a = { .fd = self->fd };
	struct cider_attach at2;
	struct cider_mn_info mi;
	struct memd dying;
	pthread_t th;

	NEED();
	ASSERT_EQ(0, memd_start(&dying, "16M", test_port() + 500));
	ASSERT_EQ(0, knob("store_delay_ms", "1500"));
	a.addr = dying.addr;
	ASSERT_EQ(0, pthread_create(&th, NULL, slow_attach_thread, &a));
	usleep(700 * 1000);	/* connected and probed under TCG: in the delay */
	memd_stop(&dying, SIGKILL);
	pthread_join(th, NULL);
	knobs_off();
	TH_LOG("attach: %d after %.3f s", a.ret, a.took);
	EXPECT_NE(0, a.ret);
	EXPECT_LT(1.0, a.took) TH_LOG("the attach did not reach the store's delay");
	EXPECT_EQ(-ENOENT, cider_mn_info(self->fd, self->at.mn_id + 1, &mi));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 4, 5000, &at2));
	EXPECT_EQ(0, cider_detach(self->fd, at2.mn_id));
}

/*
 * Device removal while an attach is taking the device's resources: the
 * CM handler of the attach's first channel sleeps (cm_delay_ms) across
 * the moment .remove looks for nodes on the device, and .remove sleeps
 * (remove_delay_ms) before checking that nobody uses the device's PD.
 * The attach must fail with ENODEV, nothing may use the PD (no WARNING),
 * and the device comes back usable.  Takes rxe0 away: near the end.
 */
TEST_F_TIMEOUT(fault, device_removal_during_an_attach_is_clean, 180)
{
	struct slow_attach a = { .fd = self->fd, .addr = self->memd.addr, .keep = true,
				 .timeout_ms = 30000 };
	struct cider_mn_info mi;
	struct cider_raw_op op;
	int warnings;
	pthread_t th;
	double t;
	__u64 v;

	NEED();
	warnings = kmsg_count("WARNING:");
	/*
	 * Long enough for the removal to reach .remove first even when the
	 * guest is slow to run `rdma link delete` (the debug kernel on a
	 * loaded host took 4 s: the attach won the race and the check failed).
	 */
	ASSERT_EQ(0, knob("cm_delay_ms", "8000"));
	ASSERT_EQ(0, knob("remove_delay_ms", "3000"));
	ASSERT_EQ(0, pthread_create(&th, NULL, slow_attach_thread, &a));
	usleep(500 * 1000);
	t = memd_now();
	EXPECT_EQ(0, system("rdma link delete rxe0"));
	t = memd_now() - t;
	pthread_join(th, NULL);
	knobs_off();
	TH_LOG("attach: %d after %.3f s; removal took %.3f s", a.ret, a.took, t);
	/* Had it attached, it would hold the PD of a removed device. */
	EXPECT_EQ(-ENODEV, a.ret);
	EXPECT_EQ(warnings, kmsg_count("WARNING:"));
	if (!a.ret)
		cider_detach(self->fd, a.at.mn_id);
	ASSERT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &mi));
	EXPECT_EQ(CIDER_MN_DEAD, mi.state);
	memd_stop(&self->memd, SIGTERM);
	ASSERT_EQ(0, system("tools/vm/rxe-up > /dev/null"));
	EXPECT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	self->attached = false;
	ASSERT_EQ(0, memd_start(&self->memd, "16M", test_port() + 700));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &self->at));
	self->attached = true;
	op = op_rw(CIDER_RAW_READ, 0, &v, 8);
	EXPECT_EQ(0, cider_raw(self->fd, self->at.mn_id, &op, 1));
}

/* Load-time parameters too: the send queue must hold the largest batch. */
TEST_F_TIMEOUT(fault, load_refuses_parameters_out_of_range, 60)
{
	NEED();
	if (!getenv("CIDER_KO"))
		SKIP(return, "CIDER_KO not set");
	ASSERT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	self->attached = false;
	close(self->fd);
	ASSERT_EQ(0, module_unload());
	EXPECT_EQ(-EINVAL, module_load_params("sq_depth=63"));
	EXPECT_EQ(-EINVAL, module_load_params("op_timeout_ms=0"));
	EXPECT_EQ(-EINVAL, module_load_params("credit_stable=0"));
	ASSERT_EQ(0, module_load_params(""));
	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
}

TEST_HARNESS_MAIN
