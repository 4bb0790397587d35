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
#include <linux/bits.h>
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
#ifndef BIT_ULL
#define BIT_ULL(n) (1ULL << (n))
#endif
#endif

/*
 * The first min(@len, 8) bytes at @p as a little-endian integer (the MN's
 * byte order, layout.h), zero-extended: the array's keys and values.
 */
static inline u64 cider_le64(const void *p, u32 len)
{
	const u8 *b = p;
	u64 v = 0;
	u32 i;

	for (i = 0; i < len && i < 8; i++)
		v |= (u64)b[i] << (8 * i);
	return v;
}

/* Store @v little-endian in the first min(@len, 8) bytes at @p. */
static inline void cider_put_le64(void *p, u64 v, u32 len)
{
	u8 *b = p;
	u32 i;

	for (i = 0; i < len && i < 8; i++)
		b[i] = (u8)(v >> (8 * i));
}

static inline u64 cider_min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static inline u64 cider_max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
}

#endif
