#!/usr/bin/env bash
# Installs what msg needs, builds it, and runs the main job on the embedded
# default: virtual hosts on this machine, the Dirichlet exemplar with every
# rank replicated three times, a replica killed and then a whole host lost
# while it runs; failures are detected, fenced and repaired (a live copy of
# a healthy replica on another host), and the checked answer must equal an
# unreplicated run's. Ends with the job's report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
bash scripts/build.sh build >/dev/null
bin=build/bin
app=("$bin/dirichlet" --nx 64 --tol 1e-6)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== reference: msgrun -n 8 -r 1 ${app[*]}"
"$bin/msgrun" -n 8 -r 1 "${app[@]}" | tee "$out/ref"
echo
echo "== replicated, with faults: msgrun -n 8 -r 3 --virtual-hosts 4 --inject 'kill 3.1@1s; kill-host 2@2s'"
"$bin/msgrun" -n 8 -r 3 --virtual-hosts 4 --report --events "$out/events.jsonl" \
	--inject 'kill 3.1@1s; kill-host 2@2s' "${app[@]}" | tee "$out/run"
echo
ref=$(grep -o 'checksum=[0-9a-f]*' "$out/ref")
got=$(grep -o 'checksum=[0-9a-f]*' "$out/run")
echo "fenced:      $(grep -c '"event":"fence"' "$out/events.jsonl")"
echo "regenerated: $(grep -c '"event":"member-verified"' "$out/events.jsonl") verified copies (counted once per daemon that saw them)"
if [ "$ref" = "$got" ]; then
	echo "answer:      $got, the same as without replication and faults"
else
	echo "answer:      $got differs from the reference $ref" >&2
	exit 1
fi
