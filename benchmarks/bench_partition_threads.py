"""In-process row partitions on the threads ``n_jobs`` asks for, against the
same partitions on one thread: Crammer-Singer's CoCoA+ (``crammer_singer_cocoa``,
its rounds and checks) and the L1 proximal Newton on partitions
(``l1_newton``, every sum over rows).  Both modes compute the same numbers (the
script checks the coefficients bit for bit); only the wall time differs.  The
modes alternate in one process, on real sets of ``../shared/data`` as given:

* Crammer-Singer, ``n_partitions=2``, ``lam = 1 / n`` (``C = 1``), a fixed
  number of epochs (``tol=0``): news20 (20 classes, 50 epochs) and letter.scale
  (26 classes, 200 epochs);
* L1 logistic, ``l1_newton``, ``l1 = l1_max / 100``, to ``tol = 1e-6``:
  covtype (581,012 x 54) and a9a; ``n_partitions=2`` on one thread against
  ``n_jobs=2`` (which makes the same 2 partitions).

    python benchmarks/bench_partition_threads.py [--reps 3] [--out results/....md]

Each partition's call runs on a thread only where each thread gets a million
values (``nnz K`` for Crammer-Singer, ``nnz`` for L1); the table gives the
threads used.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_auto_real as B  # noqa: E402

import primaldual  # noqa: E402
from primaldual.regpath import lam_max  # noqa: E402

CELLS = [
    ("crammer_singer", "news20.bz2", dict(max_epochs=50)),
    ("crammer_singer", "letter.scale", dict(max_epochs=200)),
    ("l1_logistic", "covtype.libsvm.binary.bz2", {}),
    ("l1_logistic", "a9a", {}),
]


def fit(kind, X, y, n_jobs, extra):
    if kind == "crammer_singer":
        kw = dict(loss="crammer_singer", lam=1.0 / X.shape[0], solver="crammer_singer_cocoa",
                  n_partitions=2, tol=0.0, random_state=0, **extra)
    else:
        l1 = lam_max(X, y, "logistic", penalty="l1") / 100
        kw = dict(loss="logistic", lam=0.0, l1=l1, solver="l1_newton", tol=1e-6,
                  **({"n_partitions": 2} if n_jobs == 1 else {}))
    t = time.perf_counter()
    res = primaldual.solve(X, y, n_jobs=n_jobs, **kw)
    return time.perf_counter() - t, res


def _commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parent).stdout.strip()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows = []
    for kind, name, extra in CELLS:
        if B.shared_file(name) is None:
            print(f"skip {name}: not in ../shared/data", flush=True)
            continue
        X, y, _, _ = B.load(name, 0)
        if kind == "crammer_singer":
            y = np.unique(y, return_inverse=True)[1]
        else:                                   # covtype's labels are 1 and 2
            y = np.where(y == np.unique(y)[-1], 1.0, -1.0)
        fit(kind, X[:200], y[:200], 2, extra)              # compile
        times = {1: [], 2: []}
        for rep in range(args.reps):
            for n_jobs in (1, 2) if rep % 2 == 0 else (2, 1):
                s, res = fit(kind, X, y, n_jobs, extra)
                times[n_jobs].append(s)
                if n_jobs == 1:
                    ref = res
                else:
                    two = res
                print(f"{name} {kind} n_jobs={n_jobs} {s:.3f}s gap {res.rel_gap:.2e} "
                      f"epochs {res.n_epochs:g} threads {res.trace[-1].get('threads')} "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
        same = np.array_equal(ref.coef, two.coef) and ref.rel_gap == two.rel_gap
        t1, t2 = float(np.median(times[1])), float(np.median(times[2]))
        rows.append(f"| {name} | {X.shape[0]:,} x {X.shape[1]:,} | {kind} | "
                    f"{two.trace[-1].get('threads')} | {ref.n_epochs:g} | {ref.rel_gap:.1e} | "
                    f"{t1:.3f} | {t2:.3f} | **{t2 / t1:.2f}** | {'yes' if same else 'NO'} |")
    text = "\n".join([
        "# In-process partitions on threads (benchmarks/bench_partition_threads.py)",
        "",
        f"Run {start}, library at {_commit()}; 2 cores; "
        f"median of {args.reps} fits per mode, the modes alternating; `uptime` load at the "
        f"end {os.getloadavg()[0]:.1f}.  `n_jobs=2` against the same 2 partitions on one "
        f"thread; same numbers: the coefficients bit for bit and the gap.",
        "",
        "| set | n x d | model | threads | epochs | gap | 1 thread s | 2 threads s | ratio "
        "| same numbers |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
        *rows, ""])
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
