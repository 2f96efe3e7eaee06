"""Single cells of benchmarks/bench_auto_real.py (the same measurements, by its
``cell``), for rerunning the cells a fix is about without the rest of a set's
grid (both scalings, every loss and C).

    python benchmarks/bench_auto_cells.py --cells dna.scale:standardized:squared_hinge:100 \\
        reuters.bz2:standardized:hinge:1:5000 --out benchmarks/results/auto-real-fixes.md

A cell is ``set:scaling:loss:C[:max_rows]`` (``max_rows`` as ``--quick``'s
5,000).  Writes the .md (the table of bench_auto_real.py, with the load
average at the start and the end) and a .jsonl beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_auto_real as B  # noqa: E402
from _common import write_result  # noqa: E402


def run_cell(spec, args, log):
    name, scaling, loss, C, *rest = spec.split(":")
    C, max_rows = float(C), int(rest[0]) if rest else 0
    regression = name in B.REGRESSION
    X, y, Xt, yt = B.load(name, max_rows)
    if scaling == "standardized":
        X, Xt = B.standardize(X, Xt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pick = np.random.default_rng(0).permutation(X.shape[0])[:300]
        for kw in [dict(), dict(n_jobs=2)] + [dict(solver=s, max_iter=2)
                                              for s in B.SINGLES if B.applies(s, loss)]:
            B.ours(loss, 1.0, 300, regression, **kw).fit(X[pick], y[pick])
        c = B.cell(X, y, Xt, yt, loss, C, regression, args)
    c.update(set=name, scaling=scaling, n=X.shape[0], d=X.shape[1], load=os.getloadavg()[0])
    log.write(json.dumps(c) + "\n")
    log.flush()
    print(f"{spec}: auto {c['auto_s']:.3f}s gap {c['gap']:.1e} [{c['path']}] best "
          f"{c['best_s']:.3f}s {c['singles']}", flush=True)
    return c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", nargs="+", required=True)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--cap", type=float, default=10.0)
    ap.add_argument("--min-cap", type=float, default=2.0)
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"
                                         / "auto-real-fixes.md"))
    args = ap.parse_args(argv)
    start = os.getloadavg()
    out = Path(args.out)
    with open(out.with_suffix(".jsonl"), "w") as log:
        rows = [run_cell(spec, args, log) for spec in args.cells]
    lines = ["# solver=\"auto\" on single cells of the real-data grid", "",
             f"Written by `python benchmarks/bench_auto_cells.py "
             f"{' '.join(a if a != args.note else '...' for a in (argv if argv is not None else sys.argv[1:]))}` "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Machine: 2 cores "
             f"shared with other work; load average at the start {start[0]:.2f}, "
             f"{start[1]:.2f}, {start[2]:.2f} and at the end {os.getloadavg()[0]:.2f} "
             f"(`uptime`): read times as ratios within a row. {args.repeats} repeat(s). "
             f"`*`: auto stopped before tol = 1e-6. Single candidates are capped at "
             f"{args.cap:g}x auto's time (at least {args.min_cap:g} s).",
             ] + (["", args.note] if args.note else []) + [
             "", "## Targets", ""] + B.summary(rows) + ["", "## Cells", ""] + B.table(rows)
    write_result(out, lines)


if __name__ == "__main__":
    main()
