// SPDX-License-Identifier: GPL-2.0
/*
 * cider-memd: a CIDER memory node.  Registers one region for remote READ,
 * WRITE and atomics, formats its superblock once, and accepts rdma_cm
 * connections from compute nodes.  After that its CPU does nothing per
 * operation: every KV operation is one-sided RDMA from the CNs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <syslog.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "store.h"
#include "lockqueue.h"
#include "allow.h"
#include "key.h"
#include "numparse.h"
#include "cider.h"
#include "backing.h"
#include "notify.h"

#define MAX_DEVS 8

struct memdev {			/* one RDMA device the region is registered on */
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;	/* the QPs need one; nothing is ever posted */
	uint32_t max_qp_rd_atom;
};

/* A compute node's connection (one per channel), accepted or connected. */
struct conn {
	struct rdma_cm_id *id;
	struct cider_cn_hello who;
	char from[INET6_ADDRSTRLEN + 8];	/* its address:port */
	time_t since;			/* connected (0: accepted, not yet) */
	struct conn *next;
};

static struct {
	const char *listen;
	struct memd_allow allow;	/* who may attach */
	const char *backing;		/* the region's file, or NULL: anonymous */
	bool format;			/* format the backing file's store anew */
	const char *status_file;	/* who is attached, rewritten on each change */
	const char *key_file;		/* the store's shared key, or NULL */
	char allow_text[256];		/* as given, for the log */
	uint64_t size;
	struct cider_store_params store;	/* region_size filled in last */
	int hugepages;		/* -1 never, 0 auto, 1 always */
	bool verbose;
	bool dry_run;
	bool no_cache;			/* --no-cache */
	bool cache_implied;		/* cider mode's default: a backed store keeps its own */
} opt = {
	.size = 64ULL << 20,
	.store = { .index = CIDER_SB_INDEX_HASH, .mode = CIDER_SB_MODE_CIDER },
};
static struct cider_mn_sb sb;	/* as formatted */
static struct memd_key key;	/* --key-file's: what compute nodes must prove */

static void *region;
static bool region_huge;
/*
 * What is mapped and registered: the region plus a tail the compute nodes
 * never address (cider.ko checks every operation against opt.size).
 *
 * Why: Linux 6.1's rxe (drivers/infiniband/sw/rxe/rxe_mr.c, rxe_mr_copy())
 * advances to the next map at the end of the last buffer of a map before
 * it checks whether anything is left to copy, reading mr->map[num_map],
 * one pointer past its kmalloc'ed array, whenever a READ or WRITE ends
 * exactly at the end of an MR whose page count is a multiple of
 * RXE_BUF_PER_MAP (256 pages: any region of a whole number of MiB).
 * KASAN reports it as a slab-out-of-bounds read in rxe_mr_copy; the value
 * read is not used.  Upstream removed that code when it replaced the map
 * array by an xarray (592627ccbdff "RDMA/rxe: Replace rxe_map and
 * rxe_phys_buf by xarray", v6.4); 6.1 stable still has it.  With one more
 * page registered, no access the region allows ends at the MR's end.
 */
static uint64_t region_mapped;
#define REGION_TAIL 4096
static struct memdev devs[MAX_DEVS];
static int nr_devs;
static struct conn *conns;
static unsigned long nr_connects, nr_disconnects;

/*
 * One log line on stderr.  Under systemd ($JOURNAL_STREAM: stderr is the
 * journal) it starts with its syslog priority, "<3>" or "<6>", which
 * journald takes as the line's priority (sd-daemon(3)'s convention), and
 * carries no time of its own: the journal stamps every line.
 */
static void logat(int prio, const char *fmt, va_list ap)
{
	static int journal = -1;
	struct timespec ts;

	if (journal < 0)
		journal = getenv("JOURNAL_STREAM") != NULL;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (journal)
		fprintf(stderr, "<%d>cider-memd: ", prio);
	else
		fprintf(stderr, "cider-memd[%ld.%03ld]: ", (long)ts.tv_sec, ts.tv_nsec / 1000000);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* What happened, as expected (syslog's LOG_INFO). */
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	logat(LOG_INFO, fmt, ap);
	va_end(ap);
}

/* What went wrong, or was refused (LOG_ERR). */
static void logerr(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	logat(LOG_ERR, fmt, ap);
	va_end(ap);
}

static void usage(FILE *f)
{
	fprintf(f,
"NAME\n"
"    cider-memd - CIDER memory node: a passive region served over RDMA\n"
"\n"
"SYNOPSIS\n"
"    cider-memd --listen ADDR:PORT [--allow LIST] [--key-file FILE]\n"
"               [--backing PATH [--format]]\n"
"               [--status-file PATH] [--size SIZE] [--index hash|array]\n"
"               [--keys N] [--mode osync|caslock|mcs|cider] [--lease-ms MS]\n"
"               [--grace-us US] [--lock-queue N] [--member-lease-ms MS]\n"
"               [--cache-lease-us US [--clock-margin-us US] | --no-cache]\n"
"               [--chunk SIZE] [--hugepages auto|always|never]\n"
"               [--verbose]\n"
"    cider-memd --dry-run [--size SIZE] [store options]\n"
"    cider-memd --new-key FILE\n"
"\n"
"DESCRIPTION\n"
"    Allocates one memory region and formats a KV store in it (layout\n"
"    version %d): a superblock recording the store's parameters, a\n"
"    membership table, the index (hash: 1..1024-byte keys, 0..64 KiB\n"
"    values; array: the paper's pointer array, 8-byte integer keys\n"
"    0..N-1 and 8-byte values), a lock record per index word and the data\n"
"    area, handed out in chunks.  Every compute node reads the parameters\n"
"    at attach, so all of them run the same mode on the same layout.\n"
"    Without --backing the memory is not persistent: a restart formats an\n"
"    empty store, and every compute node attached refuses it (the store id\n"
"    differs).  With --backing a restarted daemon serves the same store, and\n"
"    the compute nodes reconnect to it by themselves.\n"
"\n"
"    The region is registered with local write and remote read, write and\n"
"    atomic access on every RDMA device a compute node connects through;\n"
"    any number of rdma_cm connections are accepted.  The accept carries\n"
"    the region's address, rkey, size and layout version.  After start-up\n"
"    the daemon only logs\n"
"    connects and disconnects: compute nodes use the region with one-sided\n"
"    READ, WRITE, compare-and-swap and fetch-and-add.\n"
"\n"
"OPTIONS\n"
"    -l, --listen ADDR:PORT   address to listen on (IPv4 a.b.c.d:port or\n"
"                             [IPv6]:port); required\n"
"    -b, --backing PATH       keep the region in this file, mapped shared: on\n"
"                             tmpfs (/dev/shm) or hugetlbfs, or a device-DAX\n"
"                             node.  A new file gets a new store; an existing\n"
"                             one is served as it is if the store options\n"
"                             describe it (else refused, the difference\n"
"                             named).  It survives the daemon, not the\n"
"                             machine (unless the device is persistent)\n"
"        --format             with --backing: format its store anew, losing\n"
"                             what it holds\n"
"        --status-file PATH   who is attached (cn id, channel, address, since\n"
"                             when), rewritten on every connect and\n"
"                             disconnect; SIGUSR1 logs the same\n"
"    -a, --allow LIST         who may attach: comma-separated addresses and\n"
"                             ADDR/PREFIX (IPv4, IPv6), or any; may be given\n"
"                             again.  Required unless ADDR is a loopback\n"
"                             address.  Others are refused before the\n"
"                             accept, with a reason their attach reports\n"
"    -K, --key-file FILE      the store's shared key (16 to 64 bytes, one\n"
"                             trailing newline dropped; mode 600): a compute\n"
"                             node is admitted only if its connect proves it\n"
"                             holds the key (ciderctl attach --key-file), and\n"
"                             the accept proves it back.  Others are refused\n"
"                             like unlisted addresses.  Clocks must agree\n"
"                             within 30 s\n"
"    -s, --size SIZE          region size, with K, M or G suffix (default 64M,\n"
"                             at least 1M, a multiple of 4K)\n"
"    -i, --index NAME         hash (default) or array\n"
"    -k, --keys N             capacity the index is sized for (default: one\n"
"                             key per KiB of region); the hash index gets\n"
"                             four slots per key, the array N pointers\n"
"    -m, --mode NAME          synchronization every compute node uses:\n"
"                             osync, caslock, mcs or cider (default)\n"
"        --lease-ms MS        longest a compute node may hold a key's lock\n"
"                             before others recover it (default 50)\n"
"        --grace-us US        how long a freed block waits before reuse\n"
"                             (default 2000; shorter than the lease)\n"
"        --lock-queue N       waiters each lock records on the memory node\n"
"                             before later ones poll for room: a power of\n"
"                             two from 2 to 128 (default 8; at least the\n"
"                             compute nodes that contend for a key)\n"
"        --member-lease-ms MS how long a compute node's heartbeat in the\n"
"                             membership table may stand still before its\n"
"                             id may be taken over (1000..600000, default\n"
"                             2000)\n"
"        --cache-lease-us US  let compute nodes cache hot keys under read\n"
"                             leases of US (5000 suits --lease-ms 50);\n"
"                             cider mode's default: 5000, or what the\n"
"                             lock's lease allows; other modes: no cache\n"
"        --no-cache           compute nodes cache nothing (cider mode)\n"
"        --clock-margin-us US how far the compute nodes' clocks may drift\n"
"                             apart over a lease (default 1000, at most\n"
"                             the lease); lease plus margin at most an\n"
"                             eighth of --lease-ms\n"
"    -c, --chunk SIZE         allocation chunk of the data area (default 1M\n"
"                             for hash, which must hold a 128 KiB block;\n"
"                             64K for array)\n"
"    -n, --dry-run            print the store's layout and exit\n"
"        --new-key FILE       write a new key for --key-file to FILE (mode\n"
"                             600; an existing file is left alone) and exit\n"
"    -H, --hugepages MODE     auto: 2 MiB pages when available (default);\n"
"                             always: fail without them; never\n"
"    -v, --verbose            log every connection event\n"
"    -h, --help               this text\n"
"    -V, --version            print the version and exit\n"
"\n"
"SIGNALS\n"
"    SIGINT, SIGTERM          disconnect every compute node, release\n"
"                             everything and exit 0\n"
"\n"
"EXIT STATUS\n"
"    0 on a clean shutdown, 1 on a runtime error, 2 on bad usage.\n",
		CIDER_LAYOUT_VERSION);
}

/* Bytes, with a K, M, G or T suffix (the caller checks the range). */
static bool parse_size(const char *s, uint64_t *out)
{
	char err[128];

	return !cider_num_parse(s, 0, UINT64_MAX, CIDER_NUM_SIZE | CIDER_NUM_HEX, out, err,
				sizeof(err));
}

static int parse_listen(const char *s, struct sockaddr_storage *ss)
{
	char host[256], *port, err[128];
	/* A host name is resolved (its first address), as rping and perftest do. */
	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	uint64_t p;
	int ret;

	if (strlen(s) >= sizeof(host))
		return -1;
	strcpy(host, s);
	port = strrchr(host, ':');
	if (!port)
		return -1;
	*port++ = '\0';
	/* getaddrinfo() would take 99999 as 99999 mod 65536. */
	if (cider_num_parse(port, 1, 65535, 0, &p, err, sizeof(err)))
		return -1;
	if (host[0] == '[') {
		size_t n = strlen(host);

		if (n < 2 || host[n - 1] != ']')
			return -1;
		host[n - 1] = '\0';
		memmove(host, host + 1, n - 1);
	}
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret)
		return -1;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

/*
 * The option of @old (a store found in the backing file) that differs
 * from @want (what the command line formats), as "--NAME old (the command
 * line: --NAME new)", or NULL when it is the same store's format.
 */
static const char *store_differs(const struct cider_mn_sb *old, const struct cider_mn_sb *want)
{
	static char why[160];

#define DIFF(field, opt, fmt, conv)						\
	do {									\
		if (old->field != want->field) {				\
			snprintf(why, sizeof(why), opt " " fmt " (the command line: " opt \
				 " " fmt ")", conv(old->field), conv(want->field));	\
			return why;						\
		}								\
	} while (0)
#define AS_IS(x) (unsigned long long)(x)
#define MS(x) (unsigned long long)((x) / 1000000)
#define US(x) (unsigned long long)((x) / 1000)
	DIFF(index, "--index", "%s", cider_store_index_name);
	DIFF(mode, "--mode", "%s", cider_store_mode_name);
	DIFF(nr_keys, "--keys", "%llu", AS_IS);
	DIFF(lease_ns, "--lease-ms", "%llu", MS);
	DIFF(grace_ns, "--grace-us", "%llu", US);
	DIFF(lock_qlen, "--lock-queue", "%llu", AS_IS);
	DIFF(member_lease_ns, "--member-lease-ms", "%llu", MS);
	/* Cider mode's cache by default: the store as it was formatted. */
	if (!opt.cache_implied) {
		DIFF(cache_lease_ns, "--cache-lease-us", "%llu", US);
		DIFF(cache_margin_ns, "--clock-margin-us", "%llu", US);
	}
	DIFF(chunk_size, "--chunk", "%llu", AS_IS);
#undef DIFF
#undef AS_IS
#undef MS
#undef US
	return NULL;
}

/*
 * Serve the store the backing file holds, as it is, if the command line
 * describes it: 0, or the exit status (2: another store, named).
 */
static int store_adopt(void)
{
	struct cider_mn_sb *held = region;
	const char *why = cider_store_check(held, opt.size);

	if (why) {
		logerr("--backing %s does not hold a store this daemon can serve: %s "
		       "(--format formats it anew, losing what it holds)", opt.backing, why);
		return 2;
	}
	why = store_differs(held, &sb);
	if (why) {
		logerr("--backing %s holds a store with %s: start with its options, or --format "
		       "to format it anew (losing what it holds)", opt.backing, why);
		return 2;
	}
	held->serves++;
	sb = *held;
	logmsg("serving the store in %s again: store id %016" PRIx64 ", start %" PRIu64,
	       opt.backing, (uint64_t)sb.store_id, (uint64_t)sb.serves);
	return 0;
}

/* The region in --backing's file: 0, or the exit status. */
static int region_backed(void)
{
	struct memd_backing b;
	char err[320];

	if (memd_backing_map(&b, opt.backing, opt.size + REGION_TAIL, err, sizeof(err))) {
		logerr("--backing %s: %s", opt.backing, err);
		return 1;
	}
	region = b.map;
	region_mapped = b.len;
	region_huge = b.huge;
	if (!b.fresh && !opt.format)
		return store_adopt();
	if (!b.fresh)
		memset(region, 0, opt.size);	/* --format: nothing of the old store stays */
	sb.serves = 1;
	memcpy(region, &sb, sizeof(sb));
	logmsg("formatted a new store in %s: store id %016" PRIx64, opt.backing,
	       (uint64_t)sb.store_id);
	return 0;
}

/* The region, formatted or found: 0, or the exit status. */
static int region_alloc(void)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;

	if (opt.backing)
		return region_backed();
	region = MAP_FAILED;
	/* A huge page mapping is a whole number of huge pages. */
	region_mapped = opt.size + (2ULL << 20);
	if (opt.hugepages >= 0 && opt.size % (2ULL << 20) == 0)
		region = mmap(NULL, region_mapped, PROT_READ | PROT_WRITE,
			      flags | MAP_HUGETLB, -1, 0);
	region_huge = region != MAP_FAILED;
	if (!region_huge && opt.hugepages > 0) {
		logerr("no huge pages for %" PRIu64 " bytes (see /proc/sys/vm/nr_hugepages)", opt.size);
		return 1;
	}
	if (!region_huge) {
		region_mapped = opt.size + REGION_TAIL;
		region = mmap(NULL, region_mapped, PROT_READ | PROT_WRITE, flags, -1, 0);
	}
	if (region == MAP_FAILED) {
		logerr("cannot allocate %" PRIu64 " bytes: %s", opt.size, strerror(errno));
		return 1;
	}
	/* Anonymous memory is zero: only the superblock needs writing. */
	sb.serves = 1;
	memcpy(region, &sb, sizeof(sb));
	return 0;
}

static struct memdev *memdev_get(struct ibv_context *verbs)
{
	struct ibv_device_attr attr;
	struct memdev *d;
	int i;

	for (i = 0; i < nr_devs; i++)
		if (devs[i].verbs == verbs)
			return &devs[i];
	if (nr_devs == MAX_DEVS) {
		logerr("more than %d RDMA devices", MAX_DEVS);
		return NULL;
	}
	d = &devs[nr_devs];
	if (ibv_query_device(verbs, &attr))
		return NULL;
	d->verbs = verbs;
	d->max_qp_rd_atom = attr.max_qp_rd_atom;
	d->pd = ibv_alloc_pd(verbs);
	if (!d->pd)
		goto err;
	d->mr = ibv_reg_mr(d->pd, region, opt.size + REGION_TAIL, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!d->mr)
		goto err;
	d->cq = ibv_create_cq(verbs, 1, NULL, NULL, 0);
	if (!d->cq)
		goto err;
	logmsg("region registered on %s: addr 0x%" PRIx64 " rkey 0x%x, atomics %s",
	       ibv_get_device_name(verbs->device), (uint64_t)(uintptr_t)region,
	       d->mr->rkey, attr.atomic_cap == IBV_ATOMIC_NONE ? "none" : "yes");
	nr_devs++;
	return d;
err:
	logerr("cannot set up %s: %s", ibv_get_device_name(verbs->device), strerror(errno));
	if (d->mr)
		ibv_dereg_mr(d->mr);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	memset(d, 0, sizeof(*d));
	return NULL;
}

static const char *peer(struct rdma_cm_id *id)
{
	static char buf[INET6_ADDRSTRLEN + 8];
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, host, sizeof(host));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, host, sizeof(host));
	snprintf(buf, sizeof(buf), "%s:%u", host, ntohs(rdma_get_dst_port(id)));
	return buf;
}

/* Refuse @id on purpose, saying why (struct cider_mn_reject). */
static void reject_because(struct rdma_cm_id *id, uint32_t reason)
{
	struct cider_mn_reject rej = { .magic = CIDER_MN_MAGIC, .reason = reason };

	rdma_reject(id, &rej, sizeof(rej));
}

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * With --key-file: whether @req proves its sender holds the key (key.h);
 * if not, @id is refused and the refusal logged, once per compute node.
 */
static bool key_admits(struct rdma_cm_id *id, const struct rdma_conn_param *req,
		       const struct cider_cn_hello *who)
{
	enum memd_proof p;

	p = memd_key_check(&key, req->private_data, req->private_data_len,
			   rdma_get_peer_addr(id), rdma_get_local_addr(id),
			   clock_ns(CLOCK_REALTIME), clock_ns(CLOCK_MONOTONIC));
	if (p == MEMD_PROOF_OK)
		return true;
	if (who->channel == 0 || p == MEMD_PROOF_REPLAY || p == MEMD_PROOF_BUSY)
		logerr("refused cn %u from %s: %s", who->cn_id, peer(id), memd_proof_why(p));
	if (p == MEMD_PROOF_BUSY)
		rdma_reject(id, NULL, 0);	/* a plain refusal: it tries again */
	else
		reject_because(id, p == MEMD_PROOF_STALE ? CIDER_REJECT_STALE_PROOF :
				   CIDER_REJECT_BAD_KEY);
	return false;
}

/*
 * A connect request: accepted (0), or refused (-1), its id then the
 * caller's to destroy once the event is acknowledged (a refused request's
 * id would otherwise stay, one per attempt of whoever is refused).
 */
static int on_connect_request(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	const struct rdma_conn_param *req = &ev->param.conn;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };
	struct rdma_conn_param param = { .rnr_retry_count = 7 };
	struct {
		struct cider_mn_hello hello;
		struct cider_mn_proof proof;
	} rep;
	struct cider_cn_hello who;
	struct memdev *d;
	struct conn *c;

	if (req->private_data_len < sizeof(who)) {
		logerr("rejecting %s: no CIDER hello", peer(id));
		goto reject;
	}
	memcpy(&who, req->private_data, sizeof(who));
	if (who.magic != CIDER_CN_MAGIC) {
		logerr("rejecting %s: not a CIDER compute node", peer(id));
		goto reject;
	}
	if (!memd_allow_match(&opt.allow, rdma_get_peer_addr(id))) {
		/* One line per compute node, not per channel. */
		if (who.channel == 0)
			logerr("refused cn %u from %s: not on the allow list", who.cn_id, peer(id));
		reject_because(id, CIDER_REJECT_NOT_ALLOWED);
		return -1;
	}
	if (key.len && !key_admits(id, req, &who))
		return -1;
	d = memdev_get(id->verbs);
	c = calloc(1, sizeof(*c));
	if (!d || !c) {
		free(c);
		goto reject;
	}
	qa.send_cq = qa.recv_cq = d->cq;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, d->pd, &qa)) {
		logerr("rejecting %s: rdma_create_qp: %s", peer(id), strerror(errno));
		free(c);
		goto reject;
	}
	memset(&rep, 0, sizeof(rep));
	rep.hello = (struct cider_mn_hello) {
		.magic = CIDER_MN_MAGIC, .layout_version = CIDER_LAYOUT_VERSION,
		.rkey = d->mr->rkey, .addr = (uint64_t)(uintptr_t)region, .size = opt.size,
	};
	param.private_data = &rep;
	param.private_data_len = sizeof(rep.hello);
	if (key.len) {
		memd_key_answer(&key, req->private_data, &rep.hello, &rep.proof);
		param.private_data_len = sizeof(rep);
	}
	/* READ and atomics are served from these; the CN asked for its depth. */
	param.responder_resources = req->initiator_depth < d->max_qp_rd_atom ?
				    req->initiator_depth : d->max_qp_rd_atom;
	if (rdma_accept(id, &param)) {
		logerr("accept %s: %s", peer(id), strerror(errno));
		rdma_destroy_qp(id);
		free(c);
		goto reject;
	}
	c->id = id;
	c->who = who;
	snprintf(c->from, sizeof(c->from), "%s", peer(id));
	c->next = conns;
	conns = c;
	id->context = c;
	return 0;
reject:
	rdma_reject(id, NULL, 0);
	return -1;
}

/* Who is attached: a header line, then one line per connected channel. */
static void roster_write(FILE *f)
{
	unsigned int n = 0;
	struct conn *c;
	char when[32];

	for (c = conns; c; c = c->next)
		n += c->since != 0;
	fprintf(f, "cider-memd %d on %s: store %016" PRIx64 " (start %" PRIu64 "), %u channels connected\n",
		(int)getpid(), opt.listen, (uint64_t)sb.store_id, (uint64_t)sb.serves, n);
	for (c = conns; c; c = c->next) {
		if (!c->since)
			continue;
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&c->since));
		fprintf(f, "cn %u channel %u from %s since %s\n", c->who.cn_id, c->who.channel,
			c->from, when);
	}
}

/* --status-file: rewritten whole (a new file renamed over the old) on each change. */
static void roster_changed(void)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (!opt.status_file)
		return;
	snprintf(tmp, sizeof(tmp), "%s.new", opt.status_file);
	f = fopen(tmp, "w");
	if (!f) {
		logerr("--status-file %s: %s", tmp, strerror(errno));
		return;
	}
	roster_write(f);
	if (fclose(f) || rename(tmp, opt.status_file))
		logerr("--status-file %s: %s", opt.status_file, strerror(errno));
}

/* SIGUSR1: who is attached, to the log. */
static void roster_log(void)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	roster_write(f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		logmsg("%s", line);
	free(buf);
}

static void conn_drop(struct rdma_cm_id *id)
{
	struct conn **pp, *c;

	for (pp = &conns; (c = *pp); pp = &c->next) {
		if (c->id == id) {
			*pp = c->next;
			if (c->since)
				roster_changed();
			free(c);
			break;
		}
	}
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

/* Handle one event; returns the id to destroy after the ack, or NULL. */
static struct rdma_cm_id *on_event(struct rdma_cm_event *ev)
{
	struct conn *c = ev->id->context;

	if (opt.verbose)
		logmsg("event %s from %s", rdma_event_str(ev->event), peer(ev->id));
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return on_connect_request(ev) ? ev->id : NULL;
	case RDMA_CM_EVENT_ESTABLISHED:
		nr_connects++;
		logmsg("connected: cn %u channel %u from %s", c->who.cn_id,
		       c->who.channel, peer(ev->id));
		c->since = time(NULL);
		roster_changed();
		return NULL;
	case RDMA_CM_EVENT_DISCONNECTED:
		nr_disconnects++;
		if (c)
			logmsg("disconnected: cn %u channel %u", c->who.cn_id, c->who.channel);
		return ev->id;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		logerr("connection from %s failed: %s", peer(ev->id), rdma_event_str(ev->event));
		return c ? ev->id : NULL;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		logerr("RDMA device removed; exiting");
		exit(1);
	default:
		return NULL;
	}
}

/*
 * True when one of our devices is being removed.  rdma_cm reports it with
 * RDMA_CM_EVENT_DEVICE_REMOVAL, but only when its own turn to let go of the
 * device comes: the kernel removes its clients in the reverse order they
 * registered (drivers/infiniband/core/device.c, disable_device()).  If
 * uverbs registered after rdma_cm (both built in: rdma_cm links first),
 * uverbs goes first and, for a device that cannot disassociate user
 * contexts (rxe), waits for every process using it to close it
 * (ib_uverbs_remove_one()) before rdma_cm tells anyone: the removal would
 * wait for us and we for it.  uverbs deletes the device's char device
 * before it waits, so its sysfs directory going away is the sign.
 */
static bool gone(struct ibv_context *verbs)
{
	return verbs && access(verbs->device->dev_path, F_OK) != 0;
}

static bool device_gone(struct rdma_cm_id *listen_id)
{
	int i;

	/* The listener holds its device open before any connection does. */
	if (gone(listen_id->verbs))
		return true;
	for (i = 0; i < nr_devs; i++)
		if (gone(devs[i].verbs))
			return true;
	return false;
}

static int serve(struct rdma_event_channel *ch, struct rdma_cm_id *listen_id, int sfd)
{
	struct pollfd pfd[2] = { { .fd = ch->fd, .events = POLLIN },
				 { .fd = sfd, .events = POLLIN } };

	for (;;) {
		struct rdma_cm_event *ev;
		struct rdma_cm_id *drop;

		int n = poll(pfd, 2, 1000);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			logerr("poll: %s", strerror(errno));
			return 1;
		}
		if (device_gone(listen_id)) {
			logerr("RDMA device removed; exiting");
			exit(1);
		}
		if (!n)
			continue;
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGUSR1) {
				roster_log();
				continue;
			}
			logmsg("signal %u: shutting down", si.ssi_signo);
			memd_notify("STOPPING=1");
			return 0;
		}
		if (rdma_get_cm_event(ch, &ev)) {
			logerr("rdma_get_cm_event: %s", strerror(errno));
			return 1;
		}
		drop = on_event(ev);
		rdma_ack_cm_event(ev);
		if (drop)
			conn_drop(drop);
	}
}

static void cleanup(struct rdma_event_channel *ch, struct rdma_cm_id *listen_id)
{
	int i;

	while (conns) {
		struct rdma_cm_id *id = conns->id;

		rdma_disconnect(id);
		conn_drop(id);
	}
	for (i = 0; i < nr_devs; i++) {
		ibv_dereg_mr(devs[i].mr);
		ibv_destroy_cq(devs[i].cq);
		ibv_dealloc_pd(devs[i].pd);
	}
	if (listen_id)
		rdma_destroy_id(listen_id);
	if (ch)
		rdma_destroy_event_channel(ch);
	if (region && region != MAP_FAILED)
		munmap(region, region_mapped);
}

/* A decimal count with no suffix, 1..max. */
static bool parse_count(const char *s, uint64_t max, uint64_t *out)
{
	char err[128];

	return !cider_num_parse(s, 1, max, 0, out, err, sizeof(err));
}

static bool parse_name(const char *s, const char *(*name)(uint32_t), uint32_t *out)
{
	uint32_t v;

	for (v = 1; name(v); v++) {
		if (!strcmp(s, name(v))) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* The store options; 0 when @c is one of them and it parsed. */
static int parse_store_arg(int c, const char *arg)
{
	struct cider_store_params *p = &opt.store;
	uint64_t v;

	switch (c) {
	case 'i':
		if (parse_name(arg, cider_store_index_name, &p->index))
			return 0;
		fprintf(stderr, "cider-memd: --index is hash or array\n");
		return 2;
	case 'm':
		if (parse_name(arg, cider_store_mode_name, &p->mode))
			return 0;
		fprintf(stderr, "cider-memd: --mode is osync, caslock, mcs or cider\n");
		return 2;
	case 'k':
		if (parse_count(arg, CIDER_STORE_MAX_KEYS, &v)) {
			p->nr_keys = v;
			return 0;
		}
		fprintf(stderr, "cider-memd: bad --keys '%s' (1..2^32)\n", arg);
		return 2;
	case 'L':
		if (parse_count(arg, CIDER_STORE_MAX_LEASE_NS / 1000000, &v)) {
			p->lease_ns = v * 1000000;
			return 0;
		}
		fprintf(stderr, "cider-memd: bad --lease-ms '%s'\n", arg);
		return 2;
	case 'G':
		if (parse_count(arg, CIDER_STORE_MAX_LEASE_NS / 1000, &v)) {
			p->grace_ns = v * 1000;
			return 0;
		}
		fprintf(stderr, "cider-memd: bad --grace-us '%s'\n", arg);
		return 2;
	case 'Q':
		if (parse_count(arg, CIDER_LQ_MAX_QLEN, &v)) {
			p->lock_qlen = (uint32_t)v;
			return 0;
		}
		fprintf(stderr, "cider-memd: bad --lock-queue '%s'\n", arg);
		return 2;
	case 'M':
		if (parse_count(arg, CIDER_STORE_MAX_MEMBER_LEASE_NS / 1000000, &v)) {
			p->member_lease_ns = v * 1000000;
			return 0;
		}
		fprintf(stderr, "cider-memd: bad --member-lease-ms '%s'\n", arg);
		return 2;
	case 'C':
		if (parse_count(arg, CIDER_STORE_MAX_LEASE_NS / 8000, &v)) {
			p->cache_lease_ns = v * 1000;
			p->features |= CIDER_SB_F_CACHE;
			return 0;
		}
		fprintf(stderr, "cider-memd: bad --cache-lease-us '%s'\n", arg);
		return 2;
	case 'D':
		if (parse_count(arg, CIDER_STORE_MAX_LEASE_NS / 8000, &v)) {
			p->cache_margin_ns = v * 1000;
			return 0;
		}
		fprintf(stderr, "cider-memd: bad --clock-margin-us '%s'\n", arg);
		return 2;
	case 'c':
		if (parse_size(arg, &v) && v) {
			p->chunk_size = v;
			return 0;
		}
		fprintf(stderr, "cider-memd: bad --chunk '%s'\n", arg);
		return 2;
	}
	return -1;
}

static void print_format(FILE *f)
{
	uint64_t chunk = sb.chunk_size;

	fprintf(f, "store: %s index, %s mode, %" PRIu64 " keys, lease %" PRIu64
		" ms, grace %" PRIu64 " us\n", cider_store_index_name(sb.index),
		cider_store_mode_name(sb.mode), (uint64_t)sb.nr_keys,
		(uint64_t)sb.lease_ns / 1000000, (uint64_t)sb.grace_ns / 1000);
	if (sb.flags & CIDER_SB_F_CACHE)
		fprintf(f, "cache: read leases of %" PRIu64 " us, clocks within %" PRIu64 " us\n",
			(uint64_t)sb.cache_lease_ns / 1000, (uint64_t)sb.cache_margin_ns / 1000);
	fprintf(f, "region: %" PRIu64 " bytes, layout version %u\n",
		(uint64_t)sb.region_size, sb.layout_version);
	fprintf(f, "  members at %#10" PRIx64 ", %" PRIu64 " bytes (%d compute nodes, "
		"member lease %" PRIu64 " ms)\n", (uint64_t)sb.member_off,
		(uint64_t)sb.member_size, CIDER_MN_MAX_CNS,
		(uint64_t)sb.member_lease_ns / 1000000);
	fprintf(f, "  index   at %#10" PRIx64 ", %" PRIu64 " bytes",
		(uint64_t)sb.index_off, (uint64_t)sb.index_size);
	if (sb.index == CIDER_SB_INDEX_HASH)
		fprintf(f, " (%" PRIu64 " buckets of 8 slots)", (uint64_t)sb.nr_buckets);
	fprintf(f, "\n  locks   at %#10" PRIx64 ", %" PRIu64 " bytes (%" PRIu64
		" records of %u bytes, a ring of %u waiters each)\n",
		(uint64_t)sb.lock_off, (uint64_t)sb.lock_size, (uint64_t)sb.nr_locks,
		sb.lock_rec, sb.lock_qlen);
	fprintf(f, "  data    at %#10" PRIx64 ", %" PRIu64 " bytes (%" PRIu64
		" chunks of %" PRIu64 ")\n", (uint64_t)sb.data_off,
		(uint64_t)sb.data_size, (uint64_t)sb.data_size / chunk, chunk);
	fprintf(f, "  keys up to %u bytes, values up to %u bytes\n", sb.max_key_len,
		sb.max_value_len);
}

/* --new-key: 0, or 1 (the file exists, or cannot be written). */
static int new_key(const char *path)
{
	char err[PATH_MAX + 128];

	if (memd_key_new(path, err, sizeof(err))) {
		fprintf(stderr, "cider-memd: --new-key %s\n", err);
		return 1;
	}
	printf("cider-memd: a new key in %s: give it to cider-memd --key-file and to each\n"
	       "compute node's ciderctl attach ... key-file\n", path);
	return 0;
}

/* --key-file: the key kept in memory only (never logged). */
static int load_key(void)
{
	unsigned char k[CIDER_KEY_MAX_LEN];
	char err[PATH_MAX + 128];
	size_t len;
	int ret;

	if (cider_key_load(opt.key_file, k, &len, err, sizeof(err))) {
		fprintf(stderr, "cider-memd: --key-file %s\n", err);
		return -1;
	}
	ret = memd_key_set(&key, k, len, MEMD_KEY_SEEN);
	explicit_bzero(k, sizeof(k));
	if (ret)
		fprintf(stderr, "cider-memd: out of memory\n");
	return ret;
}

/*
 * The CN cache: on in cider mode unless --no-cache (the store's default
 * lease and margin), off in the other modes unless --cache-lease-us.
 * 0, or 2 for options that contradict each other.
 */
static int cache_options(void)
{
	struct cider_store_params *p = &opt.store;

	if (opt.no_cache && (p->features & CIDER_SB_F_CACHE || p->cache_margin_ns)) {
		fprintf(stderr, "cider-memd: --no-cache and --cache-lease-us or --clock-margin-us\n");
		return 2;
	}
	if (!opt.no_cache && p->mode == CIDER_SB_MODE_CIDER && !(p->features & CIDER_SB_F_CACHE)) {
		p->features |= CIDER_SB_F_CACHE;
		opt.cache_implied = !p->cache_margin_ns;
	}
	if (p->cache_margin_ns && !(p->features & CIDER_SB_F_CACHE)) {
		fprintf(stderr, "cider-memd: --clock-margin-us goes with --cache-lease-us\n");
		return 2;
	}
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "allow", required_argument, NULL, 'a' },
		{ "backing", required_argument, NULL, 'b' },
		{ "format", no_argument, NULL, 'F' },
		{ "status-file", required_argument, NULL, 'T' },
		{ "key-file", required_argument, NULL, 'K' },
		{ "new-key", required_argument, NULL, 'N' },
		{ "size", required_argument, NULL, 's' },
		{ "index", required_argument, NULL, 'i' },
		{ "keys", required_argument, NULL, 'k' },
		{ "mode", required_argument, NULL, 'm' },
		{ "lease-ms", required_argument, NULL, 'L' },
		{ "grace-us", required_argument, NULL, 'G' },
		{ "lock-queue", required_argument, NULL, 'Q' },
		{ "member-lease-ms", required_argument, NULL, 'M' },
		{ "cache-lease-us", required_argument, NULL, 'C' },
		{ "clock-margin-us", required_argument, NULL, 'D' },
		{ "no-cache", no_argument, NULL, 'X' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "hugepages", required_argument, NULL, 'H' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *why;
	char err[128];
	int c, ret;

	while ((c = getopt_long(argc, argv, "l:a:b:K:s:i:k:m:c:H:nvhV", lo, NULL)) != -1) {
		ret = parse_store_arg(c, optarg);
		if (ret >= 0) {
			if (ret)
				return ret;
			continue;
		}
		switch (c) {
		case 'l': opt.listen = optarg; break;
		case 'b': opt.backing = optarg; break;
		case 'F': opt.format = true; break;
		case 'X': opt.no_cache = true; break;
		case 'T': opt.status_file = optarg; break;
		case 'K': opt.key_file = optarg; break;
		case 'N': exit(new_key(optarg));
		case 'a':
			if (memd_allow_parse(&opt.allow, optarg, err, sizeof(err))) {
				fprintf(stderr, "cider-memd: bad --allow '%s': %s\n", optarg, err);
				return 2;
			}
			snprintf(opt.allow_text + strlen(opt.allow_text),
				 sizeof(opt.allow_text) - strlen(opt.allow_text), "%s%s",
				 opt.allow_text[0] ? "," : "", optarg);
			break;
		case 's':
			if (!parse_size(optarg, &opt.size)) {
				fprintf(stderr, "cider-memd: bad --size '%s'\n", optarg);
				return 2;
			}
			break;
		case 'H':
			if (!strcmp(optarg, "auto"))
				opt.hugepages = 0;
			else if (!strcmp(optarg, "always"))
				opt.hugepages = 1;
			else if (!strcmp(optarg, "never"))
				opt.hugepages = -1;
			else {
				fprintf(stderr, "cider-memd: --hugepages is auto, always or never\n");
				return 2;
			}
			break;
		case 'n': opt.dry_run = true; break;
		case 'v': opt.verbose = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("cider-memd %s\n", CIDER_VERSION); exit(0);
		default:
			/* getopt named the option; the whole text would bury it. */
			fprintf(stderr, "cider-memd: see cider-memd --help\n");
			return 2;
		}
	}
	if (optind != argc || (!opt.listen && !opt.dry_run)) {
		fprintf(stderr, "cider-memd: %s\n", optind != argc ?
			"unexpected argument" : "--listen ADDR:PORT is required");
		usage(stderr);
		return 2;
	}
	if (cache_options())
		return 2;
	if (opt.key_file && load_key())
		return 2;
	if (opt.format && !opt.backing) {
		fprintf(stderr, "cider-memd: --format formats a --backing file anew; without one, "
			"every start formats\n");
		return 2;
	}
	opt.store.region_size = opt.size;
	/* Which store this is, so that its compute nodes know it after a restart. */
	opt.store.features |= CIDER_SB_F_STORE_ID;
	while (!opt.store.store_id)
		if (getrandom(&opt.store.store_id, sizeof(opt.store.store_id), 0) !=
		    sizeof(opt.store.store_id))
			opt.store.store_id = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
	why = cider_store_format(&sb, &opt.store);
	if (why) {
		fprintf(stderr, "cider-memd: cannot format a store of %" PRIu64 " bytes: %s\n",
			opt.size, why);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_id *listen_id = NULL;
	struct sockaddr_storage ss;
	sigset_t mask;
	int sfd, ret;

	ret = parse_args(argc, argv);
	if (ret)
		return ret;
	if (opt.dry_run) {
		print_format(stdout);
		return 0;
	}
	if (parse_listen(opt.listen, &ss)) {
		fprintf(stderr, "cider-memd: bad --listen '%s' (want a.b.c.d:port or [v6]:port, port 1..65535)\n",
			opt.listen);
		return 2;
	}
	/* The region is every key of the store: nobody gets it by default. */
	if (!opt.allow.set && !memd_addr_loopback((struct sockaddr *)&ss)) {
		fprintf(stderr, "cider-memd: %s is not a loopback address, and every host that reaches it\n"
			"could read and write the whole store: say which compute nodes may attach\n"
			"with --allow ADDR[/PREFIX][,...] (or --allow any)\n", opt.listen);
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		return 1;
	ret = region_alloc();
	if (ret)
		return ret;

	ret = 1;
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP)) {
		logerr("rdma_cm: %s", strerror(errno));
		goto out;
	}
	if (rdma_bind_addr(listen_id, (struct sockaddr *)&ss) || rdma_listen(listen_id, 128)) {
		logerr("cannot listen on %s: %s", opt.listen, strerror(errno));
		goto out;
	}
	logmsg("listening on %s, region %" PRIu64 " bytes%s, layout %d, %s index, %s mode, %"
	       PRIu64 " keys", opt.listen, opt.size, region_huge ? " (huge pages)" : "",
	       CIDER_LAYOUT_VERSION, cider_store_index_name(sb.index),
	       cider_store_mode_name(sb.mode), sb.nr_keys);
	logmsg("admitting %s%s", opt.allow.set ? opt.allow_text : "this host only (loopback)",
	       key.len ? ", with a proof of the key in --key-file" : "");
	roster_changed();
	if (memd_notify("READY=1\nSTATUS=serving its store") < 0)
		logerr("cannot tell the service manager it is ready: %s", strerror(errno));
	ret = serve(ch, listen_id, sfd);
	logmsg("%lu connections served, %lu disconnected", nr_connects, nr_disconnects);
out:
	cleanup(ch, listen_id);
	memd_key_clear(&key);
	close(sfd);
	return ret;
}
