// SPDX-License-Identifier: GPL-2.0
/* cider-sim: command line, set-up, report.  See sim.h and model.c. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "layout.h"
#include "store.h"
#include "block.h"
#include "lincheck.h"
#include "hashindex.h"
#include "sim.h"

static const char *const mode_names[] = { "osync", "caslock", "mcs", "cider" };

static void usage(FILE *f)
{
	fprintf(f,
"Usage: cider-sim --mode osync|caslock|mcs|cider [OPTIONS]\n"
"\n"
"Runs the CIDER protocol core (kmod/core, the code cider.ko runs) on a\n"
"deterministic model of compute nodes, clients, one memory node and the\n"
"network, then checks the run: per-key linearizability, no lost write,\n"
"mutual exclusion of lock holders, FIFO handover, every operation done\n"
"within a bound (cider with escalation; other runs count the operations\n"
"over it).  Any violation makes the exit status 1; a stall (no\n"
"progress within the limits below) makes it 3, after listing the stuck\n"
"operations on stderr.\n"
"\n"
"Options:\n"
"  --mode M              osync, caslock, mcs or cider (required)\n"
"  --index array|hash    the pointer array (default) or the RACE-style hash\n"
"                        index (two candidate buckets per key, a quarter full)\n"
"  --key-size N          hash: key bytes, 8..1024 (default 8)\n"
"  --buckets N           hash: buckets (default: 4 slots per key)\n"
"  --value-size D        hash: value bytes, fixed:N, uniform:A-B or twitter\n"
"                        (a ~400-byte small-object mix); default fixed:8\n"
"  --local-wc on|off     local write combining on each CN (default off)\n"
"  --read-comb on|off    read combining on each CN: concurrent SEARCHes of a\n"
"                        key share one lookup (default off)\n"
"  --cache on|off|ideal|coherent\n"
"                        the CN cache of hot keys under read leases (cache.h;\n"
"                        default off); ideal: no cache, but a SEARCH of a key\n"
"                        its CN already read is answered from the MN's memory\n"
"                        at no cost, the bound a cache could reach (array);\n"
"                        coherent: the same if no write of the key came since\n"
"                        that read, the bound of a cache kept coherent\n"
"  --cache-lease-us U    a read lease's length: how long a writer waits at\n"
"                        most, when a CN does not answer its INVAL; at most\n"
"                        an eighth of --lease-us (default 5000)\n"
"  --cache-margin-ns N   what writers wait beyond a lease for the CNs' clock\n"
"                        drift (default 1000; the model's clocks agree)\n"
"  --cache-entries N     cache entries per CN (default 16384)\n"
"  --cache-hot H         SEARCHes of a CN finding a key's word unchanged\n"
"                        before it leases the key (default 2)\n"
"  --cache-stable-us U   ...and for at least U us, at least one per U us on\n"
"                        average (default 1000)\n"
"  --backoff on|off      SMART backoff in the optimistic pointer CAS retry\n"
"                        loop (default on; caslock always backs off)\n"
"  --cns N               compute nodes (default 8)\n"
"  --clients-per-cn M    clients per CN, 1..64 (default 4)\n"
"  --keys K              keys (default 1000000)\n"
"  --workload W          a (50%% search/50%% update), b (95/5), c (100/0),\n"
"                        wo (write-only), idu (search/update/insert/delete),\n"
"                        pd (40%% search, 40%% put, 20%% delete), d (YCSB D:\n"
"                        95%% search of the latest keys, 5%% insert), f (YCSB\n"
"                        F: 50%% search, 50%% read-modify-write, run as its\n"
"                        search and its update)\n"
"  --zipf THETA|uniform  key skew, 0 <= THETA < 1 (default 0.99)\n"
"  --ops N               operations in all (default 100000)\n"
"  --seed S              (default 1)\n"
"  --faults F            none, jitter (CN-CN message delay jitter), crash (a\n"
"                        client crashes in a lock operation), all (jitter, a\n"
"                        client crash and a whole-CN crash); default none\n"
"  --scanners N          clients 0..N-1 run SCANs instead of the workload, page\n"
"                        after page, each full scan checked: every key present\n"
"                        throughout it is returned (default 0)\n"
"  --revive on|off       a crashed client (not a crashed CN) comes back as a\n"
"                        new incarnation a lease after its crash, once none\n"
"                        of its verbs is in flight (cider_client_revive(), as\n"
"                        cider.ko revives a client its operation's bound\n"
"                        ended), and runs operations again (default off)\n"
"  --lease-us U          maximum lock hold time (default 50000)\n"
"  --grace-us U          KV block reuse grace period (default 100)\n"
"  --mn-mops R           MN NIC verb rate (default 110, SMART's ConnectX-6)\n"
"  --atomic-ns T         time an atomic holds its 8-byte word (default 400)\n"
"  --atomic-cost X       MN NIC time of a CAS or FAA, in 8-byte READs\n"
"                        (default 2: a read and a write of host memory)\n"
"  --lock-queue Q        waiters each lock's ring holds on the MN, a power of\n"
"                        two from 2 to 128 (default: the CNs, rounded up to\n"
"                        a power of two, at most 128: DecLock's sizing)\n"
"  --history FILE        every operation as a JSON line\n"
"  --check-history FILE  check such a history (or a real one) for per-key\n"
"                        linearizability from the history alone; see\n"
"                        cider-sim --check-history - --help\n"
"  --data-kb N           size the MN's data area (default: room for every write)\n"
"  --initial-credit C    Algorithm 1's INITIAL_CREDIT (default 36)\n"
"  --hotness H           Algorithm 1's HOTNESS_THRESHOLD (default 2)\n"
"  --escalate E          cider: an optimistic UPDATE whose CAS failed E times\n"
"                        joins the lock queue (default 2; 0: never, and no\n"
"                        completion bound is promised)\n"
"  --steady-memory       also check that MN memory stops growing: the second\n"
"                        half of the run may claim at most 25%% more than\n"
"                        the first, plus one chunk per CN\n"
"  --max-model-ms T      stop and fail (exit 3) if the run reaches T ms of\n"
"                        model time (default: 60 s + 1 ms per op +\n"
"                        10 leases)\n"
"  --stall-events N      stop and fail (exit 3) after N events in a row\n"
"                        with no operation completing, a READ or WRITE\n"
"                        counting one more per 64 bytes (default 5000000,\n"
"                        plus 400 per us of lease with crash faults)\n"
"  --trace               every client's machine states after each event that\n"
"                        resumed it, and every qnode a message reached, on\n"
"                        stderr (with -q too)\n"
"  --verbs-by-state      after the report, the MN verbs per operation by the\n"
"                        operation and its machines' states when posted,\n"
"                        the costliest first (NIC slots: atomics priced\n"
"                        as --atomic-cost READs)\n"
"  --json                the report as one JSON object\n"
"  -q, --quiet           no progress or traces on stderr\n"
"  -h, --help            this text\n"
"  --version             print the version and exit\n");
}

static int parse_u64(const char *s, u64 min, u64 max, u64 *out)
{
	char err[128];
	uint64_t v;

	if (cider_num_parse(s, min, max, 0, &v, err, sizeof(err)))
		return -1;
	*out = v;
	return 0;
}

static int parse_onoff(const char *s, bool *out)
{
	if (!strcmp(s, "on"))
		*out = true;
	else if (!strcmp(s, "off"))
		*out = false;
	else
		return -1;
	return 0;
}

static int parse_args(struct sim *s, int argc, char **argv, u64 *seed, bool *json)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "index", required_argument, NULL, 'x' },
		{ "local-wc", required_argument, NULL, 'l' },
		{ "read-comb", required_argument, NULL, 'J' },
		{ "cache", required_argument, NULL, 'Y' },
		{ "cache-lease-us", required_argument, NULL, 'y' },
		{ "cache-margin-ns", required_argument, NULL, 'g' },
		{ "cache-entries", required_argument, NULL, 'N' },
		{ "cache-hot", required_argument, NULL, 'O' },
		{ "cache-stable-us", required_argument, NULL, 'U' },
		{ "backoff", required_argument, NULL, 'B' },
		{ "cns", required_argument, NULL, 'n' },
		{ "clients-per-cn", required_argument, NULL, 'c' },
		{ "keys", required_argument, NULL, 'k' },
		{ "workload", required_argument, NULL, 'w' },
		{ "zipf", required_argument, NULL, 'z' },
		{ "ops", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "faults", required_argument, NULL, 'f' },
		{ "lease-us", required_argument, NULL, 'L' },
		{ "mn-mops", required_argument, NULL, 'M' },
		{ "grace-us", required_argument, NULL, 'G' },
		{ "atomic-ns", required_argument, NULL, 'A' },
		{ "history", required_argument, NULL, 'H' },
		{ "steady-memory", no_argument, NULL, 'S' },
		{ "data-kb", required_argument, NULL, 'D' },
		{ "key-size", required_argument, NULL, 'K' },
		{ "buckets", required_argument, NULL, 'b' },
		{ "value-size", required_argument, NULL, 'V' },
		{ "initial-credit", required_argument, NULL, 'I' },
		{ "hotness", required_argument, NULL, 'T' },
		{ "escalate", required_argument, NULL, 'e' },
		{ "lock-queue", required_argument, NULL, 'Q' },
		{ "atomic-cost", required_argument, NULL, 'C' },
		{ "max-model-ms", required_argument, NULL, 'X' },
		{ "stall-events", required_argument, NULL, 'E' },
		{ "revive", required_argument, NULL, 'r' },
		{ "scanners", required_argument, NULL, 'W' },
		{ "json", no_argument, NULL, 'j' },
		{ "trace", no_argument, NULL, 'R' },
		{ "verbs-by-state", no_argument, NULL, 'Z' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int c, i, li = 0;
	char *end;
	u64 v;

	while ((c = getopt_long(argc, argv, "qh", lo, &li)) != -1) {
		switch (c) {
		case 'm':
			for (i = 0; i < 4 && strcmp(optarg, mode_names[i]); i++)
				;
			if (i == 4)
				goto bad;
			s->cfg.mode = (u8)i;
			s->mode_name = mode_names[i];
			break;
		case 'x':
			if (!strcmp(optarg, "array"))
				s->cfg.index = CIDER_INDEX_ARRAY;
			else if (!strcmp(optarg, "hash"))
				s->cfg.index = CIDER_INDEX_HASH;
			else
				goto bad;
			break;
		case 'l':
			if (parse_onoff(optarg, &s->cfg.local_wc))
				goto bad;
			break;
		case 'J':
			if (parse_onoff(optarg, &s->cfg.read_comb))
				goto bad;
			break;
		case 'Y':
			s->ideal_coherent = !strcmp(optarg, "coherent");
			s->ideal_cache = s->ideal_coherent || !strcmp(optarg, "ideal");
			if (!s->ideal_cache && parse_onoff(optarg, &s->cfg.cache))
				goto bad;
			break;
		case 'y':
			if (parse_u64(optarg, 1, 10000000, &v))
				goto bad;
			s->cfg.cache_lease_ns = v * 1000;
			break;
		case 'g':
			if (parse_u64(optarg, 0, 1000000000, &s->cfg.cache_margin_ns))
				goto bad;
			break;
		case 'N':
			if (parse_u64(optarg, CIDER_CACHE_WAYS, 1U << 24, &v))
				goto bad;
			s->cache_entries = (u32)v;
			break;
		case 'U':
			if (parse_u64(optarg, 0, 10000000, &v))
				goto bad;
			s->cfg.cache_stable_ns = v * 1000;
			break;
		case 'O':
			if (parse_u64(optarg, 1, 1000, &v))
				goto bad;
			s->cfg.cache_hot = (u32)v;
			break;
		case 'B':
			if (parse_onoff(optarg, &s->cfg.backoff))
				goto bad;
			break;
		case 'n':
			if (parse_u64(optarg, 1, 4095, &v))
				goto bad;
			s->nr_cns = (u32)v;
			break;
		case 'c':
			if (parse_u64(optarg, 1, 64, &v))
				goto bad;
			s->cpc = (u32)v;
			break;
		case 'k':
			if (parse_u64(optarg, 1, 1ULL << 32, &s->nr_keys))
				goto bad;
			break;
		case 'w':
			if (cider_workload_get(optarg, &s->wl))
				goto bad;
			s->workload_name = s->wl.name;
			break;
		case 'z':
			if (!strcmp(optarg, "uniform")) {
				s->theta = 0;
				break;
			}
			s->theta = strtod(optarg, &end);
			if (*end || s->theta < 0 || s->theta >= 1)
				goto bad;
			break;
		case 'o':
			if (parse_u64(optarg, 1, 1ULL << 31, &s->ops_target))
				goto bad;
			break;
		case 's':
			if (parse_u64(optarg, 0, ~0ULL, seed))
				goto bad;
			break;
		case 'r':
			if (parse_onoff(optarg, &s->revive))
				goto bad;
			break;
		case 'W':
			if (parse_u64(optarg, 0, 4095 * 64, &v))
				goto bad;
			s->scanners = (u32)v;
			break;
		case 'f':
			if (strcmp(optarg, "none") && strcmp(optarg, "jitter") &&
			    strcmp(optarg, "crash") && strcmp(optarg, "all"))
				goto bad;
			s->faults = optarg;
			break;
		case 'L':
			if (parse_u64(optarg, 10, 10000000, &v))
				goto bad;
			s->p.lease_ps = v * US;
			break;
		case 'G':
			if (parse_u64(optarg, 1, 10000000, &v))
				goto bad;
			s->p.grace_ps = v * US;
			break;
		case 'M':
			if (parse_u64(optarg, 1, 10000, &v))
				goto bad;
			s->p.mn_mops = (double)v;
			break;
		case 'A':
			if (parse_u64(optarg, 0, 100000, &v))
				goto bad;
			s->p.atomic_word_ps = v * NS;
			break;
		case 'H':
			s->history = fopen(optarg, "w");
			if (!s->history) {
				fprintf(stderr, "cider-sim: %s: %s\n", optarg, strerror(errno));
				return 1;
			}
			break;
		case 'S': s->steady_memory = true; break;
		case 'D':
			if (parse_u64(optarg, 64, 1ULL << 32, &s->data_kb))
				goto bad;
			break;
		case 'b':
			if (parse_u64(optarg, 2, 1ULL << 40, &s->buckets))
				goto bad;
			break;
		case 'K':
			if (parse_u64(optarg, 8, CIDER_MAX_KEY, &v))
				goto bad;
			s->key_len = (u32)v;
			break;
		case 'V':
			if (cider_sizes_parse(optarg, &s->vsize) ||
			    cider_sizes_max(&s->vsize) > CIDER_MAX_VALUE)
				goto bad;
			break;
		case 'I':
			if (parse_u64(optarg, 1, 1000000, &v))
				goto bad;
			s->initial_credit = (u32)v;
			break;
		case 'T':
			if (parse_u64(optarg, 1, 1000, &v))
				goto bad;
			s->hotness = (u32)v;
			break;
		case 'e':
			if (parse_u64(optarg, 0, 1000, &v))
				goto bad;
			s->escalate = (u32)v;
			break;
		case 'Q':
			if (parse_u64(optarg, CIDER_LQ_MIN_QLEN, CIDER_LQ_MAX_QLEN, &v) ||
			    (v & (v - 1)))
				goto bad;
			s->cfg.lock_qlen = (u32)v;
			break;
		case 'C':
			s->p.atomic_cost = strtod(optarg, &end);
			if (*end || !(s->p.atomic_cost >= 0.1 && s->p.atomic_cost <= 100))
				goto bad;
			break;
		case 'X':
			if (parse_u64(optarg, 1, 1ULL << 40, &v))
				goto bad;
			s->max_model_ps = v * MS;
			break;
		case 'E':
			if (parse_u64(optarg, 1000, 1ULL << 50, &s->stall_events))
				goto bad;
			break;
		case 'j': *json = true; break;
		case 'R': s->trace = true; break;
		case 'q': s->quiet = true; break;
		case 'Z': s->by_state = true; break;
		case 'h': usage(stdout); exit(0);
		case 'P': printf("cider-sim %s\n", CIDER_VERSION); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !s->mode_name) {
		fprintf(stderr, "cider-sim: %s\n", optind != argc ? "unexpected argument" :
			"--mode is required");
		usage(stderr);
		return 2;
	}
	/* A holder waits out leases within its hold (write.c): keep them short. */
	if (s->cfg.cache && s->cfg.cache_lease_ns + s->cfg.cache_margin_ns > s->p.lease_ps / NS / 8) {
		fprintf(stderr, "cider-sim: --cache-lease-us plus the margin must be at most an eighth of --lease-us\n");
		return 2;
	}
	if (s->ideal_cache && s->cfg.index == CIDER_INDEX_HASH) {
		fprintf(stderr, "cider-sim: --cache ideal and coherent are for the array index\n");
		return 2;
	}
	return 0;
bad:
	fprintf(stderr, "cider-sim: bad value '%s' for --%s\n", optarg, lo[li].name);
	usage(stderr);
	return 2;
}

static u64 align_up(u64 v, u64 a)
{
	return (v + a - 1) / a * a;
}

/*
 * The hash index's preloaded keys: each in the first free slot of its two
 * buckets, pointing at its virtual preloaded block (see sim_mem_read()).
 */
static void preload_hash(struct sim *s)
{
	const struct cider_cfg *cfg = &s->cfg;
	struct cider_hash_loc loc;
	u64 k, addr, slots[2][CIDER_BUCKET_SLOTS];
	u8 kb[CIDER_MAX_KEY];
	u32 b, i, first;

	for (k = 0; k < s->nr_keys; k++) {
		if (!cider_workload_preloaded(&s->wl, k))
			continue;
		sim_fill(kb, k, s->key_len);
		cider_hash_locate(kb, s->key_len, cfg->nr_buckets, &loc);
		for (b = 0; b < 2; b++)
			for (i = 0; i < CIDER_BUCKET_SLOTS; i++)
				slots[b][i] = sim_mem_read(s, cfg->bucket_off +
							  loc.bucket[b] * CIDER_BUCKET_SIZE + i * 8);
		/* The emptier bucket first, as INSERT does (locate.c). */
		first = cider_bucket_load(slots[1]) < cider_bucket_load(slots[0]);
		for (i = 0; i < 2 * CIDER_BUCKET_SLOTS; i++) {
			b = (first + i / CIDER_BUCKET_SLOTS) % 2;
			if (!cider_slot_empty(slots[b][i % CIDER_BUCKET_SLOTS]))
				continue;
			addr = cfg->bucket_off + loc.bucket[b] * CIDER_BUCKET_SIZE +
			       (i % CIDER_BUCKET_SLOTS) * 8;
			*hmap_find(&s->mem, addr, true) =
				cider_slot_make(loc.fp, (u32)cider_block_class(s->key_len, 8), 0,
						s->preload_base + k * s->preload_stride);
			goto next;
		}
		fprintf(stderr, "cider-sim: both buckets of key %llu are full at preload\n",
			(unsigned long long)k);
		exit(1);
next:
		;
	}
}

static void setup(struct sim *s)
{
	struct cider_cfg *cfg = &s->cfg;
	u32 i;

	s->nr_clients = s->nr_cns * s->cpc;
	if (s->scanners >= s->nr_clients) {
		fprintf(stderr, "cider-sim: --scanners %u leaves no client for the workload (%u clients)\n",
			s->scanners, s->nr_clients);
		exit(2);
	}
	cfg->nr_cns = s->nr_cns;
	cfg->clients_per_cn = s->cpc;
	cfg->nr_keys = s->nr_keys;
	cfg->index_off = CIDER_MN_SB_AREA;
	cfg->chunk_size = 64 << 10;
	cfg->block_size = cfg->index == CIDER_INDEX_HASH ? CIDER_SLOT_UNIT : CIDER_BLOCK_SIZE;
	if (cfg->index == CIDER_INDEX_HASH) {
		/* Chunks hold whole blocks of the largest class (128 KiB). */
		cfg->chunk_size = 1 << 20;
		s->buf_size = cider_class_size((u32)cider_block_class(s->key_len,
								     cider_sizes_max(&s->vsize)));
		s->preload_stride = cider_class_size((u32)cider_block_class(s->key_len, 8));
		s->ring_cap = SIM_RING_HASH;
	} else {
		s->ring_cap = SIM_RING;
	}
	/* One waiter per CN fits: DecLock sizes its queue by the CNs. */
	for (i = 2; !cfg->lock_qlen; i *= 2)
		if (i >= s->nr_cns || i == CIDER_LQ_MAX_QLEN)
			cfg->lock_qlen = i;
	cfg->lock_rec = 16 + 8 * cfg->lock_qlen;	/* as store.c lays it out */
	if (cfg->index == CIDER_INDEX_HASH) {
		/* Four slots per key: a quarter full, as RACE sizes for inserts. */
		cfg->nr_buckets = 2;
		while (cfg->nr_buckets * CIDER_BUCKET_SLOTS < 4 * s->nr_keys)
			cfg->nr_buckets *= 2;
		if (s->buckets)
			cfg->nr_buckets = s->buckets;
		cfg->bucket_off = cfg->index_off + CIDER_DIR_SIZE;
		s->nr_locks = cfg->nr_buckets * CIDER_BUCKET_SLOTS;
		cfg->lock_off = align_up(cfg->bucket_off + cfg->nr_buckets * CIDER_BUCKET_SIZE,
					 CIDER_MN_ALIGN);
		cfg->ilock_off = cfg->lock_off + (u64)cfg->lock_rec * s->nr_locks;
		cfg->data_off = align_up(cfg->ilock_off + 16 * cfg->nr_buckets, cfg->chunk_size);
	} else {
		s->nr_locks = s->nr_keys;
		cfg->lock_off = align_up(cfg->index_off + 8 * s->nr_keys, CIDER_MN_ALIGN);
		cfg->data_off = align_up(cfg->lock_off + (u64)cfg->lock_rec * s->nr_keys,
					 cfg->chunk_size);
	}
	cfg->data_size_limit = s->data_kb ? align_up(s->data_kb << 10, cfg->chunk_size) :
			       align_up(s->ops_target * 4 * (cfg->block_size + s->buf_size) +
					(u64)s->nr_cns * cfg->chunk_size * 16, cfg->chunk_size);
	cfg->alloc_cursor = offsetof(struct cider_mn_sb, alloc_cursor);
	cfg->rfence = offsetof(struct cider_mn_sb, reader_fence);
	cfg->lease_ns = s->p.lease_ps / NS;
	cfg->grace_ns = s->p.grace_ps / NS;
	s->p.preempt_ps = 4 * s->p.grace_ps < s->p.lease_ps / 10 ? 4 * s->p.grace_ps :
			  s->p.lease_ps / 10;
	cfg->backoff_t0_ns = 4000;		/* SMART: 4096 cycles, ~one RTT */
	cfg->initial_credit = s->initial_credit;	/* CIDER Algorithm 1: 36 */
	cfg->hotness = s->hotness;			/* 2 */
	cfg->aimd = 2;
	cfg->escalate = s->escalate;
	s->preload_base = cfg->data_off + cfg->data_size_limit;
	/*
	 * Generous: osync is lock-free, not wait-free, and a client can lose
	 * CAS after CAS (with backoff up to 4 ms each) for tens of ms.
	 */
	s->p.bound_ps = 10 * s->p.lease_ps + 1000 * MS;
	/*
	 * The stall limits, far above any legitimate run (simulator.rst).
	 * sim-check's small runs see at most ~100,000 events between two
	 * completions (waiting out a 5 ms lease) and 0.6 s of model time; a
	 * starved run at 2,048 clients makes ~200 us of model time per op.
	 * Crash recovery waits out a lease while the waiters poll, at most
	 * at the MN's verb rate (110 per us, ~3 events each): up to ~330
	 * events per us of lease (85 clients on a 50 ms lease: 1.7 million).
	 */
	if (!s->max_model_ps)
		s->max_model_ps = 60000 * MS + s->ops_target * MS + 10 * s->p.lease_ps;
	if (!s->stall_events)
		s->stall_events = 5000000 + (strcmp(s->faults, "crash") && strcmp(s->faults, "all") ?
					     0 : 400 * (s->p.lease_ps / US));

	s->cns = calloc(s->nr_cns, sizeof(*s->cns));
	s->clients = calloc(s->nr_clients, sizeof(*s->clients));
	s->lwc = calloc((size_t)s->nr_clients, sizeof(*s->lwc));
	s->ring = calloc((size_t)s->nr_cns * s->ring_cap *
			 (cfg->index == CIDER_INDEX_HASH ? CIDER_NR_CLASSES : 1), sizeof(*s->ring));
	s->bufs = s->buf_size ? calloc((size_t)s->nr_clients, s->buf_size) : NULL;
	s->vmax = cfg->index == CIDER_INDEX_HASH ? cider_sizes_max(&s->vsize) : 8;
	s->opbuf_stride = CIDER_MAX_KEY + 2 * (size_t)s->vmax;
	s->opbufs = calloc((size_t)s->nr_clients, s->opbuf_stride);
	s->qp_ready = calloc(s->nr_clients, sizeof(u64));
	s->batch_done = calloc(s->nr_clients, sizeof(u64));
	s->verbs_out = calloc(s->nr_clients, 1);
	s->incarnation = calloc(s->nr_clients, sizeof(u32));
	s->cur_op = calloc(s->nr_clients, sizeof(u32));
	s->rmw_key = s->wl.rmw ? calloc(s->nr_clients, sizeof(u64)) : NULL;
	s->latest_seq = s->wl.latest ? calloc(s->nr_clients, sizeof(*s->latest_seq)) : NULL;
	s->msg_last = calloc((size_t)s->nr_cns * s->nr_cns, sizeof(u64));
	s->cn_nic_free = calloc(s->nr_cns, sizeof(u64));
	if (!s->cns || !s->clients || !s->lwc || !s->qp_ready || !s->batch_done || !s->verbs_out ||
	    !s->incarnation ||
	    !s->cur_op || !s->msg_last || !s->cn_nic_free || !s->ring ||
	    (s->wl.rmw && !s->rmw_key) || (s->wl.latest && !s->latest_seq) ||
	    (s->buf_size && !s->bufs) || !s->opbufs) {
		fprintf(stderr, "cider-sim: out of memory\n");
		exit(1);
	}
	sim_scan_setup(s);
	sim_init_model(s);
	for (i = 0; i < s->nr_cns; i++)
		cider_cn_init(&s->cns[i], i, cfg, &s->fab, &s->clients[i * s->cpc],
			      &s->lwc[i * s->cpc], s->cpc,
			      &s->ring[(u64)i * s->ring_cap *
				       (cfg->index == CIDER_INDEX_HASH ? CIDER_NR_CLASSES : 1)],
			      s->ring_cap);
	if (cfg->cache) {
		/* Room for small values (larger ones are not kept): cache.c. */
		s->cache_ent_bytes = (cfg->index == CIDER_INDEX_HASH ? s->key_len : 0) + s->vmax;
		if (s->cache_ent_bytes > 256)
			s->cache_ent_bytes = 256;
		s->cache_ent = calloc((size_t)s->nr_cns * s->cache_entries, sizeof(*s->cache_ent));
		s->cache_room = calloc((size_t)s->nr_cns * s->cache_entries, s->cache_ent_bytes);
		if (!s->cache_ent || !s->cache_room) {
			fprintf(stderr, "cider-sim: out of memory for the cache\n");
			exit(1);
		}
		for (i = 0; i < s->nr_cns; i++)
			cider_cache_init(&s->cns[i].cache, &s->cache_ent[(size_t)i * s->cache_entries],
					 s->cache_room + (size_t)i * s->cache_entries * s->cache_ent_bytes,
					 s->cache_entries, s->cache_ent_bytes);
	}
	for (i = 0; s->bufs && i < s->nr_clients; i++) {
		s->clients[i].buf = s->bufs + (size_t)i * s->buf_size;
		s->clients[i].buf_len = s->buf_size;
	}
	if (cfg->index == CIDER_INDEX_HASH)
		preload_hash(s);
	s->jitter = !strcmp(s->faults, "jitter") || !strcmp(s->faults, "all");
	if (!strcmp(s->faults, "crash") || !strcmp(s->faults, "all"))
		s->crash_at[0] = s->ops_target / 5;
	if (!strcmp(s->faults, "all"))
		s->crash_at[1] = s->ops_target / 3;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct report {
	double mops, p50, p99, p999, max, mean, model_ms;
	u64 done, updates, pess, combined, installers, cas_fail, read_retries, nospc, fenced;
	u64 self_grants, ring_full, read_combined;
	u64 cache_hits, cache_refreshes, cache_misses, cache_fills, cache_marks;
	u64 lease_revokes, lease_waits, lease_expired, cache_evictions;
};

static void summarize(struct sim *s, struct report *r)
{
	u64 *lat = malloc((s->nops + 1) * sizeof(u64)), n = 0, i, t_end = 0, steady = 0;
	double sum = 0;
	struct hmap cover = { 0 };

	memset(r, 0, sizeof(*r));
	for (i = 0; i < s->nops; i++) {
		const struct op_rec *o = &s->ops[i];

		if (o->pending || !o->resp || o->op == CIDER_SCAN)
			continue;
		lat[n++] = o->resp - o->inv;
		sum += (double)(o->resp - o->inv);
		r->nospc += o->res == CIDER_RES_NOSPC;
		if (o->resp > t_end)
			t_end = o->resp;
		steady += o->resp <= s->t_last_issue;
		if (!cider_op_updates(o->op))
			continue;
		r->updates++;
		r->pess += o->pess;
		if (o->res == CIDER_RES_OK && o->writer != i) {
			r->combined++;
			if (!(*hmap_find(&cover, o->writer, true))++)
				r->installers++;
		}
	}
	for (i = 0; i < s->nr_clients; i++) {
		r->cas_fail += s->clients[i].st.cas_fail;
		r->read_retries += s->clients[i].read_retries;
		r->fenced += s->clients[i].fences;
		r->self_grants += s->clients[i].st.self_grants;
		r->ring_full += s->clients[i].st.ring_full;
		r->read_combined += s->clients[i].st.read_combined;
		r->cache_hits += s->clients[i].st.cache_hits;
		r->cache_refreshes += s->clients[i].st.cache_refreshes;
		r->cache_misses += s->clients[i].st.cache_misses;
		r->cache_fills += s->clients[i].st.cache_fills;
		r->cache_marks += s->clients[i].st.cache_marks;
		r->lease_revokes += s->clients[i].st.lease_revokes;
		r->lease_waits += s->clients[i].st.lease_waits;
		r->lease_expired += s->clients[i].st.lease_expired;
	}
	for (i = 0; i < s->nr_cns; i++)
		r->cache_evictions += s->cns[i].cache.evictions;
	qsort(lat, n, sizeof(u64), cmp_u64);
	r->done = n;
	r->model_ms = (double)t_end / MS;
	/*
	 * Throughput over the steady state: while every client still had work
	 * (up to the last issue), not the drain, where a few stragglers would
	 * decide the figure.
	 */
	r->mops = s->t_last_issue ? steady / ((double)s->t_last_issue / 1e12) / 1e6 : 0;
	r->p50 = n ? (double)lat[n / 2] / US : 0;
	r->p99 = n ? (double)lat[(u64)(n * 0.99)] / US : 0;
	r->p999 = n ? (double)lat[(u64)(n * 0.999)] / US : 0;
	r->max = n ? (double)lat[n - 1] / US : 0;
	r->mean = n ? sum / n / US : 0;
	free(lat);
	hmap_free(&cover);
}

/* Frees that found a reclamation FIFO full: nothing may vanish unseen. */
static u64 leaked(const struct sim *s)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < s->nr_cns; i++)
		n += s->cns[i].slab.leaked;
	return n;
}

/*
 * How close the steady-state throughput runs to the MN NIC's rate: the
 * NIC time its verbs need (atomics at their cost) per second of model time.
 */
static double nic_load(const struct sim *s, const struct report *r)
{
	double per_op, d = r->done ? (double)r->done : 1;

	per_op = (s->verbs[CIDER_V_READ] + s->verbs[CIDER_V_WRITE] +
		  s->p.atomic_cost * (s->verbs[CIDER_V_CAS] + s->verbs[CIDER_V_FAA])) / d;
	return r->mops * per_op / s->p.mn_mops;
}

/* Slots of entry @e of --verbs-by-state: a READ or WRITE one, an atomic its price. */
static double state_slots(const struct sim *s, const struct state_verbs *e)
{
	return e->n[CIDER_V_READ] + e->n[CIDER_V_WRITE] +
	       s->p.atomic_cost * (e->n[CIDER_V_CAS] + e->n[CIDER_V_FAA]);
}

static const struct sim *sv_sim;	/* qsort's context */

static int cmp_state_slots(const void *a, const void *b)
{
	double x = state_slots(sv_sim, a), y = state_slots(sv_sim, b);

	return x < y ? 1 : x > y ? -1 : strcmp(((const struct state_verbs *)a)->name,
						 ((const struct state_verbs *)b)->name);
}

/* --verbs-by-state: per operation of the run, costliest first. */
static void print_by_state(struct sim *s, double ops)
{
	u32 k;

	sv_sim = s;
	qsort(s->sv, s->nsv, sizeof(*s->sv), cmp_state_slots);
	printf("  MN verbs per op by the operation's state when posted (NIC slots, read/write/cas/faa):\n");
	for (k = 0; k < s->nsv; k++)
		printf("    %-44s %.4f  (%.4f %.4f %.4f %.4f)\n", s->sv[k].name,
		       state_slots(s, &s->sv[k]) / ops, s->sv[k].n[0] / ops, s->sv[k].n[1] / ops,
		       s->sv[k].n[2] / ops, s->sv[k].n[3] / ops);
}

static void print_report(struct sim *s, const struct report *r, u64 seed, bool json)
{
	u64 total = s->verbs[0] + s->verbs[1] + s->verbs[2] + s->verbs[3];
	double d = r->done ? (double)r->done : 1, u = r->updates ? (double)r->updates : 1;
	char zipf[32];

	if (s->theta == 0)
		snprintf(zipf, sizeof(zipf), "\"uniform\"");
	else
		snprintf(zipf, sizeof(zipf), "%.2f", s->theta);
	if (json) {
		/* Present when on: reports of runs without it stay as they were. */
		char rc[64] = "", cache[640] = "", scan[160] = "";

		if (s->cfg.read_comb)
			snprintf(rc, sizeof(rc), "\"read_comb\":true,\"read_combined\":%llu,",
				 (unsigned long long)r->read_combined);
		if (s->cfg.cache)
			snprintf(cache, sizeof(cache),
				 "\"cache\":\"on\",\"cache_lease_us\":%.1f,\"cache_entries\":%u,"
				 "\"cache_bytes_per_cn\":%llu,\"cache_hits\":%llu,\"cache_refreshes\":%llu,"
				 "\"cache_misses\":%llu,\"cache_fills\":%llu,\"cache_marks\":%llu,"
				 "\"lease_revokes\":%llu,\"lease_waits\":%llu,\"lease_expired\":%llu,"
				 "\"cache_evictions\":%llu,",
				 s->cfg.cache_lease_ns / 1e3, s->cache_entries,
				 (unsigned long long)cider_cache_bytes(s->cache_entries, s->cache_ent_bytes),
				 (unsigned long long)r->cache_hits, (unsigned long long)r->cache_refreshes,
				 (unsigned long long)r->cache_misses, (unsigned long long)r->cache_fills,
				 (unsigned long long)r->cache_marks, (unsigned long long)r->lease_revokes,
				 (unsigned long long)r->lease_waits, (unsigned long long)r->lease_expired,
				 (unsigned long long)r->cache_evictions);
		else if (s->ideal_cache)
			snprintf(cache, sizeof(cache), "\"cache\":\"%s\",\"ideal_hits\":%llu,",
				 s->ideal_coherent ? "coherent" : "ideal", (unsigned long long)s->ideal_hits);
		if (s->scanners)
			snprintf(scan, sizeof(scan), "\"scanners\":%u,\"scans\":%llu,\"scan_pages\":%llu,\"scan_keys\":%llu,\"scan_keys_held\":%llu,",
				 s->scanners, (unsigned long long)s->scans_full,
				 (unsigned long long)s->scan_pages, (unsigned long long)s->scan_keys,
				 (unsigned long long)s->scan_held);
		printf("{\"index\":\"%s\",\"mode\":\"%s\",\"local_wc\":%s,%s%s%s\"backoff\":\"%s\",\"hotness\":%u,"
		       "\"initial_credit\":%u,\"escalate\":%u,\"lock_queue\":%u,\"atomic_cost\":%.2f,"
		       "\"cns\":%u,\"clients\":%u,\"workload\":\"%s\","
		       "\"zipf\":%s,\"keys\":%llu,\"ops\":%llu,\"seed\":%llu,\"faults\":\"%s\","
		       "\"model_ms\":%.3f,\"throughput_mops\":%.4f,\"p50_us\":%.2f,\"p99_us\":%.2f,"
		       "\"p999_us\":%.2f,\"max_us\":%.2f,\"mean_us\":%.2f,\"over_bound\":%llu,"
		       "\"mn_nic_load\":%.4f,\"self_grants\":%llu,\"ring_full\":%llu,\"fifo_checked\":%llu,"
		       "\"mn_ops_per_op\":{\"total\":%.4f,\"read\":%.4f,\"write\":%.4f,\"cas\":%.4f,\"faa\":%.4f},"
		       "\"cas_retries_per_update\":%.4f,\"wc_rate\":%.4f,\"wc_batch_avg\":%.3f,"
		       "\"pessimistic_ratio\":%.4f,\"crashes\":%u,\"revived\":%u,\"lock_resets\":%llu,"
		       "\"max_hold_us\":%.1f,\"read_retries\":%llu,\"reads_fenced\":%llu,\"mn_bytes_in_use\":%llu,"
		       "\"mn_bytes_peak\":%llu,\"mn_bytes_claimed\":%llu,\"mn_bytes_leaked\":%llu,"
		       "\"nospc\":%llu,\"events\":%llu,\"max_events_between_ops\":%llu,"
		       "\"stalled\":%s,\"violations\":%llu}\n",
		       s->cfg.index == CIDER_INDEX_HASH ? "hash" : "array",
		       s->mode_name, s->cfg.local_wc ? "true" : "false", rc, cache, scan,
		       s->cfg.backoff ? "on" : "off", s->cfg.hotness, s->cfg.initial_credit,
		       s->cfg.escalate, s->cfg.lock_qlen, s->p.atomic_cost,
		       s->nr_cns, s->nr_clients,
		       s->workload_name, zipf, (unsigned long long)s->nr_keys,
		       (unsigned long long)r->done, (unsigned long long)seed, s->faults, r->model_ms,
		       r->mops, r->p50, r->p99, r->p999, r->max, r->mean,
		       (unsigned long long)s->over_bound, nic_load(s, r),
		       (unsigned long long)r->self_grants, (unsigned long long)r->ring_full,
		       (unsigned long long)s->fifo_checked, total / d, s->verbs[CIDER_V_READ] / d,
		       s->verbs[CIDER_V_WRITE] / d, s->verbs[CIDER_V_CAS] / d,
		       s->verbs[CIDER_V_FAA] / d, r->cas_fail / u, r->combined / u,
		       r->installers ? (double)(r->combined + r->installers) / r->installers : 0,
		       r->pess / u, s->crashes, s->revived, (unsigned long long)s->resets,
		       (double)s->max_hold / US, (unsigned long long)r->read_retries,
		       (unsigned long long)r->fenced, (unsigned long long)s->mem_live, (unsigned long long)s->mem_peak,
		       (unsigned long long)s->mem_claimed, (unsigned long long)leaked(s),
		       (unsigned long long)r->nospc, (unsigned long long)s->events,
		       (unsigned long long)s->max_events_gap, s->stalled ? "true" : "false",
		       (unsigned long long)s->violations);
		return;
	}
	printf("%s%s%s: %u CNs x %u clients, workload %s, zipf %s, %llu keys, seed %llu, faults %s\n",
	       s->cfg.index == CIDER_INDEX_HASH ? "hash/" : "", s->mode_name, s->cfg.local_wc ? "+localwc" : "", s->nr_cns, s->cpc,
	       s->workload_name, zipf, (unsigned long long)s->nr_keys,
	       (unsigned long long)seed, s->faults);
	printf("  %llu ops in %.3f ms model time: %.3f Mops/s, p50 %.2f us, p99 %.2f us, p99.9 %.2f us, max %.2f us, mean %.2f us\n",
	       (unsigned long long)r->done, r->model_ms, r->mops, r->p50, r->p99, r->p999, r->max,
	       r->mean);
	printf("  MN NIC load %.3f of its rate (atomics cost %.2f READs); lock queue: %u-entry rings, %llu enqueues found one full, %llu locks found by polling, %llu FIFO checks\n",
	       nic_load(s, r), s->p.atomic_cost, s->cfg.lock_qlen,
	       (unsigned long long)r->ring_full, (unsigned long long)r->self_grants,
	       (unsigned long long)s->fifo_checked);
	if (s->over_bound)
		printf("  %llu operations took longer than the bound (%.0f us): this mode may starve a client\n",
		       (unsigned long long)s->over_bound, (double)s->p.bound_ps / US);
	printf("  MN ops per op %.3f (read %.3f write %.3f cas %.3f faa %.3f)\n",
	       total / d, s->verbs[0] / d, s->verbs[1] / d, s->verbs[2] / d, s->verbs[3] / d);
	printf("  failed CAS per update %.3f, WC rate %.3f, WC batch %.2f, pessimistic %.3f\n",
	       r->cas_fail / u, r->combined / u,
	       r->installers ? (double)(r->combined + r->installers) / r->installers : 0,
	       r->pess / u);
	if (s->cfg.read_comb)
		printf("  read combining: %llu SEARCHes answered by another's lookup\n",
		       (unsigned long long)r->read_combined);
	if (s->cfg.cache)
		printf("  cache (%.0f us leases, %u entries, %llu bytes per CN): %llu SEARCHes answered under a right, %llu after READing the pointer only, %llu READ the block; %llu rights taken, %llu leases started, %llu entries evicted; writes: %llu stopped a lease, %llu waited for one to end (%llu until it expired)\n",
		       s->cfg.cache_lease_ns / 1e3, s->cache_entries,
		       (unsigned long long)cider_cache_bytes(s->cache_entries, s->cache_ent_bytes),
		       (unsigned long long)r->cache_hits, (unsigned long long)r->cache_refreshes,
		       (unsigned long long)r->cache_misses, (unsigned long long)r->cache_fills,
		       (unsigned long long)r->cache_marks, (unsigned long long)r->cache_evictions,
		       (unsigned long long)r->lease_revokes, (unsigned long long)r->lease_waits,
		       (unsigned long long)r->lease_expired);
	if (s->ideal_cache)
		printf("  %s cache: %llu SEARCHes of a key their CN had read%s answered at no cost\n",
		       s->ideal_coherent ? "coherent ideal" : "ideal", (unsigned long long)s->ideal_hits,
		       s->ideal_coherent ? ", unwritten since," : "");
	printf("  MN memory: %llu bytes of blocks in use (peak %llu), %llu claimed, %llu leaked; %llu SEARCHes re-read, %llu reads fenced, %llu writes refused for space\n",
	       (unsigned long long)s->mem_live, (unsigned long long)s->mem_peak,
	       (unsigned long long)s->mem_claimed, (unsigned long long)leaked(s),
	       (unsigned long long)r->read_retries, (unsigned long long)r->fenced,
	       (unsigned long long)r->nospc);
	if (s->scanners)
		printf("  %u scanners: %llu full scans checked, %llu pages, %llu keys returned, %llu of them held throughout a scan\n",
		       s->scanners, (unsigned long long)s->scans_full,
		       (unsigned long long)s->scan_pages, (unsigned long long)s->scan_keys,
		       (unsigned long long)s->scan_held);
	printf("  lock resets %llu, longest lock hold %.1f us, crashes %u, revived %u\n",
	       (unsigned long long)s->resets, (double)s->max_hold / US, s->crashes, s->revived);
	printf("  %llu events; at most %llu between two completed operations, counting one more per 64 bytes moved (stall limit %llu)\n",
	       (unsigned long long)s->events, (unsigned long long)s->max_events_gap,
	       (unsigned long long)s->stall_events);
	printf("  violations: %llu%s%s\n", (unsigned long long)s->violations,
	       s->violations ? ": " : "", s->first_violation);
	if (s->by_state)
		print_by_state(s, d);
}

static void teardown(struct sim *s)
{
	free(s->sv);
	free(s->cns);
	free(s->clients);
	free(s->lwc);
	free(s->ring);
	free(s->bufs);
	free(s->opbufs);
	free(s->qp_ready);
	free(s->batch_done);
	free(s->verbs_out);
	free(s->incarnation);
	free(s->cur_op);
	free(s->rmw_key);
	free(s->latest_seq);
	cider_latest_free(&s->latest);
	free(s->msg_last);
	free(s->cn_nic_free);
	free(s->cache_ent);
	free(s->cache_room);
	hmap_free(&s->ideal_seen);
	hmap_free(&s->key_changes);
	free(s->heap);
	free(s->ops);
	sim_scan_free(s);
	free(s->chain);
	hmap_free(&s->mem);
	hmap_free(&s->word_free);
	hmap_free(&s->word_use);
	hmap_free(&s->holder);
	hmap_free(&s->holder_client);
	hmap_free(&s->hold_since);
}

int main(int argc, char **argv)
{
	struct sim s = { 0 };
	struct report r;
	u64 seed = 1, i;
	bool json = false;
	int ret;

	/* A checker of histories, this run's or a real one's (lincheck.c). */
	for (i = 1; i < (u64)argc; i++)
		if (!strcmp(argv[i], "--check-history") || !strncmp(argv[i], "--check-history=", 16))
			return lincheck_main(argc, argv);
	s.nr_cns = 8;
	s.cpc = 4;
	s.nr_keys = 1000000;
	s.ops_target = 100000;
	s.theta = 0.99;
	s.faults = "none";
	s.cfg.backoff = true;
	s.key_len = 8;
	cider_sizes_parse("fixed:8", &s.vsize);
	s.cfg.cache_lease_ns = 5000000;
	s.cfg.cache_margin_ns = 1000;
	s.cfg.cache_stable_ns = 1000000;
	s.cfg.cache_hot = 2;
	s.cache_entries = 16384;
	s.initial_credit = 36;
	s.hotness = 2;
	s.escalate = 2;
	cider_workload_get("a", &s.wl);
	s.workload_name = s.wl.name;
	s.p = (struct sim_params) {
		.mn_mops = 110,			/* SMART §3: 8-byte READ, ConnectX-6 */
		.atomic_cost = 2,		/* PCIe read + write; simulator.rst */
		.bw_gbps = 100,			/* the papers' testbeds */
		.net_ps = 1000 * NS,		/* one way; READ RTT ~2-3 us */
		.atomic_word_ps = 400 * NS,	/* ~2.5 Mops per 8-byte word */
		.msg_ps = 1000 * NS,
		.msg_cpu_ps = 300 * NS,
		.client_cpu_ps = 150 * NS,
		.jitter_ps = 4 * US,
		.lease_ps = 50 * MS,		/* ShiftLock: 1000 ms; see simulator.rst */
		.grace_ps = 100 * US,		/* block reuse; reads take ~5 us */
	};
	ret = parse_args(&s, argc, argv, &seed, &json);
	if (ret)
		return ret;
	if (cider_zipf_init(&s.zipf, s.nr_keys, s.theta)) {
		fprintf(stderr, "cider-sim: bad zipf parameter\n");
		return 2;
	}
	if (s.wl.latest && cider_latest_init(&s.latest, &s.wl, s.nr_keys, s.theta)) {
		fprintf(stderr, "cider-sim: no memory for workload %s's %llu keys\n", s.wl.name,
			(unsigned long long)s.nr_keys);
		return 2;
	}
	cider_latest_reader(&s.latest, &s.latest_zipf);
	s.rng.s = seed;
	s.frng.s = seed ^ 0x5deece66dULL;
	setup(&s);
	sim_run(&s);
	sim_check(&s);
	if (s.steady_memory && s.mem_claimed > s.mem_claimed_half * 5 / 4 +
	    (u64)s.nr_cns * s.cfg.chunk_size)
		sim_violation(&s, "MN memory kept growing: %llu bytes claimed at half-time, %llu at the end",
			      (unsigned long long)s.mem_claimed_half,
			      (unsigned long long)s.mem_claimed);
	summarize(&s, &r);
	print_report(&s, &r, seed, json);
	if (s.violations && !s.quiet)
		fprintf(stderr, "cider-sim: VIOLATION: %s\n", s.first_violation);
	if (s.history) {
		/* Which keys held a value before the run: lincheck.h. */
		fprintf(s.history, "{\"history\":\"cider-kv\",\"version\":1,\"preload\":\"%s\"}\n",
			s.wl.preload_all ? "all" : "odd");
		for (i = 0; i < s.nops; i++)
			if (s.ops[i].op != CIDER_SCAN)
				history_write(&s, &s.ops[i]);
		fclose(s.history);
	}
	teardown(&s);
	return s.stalled ? 3 : s.violations ? 1 : 0;
}
