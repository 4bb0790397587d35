/* SPDX-License-Identifier: GPL-2.0 */
/* Small sysfs readers shared by the CIDER selftests. */
#ifndef CIDER_SELFTEST_SYSFS_H
#define CIDER_SELFTEST_SYSFS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Read a one-line sysfs file without its newline; 0 or -1. */
static inline int sysfs_read(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Write @val to a sysfs, debugfs or tracefs file: 0 or -errno. */
static inline int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

/* The entries of a sysfs class directory (up to @max); their count or -1. */
static inline int sysfs_list(const char *dir, char names[][64], int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;	/* no such class: nothing registered */
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == max || strlen(e->d_name) >= 64) {
			n = -1;
			break;
		}
		memcpy(names[n++], e->d_name, strlen(e->d_name) + 1);
	}
	closedir(d);
	return n;
}

static inline bool sysfs_listed(char names[][64], int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* A whole file (up to @len - 1 bytes), NUL-terminated: 0 or -errno. */
static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, got = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return 0;
}

/* A counter of the store's debugfs "kv ... NAME=N ..." line (mnN), or -1. */
static inline long long kv_counter(unsigned int mn_id, const char *name)
{
	static char buf[1 << 16];
	char path[64], *p;
	size_t n = strlen(name);

	snprintf(path, sizeof(path), "/sys/kernel/debug/cider/mn%u", mn_id);
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	for (p = strstr(buf, name); p; p = strstr(p + 1, name))
		if (p[-1] == ' ' && p[n] == '=')
			return strtoll(p + n + 1, NULL, 10);
	return -1;
}

/* MN verbs the store's data path posted (node @mn_id), or a negative sum. */
static inline long long kv_verbs(unsigned int mn_id)
{
	return kv_counter(mn_id, "verbs_read") + kv_counter(mn_id, "verbs_write") +
	       kv_counter(mn_id, "verbs_cas") + kv_counter(mn_id, "verbs_faa");
}

/* rmmod cider without waiting: 0, or -errno (EWOULDBLOCK while in use). */
static inline int module_unload(void)
{
	return syscall(SYS_delete_module, "cider", O_NONBLOCK) ? -errno : 0;
}

/* insmod $CIDER_KO with @params: 0, or -errno (-ENOENT without it). */
static inline int module_load_params(const char *params)
{
	const char *ko = getenv("CIDER_KO");
	int fd, ret;

	fd = ko ? open(ko, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return -ENOENT;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static inline int module_load(void)
{
	return module_load_params("");
}

#endif
