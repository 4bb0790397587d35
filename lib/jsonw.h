/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tools' JSON strings (jsonw.c): one escaper, a check that bytes are
 * text, and base64 for bytes that are not.
 */
#ifndef CIDER_JSONW_H
#define CIDER_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* @n bytes at @s as a quoted JSON string: " \ and controls escaped. */
void cider_json_str(FILE *f, const char *s, size_t n);

/* Are @n bytes at @p well-formed UTF-8 (shortest forms, no surrogates)? */
bool cider_utf8_ok(const void *p, size_t n);

/* @n bytes at @p in base64 (RFC 4648), quoted. */
void cider_json_base64(FILE *f, const void *p, size_t n);

#endif
