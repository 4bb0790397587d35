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
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
#endif

#define CIDER_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CIDER_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
