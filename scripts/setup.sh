#!/usr/bin/env bash
# Installs everything msg needs on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are skipped by apt-get.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config git
  liburing-dev libsodium-dev libssl-dev libzstd-dev libxxhash-dev
  libfabric-dev libfabric-bin libhwloc-dev hwloc
  libgtest-dev googletest
  clang libclang-rt-14-dev llvm
  openmpi-bin libopenmpi-dev
  iproute2 procps psmisc util-linux
  qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static cpio
  python3 python3-pip python3-numpy python3-matplotlib
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# laspy cross-checks the LAS reader/generator (tests only).
if ! python3 -c 'import laspy' 2>/dev/null; then
  pip3 install -q laspy || pip3 install -q --break-system-packages laspy
fi
