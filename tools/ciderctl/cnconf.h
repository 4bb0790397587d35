/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /etc/cider/cn.conf: this compute node's id and the memory nodes it
 * attaches at boot (ciderctl attach --all, cider-attach.service).
 */
#ifndef CIDERCTL_CNCONF_H
#define CIDERCTL_CNCONF_H

#include <stdbool.h>

#ifndef CIDER_CN_CONF
#define CIDER_CN_CONF		"/etc/cider/cn.conf"
#endif
#define CN_CONF_MAX_NODES	64

/* An attach's options: from the command line or from a line of cn.conf. */
struct attach_opts {
	unsigned int cn;
	unsigned int timeout_ms;
	const char *key_file;
	unsigned int atomics;	/* CIDER_ATTACH_ATOMICS_*, 0: auto */
	bool cn_allowed;	/* the command line's; cn.conf says it once */
};

struct cn_conf_node {
	char *addr;		/* as written: HOST:PORT, a.b.c.d:port, [v6]:port */
	struct attach_opts opts;
	int status;		/* attach --all's: its exit status so far */
};

struct cn_conf {
	const char *path;
	unsigned int cn;
	unsigned int nr;
	struct cn_conf_node node[CN_CONF_MAX_NODES];
};

/* Read @path into @c: 0, or -1 after saying FILE:LINE: what is wrong. */
int cn_conf_read(const char *path, struct cn_conf *c);
void cn_conf_free(struct cn_conf *c);

/* attach.c: one option word and its value into @o; -1 if not one. */
int attach_opt(const char *word, const char *val, struct attach_opts *o);
int resolve_addr(const char *in, char *out, size_t len, bool later);

#endif
