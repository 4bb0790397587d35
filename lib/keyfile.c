// SPDX-License-Identifier: LGPL-2.1-or-later
/* A store's shared key file (cider.h, cider_key_load()). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cider.h"

/* The file's bytes, up to one more than a key may have: -1 on error. */
static ssize_t read_all(int fd, unsigned char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n < cap) {
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (!r)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

static int key_file_ok(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", path);
		return -1;
	}
	/* As ssh does with private keys: a key others can read is no secret. */
	if (st.st_mode & 077) {
		snprintf(err, errlen, "%s can be read or written by others (mode %04o): "
			 "chmod 600 it", path, (unsigned int)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

int cider_key_load(const char *path, unsigned char *key, size_t *len,
		   char *err, size_t errlen)
{
	unsigned char buf[CIDER_KEY_MAX_LEN + 2];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (key_file_ok(fd, path, err, errlen)) {
		close(fd);
		return -1;
	}
	n = read_all(fd, buf, sizeof(buf));
	if (n < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	close(fd);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n >= 0 && (n < CIDER_KEY_MIN_LEN || n > CIDER_KEY_MAX_LEN))
		snprintf(err, errlen, "%s holds %s than a key may (%d to %d bytes)", path,
			 n < CIDER_KEY_MIN_LEN ? "fewer bytes" : "more bytes",
			 CIDER_KEY_MIN_LEN, CIDER_KEY_MAX_LEN);
	if (n >= CIDER_KEY_MIN_LEN && n <= CIDER_KEY_MAX_LEN) {
		memcpy(key, buf, (size_t)n);
		*len = (size_t)n;
	}
	explicit_bzero(buf, sizeof(buf));
	return n >= CIDER_KEY_MIN_LEN && n <= CIDER_KEY_MAX_LEN ? 0 : -1;
}
