"""One default fit of the real-data grid, with every problem's legs.

Fits the default estimator (``solver="auto"``, tol 1e-6) on one cell of
``bench_auto_real.py``'s grid (set, scaling, loss, C with ``lam = 1/(C n)``)
and writes, per one-vs-rest problem that needed more than one leg or ended
uncertified, the legs (method, seconds, gap at hand-over, reason), with the
wall and CPU time of the whole fit, the worst certified gap and the test score.

    python benchmarks/bench_default_cell.py news20.bz2 "as given" logistic 100 \
        --out benchmarks/results/default-cell-news20-logistic-C100.md
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_auto_real as bar  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("set")
    ap.add_argument("scaling", choices=("as given", "standardized"))
    ap.add_argument("loss")
    ap.add_argument("C", type=float)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    X, y, Xt, yt = bar.load(args.set, 0)
    if args.scaling == "standardized":
        X, Xt = bar.standardize(X, Xt)
    regression = args.loss in ("squared", "absolute", "epsilon_insensitive")
    est = bar.ours(args.loss, args.C, X.shape[0], regression)
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    conv = np.atleast_1d(est.converged_)
    paths = est.solver_path_
    paths = paths if paths and isinstance(paths[0], list) else [paths]
    lines = [f"# Default fit: {args.set} {args.scaling}, {args.loss}, C = {args.C:g}", "",
             f"Written by `python benchmarks/bench_default_cell.py {args.set} \"{args.scaling}\" "
             f"{args.loss} {args.C:g}` at commit {commit}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 1-minute load "
             f"{load0:.2f} before and {os.getloadavg()[0]:.2f} after (2 cores).", "",
             f"- {X.shape[0]} x {X.shape[1]}, {len(paths)} problem(s); wall {wall:.1f} s, "
             f"CPU {cpu:.1f} s",
             f"- worst certified relative gap {float(np.max(est.rel_gap_)):.2e}; uncertified: "
             f"{int(np.sum(~conv))} of {conv.size}",
             f"- test score {bar.score(est, Xt, yt, regression):.4f}",
             f"- warnings: {len(caught)}", "", "| problem | legs (method, s, gap, reason) |",
             "|---|---|"]
    for k, legs in enumerate(paths):
        if len(legs) > 1 or legs[-1]["reason"] != "converged":
            desc = " > ".join(f"{leg['method']} {leg['seconds']:.2f} s {leg['gap']:.1e} "
                              f"({leg['reason'].split(':')[0]})" for leg in legs)
            lines.append(f"| {k} | {desc} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
