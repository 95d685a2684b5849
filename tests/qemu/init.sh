#!/bin/busybox sh
# /init of the msgmig test VM: load the module, run the tests, report,
# power off. Every line the host checks starts with "mmt:".
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
echo 5 > /proc/sys/kernel/printk

fails=0
result() { # name status
	if [ "$2" = 0 ]; then echo "mmt: PASS $1"; else echo "mmt: FAIL $1 (status $2)"; fails=$((fails + 1)); fi
}

echo "mmt: kernel $(uname -r), $(nproc) cpu(s); times below are TCG emulation: functional checks, not performance"
# Swap on zram, so that mmt-swap can push pages out before a save.
if [ -f /zram.ko ] && insmod /zsmalloc.ko && insmod /zram.ko num_devices=1 &&
	echo 128M > /sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null &&
	swapon /dev/zram0; then
	echo "mmt: swap on zram0"
else
	echo "mmt: no swap device (mmt-swap will fail)"
fi
ip link set lo up 2>/dev/null # msg jobs (mmt-job) run on virtual hosts on loopback
insmod /msgmig.ko
result insmod $?
if [ -c /dev/msgmig ]; then
	for t in $(cat /proc/cmdline | tr ' ' '\n' | sed -n 's/^mmt.tests=//p' | tr , ' '); do
		start=$(date +%s)
		/bin/mmt-"$t"
		st=$?
		echo "mmt: time $t $(( $(date +%s) - start ))s (TCG, not a performance figure)"
		result "$t" $st
	done
else
	result device 1
fi
rmmod msgmig
result rmmod $?
if dmesg | grep -E 'BUG:|Oops|WARNING:|Call Trace|general protection'; then
	result kernel-log 1
fi
[ "$fails" = 0 ] && echo "mmt: RESULT PASS" || echo "mmt: RESULT FAIL ($fails)"
sync
poweroff -f
