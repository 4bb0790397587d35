/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tests name cider-memd, ciderctl and the test VM's helpers by their
 * paths from the repository's root (tools/...).  kselftest's runner starts
 * each test in the directory of its binary (build/selftests/cider): with
 * CIDER_ROOT set, as selftests/cider/Makefile sets it, a test moves to the
 * root before anything else runs.
 */
#ifndef CIDER_SELFTEST_ROOT_H
#define CIDER_SELFTEST_ROOT_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void cider_selftest_root(void)
{
	const char *root = getenv("CIDER_ROOT");

	if (root && *root && chdir(root)) {
		perror(root);
		exit(1);
	}
}

#endif
