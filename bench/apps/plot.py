#!/usr/bin/env python3
"""Figure 6 style chart from results.json: per exemplar, median wall time
with Open MPI and with msg, one panel per n. usage: plot.py OUTDIR"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    outdir = sys.argv[1]
    with open(os.path.join(outdir, "results.json")) as f:
        res = json.load(f)
    ns = sorted({r["n"] for r in res["fig6"]}, reverse=True)
    fig, axes = plt.subplots(1, len(ns), figsize=(6 * len(ns), 4.2), squeeze=False)
    for ax, n in zip(axes[0], ns):
        rows = [r for r in res["fig6"] if r["n"] == n]
        x = range(len(rows))
        for k, (kind, label, color) in enumerate((("ompi", "Open MPI", "#888888"),
                                                  ("msg", "msg", "#1f5fa8"))):
            vals = [r[kind]["median"] if kind in r else 0 for r in rows]
            bars = ax.bar([i + (k - 0.5) * 0.38 for i in x], vals, 0.38, label=label,
                          color=color)
            for b, v in zip(bars, vals):
                if v:
                    ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.2f}", ha="center",
                            va="bottom", fontsize=7)
        ax.set_xticks(list(x))
        ax.set_xticklabels([r["app"] for r in rows], rotation=20, fontsize=8)
        ax.set_ylabel("median wall time (s)")
        ax.set_title(f"n = {n} processes ({res['reps']} runs each)")
        ax.legend(fontsize=8)
    fig.suptitle("Average execution time of exemplars with Open MPI and with msg")
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "fig6.png"), dpi=120)
    print("wrote", os.path.join(outdir, "fig6.png"))


if __name__ == "__main__":
    main()
