#!/usr/bin/env python3
"""Run an exemplar (under mpirun or msgrun) and check its answer.

The program prints a result line ending in "ok" or "FAIL" (the exemplars:
key=value fields). The test passes when every run exits 0 within the timeout, prints
"ok", gives the same result line each time (--repeat), and, with --ref,
agrees with the reference command's line on the --fields listed (or on
the whole line with --same).

usage: apptest.py [--timeout S] [--repeat K] [--ref "CMD"] [--fields a,b]
                  -- LAUNCHER... PROGRAM ARGS...
"""
import argparse
import shlex
import subprocess
import sys


def result_line(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: timed out after {timeout}s: {' '.join(cmd)}")
    lines = [l for l in p.stdout.splitlines() if l.split() and l.split()[-1] in ("ok", "FAIL")]
    if p.returncode != 0 or not lines:
        sys.stderr.write(p.stdout[-4000:] + p.stderr[-4000:])
        sys.exit(f"FAIL: exit {p.returncode}, {len(lines)} result lines: {' '.join(cmd)}")
    return lines[-1]


def fields(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--ref")
    ap.add_argument("--fields", default="")
    ap.add_argument("--same", action="store_true", help="whole line must equal the reference")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    runs = [result_line(cmd, a.timeout) for _ in range(a.repeat)]
    print("run:", runs[0])
    if runs[0].split()[-1] != "ok":
        sys.exit("FAIL: the program's own check failed")
    if any(r != runs[0] for r in runs):
        sys.exit("FAIL: runs differ:\n" + "\n".join(runs))
    if a.ref:
        ref = result_line(shlex.split(a.ref), a.timeout)
        print("ref:", ref)
        if a.same and runs[0] != ref:
            sys.exit("FAIL: the result line differs from the reference")
        got, want = fields(runs[0]), fields(ref)
        for f in filter(None, a.fields.split(",")):
            if got.get(f) != want.get(f):
                sys.exit(f"FAIL: {f}={got.get(f)} but the reference has {f}={want.get(f)}")
    print("PASS")


if __name__ == "__main__":
    main()
