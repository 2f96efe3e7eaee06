"""n_jobs on the L1 cross-validation route (issue 33): one thread against two.

For each set of ``../shared/data`` named below (as given, binary labels),
``LinearClassifierCV(loss, penalty="l1", Cs=10 values, cv=5, tol=1e-6)``,
the whole public ``fit`` with ``n_jobs=1`` and ``n_jobs=2`` in interleaved
repetitions (1, 2, 1, 2), the median of each and their ratio, the schedule
the fit chose (``cv_n_jobs_plan_["reason"]``) and whether both gave the same
``C_`` and ``cv_scores_``.  Beside it, scikit-learn's
``LogisticRegressionCV(penalty="l1", solver="liblinear")`` with the same
``Cs`` and folds at its default tolerance, ``n_jobs=1`` and ``2`` (a
different stop rule: it certifies nothing; its times are context, not a
matched comparison).  The header records the load average at the start and
the end.  Writes ``benchmarks/results/cv-njobs.md``.

    python benchmarks/bench_cv_njobs.py [--sets a9a,phishing] [--reps 2]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegressionCV  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

import primaldual as pd  # noqa: E402
from primaldual.bench.report import cpu_model  # noqa: E402

CS = np.logspace(-2, 1, 10)


def _fit(X, y, loss, n_jobs):
    t0 = time.perf_counter()
    est = pd.LinearClassifierCV(loss=loss, penalty="l1", Cs=CS, cv=StratifiedKFold(5),
                                tol=1e-6, random_state=0, n_jobs=n_jobs).fit(X, y)
    return time.perf_counter() - t0, est


def _sklearn(X, y, n_jobs):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", FutureWarning)
        LogisticRegressionCV(Cs=CS, cv=StratifiedKFold(5), penalty="l1",
                             solver="liblinear", n_jobs=n_jobs).fit(X, y)
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="a9a,phishing,reuters,cocoa-small")
    ap.add_argument("--losses", default="logistic,squared_hinge")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/cv-njobs.md"))
    args = ap.parse_args(argv)
    start_load = os.getloadavg()
    rows = []
    for name in args.sets.split(","):
        try:
            X, y = pd.datasets.load(name, download=False)[:2]
        except Exception as exc:            # noqa: BLE001  (a set not in ../shared/data)
            print(f"{name}: skipped ({exc})", flush=True)
            continue
        few = np.concatenate([np.flatnonzero(y == c)[:250] for c in np.unique(y)])
        _fit(X[few], y[few], "logistic", 1)            # compile
        for loss in args.losses.split(","):
            times = {1: [], 2: []}
            ests = {}
            for _ in range(args.reps):
                for k in (1, 2):
                    s, est = _fit(X, y, loss, k)
                    times[k].append(s)
                    ests[k] = est
            same = (ests[1].C_ == ests[2].C_
                    and np.array_equal(ests[1].cv_scores_, ests[2].cv_scores_))
            sk = ({k: _sklearn(X, y, k) for k in (1, 2)} if loss == "logistic" else {})
            t1, t2 = np.median(times[1]), np.median(times[2])
            row = (f"| {name} | {X.shape[0]} x {X.shape[1]} | {loss} | {t1:.2f} | {t2:.2f} | "
                   f"**{t2 / t1:.2f}** | {'yes' if same else 'NO'} | "
                   f"{ests[2].cv_rel_gaps_.max():.1e} | "
                   + (f"{sk[1]:.2f} / {sk[2]:.2f}" if sk else "—")
                   + f" | {ests[2].cv_n_jobs_plan_['reason']} |")
            print(row, flush=True)
            rows.append(row)
    end_load = os.getloadavg()
    head = [
        "# n_jobs on the L1 cross-validation route (benchmarks/bench_cv_njobs.py)", "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {cpu_model()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}.  Load average "
        f"(1 min) {start_load[0]:.2f} at the start, {end_load[0]:.2f} at the end.", "",
        "`LinearClassifierCV(loss, penalty='l1', Cs=np.logspace(-2, 1, 10), "
        "cv=StratifiedKFold(5), tol=1e-6, random_state=0)`, the whole `fit` (five "
        "folds' screened paths and the refit), median of "
        f"{args.reps} interleaved runs each.  'same': `C_` and `cv_scores_` equal "
        "bitwise.  scikit-learn: `LogisticRegressionCV(penalty='l1', "
        "solver='liblinear')`, same Cs and folds, its default tol (no certificate; "
        "context only).", "",
        "| set | n x d | loss | n_jobs=1 s | n_jobs=2 s | 2 / 1 | same | largest fold rel. "
        "gap | sklearn liblinear CV s (n_jobs 1 / 2) | schedule (n_jobs=2) |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    Path(args.out).write_text("\n".join(head + rows) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
