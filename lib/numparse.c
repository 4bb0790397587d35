// SPDX-License-Identifier: LGPL-2.1-or-later
/* The tools' number parser (numparse.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "numparse.h"

static int digit(char c, unsigned int base)
{
	int d = isdigit((unsigned char)c) ? c - '0' :
		isxdigit((unsigned char)c) ? tolower((unsigned char)c) - 'a' + 10 : -1;

	return d >= 0 && (unsigned int)d < base ? d : -1;
}

/* The power of 1024 a suffix stands for, 0 for none, -1 for another. */
static int suffix_shift(const char *p)
{
	static const char units[] = "KMGT";
	unsigned int i;

	if (!*p)
		return 0;
	for (i = 0; units[i]; i++)
		if (toupper((unsigned char)p[0]) == units[i] && !p[1])
			return 10 * (int)(i + 1);
	return -1;
}

static void range(char *err, size_t errlen, const char *s, uint64_t min, uint64_t max,
		  unsigned int flags)
{
	snprintf(err, errlen, "'%s' is out of range %llu..%llu%s", s, (unsigned long long)min,
		 (unsigned long long)max, flags & CIDER_NUM_SIZE ? " (bytes)" : "");
}

int cider_num_parse(const char *s, uint64_t min, uint64_t max, unsigned int flags,
		    uint64_t *out, char *err, size_t errlen)
{
	unsigned int base = 10;
	const char *p = s;
	uint64_t v = 0;
	int d, shift;

	if ((flags & CIDER_NUM_HEX) && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (digit(*p, base) < 0) {
		snprintf(err, errlen, "'%s' is not a number", s);
		return -1;
	}
	for (; (d = digit(*p, base)) >= 0; p++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base) {
			range(err, errlen, s, min, max, flags);
			return -1;
		}
		v = v * base + (uint64_t)d;
	}
	shift = flags & CIDER_NUM_SIZE ? suffix_shift(p) : (*p ? -1 : 0);
	if (shift < 0) {
		snprintf(err, errlen, "'%s' is not a number%s", s,
			 flags & CIDER_NUM_SIZE ? " (with K, M, G or T)" : "");
		return -1;
	}
	if (shift && v > UINT64_MAX >> shift) {
		range(err, errlen, s, min, max, flags);
		return -1;
	}
	v <<= shift;
	if (v < min || v > max) {
		range(err, errlen, s, min, max, flags);
		return -1;
	}
	*out = v;
	return 0;
}

int cider_num_parse_n(const char *s, size_t len, uint64_t min, uint64_t max,
		      unsigned int flags, uint64_t *out, char *err, size_t errlen)
{
	char buf[72];	/* 64 binary digits and more are out of range anyway */

	if (len >= sizeof(buf)) {
		snprintf(err, errlen, "'%.*s...' is too long for a number", 16, s);
		return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	return cider_num_parse(buf, min, max, flags, out, err, errlen);
}

int cider_num_parse_uint(const char *s, unsigned int min, unsigned int max,
			 unsigned int flags, unsigned int *out, char *err, size_t errlen)
{
	uint64_t v;

	if (cider_num_parse(s, min, max, flags, &v, err, errlen))
		return -1;
	*out = (unsigned int)v;
	return 0;
}
