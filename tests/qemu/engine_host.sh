#!/usr/bin/env bash
# engine_host.sh BINDIR RING [--no-migrate]
# msgd/msgrun --ckpt-engine on a host WITHOUT /dev/msgmig (the build and CI
# machines cannot load modules; the kmod engine itself is tested in the VM,
# tests/qemu/job.sh):
#  - --ckpt-engine=kmod is an error at startup that names /dev/msgmig, from
#    msgd and from msgrun (which starts msgd), quickly, not a hang;
#  - a bad engine name is refused;
#  - --ckpt-engine=auto falls back to the user engine: a migrated ring still
#    gives the checked answer and the event log says "engine":"user".
# RING is tests/progs/t_ring. Every command runs under timeout.
# --no-migrate (sanitizer builds) leaves out the migration.
set -uo pipefail
bin=$1 ring=$2 migrate=${3:-yes}
fail=0
bad() { echo "engine_host: FAIL: $*"; fail=1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/msg-engine.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [ -e /dev/msgmig ]; then
	echo "engine_host: /dev/msgmig exists here: the missing-device checks do not apply"
	exit 77
fi
head -c 32 /dev/urandom > "$work/site.key" && chmod 600 "$work/site.key"

# 1. msgd alone
timeout 10 "$bin/msgd" --ckpt-engine=kmod --key-file "$work/site.key" \
	--listen 127.0.0.1:0 --once >"$work/d.out" 2>"$work/d.err"
st=$?
cat "$work/d.err"
[ "$st" = 1 ] || bad "msgd --ckpt-engine=kmod without the device: status $st, want 1"
grep -q -- '--ckpt-engine=kmod: cannot open /dev/msgmig' "$work/d.err" ||
	bad "msgd does not name /dev/msgmig"

# 2. msgrun passes it through; the job does not start
timeout 20 "$bin/msgrun" --ckpt-engine=kmod -n 2 "$ring" 10 >"$work/r.out" 2>"$work/r.err"
st=$?
cat "$work/r.err"
[ "$st" != 0 ] && [ "$st" != 124 ] || bad "msgrun --ckpt-engine=kmod without the device: status $st"
grep -q 'cannot open /dev/msgmig' "$work/r.err" || bad "msgrun's error does not name /dev/msgmig"
grep -q 'ring ok' "$work/r.out" && bad "the job ran anyway"

# 3. a bad name
timeout 10 "$bin/msgrun" --ckpt-engine=fast -n 2 "$ring" 10 >/dev/null 2>"$work/b.err"
st=$?
[ "$st" = 2 ] && grep -q "auto, user or kmod" "$work/b.err" || bad "--ckpt-engine=fast: status $st"

if [ "$migrate" = --no-migrate ]; then
	[ "$fail" = 0 ] && echo "engine_host: PASS (startup checks; no migration in this build)"
	exit $fail
fi

# 4. auto without the device = user: a real migration of rank 1 to host 2.
# The ring must outlast the move at 0.3 s: 6000 laps ended in 0.28 s once
# same-host messages got faster, and the move never happened.
laps=60000
timeout 120 "$bin/msgrun" --ckpt-engine=auto --virtual-hosts 3 -n 2 \
	--inject 'migrate 1.0->2@0.3s' --events "$work/ev.jsonl" "$ring" $laps \
	>"$work/a.out" 2>"$work/a.err"
st=$?
cat "$work/a.out" "$work/a.err"
grep -E '"migrate-|"engine"' "$work/ev.jsonl"
[ "$st" = 0 ] || bad "auto job: status $st"
grep -qx "ring ok n=2 laps=$laps token=$laps" "$work/a.out" || bad "auto job: wrong or no answer"
grep -q '"event":"migrate-captured","group":1,"rep":0,"mode":"move","engine":"user","status":0' \
	"$work/ev.jsonl" || bad "no user-engine capture of 1.0 in the events"
grep -q '"event":"migrate-restored","group":1,"rep":0' "$work/ev.jsonl" ||
	bad "1.0 was not restored"
grep -q '"engine":"kmod"' "$work/ev.jsonl" && bad "kmod engine used without the device"

[ "$fail" = 0 ] && echo "engine_host: PASS"
exit $fail
