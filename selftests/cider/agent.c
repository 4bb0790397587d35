// SPDX-License-Identifier: GPL-2.0
/*
 * The atomics agent (Documentation/datapath.rst, "The atomics agent"):
 * with the fault knob refuse_atomics on, the device refuses atomics posted
 * from the kernel as upstream mlx5 does, and a real cider-agentd runs them
 * on its own queue pairs to a real cider-memd.  An attach falls back to the
 * agent, KV works through it with no atomic on the kernel's channels, a
 * second or unprivileged agent is refused, killing the agent under load
 * ends every operation within its bound and lets go of the module, and a
 * restarted agent brings the node back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "kv8.h"
#include "memd.h"
#include "mnstat.h"
#include "sysfs.h"

#define PARAM_DIR	"/sys/module/cider/parameters/"
#define FAULT_DIR	"/sys/kernel/debug/cider/fault/"
#define OP_TIMEOUT_MS	1000
#define LOAD_THREADS	4

static unsigned int test_port(void)
{
	return 13000 + getpid() % 500;
}

struct agentd {
	pid_t pid;
	char log[64];
};

/* Start cider-agentd; 0 once it says it registered. */
static int agentd_start(struct agentd *a, unsigned int port)
{
	const char *bin = getenv("CIDER_AGENTD");
	struct memd m = {};

	if (!bin)
		bin = "tools/cider-agentd/cider-agentd";
	snprintf(a->log, sizeof(a->log), "/tmp/agentd-%u.log", port);
	unlink(a->log);
	a->pid = fork();
	if (a->pid < 0)
		return -1;
	if (a->pid == 0) {
		if (!freopen(a->log, "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(bin, bin, "--tags", "8", (char *)NULL);
		_exit(127);
	}
	/* memd.h's log waiter, on the agent's log and pid. */
	m.pid = a->pid;
	snprintf(m.log, sizeof(m.log), "%s", a->log);
	if (memd_wait_log(&m, "cider-agentd: registered:", 30) == 0)
		return 0;
	memd_print_log(&m);
	kill(a->pid, SIGKILL);
	waitpid(a->pid, NULL, 0);
	a->pid = 0;
	return -1;
}

static void agentd_kill(struct agentd *a, int sig)
{
	if (a->pid <= 0)
		return;
	kill(a->pid, sig);
	waitpid(a->pid, NULL, 0);
	a->pid = 0;
}

static int module_refcnt(void)
{
	char buf[32];

	if (sysfs_read("/sys/module/cider/refcnt", buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

/* Attach @addr with attach flags @flags: 0 or -errno. */
static int attach_flags(int fd, const char *addr, unsigned int flags, struct cider_attach *at)
{
	memset(at, 0, sizeof(*at));
	at->size = sizeof(*at);
	if (cider_parse_addr(addr, at))
		return -EINVAL;
	at->cn_id = 5;
	at->flags = flags;
	return ioctl(fd, CIDER_IOC_ATTACH, at) < 0 ? -errno : 0;
}

static int mn_state(int fd, unsigned int mn, unsigned int *atomics)
{
	struct cider_mn_info mi;

	if (cider_mn_info(fd, mn, &mi) || mi.mn_id != mn)
		return -1;
	if (atomics)
		*atomics = mi.atomics;
	return (int)mi.state;
}

FIXTURE(agent) {
	int fd;
	bool skip;
	bool attached;
	int refcnt0;
	struct memd memd;
	struct agentd agentd;
	struct cider_attach at;
};

FIXTURE_SETUP(agent)
{
	const char *store[] = { "--index", "array", "--keys", "256", "--mode", "cider",
				"--lease-ms", "50", NULL };

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	/* Not where every test runs in agent mode: that agent is the run's. */
	self->skip = !getenv("CIDER_MN_ADDR") || getenv("CIDER_ATOMICS");
	if (self->skip)
		return;
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "op_timeout_ms", "1000"));
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store))
		TH_LOG("cider-memd did not start; log %s", self->memd.log);
	self->refcnt0 = module_refcnt();
	ASSERT_EQ(0, sysfs_write(FAULT_DIR "refuse_atomics", "1"));
	ASSERT_EQ(0, agentd_start(&self->agentd, test_port()))
		TH_LOG("cider-agentd did not register; log %s", self->agentd.log);
}

FIXTURE_TEARDOWN(agent)
{
	if (!self->skip) {
		if (self->attached)
			cider_detach(self->fd, self->at.mn_id);
		agentd_kill(&self->agentd, SIGTERM);
		memd_stop(&self->memd, SIGTERM);
	}
	sysfs_write(FAULT_DIR "refuse_atomics", "0");
	sysfs_write(FAULT_DIR "agent_delay_ms", "0");
	sysfs_write(PARAM_DIR "op_timeout_ms", "10000");
	close(self->fd);
}

#define NEED_MN() do { if (self->skip) SKIP(return, "no CIDER_MN_ADDR, or in agent mode"); } while (0)

TEST_F(agent, an_attach_the_device_refuses_goes_through_the_agent)
{
	unsigned int atomics = 0;
	uint64_t k, v;

	NEED_MN();
	/* Only the kernel's atomics: refused, as on upstream mlx5. */
	EXPECT_EQ(-EOPNOTSUPP, attach_flags(self->fd, self->memd.addr,
					    CIDER_ATTACH_ATOMICS_KERNEL, &self->at));
	/* Automatic: refused by the device, then through the agent. */
	ASSERT_EQ(0, attach_flags(self->fd, self->memd.addr, 0, &self->at));
	self->attached = true;
	ASSERT_EQ(CIDER_MN_LIVE, mn_state(self->fd, self->at.mn_id, &atomics));
	EXPECT_EQ(CIDER_MN_ATOMICS_AGENT, atomics);
	for (k = 0; k < 64; k++)
		ASSERT_EQ(0, put8(self->fd, self->at.mn_id, k, k * 7 + 1));
	for (k = 0; k < 64; k++) {
		ASSERT_EQ(0, get8(self->fd, self->at.mn_id, k, &v));
		ASSERT_EQ(k * 7 + 1, v);
	}
	/* Every atomic went through the agent, none through a channel. */
	EXPECT_LT(64, stat_of(self->fd, self->at.mn_id, "agent_batches"));
	EXPECT_EQ(0, stat_of(self->fd, self->at.mn_id, "chan_cas"));
	EXPECT_EQ(0, stat_of(self->fd, self->at.mn_id, "chan_faa"));
	EXPECT_EQ(0, stat_of(self->fd, self->at.mn_id, "agent_failed"));
	EXPECT_LT(0, stat_of(self->fd, self->at.mn_id, "chan_read"));
}

TEST_F(agent, a_second_or_unprivileged_or_malformed_agent_is_refused)
{
	struct cider_agent_reg reg = { .size = sizeof(reg), .nr_tags = 4,
				       .buf_len = CIDER_AGENT_MIN_BUF };
	int fd = cider_open(), status;
	pid_t pid;

	NEED_MN();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, CIDER_IOC_AGENT_REGISTER, &reg));
	EXPECT_EQ(EBUSY, errno);
	reg.nr_tags = 0;
	EXPECT_EQ(-1, ioctl(fd, CIDER_IOC_AGENT_REGISTER, &reg));
	EXPECT_EQ(EINVAL, errno);
	reg.nr_tags = 4;
	reg.buf_len = CIDER_AGENT_MIN_BUF - 8;
	EXPECT_EQ(-1, ioctl(fd, CIDER_IOC_AGENT_REGISTER, &reg));
	EXPECT_EQ(EINVAL, errno);
	reg.buf_len = CIDER_AGENT_MIN_BUF;
	reg.reserved[1] = 1;
	EXPECT_EQ(-1, ioctl(fd, CIDER_IOC_AGENT_REGISTER, &reg));
	EXPECT_EQ(EINVAL, errno);
	reg.reserved[1] = 0;
	/* Root's open file, without the capability. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2] = {};

		if (syscall(SYS_capset, &h, d))
			_exit(10);
		if (ioctl(fd, CIDER_IOC_AGENT_REGISTER, &reg) != -1 || errno != EPERM)
			_exit(11);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("step %d failed", WEXITSTATUS(status));
	close(fd);
}

struct load {
	int fd;
	unsigned int mn;
	unsigned int id;
	volatile bool *stop;
	double failed_at;	/* first failure after the kill */
	int err;
	unsigned long ops;
};

/* PUTs until the first failure, or until told to stop. */
static void *load_run(void *arg)
{
	struct load *l = arg;
	uint64_t k = l->id;
	int ret;

	while (!*l->stop) {
		ret = put8(l->fd, l->mn, k % 256, k);
		if (ret) {
			l->failed_at = memd_now();
			l->err = -ret;
			break;
		}
		l->ops++;
		k += LOAD_THREADS;
	}
	return NULL;
}

TEST_F(agent, killing_the_agent_under_load_ends_every_operation_by_its_bound)
{
	struct load l[LOAD_THREADS];
	pthread_t th[LOAD_THREADS];
	volatile bool stop = false;
	double killed, end;
	unsigned int i;
	uint64_t v;
	int st;

	NEED_MN();
	ASSERT_EQ(0, attach_flags(self->fd, self->memd.addr, 0, &self->at));
	self->attached = true;
	for (i = 0; i < LOAD_THREADS; i++) {
		l[i] = (struct load){ .fd = self->fd, .mn = self->at.mn_id, .id = i, .stop = &stop };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, load_run, &l[i]));
	}
	usleep(500000);
	killed = memd_now();
	agentd_kill(&self->agentd, SIGKILL);
	/* Every operation in flight ends: the agent's batches "outcome unknown". */
	for (i = 0; i < LOAD_THREADS; i++)
		pthread_join(th[i], NULL);
	end = memd_now();
	for (i = 0; i < LOAD_THREADS; i++) {
		TH_LOG("thread %u: %lu PUTs, then %s after %.3f s", i, l[i].ops,
		       strerror(l[i].err), l[i].failed_at - killed);
		EXPECT_LT(0, l[i].ops);
		EXPECT_NE(0, l[i].err);
	}
	/* The bound of an operation: 2 x op_timeout_ms, with room for TCG. */
	EXPECT_GT(2.0 * OP_TIMEOUT_MS / 1000 + 2, end - killed);
	/*
	 * The node was lost; nothing of the dead agent pins the module once
	 * its ring is gone (from 6.10 io_uring frees it from a worker, a
	 * moment after the process).
	 */
	st = mn_state(self->fd, self->at.mn_id, NULL);
	EXPECT_TRUE(st == CIDER_MN_RECONNECTING || st == CIDER_MN_DEAD) TH_LOG("state %d", st);
	for (end = memd_now() + 10; memd_now() < end && module_refcnt() != self->refcnt0; )
		usleep(20000);
	EXPECT_EQ(self->refcnt0, module_refcnt());
	/* A new agent: the node reconnects through it, with its data. */
	ASSERT_EQ(0, agentd_start(&self->agentd, test_port()));
	for (end = memd_now() + 20; memd_now() < end; usleep(100000))
		if (mn_state(self->fd, self->at.mn_id, NULL) == CIDER_MN_LIVE &&
		    get8(self->fd, self->at.mn_id, 0, &v) == 0)
			break;
	ASSERT_EQ(CIDER_MN_LIVE, mn_state(self->fd, self->at.mn_id, NULL));
	ASSERT_EQ(0, put8(self->fd, self->at.mn_id, 1, 4242));
	ASSERT_EQ(0, get8(self->fd, self->at.mn_id, 1, &v));
	EXPECT_EQ(4242, v);
}

#define ORDER_KEYS	16
#define ORDER_OPS	50	/* per thread; every agent batch waits 2 ms or more */

struct order {
	int fd;
	unsigned int mn;
	unsigned int id;
	struct order *all;
	volatile uint32_t seq;			/* writes done */
	uint8_t key_of[ORDER_OPS + 1];		/* the key of write seq */
	uint64_t last[ORDER_KEYS];		/* its last value of each key */
	int bad;				/* a read no write explains */
	int err;
};

/* A value read must be some writer's, of that key, and not from the future. */
static bool order_explained(struct order *all, unsigned int k, uint64_t v)
{
	uint32_t w = (uint32_t)(v >> 32), seq = (uint32_t)v;

	if (w >= LOAD_THREADS || !seq || seq > ORDER_OPS)
		return false;
	return seq <= all[w].seq && all[w].key_of[seq] == k;
}

/* PUT w<<32|seq to a random key, GET another, check what it holds. */
static void *order_run(void *arg)
{
	struct order *o = arg;
	unsigned int r = o->id * 7919 + 1, k;
	uint32_t seq;
	uint64_t v;
	int ret;

	for (seq = 1; seq <= ORDER_OPS && !o->err; seq++) {
		r = r * 1103515245 + 12345;
		k = (r >> 16) % ORDER_KEYS;
		v = (uint64_t)o->id << 32 | seq;
		o->key_of[seq] = (uint8_t)k;
		__atomic_store_n(&o->seq, seq, __ATOMIC_RELEASE);
		o->err = put8(o->fd, o->mn, k, v);
		o->last[k] = v;
		k = (r >> 8) % ORDER_KEYS;
		ret = get8(o->fd, o->mn, k, &v);
		if (ret == -ENOENT)
			continue;
		if (ret)
			o->err = ret;
		else if (!order_explained(o->all, k, v))
			o->bad++;
	}
	return NULL;
}

TEST_F_TIMEOUT(agent, the_agent_path_running_late_keeps_every_write, 120)
{
	struct order *o = calloc(LOAD_THREADS, sizeof(*o));
	pthread_t th[LOAD_THREADS];
	unsigned int i, k, w;
	uint64_t v;

	NEED_MN();
	ASSERT_NE(NULL, o);
	/* Every batch holding an atomic runs late (msleep(2): a few jiffies), the others on time. */
	ASSERT_EQ(0, sysfs_write(FAULT_DIR "agent_delay_ms", "2"));
	ASSERT_EQ(0, attach_flags(self->fd, self->memd.addr, 0, &self->at));
	self->attached = true;
	for (i = 0; i < LOAD_THREADS; i++) {
		o[i] = (struct order){ .fd = self->fd, .mn = self->at.mn_id, .id = i, .all = o };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, order_run, &o[i]));
	}
	for (i = 0; i < LOAD_THREADS; i++)
		pthread_join(th[i], NULL);
	sysfs_write(FAULT_DIR "agent_delay_ms", "0");
	for (i = 0; i < LOAD_THREADS; i++) {
		EXPECT_EQ(0, o[i].err) TH_LOG("thread %u: %s", i, strerror(-o[i].err));
		EXPECT_EQ(0, o[i].bad) TH_LOG("thread %u read values no write explains", i);
	}
	/* Each key holds the last write of one of its writers. */
	for (k = 0; k < ORDER_KEYS; k++) {
		bool found = false;

		ASSERT_EQ(0, get8(self->fd, self->at.mn_id, k, &v));
		for (w = 0; w < LOAD_THREADS; w++)
			found |= o[w].last[k] == v;
		EXPECT_TRUE(found) TH_LOG("key %u holds %#llx, no writer's last", k,
					  (unsigned long long)v);
	}
	EXPECT_EQ(0, stat_of(self->fd, self->at.mn_id, "agent_failed"));
	free(o);
}

TEST_HARNESS_MAIN
