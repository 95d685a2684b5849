#!/usr/bin/env bash
# mkinitramfs.sh OUT.cpio.gz KO BINDIR [EXTRA_BIN...]   (env: MODDIR, BUSYBOX)
# A minimal initramfs: static busybox, msgmig.ko, the static test programs
# (every mmt-* and msgmig-* in BINDIR), EXTRA_BIN (a dynamic one comes with
# the shared libraries ldd names, at the same paths: msgd, msgrun, a msg
# program for the job test), job.sh as mmt-job, and init.sh as /init.
set -euo pipefail
out=$1 ko=$2 bindir=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

[ -x "$busybox" ] || { echo "mkinitramfs: no static busybox at $busybox (apt-get install busybox-static)"; exit 1; }
# ldd fails on a static binary: look at its words, not its status.
is_static() { case $(ldd "$1" 2>&1 || true) in *"not a dynamic"*|*"statically linked"*) return 0 ;; esac; return 1; }
is_static "$busybox" || { echo "mkinitramfs: $busybox is not static"; exit 1; }

root=$(mktemp -d "${TMPDIR:-/tmp}/msgmig-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,tests,etc}
cp "$busybox" "$root/bin/busybox"
cp "$ko" "$root/msgmig.ko"
cp "$here/init.sh" "$root/init"
chmod 755 "$root/init"
for f in "$bindir"/mmt-* "$bindir"/msgmig-*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	if ! is_static "$f"; then
		echo "mkinitramfs: $f is not static; skipped" >&2
		continue
	fi
	cp "$f" "$root/bin/"
done
# Extras; a dynamic one with its libraries (and the loader) at their paths.
for f in "$@"; do
	[ -f "$f" ] && [ -x "$f" ] || { echo "mkinitramfs: no program $f" >&2; exit 1; }
	cp "$f" "$root/bin/"
	is_static "$f" && continue
	for lib in $(ldd "$f" | grep -oE '/[^ ]+\.so[^ ]*'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
cp "$here/job.sh" "$root/bin/mmt-job"
chmod 755 "$root/bin/mmt-job"
# zram and its allocator, for a swap device inside the VM (mmt-swap).
for m in kernel/mm/zsmalloc.ko kernel/drivers/block/zram/zram.ko; do
	[ -n "${MODDIR:-}" ] && [ -f "$MODDIR/$m" ] && cp "$MODDIR/$m" "$root/"
done
# A second user for the permission tests.
printf 'root:x:0:0::/:/bin/sh\nmmt:x:1000:1000::/tmp:/bin/sh\n' > "$root/etc/passwd"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out"
