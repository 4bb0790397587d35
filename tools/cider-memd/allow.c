// SPDX-License-Identifier: GPL-2.0
/*
 * cider-memd's allow list (allow.h).  A connect request is checked by its
 * source address only: an RDMA fabric is assumed private, and the list
 * keeps out hosts that should not reach the store, not a host that forges
 * its address (Documentation/memory-node.rst, the threat model).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "numparse.h"

static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* One entry, ADDR or ADDR/PREFIX: 0, or -1 with why in @err. */
static int allow_entry(struct memd_allow *a, char *s, char *err, size_t errlen)
{
	char *slash = strchr(s, '/');
	unsigned int max;
	long prefix = -1;
	uint64_t v;
	int family;

	if (slash) {
		*slash = '\0';
		if (cider_num_parse(slash + 1, 0, 128, 0, &v, err, errlen)) {
			snprintf(err, errlen, "bad prefix length in '%s/%s'", s, slash + 1);
			return -1;
		}
		prefix = (long)v;
	}
	if (a->n == MEMD_ALLOW_MAX) {
		snprintf(err, errlen, "more than %d entries", MEMD_ALLOW_MAX);
		return -1;
	}
	if (inet_pton(AF_INET, s, a->e[a->n].addr) == 1) {
		family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, s, a->e[a->n].addr) == 1) {
		family = AF_INET6;
		max = 128;
	} else {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address", s);
		return -1;
	}
	if (prefix > (long)max) {
		snprintf(err, errlen, "prefix /%ld is longer than the address (%u bits)", prefix, max);
		return -1;
	}
	a->e[a->n].family = family;
	a->e[a->n].prefix = prefix < 0 ? max : (unsigned int)prefix;
	a->n++;
	return 0;
}

int memd_allow_parse(struct memd_allow *a, const char *list, char *err, size_t errlen)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int ret = 0;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	a->set = true;
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "any"))
			a->any = true;
		else
			ret = allow_entry(a, tok, err, errlen);
	}
	if (!ret && !a->any && !a->n) {
		snprintf(err, errlen, "an empty list admits nobody");
		ret = -1;
	}
	free(copy);
	return ret;
}

/* @sa's address as a family and bytes; IPv4-mapped IPv6 as IPv4.  0 or -1. */
static int addr_of(const struct sockaddr *sa, int *family, uint8_t addr[16])
{
	if (sa->sa_family == AF_INET) {
		*family = AF_INET;
		memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family != AF_INET6)
		return -1;
	memcpy(addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	*family = AF_INET6;
	if (!memcmp(addr, v4mapped, sizeof(v4mapped))) {
		memmove(addr, addr + 12, 4);
		*family = AF_INET;
	}
	return 0;
}

/* Do the first @bits bits of @x and @y agree? */
static bool prefix_eq(const uint8_t *x, const uint8_t *y, unsigned int bits)
{
	unsigned int whole = bits / 8, rest = bits % 8;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));

	if (memcmp(x, y, whole))
		return false;
	return !rest || ((x[whole] ^ y[whole]) & mask) == 0;
}

bool memd_allow_match(const struct memd_allow *a, const struct sockaddr *sa)
{
	uint8_t addr[16];
	unsigned int i;
	int family;

	if (a->any)
		return true;
	if (addr_of(sa, &family, addr))
		return false;
	for (i = 0; i < a->n; i++)
		if (a->e[i].family == family && prefix_eq(a->e[i].addr, addr, a->e[i].prefix))
			return true;
	return false;
}

bool memd_addr_loopback(const struct sockaddr *sa)
{
	static const uint8_t one[16] = { [15] = 1 };
	uint8_t addr[16];
	int family;

	if (addr_of(sa, &family, addr))
		return false;
	return family == AF_INET ? addr[0] == 127 : !memcmp(addr, one, 16);
}
