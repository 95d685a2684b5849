#!/bin/sh
# Build the libFuzzer targets with clang (ASan+UBSan, MSG_FUZZ=ON) in their
# own build directory and run each for SECONDS (default 30), starting from
# the committed seed corpus (one frame of every type). Exit status is
# non-zero on any crash, leak, sanitizer report or build failure; the
# reproducer is left in $BUILD/crashes.
#   tests/fuzz/run.sh [SECONDS]
# Environment: BUILD (default build-fuzz at the repository root), JOBS.
set -eu
secs=${1:-30}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build-fuzz}
jobs=${JOBS:-$(nproc)}

if ! command -v clang >/dev/null 2>&1; then
	echo "run.sh: clang is required (apt-get install clang)" >&2
	exit 2
fi
mkdir -p "$build"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DMSG_FUZZ=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/cmake.log" 2>&1 ||
	{ cat "$build/cmake.log" >&2; exit 2; }
ninja -C "$build" fuzz_frame fuzz_conn >"$build/ninja.log" 2>&1 ||
	{ grep -E "error|FAILED|undefined" "$build/ninja.log" | head -40 >&2; exit 2; }

mkdir -p "$build/crashes"
status=0
for t in frame conn; do
	# a scratch corpus: new inputs found here are not written into the
	# committed seeds
	work="$build/corpus-$t"
	mkdir -p "$work"
	echo "run.sh: fuzz_$t for ${secs}s"
	if ! "$build/bin/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -artifact_prefix="$build/crashes/$t-" \
		"$work" "$here/corpus/$t" 2>"$build/fuzz_$t.log"; then
		echo "run.sh: fuzz_$t FAILED; log $build/fuzz_$t.log, reproducer in $build/crashes" >&2
		tail -40 "$build/fuzz_$t.log" >&2
		status=1
	else
		grep -E "stat::number_of_executed_units|cov:" "$build/fuzz_$t.log" | tail -2
	fi
done
exit $status
