// SPDX-License-Identifier: GPL-2.0
/*
 * Device removal leaves nothing behind (debug kernel: kmemleak).
 *
 * rxe0 is removed while two processes keep raw batches or KV operations
 * in flight through io_uring and ioctl: one on the test's node, which
 * sees its operations fail and exits; one on a node it attached itself,
 * SIGKILLed while the removal runs (as when a test is killed by its time
 * limit halfway through one), its node left attached and DEAD until the
 * module's unload at the end of the VM run detaches it.  Both nodes must
 * be DEAD with ENODEV, and the test's detaches.  The leak check is the
 * guest's kmemleak scan after the run (tools/vm/guest-init), which fails
 * make check on any report: a scan here would take minutes under KASAN
 * and TCG.
 *
 * Needs cider.ko loaded and $CIDER_MN_ADDR; takes rxe0 away and brings it
 * back (tools/vm/rxe-up) before the next test; selftests/run-in-vm brings
 * it back before the next binary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "cider-uring.h"
#include "memd.h"


static unsigned int test_port(void)
{
	return 8400 + getpid() % 1000;
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
};

FIXTURE_VARIANT_ADD(removal, kv) { .kv = true };
FIXTURE_VARIANT_ADD(removal, raw) { .kv = false };

FIXTURE_SETUP(removal)
{
	const char *store[] = { "--index", "array", "--keys", "256", NULL };

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	self->skip = !getenv("CIDER_MN_ADDR");
	if (self->skip)
		return;
	/* The previous test took rxe0 away. */
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
	}
	close(self->fd);
}

static pid_t start_loader(struct loader *l, const char *own_node_addr)
{
	pid_t pid = fork();

	if (pid == 0)
		loader_main(l, own_node_addr);
	return pid;
}

TEST_F_TIMEOUT(removal, the_device_goes_under_load_and_a_loader_is_killed, 280)
{
	struct loader stays = { .fd = self->fd, .mn = self->at.mn_id, .kv = variant->kv };
	struct loader killed = stays;
	struct cider_mn_info mi;
	pid_t a, b, rm;
	int status;

	if (self->skip)
		SKIP(return, "CIDER_MN_ADDR not set");
	/* The last words of the region: clear of the store's structures. */
	stays.word = killed.word = self->at.region_size - 64;
	a = start_loader(&stays, NULL);
	ASSERT_LE(0, a);
	b = start_loader(&killed, self->memd.addr);
	ASSERT_LE(0, b);
	/* Under way: the second loader's node attached and loaded. */
	usleep(3000000);
	rm = fork();
	ASSERT_LE(0, rm);
	if (rm == 0) {
		execlp("rdma", "rdma", "link", "delete", "rxe0", NULL);
		_exit(127);
	}
	/* Mid-removal: its commands are in flight or being failed. */
	usleep(20000);
	kill(b, SIGKILL);
	ASSERT_EQ(a, waitpid(a, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("loader: %#x", status);
	ASSERT_EQ(b, waitpid(b, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status) || WIFEXITED(status)) TH_LOG("killed loader: %#x", status);
	ASSERT_EQ(rm, waitpid(rm, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("rdma link delete: %#x", status);
	ASSERT_EQ(0, cider_mn_info(self->fd, self->at.mn_id, &mi));
	ASSERT_EQ(self->at.mn_id, mi.mn_id);
	ASSERT_EQ(CIDER_MN_DEAD, mi.state);
	ASSERT_EQ(-ENODEV, mi.dead_reason);
	/* Its store or region refuses at once, with why. */
	if (variant->kv) {
		uint64_t key = 1, v = 2;

		ASSERT_EQ(-ENOTCONN, cider_put(self->fd, self->at.mn_id, &key, 8, &v, 8));
		ASSERT_EQ(-ENOTCONN, cider_get(self->fd, self->at.mn_id, &key, 8, &v, &(size_t){ 8 }));
	} else {
		struct cider_raw_op op = { .opcode = CIDER_RAW_FAA, .len = 8,
					   .remote = stays.word, .swap_add = 1 };

		ASSERT_EQ(-ENODEV, cider_raw(self->fd, self->at.mn_id, &op, 1));
		ASSERT_EQ(-ENODEV, op.result);
	}
	/* Every other node (the killed loader's, and earlier tests') too. */
	for (mi.mn_id = 0; cider_mn_info(self->fd, mi.mn_id, &mi) == 0; mi.mn_id++) {
		ASSERT_EQ(CIDER_MN_DEAD, mi.state) TH_LOG("mn%u", mi.mn_id);
	}
	memd_stop(&self->memd, SIGKILL);
	ASSERT_EQ(0, cider_detach(self->fd, self->at.mn_id));
}

TEST_HARNESS_MAIN
