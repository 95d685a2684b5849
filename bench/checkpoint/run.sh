#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/checkpoint/run.sh [BUILD_DIR]: capture/restore figures and the live
# snapshot's cost to the source.  Env: SIZES, REPS, LIVE_MB, LIVE_DIRTY_PCT.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
ninja -C "$build" ckpt_bench ckpt_bench_subject ckpt_bench_live msg-restore >/dev/null
echo "== capture / restore (ms, medians of ${REPS:-3}) =="
"$build/bin/ckpt_bench" "$build/bin"
echo "== live snapshot =="
"$build/bin/ckpt_bench_live" "${LIVE_MB:-114}" "${LIVE_DIRTY_PCT:-10}"
"$build/bin/ckpt_bench_live" "${LIVE_MB:-114}" 100
echo "== live snapshot, source CPU time (robust to machine load) =="
LIVE_CPU=1 "$build/bin/ckpt_bench_live" "${LIVE_MB:-114}" "${LIVE_DIRTY_PCT:-10}"
