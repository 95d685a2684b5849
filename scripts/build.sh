#!/usr/bin/env bash
# Configures and builds msg. Usage: scripts/build.sh [build-dir] [extra cmake args]
#   scripts/build.sh                       # build/ (RelWithDebInfo)
#   scripts/build.sh build-asan -DMSG_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
ninja -C "$dir"
