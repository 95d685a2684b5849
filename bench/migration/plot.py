#!/usr/bin/python3
"""Tables (results.md) and plots (fig7.png, fig8.png) from bench.py's
results.json, with the paper's figures beside ours.

The paper gives its Figure 7/8 results as text and fitted models, which is
what is drawn for it here (no numbers are read off its plots):
  7(c)  migration durations 0.01-1.37 s over all exemplars (1 Gbps Ethernet);
        communication-state resolution at most 8.9 ms
  7(d)  single-migration overhead ~ 0.08 s + 0.01 s/MB (large images)
  8(b)  4 sequential migrations: overhead ~ 0.43 s + 0.04 s/MB
        (per migration 0.11 s + 0.01 s/MB); 8(a) concurrent: no clear trend
  usage: plot.py RESULTS_DIR"""
import json
import math
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def mean(v):
    v = [x for x in v if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return sum(v) / len(v) if v else None


def fmt(x, d=1):
    return "-" if x is None else ("%.*f" % (d, x))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "results")
    res = json.load(open(os.path.join(out, "results.json")))
    allruns = res["runs"]
    runs = [r for r in allruns if not r.get("own_core")]  # the figures: shared runs
    fps = sorted({r["footprint"] for r in runs})
    plans = ["base", "single", "seq4", "conc2", "conc4"]
    base = {fp: mean([r["run_s"] for r in runs if r["footprint"] == fp and r["plan"] == "base"
                      and r.get("ok")]) for fp in fps}
    lines = ["# bench/migration results", "",
             "Machine: %s CPUs, load average before %s, after %s (other sessions share it)."
             % (res.get("cpus"), " ".join("%.1f" % x for x in res["load_before"]),
                " ".join("%.1f" % x for x in res.get("load_after", []))),
             "Sweeps per footprint (calibrated): %s." % res.get("sweeps"), "",
             "## Migration (r = 1, n = 4, Dirichlet)", "",
             "raw TCP: the image's bytes into the receiver's fresh memory (its page faults in it, as "
             "bench/checkpoint's raw_tcp and as a restore pays); through 1 MiB: the same bytes read "
             "through one reused 1 MiB buffer (not kept).", "",
             "| MB | plan | ok | run s | overhead s | image MB | durations ms (each) | "
             "capture+stream ms | restore+resolve ms | raw TCP ms (streams at once) | target 5+2×raw ms |"
             " raw TCP through 1 MiB, one stream, ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for fp in fps:
        for plan in plans:
            for r in [r for r in allruns if r["footprint"] == fp and r["plan"] == plan]:
                ms = r["migrations"]
                ov = r["run_s"] - base[fp] if base[fp] and r.get("ok") and plan != "base" and \
                    not r.get("own_core") else None
                raw = r.get("raw_tcp_ms")
                lines.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    fp, plan + (" (own core)" if r.get("own_core") else ""),
                    "yes" if r.get("ok") else "NO " + r.get("why", "")[:80],
                    fmt(r["run_s"], 2), fmt(ov, 2),
                    fmt(r["image_bytes"] / 2**20) if r.get("image_bytes") else "-",
                    " ".join(fmt(m["duration_ms"]) for m in ms) or "-",
                    fmt(mean([m["capture_ms"] for m in ms])),
                    fmt(mean([m["restore_ms"] for m in ms])),
                    fmt(raw) + (" (%d)" % r["raw_streams"] if r.get("raw_streams") else ""),
                    fmt(5 + 2 * raw) if raw else "-", fmt(r.get("raw_tcp_scratch_ms"))))
    lines += ["", "## Regeneration (r = 3, n = 4, replica 1.1 killed)", "",
              "own core: the other groups' replicas at nice 19 (the survivor has a core when runnable). "
              "Survivor stop: msgd's migrate-save → regen-copied (plus write-fault waits of a background "
              "snapshot); libmsg's account: its begin + steps + stop, wall / its thread's CPU.", "",
              "| MB | own core | ok | image MB | kill→fence ms | kill→first verified ms | "
              "kill→verified everywhere ms | survivor stop ms | libmsg wall / CPU ms | memcpy ms | "
              "target 5+memcpy ms | raw TCP ms |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in res["regen"]:
        mc = g.get("memcpy_ms")
        c = g.get("survivor_cost") or {}
        lines.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            g["footprint"], "yes" if g.get("own_core") else "no",
            "yes" if g.get("ok") else "NO " + g.get("why", "")[:80],
            fmt(g["image_bytes"] / 2**20) if g.get("image_bytes") else "-",
            fmt(g.get("detect_ms")), fmt(g.get("fail_to_first_verified_ms")),
            fmt(g.get("fail_to_all_verified_ms")), fmt(g.get("survivor_stop_ms")),
            "%s / %s" % (fmt(c["begin_ms"] + c["steps_ms"] + c["stop_ms"]), fmt(c["cpu_ms"])) if c else "-",
            fmt(mc, 2), fmt(5 + mc) if mc else "-", fmt(g.get("raw_tcp_ms"))))
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    # Figure 7: (c) duration split per footprint with raw transfer; (d) overhead
    # and duration vs footprint, paper's model beside
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    singles = {fp: [r for r in runs if r["footprint"] == fp and r["plan"] == "single" and
                    r["migrations"]] for fp in fps}
    cap = [mean([m["capture_ms"] for r in singles[fp] for m in r["migrations"]]) or 0 for fp in fps]
    rst = [mean([m["restore_ms"] for r in singles[fp] for m in r["migrations"]]) or 0 for fp in fps]
    raw = [mean([r.get("raw_tcp_ms") for r in singles[fp]]) or 0 for fp in fps]
    x = range(len(fps))
    ax[0].bar([i - 0.2 for i in x], cap, 0.4, label="ours: capture + stream (save..moved)")
    ax[0].bar([i - 0.2 for i in x], rst, 0.4, bottom=cap, label="ours: restore + resolve")
    ax[0].bar([i + 0.2 for i in x], raw, 0.4, label="raw loopback TCP, same bytes")
    ax[0].set_xticks(list(x), ["%d MB" % fp for fp in fps])
    ax[0].set_ylabel("ms")
    ax[0].set_title("Fig. 7(c)-like: single migration duration\n"
                    "(paper: 0.01-1.37 s over its exemplars, 1 Gbps)")
    ax[0].legend(fontsize=8)
    mb = [2, 120]
    ax[1].plot(mb, [0.08 + 0.01 * v for v in mb], "k--", label="paper 7(d): overhead 0.08 s + 0.01 s/MB")
    ax[1].plot(mb, [v * 8 / 1000 for v in mb], "k:", label="paper's wire time at 1 Gbps (lower bound)")
    ov = [(base[fp] and mean([r["run_s"] - base[fp] for r in singles[fp] if r.get("ok")])) for fp in fps]
    du = [mean([m["duration_ms"] for r in singles[fp] for m in r["migrations"]]) for fp in fps]
    ax[1].plot(fps, [v if v is not None else float("nan") for v in ov], "o-", label="ours: overhead (run - base)")
    ax[1].plot(fps, [v / 1000 if v else float("nan") for v in du], "s-", label="ours: duration")
    ax[1].set_xlabel("process footprint (MB)")
    ax[1].set_ylabel("s")
    ax[1].set_title("Fig. 7(d)-like: overhead and duration vs footprint")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig7.png"), dpi=110)

    # Figure 8: overhead of concurrent (2, 4) and 4 sequential migrations
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    for plan, mk in (("single", "o-"), ("conc2", "s-"), ("conc4", "^-")):
        v = [base[fp] and mean([r["run_s"] - base[fp] for r in runs if r["footprint"] == fp and
                                r["plan"] == plan and r.get("ok")]) for fp in fps]
        ax[0].plot(fps, [y if y is not None else float("nan") for y in v], mk, label="ours: " + plan)
    ax[0].set_title("Fig. 8(a)-like: concurrent migrations\n(paper: no clear trend, Dirichlet/LiDAR)")
    ax[0].set_xlabel("process footprint (MB)")
    ax[0].set_ylabel("overhead (s)")
    ax[0].legend(fontsize=8)
    v = [base[fp] and mean([r["run_s"] - base[fp] for r in runs if r["footprint"] == fp and
                            r["plan"] == "seq4" and r.get("ok")]) for fp in fps]
    ax[1].plot(fps, [y if y is not None else float("nan") for y in v], "o-", label="ours: 4 sequential")
    ax[1].plot(mb, [0.43 + 0.04 * q for q in mb], "k--", label="paper 8(b): 0.43 s + 0.04 s/MB")
    d4 = [mean([m["duration_ms"] for r in runs if r["footprint"] == fp and r["plan"] == "seq4"
                for m in r["migrations"]]) for fp in fps]
    ax[1].plot(fps, [4 * q / 1000 if q else float("nan") for q in d4], "s:",
               label="ours: 4 x mean duration")
    ax[1].set_title("Fig. 8(b)-like: 4 sequential migrations")
    ax[1].set_xlabel("process footprint (MB)")
    ax[1].set_ylabel("s")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fig8.png"), dpi=110)
    print("wrote", os.path.join(out, "fig7.png"), os.path.join(out, "fig8.png"))


if __name__ == "__main__":
    main()
