"""Multinomial Newton steps in the rows against steps in the features, on news20.

Two parts (``docs/multiclass-models.md``, "Steps in the rows"):

* ``--point``: the default fit of a cell stopped at ``--passes`` passes; at its
  point, CG on ``H s = -g`` preconditioned by ``H``'s diagonal (the feature
  steps) and CG in the rows (:class:`RowSpaceSystem`, block Jacobi), each
  capped at a number of products: the Newton residual ``||H s + g|| / ||g||``
  in the features and the model's decrease ``g.s + s.Hs / 2`` reached.
* ``--cells``: default fits, ``solve(X, y, loss="multinomial", lam=1/(C n))``
  with ``newton_system`` as given (``auto``, the default, or ``features``, the
  path before the rows), one line each: seconds, passes, certified gap, Newton
  steps, CG products, steps in the rows.

    python benchmarks/bench_multinomial_rows.py --point std:100 --passes 1500
    python benchmarks/bench_multinomial_rows.py --cells std:100,given:100 [--system features]

Data: news20 from ``../shared/data`` (``primaldual.datasets.load``), labels
encoded, standardized as ``bench_multiclass_defaults.py`` does
(``StandardScaler(with_mean=False)``).  Output: Markdown lines on stdout (the
results file ``results/multinomial-news20-rows.md`` collects them with the
machine's load).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import LabelEncoder, StandardScaler

from primaldual import solve
from primaldual.datasets import load
from primaldual._util.cg import flat_dot, pcg
from primaldual.multiclass import softmax
from primaldual.rows import as_rows
from primaldual.solvers.multinomial_rows import RowSpaceSystem


def news20(scaling):
    X, y = load("news20")
    y = LabelEncoder().fit_transform(y)
    if scaling == "std":
        X = StandardScaler(with_mean=False).fit_transform(X)
    return sp.csr_matrix(X), y


def point(scaling, C, passes, caps):
    X, y = news20(scaling)
    n, K = X.shape[0], int(y.max()) + 1
    lam = 1.0 / (C * n)
    r = solve(X, y, loss="multinomial", lam=lam, max_epochs=passes)
    coef = r.coef
    P = softmax(np.asarray(X @ coef))
    Y = np.eye(K)[y]
    XT = X.T.tocsr()
    g = np.asarray(XT @ (P - Y)) / n + lam * coef

    def hv(D):
        Q = P * np.asarray(X @ D)
        Q -= P * Q.sum(1, keepdims=True)
        return np.asarray(XT @ Q) / n + lam * D

    def report(name, s, products):
        res = np.linalg.norm(hv(s) + g) / np.linalg.norm(g)
        dec = float((g * s).sum() + 0.5 * (s * hv(s)).sum())
        print(f"| {name} | {products} | {res:.1e} | {dec:.4e} |", flush=True)

    print(f"\nnews20 {scaling} C = {C:g}: the default fit after {r.n_epochs:g} passes, "
          f"relative gap {r.rel_gap:.2e}; load {os.getloadavg()[0]:.2f}\n")
    print("| CG | products | Newton residual in the features | model decrease |")
    print("|---|---|---|---|")
    diag = lam + np.asarray((X.multiply(X)).T @ (P * (1 - P))) / n
    for cap in caps:
        s, _, it = pcg(hv, lambda v: v / diag, -g, 0.0, cap, flat_dot)
        report("features, H's diagonal", s, it)
    system = RowSpaceSystem(X, XT, as_rows(X).sqnorm, P, np.ones(n), float(n), lam)
    for cap in caps:
        s, it, ok = system.solve(g, cap)
        report(f"rows, block Jacobi{'' if ok else ' (not converged)'}", s, it + 1)


def cells(specs, system):
    print("| scaling | C | newton_system | s | passes | certified gap | certified | Newton "
          "steps | CG products | steps in the rows | load (start, end) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in specs:
        scaling, C = spec.split(":")
        C = float(C)
        X, y = news20(scaling)
        l0 = os.getloadavg()[0]
        t = time.perf_counter()
        r = solve(X, y, loss="multinomial", lam=1.0 / (C * X.shape[0]),
                  **({} if system == "auto" else {"newton_system": system}))
        el = time.perf_counter() - t
        tr = r.trace[-1]
        ok = r.converged and r.rel_gap <= 1e-6
        print(f"| {'standardized' if scaling == 'std' else 'as given'} | {C:g} | {system} | "
              f"{el:.1f} | {r.n_epochs:g} | {r.rel_gap:.1e} | {'yes' if ok else '**no**'} | "
              f"{tr.get('newton_iter')} | {tr.get('cg_iter')} | {tr.get('rows_steps', '-')} | "
              f"{l0:.1f}, {os.getloadavg()[0]:.1f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--point", default=None, help="scaling:C, e.g. std:100")
    ap.add_argument("--passes", type=int, default=1500)
    ap.add_argument("--caps", default="100,300,1000")
    ap.add_argument("--cells", default=None, help="comma-separated scaling:C")
    ap.add_argument("--system", default="auto", choices=("auto", "features", "rows"))
    args = ap.parse_args()
    if args.point:
        scaling, C = args.point.split(":")
        point(scaling, float(C), args.passes, [int(c) for c in args.caps.split(",")])
    if args.cells:
        cells(args.cells.split(","), args.system)


if __name__ == "__main__":
    main()
