"""What certification costs inside `primaldual.solve(..., tol=1e-6)` (issue 12, item 2).

SDCA's checks are measured (``solver="sdca"``; Newton, which ``auto`` picks on
ill-conditioned problems, computes its certificate from its last gradient pass,
at no extra pass).  For each cell (data set, loss, lam) the whole public call is timed, after a
warm-up compile, with the adaptive check schedule (the default
``check_every="auto"``) and with a check after every epoch
(``check_every=1``, the former default).  Certification cost is the number of
exact checks that needed a pass over the data (the cold-start check at epoch 0
needs none) times the time of one certificate pass, measured on its own on the
same data; its share is that cost over the whole solve time.

Rows are scaled to unit norm, no bias.  Data: reuters, a9a and covtype from
../shared/data (skipped when absent) and the rcv1-shaped synthetic set.

    python benchmarks/bench_certificate.py            # writes benchmarks/results/certificate.md
    python benchmarks/bench_certificate.py --quick
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

LOSSES = ("hinge", "squared_hinge", "logistic")
LAMS = (1e-4, 1e-5, 1e-6)
TOL = 1e-6


def datasets(quick):
    out = {}
    X, y, _ = make_synthetic("rcv1", n_samples=5000 if quick else None)
    out["rcv1 shape"] = (X, y)
    for name, fname, rows in (("reuters", "reuters.bz2", None), ("a9a", "a9a", None),
                              ("covtype", "covtype.libsvm.binary.bz2",
                               50_000 if quick else None)):
        path = shared_file(fname)
        if path is None:
            print(f"# {name}: {fname} not found, skipped", flush=True)
            continue
        out[name] = unit_rows_binary(path, rows)
    return out


def timed(fn, reps):
    ts, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), float(np.min(ts)), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    sets = datasets(args.quick)
    X0, y0 = next(iter(sets.values()))
    for loss in LOSSES:                                     # warm-up compile
        pd.solve(X0[:200], y0[:200], loss=loss, lam=1e-3, max_epochs=2)
    lines = [f"# Certification cost inside `solve(solver=\"sdca\", tol={TOL:g})`", "",
             f"Machine: {cpu_model()}, 2 cores, one thread. Median of {args.reps} runs "
             f"of the whole call (warm-up compile excluded). `checks` counts the exact "
             f"checks that needed a pass over the data; `cert %` is checks x (one "
             f"certificate pass, timed alone) / solve time.", "",
             "| data | loss | lam | auto: time (s) | epochs | checks | cert % | "
             "every epoch: time (s) | epochs | checks | cert % | auto / every |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    shares = []
    for name, (X, y) in sets.items():
        for loss in LOSSES:
            prob = pd.Problem(X, y, loss=loss, lam=1e-5)
            w = np.full(prob.d, 1e-3)
            a = np.full(prob.n, 0.5) * y
            tc, _, _ = timed(lambda: prob.certificate(w, a), 5)
            for lam in LAMS:
                row = [name, loss, f"{lam:g}"]
                res_t = {}
                for ce in ("auto", 1):
                    med, mn, r = timed(lambda: pd.solve(X, y, loss=loss, lam=lam, tol=TOL,
                                                        solver="sdca", max_epochs=1000,
                                                        check_every=ce, time_limit=120),
                                       args.reps)
                    checks = len(r.trace) - 1
                    share = 100 * checks * tc / med
                    res_t[ce] = med
                    flag = "" if r.converged else " (not reached)"
                    row += [f"{med:.3f}{flag}", f"{r.n_epochs:.1f}", str(checks),
                            f"{share:.0f}"]
                    if ce == "auto":
                        shares.append((share, name, loss, lam))
                row.append(f"{res_t['auto'] / res_t[1]:.2f}")
                lines.append("| " + " | ".join(row) + " |")
                print(lines[-1], flush=True)
    shares.sort()
    lines += ["", f"Certification share with the adaptive schedule: median "
              f"{np.median([s[0] for s in shares]):.0f}%, worst {shares[-1][0]:.0f}% "
              f"({shares[-1][1]}, {shares[-1][2]}, lam {shares[-1][3]:g}); "
              f"{sum(s[0] <= 10 for s in shares)} of {len(shares)} cells at or under 10%."]
    out = ROOT / "benchmarks" / "results" / ("certificate-quick.md" if args.quick
                                             else "certificate.md")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-1:]))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
