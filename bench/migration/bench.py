#!/usr/bin/env python3
"""Migration and regeneration cost vs process footprint (the paper's Figures 7
and 8), Dirichlet processes of about 9, 51 and 114 MB (--footprint-mb).

  bench.py [--bin DIR] [--reps K] [--out DIR] [--footprints 9,51,114]

For each footprint, n = 4, r = 1 on 9 virtual hosts, a fixed number of sweeps:
  base    no migration (the reference run time)
  single  rank 1 moved host 1 -> 4
  seq4    rank 1 moved 1 -> 4 -> 5 -> 6 -> 7, each once the previous is restored
  conc2   ranks 1, 2 moved at once to hosts 4, 5
  conc4   ranks 0..3 moved at once to hosts 4..7
Measured per migration: duration = migrate-save (source) -> migrate-restored
(target) from the event log's mono_ns (the paper's definition: from the start
of the save to the restored process resuming), split as capture+stream
(save -> migrate-moved) and restore+resolve (migrate-moved -> migrate-restored);
image bytes = the process's private dirty memory (/proc/PID/smaps_rollup)
just before; raw transfer = the same bytes through one loopback TCP socket
into the receiver's fresh memory (its page faults in it, as bench/checkpoint's
raw_tcp), measured right after in the same run (python, 1 MiB sendall /
recv_into); raw_tcp_scratch_ms: the same through one reused 1 MiB buffer.
Overhead = run time - base run time (same footprint, same sweeps).

Regeneration, n = 4, r = 3 on 6 hosts: replica 1.1 killed; measured
failure -> r verified (kill -> the last member-verified of the copy), the
survivor's extra time (its capture: migrate-save -> regen-copied at the
survivor's daemon; stop-and-copy: the survivor is stopped for exactly that
long; a pre-copy spread over receives: its begin, migrate-save ->
regen-precopy, plus its cut, regen-cut -> regen-copied), and the memcpy time
of the same bytes (numpy copy) for the target. libmsg's own account of the
capture (MSG_CKPT_REPORT: begin, steps, stop, wall and thread CPU) is kept
beside it. Each regeneration runs twice (--regen-modes): shared, and
own-core, where every replica of the other groups runs at nice 19 so that
the survivor has a core when it is runnable (12 replicas share 2 cores
here; a cluster gives each its core).
Concurrent moves are held to the raw transfer of the same bytes, as many
loopback streams at once (one process each), not to one stream. Moves also
run own-core (--move-modes): the ranks that do not move at nice 19.

Writes results.json, tables (results.md) and fig7.png / fig8.png."""
import argparse
import json
import re
import os
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "migration"))
import migjob  # noqa: E402

SWEEPS = {9: 400, 51: 100, 114: 50}  # starting points; calibrated to a few s per run
PLANS = {
    "base": [],
    "single": [(1, [4])],
    "seq4": [(1, [4, 5, 6, 7])],
    "conc2": [(1, [4]), (2, [5])],
    "conc4": [(0, [4]), (1, [5]), (2, [6]), (3, [7])],
}


def private_dirty(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for l in f:
                if l.startswith("Private_Dirty:"):
                    return int(l.split()[1]) * 1024
    except OSError:
        pass
    return None


def pids(job):
    out = {}
    p = job.ctl("ps", check=False)
    for l in p.stdout.splitlines():
        w = l.split()
        if len(w) >= 5 and "." in w[0] and w[2] == "live":
            g, k = w[0].split(".")
            out[(int(g), int(k))] = int(w[4])
    return out


OTHERS = "nice"  # --others: how own-core holds back the other replicas


def nice_others(pp, groups):
    """Own core: every replica of the job (we started them) outside groups
    at nice 19 (--others nice), or SCHED_IDLE (--others idle: they run only
    on a CPU nothing else wants; a nice-19 task the scheduler has picked
    keeps its slice, so a waking survivor can wait behind it), so that
    those in groups run whenever they are runnable."""
    for (g, _), pid in pp.items():
        if g in groups:
            continue
        if OTHERS == "idle":
            os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
        else:
            os.setpriority(os.PRIO_PROCESS, pid, 19)


def msgd_cc(sock):
    """The congestion control msgd gives its connections by default (msgd
    --tcp-congestion: the first of cubic, reno the kernel takes), so that
    the raw transfer and the image streams travel alike."""
    for cc in (b"cubic", b"reno"):
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc)
            return
        except OSError:
            pass


def raw_tcp(nbytes, scratch=False):
    """Seconds to push nbytes through one loopback TCP connection into the
    receiver's memory: a fresh mapping of nbytes, so its page faults are in
    it, as bench/checkpoint's raw_tcp (a fresh malloc buffer) and as any
    transfer that keeps the bytes (a restore places them in fresh memory).
    scratch: through one reused 1 MiB buffer instead (the bytes are not
    kept; this bench's figure until session 11)."""
    import mmap
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    buf = bytearray(1 << 20)
    dst = mmap.mmap(-1, max(nbytes, 1 << 20))  # untouched until the transfer
    done = {}

    def rx():
        c, _ = srv.accept()
        msgd_cc(c)
        got, mv = 0, memoryview(dst)
        while got < nbytes:
            n = c.recv_into(mv[0:1 << 20] if scratch else mv[got:got + (1 << 20)])
            if n <= 0:
                break
            got += n
        done["t"] = time.perf_counter()
        c.close()
    t = threading.Thread(target=rx)
    t.start()
    s = socket.create_connection(srv.getsockname())
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    msgd_cc(s)
    t0 = time.perf_counter()
    left = nbytes
    while left > 0:
        k = min(left, len(buf))
        s.sendall(memoryview(buf)[:k])
        left -= k
    s.close()
    t.join()
    srv.close()
    dst.close()
    return done["t"] - t0


def raw_tcp_concurrent(nbytes, k):
    """Seconds until k loopback TCP streams of nbytes each, started at the
    same moment (one process each, as k migrations are), are all through:
    the raw transfer of the bytes k concurrent moves carry."""
    start = time.time() + 0.5  # after every child has started
    ps = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--raw-one", str(nbytes),
                            "--raw-at", repr(start)], stdout=subprocess.PIPE, text=True)
          for _ in range(k)]
    outs = [p.communicate(timeout=120)[0] for p in ps]
    return max(float(o.split()[0]) for o in outs)


def memcpy_time(nbytes):
    import numpy as np
    a = np.ones(nbytes // 8, dtype=np.float64)
    b = np.empty_like(a)
    best = 1e9
    for _ in range(3):
        t0 = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t0)
    return best


def dirichlet(a, fp):
    b = migjob.bin_path("dirichlet", a.bin)
    return [b, "--footprint-mb", str(fp), "--tol", "1e-12", "--max-iters", str(SWEEPS[fp])]


def run_plan(a, fp, plan, own_core=False):
    """own_core: the ranks that do not move run at nice 19, so that a moving
    process and its restorer have the CPU when they are runnable (4
    replicas and 9 daemons share 2 cores here)."""
    moves = PLANS[plan]
    job = migjob.Job(4, 1, 9, dirichlet(a, fp), bindir=a.bin, timeout=600)
    rec = {"footprint": fp, "plan": plan, "migrations": []}
    try:
        job.wait_up(120)
        time.sleep(a.delay)
        size = {}
        pp = pids(job)
        rec["own_core"] = own_core
        if own_core:
            nice_others(pp, {g for g, _ in moves})
        for g, _ in moves:
            size[g] = private_dirty(pp.get((g, 0), 0))
        if moves and len(moves) == 1 and len(moves[0][1]) > 1:  # sequential
            g, path = moves[0]
            for i, h in enumerate(path):
                if i:
                    size_g = private_dirty(pids(job).get((g, 0), 0))
                    size[(g, i)] = size_g
                job.migrate(g, 0, h)
                job.wait_for(lambda: job.count("migrate-restored", group=g) >= i + 1, 120,
                             "move %d" % i)
                time.sleep(a.gap)
        else:
            ts = [threading.Thread(target=job.migrate, args=(g, 0, p[0])) for g, p in moves]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            for g, _ in moves:
                job.wait_for(lambda: job.count("migrate-restored", group=g) >= 1, 120,
                             "move of %d" % g)
        running = job.running()
        rc = job.finish(600)
        ev = job.events()
        launch = [e for e in ev if e.get("event") == "launch"][0]["mono_ns"]
        end = [e for e in ev if e.get("event") == "job-end"][0]["mono_ns"]
        rec["run_s"] = (end - launch) / 1e9
        rec["ok"] = rc == 0 and running and migjob.result_line(job.stdout()) is not None and \
            migjob.result_line(job.stdout()).endswith(" ok")
        rec["result"] = migjob.result_line(job.stdout())
        rec["load"] = os.getloadavg()
        saves = [e for e in ev if e.get("event") == "migrate-save"]
        for s in saves:
            g = s["group"]
            moved = min((e["mono_ns"] for e in ev if e.get("event") == "migrate-moved" and
                         e["group"] == g and e["mono_ns"] >= s["mono_ns"]), default=None)
            rest = min((e["mono_ns"] for e in ev if e.get("event") == "migrate-restored" and
                        e["group"] == g and e["mono_ns"] >= s["mono_ns"]), default=None)
            rec["migrations"].append({
                "group": g, "target": s["target"],
                "duration_ms": (rest - s["mono_ns"]) / 1e6 if rest else None,
                "capture_ms": (moved - s["mono_ns"]) / 1e6 if moved else None,
                "restore_ms": (rest - moved) / 1e6 if rest and moved else None,
            })
        nb = [v for v in size.values() if v]
        rec["image_bytes"] = max(nb) if nb else None
        if rec["image_bytes"]:
            rec["raw_tcp_one_ms"] = min(raw_tcp(rec["image_bytes"]) for _ in range(3)) * 1e3
            rec["raw_tcp_scratch_ms"] = min(raw_tcp(rec["image_bytes"], scratch=True) for _ in range(3)) * 1e3
            rec["raw_tcp_ms"] = rec["raw_tcp_one_ms"]
            if len(moves) > 1:  # concurrent: the same bytes, as many streams at once
                rec["raw_tcp_ms"] = min(raw_tcp_concurrent(rec["image_bytes"], len(moves))
                                        for _ in range(3)) * 1e3
                rec["raw_streams"] = len(moves)
    finally:
        job.cleanup(keep=bool(os.environ.get("BENCH_KEEP")))
        if os.environ.get("BENCH_KEEP"):
            print("kept", job.top)
    return rec


def _first(ev, name, group):
    t = [e["mono_ns"] for e in ev if e.get("event") == name and e.get("group") == group]
    return min(t) if t else None


def survivor_faults(err, group):
    """The background snapshot's cost to the survivor after its stop
    (libmsg's MSG_CKPT_REPORT line at its msgFinalize): write faults and an
    upper bound of the time it waited in them."""
    n, w = 0, 0.0
    for l in err.splitlines():
        m = re.search(r"msg: rank %d\.\d+: live copy: (\d+) write faults after the stop, waited <= (\d+) us"
                      % group, l)
        if m:
            n, w = n + int(m.group(1)), w + int(m.group(2)) / 1e3
    return n, w


def survivor_cost(err, group):
    """libmsg's MSG_CKPT_REPORT line of the copy's source (the survivor): its
    begin, steps and stop, wall and its thread's CPU time."""
    for l in err.splitlines():
        m = re.search(r"msg: rank %d\.\d+: live copy cost: begin (\d+) us \(cpu (\d+)\), (\d+) steps (\d+) us "
                      r"\(cpu (\d+)\), stop (\d+) us \(cpu (\d+)\)(?:; runnable without a CPU (\d+) us, "
                      r"blocked (\d+) times)?" % group, l)
        if m:
            g = [int(x) / 1e3 if x is not None else None for x in m.groups()]
            return {"begin_ms": g[0], "begin_cpu_ms": g[1], "steps": int(g[2] * 1e3), "steps_ms": g[3],
                    "steps_cpu_ms": g[4], "stop_ms": g[5], "stop_cpu_ms": g[6], "cpu_ms": g[1] + g[4] + g[6],
                    "runq_ms": g[7], "blocked": None if g[8] is None else int(g[8] * 1e3)}
    return None


def run_regen(a, fp, own_core=False):
    """own_core: every replica but group 1's runs at nice 19, so that the
    survivor has a core when it is runnable, as on a cluster with a core
    per process (here 12 replicas share 2 cores: a stop's wall time is
    then mostly waiting for the CPU)."""
    os.environ["MSG_CKPT_REPORT"] = "1"
    job = migjob.Job(4, 3, 6, dirichlet(a, fp), bindir=a.bin, timeout=120,
                     extra=["--stall-min", "2000"])
    rec = {"footprint": fp}
    try:
        job.wait_up(120)
        time.sleep(a.delay)
        pp = pids(job)
        rec["image_bytes"] = private_dirty(pp.get((1, 0), 0))
        rec["own_core"] = own_core
        if own_core:
            nice_others(pp, {1})
        job.ctl("kill", "1.1")
        job.wait_for(lambda: job.count("member-verified", group=1, rep=1) >= 1, 120,
                     "the copy of 1.1 verified")
        time.sleep(0.3)
        running = job.running()
        rc = job.finish(600)
        ev = job.events()
        inj = [e["mono_ns"] for e in ev if e.get("event") == "injected" and
               e.get("group") == 1]
        t_kill = min(inj) if inj else None
        ver = [e["mono_ns"] for e in ev if e.get("event") == "member-verified" and
               e.get("group") == 1 and e.get("rep") == 1]
        fence = [e["mono_ns"] for e in ev if e.get("event") == "fence" and e.get("group") == 1]
        save = [e for e in ev if e.get("event") == "migrate-save" and e.get("group") == 1 and
                e.get("mode") == "copy"]
        copied = [e for e in ev if e.get("event") == "regen-copied" and e.get("group") == 1]
        # a pre-copy spread over receives: the survivor stops at its begin
        # (migrate-save -> regen-precopy) and at its cut (regen-cut ->
        # regen-copied); it runs in between
        pre = [e["mono_ns"] for e in ev if e.get("event") == "regen-precopy" and e.get("group") == 1]
        cut = [e for e in ev if e.get("event") == "regen-cut" and e.get("group") == 1]
        rec["ok"] = rc == 0 and running
        if t_kill and ver:
            rec["fail_to_first_verified_ms"] = (min(ver) - t_kill) / 1e6
            rec["fail_to_all_verified_ms"] = (max(ver) - t_kill) / 1e6
        if t_kill and fence:
            rec["detect_ms"] = (min(fence) - t_kill) / 1e6
        if save and copied and pre and cut:
            rec["survivor_begin_ms"] = (pre[0] - save[0]["mono_ns"]) / 1e6
            rec["survivor_cut_ms"] = (copied[0]["mono_ns"] - cut[0]["mono_ns"]) / 1e6
            rec["survivor_stop_ms"] = rec["survivor_begin_ms"] + rec["survivor_cut_ms"]
            rec["precopy_ms"] = (cut[0]["mono_ns"] - pre[0]) / 1e6
            rec["cut_ready"] = bool(cut[0].get("ready"))
        elif save and copied:
            rec["survivor_stop_ms"] = (copied[0]["mono_ns"] - save[0]["mono_ns"]) / 1e6
        # a background snapshot's stop copies nothing: the survivor then
        # waits in write faults until the helper saved those pages; since
        # 2026-11-27 that wait (an upper bound) is in survivor_stop_ms,
        # the stop alone in survivor_cut_only_ms
        cost = survivor_cost(job.stderr(), 1)
        if os.environ.get("MSG_CKPT_TRACE"):  # the capture's phases (runtime/ckpt/trace.c)
            print("\n".join(l for l in job.stderr().splitlines() if l.startswith(("ckpt: ", "msg: "))))
        if cost:
            rec["survivor_cost"] = cost
        nf, wf = survivor_faults(job.stderr(), 1)
        if "survivor_stop_ms" in rec:
            rec["survivor_faults"], rec["survivor_fault_ms"] = nf, wf
            rec["survivor_cut_only_ms"] = rec["survivor_stop_ms"]
            rec["survivor_stop_ms"] += wf
        # where the time to r verified goes: kill -> fence -> regen-start ->
        # migrate-save (the survivor's safe point) -> regen-copied (its stop
        # ends) -> migrate-restored (target) -> member-verified
        marks = [("fence", fence and min(fence)),
                 ("regen-start", _first(ev, "regen-start", 1)),
                 ("migrate-save", save and save[0]["mono_ns"]),
                 ("regen-precopy", pre and pre[0]),
                 ("regen-cut", cut and cut[0]["mono_ns"]),
                 ("regen-copied", copied and copied[0]["mono_ns"]),
                 ("migrate-restored", _first(ev, "migrate-restored", 1)),
                 ("member-verified", ver and min(ver))]
        prev, rec["phases_ms"] = t_kill, {}
        for name, t in marks:
            if prev and t:
                rec["phases_ms"][name] = round((t - prev) / 1e6, 1)
            prev = t or prev
        rec["load"] = os.getloadavg()
        if rec.get("image_bytes"):
            rec["memcpy_ms"] = memcpy_time(rec["image_bytes"]) * 1e3
            rec["raw_tcp_ms"] = min(raw_tcp(rec["image_bytes"]) for _ in range(3)) * 1e3
    finally:
        job.cleanup(keep=bool(os.environ.get("BENCH_KEEP")))
        if os.environ.get("BENCH_KEEP"):
            print("kept", job.top)
    return rec


def raw_one(nbytes, at):
    """--raw-one: one stream of raw_tcp_concurrent, from the given moment."""
    time.sleep(max(0.0, at - time.time()))
    print("%.6f" % raw_tcp(nbytes), flush=True)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--raw-one":
        return raw_one(int(sys.argv[2]), float(sys.argv[4]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=migjob.BIN)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--footprints", default="9,51,114")
    ap.add_argument("--plans", default="base,single,seq4,conc2,conc4")
    ap.add_argument("--delay", type=float, default=0.5, help="s after start before moving")
    ap.add_argument("--gap", type=float, default=0.3, help="s between sequential moves")
    ap.add_argument("--run-s", type=float, default=4.0, help="least base run time (calibration)")
    ap.add_argument("--sweeps", help="FP:SWEEPS,... instead of calibrating (e.g. 9:749,51:100)")
    ap.add_argument("--no-regen", action="store_true", help="skip the regeneration runs")
    ap.add_argument("--move-modes", default="shared,own-core",
                    help="moves: shared and/or own-core (the ranks that do not move at nice 19)")
    ap.add_argument("--regen-modes", default="shared,own-core",
                    help="regeneration runs: shared (every replica at the same priority) and/or "
                    "own-core (the other groups at nice 19: the survivor has a core)")
    ap.add_argument("--others", choices=["nice", "idle"], default="nice",
                    help="own-core: the other replicas at nice 19 (nice) or SCHED_IDLE (idle)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    global OTHERS
    OTHERS = a.others
    migjob.BIN = a.bin
    for kv in filter(None, (a.sweeps or "").split(",")):
        fp, n = kv.split(":")
        SWEEPS[int(fp)] = int(n)
    os.makedirs(a.out, exist_ok=True)
    res = {"load_before": os.getloadavg(), "cpus": os.cpu_count(), "others": a.others, "runs": [], "regen": []}
    for rep in range(a.reps):
        for fp in map(int, a.footprints.split(",")):
            if rep == 0 and not a.sweeps:  # calibrate: a base run of at least --run-s s
                for _ in range(4):
                    r = run_plan(a, fp, "base")
                    print("%3d MB calibration: %d sweeps %.2fs" % (fp, SWEEPS[fp], r["run_s"]),
                          flush=True)
                    if r["run_s"] >= a.run_s:
                        break
                    SWEEPS[fp] = int(SWEEPS[fp] * min(8.0, 1.3 * a.run_s / max(r["run_s"], 0.1)))
            res.setdefault("sweeps", {})[fp] = SWEEPS[fp]
            todo = [(p, own) for p in filter(None, a.plans.split(","))
                    for own in [m == "own-core" for m in a.move_modes.split(",") if m]
                    if not own or len(PLANS[p]) not in (0, 4)]  # (every rank moves in conc4)
            for plan, own in todo:
                try:
                    r = run_plan(a, fp, plan, own)
                except (AssertionError, IndexError) as e:
                    r = {"footprint": fp, "plan": plan, "ok": False, "why": str(e)[:500],
                         "migrations": [], "run_s": float("nan"), "own_core": own}
                r["rep"] = rep
                res["runs"].append(r)
                d = [m["duration_ms"] for m in r["migrations"]]
                print("%3d MB %-6s%s run %.2fs ok=%s image %s MB durations ms %s raw tcp %s ms" % (
                    fp, plan, " (own core)" if own else "", r["run_s"], r["ok"],
                    "%.1f" % (r["image_bytes"] / 2**20) if r.get("image_bytes") else "-",
                    " ".join("%.1f" % x for x in d if x is not None),
                    "%.1f" % r["raw_tcp_ms"] if r.get("raw_tcp_ms") else "-"), flush=True)
            if a.no_regen:
                continue
            for own in [m == "own-core" for m in a.regen_modes.split(",") if m]:
                try:
                    g = run_regen(a, fp, own)
                except (AssertionError, IndexError) as e:
                    g = {"footprint": fp, "ok": False, "why": str(e)[:500], "own_core": own}
                g["rep"] = rep
                res["regen"].append(g)
                print("%3d MB regen%s: %s" % (fp, " (own core)" if own else "", json.dumps(g)), flush=True)
    res["load_after"] = os.getloadavg()
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print("wrote", os.path.join(a.out, "results.json"))


if __name__ == "__main__":
    main()
