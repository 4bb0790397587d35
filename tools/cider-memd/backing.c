// SPDX-License-Identifier: GPL-2.0
/*
 * cider-memd's backing file (backing.h).  Only filesystems whose pages
 * the RDMA registration can pin writable for the long term while they are
 * mapped shared: tmpfs and hugetlbfs (shared memory), and device-DAX.
 * Since Linux 6.5 the kernel refuses a FOLL_LONGTERM pin of a writable
 * shared mapping of an ordinary filesystem's file (the filesystem could
 * write the page back under the device's feet), so those are refused
 * here, up front, with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "backing.h"

#define TMPFS_MAGIC_	0x01021994
#define HUGETLBFS_MAGIC_ 0x958458f6

/* Is character device @st a device-DAX node?  Its size in @size. */
static bool dax_device(const struct stat *st, uint64_t *size)
{
	char path[96], link[PATH_MAX];
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/subsystem", major(st->st_rdev),
		 minor(st->st_rdev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	if (!strstr(link, "/dax"))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/size", major(st->st_rdev),
		 minor(st->st_rdev));
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fscanf(f, "%lu", (unsigned long *)size) == 1;
	fclose(f);
	return n;
}

/* What may back the region: 0, or -1 with why. */
static int backing_kind(struct memd_backing *b, int fd, const struct stat *st, uint64_t len,
			uint64_t *have, char *err, size_t errlen)
{
	struct statfs fs;

	if (S_ISCHR(st->st_mode)) {
		if (!dax_device(st, have)) {
			snprintf(err, errlen, "a character device that is not device-DAX");
			return -1;
		}
		if (*have < len) {
			snprintf(err, errlen, "the device holds %lu bytes, the region needs %lu",
				 (unsigned long)*have, (unsigned long)len);
			return -1;
		}
		return 0;
	}
	if (!S_ISREG(st->st_mode)) {
		snprintf(err, errlen, "not a regular file or a device-DAX node");
		return -1;
	}
	if (fstatfs(fd, &fs)) {
		snprintf(err, errlen, "statfs: %s", strerror(errno));
		return -1;
	}
	if ((unsigned long)fs.f_type == HUGETLBFS_MAGIC_) {
		b->huge = true;
	} else if ((unsigned long)fs.f_type != TMPFS_MAGIC_) {
		snprintf(err, errlen, "not on tmpfs or hugetlbfs: the RDMA registration cannot pin "
			 "a shared mapping of it (Linux refuses that since 6.5); put it on /dev/shm, "
			 "a hugetlbfs mount, or use a device-DAX node");
		return -1;
	}
	*have = (uint64_t)st->st_size;
	return 0;
}

int memd_backing_map(struct memd_backing *b, const char *path, uint64_t len, char *err,
		     size_t errlen)
{
	uint64_t have = 0, page;
	bool created = true;
	struct stat st;
	int fd;

	memset(b, 0, sizeof(*b));
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		created = false;
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	/*
	 * One daemon per file, held until this process ends: a second one
	 * would store into a region whose words a live one's compute nodes
	 * change with atomics (Documentation/protocol.rst).
	 */
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		snprintf(err, errlen, "another process holds it (%s): one cider-memd per backing file",
			 strerror(errno));
		close(fd);	/* and leave it: it is that process's */
		return -1;
	}
	if (fstat(fd, &st) || backing_kind(b, fd, &st, len, &have, err, errlen))
		goto fail;
	/* A hugetlbfs file is mapped in whole huge pages (its block size). */
	if (b->huge) {
		struct statfs fs;

		page = fstatfs(fd, &fs) ? 2ULL << 20 : (uint64_t)fs.f_bsize;
		len = (len + page - 1) / page * page;
	}
	if (S_ISREG(st.st_mode) && have == 0) {
		if (ftruncate(fd, (off_t)len)) {
			snprintf(err, errlen, "cannot size it to %lu bytes: %s", (unsigned long)len,
				 strerror(errno));
			goto fail;
		}
		b->fresh = true;
	} else if (S_ISREG(st.st_mode) && have != len) {
		snprintf(err, errlen, "it holds %lu bytes, the region and its tail %lu: another --size?",
			 (unsigned long)have, (unsigned long)len);
		goto fail;
	}
	b->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (b->map == MAP_FAILED) {
		snprintf(err, errlen, "mmap: %s", strerror(errno));
		goto fail;
	}
	b->len = len;
	/* A device holds what it held: no superblock magic means nothing. */
	if (S_ISCHR(st.st_mode))
		b->fresh = *(const uint64_t *)b->map == 0;
	b->fd = fd;		/* its lock lasts as long as the daemon */
	return 0;
fail:
	close(fd);
	if (created)
		unlink(path);	/* refused: leave nothing behind */
	return -1;
}
