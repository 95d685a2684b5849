#!/bin/sh
# mmt-job (in the VM, msgmig.ko loaded): real msg jobs whose daemons capture
# through /dev/msgmig (msgd --ckpt-engine, DESIGN §7, docs/kmod.md).
#  move: msgrun --ckpt-engine=kmod, rank 1 moved from host 1 to host 2 while
#        it waits in msgrecv; the module's image is restored by msg-restore,
#        the process repeats its read and its receive.
#  copy: msgrun --ckpt-engine=auto (= kmod, the device is here), r = 2,
#        replica 1.1 killed: the coordinator regenerates it by copying 1.0
#        through the module while 1.0 goes on.
# Each asserts the checked answer (msgjob-ring: rank 1's digest of its heap,
# stack, .data/.bss and FPU state equals rank 0's) and, from the event log,
# that the capture was made by the module ("engine":"kmod","status":0) and
# restored. Times are TCG emulation: functional checks, not performance.
fail=0
bad() { echo "mmt-job: FAIL: $*"; fail=1; }
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
export TMPDIR=/tmp

# TCG runs the daemons 10-50 times slower than a real CPU: detection bounds
# that fit a real machine would see lost hosts everywhere.
slow="--hb-period 200 --hb-timeout 5000 --stall-min 10000"
# r = 1 ranks on two hosts talk over direct streams (docs/datapath.md §6); a
# process holding them is captured by libmsg itself (the user engine), so
# the module's cases run the ranks through msgd
direct="--no-direct"

run() { # name expected-answer msgrun-args...
	name=$1 want=$2
	shift 2
	echo "mmt-job: $name: msgrun $*"
	timeout 150 /bin/msgrun $slow "$@" >/tmp/job-$name.out 2>/tmp/job-$name.err
	st=$?
	sed "s/^/mmt-job: $name: out: /" /tmp/job-$name.out
	sed "s/^/mmt-job: $name: err: /" /tmp/job-$name.err
	grep -E '"migrate-|"regen-|"restore-|"fence|"member-|"mismatch' /tmp/job-$name.ev |
		sed "s/^/mmt-job: $name: ev: /"
	[ "$st" = 0 ] || bad "$name: msgrun status $st"
	grep -q "^$want " /tmp/job-$name.out || bad "$name: no '$want' answer"
	[ "$name" != fallback ] && grep -q '"engine":"user"' /tmp/job-$name.ev &&
		bad "$name: the user engine was used"
	grep -q '"event":"mismatch"' /tmp/job-$name.ev && bad "$name: replicas disagreed"
}

# move: 40 laps of 150 ms (6 s); 1.0 moved at 2 s
run move "jobring ok laps=40" --ckpt-engine=kmod $direct --virtual-hosts 3 -n 2 --timeout 140 \
	--inject 'migrate 1.0->2@2s' --events /tmp/job-move.ev /bin/msgjob-ring 40 150
grep -q '"event":"migrate-captured","group":1,"rep":0,"mode":"move","engine":"kmod","status":0' \
	/tmp/job-move.ev || bad "move: no kmod capture of 1.0"
grep -q '"host":2,"event":"migrate-restored","group":1,"rep":0' /tmp/job-move.ev ||
	bad "move: 1.0 not restored on host 2"

# copy: 1.1 killed at 2 s, regenerated from 1.0 through the module
run copy "jobring ok laps=40" --ckpt-engine=auto -r 2 --virtual-hosts 3 -n 2 --timeout 140 \
	--inject 'kill 1.1@2s' --events /tmp/job-copy.ev /bin/msgjob-ring 40 150
grep -q '"event":"migrate-captured","group":1,"rep":1,"mode":"copy","engine":"kmod","status":0' \
	/tmp/job-copy.ev || bad "copy: no kmod capture of 1.0 into slot 1"
grep -q '"event":"regen-copied","group":1,"rep":1' /tmp/job-copy.ev || bad "copy: no regen-copied"
grep -q '"event":"migrate-restored","group":1,"rep":1' /tmp/job-copy.ev ||
	bad "copy: the copy was not restored"

# fallback: rank 1 has ITIMER_VIRTUAL armed, which the module refuses (before
# it sends anything) and the user engine carries: auto falls back to the
# process's own capture on the same socket (and the restored process skips
# the "resumed" nudge the target daemon queued for a module image)
run fallback "jobring ok laps=40" --ckpt-engine=auto $direct --virtual-hosts 3 -n 2 --timeout 140 \
	--inject 'migrate 1.0->2@2s' --events /tmp/job-fallback.ev /bin/msgjob-ring 40 150 vtimer
grep -qE '"event":"migrate-captured","group":1,"rep":0,"mode":"move","engine":"kmod","status":-[0-9]+,"detail":"ITIMER_VIRTUAL' \
	/tmp/job-fallback.ev || bad "fallback: the module did not refuse 1.0 for its ITIMER_VIRTUAL"
grep -q '"event":"migrate-captured","group":1,"rep":0,"mode":"move","engine":"user","status":0' \
	/tmp/job-fallback.ev || bad "fallback: no user-engine capture after the refusal"
grep -q '"host":2,"event":"migrate-restored","group":1,"rep":0' /tmp/job-fallback.ev ||
	bad "fallback: 1.0 not restored on host 2"

[ "$fail" = 0 ] && echo "mmt-job: all passed"
exit $fail
