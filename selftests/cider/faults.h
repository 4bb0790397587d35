/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection in the debug kernel (CONFIG_FAILSLAB,
 * CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS), shared by the
 * error-path test and the fuzzer.
 *
 * The failure points are configured so that only tasks that ask for it
 * fail (task-filter): /proc/thread-self/fail-nth fails exactly the Nth
 * allocation of the calling thread, /proc/thread-self/make-it-fail turns
 * on random failures for it.  Sleeping allocations must count too (the
 * default ignores them, and nearly all of cider.ko's allocations sleep).
 */
#ifndef CIDER_SELFTEST_FAULTS_H
#define CIDER_SELFTEST_FAULTS_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FI_DIR "/sys/kernel/debug/"

static inline int fi_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static inline long fi_read(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* True when this kernel can inject allocation failures. */
static inline int fi_available(void)
{
	return access("/proc/thread-self/fail-nth", W_OK) == 0 &&
	       access(FI_DIR "failslab/task-filter", W_OK) == 0 &&
	       access(FI_DIR "fail_page_alloc/task-filter", W_OK) == 0;
}

/*
 * Configure failslab and fail_page_alloc: only marked tasks, sleeping
 * allocations included, failures at @probability percent for tasks with
 * make-it-fail set (fail-nth works regardless), no stack dump per failure
 * (thousands of them would drown the log).  0 or -1.
 */
static inline int fi_setup(unsigned int probability)
{
	static const char *const points[] = { "failslab", "fail_page_alloc" };
	char path[128], val[16];
	unsigned int i;
	int bad = 0;

	snprintf(val, sizeof(val), "%u", probability);
	for (i = 0; i < 2; i++) {
#define SET(file, v) do { \
		snprintf(path, sizeof(path), FI_DIR "%s/" file, points[i]); \
		bad |= fi_write(path, v); \
	} while (0)
		SET("task-filter", "Y");
		SET("ignore-gfp-wait", "N");
		SET("probability", val);
		SET("interval", "1");
		SET("times", "-1");
		SET("verbose", "0");
		SET("space", "0");
#undef SET
	}
	snprintf(path, sizeof(path), FI_DIR "fail_page_alloc/ignore-gfp-highmem");
	bad |= fi_write(path, "N");
	snprintf(path, sizeof(path), FI_DIR "fail_page_alloc/min-order");
	bad |= fi_write(path, "0");
	return bad ? -1 : 0;
}

/*
 * The calling thread's fail-nth file, opened once: opening it after the
 * call under test would itself allocate, and so consume (and fail on) a
 * countdown the call did not reach.  Reads and writes allocate nothing.
 */
static inline int fi_nth_fd(void)
{
	static __thread int fd = -1;

	if (fd < 0)
		fd = open("/proc/thread-self/fail-nth", O_RDWR);
	return fd;
}

/* Fail the calling thread's @n-th allocation from now on (0: stop). */
static inline int fi_fail_nth(unsigned int n)
{
	char val[16];
	int fd = fi_nth_fd();

	snprintf(val, sizeof(val), "%u", n);
	if (fd < 0)
		return -1;
	return pwrite(fd, val, strlen(val), 0) == (ssize_t)strlen(val) ? 0 : -1;
}

/*
 * After fi_fail_nth(): 1 if the failure was injected, 0 if the code ran
 * with fewer than n allocations (and resets the request), or -1000 - errno
 * when the file cannot be read.
 */
static inline int fi_fail_nth_hit(void)
{
	char buf[32] = "";
	int fd = fi_nth_fd();
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -errno - 1000;
	if (strtol(buf, NULL, 10) == 0)
		return 1;
	fi_fail_nth(0);
	return 0;
}

/*
 * Random failures for the calling thread (probability from fi_setup).  The
 * file is opened once per thread, before any failure is asked for: opening
 * it to turn failures off would allocate, fail now and then, and leave the
 * thread failing allocations for good (the fuzzer then saw ENOMEM from a
 * GET_INFO it had made without injection).
 */
static __thread int fi_fail_fd = -1;

static inline int fi_make_it_fail(int on)
{
	if (fi_fail_fd < 0)
		fi_fail_fd = open("/proc/thread-self/make-it-fail", O_WRONLY);
	if (fi_fail_fd < 0)
		return -1;
	return pwrite(fi_fail_fd, on ? "1" : "0", 1, 0) == 1 ? 0 : -1;
}

/*
 * In a child after fork(): the inherited file is the parent thread's
 * (/proc/thread-self named it at open), so the child opens its own.
 * Call it uninjected.
 */
static inline void fi_after_fork(void)
{
	if (fi_fail_fd >= 0)
		close(fi_fail_fd);
	fi_fail_fd = -1;
}

#endif
