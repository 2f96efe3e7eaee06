"""Where does Newton beat SDCA?  The measurements behind ``solver="auto"``.

For logistic and squared hinge at lam in {1e-4, 1e-5, 1e-6} (no bias, the
plain objective of docs/conventions.md §1) on

- unit-norm rows: a9a, reuters, a 50,000-row Covtype subset;
- standardized columns (``StandardScaler``, rows far from unit norm):
  scikit-learn's digits (classes 0-4 against 5-9), the same Covtype subset,
  and a synthetic 2,000 x 100 dense set (correlated Gaussian features, a
  planted logistic model);

it runs primaldual's ``sdca`` and ``newton`` to relative duality gap 1e-6
(each the whole ``solve`` call, after a warm-up compile; SDCA capped at 500
epochs or 20 s; BLAS limited to one thread for every run), reports what
``auto`` picks, and times two peers on the
same objective: LIBLINEAR's primal Newton (``-s 0`` / ``-s 2``,
``C = 1/(lam n)``, ``-B -1``) at ``-e 1e-4`` and ``-e 1e-6``, and, for
logistic, scikit-learn's ``LogisticRegression(solver="lbfgs",
fit_intercept=False, C=1/(lam n), tol=1e-8)``.  A peer's accuracy is its
relative primal sub-optimality against the lowest primal value any run
reached in the cell.  Also printed: the row-norm ratio ``mean ||x_i||^2 / (lam gamma n)``
the auto rule reads (gamma = 1 / smoothness of the loss).

    python benchmarks/bench_auto.py          # writes benchmarks/results/auto.md
"""
from __future__ import annotations

import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import primaldual
from primaldual.datasets import load_svmlight
from primaldual.solvers import resolve_solver

DATA = Path(os.environ.get("PRIMALDUAL_DATA",
                           Path(__file__).resolve().parents[2] / "shared" / "data"))
if not DATA.exists():
    DATA = Path("/work/shared/data")
LAMS = (1e-4, 1e-5, 1e-6)
LOSSES = ("logistic", "squared_hinge")
TOL = 1e-6


def _pm1(y):
    return np.where(y == y.max(), 1.0, -1.0)


def _unit(X):
    from sklearn.preprocessing import normalize
    return normalize(X, norm="l2", axis=1)


def _std(X):
    from sklearn.preprocessing import StandardScaler
    X = X.toarray() if sp.issparse(X) else X
    return np.ascontiguousarray(StandardScaler().fit_transform(X))


def datasets():
    from sklearn.datasets import load_digits
    out = []
    X, y = load_svmlight(str(DATA / "a9a"), n_features=123)
    out.append(("a9a (unit rows)", sp.csr_matrix(_unit(X)), _pm1(y)))
    X, y = load_svmlight(str(DATA / "reuters.bz2"))
    out.append(("reuters (unit rows)", sp.csr_matrix(_unit(X)), _pm1(y)))
    X, y = load_svmlight(str(DATA / "covtype.libsvm.binary.bz2"))
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(X.shape[0], 50_000, replace=False))
    Xc, yc = X[idx].toarray(), _pm1(y[idx])
    out.append(("covtype 50k (unit rows)", np.ascontiguousarray(_unit(Xc)), yc))
    out.append(("covtype 50k (standardized)", _std(Xc), yc))
    Xd, yd = load_digits(return_X_y=True)
    out.append(("digits (standardized)", _std(Xd), np.where(yd < 5, 1.0, -1.0)))
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((2000, 100)) @ rng.standard_normal((100, 100)) \
        + 3.0 * rng.standard_normal(100)
    w = rng.standard_normal(100) / 10.0
    p = 1.0 / (1.0 + np.exp(-(Z - Z.mean(0)) @ w))
    ys = np.where(rng.random(2000) < p, 1.0, -1.0)
    out.append(("synthetic 2000x100 (standardized)", _std(Z), ys))
    return out


def extra_cells():
    """Cells where the former rule (SPDC when R^2 / (lam gamma) > 1000 n) fires on
    unit-norm data: is Newton also faster than SPDC there?"""
    X, y = load_svmlight(str(DATA / "reuters.bz2"))
    Xr, yr = sp.csr_matrix(_unit(X)), _pm1(y)
    X, y = load_svmlight(str(DATA / "covtype.libsvm.binary.bz2"))
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(X.shape[0], 2000, replace=False))
    Xc, yc = np.ascontiguousarray(_unit(X[idx].toarray())), _pm1(y[idx])
    return [("reuters (unit rows)", Xr, yr, "logistic", 1e-7),
            ("reuters (unit rows)", Xr, yr, "logistic", 1e-8),
            ("reuters (unit rows)", Xr, yr, "squared_hinge", 1e-7),
            ("covtype 2k (unit rows)", Xc, yc, "logistic", 1e-7),
            ("covtype 2k (unit rows)", Xc, yc, "squared_hinge", 1e-7)]


def former_rule_fires(prob):
    """The auto rule before Newton: SPDC when R^2 / (lam gamma) > 1000 n."""
    R2 = float(prob.rows.sqnorm.max(initial=0.0))
    return R2 * prob.loss.smoothness / prob.lam > 1000.0 * prob.n


def run_ours(X, y, loss, lam, solver):
    t = time.perf_counter()
    r = primaldual.solve(X, y, loss=loss, lam=lam, solver=solver, tol=TOL,
                         max_epochs={"sdca": 500, "spdc": 1000}.get(solver, 5000),
                         time_limit=20.0, random_state=0)
    return time.perf_counter() - t, r


def run_liblinear(X, y, loss, lam, eps):
    from liblinear import liblinearutil as L
    n, d = X.shape
    s = 0 if loss == "logistic" else 2
    prob = L.problem(y, sp.csr_matrix(X))
    param = L.parameter(f"-s {s} -c {1.0 / (lam * n)!r} -e {eps} -B -1 -q")
    t = time.perf_counter()
    m = L.train(prob, param)
    dt = time.perf_counter() - t
    w = np.array([m.w[j] for j in range(d)])
    if m.get_labels()[0] != 1:
        w = -w
    return dt, w


def run_lbfgs(X, y, lam):
    from sklearn.linear_model import LogisticRegression
    n = X.shape[0]
    clf = LogisticRegression(C=1.0 / (lam * n), fit_intercept=False, tol=1e-8,
                             max_iter=100_000)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    return time.perf_counter() - t, clf.coef_.ravel()


def digits_pipeline(reps=5):
    """Item 4's user pipeline on standardized digits (10 classes, one-vs-rest)."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.multiclass import OneVsRestClassifier
    X, y = load_digits(return_X_y=True)
    X = _std(X)
    n = X.shape[0]
    alphas = [1e-2, 1e-3, 1e-4]

    def timed(f):
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            out = f()
            ts.append(time.perf_counter() - t)
        return float(np.median(ts)), float(np.min(ts)), out

    out = []
    med, mn, clf = timed(lambda: primaldual.LinearClassifier(
        loss="logistic", alpha=1e-4).fit(X, y))
    out.append(("LinearClassifier(loss='logistic', alpha=1e-4).fit (auto -> "
                f"{clf.solver_}; converged {bool(clf.converged_.all())}, "
                f"max rel gap {clf.rel_gap_.max():.1e})", med, mn))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        med, mn, _ = timed(lambda: OneVsRestClassifier(LogisticRegression(
            C=1.0 / (1e-4 * n), tol=1e-8, max_iter=10_000)).fit(X, y))
        out.append(("sklearn OneVsRest(LogisticRegression(lbfgs, tol=1e-8)).fit", med, mn))
        med, mn, _ = timed(lambda: OneVsRestClassifier(LogisticRegression(
            C=1.0 / (1e-4 * n), tol=1e-8, solver="liblinear")).fit(X, y))
        out.append(("sklearn OneVsRest(LogisticRegression(liblinear, tol=1e-8)).fit",
                    med, mn))
        med, mn, _ = timed(lambda: GridSearchCV(
            primaldual.LinearClassifier(loss="logistic"), {"alpha": alphas},
            cv=5).fit(X, y))
        out.append(("GridSearchCV(LinearClassifier(loss='logistic'), 3 alphas, cv=5)",
                    med, mn))
        med, mn, _ = timed(lambda: GridSearchCV(
            LogisticRegression(max_iter=10_000),
            {"C": [1.0 / (a * n * 0.8) for a in alphas]}, cv=5).fit(X, y))
        out.append(("GridSearchCV(sklearn LogisticRegression() multinomial, 3 C, cv=5)",
                    med, mn))
    for name, med, mn in out:
        print(f"  {name}: median {med:.3f} s, min {mn:.3f} s", flush=True)
    return out


def main():
    rows = []
    # warm-up compile
    Xw = np.random.default_rng(0).standard_normal((50, 5))
    yw = np.where(Xw[:, 0] > 0, 1.0, -1.0)
    for loss in LOSSES:
        for s in ("sdca", "newton", "spdc"):
            primaldual.solve(Xw, yw, loss=loss, lam=1e-2, solver=s, max_epochs=3)
            primaldual.solve(sp.csr_matrix(Xw), yw, loss=loss, lam=1e-2, solver=s,
                             max_epochs=3)
    cells = [(name, X, y, loss, lam) for name, X, y in datasets()
             for loss in LOSSES for lam in LAMS] + extra_cells()
    last = None
    for name, X, y, loss, lam in cells:
        n, d = X.shape
        nnz = X.nnz if sp.issparse(X) else n * d
        sq = np.asarray(X.multiply(X).sum(1)).ravel() if sp.issparse(X) \
            else np.einsum("ij,ij->i", X, X)
        if name != last:
            print(f"== {name}: n={n} d={d} nnz={nnz} mean||x||^2={sq.mean():.3g}",
                  flush=True)
            last = name
        gamma = 4.0 if loss == "logistic" else 0.5
        prob = primaldual.Problem(X, y, loss=loss, lam=lam)
        pick = resolve_solver("auto", prob)
        ratio = sq.mean() / (lam * gamma * n)
        res = {}
        solvers = ("sdca", "newton") + (("spdc",) if former_rule_fires(prob)
                                         else ())
        for s in solvers:
            res[s] = run_ours(X, y, loss, lam, s)
        peers = {}
        for eps in (1e-4, 1e-6):
            dt, w = run_liblinear(X, y, loss, lam, eps)
            peers[f"liblinear -e {eps:g}"] = (dt, prob.primal(w))
        if loss == "logistic":
            dt, w = run_lbfgs(X, y, lam)
            peers["sklearn lbfgs"] = (dt, prob.primal(w))
        best = min([r.primal for _, r in res.values()] + [v for _, v in peers.values()])
        peers = {k: (dt, (v - best) / best) for k, (dt, v) in peers.items()}
        rec = {"data": name, "loss": loss, "lam": lam, "ratio": ratio,
               "auto": pick, "d": d, "n": n}
        for s, (dt, r) in res.items():
            rec[s] = (dt, r.n_epochs, r.converged, r.rel_gap)
        rec["peers"] = peers
        rows.append(rec)
        msg = " | ".join(f"{s} {dt:.3f}s {ep:g}ep {'ok' if c else 'NO'} {g:.1e}"
                         for s, (dt, ep, c, g) in
                         ((s, rec[s]) for s in solvers))
        pm = " | ".join(f"{k} {dt:.3f}s sub {sub:.1e}" for k, (dt, sub)
                        in peers.items())
        print(f"  {loss:13s} lam={lam:g} ratio={ratio:.3g} auto={pick}: {msg} || {pm}",
              flush=True)
    pipe = digits_pipeline()
    write(rows, pipe)


def _cell(t):
    dt, ep, conv, gap = t
    return f"{dt:.3f} s ({ep:g} ep)" if conv else f"not reached ({dt:.2f} s, gap {gap:.0e})"


def write(rows, pipe=()):
    out = Path(__file__).resolve().parent / "results" / "auto.md"
    lines = ["# solver=\"auto\": SDCA against Newton, and the peers", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, numpy {np.__version__}; "
             "produced by `python benchmarks/bench_auto.py`.", "",
             "Wall-clock of the whole `solve` call to a certified relative gap of 1e-6 "
             "(after a warm-up compile; SDCA capped at 500 epochs or 20 s; BLAS limited to one "
             "thread for every run, peers included).  `ratio` is "
             "mean ||x_i||^2 / (lam gamma n).  Ours: time and epochs (SPDC only in the "
             "cells where the former auto rule picked it).  Peers: time, and in "
             "brackets their relative primal sub-optimality against the lowest primal "
             "value any run reached in the cell (they do not certify; aim 1e-6).", "",
             "| data | loss | lam | ratio | auto picks | sdca | newton | LIBLINEAR -e 1e-4 "
             "| LIBLINEAR -e 1e-6 | sklearn lbfgs | spdc (where the former rule picked it) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pe = r["peers"]

        def p(k):
            if k not in pe:
                return "-"
            dt, sub = pe[k]
            return f"{dt:.3f} s ({sub:.0e})"
        lines.append(f"| {r['data']} | {r['loss']} | {r['lam']:g} | {r['ratio']:.3g} | "
                     f"{r['auto']} | {_cell(r['sdca'])} | {_cell(r['newton'])} | "
                     f"{p('liblinear -e 0.0001')} | {p('liblinear -e 1e-06')} | "
                     f"{p('sklearn lbfgs')} | {_cell(r['spdc']) if 'spdc' in r else '-'} |")
    if pipe:
        lines += ["", "## Standardized digits through the estimators (10 classes)", "",
                  "Median and minimum of 5 repetitions of the whole call.", "",
                  "| call | median | min |", "|---|---|---|"]
        lines += [f"| {name} | {med:.3f} s | {mn:.3f} s |" for name, med, mn in pipe]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):       # one core for every run, peers included
        sys.exit(main())
