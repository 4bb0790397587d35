// SPDX-License-Identifier: GPL-2.0
/*
 * Device removal leaves nothing behind (debug kernel: kmemleak).
 *
 * rxe0 is removed while a process keeps raw batches or KV operations in
 * flight through io_uring and ioctl; in some variants that process is
 * SIGKILLed while the removal runs, its own node left attached (as when
 * a test is killed by its time limit halfway through one: the module's
 * unload at the end of the run detaches it).  Afterwards the node is DEAD with ENODEV,
 * detaches, and a kmemleak scan finds no object cider.ko allocated and
 * lost.  rxe0 comes back (tools/vm/rxe-up) after each test.
 *
 * Needs cider.ko loaded and $CIDER_MN_ADDR; without kmemleak (the stock
 * kernel) the leak check is skipped and the rest still runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "cider-uring.h"
#include "memd.h"

#define KMEMLEAK "/sys/kernel/debug/kmemleak"
#define KEYS 256

static unsigned int test_port(void)
{
	return 8400 + getpid() % 1000;
}

/*
 * Unreferenced objects kmemleak attributes to cider.ko (a frame of its
 * backtrace in [cider]), after the scans it needs: an object is reported
 * once it is 5 s old and two scans found it unreferenced and unchanged.
 * The first such report goes to @first.  -1 without kmemleak.
 */
static int cider_leaks(char *first, size_t len)
{
	static char buf[1 << 20];
	char *obj, *next;
	ssize_t n, got = 0;
	int fd, leaks = 0;

	first[0] = '\0';
	if (access(KMEMLEAK, W_OK))
		return -1;
	sleep(6);
	for (int i = 0; i < 2; i++) {
		fd = open(KMEMLEAK, O_WRONLY);
		if (fd < 0 || write(fd, "scan", 4) != 4)
			return -1;
		close(fd);
	}
	fd = open(KMEMLEAK, O_RDONLY);
	if (fd < 0)
		return -1;
	while (got < (ssize_t)sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	for (obj = strstr(buf, "unreferenced object"); obj; obj = next) {
		next = strstr(obj + 1, "unreferenced object");
		if (next)
			next[-1] = '\0';
		if (strstr(obj, "[cider]")) {
			if (!leaks++)
				snprintf(first, len, "%s", obj);
		}
	}
	return leaks;
}

/* What the loader process keeps in flight until its node fails. */
struct loader {
	int fd;
	unsigned int mn;
	bool kv;
	__u64 word;		/* raw: the FAA target */
	volatile bool stop;
	unsigned int ok, failed;
};

/* io_uring at depth 16: FAA batches, or KV PUT and GET. */
static void *uring_loop(void *p)
{
	enum { DEPTH = 16 };
	struct __kernel_timespec ts = { .tv_nsec = 50 * 1000 * 1000 };
	struct cider_raw_op ops[DEPTH];
	uint64_t keys[DEPTH], vals[DEPTH];
	struct loader *l = p;
	struct io_uring ring;
	unsigned int i, inflight = 0, seq = 0;
	double end = 0;

	if (cider_uring_init(&ring, DEPTH))
		return NULL;
	for (;;) {
		struct io_uring_cqe *cqe;

		for (; !l->stop && inflight < DEPTH; inflight++, seq++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			i = seq % DEPTH;
			if (!sqe)
				break;
			if (!l->kv) {
				ops[i] = (struct cider_raw_op){ .opcode = CIDER_RAW_FAA, .len = 8,
								.remote = l->word, .swap_add = 1 };
				cider_uring_prep_raw(sqe, l->fd, l->mn, &ops[i], 1);
			} else if (seq % 2) {
				keys[i] = seq % 8;
				cider_uring_prep_get(sqe, l->fd, l->mn, &keys[i], 8, &vals[i], 8);
			} else {
				keys[i] = seq % 8;
				vals[i] = seq;
				cider_uring_prep_put(sqe, l->fd, l->mn, &keys[i], 8, &vals[i], 8);
			}
		}
		io_uring_submit(&ring);
		if (l->stop && !end)
			end = memd_now() + 15;
		if (end && (!inflight || memd_now() > end))
			break;
		if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
			continue;
		inflight--;
		if (cqe->res >= 0)
			l->ok++;
		else
			l->failed++;
		if (cqe->res < 0 && cqe->res != -ENOENT)
			l->stop = true;
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return NULL;
}

/* Synchronous calls alongside, until one fails. */
static void *ioctl_loop(void *p)
{
	struct loader *l = p;
	uint64_t key, v = 0;
	int ret;

	while (!l->stop) {
		if (!l->kv) {
			struct cider_raw_op op = { .opcode = CIDER_RAW_FAA, .len = 8,
						   .remote = l->word + 8, .swap_add = 1 };

			ret = cider_raw(l->fd, l->mn, &op, 1);
		} else {
			key = 8 + v % 8;
			ret = cider_put(l->fd, l->mn, &key, 8, &v, 8);
			v++;
		}
		if (ret)
			l->stop = true;
	}
	return NULL;
}

/*
 * The loader process: both loops until the node fails, at most 60 s.
 * With @addr it attaches a node of its own first, which nobody detaches
 * once it is killed: the module's unload at the end of the VM run does.
 */
static void loader_main(struct loader *l, const char *addr)
{
	struct cider_attach at;
	pthread_t a, b;

	alarm(60);
	if (addr) {
		if (cider_attach(l->fd, addr, 10, 0, &at))
			_exit(4);
		l->mn = at.mn_id;
	}
	pthread_create(&a, NULL, uring_loop, l);
	pthread_create(&b, NULL, ioctl_loop, l);
	pthread_join(a, NULL);
	l->stop = true;
	pthread_join(b, NULL);
	_exit(l->ok ? 0 : 3);
}

FIXTURE(removal) {
	int fd;
	bool skip;
	struct memd memd;
	struct cider_attach at;
};

FIXTURE_VARIANT(removal) {
	bool kv;		/* KV operations instead of raw batches */
	bool kill_loader;	/* SIGKILL the loader while the removal runs */
};

FIXTURE_VARIANT_ADD(removal, kv) { .kv = true, .kill_loader = false };
FIXTURE_VARIANT_ADD(removal, kv_loader_killed) { .kv = true, .kill_loader = true };
FIXTURE_VARIANT_ADD(removal, raw) { .kv = false, .kill_loader = false };
FIXTURE_VARIANT_ADD(removal, raw_loader_killed) { .kv = false, .kill_loader = true };

FIXTURE_SETUP(removal)
{
	const char *store[] = { "--index", "array", "--keys", "256", NULL };

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	self->skip = !getenv("CIDER_MN_ADDR");
	if (self->skip)
		return;
	ASSERT_EQ(0, system("tools/vm/rxe-up > /dev/null"));
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store))
		TH_LOG("cider-memd did not start; log %s", self->memd.log);
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 9, 0, &self->at));
}

FIXTURE_TEARDOWN(removal)
{
	if (!self->skip) {
		cider_detach(self->fd, self->at.mn_id);
		memd_stop(&self->memd, SIGKILL);
		/* rxe0 back for whatever runs next. */
		if (system("tools/vm/rxe-up > /dev/null"))
			TH_LOG("rxe-up failed");
	}
	close(self->fd);
}

TEST_F_TIMEOUT(removal, the_device_goes_under_load_and_nothing_leaks, 240)
{
	struct loader l = { .fd = self->fd, .mn = self->at.mn_id, .kv = variant->kv,
			    .word = 4 << 20 };
	struct cider_mn_info mi;
	char leak[2048];
	pid_t loader, rm;
	int status, leaks;

	if (self->skip)
		SKIP(return, "CIDER_MN_ADDR not set");
	/* The last page of the region: clear of the store's structures. */
	l.word = self->at.region_size - 64;
	loader = fork();
	ASSERT_LE(0, loader);
	if (loader == 0)
		loader_main(&l, variant->kill_loader ? self->memd.addr : NULL);
	/* Under way: its node attached and loaded. */
	usleep(variant->kill_loader ? 3000000 : 500000);
	rm = fork();
	ASSERT_LE(0, rm);
	if (rm == 0) {
		execlp("rdma", "rdma", "link", "delete", "rxe0", NULL);
		_exit(127);
	}
	if (variant->kill_loader) {
		/* Mid-removal: its commands are in flight or being failed. */
		usleep(20000);
		kill(loader, SIGKILL);
	}
	ASSERT_EQ(loader, waitpid(loader, &status, 0));
	if (variant->kill_loader) {
		ASSERT_TRUE(WIFSIGNALED(status) || WIFEXITED(status)) TH_LOG("status %#x", status);
	} else {
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("loader status %#x", status);
	}
	ASSERT_EQ(rm, waitpid(rm, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("rdma link delete: %#x", status);
	ASSERT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &mi));
	ASSERT_EQ(CIDER_MN_DEAD, mi.state);
	ASSERT_EQ(-ENODEV, mi.dead_reason);
	/* The killed loader's node, if it got one, is dead too and stays. */
	if (variant->kill_loader && cider_mn_info(self->fd, self->at.mn_id + 1, &mi) == 0) {
		ASSERT_EQ(CIDER_MN_DEAD, mi.state);
	}
	memd_stop(&self->memd, SIGKILL);
	ASSERT_EQ(0, cider_detach(self->fd, self->at.mn_id));
	ASSERT_EQ(0, system("tools/vm/rxe-up > /dev/null"));
	leaks = cider_leaks(leak, sizeof(leak));
	if (leaks < 0) {
		TH_LOG("no kmemleak in this kernel: leaks not checked");
	} else {
		ASSERT_EQ(0, leaks) TH_LOG("kmemleak: %d objects of cider.ko, the first:\n%s",
					   leaks, leak);
	}
}

TEST_HARNESS_MAIN
