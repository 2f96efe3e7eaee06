"""The cost of ``auto``'s hand-over to ``l1_ipm``, side by side: on the default L1
cells whose fit now goes ``l1cd -> l1_ipm`` (read from a
``bench_l1_defaults.py`` results table), ``LinearClassifier(penalty="l1")``
with ``solver="auto"`` against ``solver="l1cd"`` alone, alternating in one
process, best of ``--repeat`` each, CPU seconds (``time.process_time``, one BLAS
thread), so that the machine's load moves both alike.

    python benchmarks/bench_l1_ipm_ab.py --table benchmarks/results/l1-defaults-1200.md

``--baseline-src DIR`` compares ``solver="auto"`` with itself across library
versions instead: this tree against the ``src`` directory of another checkout
(an earlier commit, ``git worktree add DIR COMMIT``), each cell fitted in a
fresh process per version, the versions alternating, each process timing its
second fit (the first loads the compiled kernels).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_auto_real as B  # noqa: E402
from _common import write_result  # noqa: E402

import primaldual  # noqa: E402
from primaldual._util.blas import serial_blas  # noqa: E402


def handed_over(table):
    """The cells of ``table`` whose path contains ``l1_ipm``."""
    out = []
    for line in open(table):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) == 9 and "l1_ipm" in c[8]:
            out.append((re.sub(r" \(.*\)", "", c[0]), c[1], c[2], float(c[3])))
    return out


def fit(X, y, loss, C, solver):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.process_time()
        est = primaldual.LinearClassifier(penalty="l1", C=C, loss=loss, solver=solver,
                                          random_state=0).fit(X, y)
        return (time.process_time() - t, float(np.max(est.rel_gap_)),
                bool(np.all(est.converged_)), int(np.count_nonzero(est.coef_)))


def _data(name, scaling, loaded):
    if name not in loaded:
        X, y, Xt, _ = B.load(name, 0)
        loaded.clear()
        loaded[name] = (X, y, B.standardize(X, Xt)[0])
    X, y, Xs = loaded[name]
    return (X if scaling == "as given" else Xs), y


def fit_in(src, cell):
    """``fit(..., "auto")`` of ``cell`` in a new process on the library at ``src``
    (its second fit)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, __file__, "--one", json.dumps(cell)], env=env,
                         capture_output=True, text=True, check=True)
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))


def one(cell):
    name, scaling, loss, C = cell
    X, y = _data(name, scaling, {})
    with serial_blas():
        fit(X, y, loss, C, "auto")
        print(json.dumps(fit(X, y, loss, C, "auto")))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--one"]:
        return one(json.loads(argv[1]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", required=True)
    ap.add_argument("--baseline-src", default=None,
                    help="another checkout's src: auto here against auto there")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--skip", default="", help="comma-separated sets to leave out")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    start, rows = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), []
    loaded = {}
    here = Path(__file__).resolve().parents[1] / "src"
    sides = ("auto", "baseline" if args.baseline_src else "l1cd")
    for name, scaling, loss, C in handed_over(args.table):
        if name in skip:
            continue
        best = {}
        for _ in range(args.repeat):
            for side in sides:
                if args.baseline_src:
                    src = here if side == "auto" else Path(args.baseline_src)
                    r = fit_in(src, (name, scaling, loss, C))
                else:
                    data, y = _data(name, scaling, loaded)
                    with serial_blas():
                        r = fit(data, y, loss, C, side)
                if side not in best or r[0] < best[side][0]:
                    best[side] = r
        a, c = best[sides[0]], best[sides[1]]
        rows.append((name, scaling, loss, C, a, c))
        print(f"{name:22s} {scaling:12s} {loss:14s} C={C:<6g} auto {a[0]:7.2f}s {a[1]:.1e} "
              f"{'cert' if a[2] else 'NO'} nnz {a[3]:4d} | {sides[1]} {c[0]:7.2f}s {c[1]:.1e} "
              f"{'cert' if c[2] else 'NO'} nnz {c[3]:4d} | {a[0] / max(c[0], 1e-9):.2f}",
              flush=True)
    if args.out:
        title = (f"auto against auto at {args.baseline_src}" if args.baseline_src else
                 "auto (l1cd -> l1_ipm) against l1cd alone")
        lines = [f"# {title} (benchmarks/bench_l1_ipm_ab.py)", "",
                 f"`{' '.join(['python benchmarks/bench_l1_ipm_ab.py'] + argv)}` "
                 f"({start} to {time.strftime('%H:%M UTC', time.gmtime())}); load average at "
                 f"the end {', '.join(f'{x:.2f}' for x in os.getloadavg())}.  CPU seconds, "
                 f"best of {args.repeat}, alternating, one BLAS thread, random_state=0.", "",
                 f"| set | scaling | loss | C | auto s | gap | certified | nnz | {sides[1]} s | "
                 f"gap | certified | nnz | auto / {sides[1]} |", "|---|" * 1 + "---|" * 12]
        lines += [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:g} | {r[4][0]:.2f} | {r[4][1]:.1e} | "
                  f"{'yes' if r[4][2] else '**no**'} | {r[4][3]} | {r[5][0]:.2f} | "
                  f"{r[5][1]:.1e} | {'yes' if r[5][2] else '**no**'} | {r[5][3]} | "
                  f"{r[4][0] / max(r[5][0], 1e-9):.2f} |" for r in rows]
        write_result(args.out, lines)


if __name__ == "__main__":
    main()
