#!/usr/bin/env bash
# bench/pingpong/hops.sh: where a cross-host 8-byte message spends its time on
# the daemon path (process -> msgd -> TCP -> msgd -> process), per hop, from
# scheduler and system-call trace points (perf record -a, root). The trace
# adds a few microseconds per event; compare hops, not totals with run.sh.
#
# Usage: bench/pingpong/hops.sh [BUILD_DIR]   (default: build)
# Env:   LAT_ITERS (2000), and whatever the job should see (MSG_SPIN_US=0,
#        MSG_URING_PLAIN=1 to compare with the spin or msgd's io_uring flags off).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
bin=$build/bin
command -v perf >/dev/null || { echo "hops.sh: no perf (linux-perf)" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/msg-hops.XXXXXX")
trap 'rm -rf -- "$out"' EXIT

echo "# hops: $(date -u '+%F %T UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"MSG_SPIN_US=${MSG_SPIN_US:-default} MSG_URING_PLAIN=${MSG_URING_PLAIN:-unset}"
ev=sched:sched_switch,sched:sched_waking
for s in writev recvmsg io_uring_enter; do
	ev=$ev,syscalls:sys_enter_$s,syscalls:sys_exit_$s
done
timeout -k 5 300 perf record -q -a -o "$out/p.data" -e "$ev" -- \
	"$bin/msgrun" -n 2 -r 1 --virtual-hosts 2 "$bin/pingpong_msg" "${LAT_ITERS:-2000}" 4 |
	grep '^pingpong '
perf script -i "$out/p.data" -F comm,pid,cpu,time,event,trace 2>/dev/null >"$out/p.txt"
python3 "$root/bench/pingpong/hops.py" "$out/p.txt"
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
