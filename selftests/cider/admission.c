// SPDX-License-Identifier: GPL-2.0
/*
 * Who may attach to a memory node (Documentation/memory-node.rst, "Who
 * may attach"): cider-memd --allow checks every connect request before
 * the accept.  A compute node off the list is refused with a reason its
 * attach reports (EACCES), and one line in the daemon's log; a listed one
 * and "any" are admitted; a daemon on a network address without --allow
 * does not start; a node whose restarted daemon no longer admits it is
 * given up.
 *
 * Needs cider.ko loaded and $CIDER_MN_ADDR; skips otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
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
};

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

TEST_HARNESS_MAIN
