/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The only header the portable core includes from its environment.
 *
 * Core code is event driven: it never reads a clock, sleeps, allocates or
 * draws random numbers itself; callers pass time and randomness in, so the
 * same code runs in cider.ko, in host unit tests and in the simulator.
 */
#ifndef _CIDER_CORE_PLATFORM_H
#define _CIDER_CORE_PLATFORM_H

#ifdef __KERNEL__
#include <linux/crc32c.h>
#include <linux/types.h>
#include <linux/string.h>

/* Standard CRC-32C (Castagnoli) of @n bytes. */
static inline u32 cider_crc32c(const void *p, size_t n)
{
	return ~crc32c(~0U, p, n);
}
#else
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
#ifndef fallthrough
#define fallthrough __attribute__((__fallthrough__))
#endif
/* Standard CRC-32C (Castagnoli), bitwise: blocks are checked rarely. */
static inline u32 cider_crc32c(const void *p, size_t n)
{
	const u8 *b = p;
	u32 crc = ~0U;
	int k;

	while (n--) {
		crc ^= *b++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78U & (0U - (crc & 1)));
	}
	return ~crc;
}

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#endif

static inline u64 cider_min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static inline u64 cider_max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

#endif
