"""SDCA epoch cost per stored nonzero: logistic against hinge, float64 against
float32 (issue 12, items 3 and 5).

For each data set, loss and dtype, one public call
``primaldual.solve(X, y, loss=..., lam=1e-5, tol=0, max_epochs=E, check_every=E,
shrinking=False)`` is timed whole (after a warm-up compile); it makes E epochs
and one certificate pass (the cold-start check needs none).  Reported:

* ``epoch`` -- the time inside the solver's ``advance`` (the epochs alone) per
  epoch per nonzero;
* ``call`` -- the whole call per epoch per nonzero (Problem construction, the
  epochs, the one certificate pass, everything);
* the ratio logistic / hinge, and float32 / float64.

Shrinking is off so that both losses visit every row in every epoch.  Data:
the rcv1 shape and the CCAT shape (781,265 x 47,236, 59M nonzeros;
``--no-ccat`` skips it), reuters and covtype from ../shared/data when present.
Median of ``--reps`` runs.

    python benchmarks/bench_epoch_cost.py      # writes benchmarks/results/epoch-cost.md
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import primaldual as pd  # noqa: E402
from primaldual.bench.report import cpu_model  # noqa: E402
from primaldual.datasets import make_synthetic  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import shared_file, unit_rows_binary  # noqa: E402
from primaldual.solvers import SOLVERS  # noqa: E402

LAM = 1e-5


def sets(ccat):
    out = {}
    X, y, _ = make_synthetic("rcv1")
    out["rcv1 shape"] = (X, y, 10)
    for name, fname in (("reuters", "reuters.bz2"), ("covtype", "covtype.libsvm.binary.bz2")):
        path = shared_file(fname)
        if path is None:
            continue
        out[name] = (*unit_rows_binary(path), 10)
    if ccat:
        X, y, _ = make_synthetic("CCAT")
        out["CCAT shape"] = (X, y, 4)
    return out


class AdvanceClock:
    """Sums the time spent in SDCASolver.advance (the epochs themselves)."""

    def __init__(self):
        self.total = 0.0
        cls = SOLVERS["sdca"]
        self.orig = cls.advance
        clock = self

        def advance(solver, *args):
            t = time.perf_counter()
            try:
                return clock.orig(solver, *args)
            finally:
                clock.total += time.perf_counter() - t
        cls.advance = advance


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-ccat", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    clock = AdvanceClock()
    data = sets(not args.no_ccat)
    for loss in ("hinge", "logistic"):
        X0, y0, _ = data["rcv1 shape"]
        for dt in (np.float64, np.float32):
            pd.solve(X0[:300].astype(dt), y0[:300], loss=loss, lam=1e-3, max_epochs=2)
    lines = ["# SDCA epoch cost (ns per stored nonzero per epoch)", "",
             f"Machine: {cpu_model()}; one thread; lam = {LAM:g}, no shrinking; median of "
             f"{args.reps} calls. `epoch`: the epochs alone; `call`: the whole "
             f"`solve` call (Problem construction, epochs, one certificate pass) per "
             f"epoch.", "",
             "| data | nnz | dtype | hinge epoch | hinge call | logistic epoch | "
             "logistic call | logistic / hinge (epoch) | (call) |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for name, (X, y, E) in data.items():
        for dt in (np.float64, np.float32):
            Xd = X.astype(dt)
            row = {}
            for loss in ("hinge", "logistic"):
                ep, call = [], []
                for rep in range(args.reps):
                    clock.total = 0.0
                    t = time.perf_counter()
                    pd.solve(Xd, y, loss=loss, lam=LAM, tol=0.0, max_epochs=E,
                             check_every=E, shrinking="auto" if loss == "logistic" else False,
                             random_state=rep)
                    call.append(time.perf_counter() - t)
                    ep.append(clock.total)
                scale = 1e9 / (E * X.nnz)
                row[loss] = (np.median(ep) * scale, np.median(call) * scale)
            h, lg = row["hinge"], row["logistic"]
            lines.append(f"| {name} | {X.nnz:,} | {np.dtype(dt).name} | {h[0]:.2f} | "
                         f"{h[1]:.2f} | {lg[0]:.2f} | {lg[1]:.2f} | {lg[0] / h[0]:.2f} | "
                         f"{lg[1] / h[1]:.2f} |")
            print(lines[-1], flush=True)
        del Xd
    out = ROOT / "benchmarks" / "results" / "epoch-cost.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
