#!/usr/bin/env python3
"""moves.py BIN FOOTPRINT_MB SWEEPS MOVES TAG: many moves of rank 1 of a
Dirichlet job (r=1, n=4, 9 hosts), one JSON line: durations
(migrate-save -> migrate-restored, as bench.py measures them), their median,
minimum, the capture+stream median and how many restores took a spare."""
import os, sys, time, json, statistics
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "migration"))
import migjob
bindir, fp, sweeps, nmoves, tag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
migjob.BIN = bindir
hosts = [4, 5, 6, 7, 8]
job = migjob.Job(4, 1, 9, [os.path.join(bindir, "dirichlet"), "--footprint-mb", str(fp), "--tol", "1e-12",
                           "--max-iters", str(sweeps)], bindir=bindir, timeout=600)
l0 = os.getloadavg()[0]
try:
    job.wait_up(120)
    time.sleep(0.5)
    done = 0
    for i in range(nmoves):
        if not job.running():
            break
        job.migrate(1, 0, hosts[i % len(hosts)])
        job.wait_for(lambda: job.count("migrate-restored", group=1) >= i + 1, 120, "move")
        done += 1
        time.sleep(0.15)
    rc = job.finish(600)
    ev = job.events()
    d, cap = [], []
    for s in [e for e in ev if e.get("event") == "migrate-save"]:
        t0 = s["mono_ns"]
        rest = [e["mono_ns"] for e in ev if e.get("event") == "migrate-restored" and e["mono_ns"] >= t0]
        mv = [e["mono_ns"] for e in ev if e.get("event") == "migrate-moved" and e["mono_ns"] >= t0]
        d.append((min(rest) - t0) / 1e6)
        cap.append((min(mv) - t0) / 1e6)
    spares = [e.get("spare") for e in ev if e.get("event") == "restore-start"]
    ok = rc == 0 and (migjob.result_line(job.stdout()) or "").endswith(" ok")
    print(json.dumps({"tag": tag, "fp": fp, "ok": ok, "load": [l0, os.getloadavg()[0]], "n": len(d),
                      "median": statistics.median(d), "min": min(d), "cap_median": statistics.median(cap),
                      "spares": sum(1 for x in spares if x), "durations": [round(x, 1) for x in d]}), flush=True)
finally:
    job.cleanup()
