"""The supervised default path on every real set of ../shared/data (issue 31).

For each set, as given and standardized (``StandardScaler`` fitted on the
training part; without centering on sparse data), each loss ({hinge,
squared_hinge, logistic} on classification sets, one-vs-rest on multiclass
ones; {squared, absolute, epsilon_insensitive} on the regression sets
cadata, abalone, housing_scale) and each C in {0.01, 1, 100}
(``lam = 1/(C n)``), this runs the default estimator
(``LinearClassifier(loss=L, alpha=1/(C n))`` / ``LinearRegressor(...)``,
``solver="auto"``) with ``n_jobs`` 1 and 2, and records:

* auto's time, certified relative gap (the worst class for one-vs-rest) and
  path (the legs of the first problem: method and why it handed over);
* ``n_jobs=2``: the worst time of ``--repeats`` fits (in this process), over
  ``n_jobs=1``'s worst;
* each single candidate (``solver="sdca"``, ``"newton"``, ``"ipm"``, where it
  applies) to the same ``tol``, capped at ``--cap`` times auto's time (at
  least ``--min-cap`` seconds); ``>`` marks a candidate that did not certify;
* auto / best-in-hindsight (the fastest candidate that certified);
* scikit-learn's default estimator (``LinearSVC(loss="hinge")``,
  ``LinearSVC()``, ``LogisticRegression()``, ``Ridge()``, ``LinearSVR()`` with
  epsilon 0 or 0.1) at the same C: its time and test accuracy (R^2);
* the score of a peer that minimizes our objective (:func:`same_objective_peer`:
  the default estimator, except for the unpenalized intercepts of
  ``LogisticRegression()`` and ``Ridge()``), and how far its model's value of
  that objective is above our certified optimum (``peer P excess``).

Times are wall seconds of ``fit`` after one warm-up fit (compilation).  Sets
with a ``.t`` file are tested on it; the others on a seeded 25% split.

    python benchmarks/bench_auto_real.py                       # every set
    python benchmarks/bench_auto_real.py --sets heart_scale,cadata --quick

``--quick``: C = 1 only, at most 5,000 training rows.  auto's time is the
median of ``--repeats`` fits on one thread; the other methods' the median of
up to ``--repeats`` fits (fewer once a second is spent).
Writes benchmarks/results/auto-real.md (``--out``) and a .jsonl beside it.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file, load_svmlight_files
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler

import primaldual
from primaldual.problem import Problem
from primaldual.solvers import SOLVERS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import shared_file, write_result  # noqa: E402

DATA = Path(os.environ.get("PRIMALDUAL_DATA", Path(__file__).resolve().parents[2]
                           / "shared" / "data"))
REGRESSION = ("cadata", "abalone", "housing_scale")
CLASS_LOSSES = ("hinge", "squared_hinge", "logistic")
REG_LOSSES = ("squared", "absolute", "epsilon_insensitive")
SINGLES = ("sdca", "newton", "ipm")
CS = (0.01, 1.0, 100.0)
#: a peer's model whose objective (ours, at its fit) exceeds our certified
#: optimum by at most this much (relative) is at the shared optimum
SAME_OPTIMUM = 1e-6
#: test files whose training file has another name
TEST_OF = {"a1a": "a1a.t", "a8a": "a8a.t", "a9a": "a9a.t", "splice": "splice.t",
           "svmguide1": "svmguide1.t", "agaricus": "agaricus.t",
           "reuters.bz2": "reuters.t.bz2", "cocoa-small": "cocoa-small.t",
           "letter.scale": "letter.scale.t", "dna.scale": "dna.scale.t",
           "higgs7k": "higgs7k.t", "shuttle": "shuttle.t"}


def all_sets():
    """Every training file of the data folder (test files and the README aside)."""
    tests = set(TEST_OF.values())
    return sorted(p.name for p in DATA.iterdir()
                  if p.is_file() and p.name not in tests and not p.name.endswith(".md"))


def load(name, max_rows, seed=0):
    """(X, y, Xt, yt): the set, its test file or a seeded 25% split."""
    path = shared_file(name) or DATA / name
    test = TEST_OF.get(name)
    if test is not None and (DATA / test).exists():
        X, y, Xt, yt = load_svmlight_files([str(path), str(DATA / test)])
    else:
        X, y = load_svmlight_file(str(path))
        idx = np.random.default_rng(seed).permutation(X.shape[0])
        cut = int(0.75 * X.shape[0])
        X, y, Xt, yt = X[idx[:cut]], y[idx[:cut]], X[idx[cut:]], y[idx[cut:]]
    if max_rows and X.shape[0] > max_rows:
        keep = np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False)
        X, y = X[np.sort(keep)], y[np.sort(keep)]
    dense = X.shape[1] <= 1000 and X.nnz > 0.3 * X.shape[0] * X.shape[1]
    if dense:
        return X.toarray(), y, Xt.toarray(), yt
    return _int32(X), y, _int32(Xt), yt


def _int32(X):
    """CSR with 32-bit indices (LIBLINEAR's peers refuse 64-bit ones)."""
    X = sp.csr_matrix(X)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X


def standardize(X, Xt):
    sc = StandardScaler(with_mean=not sp.issparse(X)).fit(X)
    out = sc.transform(X), sc.transform(Xt)
    return tuple(_int32(a) if sp.issparse(a) else np.ascontiguousarray(a) for a in out)


def score(est, Xt, yt, regression):
    pred = est.predict(Xt)
    return float(r2_score(yt, pred)) if regression else float(np.mean(pred == yt))


def ours(loss, C, n, regression, **kw):
    """The default estimator at ``lam = 1/(C n)`` (``alpha``, the same number)."""
    cls = primaldual.LinearRegressor if regression else primaldual.LinearClassifier
    return cls(loss=loss, alpha=1.0 / (C * n), **kw)


def peer(loss, C):
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.svm import LinearSVC, LinearSVR
    return {"hinge": lambda: LinearSVC(loss="hinge", C=C),
            "squared_hinge": lambda: LinearSVC(C=C),
            "logistic": lambda: LogisticRegression(C=C),
            "squared": lambda: Ridge(alpha=1.0 / C),
            "absolute": lambda: LinearSVR(epsilon=0.0, C=C),
            "epsilon_insensitive": lambda: LinearSVR(epsilon=0.1, C=C)}[loss]()


def same_objective_peer(loss, C):
    """A scikit-learn estimator that minimizes our objective where the default
    one minimizes another (None where the default already does): the GUIDE's
    intercept is a constant feature with a regularized weight, as LIBLINEAR's,
    while ``LogisticRegression()`` and ``Ridge()`` leave the intercept
    unpenalized (and ``LogisticRegression()`` fits one multinomial model).
    ``LogisticRegression(solver="liblinear")`` (one-vs-rest above two classes)
    and ``Ridge`` on ``[X, 1]`` without intercept minimize ours."""
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.multiclass import OneVsRestClassifier
    if loss == "logistic":
        return lambda: _Binary(OneVsRestClassifier(LogisticRegression(solver="liblinear",
                                                                      C=C)))
    if loss == "squared":
        return lambda: _OnesColumn(Ridge(alpha=1.0 / C, fit_intercept=False))
    return None


class _Binary:
    """A one-vs-rest wrapper that fits a binary problem as one estimator."""

    def __init__(self, ovr):
        self.ovr = ovr

    def fit(self, X, y):
        self.two = np.unique(y).size == 2
        self.model = (self.ovr.estimator if self.two else self.ovr).fit(X, y)
        return self

    def predict(self, X):
        return self.model.predict(X)

    def models(self):
        return [self.model] if self.two else list(self.model.estimators_)


class _OnesColumn:
    """``Ridge(fit_intercept=False)`` on ``[X, 1]``: a regularized intercept."""

    def __init__(self, ridge):
        self.ridge = ridge

    def fit(self, X, y):
        self.ridge.fit(_with_ones(X), y)
        return self

    def predict(self, X):
        return self.ridge.predict(_with_ones(X))

    def models(self):
        return [self]

    @property
    def coef_(self):
        return self.ridge.coef_[:-1]

    @property
    def intercept_(self):
        return self.ridge.coef_[-1]


def _with_ones(X):
    ones = np.ones((X.shape[0], 1))
    return _int32(sp.hstack([X, ones], format="csr")) if sp.issparse(X) else np.hstack([X, ones])


def shared_objective(models, X, y, loss, C, regression):
    """Our objective (``lam = 1/(C n)``, intercept a regularized feature of value
    1), summed over the one-vs-rest problems, at a fit of another library."""
    Xa = _with_ones(X)
    lam = 1.0 / (C * X.shape[0])
    params = {"epsilon": 0.1} if loss == "epsilon_insensitive" else None
    classes = np.unique(y)
    if regression:
        targets = [y]
    elif classes.size == 2:
        targets = [np.where(y == classes[1], 1.0, -1.0)]
    else:
        targets = [np.where(y == c, 1.0, -1.0) for c in classes]
    coefs = [np.atleast_2d(m.coef_) for m in models]
    icpts = [np.atleast_1d(m.intercept_) for m in models]
    if len(models) == 1 and len(targets) > 1:         # one estimator, one row per class
        coefs = [c[None, :] for c in coefs[0]]
        icpts = [np.atleast_1d(i) for i in icpts[0]]
    return sum(Problem(Xa, t, loss=loss, lam=lam, loss_params=params)
               .primal(np.r_[c.ravel(), i[:1]]) for t, c, i in zip(targets, coefs, icpts))


def timed(make, X, y):
    est = make()
    t = time.perf_counter()
    est.fit(X, y)
    return est, time.perf_counter() - t


def timed_median(make, X, y, repeats, budget=1.0):
    """The median time of up to ``repeats`` fits (fewer once ``budget`` seconds
    are spent): short fits on a loaded machine need several."""
    times, est = [], None
    for _ in range(max(1, repeats)):
        e, t = timed(make, X, y)
        est = est or e
        times.append(t)
        if sum(times) >= budget:
            break
    return est, statistics.median(times)


def worst_gap(est):
    return float(np.max(np.atleast_1d(est.rel_gap_)))


def applies(name, loss):
    cls = SOLVERS.get(name)
    return cls is not None and all(
        getattr(primaldual.losses.make_loss(loss), cap) for cap in cls.requires)


def path_text(est, worst=False):
    """auto's legs: of the first problem (one-vs-rest), or of the one with the
    worst gap (``worst``)."""
    path = est.solver_path_
    if path and isinstance(path[0], list):
        path = path[int(np.argmax(np.atleast_1d(est.rel_gap_)))] if worst else path[0]
    return " → ".join(f"{p['method']}" + (f"×{p['threads']}" if p["threads"] > 1 else "")
                      + ("" if p is path[-1] else f" ({p['reason'].split(':')[0]})")
                      for p in path)


def cell(X, y, Xt, yt, loss, C, regression, args):
    """Every measurement of one (set, scaling, loss, C)."""
    out = {"loss": loss, "C": C}
    times = {1: [], 2: []}
    est = {}
    for r in range(args.repeats):
        for jobs in (1, 2):
            e, t = timed(lambda: ours(loss, C, X.shape[0], regression, n_jobs=jobs), X, y)
            times[jobs].append(t)
            est.setdefault(jobs, e)
    est, est2 = est[1], est[2]
    out.update(auto_s=statistics.median(times[1]), auto1_worst=max(times[1]),
               auto2_s=max(times[2]), gap=worst_gap(est),
               converged=bool(np.all(est.converged_)), path=path_text(est),
               path_worst=path_text(est, worst=True), gap2=worst_gap(est2),
               converged2=bool(np.all(est2.converged_)), path2=path_text(est2, worst=True),
               score=score(est, Xt, yt, regression))
    cap = max(args.min_cap, args.cap * out["auto_s"])
    singles = {}
    uncertified = not (out["converged"] and out["converged2"])
    for name in SINGLES:
        if not applies(name, loss) or (getattr(args, "auto_only", False) and not uncertified):
            continue
        try:
            e, t = timed_median(lambda: ours(loss, C, X.shape[0], regression, solver=name,
                                             solver_options={"time_limit": cap}), X, y,
                                args.repeats)
            singles[name] = {"s": t, "ok": bool(np.all(e.converged_)), "gap": worst_gap(e)}
        except (ValueError, FloatingPointError) as err:
            singles[name] = {"s": math.nan, "ok": False, "gap": math.nan,
                             "error": str(err)[:80]}
    out["singles"] = singles
    done = [v["s"] for v in singles.values() if v["ok"]]
    out["best_s"] = min(done) if done else math.nan
    if getattr(args, "auto_only", False):
        out.update(peer_s=math.nan, peer_score=None, auto_only=True)
        return out
    p, t = timed_median(lambda: peer(loss, C), X, y, args.repeats)
    out.update(peer_s=t, peer_score=score(p, Xt, yt, regression))
    make = same_objective_peer(loss, C)
    same = p if make is None else make().fit(X, y)
    ours_p = float(np.sum(est.primal_))
    models = same.models() if hasattr(same, "models") else [same]
    out.update(same_score=score(same, Xt, yt, regression), same_excess=(
        shared_objective(models, X, y, loss, C, regression) - ours_p) / abs(ours_p))
    return out


def run_set(name, args, log):
    regression = name in REGRESSION
    X, y, Xt, yt = load(name, args.max_rows)
    rows = []
    losses = [l for l in (REG_LOSSES if regression else CLASS_LOSSES)
              if not args.losses or l in args.losses]
    for scaling in args.scalings:
        A, At = (X, Xt) if scaling == "as given" else standardize(X, Xt)
        # warm-up: load every kernel the cells use (each candidate, auto's
        # direct leg, the threaded SDCA): a first call on a loaded machine
        # took seconds
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pick = np.random.default_rng(0).permutation(A.shape[0])[:300]
            if regression or len(np.unique(y[pick])) > 1:
                for loss in losses:
                    for kw in [dict(), dict(n_jobs=2)] + [
                            dict(solver=s, max_iter=2) for s in SINGLES if applies(s, loss)]:
                        ours(loss, 1.0, 300, regression, **kw).fit(A[pick], y[pick])
        for loss in losses:
            for C in args.C:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c = cell(A, y, At, yt, loss, C, regression, args)
                c.update(set=name, scaling=scaling, n=A.shape[0], d=A.shape[1],
                         load=os.getloadavg()[0])
                rows.append(c)
                log.write(json.dumps(c) + "\n")
                log.flush()
                print(f"{name:22s} {scaling:12s} {loss:20s} C={C:<6g} auto "
                      f"{c['auto_s']:.3f}s gap {c['gap']:.1e} [{c['path_worst']}] x2 "
                      f"{c['auto2_s']:.3f}s gap {c['gap2']:.1e} [{c['path2']}] best "
                      f"{c['best_s']:.3f}s peer {c['peer_s']:.3f}s", flush=True)
    return rows


def _ratio(a, b):
    return a / b if b and math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan


def _f(x, fmt=".3f"):
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def summary(rows, tol=1e-6):
    """The issue's targets, measured over ``rows``."""
    uncert = [r for r in rows if not (r["converged"] and r.get("converged2", True))]
    rescuable = [r for r in uncert if any(
        v["ok"] and v["s"] <= 10 * r["auto_s"] for v in r["singles"].values())]
    ratios = [_ratio(r["auto_s"], r["best_s"]) for r in rows]
    ratios = [x for x in ratios if math.isfinite(x)]
    jobs = [_ratio(r["auto2_s"], r["auto1_worst"]) for r in rows]
    vs_peer = [x for x in (_ratio(r["auto_s"], r["peer_s"]) for r in rows) if math.isfinite(x)]
    def below(r, key):
        return r.get(key) is not None and r["score"] < r[key] - (
            0.01 if r["loss"] in REG_LOSSES else 0.005)
    worse = [r for r in rows if below(r, "peer_score")]
    same = [r for r in rows if below(r, "same_score")]
    genuine = [r for r in same if r["same_excess"] <= SAME_OPTIMUM]
    lines = [f"- cells: {len(rows)}; auto uncertified: {len(uncert)}, of which a single "
             f"candidate certified within 10x auto's time: **{len(rescuable)}**"
             + (" (" + ", ".join(f"{r['set']} {r['scaling']} {r['loss']} C={r['C']:g}"
                                 for r in rescuable[:12]) + ")" if rescuable else "")]
    if ratios:
        lines.append(f"- auto / best single candidate: median **{statistics.median(ratios):.2f}x**, "
                     f"worst {max(ratios):.2f}x (target 1.5x median, 3x every cell)")
    if jobs:
        lines.append(f"- n_jobs=2 / n_jobs=1 (worst of the repeats, in one process): worst "
                     f"**{max(jobs):.2f}x**, median {statistics.median(jobs):.2f}x (target 1.05x)")
    if vs_peer:
        lines.append(f"- auto / scikit-learn's default estimator time: median "
                     f"**{statistics.median(vs_peer):.2f}x** (target 1x)")
        lines.append(f"- score below the same-objective peer by more than 0.5 points (R^2 "
                     f"0.01) where that peer's model is as close to the shared optimum "
                     f"(objective within {SAME_OPTIMUM:g} of ours or lower): "
                     f"**{len(genuine)}** cells" + _names(genuine)
                     + f"; where its model stopped further from it: {len(same) - len(genuine)}"
                     + _names([r for r in same if r not in genuine]))
        lines.append(f"- score below scikit-learn's default estimator by more than 0.5 "
                     f"points (R^2 0.01): {len(worse)} cells" + _names(worse)
                     + " (it minimizes another objective, or stops before the optimum: "
                       "column `peer P excess`)")
    return lines


def _names(rows, k=12):
    return (" (" + ", ".join(f"{r['set']} {r['scaling']} {r['loss']} C={r['C']:g}"
                             for r in rows[:k]) + (", ..." if len(rows) > k else "") + ")"
            if rows else "")


def table(rows):
    head = ("| set | scaling | loss | C | auto s | gap | path | n_jobs 2 / 1 | "
            + " | ".join(f"{s} s" for s in SINGLES)
            + " | auto / best | sklearn s | score ours / same objective / sklearn "
            "| peer P excess |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        singles = []
        for s in SINGLES:
            v = r["singles"].get(s)
            singles.append("n/a" if v is None else (
                _f(v["s"]) if v["ok"] else f"> {_f(v['s'])} ({_f(v['gap'], '.0e')})"))
        out.append(f"| {r['set']} ({r['n']:,} x {r['d']:,}) | {r['scaling']} | {r['loss']} | "
                   f"{r['C']:g} | {_f(r['auto_s'])} | {r['gap']:.1e}"
                   f"{'' if r['converged'] else ' *'}"
                   f"{'' if r.get('converged2', True) else ' (n_jobs=2: ' + format(r['gap2'], '.1e') + ' *)'} | {r['path']} | "
                   f"{_f(_ratio(r['auto2_s'], r['auto1_worst']), '.2f')} | " + " | ".join(singles)
                   + f" | {_f(_ratio(r['auto_s'], r['best_s']), '.2f')} | {_f(r['peer_s'])} | "
                   f"{r['score']:.4f} / {_f(r.get('same_score'), '.4f')} / "
                   f"{_f(r.get('peer_score'), '.4f')} | {_f(r.get('same_excess'), '.1e')} |")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="", help="comma-separated file names (default: all)")
    ap.add_argument("--quick", action="store_true",
                    help="C = 1 only, at most 5,000 training rows")
    ap.add_argument("--C", type=float, nargs="*", default=list(CS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-rows", type=int, default=0)
    ap.add_argument("--cap", type=float, default=10.0)
    ap.add_argument("--min-cap", type=float, default=2.0)
    ap.add_argument("--auto-only", action="store_true",
                    help="only the default fits (n_jobs 1 and 2): no peers, and single "
                         "candidates only where auto ends uncertified")
    ap.add_argument("--scalings", nargs="*", default=["as given", "standardized"],
                    choices=["as given", "standardized"])
    ap.add_argument("--losses", nargs="*", default=[], help="these losses only (default: all)")
    ap.add_argument("--from", dest="previous", nargs="*", default=[],
                    help="cells of earlier runs (.jsonl) to include in the table")
    ap.add_argument("--note", default="", help="a line for the header (how the cells of "
                                               "--from were run)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"
                                         / "auto-real.md"))
    args = ap.parse_args(argv)
    if args.quick:
        args.C, args.max_rows = [1.0], args.max_rows or 5000
    sets = [s for s in args.sets.split(",") if s] or ([] if args.previous else all_sets())
    load_avg = os.getloadavg()
    rows = [json.loads(line) for f in args.previous for line in Path(f).read_text().splitlines()
            if line.strip()]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".jsonl"), "w") as log:
        for r in rows:
            log.write(json.dumps(r) + "\n")
        for name in sets:
            rows.extend(run_set(name, args, log))
    lines = ["# solver=\"auto\" on the real sets (issue 31)", "",
             f"Written by `python benchmarks/bench_auto_real.py "
             f"{' '.join(a if a != args.note else '...' for a in (argv if argv is not None else sys.argv[1:]))}` "
             f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). "
             f"Machine: 2 cores shared with other work; load average at the start "
             f"{load_avg[0]:.2f}, {load_avg[1]:.2f}, {load_avg[2]:.2f} and at the end "
             f"{os.getloadavg()[0]:.2f} (`uptime`): read times as ratios within a row. "
             f"C = {', '.join(f'{c:g}' for c in args.C)}; "
             f"{'at most ' + format(args.max_rows, ',') + ' training rows; ' if args.max_rows else ''}"
             f"{args.repeats} repeat(s). `*`: auto stopped before tol = 1e-6. Single "
             f"candidates are capped at {args.cap:g}x auto's time (at least {args.min_cap:g} s).",
             ] + (["", args.note] if args.note else []) + [
             "", "## Targets", ""] + summary(rows) + ["", "## Cells", ""] + table(rows)
    write_result(out, lines)


if __name__ == "__main__":
    main()
