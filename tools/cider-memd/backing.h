/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The region in a file that outlives the daemon (cider-memd --backing):
 * a tmpfs or hugetlbfs file, or a device-DAX node, mapped shared
 * (backing.c).  The store in it survives a restart of the daemon, not of
 * the machine (unless the device is persistent memory).
 */
#ifndef CIDER_MEMD_BACKING_H
#define CIDER_MEMD_BACKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct memd_backing {
	void *map;		/* the region, mapped shared */
	uint64_t len;		/* bytes mapped: at least what was asked */
	bool fresh;		/* nothing was in it: the caller formats */
	bool huge;		/* hugetlbfs */
	int fd;			/* open, and locked (flock) for this daemon alone */
};

/*
 * Map at least @len bytes of @path (created if missing) into @b: 0, or -1
 * with why in @err (a filesystem the RDMA registration cannot pin shared,
 * a file of another size, a device too small, ...).
 */
int memd_backing_map(struct memd_backing *b, const char *path, uint64_t len, char *err,
		     size_t errlen);

#endif
