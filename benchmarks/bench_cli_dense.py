"""Dense LIBSVM files read dense: ``primaldual fit`` on a dense file, from CSR
rows against dense rows (docs/cli.md, "Data files").

A seeded 30,000 x 100 dense Gaussian problem with a planted model is written
as a LIBSVM file.  For each repeat (interleaved), the default logistic fit
(``solve(X, y, loss="logistic", lam=1e-4)``) runs on the file's CSR matrix and
on its ``toarray()``, and the whole command, ``primaldual fit FILE --loss
logistic --json`` (read + fit), runs in process on the same file with the rule
on (dense) and off (CSR, ``DENSE_MIN_DENSITY`` set above 1).  Reported: the
median of ``--repeats`` and the ratio CSR / dense, measured side by side.

Writes benchmarks/results/cli-dense.md.  The machine may be loaded by other
work: read the ratios, which compare runs made in the same minutes.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

import primaldual
from primaldual import cli
from primaldual.cli import files

ROOT = Path(__file__).resolve().parents[1]


def _write(path, n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + rng.standard_normal(n) > 0, 1, -1)
    dump_svmlight_file(X, y, str(path), zero_based=False)


def _cli_fit(path, dense_rule):
    saved = files.DENSE_MIN_DENSITY
    files.DENSE_MIN_DENSITY = saved if dense_rule else 2.0
    try:
        out = io.StringIO()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(out):
            code = cli.main(["fit", str(path), "--loss", "logistic", "--json", "--quiet"])
        wall = time.perf_counter() - t0
    finally:
        files.DENSE_MIN_DENSITY = saved
    assert code == 0
    return wall, json.loads(out.getvalue().strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30000)
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "cli-dense.md"))
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dense.svm"
        _write(path, a.n, a.d)
        Xs, yr = load_svmlight_file(str(path))
        Xs = sp.csr_matrix(Xs)
        Xd = Xs.toarray()
        y = np.where(yr > 0, 1.0, -1.0)
        for X in (Xs, Xd):                      # warm-up: compile both layouts
            primaldual.solve(X, y, loss="logistic", lam=1e-4, max_epochs=2)
        _cli_fit(path, True), _cli_fit(path, False)
        t = {"solve CSR": [], "solve dense": [], "fit CSR": [], "fit dense": []}
        res = {}
        for _ in range(a.repeats):
            for key, X in (("solve CSR", Xs), ("solve dense", Xd)):
                t0 = time.perf_counter()
                res[key] = primaldual.solve(X, y, loss="logistic", lam=1e-4)
                t[key].append(time.perf_counter() - t0)
            for key, rule in (("fit CSR", False), ("fit dense", True)):
                wall, s = _cli_fit(path, rule)
                t[key].append(wall)
                res[key] = s
    med = {k: statistics.median(v) for k, v in t.items()}
    lines = [
        "# Dense LIBSVM files read dense",
        "",
        f"`benchmarks/bench_cli_dense.py`: a {a.n:,} x {a.d} dense Gaussian logistic "
        f"problem (lam = 1e-4, solver auto, tol 1e-6), the median of {a.repeats} "
        f"interleaved repeats. The machine was shared with other work while this ran: "
        f"compare the ratios (same minutes), not the absolute times.",
        "",
        "| step | CSR rows (s) | dense rows (s) | CSR / dense |",
        "|---|---|---|---|",
        f"| `solve` | {med['solve CSR']:.3f} | {med['solve dense']:.3f} | "
        f"{med['solve CSR'] / med['solve dense']:.2f} |",
        f"| `primaldual fit` (read + fit) | {med['fit CSR']:.3f} | {med['fit dense']:.3f} | "
        f"{med['fit CSR'] / med['fit dense']:.2f} |",
        "",
        f"Solvers: {res['solve CSR'].solver} (CSR), {res['solve dense'].solver} (dense); "
        f"primal {res['solve CSR'].primal:.12g} (CSR) and {res['solve dense'].primal:.12g} "
        f"(dense); the command's JSON `storage`: {res['fit CSR']['storage']} / "
        f"{res['fit dense']['storage']}.",
        "",
    ]
    Path(a.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
