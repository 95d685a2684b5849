#!/usr/bin/env bash
# tests/faults/starve.sh: msgd keeps ticking while real-time hogs take
# both CPUs (runtime/daemon/priority.c).
#
#   cpu 0: hog (SCHED_FIFO 5)      cpu 1: hog (SCHED_FIFO 5)      ~2 s
#   msgd h0, msgd h1 (virtual hosts): loop at nice -10, watchdog SCHED_RR 10
#   job: msgrun -n 2 -r 2, f_stream (fair class, starved with everything else)
#
# For ~2 s the fair class gets only what RT throttling leaves (50 ms in
# every second). The daemons' loops are fair too, but their watchdog
# (real-time, above the hogs) moves a loop whose tick is late to SCHED_RR:
#   1. no daemon ticks late (late-tick) and none takes a host for lost;
#   2. the job ends by itself, exit 0, "stream ok".
# MODE=nice is the negative control (MSG_PRIO=nice: no watchdog): the same
# run must show a late tick or a lost host; it passes only if it does.
# MODE=rt: the loop real-time all along (MSG_PRIO=rt), checked as watch.
#
# Usage: starve.sh BINDIR F_STREAM [watch|nice|rt]
set -euo pipefail

[ $# -ge 2 ] && [[ ${3:-watch} =~ ^(watch|nice|rt)$ ]] || {
	echo "usage: $0 BINDIR F_STREAM [watch|nice|rt]" >&2
	exit 2
}
bin=$(cd "$1" && pwd)
stream=$2
mode=${3:-watch}
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
[ "$(nproc)" -le 8 ] || fail "meant for a small machine (one hog per CPU): $(nproc) CPUs"
chrt -f 5 true 2>/dev/null || {
	echo "starve.sh: no real-time scheduling here (SCHED_FIFO refused)" >&2
	[ "${CI:-}" = true ] && exit 1
	exit 77
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/msg-starve.XXXXXX")
job=
hogs=()
cleanup() {
	for p in "${hogs[@]}" $job; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf -- "$dir"
}
trap cleanup EXIT

export MSG_PRIO=$mode
ev=$dir/events.jsonl
# ~5 s of traffic (500 rounds paced 10 ms); lag detection out of the way
# (every process starves alike): this is about the daemons' heartbeats
timeout -k 5 90 "$bin/msgrun" -n 2 -r 2 --virtual-hosts 2 --stall-min 20000 --events "$ev" \
	"$stream" 500 1000 10 >"$dir/out" 2>&1 &
job=$!
for _ in $(seq 50); do
	grep -q '"launch"' "$ev" 2>/dev/null && break
	sleep 0.1
done
grep -q '"launch"' "$ev" 2>/dev/null || fail "job not launched after 5 s: $(cat "$dir/out")"
sleep 0.5
# a busy loop that ends by itself (whatever else gets to run)
for cpu in $(seq 0 $(($(nproc) - 1))); do
	chrt -f 5 taskset -c "$cpu" bash -c \
		'end=$(( ${EPOCHREALTIME/./} + 2000000 )); while (( ${EPOCHREALTIME/./} < end )); do :; done' &
	hogs+=($!)
done
for p in "${hogs[@]}"; do wait "$p" || true; done
hogs=()
rc=0
wait "$job" || rc=$?
job=
late=$(grep -c '"late-tick"' "$ev" || true)
lost=$(grep -c '"host-lost"' "$ev" || true)
echo "mode $mode: late ticks $late, host losses $lost, msgrun exit $rc"
if [ "$mode" = nice ]; then
	[ "$late" -gt 0 ] || [ "$lost" -gt 0 ] ||
		fail "negative control: without the watchdog the starved daemons ticked on time"
	echo "PASS (negative control): starved without the watchdog"
	exit 0
fi
[ "$late" -eq 0 ] || fail "$late late ticks: $(grep '"late-tick"' "$ev" | head -3)"
[ "$lost" -eq 0 ] || fail "$lost host losses: $(grep '"host-lost"' "$ev" | head -3)"
[ "$rc" -eq 0 ] || fail "msgrun exit $rc: $(tail -5 "$dir/out")"
grep -q '^stream ok' "$dir/out" || fail "no 'stream ok': $(tail -5 "$dir/out")"
echo "PASS: the daemons kept ticking through ~2 s of real-time hogs"
