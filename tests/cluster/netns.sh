#!/usr/bin/env bash
# tests/cluster/netns.sh: msg across four hosts, each in its own network
# namespace with its own address, one msgd per host, jobs started through
# `msgrun --hostfile` from host 1.
#
#   msg-h1-$$          msg-h2-$$          msg-h3-$$          msg-h4-$$
#  +--------------+   +--------------+   +--------------+   +--------------+
#  | msgrun       |   |              |   |              |   |              |
#  | msgd :7420   |   | msgd :7420   |   | msgd :7420   |   | msgd :7420   |
#  | replicas     |   | replicas     |   | replicas     |   | replicas     |
#  | eth0         |   | eth0         |   | eth0         |   | eth0         |
#  | 10.77.0.1/24 |   | 10.77.0.2/24 |   | 10.77.0.3/24 |   | 10.77.0.4/24 |
#  +------+-------+   +------+-------+   +------+-------+   +------+-------+
#         | veth             | veth             | veth             | veth
#  +------+------------------+------------------+------------------+-------+
#  |  p1                     p2                 p3                 p4       |
#  |                      br0      msg-sw-$$ (the switch)                   |
#  +------------------------------------------------------------------------+
#
# Host file (Open MPI syntax), site key 0600 in a scratch directory:
#   10.77.0.1:7420 slots=1 ... 10.77.0.4:7420 slots=1
#
# What must hold:
#   1. every msgd listens on its own address; the switch connects them all;
#   2. `msgrun -n 8 -r 3 ringcheck` from host 1 exits 0 and rank 0 prints
#      "ringcheck ok" (the ring's answer checked against its closed form, in
#      every rank); by the placement rule (host = (g*r+k) mod 4) all four
#      hosts run replicas, and every host's daemon delivered messages;
#   3. the same with --mode vote (n = 4, r = 3);
#   4. a job with a key the daemons do not know is refused (non-zero exit),
#      and the daemons keep serving: a further job succeeds;
#   5. cl_cut 4 makes host 4 unreachable from host 1, cl_heal 4 restores it
#      (the helper later partition tests rely on);
#   6. the daemons are still running after all jobs.
# On exit (any exit) our msgd are killed by pid and our namespaces deleted.
#
# Usage: netns.sh BINDIR RINGCHECK      (BINDIR holds msgd and msgrun)
# Not root / no `ip netns`: exit 77 (skip), but exit 1 if CI=true.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
. "$here/lib.sh"

[ $# -eq 2 ] || {
	echo "usage: $0 BINDIR RINGCHECK" >&2
	exit 2
}
bindir=$(cd "$1" && pwd)
ringcheck=$2
[ -x "$ringcheck" ] || {
	echo "netns.sh: $ringcheck is not executable" >&2
	exit 2
}
export CL_TIMEOUT=60

cl_require
cl_trap

# 1.
cl_up 4 "$bindir"
pass "4 hosts up, every msgd listening, all reachable from host 1"

# 2.
out=$(cl_msgrun 1 -n 8 -r 3 --stats "$ringcheck" 30 512 2>&1) || {
	rc=$?
	echo "$out" >&2
	fail "msgrun -n 8 -r 3 exited $rc"
}
echo "$out"
grep -q '^ringcheck ok n=8 ' <<<"$out" || fail "no 'ringcheck ok' from rank 0"
for h in 0 1 2 3; do
	delivered=$(sed -n "s/^msgrun: host $h: delivered \([0-9]*\) .*/\1/p" <<<"$out")
	[ -n "$delivered" ] || fail "no counters from host $h"
	[ "$delivered" -gt 0 ] || fail "host $h delivered nothing: not all hosts took part"
done
grep -q 'mismatches [1-9]' <<<"$out" && fail "replica copies disagreed"
pass "n=8 r=3 ring across 4 namespaces, answer checked, all hosts delivered"

# 3.
out=$(cl_msgrun 1 -n 4 -r 3 --mode vote "$ringcheck" 10 4096 2>&1) || {
	rc=$?
	echo "$out" >&2
	fail "msgrun --mode vote exited $rc"
}
grep -q '^ringcheck ok n=4 ' <<<"$out" || fail "vote mode: no 'ringcheck ok'"
pass "n=4 r=3 --mode vote"

# 4.
badkey=$CL_DIR/wrong.key
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$badkey")
if cl_exec 1 timeout -k 5 20 "$bindir/msgrun" --hostfile "$CL_HOSTFILE" \
	--key-file "$badkey" --job-dir "$CL_DIR/badjob" -n 4 -r 3 "$ringcheck" >"$CL_DIR/bad.out" 2>&1; then
	cat "$CL_DIR/bad.out" >&2
	fail "a job with a wrong site key was accepted"
fi
pass "wrong site key refused: $(head -n 1 "$CL_DIR/bad.out")"
out=$(cl_msgrun 2 -n 6 -r 2 "$ringcheck" 5 64 2>&1) || {
	rc=$?
	echo "$out" >&2
	fail "job after the refused one exited $rc"
}
grep -q '^ringcheck ok n=6 ' <<<"$out" || fail "no 'ringcheck ok' after the refused job"
pass "daemons keep serving (n=6 r=2 from host 2)"

# 5.
cl_cut 4
if cl_reach 1 4; then fail "host 4 still reachable with its link cut"; fi
cl_reach 1 3 || fail "cutting host 4 cut host 3 too"
cl_heal 4
for _ in 1 2 3 4 5 6 7 8 9 10; do
	cl_reach 1 4 && break
	sleep 0.3
done
cl_reach 1 4 || fail "host 4 unreachable after cl_heal"
pass "cl_cut/cl_heal isolate and restore one host"

# 6.
for h in 1 2 3 4; do
	cl_msgd_alive "$h" || fail "msgd on host $h is gone"
done
pass "all daemons still running"

ok=1
echo "PASS: netns cluster (4 hosts)"
