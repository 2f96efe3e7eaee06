"""Default sparse (L1) fits on the real sets: does every one certify?

``LinearClassifier(penalty="l1", C=C, loss=loss)`` with every other default
(``solver="auto"``, ``tol=1e-6``) on each classification set of
``../shared/data`` (the files ``bench_auto_real.py`` reads, with its test
files and scaling), as given and standardized (``StandardScaler``, without
centering on sparse data), at ``C = 0.01, 1, 100``, for the logistic and the
squared hinge losses.  A cell is certified when every fitted problem (one per
class pair for one-vs-rest) reports ``converged_`` and a relative gap of at
most ``tol``.  An uncertified default fit is a defect (the project brief).

    python benchmarks/bench_l1_defaults.py [--sets a1a,a9a] [--out FILE]

Each cell is printed as it ends (a long run can be stopped and still read);
``--out`` writes the Markdown table of the cells that ran.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_auto_real as B  # noqa: E402
from _common import write_result  # noqa: E402

import primaldual  # noqa: E402

LOSSES = ("logistic", "squared_hinge")
CS = (0.01, 1.0, 100.0)


def cell(X, y, loss, C, tol):
    """(seconds, largest relative gap, every problem converged, nonzeros, the
    solvers' legs)."""
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = primaldual.LinearClassifier(penalty="l1", C=C, loss=loss, tol=tol).fit(X, y)
    return (time.perf_counter() - t, float(np.max(est.rel_gap_)),
            bool(np.all(est.converged_)), int(np.count_nonzero(est.coef_)), legs(est))


def legs(est) -> str:
    """The methods of the fit's legs, ``l1cd -> l1_ipm`` (the distinct paths of
    a one-vs-rest fit joined by ``;``)."""
    paths = est.solver_path_
    paths = paths if paths and isinstance(paths[0], list) else [paths]
    out = []
    for p in paths:
        s = " -> ".join(leg["method"] for leg in p) if p else est.solver_
        if s not in out:
            out.append(s)
    return "; ".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=None, help="comma-separated file names (default: all)")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    names = args.sets.split(",") if args.sets else B.all_sets()
    start, rows = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), []
    for name in names:
        if name in B.REGRESSION:
            continue
        X, y, Xt, _ = B.load(name, 0)
        for scaling in ("as given", "standardized"):
            Xs = X if scaling == "as given" else B.standardize(X, Xt)[0]
            for loss in LOSSES:
                for C in CS:
                    s, gap, conv, nnz, solver = cell(Xs, y, loss, C, args.tol)
                    ok = conv and gap <= args.tol
                    rows.append((name, X.shape, scaling, loss, C, s, gap, ok, nnz, solver))
                    print(f"{name:26s} {scaling:12s} {loss:14s} C={C:<6} {s:8.2f}s "
                          f"gap {gap:.1e} {'certified' if ok else 'UNCERTIFIED'} "
                          f"nnz {nnz} {solver}", flush=True)
    if args.out:
        bad = [r for r in rows if not r[7]]
        lines = [
            "# Default L1 fits on the real sets (benchmarks/bench_l1_defaults.py)", "",
            f"`{' '.join(['python benchmarks/bench_l1_defaults.py'] + (argv or sys.argv[1:]))}` "
            f"({start} to {time.strftime('%H:%M UTC', time.gmtime())}); load average at the "
            f"end {', '.join(f'{x:.2f}' for x in os.getloadavg())}.  "
            f"`LinearClassifier(penalty='l1', C, loss)`, every other option at its default, "
            f"tol = {args.tol:g}.", "",
            f"**{len(rows) - len(bad)} of {len(rows)} cells certified.**", "",
            "| set | scaling | loss | C | s | rel gap | certified | nonzeros | solver |",
            "|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r[0]} ({r[1][0]:,} x {r[1][1]:,}) | {r[2]} | {r[3]} | {r[4]:g} | "
                  f"{r[5]:.2f} | {r[6]:.1e} | {'yes' if r[7] else '**no**'} | {r[8]} | {r[9]} |"
                  for r in rows]
        write_result(args.out, lines)


if __name__ == "__main__":
    main()
