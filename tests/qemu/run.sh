#!/usr/bin/env bash
# run.sh --ko KO --bindir DIR [--kernel VMLINUZ] [--tests a,b,c] [--extra BIN]...
# Boots Debian's kernel under qemu-system-x86_64 (TCG; KVM hangs on these
# machines) with an initramfs holding msgmig.ko and the static test
# programs, and fails on any test failure, a timeout, or BUG/Oops/WARNING
# in the kernel log. Exit 77 = prerequisites missing (a skip), but when
# CI=true a missing prerequisite is a failure. Timings printed are TCG
# emulation: functional checks, not performance figures.
set -uo pipefail

ko= bindir= kernel= tests=${MMT_TESTS:-basic,errors,damage,fuzz,saverestore,swap} extra=()
timeout_s=${MMT_TIMEOUT:-420}
while [ $# -gt 0 ]; do
	case $1 in
	--ko) ko=$2; shift 2 ;;
	--bindir) bindir=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--krelease) krel=$2; shift 2 ;;
	--tests) tests=$2; shift 2 ;;
	--extra) [ -n "$2" ] && extra+=("$2"); shift 2 ;;
	*) echo "run.sh: unknown argument $1"; exit 2 ;;
	esac
done

missing() {
	echo "qemu test: MISSING PREREQUISITE: $*"
	if [ "${CI:-}" = true ]; then
		echo "qemu test: CI=true, so this is a FAILURE, not a skip"
		exit 1
	fi
	exit 77
}

[ -z "$kernel" ] && [ -n "${krel:-}" ] && kernel=/boot/vmlinuz-$krel
command -v qemu-system-x86_64 >/dev/null || missing "qemu-system-x86_64 (apt-get install qemu-system-x86)"
[ -n "$ko" ] && [ -f "$ko" ] || missing "msgmig.ko not built (needs linux-headers-amd64; see kmod/CMakeLists.txt)"
[ -n "$kernel" ] && [ -r "$kernel" ] || missing "kernel image ${kernel:-/boot/vmlinuz-<headers release>} (apt-get install linux-image-amd64)"
[ -x /bin/busybox ] || missing "static busybox (apt-get install busybox-static)"
command -v cpio >/dev/null || missing "cpio"

work=$(mktemp -d "${TMPDIR:-/tmp}/msgmig-qemu.XXXXXX")
trap 'rm -rf "$work"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
# zram (swap for mmt-swap) comes from the same kernel's modules, if installed.
MODDIR=/lib/modules/${krel:-$(basename "$kernel" | sed 's/^vmlinuz-//')} \
	"$here/mkinitramfs.sh" "$work/initramfs.cpio.gz" "$ko" "$bindir" "${extra[@]}" || exit 1

log=${MMT_LOG:-$work/console.log}
echo "qemu test: booting $kernel (TCG, timeout ${timeout_s}s); log: $log"
start=$(date +%s)
# panic_on_warn/oops=panic: a kernel WARNING or Oops ends the run at once.
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 \
	-machine pc -accel tcg -cpu max -smp 2 -m 1024 \
	-nodefaults -display none -no-reboot -serial stdio -monitor none \
	-kernel "$kernel" -initrd "$work/initramfs.cpio.gz" \
	-append "console=ttyS0 loglevel=5 panic=-1 oops=panic panic_on_warn=1 mmt.tests=$tests" \
	</dev/null 2>&1 | tr -d "\r" | tee "$log"
qst=${PIPESTATUS[0]}
took=$(( $(date +%s) - start ))
echo "qemu test: VM ran ${took}s (TCG emulation: a functional check, not performance)"

fail=0
if [ "$qst" = 124 ] || [ "$qst" = 137 ]; then
	echo "qemu test: FAIL: timeout after ${timeout_s}s"; fail=1
elif [ "$qst" != 0 ]; then
	echo "qemu test: FAIL: qemu exited with $qst"; fail=1
fi
if grep -qE 'BUG:|Oops|WARNING:|Kernel panic|Call Trace|general protection fault' "$log"; then
	echo "qemu test: FAIL: kernel log shows BUG/Oops/WARNING/panic"; fail=1
fi
grep -q '^mmt: FAIL' "$log" && { echo "qemu test: FAIL: a test failed"; fail=1; }
grep -q '^mmt: RESULT PASS' "$log" || { echo "qemu test: FAIL: no 'mmt: RESULT PASS' line"; fail=1; }
for t in ${tests//,/ }; do
	grep -q "^mmt: PASS $t\$" "$log" || { echo "qemu test: FAIL: $t did not pass"; fail=1; }
done
[ "$fail" = 0 ] && echo "qemu test: PASS"
exit $fail
