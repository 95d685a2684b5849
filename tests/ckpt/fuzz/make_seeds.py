#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes small valid images (docs/image-format.md) as fuzz seeds: every
section type, a PAGES run, END; one with a zstd frame if python has zstd."""
import os
import struct
import sys

def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF

PATH_MAX = 512

def path(p):
    b = p.encode()
    return b + b"\0" * (PATH_MAX - len(b))

class Img:
    def __init__(self, flags=0):
        self.out = bytearray()
        self.seq = 0
        h = b"MSGCKPT\0" + struct.pack("<IIIIIIQQ12s", 1, 64, flags, 4096, 62, 0, 0, 1, b"")
        self.out += h + struct.pack("<I", crc32c(h))

    def sect(self, typ, payload, flags=0, raw=None):
        raw = len(payload) if raw is None else raw
        h = struct.pack("<IIIIQQI", 0x54434553, typ, flags, self.seq, len(payload), raw, 0)
        self.out += h + struct.pack("<I", crc32c(h)) + payload + struct.pack("<I", crc32c(payload))
        self.seq += 1

def build(npages=1, precopy=False):
    im = Img(4 if precopy else 0)
    exe = "/bin/true"
    im.sect(1, struct.pack("<QQIIII", 100, 0, 1, 1, len(exe), 0) + path(exe))
    im.sect(2, bytes(320))
    auxv = struct.pack("<QQ", 0, 0) + bytes(8 * 126)
    mm = struct.pack("<11Q", *([0x400000] * 11)) + auxv + struct.pack("<IIIIQQQQ", 2, 0, 0o22, 0, 0, 0, 0, 0)
    im.sect(3, mm + path("/"))
    vma = struct.pack("<QQQIIiI", 0x10000, 0x10000 + 4096 * npages, 0, 3, 1, -1, 0)
    if precopy:
        im.sect(10, vma)
        im.sect(11, struct.pack("<QQ", 0x10000, 1) + bytes(range(256)) * 16)
        im.sect(3, mm + path("/"))
        vma = struct.pack("<QQQIIiI", 0x10000, 0x10000 + 4096 * npages, 0, 3, 1 | 0x200, -1, 0)
    im.sect(4, vma)
    im.sect(5, b"")
    im.sect(6, bytes(64 * 32 + 40 + 96))
    regs = [0] * 27
    regs[16] = 0x10000  # rip
    regs[19] = 0x10800  # rsp
    th = struct.pack("<27Q", *regs) + struct.pack("<QIIQIIQ", 0, 0, 0, 0, 576, 1, 1)
    im.sect(7, th + bytes(576))
    im.sect(8, b"runtime-state")
    im.sect(9, struct.pack("<QQ", 0x10000, npages) + bytes(range(256)) * 16 * npages)
    end_at = len(im.out)
    im.sect(15, struct.pack("<QQQ", im.seq, npages + (1 if precopy else 0), end_at))
    return bytes(im.out)

def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
    os.makedirs(d, exist_ok=True)
    for n in (1, 3):
        with open(os.path.join(d, "seed-%dpage" % n), "wb") as f:
            f.write(build(n))
    with open(os.path.join(d, "seed-precopy"), "wb") as f:
        f.write(build(2, precopy=True))

if __name__ == "__main__":
    main()
