# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# cache.sh: the CN cache between two kernels, sourced by two-cns on its
# cluster (guest 1, both guests' cider.ko loaded, before guest 2 dies).
# A second store, in cider mode with read leases of 200 ms, attached on
# both guests with the cache on: a key cached on cn 1 and written on cn 2
# is never read stale by cn 1 (rounds of: cn 1 reads until it answers
# from its cache, cn 2 writes, cn 1 reads the new value); cn 2's INVALs
# cross the RDMA links and cn 1 answers them; then cn 1 reads four hot
# keys (YCSB-C) while cn 2 runs YCSB-B on them, both recording their
# histories, which merged are linearizable, and cn 1's MN verbs per GET
# are reported.  Uses lib.sh's tap, counter, memd_start, skew_ns.
CACHE_PORT=7472
CACHE_ROUNDS=10
cache_memd_was=$memd

cache_mn=(x 0 0)	# by guest: its attach of the cached store

# cache_counter NAME GUEST: a counter of GUEST's attach of the cached store.
cache_counter() {
	local v
	v=$(counter "$1" "$2" "mn${cache_mn[$2]}")
	echo "${v:-0}"
}

memd_start "$LOG/memd-cache.log" --listen "$CIDER_MN_ADDR:$CACHE_PORT" --size 16M \
	--index array --keys 64 --mode cider --lease-ms 2000 --cache-lease-us 200000
tap $? "cider-memd (cider mode, read leases of 200 ms) listens on guest 1" "$LOG/memd-cache.log"
cache_memd=$memd
memd=$cache_memd_was

for g in 1 2; do
	{ on $g bash -c 'echo 1 > /sys/module/cider/parameters/cache' &&
		on $g $CTL attach "$CIDER_MN_ADDR:$CACHE_PORT" cn "$g"; } > "$LOG/cache-attach$g.log" 2>&1
	st=$?
	[ $st = 0 ] || echo "(exit status $st)" >> "$LOG/cache-attach$g.log"
	tap $st "guest $g attaches the cached store as cn $g, with the cache" "$LOG/cache-attach$g.log"
	cache_mn[$g]=$(attach_id "$LOG/cache-attach$g.log")
done

# A node takes no right for 2 s after its claim (kmod/kvshard.h).
sleep 2.5
: > "$LOG/cache-rounds.log"
on 2 $CTL kv -m "${cache_mn[2]}" put 0 1000 >> "$LOG/cache-rounds.log" 2>&1
cached=0
stale=0
late=0
for r in $(seq "$CACHE_ROUNDS"); do
	h0=$(cache_counter cache_hits 1)
	$BENCH kv --mn "${cache_mn[1]}" --workload c --keys 1 --no-preload --threads 1 --ioctl \
		--ops 200 > /dev/null 2>> "$LOG/cache-rounds.log"
	h1=$(cache_counter cache_hits 1)
	[ "$h1" -gt "$h0" ] && cached=$((cached + 1))
	e0=$(cache_counter lease_expired 2)
	on 2 $CTL kv -m "${cache_mn[2]}" put 0 $((1000 + r)) >> "$LOG/cache-rounds.log" 2>&1
	e1=$(cache_counter lease_expired 2)
	got=$($CTL kv -m "${cache_mn[1]}" get 0 2>> "$LOG/cache-rounds.log")
	echo "round $r: hits $h0 -> $h1, wrote $((1000 + r)), read '$got', leases expired $e0 -> $e1" \
		>> "$LOG/cache-rounds.log"
	[ "$got" = $((1000 + r)) ] || stale=$((stale + 1))
	[ "$r" -le $((CACHE_ROUNDS / 2)) ] || [ "$e1" = "$e0" ] || late=$((late + 1))
done
[ "$stale" -eq 0 ]
tap $? "a key cached on cn 1 and written on cn 2 is never read stale ($CACHE_ROUNDS rounds)" "$LOG/cache-rounds.log"
[ "$cached" -eq "$CACHE_ROUNDS" ]
tap $? "cn 1 answered from its cache before every write ($cached of $CACHE_ROUNDS rounds)" "$LOG/cache-rounds.log"
echo "# cn 2: $(cache_counter sent_inval 2) INVALs sent, $(cache_counter lease_expired 2) writes waited a lease out; cn 1: $(cache_counter cache_invals 1) INVALs received, $(cache_counter sent_inval_ack 1) answered"
[ "$late" -eq 0 ] && [ "$(cache_counter sent_inval_ack 1)" -gt 0 ] && [ "$(cache_counter remote 2)" -gt 0 ]
tap $? "cn 2's INVALs cross the link and cn 1 answers them (no write of the last $((CACHE_ROUNDS / 2)) rounds waited its lease out)" "$LOG/cache-rounds.log"

# Both at once, from the same instant: cn 1 reads, cn 2 reads and writes.
skew0=$(skew_ns 2)
start=$(( $(date +%s) + 5 ))
cargs=(kv --zipf 0.99 --keys 4 --threads 2 --depth 2 --duration 5 --start-at "$start" --json)
$BENCH "${cargs[@]}" --mn "${cache_mn[1]}" --workload c --history "$C/chist1.jsonl" \
	> "$LOG/cbench1.json" 2> "$LOG/cbench1.log" &
b1=$!
on 2 $BENCH "${cargs[@]}" --mn "${cache_mn[2]}" --workload b --no-preload \
	--history "$C/chist2.jsonl" > "$LOG/cbench2.json" 2> "$LOG/cbench2.log"
rc2=$?
wait $b1
rc1=$?
skew1=$(skew_ns 2)
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]
tap $? "cn 1 reads four hot keys while cn 2 reads and writes them, every operation succeeds" "$LOG/cbench1.log"
widen=$(( ${skew0:-999999999} > ${skew1:-999999999} ? ${skew0:-999999999} : ${skew1:-999999999} ))
tools/cider-sim/cider-sim --check-history "$C/chist1.jsonl" "$C/chist2.jsonl" --widen-ns "$widen" \
	--max-seconds 300 > "$LOG/cmerged.log" 2>&1
tap $? "their histories, merged, are linearizable per key (clocks within $widen ns)" "$LOG/cmerged.log"
sed 's/^/# /' "$LOG/cmerged.log"
for g in 1 2; do
	echo "# cn $g: $(sed -n 's/.*"ops":\([0-9]*\).*"p50_us":\([0-9.]*\).*/\1 ops, p50 \2 us/p' "$LOG/cbench$g.json"), MN verbs per op $(sed -n 's/.*"mn_ops_per_op":{"total":\([0-9.]*\).*/\1/p' "$LOG/cbench$g.json"), cache $(sed -n 's/.*"cache":\({[^}]*}\).*/\1/p' "$LOG/cbench$g.json")"
done

for g in 1 2; do
	on $g $CTL detach "${cache_mn[$g]}" > /dev/null 2>&1
	on $g bash -c 'echo 1 > /sys/module/cider/parameters/cache'	# the default
done
kill "$cache_memd" 2> /dev/null
wait "$cache_memd" 2> /dev/null
