"""The solvers on data as given (issue 31's root causes): three tables.

1. ``lsq``: the whole public call of the squared loss on small dense sets --
   ``LinearRegressor()``, ``solve(loss="squared", lam=1/n)`` and
   scikit-learn's ``Ridge()`` (the same ``lam = alpha / n``; its intercept is
   not regularized, ours is a regularized constant feature) -- min and median
   of ``--repeats`` warm calls, interleaved, with R^2 on the training data.
2. ``ipm``: the interior-point method on the hinge (classification sets) and
   on the absolute / epsilon-insensitive losses (regression sets), as given,
   C in {0.01, 1, 100} (lam = 1/(C n)): iterations, stop reason, relative gap,
   seconds; beside SDCA at the same tol and epoch budget.
3. the same IPM cells on the synthetic stand-ins of the issue's held-out sets
   (59k x 8 with column scales 1e-2 .. 1e3 and 1 .. 4.9e3; 8k x 12 CPU-like).

Writes benchmarks/results/unscaled-fixes.md.  The machine is shared: the
header records ``uptime``; read the times as ratios within a row.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
from sklearn.linear_model import Ridge

import primaldual
from primaldual.datasets import load_svmlight
from primaldual.datasets.regimes import make_mixed_scales

sys.path.insert(0, os.path.dirname(__file__))
from _common import shared_file, write_result  # noqa: E402

LSQ_SETS = ("housing_scale", "abalone", "cadata")
HINGE_SETS = ("breast-cancer", "australian", "heart", "german.numer", "fourclass",
              "svmguide1", "magic04", "default_cc")
REG_SETS = ("housing_scale", "abalone", "cadata")


def _dense(name):
    path = shared_file(name)
    if path is None:
        return None
    X, y = load_svmlight(path)
    return np.ascontiguousarray(X.toarray()), np.asarray(y, dtype=np.float64)


def _timed(fn, repeats):
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts), statistics.median(ts)


def lsq_table(repeats):
    rows = ["| set | n x d | LinearRegressor() min / median ms | solve() min / median ms "
            "| Ridge() min / median ms | ours / Ridge (median) | R^2 ours / Ridge |",
            "|---|---|---|---|---|---|---|"]
    for name in LSQ_SETS:
        data = _dense(name)
        if data is None:
            continue
        X, y = data
        n = X.shape[0]
        primaldual.LinearRegressor().fit(X, y)          # warm-up (compiles)
        ours = _timed(lambda: primaldual.LinearRegressor().fit(X, y), repeats)
        sol = _timed(lambda: primaldual.solve(X, y, loss="squared", lam=1.0 / n), repeats)
        ridge = _timed(lambda: Ridge().fit(X, y), repeats)
        r2a = primaldual.LinearRegressor().fit(X, y).score(X, y)
        r2b = Ridge().fit(X, y).score(X, y)
        rows.append(f"| {name} | {n} x {X.shape[1]} | {1e3 * ours[0]:.2f} / {1e3 * ours[1]:.2f} "
                    f"| {1e3 * sol[0]:.2f} / {1e3 * sol[1]:.2f} | {1e3 * ridge[0]:.2f} / "
                    f"{1e3 * ridge[1]:.2f} | {ours[1] / ridge[1]:.1f}x | {r2a:.4f} / {r2b:.4f} |")
    return rows


def _cell(X, y, loss, C, solver, tol):
    lam = 1.0 / (C * X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        r = primaldual.solve(X, y, loss=loss, lam=lam, solver=solver, tol=tol,
                             max_epochs=1000)
        sec = time.perf_counter() - t
    return f"{r.n_epochs:g}, {r.stop_reason}, {r.rel_gap:.1e}, {sec:.2f}s"


def ipm_rows(name, X, y, loss, tol):
    out = []
    for C in (0.01, 1.0, 100.0):
        out.append(f"| {name} | {X.shape[0]} x {X.shape[1]} | {loss} | {C:g} | "
                   f"{_cell(X, y, loss, C, 'ipm', tol)} | {_cell(X, y, loss, C, 'sdca', tol)} |")
    return out


def _cpu_like(n=8192, d=12, seed=0):
    rng = np.random.default_rng(seed)
    scales = np.geomspace(1.0, 1e5, d)
    X = np.exp(rng.standard_normal((n, d))) * scales
    t = np.log1p(X / scales) @ rng.uniform(-1, 1, d)
    return np.ascontiguousarray(X), np.clip(60 + 10 * t + 3 * rng.standard_normal(n), 0, 100)


def ipm_table(tol):
    rows = ["| data | n x d | loss | C | IPM: iterations, stop, rel. gap, time "
            "| SDCA: epochs, stop, rel. gap, time |", "|---|---|---|---|---|---|"]
    for name in HINGE_SETS:
        data = _dense(name)
        if data is not None:
            X, y = data
            rows += ipm_rows(name, X, np.where(y == y.max(), 1.0, -1.0), "hinge", tol)
    for name in REG_SETS:
        data = _dense(name)
        if data is not None:
            for loss in ("absolute", "epsilon_insensitive"):
                rows += ipm_rows(name, *data, loss, tol)
    for lo, hi in ((1e-2, 1e3), (1.0, 4.9e3)):
        X, y = make_mixed_scales(smallest_scale=lo, largest_scale=hi)
        rows += ipm_rows(f"mixed scales {lo:g}..{hi:g}", X, y, "hinge", tol)
    X, y = _cpu_like()
    for loss in ("absolute", "epsilon_insensitive"):
        rows += ipm_rows("CPU-like", X, y, loss, tol)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--skip-ipm", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                  "unscaled-fixes.md"))
    a = ap.parse_args(argv)
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines = ["# Solvers on data as given (issue 31)", "",
             f"Machine: 2 cores shared with other jobs; `uptime` at start: `{up}`.", "",
             "## Squared loss: the whole public call against Ridge()", ""]
    lines += lsq_table(a.repeats)
    if not a.skip_ipm:
        lines += ["", f"## IPM on unscaled data (tol {a.tol:g}, max_epochs 1000)", ""]
        lines += ipm_table(a.tol)
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines += ["", f"`uptime` at the end: `{up}`."]
    write_result(a.out, lines)


if __name__ == "__main__":
    main()
