// SPDX-License-Identifier: GPL-2.0
/*
 * ciderctl attach and detach: one memory node by its address, or every
 * node /etc/cider/cn.conf lists (attach --all, what cider-attach.service
 * runs at boot) and every node attached (detach --all).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cider.h"
#include "numparse.h"
#include "ciderctl.h"
#include "cnconf.h"

/* What a refused attach says: the node's reason, when it gave one. */
static const char *attach_error(int ret)
{
	switch (ret) {
	case -EACCES:
		return "refused by the memory node: not on its allow list (cider-memd --allow)";
	case -EKEYREJECTED:
		return "refused by the memory node: it wants a key proof and this one is "
		       "missing or wrong (key-file FILE, the node's --key-file)";
	case -EKEYEXPIRED:
		return "refused by the memory node: the key proof is out of its 30 s window "
		       "(are the two clocks apart?)";
	case -ENOKEY:
		return "the memory node did not prove it holds the key (it runs without "
		       "--key-file, or with another key)";
	case -ENXIO:
		return "no atomics agent is registered (start cider-agentd)";
	}
	return cider_strerror(ret);
}

/* Refused on purpose (1), or nobody there to ask (3). */
static int attach_status(int ret)
{
	return ret == -EACCES || ret == -EKEYREJECTED || ret == -EKEYEXPIRED ||
	       ret == -ENOKEY || ret == -EADDRINUSE || ret == -EPROTO ||
	       ret == -EOPNOTSUPP || ret == -EPERM || ret == -ENOTTY ?
	       EXIT_REFUSED : EXIT_UNAVAILABLE;
}

/* atomics auto|kernel|agent: where the node's atomic verbs go. */
static int parse_atomics(const char *val, unsigned int *out)
{
	if (!strcmp(val, "auto"))
		*out = 0;
	else if (!strcmp(val, "kernel"))
		*out = CIDER_ATTACH_ATOMICS_KERNEL;
	else if (!strcmp(val, "agent"))
		*out = CIDER_ATTACH_ATOMICS_AGENT;
	else
		return -1;
	return 0;
}

int attach_opt(const char *word, const char *val, struct attach_opts *o)
{
	if (!strncmp(word, "--", 2))	/* --key-file as cider-memd spells it */
		word += 2;
	if (!strcmp(word, "cn") && o->cn_allowed)
		return parse_uint(val, CIDER_MAX_CN_ID, &o->cn);
	if (!strcmp(word, "timeout"))
		return parse_uint(val, CIDER_ATTACH_MAX_TIMEOUT_MS, &o->timeout_ms);
	if (!strcmp(word, "key-file")) {
		o->key_file = val;
		return 0;
	}
	if (!strcmp(word, "atomics"))
		return parse_atomics(val, &o->atomics);
	return -1;
}

/* @at's address as the module takes it, into @out. */
static void format_attach(const struct cider_attach *at, char *out, size_t len)
{
	cider_format_addr(at->family, at->addr, at->port, out, len);
}

/* A bracketed host is an IPv6 literal; a bare one must not be one. */
static int check_host(const char *in, const char *host, size_t n)
{
	if (host[0] == '[' || memchr(host, ':', n)) {
		fprintf(stderr, "ciderctl: attach: '%s': an IPv6 address goes in brackets, "
			"[addr]:port, without a scope id\n", in);
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * @in (HOST:PORT, [v6]:PORT or a.b.c.d:PORT) as an address the module
 * takes, into @out: 0, or the exit status after saying why.  A name
 * resolves the way rping's and perftest's do (getaddrinfo, its first
 * answer, of a family this host has an address of).  A name the resolver
 * cannot look up now may resolve later (3); one it does not know is a
 * typo (2), unless @later: a memory node still booting may register its
 * name when it does (attach --all).
 */
int resolve_addr(const char *in, char *out, size_t len, bool later)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG }, *ai;
	char host[256], err[128];
	const char *colon = strrchr(in, ':');
	struct cider_attach at;
	unsigned int port;
	size_t n;
	int ret;

	if (!cider_parse_addr(in, &at)) {
		format_attach(&at, out, len);
		return 0;
	}
	n = colon ? (size_t)(colon - in) : 0;
	if (!n || n >= sizeof(host) || cider_num_parse_uint(colon + 1, 1, 65535, 0, &port,
							    err, sizeof(err))) {
		fprintf(stderr, "ciderctl: attach: '%s' is not HOST:PORT, a.b.c.d:port or "
			"[v6]:port (port 1..65535)\n", in);
		return EXIT_USAGE;
	}
	memcpy(host, in, n);
	host[n] = '\0';
	ret = check_host(in, host, n);
	if (ret)
		return ret;
	ret = getaddrinfo(host, NULL, &hints, &ai);
	if (ret) {
		fprintf(stderr, "ciderctl: attach: %s: %s\n", host, gai_strerror(ret));
		return ret == EAI_AGAIN || ret == EAI_SYSTEM || (later && ret == EAI_NONAME) ?
		       EXIT_UNAVAILABLE : EXIT_USAGE;
	}
	memset(&at, 0, sizeof(at));
	at.family = ai->ai_family == AF_INET6 ? AF_INET6 : AF_INET;
	at.port = (__u16)port;
	if (ai->ai_family == AF_INET6)
		memcpy(at.addr, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
	else
		memcpy(at.addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
	freeaddrinfo(ai);
	format_attach(&at, out, len);
	return 0;
}

/*
 * With a choice of path for the atomics (CIDER_FEAT_AGENT), which libcider
 * does not offer: the ioctl itself.  No key: the agent cannot prove one.
 */
static int attach_flags(int fd, const char *addr, const struct attach_opts *o,
			struct cider_attach *at)
{
	if (o->key_file) {
		fprintf(stderr, "ciderctl: attach: atomics %s and key-file: the atomics agent "
			"cannot prove a store's key yet\n",
			o->atomics == CIDER_ATTACH_ATOMICS_AGENT ? "agent" : "kernel");
		return 2;
	}
	memset(at, 0, sizeof(*at));
	at->size = sizeof(*at);
	if (cider_parse_addr(addr, at))
		return -EINVAL;
	at->cn_id = o->cn;
	at->timeout_ms = o->timeout_ms;
	at->flags = o->atomics;
	return ioctl(fd, CIDER_IOC_ATTACH, at) < 0 ? -errno : 0;
}

/* Attach @addr (numeric) with @o: 0 or -errno, or 2 for a bad key file. */
static int attach(int fd, const char *addr, const struct attach_opts *o,
		  struct cider_attach *at)
{
	unsigned char key[CIDER_KEY_MAX_LEN];
	struct cider_info info;
	char err[512];
	size_t len = 0;
	int ret;

	if (o->atomics)
		return attach_flags(fd, addr, o, at);
	if (!o->key_file)
		return cider_attach(fd, addr, o->cn, o->timeout_ms, at);
	if (cider_key_load(o->key_file, key, &len, err, sizeof(err))) {
		fprintf(stderr, "ciderctl: attach: key-file %s\n", err);
		return 2;
	}
	ret = cider_get_info(fd, &info);
	if (!ret && !(cider_features(&info) & CIDER_FEAT_KEY)) {
		fprintf(stderr, "ciderctl: attach: this cider.ko cannot prove a key "
			"(no 'key' in ciderctl info's features)\n");
		ret = 2;
	} else {
		ret = cider_attach_key(fd, addr, o->cn, o->timeout_ms, key, len, at);
	}
	explicit_bzero(key, sizeof(key));
	return ret;
}

/* Attach @name (resolved to @addr) and say how it went: the exit status. */
static int attach_report(int fd, const char *name, const char *addr,
			 const struct attach_opts *o)
{
	struct cider_attach at;
	int ret = attach(fd, addr, o, &at);

	if (ret == 2)
		return EXIT_USAGE;
	if (ret) {
		fprintf(stderr, "ciderctl: attach %s: %s\n", name, attach_error(ret));
		return attach_status(ret);
	}
	if (json)
		printf("{\"mn\":%u,\"channels\":%u,\"region_size\":%llu}\n", at.mn_id,
		       at.nr_channels, (unsigned long long)at.region_size);
	else
		printf("mn%u: attached %s, %u channels, region %llu bytes\n", at.mn_id, name,
		       at.nr_channels, (unsigned long long)at.region_size);
	return 0;
}

static int attach_all(int argc, char **argv);

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o = { .cn_allowed = true };
	char addr[INET6_ADDRSTRLEN + 16];
	int i, fd, ret;

	if (argc >= 1 && !strcmp(argv[0], "--all"))
		return attach_all(argc - 1, argv + 1);
	if (argc < 1 || argc % 2 == 0) {
		fprintf(stderr, "ciderctl: usage: attach ADDR:PORT [cn ID] [timeout MS] "
			"[key-file FILE] [atomics auto|kernel|agent], or attach --all\n");
		return EXIT_USAGE;
	}
	for (i = 1; i < argc; i += 2) {
		if (attach_opt(argv[i], argv[i + 1], &o)) {
			fprintf(stderr, "ciderctl: attach: bad '%s %s' (cn 0..%d, timeout 0..%d ms, "
				"key-file FILE, atomics auto|kernel|agent)\n", argv[i], argv[i + 1],
				CIDER_MAX_CN_ID, CIDER_ATTACH_MAX_TIMEOUT_MS);
			return EXIT_USAGE;
		}
	}
	ret = resolve_addr(argv[0], addr, sizeof(addr), false);
	if (ret)
		return ret;
	fd = ctl_dev();
	if (fd < 0)
		return EXIT_UNAVAILABLE;
	return attach_report(fd, argv[0], addr, &o);
}

/* The attached node at @addr (numeric), into @mi: 0, -ENOENT, or -errno. */
static int find_attached(int fd, const char *addr, struct cider_mn_info *mi)
{
	struct cider_attach want;
	int err;

	if (cider_parse_addr(addr, &want))
		return -EINVAL;
	for (err = cider_mn_info(fd, 0, mi); !err; err = cider_mn_info(fd, mi->mn_id + 1, mi))
		if (mi->family == want.family && mi->port == want.port &&
		    !memcmp(mi->addr, want.addr, want.family == AF_INET6 ? 16 : 4))
			return 0;
	return err;
}

/*
 * cn.conf's node @n: attached unless it already is.  A node attached
 * and dead is left as it is: it died for a reason (its node serves
 * another store, refused it, or stayed away past loss_timeout_ms), and
 * attaching it again could carry on against a store that is not the one
 * it had (reformatted, empty).  The operator detaches it first.
 */
static int attach_conf_node(int fd, const struct cn_conf *c, const struct cn_conf_node *n)
{
	char addr[INET6_ADDRSTRLEN + 16];
	struct cider_mn_info mi;
	int ret = resolve_addr(n->addr, addr, sizeof(addr), true);

	if (ret)
		return ret;
	ret = find_attached(fd, addr, &mi);
	if (ret && ret != -ENOENT) {
		fprintf(stderr, "ciderctl: attach %s: %s\n", n->addr, cider_strerror(ret));
		return EXIT_UNAVAILABLE;
	}
	if (ret)
		return attach_report(fd, n->addr, addr, &n->opts);
	if (mi.state == CIDER_MN_DEAD) {
		fprintf(stderr, "ciderctl: mn%u %s: dead%s%s%s, not attached again: it may "
			"serve another store now; ciderctl detach mn%u, then attach\n",
			mi.mn_id, n->addr, mi.dead_reason ? " (" : "",
			mi.dead_reason ? strerror(-mi.dead_reason) : "",
			mi.dead_reason ? ")" : "", mi.mn_id);
		return EXIT_REFUSED;
	}
	if (mi.cn_id != c->cn) {
		fprintf(stderr, "ciderctl: mn%u %s: attached as cn %u, %s says cn %u: "
			"ciderctl detach mn%u first\n", mi.mn_id, n->addr, mi.cn_id, c->path,
			c->cn, mi.mn_id);
		return EXIT_REFUSED;
	}
	printf("mn%u: %s already attached (%s)\n", mi.mn_id, n->addr,
	       mi.state == CIDER_MN_LIVE ? "live" : "reconnecting");
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Attach @c's nodes, each once; then the ones nobody answered for (3)
 * again after 1, 2, 4 .. 30 s while @retry_s have not passed (checked
 * before each node: one slow node does not hold the others past it).
 * The highest exit status of its nodes.
 */
static int attach_conf(int fd, struct cn_conf *c, unsigned int retry_s)
{
	double deadline = now_s() + retry_s;
	unsigned int i, left, delay = 1, round;
	int worst;

	for (round = 0;; round++) {
		worst = 0;
		left = 0;
		for (i = 0; i < c->nr; i++) {
			struct cn_conf_node *n = &c->node[i];

			if (!round || (n->status == EXIT_UNAVAILABLE && now_s() < deadline))
				n->status = attach_conf_node(fd, c, n);
			if (n->status > worst)
				worst = n->status;
			left += n->status == EXIT_UNAVAILABLE;
		}
		if (!left || now_s() + delay > deadline)
			return worst;
		fprintf(stderr, "ciderctl: attach --all: %u of %u memory nodes unavailable; "
			"again in %u s\n", left, c->nr, delay);
		sleep(delay);
		delay = delay * 2 > 30 ? 30 : delay * 2;
	}
}

/* attach --all [config FILE] [retry SEC] */
static int attach_all(int argc, char **argv)
{
	const char *path = getenv("CIDER_CN_CONF") ?: CIDER_CN_CONF;
	unsigned int retry_s = 0;
	struct cn_conf c;
	int i, fd, ret;

	for (i = 0; i + 1 < argc; i += 2) {
		const char *w = strncmp(argv[i], "--", 2) ? argv[i] : argv[i] + 2;

		if (!strcmp(w, "config"))
			path = argv[i + 1];
		else if (strcmp(w, "retry") || parse_uint(argv[i + 1], 86400, &retry_s))
			break;
	}
	if (i != argc || json) {
		fprintf(stderr, "ciderctl: usage: attach --all [config FILE] [retry 0..86400 s] "
			"(text output only)\n");
		return EXIT_USAGE;
	}
	if (cn_conf_read(path, &c))
		return EXIT_USAGE;
	if (!c.nr) {
		printf("%s: no memory nodes (mn lines): nothing to attach\n", path);
		return 0;
	}
	fd = ctl_dev();
	ret = fd < 0 ? EXIT_UNAVAILABLE : attach_conf(fd, &c, retry_s);
	cn_conf_free(&c);
	return ret;
}

/* detach --all: every attached node. */
static int detach_all(int fd)
{
	struct cider_mn_info mi;
	char addr[64];
	int err, ret, status = 0;

	for (err = cider_mn_info(fd, 0, &mi); !err; err = cider_mn_info(fd, mi.mn_id + 1, &mi)) {
		cider_format_addr(mi.family, mi.addr, mi.port, addr, sizeof(addr));
		ret = cider_detach(fd, mi.mn_id);
		if (ret && ret != -ENOENT) {	/* gone meanwhile: as asked */
			fprintf(stderr, "ciderctl: detach mn%u: %s\n", mi.mn_id,
				cider_strerror(ret));
			status = EXIT_REFUSED;
		} else {
			printf("mn%u: detached %s\n", mi.mn_id, addr);
		}
	}
	if (err != -ENOENT) {
		fprintf(stderr, "ciderctl: detach --all: %s\n", cider_strerror(err));
		return EXIT_UNAVAILABLE;
	}
	return status;
}

int cmd_detach(int argc, char **argv)
{
	int fd;
	unsigned int id = 0;
	bool all = argc == 1 && !strcmp(argv[0], "--all");
	int ret;

	if (argc != 1 || (!all && parse_mn(argv[0], &id))) {
		fprintf(stderr, "ciderctl: usage: detach MN, or detach --all\n");
		return EXIT_USAGE;
	}
	fd = ctl_dev();
	if (fd < 0)
		return EXIT_UNAVAILABLE;
	if (all)
		return detach_all(fd);
	ret = cider_detach(fd, id);
	if (ret) {
		fprintf(stderr, "ciderctl: detach mn%u: %s\n", id,
			ret == -ENOENT ? "no such memory node" : cider_strerror(ret));
		return 1;
	}
	return 0;
}
