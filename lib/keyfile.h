/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A store's shared key file, as cider-memd --key-file and ciderctl attach
 * --key-file read it: its bytes are the key (one trailing newline
 * dropped), CIDER_KEY_MIN_LEN to CIDER_KEY_MAX_LEN of them, in a regular
 * file that only its owner may read or write.  `openssl rand -base64 32`
 * makes a good one.
 */
#ifndef CIDER_KEYFILE_H
#define CIDER_KEYFILE_H

#include <stddef.h>

#include <linux/cider.h>

/*
 * Read @path's key into @key (CIDER_KEY_MAX_LEN bytes) and its length
 * into @len: 0, or -1 with why in @err (never any of the key's bytes).
 */
int cider_key_load(const char *path, unsigned char *key, size_t *len,
		   char *err, size_t errlen);

#endif
