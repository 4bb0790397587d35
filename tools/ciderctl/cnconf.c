// SPDX-License-Identifier: GPL-2.0
/*
 * cn.conf, read for attach --all.  Lines of words; '#' starts a comment:
 *
 *   cn ID                                   this compute node's id, once
 *   mn HOST:PORT [timeout MS] [key-file FILE]   a memory node, one per line
 *
 * The file is checked whole before anything is attached, so a typo
 * attaches nothing and names its line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cider.h"
#include "ciderctl.h"
#include "cnconf.h"

#define CN_CONF_MAX_WORDS	8

/* @line's words, in place: their count, or -1 if more than @max. */
static int split_words(char *line, char **w, int max)
{
	char *save, *p;
	int n = 0;

	line[strcspn(line, "#\n")] = '\0';
	for (p = strtok_r(line, " \t\r", &save); p; p = strtok_r(NULL, " \t\r", &save)) {
		if (n == max)
			return -1;
		w[n++] = p;
	}
	return n;
}

/* An mn line's words (after "mn") into the next node: 0 or a message. */
static const char *conf_mn(struct cn_conf *c, char **w, int n)
{
	struct cn_conf_node *node = &c->node[c->nr];
	const char *key;
	unsigned int i;
	int k;

	if (n < 1 || n % 2 == 0)
		return "mn takes HOST:PORT [timeout MS] [key-file FILE]";
	if (c->nr == CN_CONF_MAX_NODES)
		return "more memory nodes than attach --all takes (64)";
	for (i = 0; i < c->nr; i++)
		if (!strcmp(c->node[i].addr, w[0]))
			return "this memory node is listed twice";
	memset(node, 0, sizeof(*node));
	for (k = 1; k < n; k += 2)
		if (attach_opt(w[k], w[k + 1], &node->opts))
			return "bad option (timeout 0..60000 ms, key-file FILE)";
	node->opts.cn = c->cn;
	key = node->opts.key_file;
	node->addr = strdup(w[0]);
	node->opts.key_file = key ? strdup(key) : NULL;
	if (!node->addr || (key && !node->opts.key_file)) {
		free(node->addr);
		free((char *)node->opts.key_file);
		return "out of memory";
	}
	c->nr++;
	return NULL;
}

/* One line's words: NULL, or what is wrong with them. */
static const char *conf_line(struct cn_conf *c, char **w, int n, bool *have_cn)
{
	if (!n)
		return NULL;
	if (!strcmp(w[0], "mn"))
		return conf_mn(c, w + 1, n - 1);
	if (strcmp(w[0], "cn"))
		return "unknown word: lines are 'cn ID' or 'mn HOST:PORT [timeout MS] [key-file FILE]'";
	if (*have_cn)
		return "cn is given twice";
	if (n != 2 || parse_uint(w[1], CIDER_MAX_CN_ID, &c->cn))
		return "cn takes one id, 0..255";
	*have_cn = true;
	return NULL;
}

int cn_conf_read(const char *path, struct cn_conf *c)
{
	char *line = NULL, *w[CN_CONF_MAX_WORDS];
	const char *err = NULL;
	unsigned int lineno = 0, i;
	bool have_cn = false;
	size_t cap = 0;
	FILE *f;
	int n;

	memset(c, 0, sizeof(*c));
	c->path = path;
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "ciderctl: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (!err && getline(&line, &cap, f) > 0) {
		lineno++;
		n = split_words(line, w, CN_CONF_MAX_WORDS);
		err = n < 0 ? "too many words" : conf_line(c, w, n, &have_cn);
	}
	if (!err && ferror(f)) {	/* not the end: a directory, an I/O error */
		lineno = 0;
		err = strerror(errno);
	}
	free(line);
	fclose(f);
	if (!err && c->nr && !have_cn) {
		lineno = 0;
		err = "no 'cn ID' line: which compute node is this?";
	}
	/* cn may come after the mn lines. */
	for (i = 0; i < c->nr; i++)
		c->node[i].opts.cn = c->cn;
	if (!err)
		return 0;
	if (lineno)
		fprintf(stderr, "ciderctl: %s:%u: %s\n", path, lineno, err);
	else
		fprintf(stderr, "ciderctl: %s: %s\n", path, err);
	cn_conf_free(c);
	return -1;
}

void cn_conf_free(struct cn_conf *c)
{
	unsigned int i;

	for (i = 0; i < c->nr; i++) {
		free(c->node[i].addr);
		free((char *)c->node[i].opts.key_file);
	}
	c->nr = 0;
}
