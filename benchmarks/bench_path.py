"""Warm vs cold starts on a 20-point regularization path (primaldual.path).

Runs ``path(X, y, n_lams=20, eps=...)`` twice per loss -- each point
warm-started from the previous point's dual certificate, then every point
from alpha = 0 -- and prints the total epochs, the time and how many points
reached ``tol``.  Both runs certify every point to the same relative gap, so
the optima agree (checked: max relative difference of the primal values).

    PYTHONPATH=src python benchmarks/bench_path.py [--data a9a] [--tol 1e-6]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import primaldual
from primaldual.datasets import load_svmlight
from primaldual.regpath import lam_max

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load(name, n_features=None):
    X, y = load_svmlight(DATA / name, n_features=n_features)
    y = np.where(y == y.max(), 1.0, -1.0)
    return sp.csr_matrix(X), y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="a9a")
    ap.add_argument("--losses", default="logistic,squared_hinge,hinge")
    ap.add_argument("--eps", default="1e-3,1e-5")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-epochs", type=float, default=1000)
    ap.add_argument("--solver", default="sdca")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    X, y = load(args.data)
    print(f"# data={args.data} n={X.shape[0]} d={X.shape[1]} nnz={X.nnz} "
          f"solver={args.solver} tol={args.tol:g} max_epochs={args.max_epochs:g}")
    t = time.perf_counter()
    primaldual.solve(X[:50], y[:50], loss="logistic", lam=1.0, solver=args.solver,
                     max_epochs=1)
    print(f"# first call (Numba compile or cache load): {time.perf_counter() - t:.2f} s")
    rows = []
    for loss in args.losses.split(","):
        for eps in map(float, args.eps.split(",")):
            out = {"loss": loss, "eps": eps, "lam_max": lam_max(X, y, loss)}
            res = {}
            for mode in ("warm", "cold"):
                t = time.perf_counter()
                r = primaldual.path(X, y, n_lams=20, eps=eps, loss=loss, tol=args.tol,
                                    max_epochs=args.max_epochs, random_state=0,
                                    solver=args.solver, warm_start=(mode == "warm"))
                out[f"{mode}_epochs"] = r.total_epochs
                out[f"{mode}_time_s"] = time.perf_counter() - t
                out[f"{mode}_converged"] = int(r.converged.sum())
                res[mode] = r
            out["epoch_ratio"] = out["warm_epochs"] / out["cold_epochs"]
            out["max_rel_primal_diff"] = float(np.max(
                np.abs(res["warm"].primal - res["cold"].primal) / res["cold"].primal))
            rows.append(out)
            print(f"{loss:14s} eps={eps:g} lam {out['lam_max']:.3g}..{out['lam_max'] * eps:.3g}: "
                  f"warm {out['warm_epochs']:7.0f} epochs {out['warm_time_s']:6.2f}s "
                  f"({out['warm_converged']}/20 conv) | cold {out['cold_epochs']:7.0f} epochs "
                  f"{out['cold_time_s']:6.2f}s ({out['cold_converged']}/20 conv) | "
                  f"warm/cold {out['epoch_ratio']:.2f} | max rel dP {out['max_rel_primal_diff']:.1e}",
                  flush=True)
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
