/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run a real cider-memd for a test: on $CIDER_MN_ADDR (set by the VM
 * runner from tools/vm/rxe-up), a port of its own, log in /tmp.
 */
#ifndef CIDER_SELFTEST_MEMD_H
#define CIDER_SELFTEST_MEMD_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct memd {
	pid_t pid;
	unsigned int port;
	char addr[80];		/* ADDR:PORT for attach */
	char log[64];
};

static inline double memd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int memd_wait_log(const struct memd *m, const char *what, double secs)
{
	double end = memd_now() + secs;
	char line[512];

	while (memd_now() < end) {
		FILE *f = fopen(m->log, "r");

		if (f) {
			while (fgets(line, sizeof(line), f)) {
				if (strstr(line, what)) {
					fclose(f);
					return 0;
				}
			}
			fclose(f);
		}
		if (waitpid(m->pid, NULL, WNOHANG) == m->pid)
			return -1;	/* died */
		usleep(20000);
	}
	return -1;
}

/* What the daemon said, as TAP comments (its log is in the guest's /tmp). */
/* Lines of the file at @path that contain @what, or -1 without the file. */
static inline int file_count(const char *path, const char *what)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

/* Lines of @m's log that contain @what, or -1 without a log. */
static inline int memd_log_count(const struct memd *m, const char *what)
{
	return file_count(m->log, what);
}

static inline void memd_print_log(const struct memd *m)
{
	FILE *f = fopen(m->log, "r");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "# %s: %s", m->log, line);
	fclose(f);
}

/*
 * Start cider-memd on @host (an IPv4 address, or an IPv6 one in brackets)
 * with a region of @size and the store flags in @store (a NULL-terminated
 * argv tail, or NULL for the defaults); 0 once it listens.  It admits
 * @host only, where the test's compute node is (the VM's one host), unless
 * @store says --allow itself.
 */
static inline int memd_start_on(struct memd *m, const char *host, const char *size,
				unsigned int port, const char *const *store)
{
	const char *argv[24] = { NULL, "--listen", m->addr, "--size", size };
	unsigned int n = 5;
	const char *bin = getenv("CIDER_MEMD");
	const char *const *s;
	bool allow = true;
	static char me[64];

	if (!host)
		return -1;
	for (s = store; s && *s; s++)
		allow &= strcmp(*s, "--allow") != 0;
	if (allow) {
		/* The bare address: [v6] without its brackets. */
		snprintf(me, sizeof(me), "%s", host[0] == '[' ? host + 1 : host);
		me[strcspn(me, "]")] = '\0';
		argv[n++] = "--allow";
		argv[n++] = me;
	}
	if (!bin)
		bin = "tools/cider-memd/cider-memd";
	m->port = port;
	snprintf(m->addr, sizeof(m->addr), "%s:%u", host, port);
	snprintf(m->log, sizeof(m->log), "/tmp/memd-%u.log", port);
	unlink(m->log);
	m->pid = fork();
	if (m->pid < 0)
		return -1;
	if (m->pid == 0) {
		if (!freopen(m->log, "w", stderr) || !freopen("/dev/null", "w", stdout))
			_exit(127);
		argv[0] = bin;
		while (store && *store && n + 1 < sizeof(argv) / sizeof(argv[0]))
			argv[n++] = *store++;
		argv[n] = NULL;
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	/* Seconds on the debug kernel under TCG on a loaded machine (exec and
	 * libraries over 9p, KASAN): 10 s was not always enough, and
	 * the first start in a fresh guest is the slowest. */
	if (memd_wait_log(m, "listening on", 60) == 0)
		return 0;
	memd_print_log(m);
	/* No daemon outlives a failed start: one holding the RDMA device open
	 * would block its removal (a failed fixture setup has no teardown). */
	kill(m->pid, SIGKILL);
	waitpid(m->pid, NULL, 0);
	m->pid = 0;
	return -1;
}

/* The same on $CIDER_MN_ADDR, the test VM's address. */
static inline int memd_start_store(struct memd *m, const char *size, unsigned int port,
				   const char *const *store)
{
	return memd_start_on(m, getenv("CIDER_MN_ADDR"), size, port, store);
}

/* Start cider-memd with a region of @size; 0 once it listens. */
static inline int memd_start(struct memd *m, const char *size, unsigned int port)
{
	return memd_start_store(m, size, port, NULL);
}

/* Stop it with @sig, waiting at most 10 s; its exit status or -1. */
static inline int memd_stop(struct memd *m, int sig)
{
	double end = memd_now() + 10;
	int status;

	if (m->pid <= 0)
		return -1;
	kill(m->pid, sig);
	while (memd_now() < end) {
		if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
			m->pid = 0;
			return status;
		}
		usleep(10000);
	}
	kill(m->pid, SIGKILL);
	waitpid(m->pid, &status, 0);
	m->pid = 0;
	return -1;
}

#endif
