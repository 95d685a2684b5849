#!/usr/bin/env bash
# Nightly-style sweep of the protocol simulator (docs/protocol-sim.md):
#   bench/sim/run.sh --seeds 1000000 [--start S] [--jobs J] [--build DIR] [msgsim options]
#   bench/sim/run.sh --seeds 1000000 --regen          # the regeneration scenario
#   bench/sim/run.sh --seeds 1000000 --migrations 2   # the migration scenario
#   bench/sim/run.sh --seeds 1000000 --r 3 --mode vote --corruptions 2   # corruption (I4)
# Splits the seed range into chunks run in parallel (one msgsim per core),
# lists every failing seed (msgsim --keep-going: no stopping, no shrinking),
# and prints the throughput. The build directory defaults to build/ at the
# top of the tree (a relative --build is taken from the current directory);
# msgsim is built there first if it is missing. Exit status 1 if any seed
# failed; reproduce one with: build/bin/msgsim --seed S [same options] (it
# shrinks and replays).
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
case $build in /*) ;; *) build=$PWD/$build ;; esac
sim=$build/bin/msgsim
if [ ! -x "$sim" ] && [ -f "$build/CMakeCache.txt" ]; then
	cmake --build "$build" --target msgsim >&2
fi
if [ ! -x "$sim" ]; then
	echo "run.sh: $sim not built (scripts/build.sh $build, or cmake --build $build --target msgsim)" >&2
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
# a chunk whose msgsim died (no summary line) counts as a failure too
for f in "$out"/*.log; do
	if ! grep -q 'seeds from' "$f"; then
		echo "chunk from seed $(basename "$f" .log): msgsim ended without a summary:" >&2
		tail -3 "$f" >&2
		fails=$((fails + 1))
	fi
done
cat "$out"/*.log | grep '^seed ' | sort -n -k2 || true
awk -v n="$seeds" -v s="$start" -v f="$fails" -v a="$t0" -v b="$t1" -v j="$jobs" -v o="${extra[*]-}" \
	'BEGIN { printf "msgsim sweep%s: %d seeds from %d, %d failing, %.1f s, %.0f seeds/s on %d jobs\n", o == "" ? "" : " (" o ")", n, s, f, b - a, n / (b - a), j }'
[ "$fails" -eq 0 ]
