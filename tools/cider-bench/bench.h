/* SPDX-License-Identifier: GPL-2.0 */
/* What cider-bench's benchmarks share. */
#ifndef CIDER_BENCH_H
#define CIDER_BENCH_H

#include <stdbool.h>

double bench_now(void);
bool bench_parse_num(const char *s, unsigned long min, unsigned long max, unsigned int *out);
/* Totals from /sys/kernel/debug/cider/mnN; 0 or -errno. */
int bench_read_counters(unsigned int mn, unsigned long long *doorbells, unsigned long long *wrs);
int cmd_kv(int argc, char **argv);
int cmd_tear(int argc, char **argv);

#endif
