/* SPDX-License-Identifier: GPL-2.0 */
/* What cider-bench's benchmarks share. */
#ifndef CIDER_BENCH_H
#define CIDER_BENCH_H

#include <stdbool.h>

double bench_now(void);
bool bench_parse_num(const char *s, unsigned long min, unsigned long max, unsigned int *out);
/* Totals from /sys/kernel/debug/cider/mnN; 0 or -errno. */
int bench_read_counters(unsigned int mn, unsigned long long *doorbells, unsigned long long *wrs);
/*
 * Which path a node's verbs took, from its counters by name
 * (CIDER_IOC_MN_STATS): the kernel's queue pairs (chan_read, chan_write,
 * chan_cas, chan_faa) or the atomics agent (agent_batches, agent_verbs,
 * agent_failed).  have: the module counts the agent's.
 */
struct bench_paths {
	bool have;
	unsigned long long chan[4], agent_batches, agent_verbs, agent_failed;
};

/* 0 or -errno (then nothing is had). */
int bench_read_paths(int fd, unsigned int mn, struct bench_paths *c);
void bench_paths_sub(struct bench_paths *d, const struct bench_paths *a,
		     const struct bench_paths *b);
int cmd_kv(int argc, char **argv);
int cmd_tear(int argc, char **argv);

#endif
