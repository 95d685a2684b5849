#!/usr/bin/env bash
# bench/detect/run.sh: failure-detection latency per fault kind at default
# detector settings (issue 5, acceptance 5), from the --events log.
#
# Each repetition runs tests/faults' f_stream (n=3 r=3 on 4 virtual hosts,
# ~2 s of paced traffic, --no-regen) with one injected fault at 0.5 s:
#
#   kind       fault              from (event, mono_ns)        to (first event)
#   exit       kill 1.1           injected (its daemon)        suspicion detector=exit of 1.1
#   host       kill-host 2        host-gone (msgrun, as it     host-lost lost=2 (any daemon)
#                                 sends the kill; the daemon
#                                 dies before it can log)
#   stall      stall 1.1          injected (its daemon)        suspicion detector=lag of 1.1
#   corrupt    corrupt 0.1@send=N the corrupt copy's injected  mismatch 0->1 (any daemon)
#              (--mode vote)
#   partition  cut 2              injected (host 2)            isolated (host 2); host-lost 2 (majority)
#
# and "fence" columns: to the fence of the replica (first fence event).
# All daemons run on this machine, so mono_ns stamps are one clock.
# Targets (DESIGN §6 / issue 5): process end <= 10 ms, host loss <= 300 ms,
# stall <= 1 s. Not pass/fail: the table says whether each median and p99
# meets its target.
#
# Usage: bench/detect/run.sh [BUILD_DIR]      (default: build)
# Env:   REPS (10), KINDS ("exit host stall corrupt partition"),
#        LOAD (0: also run N busy loops, e.g. LOAD=2 for a saturated 2-core box)
# Exit:  0 when every run produced its events, 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
bin=$build/bin
stream=$build/tests/faults/f_stream
reps=${REPS:-10}
kinds=${KINDS:-exit host stall corrupt partition}
load=${LOAD:-0}

if [ ! -x "$bin/msgrun" ] || [ ! -x "$bin/msgd" ] || [ ! -x "$stream" ]; then
	echo "run.sh: build first: cmake -S $root -B $build -G Ninja && ninja -C $build msgrun msgd f_stream" >&2
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/msg-bench-detect.XXXXXX")
busy=()
cleanup() {
	for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf -- "$work"
}
trap cleanup EXIT
for ((i = 0; i < load; i++)); do
	(while :; do :; done) &
	busy+=($!)
done

inject_for() {
	case $1 in
	exit) echo "kill 1.1@0.5s" ;;
	host) echo "kill-host 2@0.5s" ;;
	stall) echo "stall 1.1@0.5s" ;;
	corrupt) echo "corrupt 0.1@send=40" ;; # send 40 of rank 0 = 0->1 seq 20 (n=3)
	partition) echo "cut 2@0.5s" ;;
	esac
}

fails=0
for kind in $kinds; do
	# corrupt: vote mode masks it (in first mode every replica of rank 1
	# may consume the corrupt copy, and then the group is lost)
	mode=first
	[ "$kind" = corrupt ] && mode=vote
	# stall: ~6 s of traffic, the bound scales with the machine's load
	rounds=200
	[ "$kind" = stall ] && rounds=600
	for ((i = 1; i <= reps; i++)); do
		ev=$work/$kind-$i.jsonl
		if ! timeout -k 5 60 "$bin/msgrun" -n 3 -r 3 --virtual-hosts 4 --no-regen --mode $mode \
			--timeout 40 --events "$ev" --job-dir "$work/job-$kind-$i" \
			--inject "$(inject_for "$kind")" "$stream" "$rounds" 1000 10 300 \
			>"$work/$kind-$i.out" 2>&1; then
			echo "run.sh: $kind run $i: msgrun failed:" >&2
			tail -n 5 "$work/$kind-$i.out" >&2
			fails=$((fails + 1))
		fi
	done
done

python3 - "$work" "$reps" "$kinds" <<'PY' || fails=$((fails + 1))
import json, sys, statistics, os

work, reps, kinds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
targets = {"exit": 10.0, "host": 300.0, "stall": 1000.0}
label = {"exit": "process end (kill)", "host": "host loss (kill-host)",
         "stall": "hang (stall)", "corrupt": "corrupt message",
         "partition": "partition (cut)"}

def load(path):
    ev = []
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        # a fence event names two hosts: keep the first (the daemon's)
        pairs = json.loads(line, object_pairs_hook=lambda kv: kv)
        d = {}
        for k, v in pairs:
            d.setdefault(k, v)
        ev.append(d)
    return ev

def first(ev, pred):
    m = [e["mono_ns"] for e in ev if pred(e)]
    return min(m) if m else None

def measure(kind, ev):
    """(detect_ms, fence_ms) or None"""
    if kind == "exit":
        t0 = first(ev, lambda e: e.get("event") == "injected" and e.get("fault") == "kill")
        t1 = first(ev, lambda e: e.get("event") == "suspicion" and e.get("detector") == "exit"
                   and e.get("group") == 1 and e.get("rep") == 1)
        t2 = first(ev, lambda e: e.get("event") == "fence" and e.get("group") == 1 and e.get("rep") == 1)
    elif kind == "host":
        t0 = first(ev, lambda e: e.get("event") == "host-gone")
        t1 = first(ev, lambda e: e.get("event") == "host-lost" and e.get("lost") == 2)
        t2 = first(ev, lambda e: e.get("event") == "fence" and e.get("reason") == "host")
    elif kind == "stall":
        t0 = first(ev, lambda e: e.get("event") == "injected" and e.get("fault") == "stall")
        t1 = first(ev, lambda e: e.get("event") == "suspicion" and e.get("detector") == "lag"
                   and e.get("group") == 1 and e.get("rep") == 1)
        t2 = first(ev, lambda e: e.get("event") == "fence" and e.get("group") == 1 and e.get("rep") == 1)
    elif kind == "corrupt":
        # the daemon logs two 'injected corrupt': when told, and when it flips the bit
        inj = sorted(e["mono_ns"] for e in ev if e.get("event") == "injected" and e.get("fault") == "corrupt")
        t0 = inj[-1] if inj else None
        t1 = first(ev, lambda e: e.get("event") == "mismatch" and e.get("src") == 0)
        t2 = first(ev, lambda e: e.get("event") == "fence" and e.get("group") == 0 and e.get("rep") == 1)
    else:  # partition
        t0 = first(ev, lambda e: e.get("event") == "injected" and e.get("fault") == "cut")
        t1 = first(ev, lambda e: e.get("event") == "isolated" and e.get("host") == 2)
        t2 = first(ev, lambda e: e.get("event") == "host-lost" and e.get("lost") == 2)
    if t0 is None or t1 is None:
        return None
    return ((t1 - t0) / 1e6, (t2 - t0) / 1e6 if t2 is not None else None)

def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)

bad = 0
print(f"detection latency at defaults (hb 50 ms / timeout 250 ms, stall floor 750 ms), "
      f"n=3 r=3, 4 virtual hosts, {reps} runs per kind, load avg {os.getloadavg()[0]:.1f}")
print(f"{'fault':<24}{'runs':>5}{'detect med':>12}{'p99':>9}{'max':>9}"
      f"{'fence med':>11}{'p99':>9}{'target':>9}  met")
false_pos = 0
for kind in kinds:
    det, fen = [], []
    for i in range(1, reps + 1):
        p = os.path.join(work, f"{kind}-{i}.jsonl")
        if not os.path.exists(p):
            continue
        ev = load(p)
        r = measure(kind, ev)
        if r is None:
            print(f"  {kind} run {i}: no detection in the event log; its injections, "
                  f"suspicions and fences:", file=sys.stderr)
            for e in ev:
                if e.get("event") in ("injected", "suspicion", "fence", "host-gone", "isolated"):
                    print("    ", json.dumps(e), file=sys.stderr)
            bad += 1
            continue
        det.append(r[0])
        if r[1] is not None:
            fen.append(r[1])
    t = targets.get(kind)
    met = "-" if t is None or not det else ("yes" if pct(det, 99) <= t else
                                           ("median only" if pct(det, 50) <= t else "NO"))
    name = "partition: isolated" if kind == "partition" else label[kind]
    fname = "host-lost" if kind == "partition" else "fence"
    print(f"{name:<24}{len(det):>5}{pct(det,50):>12.1f}{pct(det,99):>9.1f}"
          f"{(max(det) if det else float('nan')):>9.1f}{pct(fen,50):>11.1f}{pct(fen,99):>9.1f}"
          f"{(str(int(t)) if t else '-'):>9}  {met}")
print("(ms; detect = injection to the first suspicion / host-lost / mismatch / isolated;"
      " fence = to the first fence, for partition: to the majority's host-lost)")
sys.exit(1 if bad else 0)
PY
exit $((fails > 0))
