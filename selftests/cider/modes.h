/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fixture run in each of the four synchronization modes (its variant's
 * .mode, for cider-memd --mode), and a nanosecond clock, as the KV
 * selftests share them.
 */
#ifndef CIDER_SELFTEST_MODES_H
#define CIDER_SELFTEST_MODES_H

#include <stdint.h>
#include <time.h>

#define EVERY_MODE(fixture)							\
	FIXTURE_VARIANT(fixture) {						\
		const char *mode;						\
	};									\
	FIXTURE_VARIANT_ADD(fixture, cider) { .mode = "cider" };		\
	FIXTURE_VARIANT_ADD(fixture, mcs) { .mode = "mcs" };			\
	FIXTURE_VARIANT_ADD(fixture, caslock) { .mode = "caslock" };		\
	FIXTURE_VARIANT_ADD(fixture, osync) { .mode = "osync" }

static inline uint64_t ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
