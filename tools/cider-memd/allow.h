/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may attach to a memory node: cider-memd's --allow list of
 * addresses and CIDR prefixes (IPv4 and IPv6), checked on every connect
 * request before the accept (allow.c).
 */
#ifndef CIDER_MEMD_ALLOW_H
#define CIDER_MEMD_ALLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define MEMD_ALLOW_MAX	64

struct memd_allow {
	bool set;			/* --allow was given */
	bool any;			/* "any": every address */
	unsigned int n;
	struct {
		int family;		/* AF_INET or AF_INET6 */
		uint8_t addr[16];	/* network byte order; IPv4 in the first 4 */
		unsigned int prefix;	/* bits that must match */
	} e[MEMD_ALLOW_MAX];
};

/*
 * Parse @list ("any", or comma-separated addresses and ADDR/PREFIX) into
 * @a, adding to what it holds: 0, or -1 with why in @err.
 */
int memd_allow_parse(struct memd_allow *a, const char *list, char *err, size_t errlen);
/* May a peer at @sa attach?  An IPv4-mapped IPv6 address is its IPv4 one. */
bool memd_allow_match(const struct memd_allow *a, const struct sockaddr *sa);
/* Is @sa a loopback address (127.0.0.0/8, ::1, or IPv4-mapped 127/8)? */
bool memd_addr_loopback(const struct sockaddr *sa);

#endif
