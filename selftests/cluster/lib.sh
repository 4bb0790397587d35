# SPDX-License-Identifier: GPL-2.0
# lib.sh: what the virtual cluster's tests share (sourced, on guest 1 of
# tools/vm/cider-vm cluster): TAP lines, counters of a guest's node,
# the clocks' skew, a cider-memd started and waited for.
ON=tools/vm/cider-on
CTL=tools/ciderctl/ciderctl
BENCH=tools/cider-bench/cider-bench
C=/tmp/cider-cluster
LOG=/tmp/cider-vm
n=0
fail=0

tap() { # tap STATUS DESCRIPTION [LOGFILE]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		fail=$((fail + 1))
		echo "not ok $n $2"
		[ -z "${3:-}" ] || tail -n 15 "$3" | sed 's/^/# /'
	fi
}

# on GUEST CMD...: CMD on GUEST, here when it is guest 1.
on() {
	local g=$1
	shift
	if [ "$g" = 1 ]; then "$@"; else $ON "$g" "$@"; fi
}

# counter NAME [GUEST [FILE]]: a key=value word of a debugfs file of
# GUEST (default 1; FILE default mn0, the first node attached).
counter() {
	on "${2:-1}" bash -c "tr ' ' '\\n' < /sys/kernel/debug/cider/${3:-mn0} | sed -n 's/^$1=//p' | head -n 1"
}

# skew_ns GUEST: the skew of GUEST's clock from guest 1's, ns.
skew_ns() {
	$ON "$1" tools/vm/cluster-clock offset 10.77.0.1 | sed -n 's/.*skew_ns=\([0-9]*\).*/\1/p'
}

# memd_start LOGFILE ARGS...: cider-memd in the background ($memd), up
# and listening, or status 1.  It admits the cluster's network.
memd_start() {
	local log=$1
	shift
	tools/cider-memd/cider-memd --allow 10.77.0.0/24 "$@" > "$log" 2>&1 &
	memd=$!
	for _ in $(seq 300); do grep -q listening "$log" && return 0; sleep 0.2; done
	return 1
}

# attach_id LOGFILE: the mn id an attach printed ("mnN: attached ...").
attach_id() {
	sed -n 's/^mn\([0-9]*\): attached.*/\1/p' "$1" | head -n 1
}

# p50 / p999 JSON: the median and p99.9 of a cider-bench --json report, us.
p50() { local v; v=$(sed -n 's/.*"p50_us":\([0-9]*\).*/\1/p' "$1"); echo "${v:-0}"; }
p999() { local v; v=$(sed -n 's/.*"p999_us":\([0-9]*\).*/\1/p' "$1"); echo "${v:-0}"; }
