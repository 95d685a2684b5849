#!/usr/bin/env bash
# tests/faults/netns_cut.sh: a partition by a real link cut (issue 5,
# acceptance 3b). Four hosts in network namespaces (tests/cluster/lib.sh),
# one msgd each; a job n=3 r=3 from host 1 through --hostfile; while it
# runs, host 3 is cut off, one of two ways (HOW):
#   switch  its switch port goes down (`ip link set p3 down`, cl_cut 3);
#   msgctl  `msgctl cut 2` (msg host 2 = h3) with every msgd started with
#           --cut-links: h3's msgd takes its own eth0 down, a real link cut
#           ordered through the runtime's own fault injection;
#   kill-host  not a cut but a host loss: `msgctl kill-host 2`, h3's msgd
#           dies with its processes (checks 1, 3, 4; 2 becomes: nothing of
#           the job runs in h3 any more).
#
# Hosts are h1..h4 = msg hosts 0..3, placement host = (g*r+k) mod 4:
#   h1: 0.0 1.1 2.2   h2: 0.1 1.2   h3: 0.2 2.0   h4: 1.0 2.1
#
# What must hold:
#   1. the majority (h1, h2, h4) logs host-lost 2 and fences 0.2 and 2.0
#      for host loss, and nobody else;
#   2. the minority side fences itself: within the lease (plus slack) no
#      replica process runs in h3 any more (its msgd killed them: no
#      divergent copy survives), and h3's msgd logged 'isolated' and
#      declared nobody lost (its events cannot reach msgrun across the
#      cut: read from its log);
#   3. the job's checked answer is unchanged ("stream ok");
#   4. msgrun ends by itself with exit 0: the majority's host-lost 2 counts
#      h3's replicas as ended, though h3's msgd cannot say so.
# Not root / no `ip netns`: exit 77 (skip), but exit 1 if CI=true.
#
# Usage: netns_cut.sh BINDIR F_STREAM [switch|msgctl|kill-host]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../cluster/lib.sh
. "$here/../cluster/lib.sh"

[ $# -ge 2 ] && [ $# -le 3 ] && [[ ${3:-switch} =~ ^(switch|msgctl|kill-host)$ ]] || {
	echo "usage: $0 BINDIR F_STREAM [switch|msgctl|kill-host]" >&2
	exit 2
}
bindir=$(cd "$1" && pwd)
stream=$2
how=${3:-switch}
[ "$how" = msgctl ] && export CL_MSGD_OPTS=--cut-links
export CL_TIMEOUT=60

cl_require
cl_trap

cl_up 4 "$bindir"
ev=$CL_DIR/events.jsonl
out=$CL_DIR/job.out
# ~4 s of traffic (300 rounds paced 10 ms); the cut at ~1 s
CL_TIMEOUT=30 cl_msgrun 1 -n 3 -r 3 --no-regen --events "$ev" "$stream" 300 1000 10 >"$out" 2>&1 &
CL_JOB=$!
sleep 1
grep -q '"launch"' "$ev" 2>/dev/null || fail "job not launched after 1 s: $(cat "$out")"
pgrep_ns() { ip netns pids "$(cl_ns "$1")" | while read -r p; do
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = f_stream ] && echo "$p"; done; }
before=$(pgrep_ns 3 | wc -l)
[ "$before" -eq 2 ] || fail "host 3 runs $before replicas before the cut, want 2 (0.2, 2.0)"
if [ "$how" = switch ]; then
	cl_cut 3
elif [ "$how" = kill-host ]; then
	cl_exec 1 "$bindir/msgctl" --job-dir "$CL_DIR/job1" --key-file "$CL_KEY" kill-host 2 ||
		fail "msgctl kill-host 2 failed"
else
	# the first job's directory (cl_jobdir); msgctl runs inside host 1
	cl_exec 1 "$bindir/msgctl" --job-dir "$CL_DIR/job1" --key-file "$CL_KEY" cut 2 ||
		fail "msgctl cut 2 failed"
	for _ in $(seq 1 100); do
		ip -n "$(cl_ns 3)" link show eth0 | grep -q 'state DOWN' && break
		sleep 0.05
	done
	ip -n "$(cl_ns 3)" link show eth0 | grep -q 'state DOWN' ||
		fail "msgctl cut 2: host 3's eth0 is still up after 5 s"
	pass "msgctl cut 2: host 3's msgd took its eth0 down"
fi
t_cut=$(date +%s%N)
# 2. the minority fences itself: lease 250 ms; allow 3 s on a loaded box
gone=0
for _ in $(seq 1 60); do
	if [ -z "$(pgrep_ns 3)" ]; then
		gone=1
		break
	fi
	sleep 0.05
done
t_gone=$(date +%s%N)
[ "$gone" -eq 1 ] || fail "replicas still running on the cut-off host 3 after 3 s: $(pgrep_ns 3 | tr '\n' ' ')"
pass "cut-off host 3 ended its replicas $(((t_gone - t_cut) / 1000000)) ms after the cut"
wait "$CL_JOB" && rc=0 || rc=$?
CL_JOB=
cat "$out"
grep -q '^stream ok n=3 ' "$out" || fail "no checked answer ('stream ok')"
pass "answer unchanged"
# 1.
python3 - "$ev" <<'PY' || fail "majority side's events"
import json, sys
ev = []
for line in open(sys.argv[1]):
    pairs = json.loads(line, object_pairs_hook=lambda kv: kv)
    d = {}
    for k, v in pairs:
        d.setdefault(k, v)
    ev.append(d)
bad = []
for h in (0, 1, 3):
    if not any(e.get("event") == "host-lost" and e.get("host") == h and e.get("lost") == 2 for e in ev):
        bad.append(f"host {h} did not log host-lost 2")
for g, k in ((0, 2), (2, 0)):
    if not any(e.get("event") == "fence" and e.get("group") == g and e.get("rep") == k
               and e.get("reason") == "host" for e in ev):
        bad.append(f"{g}.{k} not fenced for host loss")
for e in ev:
    if e.get("event") == "fence" and (e["group"], e["rep"]) not in ((0, 2), (2, 0)):
        bad.append(f"fenced {e['group']}.{e['rep']} too: {e}")
for b in bad:
    print("  -", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
pass "majority: host-lost 2, fenced 0.2 and 2.0 (host), nobody else"
# 2. h3's own account: its msgd log (-v) names the isolation
if [ "$how" = kill-host ]; then
	cl_msgd_alive 3 && fail "msgctl kill-host 2: host 3's msgd still runs"
	pass "host 3's msgd is gone"
elif grep -q 'isolated' "$CL_DIR/msgd-h3.log"; then
	pass "host 3's msgd logged its isolation"
else
	tail -n 20 "$CL_DIR/msgd-h3.log" >&2
	fail "host 3's msgd log does not mention 'isolated'"
fi
# its view of the others is void: it fences nobody but its own (lease)
if [ "$how" != kill-host ]; then
	if grep -E '"event":"(host-lost|group-lost)"|"reason":"host"' "$CL_DIR/msgd-h3.log" >&2; then
		fail "the cut-off host 3 declared hosts or ranks lost (lines above)"
	fi
	pass "host 3 declared nobody lost"
fi
if [ "$how" = switch ]; then cl_heal 3; fi
# 4. the job ends by itself: msgrun counts h3's processes as ended once a
# majority of the hosts declared h3 lost (its own connection to h3's msgd
# is cut too, and TCP keeps it open for minutes).
[ "$rc" -eq 0 ] || fail "msgrun exited $rc (124: it never ended by itself)"
pass "msgrun exited 0"
ok=1
echo "PASS: host 3 cut off or lost ($how, 4 netns hosts)"
