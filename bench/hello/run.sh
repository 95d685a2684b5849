#!/usr/bin/env bash
# bench/hello/run.sh: wall time of a 64-rank hello world, start to end,
# msgrun against mpirun on this machine, interleaved REPS times:
#
#   msg r=1   msgrun -n 64 -r 1 hello_msg             (2 virtual hosts)
#   mpi       mpirun -np 64 --oversubscribe hello_mpi
#   msg r=3   msgrun -n 64 -r 3 hello_msg             (3 virtual hosts, 192 processes)
#
# Every run must print 64 distinct "hello from rank i of 64" lines (once per
# rank, also with r=3) or it counts as failed. Prints each run, then medians
# and the ratio msg/mpirun (goal: r=1 no slower than mpirun, ratio <= 1).
#
# Usage: bench/hello/run.sh [BUILD_DIR]       (default: build)
# Env:   REPS (5), NP (64), RUN_TIMEOUT (300 s)
# Exit:  0 when every run finished with the right output, 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
bin=$build/bin
reps=${REPS:-5}
np=${NP:-64}
tmo=${RUN_TIMEOUT:-300}

for f in msgrun msgd hello_msg hello_mpi; do
	if [ ! -x "$bin/$f" ]; then
		echo "run.sh: $bin/$f missing (build: cmake -S $root -B $build -G Ninja &&" \
			"ninja -C $build msgrun msgd hello_msg hello_mpi)" >&2
		exit 1
	fi
done
command -v mpirun >/dev/null || {
	echo "run.sh: no mpirun (scripts/setup.sh installs openmpi-bin)" >&2
	exit 1
}

out=$(mktemp -d "${TMPDIR:-/tmp}/msg-hello.XXXXXX")
trap 'rm -rf -- "$out"' EXIT

declare -A cmd
cmd[msg_r1]="$bin/msgrun -n $np -r 1 $bin/hello_msg"
cmd[mpi]="mpirun --allow-run-as-root --oversubscribe -np $np $bin/hello_mpi"
cmd[msg_r3]="$bin/msgrun -n $np -r 3 $bin/hello_msg"
order=(msg_r1 mpi msg_r3)

echo "# hello: $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), reps=$reps"
for k in "${order[@]}"; do
	echo "#   $k: ${cmd[$k]}"
done

failed=0
for ((i = 1; i <= reps; i++)); do
	for k in "${order[@]}"; do
		t0=$(date +%s.%N)
		rc=0
		# shellcheck disable=SC2086  # the command lines are word lists
		timeout -k 5 "$tmo" ${cmd[$k]} </dev/null >"$out/out" 2>"$out/err" || rc=$?
		t1=$(date +%s.%N)
		wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		lines=$(grep -c "^hello from rank [0-9]* of $np\$" "$out/out" || true)
		distinct=$(grep "^hello from rank [0-9]* of $np\$" "$out/out" | sort -u | wc -l)
		if [ "$rc" -eq 0 ] && [ "$lines" -eq "$np" ] && [ "$distinct" -eq "$np" ]; then
			echo "$wall" >>"$out/$k"
			printf '#   rep %d %-7s %7ss\n' "$i" "$k" "$wall"
		else
			printf '#   rep %d %-7s FAILED: exit %s, %s lines (%s distinct) after %ss; stderr:\n' \
				"$i" "$k" "$rc" "$lines" "$distinct" "$wall" >&2
			tail -n 5 "$out/err" | sed 's/^/#     /' >&2
			failed=1
		fi
	done
done

# stats FILE: median min max
stats() {
	[ -s "$1" ] || {
		echo "nan nan nan"
		return
	}
	sort -g "$1" | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f %.3f %.3f\n", m, v[1], v[NR] }'
}

read -r mpi_med _ _ <<<"$(stats "$out/mpi")"
echo
printf '%-34s | %8s %8s %8s | %s\n' "$np ranks, hello world" "median" "min" "max" "ratio to mpirun (median)"
printf -- '-----------------------------------+----------------------------+-------------------------\n'
for k in "${order[@]}"; do
	read -r med lo hi <<<"$(stats "$out/$k")"
	case $k in
	msg_r1) name="msgrun -n $np -r 1" ;;
	mpi) name="mpirun -np $np --oversubscribe" ;;
	msg_r3) name="msgrun -n $np -r 3 ($((np * 3)) procs)" ;;
	esac
	r=$(awk -v a="$med" -v b="$mpi_med" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "nan"; else printf "%.2f", a / b }')
	printf '%-34s | %7ss %7ss %7ss | %sx\n' "$name" "$med" "$lo" "$hi" "$r"
done
echo "# wall seconds, start of the launcher to its exit; medians of $reps."
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v c="$(nproc)" 'BEGIN { exit !(l > c) }'; then
	echo "# WARNING: the 1-minute load exceeds the $(nproc) cores: other work shared the" \
		"CPUs, so these figures understate both sides and their ratios are noisy."
fi
exit "$failed"
