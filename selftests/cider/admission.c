// SPDX-License-Identifier: GPL-2.0
/*
 * Who may attach to a memory node (Documentation/memory-node.rst, "Who
 * may attach"): cider-memd --allow checks every connect request before
 * the accept.  A compute node off the list is refused with a reason its
 * attach reports (EACCES), and one line in the daemon's log; a listed one
 * and "any" are admitted; a daemon on a network address without --allow
 * does not start; a node whose restarted daemon no longer admits it is
 * given up.  With --key-file the connect must prove the store's key: no
 * key or another is refused (EKEYREJECTED), the right one admitted, a node
 * that cannot prove the key back is not trusted (ENOKEY), and a keyed
 * node restarted on its backing file is reconnected to with the key kept
 * in cider.ko, which shows it nowhere.
 *
 * Needs cider.ko loaded and $CIDER_MN_ADDR; skips otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "kv8.h"
#include "memd.h"
#include "sysfs.h"

#define PARAM_DIR	"/sys/module/cider/parameters/"

static unsigned int test_port(void)
{
	return 12100 + getpid() % 400;
}

FIXTURE(admission) {
	int fd;
	bool skip;
	struct memd memd;
	char ours[80];		/* this host's address, and a /32 around it */
	char key[64], other[64];	/* key files: the store's, another */
	char backing[64];		/* a backing file to remove, or "" */
};

/* Keys: printable, so that a search of logs and files can look for them. */
#define THE_KEY		"cider-admission-test-key-7f3a9c21e8"
#define OTHER_KEY	"cider-admission-test-key-0000000000"

static int write_key(char *path, size_t len, const char *name, const char *key)
{
	int fd;

	snprintf(path, len, "/tmp/%s-%u.key", name, (unsigned int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, key, strlen(key)) != (ssize_t)strlen(key) || write(fd, "\n", 1) != 1) {
		close(fd);
		return -1;
	}
	return close(fd);
}

FIXTURE_SETUP(admission)
{
	const char *mn = getenv("CIDER_MN_ADDR");

	self->fd = cider_open();
	ASSERT_LE(0, self->fd);
	/* 6.1's harness runs the body after a SKIP here: flag it instead. */
	self->skip = !mn;
	if (self->skip)
		return;
	snprintf(self->ours, sizeof(self->ours), "192.0.2.0/24,%s/32", mn);
	ASSERT_EQ(0, write_key(self->key, sizeof(self->key), "store", THE_KEY));
	ASSERT_EQ(0, write_key(self->other, sizeof(self->other), "other", OTHER_KEY));
}

FIXTURE_TEARDOWN(admission)
{
	struct cider_mn_info mi;

	if (!self->skip) {
		while (cider_mn_info(self->fd, 0, &mi) == 0)
			if (cider_detach(self->fd, mi.mn_id))
				break;
		if (self->memd.pid)
			memd_stop(&self->memd, SIGTERM);
		sysfs_write(PARAM_DIR "reconnect_delay_ms", "1000");
		unlink(self->key);
		unlink(self->other);
		if (self->backing[0])
			unlink(self->backing);
	}
	close(self->fd);
}

#define NEED_MN() do { if (self->skip) SKIP(return, "CIDER_MN_ADDR not set"); } while (0)

TEST_F_TIMEOUT(admission, an_address_off_the_allow_list_is_refused_with_the_reason, 60)
{
	const char *store[] = { "--allow", "192.0.2.1,2001:db8::/32", NULL };
	struct cider_attach at;
	double t;

	NEED_MN();
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store))
		TH_LOG("cider-memd did not start; log %s", self->memd.log);
	EXPECT_EQ(1, memd_log_count(&self->memd, "admitting 192.0.2.1,2001:db8::/32"));
	t = memd_now();
	EXPECT_EQ(-EACCES, cider_attach(self->fd, self->memd.addr, 3, 0, &at));
	TH_LOG("refused after %.3f s", memd_now() - t);
	EXPECT_GT(2.0, memd_now() - t);
	/* One line for the compute node, not one per channel. */
	EXPECT_EQ(1, memd_log_count(&self->memd, "refused cn 3 from"));
	EXPECT_EQ(0, memd_log_count(&self->memd, "connected:"));
	EXPECT_EQ(-ENOENT, cider_mn_info(self->fd, 0, &(struct cider_mn_info){ 0 }));
}

TEST_F_TIMEOUT(admission, a_listed_address_and_any_are_admitted, 60)
{
	const char *store[] = { "--allow", self->ours, NULL };
	const char *any[] = { "--allow", "any", NULL };
	struct cider_attach at;

	NEED_MN();
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &at));
	EXPECT_EQ(0, cider_detach(self->fd, at.mn_id));
	EXPECT_EQ(0, memd_log_count(&self->memd, "refused"));
	memd_stop(&self->memd, SIGTERM);
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port() + 1, any));
	EXPECT_EQ(1, memd_log_count(&self->memd, "admitting any"));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &at));
	EXPECT_EQ(0, cider_detach(self->fd, at.mn_id));
}

/* Run cider-memd with @args to its end: its exit status, its stderr in @err. */
static int memd_run(const char *const *args, char *err, size_t len)
{
	const char *argv[16] = { "tools/cider-memd/cider-memd" };
	unsigned int n = 1;
	int p[2], status = -1;
	ssize_t got;
	pid_t pid;

	while (*args && n + 1 < 16)
		argv[n++] = *args++;
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	got = read(p[0], err, len - 1);
	err[got > 0 ? got : 0] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F_TIMEOUT(admission, no_network_listener_starts_without_an_allow_list, 60)
{
	char listen[64], any[64], err[1024];
	const char *args[] = { "--listen", listen, "--size", "4M", NULL };
	const char *wild[] = { "--listen", any, "--size", "4M", NULL };
	const char *bad[] = { "--listen", listen, "--allow", "10.0.0.0/40", NULL };

	NEED_MN();
	snprintf(listen, sizeof(listen), "%s:%u", getenv("CIDER_MN_ADDR"), test_port());
	snprintf(any, sizeof(any), "0.0.0.0:%u", test_port());
	EXPECT_EQ(2, memd_run(args, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "is not a loopback address")) TH_LOG("%s", err);
	EXPECT_NE(NULL, strstr(err, "--allow ADDR[/PREFIX]")) TH_LOG("%s", err);
	EXPECT_EQ(2, memd_run(wild, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "is not a loopback address")) TH_LOG("%s", err);
	EXPECT_EQ(2, memd_run(bad, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "bad --allow '10.0.0.0/40'")) TH_LOG("%s", err);
}

/*
 * The daemon restarted with a list that no longer has this compute node:
 * its reconnect is refused on purpose, and the node is given up at once
 * (EACCES), not retried until the loss timeout.
 */
TEST_F_TIMEOUT(admission, a_node_refused_on_reconnect_is_given_up, 90)
{
	const char *store[] = { "--allow", self->ours, NULL };
	const char *other[] = { "--allow", "192.0.2.1", NULL };
	struct cider_mn_info mi = { 0 };
	struct cider_attach at;
	double end;

	NEED_MN();
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "reconnect_delay_ms", "300"));
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &at));
	memd_stop(&self->memd, SIGKILL);
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), other));
	for (end = memd_now() + 30; memd_now() < end; usleep(50 * 1000)) {
		ASSERT_EQ(0, cider_mn_info(self->fd, at.mn_id, &mi));
		if (mi.state == CIDER_MN_DEAD)
			break;
	}
	TH_LOG("state %u, dead_reason %d after %u attempts", mi.state, mi.dead_reason,
	       mi.reconnect_attempts);
	EXPECT_EQ(CIDER_MN_DEAD, mi.state);
	EXPECT_EQ(-EACCES, mi.dead_reason);
	EXPECT_LE(1, memd_log_count(&self->memd, "refused cn 3 from"));
}

/* Poll until @path has @n lines with @what, for up to 10 s: 0 or -1. */
static int file_wait(const char *path, const char *what, int n)
{
	double end = memd_now() + 10;

	while (file_count(path, what) != n)
		if (memd_now() > end)
			return -1;
		else
			usleep(20 * 1000);
	return 0;
}

/*
 * Who is attached: --status-file lists every connected channel (cn id,
 * address, since when) and is rewritten on connect and disconnect;
 * SIGUSR1 logs the same; the service manager hears READY=1 once the
 * store is served (sd_notify's protocol on $NOTIFY_SOCKET).
 */
TEST_F_TIMEOUT(admission, the_daemon_says_who_is_attached_and_when_it_is_ready, 60)
{
	char status[64], notify[64], mine[96], got[256] = "";
	const char *store[] = { "--allow", self->ours, "--status-file", status, NULL };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 30 };
	struct cider_attach at;
	ssize_t n;
	int sock;

	NEED_MN();
	snprintf(status, sizeof(status), "/tmp/memd-status-%u", test_port());
	snprintf(notify, sizeof(notify), "/tmp/memd-notify-%u", test_port());
	unlink(status);
	unlink(notify);
	sock = socket(AF_UNIX, SOCK_DGRAM, 0);
	ASSERT_LE(0, sock);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", notify);
	ASSERT_EQ(0, bind(sock, (struct sockaddr *)&sa, sizeof(sa)));
	ASSERT_EQ(0, setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	setenv("NOTIFY_SOCKET", notify, 1);
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store));
	unsetenv("NOTIFY_SOCKET");
	n = recv(sock, got, sizeof(got) - 1, 0);
	close(sock);
	unlink(notify);
	ASSERT_LT(0, n);
	got[n] = '\0';
	EXPECT_NE(NULL, strstr(got, "READY=1")) TH_LOG("notified: %s", got);
	EXPECT_EQ(1, file_count(status, "0 channels connected"));

	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 5, 0, &at));
	snprintf(mine, sizeof(mine), "cn 5 channel 0 from %s:", getenv("CIDER_MN_ADDR"));
	EXPECT_EQ(0, file_wait(status, "cn 5 channel ", (int)at.nr_channels));
	EXPECT_EQ(1, file_count(status, mine));
	EXPECT_EQ((int)at.nr_channels, file_count(status, " since 20"));
	/* The roster's lines (" since ...") reach the log on SIGUSR1 only. */
	EXPECT_EQ(0, memd_log_count(&self->memd, " since 20"));
	kill(self->memd.pid, SIGUSR1);
	EXPECT_EQ(0, memd_wait_log(&self->memd, " since 20", 10));
	EXPECT_LE(1, memd_log_count(&self->memd, "channels connected"));
	ASSERT_EQ(0, cider_detach(self->fd, at.mn_id));
	EXPECT_EQ(0, file_wait(status, "cn 5 channel ", 0));
	EXPECT_EQ(1, file_count(status, "0 channels connected"));
	unlink(status);
}

/* Attach proving the key in @path (as ciderctl attach key-file does). */
static int attach_key(int fd, const char *addr, unsigned int cn, const char *path,
		      struct cider_attach *at)
{
	unsigned char key[CIDER_KEY_MAX_LEN];
	char err[256];
	size_t len;
	int ret;

	if (cider_key_load(path, key, &len, err, sizeof(err)))
		return -EBADF;
	ret = cider_attach_key(fd, addr, cn, 0, key, len, at);
	explicit_bzero(key, sizeof(key));
	return ret;
}

/* Run a shell command; its output's first line in @out. */
static int run(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	int status;

	out[0] = '\0';
	if (!f)
		return -1;
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	while (fgetc(f) != EOF)
		;
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F_TIMEOUT(admission, a_missing_or_wrong_key_is_refused_and_the_right_one_admitted, 90)
{
	const char *store[] = { "--allow", self->ours, "--key-file", self->key, NULL };
	char cmd[256], out[512];
	struct cider_attach at;

	NEED_MN();
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store));
	EXPECT_EQ(1, memd_log_count(&self->memd, "with a proof of the key"));
	EXPECT_EQ(-EKEYREJECTED, cider_attach(self->fd, self->memd.addr, 3, 0, &at));
	EXPECT_EQ(1, memd_log_count(&self->memd, "refused cn 3 from"));
	EXPECT_EQ(1, memd_log_count(&self->memd, "no key proof"));
	EXPECT_EQ(-EKEYREJECTED, attach_key(self->fd, self->memd.addr, 4, self->other, &at));
	EXPECT_EQ(1, memd_log_count(&self->memd, "refused cn 4 from"));
	EXPECT_EQ(1, memd_log_count(&self->memd, "a wrong key proof"));
	EXPECT_EQ(-ENOENT, cider_mn_info(self->fd, 0, &(struct cider_mn_info){ 0 }));
	EXPECT_EQ(0, memd_log_count(&self->memd, "connected:"));

	/* What an operator sees. */
	snprintf(cmd, sizeof(cmd), "tools/ciderctl/ciderctl attach %s cn 5 key-file %s 2>&1",
		 self->memd.addr, self->other);
	EXPECT_EQ(1, run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "refused by the memory node: it wants a key proof"))
		TH_LOG("%s", out);
	chmod(self->key, 0644);
	snprintf(cmd, sizeof(cmd), "tools/ciderctl/ciderctl attach %s cn 6 key-file %s 2>&1",
		 self->memd.addr, self->key);
	EXPECT_EQ(2, run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "chmod 600")) TH_LOG("%s", out);
	chmod(self->key, 0600);
	EXPECT_EQ(0, run(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "attached")) TH_LOG("%s", out);
	ASSERT_EQ(0, cider_mn_info(self->fd, 0, &(struct cider_mn_info){ 0 }));
	EXPECT_EQ(0, memd_log_count(&self->memd, "refused cn 6"));
}

/*
 * A compute node given a key trusts only a node that proves it back: one
 * without --key-file (or with another key; here: none) is not attached.
 */
TEST_F_TIMEOUT(admission, a_node_that_cannot_prove_the_key_is_not_trusted, 60)
{
	const char *store[] = { "--allow", self->ours, NULL };
	struct cider_attach at;

	NEED_MN();
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store));
	EXPECT_EQ(-ENOKEY, attach_key(self->fd, self->memd.addr, 3, self->key, &at));
	EXPECT_EQ(-ENOENT, cider_mn_info(self->fd, 0, &(struct cider_mn_info){ 0 }));
	ASSERT_EQ(0, cider_attach(self->fd, self->memd.addr, 3, 0, &at));
}

/*
 * How many lines of the places a key must never show hold @what.  The
 * pattern's first character in brackets: the search's own command lines
 * do not match it.
 */
static int key_shows(const char *what)
{
	char cmd[512], out[256];

	snprintf(cmd, sizeof(cmd),
		 "{ dmesg; cat /tmp/memd-*.log; cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ;"
		 "  grep -rsa . /sys/kernel/debug/cider /sys/module/cider/parameters; } "
		 "2>/dev/null | tr '\\0' '\\n' | grep -c -- '[%c]%s'", what[0], what + 1);
	run(cmd, out, sizeof(out));
	return atoi(out);
}

/*
 * The key outlives connections: a keyed memory node killed and started
 * again on its backing file is reconnected to by itself (cider.ko proves
 * the key it kept), the store is the same, and the key shows in no log,
 * command line or debugfs file.
 */
TEST_F_TIMEOUT(admission, a_keyed_node_is_reconnected_to_with_the_key_it_keeps, 120)
{
	const char *store[] = { "--allow", self->ours, "--key-file", self->key, "--index",
				"array", "--keys", "64", "--backing", self->backing, NULL };
	struct cider_mn_info mi = { 0 };
	struct cider_attach at;
	uint64_t v = 0;
	double end;

	NEED_MN();
	mkdir("/tmp/cider-backing", 0700);
	if (mount("tmpfs", "/tmp/cider-backing", "tmpfs", 0, "size=64m") && errno != EBUSY)
		SKIP(return, "no tmpfs for the backing file");
	snprintf(self->backing, sizeof(self->backing), "/tmp/cider-backing/keyed-%u",
		 test_port());
	unlink(self->backing);
	ASSERT_EQ(0, sysfs_write(PARAM_DIR "reconnect_delay_ms", "300"));
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store));
	ASSERT_EQ(0, attach_key(self->fd, self->memd.addr, 3, self->key, &at));
	ASSERT_EQ(0, put8(self->fd, at.mn_id, 9, 4242));
	memd_stop(&self->memd, SIGKILL);
	ASSERT_EQ(0, memd_start_store(&self->memd, "4M", test_port(), store));
	for (end = memd_now() + 30; memd_now() < end; usleep(50 * 1000)) {
		ASSERT_EQ(0, cider_mn_info(self->fd, at.mn_id, &mi));
		if (mi.reconnects >= 1 && mi.state == CIDER_MN_LIVE)
			break;
	}
	TH_LOG("state %u after %u attempts, %u reconnects", mi.state, mi.reconnect_attempts,
	       mi.reconnects);
	ASSERT_EQ(CIDER_MN_LIVE, mi.state);
	EXPECT_EQ(0, memd_log_count(&self->memd, "refused"));
	EXPECT_EQ(0, get8(self->fd, at.mn_id, 9, &v));
	EXPECT_EQ(4242U, v);
	EXPECT_EQ(0, key_shows(THE_KEY));
	EXPECT_LT(0, key_shows(self->key));	/* the search does see the daemon's line */
}

TEST_HARNESS_MAIN
