#!/usr/bin/env bash
# Installs what msg needs, builds it, and runs the main job on the embedded
# default: virtual hosts on this machine, a replicated exemplar (Dirichlet,
# 8 ranks x 3 replicas on 4 virtual hosts), with its checked answer and a
# short report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
bash scripts/build.sh build >/dev/null
bin=build/bin
app=$bin/dirichlet
[ -x "$app" ] || app=$bin/integration
echo "msgrun -n 8 -r 3 --virtual-hosts 4 $app"
exec "$bin/msgrun" -n 8 -r 3 --virtual-hosts 4 --stats "$app"
