#!/usr/bin/env python3
"""Fault campaign: N runs of the three exemplars under faults drawn from a
seed, each checked against the sequential reference; pass/fail counts.

  campaign.py [--seed S] [--runs N] [--bin DIR] [--out results.json] [-j K]

Every run: one exemplar (integration, dirichlet or lidar; drawn), n = 4,
r = 3 on 6 virtual hosts, comparison mode drawn (vote when a corruption is
drawn: masking needs a majority), 1-4 faults at times drawn within the run:
  kill G.K        a replica crashes
  stall G.K       a replica stops progressing (inside libmsg)
  corrupt G.K     a replica's next message has a bit flipped
  kill-host H     a host dies with every process on it
  cut H [MS]      a partition: host H is cut off from its peers, for good or
                  healing after MS ms (its processes are fenced by the
                  majority's side, and by its own daemon when its lease ends)
Overlapping faults are drawn on purpose (several within 100 ms, and faults
in one group at once). The draw stays inside the fault model the runtime
promises to mask: at most r-1 = 2 replicas of a group faulty at once (crashes,
stalls, hosts), or one corrupt replica and no other fault in that group (a
vote needs two good copies against one bad), at most 2 hosts lost or cut off of 6 (a
majority must remain: DESIGN rule 3; lost hosts are not replaced, add-host is
not used).

A run passes when msgrun exits 0 and the result line equals the reference on
the checked fields. Each run's draw is printed as a msgrun --inject schedule:
a failed run is reproduced with the same command."""
import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "migration"))
import migjob  # noqa: E402

APPS = ["integration", "dirichlet", "lidar"]
N, R, M = 4, 3, 6


def draw(rng):
    app = rng.choice(APPS)
    nf = rng.choice([1, 1, 2, 2, 3, 4])
    faults = []
    hosts_lost = set()
    faulty = {g: set() for g in range(N)}   # replicas made faulty, per group
    corrupt = set()
    t = rng.uniform(0.3, 1.5)
    for i in range(nf):
        # overlapping: often the next fault within 100 ms of the last
        if i and rng.random() < 0.5:
            t += rng.uniform(0.0, 0.1)
        elif i:
            t += rng.uniform(0.3, 1.5)
        kind = rng.choice(["kill", "kill", "stall", "corrupt", "kill-host", "cut"])
        if kind in ("kill-host", "cut"):
            free = [h for h in range(M) if h not in hosts_lost]
            # a host holds replica k of group g at (g*r + k) mod m first; the
            # budget check uses the placement (regenerated copies move later)
            h = rng.choice(free)
            hit = [(g, k) for g in range(N) for k in range(R) if (g * R + k) % M == h]
            if len(hosts_lost) >= 2 or any(len(faulty[g] | {k}) > (1 if g in corrupt else R - 1)
                                           for g, k in hit):
                kind = "kill"
            else:
                hosts_lost.add(h)
                for g, k in hit:
                    faulty[g].add(k)
                if kind == "cut" and rng.random() < 0.5:
                    faults.append((kind, "%d %d" % (h, rng.randint(300, 1500)), t))
                else:
                    faults.append((kind, str(h), t))
                continue
        g = rng.randrange(N)
        k = rng.randrange(R)
        # r = 3 masks two crashes of a group, or one arbitrary fault: a
        # corrupt replica beside a dead one leaves one good copy against one
        # bad, which no vote can tell apart (DESIGN §5 rule 7)
        budget = 1 if (kind == "corrupt" or g in corrupt) else R - 1
        if len(faulty[g] | {k}) > budget or (kind == "corrupt" and g in corrupt):
            continue
        if (g * R + k) % M in hosts_lost:
            continue
        faulty[g].add(k)
        if kind == "corrupt":
            corrupt.add(g)
        faults.append((kind, "%d.%d" % (g, k), t))
    mode = "vote" if corrupt or rng.random() < 0.3 else "first"
    sched = "; ".join("%s %s@%dms" % (k, tg, int(tm * 1000)) for k, tg, tm in faults)
    return app, mode, faults, sched


def one(i, seed, a):
    rng = random.Random("%d/%d" % (seed, i))
    app, mode, faults, sched = draw(rng)
    # integration is short (~1-2 s at "test" size): the long size keeps it
    # running while the faults are drawn (up to ~5 s)
    prog, ref_cmd, names = migjob.app_case(app, N, a.bin, a.data,
                                           "long" if app == "integration" else a.size)
    rec = {"run": i, "app": app, "mode": mode, "inject": sched, "faults": len(faults)}
    if not faults:
        sched = None
    extra = ["--stall-min", str(a.stall_min)]
    if a.hb_timeout:
        extra += ["--hb-timeout", str(a.hb_timeout)]
    job = migjob.Job(N, R, M, prog, bindir=a.bin, mode=mode, inject=sched, timeout=a.timeout,
                     extra=extra)
    t0 = time.monotonic()
    # a run still going shortly before msgrun's --timeout is likely stuck:
    # the daemons write what each replica waits for into the event log
    dump = threading.Timer(max(1.0, a.timeout - 8), lambda: job.running() and job.dump_waits())
    dump.daemon = True
    dump.start()
    try:
        rc = job.finish(a.timeout + 30)
    except AssertionError as e:
        rc = -1
        rec["why"] = str(e)
    dump.cancel()
    rec["seconds"] = round(time.monotonic() - t0, 2)
    ev = job.events()
    inj = [e for e in ev if e.get("event") == "injected"]
    gone = sum(1 for e in ev if e.get("event") == "host-gone")
    kh = sum(1 for e in inj if e.get("fault") == "kill-host")
    rec["injected"] = len(inj) + max(0, gone - kh)  # a dying host may not log its own
    rec["fences"] = sum(1 for e in ev if e.get("event") == "fence")
    rec["copies"] = sum(1 for e in ev if e.get("event") == "regen-copied")
    # replicas msgrun did not wait for at the end (a majority of their rank
    # had finished): a stall near the end, or a copy that never caught up
    rec["laggards"] = sum(1 for e in ev if e.get("event") == "laggard")
    line = migjob.result_line(job.stdout())
    bad = None
    if rc != 0:
        bad = rec.get("why") or "msgrun exit %d" % rc
    else:
        bad = migjob.compare(line, migjob.reference(ref_cmd), names)
    rec["pass"] = bad is None
    if bad:
        rec["why"] = bad
        rec["stderr"] = job.stderr()[-1500:]
        rec["kept"] = job.top
        job.cleanup(keep=True)
    else:
        job.cleanup()
    rec["isolated"] = sum(1 for e in ev if e.get("event") == "isolated")
    rec["command"] = " ".join(job.cmd[:1] + ["-n", str(N), "-r", str(R), "--virtual-hosts",
                                            str(M), "--mode", mode] + extra +
                              (["--inject", "'%s'" % sched] if sched else []) + prog)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--start", type=int, default=0,
                    help="first run index (a campaign split over several processes)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="runs at once")
    ap.add_argument("--bin", default=migjob.BIN)
    ap.add_argument("--data", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "msgmig-data"))
    ap.add_argument("--size", default="test")
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--stall-min", type=int, default=2000,
                    help="lag detector floor, ms (shared, loaded cores)")
    ap.add_argument("--hb-timeout", type=int, default=0,
                    help="msgrun --hb-timeout, ms (default: msgrun's, 250): on a machine "
                    "loaded far beyond its cores, daemons whose ticks come 130-370 ms late "
                    "declare each other lost and themselves isolated")
    ap.add_argument("--out", default="campaign-results.json")
    a = ap.parse_args()
    migjob.BIN = a.bin
    for app in APPS:  # references first, alone
        migjob.reference(migjob.app_case(app, N, a.bin, a.data,
                                         "long" if app == "integration" else a.size)[1])
    t0 = time.monotonic()
    results = []
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for rec in ex.map(lambda i: one(i, a.seed, a), range(a.start, a.start + a.runs)):
            results.append(rec)
            print("%3d %-11s %-5s %-4s %5.1fs applied=%d/%d fences=%-2d copies=%-2d laggards=%d "
                  "isolated=%d %s%s" % (
                rec["run"], rec["app"], rec["mode"], "PASS" if rec["pass"] else "FAIL",
                rec["seconds"], rec["injected"], rec["faults"], rec["fences"], rec["copies"],
                rec["laggards"], rec["isolated"],
                rec["inject"] or "(no fault)",
                "" if rec["pass"] else "\n      " + rec["why"][:300]), flush=True)
    ok = sum(r["pass"] for r in results)
    nofault = sum(1 for r in results if r["pass"] and r["injected"] == 0)
    by = {}
    for r in results:
        b = by.setdefault(r["app"], [0, 0])
        b[0 if r["pass"] else 1] += 1
    print("\ncampaign seed=%d runs=%d from %d: %d passed (%d of them before any fault took effect: "
          "the job ended first), %d failed (%.0fs)" %
          (a.seed, len(results), a.start, ok, nofault, len(results) - ok, time.monotonic() - t0))
    for app, (p, f) in sorted(by.items()):
        print("  %-11s %d passed, %d failed" % (app, p, f))
    print("  runs with replicas not waited for at the end (laggard events): %d passed, %d failed"
          % (sum(1 for r in results if r["pass"] and r["laggards"]),
             sum(1 for r in results if not r["pass"] and r["laggards"])))
    print("  runs where daemons declared themselves isolated (a cut, or the load): "
          "%d passed, %d failed" %
          (sum(1 for r in results if r["pass"] and r["isolated"]),
           sum(1 for r in results if not r["pass"] and r["isolated"])))
    with open(a.out, "w") as f:
        json.dump({"seed": a.seed, "runs": len(results), "passed": ok, "results": results}, f,
                  indent=1)
    print("results:", a.out)
    sys.exit(0 if ok == len(results) else 1)


if __name__ == "__main__":
    main()
