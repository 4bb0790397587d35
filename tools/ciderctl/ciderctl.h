/* SPDX-License-Identifier: GPL-2.0 */
/* ciderctl: what its commands' files share. */
#ifndef CIDERCTL_H
#define CIDERCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Exit statuses (ciderctl(8)): 0 done; 1 the key is absent or exists, or
 * the node refused; 2 bad usage; 3 the module, the device or the memory
 * node is not there or not reachable; 4 the outcome is unknown (a write
 * sent when the node was lost: it may have happened).
 */
#define EXIT_REFUSED		1
#define EXIT_USAGE		2
#define EXIT_UNAVAILABLE	3
#define EXIT_UNKNOWN		4

extern bool json;

int ctl_dev(void);
void json_str(const char *s);
int parse_uint(const char *s, unsigned int max, unsigned int *out);
int parse_mn(const char *s, unsigned int *id);

struct cider_mn_info;
int kv_store(int fd, const char *arg, struct cider_mn_info *mi);
int kv_status(int ret);

/* kvload.c: kv [-m MN] load ARGS */
int kv_load(const char *mn, int argc, char **argv);

/* kvscan.c: kv [-m MN] scan|dump ARGS */
int kv_scan(const char *mn, int argc, char **argv);
int kv_dump(const char *mn, int argc, char **argv);
/*
 * A key for people: an array store's index in decimal, printable ASCII
 * as it is, anything else (or what would read as hex) as 0x and hex.
 */
void kv_print_key(FILE *f, bool array, const uint8_t *k, size_t len);

/* attach.c */
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);

#endif
