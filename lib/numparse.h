/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one way the tools read a number from their command line
 * (numparse.c): ranges checked, suffixes where they make sense, and a
 * message that names the range.
 */
#ifndef CIDER_NUMPARSE_H
#define CIDER_NUMPARSE_H

#include <stddef.h>
#include <stdint.h>

#define CIDER_NUM_HEX	0x1U	/* 0x... accepted besides decimal */
#define CIDER_NUM_SIZE	0x2U	/* a K, M, G or T suffix: powers of 1024 */

/*
 * @s, all of it, as an integer in [@min, @max]: decimal (or 0x hex with
 * CIDER_NUM_HEX), times a suffix's power of 1024 with CIDER_NUM_SIZE.
 * 0 with the value in @out, or -1 with why in @err ("not a number", "out
 * of range MIN..MAX", ...), @out untouched.
 */
int cider_num_parse(const char *s, uint64_t min, uint64_t max, unsigned int flags,
		    uint64_t *out, char *err, size_t errlen);

/*
 * The first @len characters of @s, as cider_num_parse() takes a whole
 * string: for a number inside a line of data (a JSON value, a
 * NAME=VALUE token, A-B).
 */
int cider_num_parse_n(const char *s, size_t len, uint64_t min, uint64_t max,
		      unsigned int flags, uint64_t *out, char *err, size_t errlen);

/* The same into an unsigned int (@max at most UINT_MAX). */
int cider_num_parse_uint(const char *s, unsigned int min, unsigned int max,
			 unsigned int flags, unsigned int *out, char *err, size_t errlen);

#endif
