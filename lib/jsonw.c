// SPDX-License-Identifier: LGPL-2.1-or-later
/* The tools' JSON strings (jsonw.h). */
#include <stdint.h>

#include "jsonw.h"

void cider_json_str(FILE *f, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	putc('"', f);
	for (; n--; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			putc('\\', f);
			putc(c, f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
		} else {
			putc(c, f);
		}
	}
	putc('"', f);
}

/* The length of the UTF-8 sequence whose first byte is @b, 0 if none. */
static size_t utf8_len(unsigned char b)
{
	return b < 0x80 ? 1 : b < 0xc2 ? 0 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : b < 0xf5 ? 4 : 0;
}

bool cider_utf8_ok(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i = 0, k, len;
	uint32_t cp;

	while (i < n) {
		len = utf8_len(b[i]);
		if (!len || i + len > n)
			return false;
		cp = len == 1 ? b[i] : b[i] & (0x7f >> len);
		for (k = 1; k < len; k++) {
			if ((b[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (b[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

void cider_json_base64(FILE *f, const void *p, size_t n)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *b = p;
	uint32_t w;
	size_t i;

	putc('"', f);
	for (i = 0; i + 2 < n; i += 3) {
		w = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
		fprintf(f, "%c%c%c%c", b64[w >> 18], b64[w >> 12 & 63], b64[w >> 6 & 63],
			b64[w & 63]);
	}
	if (n - i == 1)
		fprintf(f, "%c%c==", b64[b[i] >> 2], b64[(b[i] & 3) << 4]);
	else if (n - i == 2)
		fprintf(f, "%c%c%c=", b64[b[i] >> 2], b64[(b[i] & 3) << 4 | b[i + 1] >> 4],
			b64[(b[i + 1] & 15) << 2]);
	putc('"', f);
}
