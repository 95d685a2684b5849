#!/usr/bin/env python3
"""Exemplars on msg vs Open MPI, and the cost of replication (issue 3).

One command:
    bench/apps/run_bench.py [--build DIR] [--reps 3] [--only ompi|msg] [--quick]
                            [--apps a,b] [--no-weak] [--msgrun-args '...']
                            [--fig6-n 64,2] [--weak-n 4,16]

Part 1 (the paper's Figure 6): each exemplar with Open MPI (mpirun, the
  app linked with msg_on_mpi) and with msg (msgrun -r 1), at n=64
  (oversubscribed on this machine) and n=2; median wall time over --reps
  runs (the sides of a comparison interleaved, rep by rep), ratio msg/Open MPI (target <= 0.85 at n=64).
Part 2 (replication under weak scaling, same problem size per rank):
  msgrun -n N -r 3 against msgrun -n 3N -r 1 (same process count, same total
  work; target <= 1.10) and -r 3 against -r 1 at equal N.
CPU s: user+system time of the launcher and everything it waited for
(daemons, application processes), median; on a shared machine it moves
less with the load than wall time does.
Every run's checked answer must say "ok", and msg and Open MPI must agree on
it; a disagreement stops the benchmark. Wall time is measured around the
launcher (start-up included, as in the paper).

Writes DIR/bench/apps/{results.json,results.md,fig6.png} (figures need
matplotlib; plot.py is run with the first python that has it).
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader"]
MEM_CAP_N = 16  # 114 MB x 3 replicas: larger N would not fit 24 GiB with r=3


def lidar_input(build, points, size):
    """A synthetic survey, generated once and cached."""
    path = os.path.join(build, "bench", "apps", f"terrain_{points}_{size}.las")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run([os.path.join(build, "bin", "lidar_gen"), "--out", path, "--points",
                        str(points), "--size", str(size), "--seed", "2026"], check=True,
                       capture_output=True)
    return path


def apps(build, quick):
    """(name, exe, args(n), fields compared between runtimes)."""
    it = 1e8 if quick else 2e8
    las = lidar_input(build, 200000 if quick else 600000, 300 if quick else 550)
    dfields = ["grid", "iterations", "residual", "checksum"]
    return [
        ("integration", "integration", lambda n: ["--intervals", f"{it:.0f}"],
         ["result", "bits"]),
        ("dirichlet-9MB", "dirichlet",
         lambda n: ["--footprint-mb", "9", "--max-iters", "20", "--check-every", "5"], dfields),
        ("dirichlet-51MB", "dirichlet",
         lambda n: ["--footprint-mb", "51", "--max-iters", "4", "--check-every", "2"], dfields),
        ("dirichlet-114MB", "dirichlet",
         lambda n: ["--footprint-mb", "114", "--max-iters", "2", "--check-every", "1"], dfields),
        ("lidar", "lidar", lambda n: ["--input", las], ["grid", "ground", "rmse", "checksum"]),
    ]


def weak_apps(build, quick):
    """Weak scaling: the per-rank problem is fixed, the total grows with n
    (lidar: 20000 points per rank at 3 points/m2)."""
    per = 2e6 if quick else 5e6
    return [
        ("integration", "integration", lambda n: ["--intervals", f"{per * n:.0f}"]),
        ("dirichlet-9MB", "dirichlet",
         lambda n: ["--footprint-mb", "9", "--max-iters", "20", "--check-every", "5"]),
        ("dirichlet-114MB", "dirichlet",
         lambda n: ["--footprint-mb", "114", "--max-iters", "2", "--check-every", "1"]),
        ("lidar", "lidar",
         lambda n: ["--input", lidar_input(build, 20000 * n, int((20000 * n / 3.0) ** 0.5))]),
    ]


def fields(line):
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_once(cmd, timeout):
    c0 = children_cpu()
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        # a hang is a bug to report, not a figure: stop with the command named
        raise SystemExit(f"bench: no answer after {timeout:g} s (killed): {' '.join(cmd)}")
    wall = time.monotonic() - t0
    cpu = children_cpu() - c0
    lines = [l for l in p.stdout.splitlines() if l.split() and l.split()[-1] in ("ok", "FAIL")]
    if p.returncode != 0 or not lines or lines[-1].split()[-1] != "ok":
        err = p.stderr if len(p.stderr) <= 4000 else p.stderr[:2000] + "\n...\n" + p.stderr[-2000:]
        sys.stderr.write(p.stdout[-2000:] + err)
        raise SystemExit(f"bench: run failed: {' '.join(cmd)}")
    return wall, lines[-1], cpu


def measure(cmds, reps, timeout):
    """Run each labelled command reps times, interleaved (a, b, a, b, ...), so
    that a change of the machine's load during the benchmark hits every side
    alike; return per label the median wall time and its runs."""
    runs = {k: {"walls": [], "line": None, "loads": [], "cpus": []} for k in cmds}
    for _ in range(reps):
        for k, cmd in cmds.items():
            r = runs[k]
            r["loads"].append(round(os.getloadavg()[0], 2))
            w, l, c = run_once(cmd, timeout)
            if r["line"] is not None and l != r["line"]:
                raise SystemExit(f"bench: answer changed between runs of {' '.join(cmd)}")
            r["walls"].append(w)
            r["cpus"].append(c)
            r["line"] = l
    for r in runs.values():
        r["median"] = statistics.median(r["walls"])
        r["cpu"] = statistics.median(r["cpus"])
    return runs


MSGRUN_ARGS = []


def launcher(kind, build, n, r=1):
    if kind == "ompi":
        return MPIRUN + ["-np", str(n)]
    return [os.path.join(build, "bin", "msgrun"), "-n", str(n), "-r", str(r)] + MSGRUN_ARGS


def exe(kind, build, name):
    return os.path.join(build, "bin", name + ("-mpi" if kind == "ompi" else ""))


def selected(a, name):
    return not a.apps or name in a.apps.split(",")


def part1(a, kinds, results):
    for n in a.fig6_n:
        for name, prog, args, cmp in apps(a.build, a.quick):
            if not selected(a, name):
                continue
            row = {"app": name, "n": n}
            cmds = {k: launcher(k, a.build, n) + [exe(k, a.build, prog)] + args(n) for k in kinds}
            print(f"[{'/'.join(kinds)} n={n}] {name} ...", flush=True)
            row.update(measure(cmds, a.reps, a.timeout))
            for kind in kinds:
                print(f"    {kind} median {row[kind]['median']:.3f} s  {row[kind]['line']}", flush=True)
            if len(kinds) == 2:
                fo, fm = fields(row["ompi"]["line"]), fields(row["msg"]["line"])
                bad = [f for f in cmp if fo.get(f) != fm.get(f)]
                if bad:
                    raise SystemExit(f"bench: msg and Open MPI disagree on {bad} for {name}")
                row["ratio"] = row["msg"]["median"] / row["ompi"]["median"]
            results["fig6"].append(row)


def part2(a, results):
    if a.no_weak:
        return
    results["notes"].append(f"weak scaling: n <= {MEM_CAP_N} everywhere, so that dirichlet-114MB "
                            f"with r=3 ({3 * MEM_CAP_N} x 114 MB) fits this machine's memory")
    for n in a.weak_n if a.weak_n is not None else ((4, MEM_CAP_N) if not a.quick else (4,)):
        for name, prog, args in weak_apps(a.build, a.quick):
            if not selected(a, name) or a.no_weak:
                continue
            row = {"app": name, "n": n}
            cmds = {}
            for label, nn, r in (("r3", n, 3), ("r1_3n", 3 * n, 1), ("r1", n, 1)):
                cmds[label] = (launcher("msg", a.build, nn, r) + [exe("msg", a.build, prog)]
                               + args(n if r == 3 or label == "r1" else nn))
            print(f"[msg weak] {name} n={n}: r3 (n={n}), r1_3n (n={3 * n}), r1 (n={n}) ...", flush=True)
            row.update(measure(cmds, a.reps, a.timeout))
            for label in cmds:
                print(f"    {label} median {row[label]['median']:.3f} s", flush=True)
            row["r3_vs_r1_3n"] = row["r3"]["median"] / row["r1_3n"]["median"]
            row["r3_vs_r1"] = row["r3"]["median"] / row["r1"]["median"]
            results["weak"].append(row)


def table(results):
    out = ["# Exemplars: msg vs Open MPI (median wall time, s)", "",
           f"reps: {results['reps']}; machine: {results['machine']}; 1-min load average "
           f"at start {results['load_start'][0]:.1f}, at end {results['load_end'][0]:.1f}", "",
           "| app | n | Open MPI | msg | msg/Open MPI | CPU s Open MPI / msg |",
           "|---|---|---|---|---|---|"]
    for r in results["fig6"]:
        o = f"{r['ompi']['median']:.3f}" if "ompi" in r else "-"
        m = f"{r['msg']['median']:.3f}" if "msg" in r else "-"
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
        cpu = " / ".join(f"{r[k]['cpu']:.1f}" if k in r else "-" for k in ("ompi", "msg"))
        out.append(f"| {r['app']} | {r['n']} | {o} | {m} | {ratio} | {cpu} |")
    if results["weak"]:
        out += ["", "# Replication under weak scaling (msg, median wall time, s)", "",
                "| app | n | r=3 (n) | r=1 (3n) | r=1 (n) | r3 / r1·3n | r3 / r1 "
                "| CPU s r3 / r1·3n (ratio) |",
                "|---|---|---|---|---|---|---|---|"]
        for r in results["weak"]:
            c3, c1 = r["r3"]["cpu"], r["r1_3n"]["cpu"]
            out.append(f"| {r['app']} | {r['n']} | {r['r3']['median']:.3f} | "
                       f"{r['r1_3n']['median']:.3f} | {r['r1']['median']:.3f} | "
                       f"{r['r3_vs_r1_3n']:.2f} | {r['r3_vs_r1']:.2f} | "
                       f"{c3:.1f} / {c1:.1f} ({c3 / c1 if c1 else 0:.2f}) |")
    out += [""] + [f"note: {n}" for n in results["notes"]]
    return "\n".join(out) + "\n"


def plot(outdir):
    for py in (sys.executable, "/usr/bin/python3"):
        if subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            subprocess.run([py, os.path.join(HERE, "plot.py"), outdir], check=True)
            return
    print("bench: no python with matplotlib; skipped the chart", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", choices=["ompi", "msg"])
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out")
    ap.add_argument("--apps", help="comma-separated subset, e.g. lidar,dirichlet-9MB")
    ap.add_argument("--no-weak", action="store_true", help="skip the weak-scaling part")
    ap.add_argument("--fig6-n", default="64,2",
                    help="n values of the msg vs Open MPI part ('' skips it)")
    ap.add_argument("--weak-n", help="n values of the weak-scaling part (default 4,16)")
    ap.add_argument("--msgrun-args", default="--stall-min 10000",
                    help="extra msgrun options (default: a stall bound above what "
                         "oversubscription causes, so replicas are not fenced as slow)")
    a = ap.parse_args()
    a.fig6_n = [int(x) for x in a.fig6_n.split(",") if x]
    a.weak_n = [int(x) for x in a.weak_n.split(",") if x] if a.weak_n else None
    if a.weak_n and max(a.weak_n) > MEM_CAP_N:
        raise SystemExit(f"bench: --weak-n above {MEM_CAP_N} would not fit this machine's memory")
    MSGRUN_ARGS.extend(a.msgrun_args.split())
    a.build = os.path.abspath(a.build)
    kinds = [k for k in ("ompi", "msg") if a.only in (None, k)]
    if "msg" in kinds and not os.path.exists(os.path.join(a.build, "bin", "msgrun")):
        raise SystemExit("bench: no msgrun in the build; use --only ompi")
    if "ompi" in kinds and not shutil.which("mpirun"):
        raise SystemExit("bench: no mpirun; use --only msg")
    outdir = a.out or os.path.join(a.build, "bench", "apps")
    os.makedirs(outdir, exist_ok=True)
    results = {"reps": a.reps, "machine": f"{os.cpu_count()} CPUs, {os.uname().release}",
               "load_start": os.getloadavg(),
               "fig6": [], "weak": [], "notes": [f"msgrun options: {a.msgrun_args or '(none)'}"]}
    part1(a, kinds, results)
    if "msg" in kinds:
        part2(a, results)
    else:
        results["notes"].append("msg half not run (--only ompi): no ratios, no weak scaling")
    results["load_end"] = os.getloadavg()
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    md = table(results)
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write(md)
    print(md)
    if results["fig6"]:
        plot(outdir)


if __name__ == "__main__":
    main()
