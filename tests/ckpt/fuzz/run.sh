#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Short fuzzing run of the image parser: builds ckpt_fuzz_image with clang
# (MSG_FUZZ=ON, ASan+UBSan), adds real images to the seed corpus, fuzzes.
#   tests/ckpt/fuzz/run.sh [seconds]   (default 60)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
secs=${1:-60}
build=$root/build-ckpt-fuzz
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DMSG_FUZZ=ON >/dev/null
ninja -C "$build" ckpt_fuzz_image ckpt_t_globals >/dev/null
work=$(mktemp -d /tmp/ckpt-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$here"/corpus/* "$work/"
# Real images (plain and zstd) from a small subject.
for z in "" 1; do
  img=$work/real${z:+-zstd}
  ( cd "$work" && CKPT_TEST_COMPRESS=$z exec "$build/bin/ckpt_t_globals" capture "$img" ) 2>"$work/log" &
  pid=$!
  for _ in $(seq 100); do grep -q CAPTURED "$work/log" && break; sleep 0.1; done
  kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
  [ -n "$z" ] || unset CKPT_TEST_COMPRESS
done
"$build/bin/ckpt_fuzz_image" -max_total_time="$secs" -max_len=1000000 -timeout=10 "$work"
