#!/usr/bin/env bash
# Nightly-style sweep of the protocol simulator (docs/protocol-sim.md):
#   bench/sim/run.sh --seeds 1000000 [--start S] [--jobs J] [--build DIR] [msgsim options]
# Splits the seed range into chunks run in parallel (one msgsim per core),
# lists every failing seed (msgsim --keep-going: no stopping, no shrinking),
# and prints the throughput. Exit status 1 if any seed failed; reproduce one
# with: build/bin/msgsim --seed S [same options]  (it shrinks and replays).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seeds=1000000 start=1 jobs=$(nproc) build=$root/build chunk=10000
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--seeds) seeds=$2; shift 2 ;;
	--start) start=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--chunk) chunk=$2; shift 2 ;;
	*) extra+=("$1"); shift ;;
	esac
done
sim=$build/bin/msgsim
if [ ! -x "$sim" ]; then
	echo "run.sh: $sim not built (cmake --build $build --target msgsim)" >&2
	exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
t0=$(date +%s.%N)
# one line per chunk: "<start> <count>"
for ((s = start; s < start + seeds; s += chunk)); do
	n=$(( start + seeds - s < chunk ? start + seeds - s : chunk ))
	echo "$s $n"
done | SIM=$sim OUT=$out SIM_EXTRA="${extra[*]-}" xargs -P "$jobs" -L 1 bash -c \
	'"$SIM" --seeds "$2" --start "$1" --keep-going $SIM_EXTRA > "$OUT/$1.log" 2>&1 || true' _
t1=$(date +%s.%N)
fails=$(cat "$out"/*.log | grep -c '^seed ' || true)
cat "$out"/*.log | grep '^seed ' | sort -n -k2 || true
printf 'msgsim sweep: %d seeds from %d, %d failing, %.1f s, %.0f seeds/s on %d jobs\n' \
	"$seeds" "$start" "$fails" "$(echo "$t1 - $t0" | bc)" "$(echo "$seeds / ($t1 - $t0)" | bc -l)" "$jobs"
[ "$fails" -eq 0 ]
