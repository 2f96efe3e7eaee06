"""Default against default: every estimator as a new user runs it, against the
peers' defaults, on the real sets as distributed (no scaling), scikit-learn's
bundled sets and (when present) the regime suite; and the choice of ``tol``.

Part 1 (``defaults``): ``LinearClassifier(loss=L)`` for the hinge, squared
hinge and logistic losses with every other parameter at its default, against
``LinearSVC()`` (squared hinge), ``LinearSVC(loss="hinge")``,
``LogisticRegression()``, ``SGDClassifier()`` and Snap ML's
``SupportVectorMachine()`` and ``LogisticRegression()``.  Each cell: the
median wall time of ``--repeats`` warm fits (methods interleaved, after one
warm-up fit that compiles), the test accuracy, and -- for a binary set -- the
certified relative gap of the fitted model under our objective for the
problem that peer solves (its loss; ``lam = 1/(C n)`` for C-parametrized
estimators, ``alpha`` for SGD, ``regularizer / n`` for Snap ML; the
intercept is a constant feature of value 1, regularized as LIBLINEAR and
``LinearSVC`` do -- for ``LogisticRegression`` and ``SGDClassifier``, whose
intercept is not regularized, the gap also counts ``lam/2 b^2``).

Part 2 (``tol``): our three estimators at ``tol`` from 1e-1 to 1e-6 and at
1e-8; the loosest ``tol`` whose test accuracy equals that at 1e-8 on every set
is the measured choice (docs/estimators.md).

Part 3 (``alpha``, ``--alpha-study``): our three estimators at the default
``alpha = 1e-4`` and at ``alpha = 1/n`` (scikit-learn's and LIBLINEAR's
default ``C = 1``, since ``lam = 1/(C n)``), test accuracy and fit time, and
how often each misses the peers' accuracy by more than 0.5 points.

Writes benchmarks/results/defaults.md (and defaults.json).  Sets with a
``.t`` test file use it; the others get a seeded 75/25 split.  Covtype is
subsampled to ``--covtype-rows`` training rows (seeded; 0 keeps all).
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import primaldual
from primaldual import Problem
from primaldual.datasets import load_svmlight

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import shared_file  # noqa: E402

OURS = ("hinge", "squared_hinge", "logistic")
PAIRS = [("a1a", "a1a.t"), ("a8a", "a8a.t"), ("a9a", "a9a.t"), ("splice", "splice.t"),
         ("svmguide1", "svmguide1.t"), ("agaricus", "agaricus.t"),
         ("reuters.bz2", "reuters.t.bz2"), ("cocoa-small", "cocoa-small.t")]
SINGLES = ["australian", "breast-cancer", "german.numer", "german.numer_scale", "heart",
           "heart_scale", "fourclass", "ionosphere_scale", "sonar_scale", "mushrooms",
           "phishing", "covtype.libsvm.binary.bz2"]
TOLS = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6)
TOL_REF = 1e-8


# ------------------------------------------------------------------ data
def _split(X, y, seed=0):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(X.shape[0])
    cut = int(0.75 * X.shape[0])
    return X[idx[:cut]], y[idx[:cut]], X[idx[cut:]], y[idx[cut:]]


def data_sets(covtype_rows, only=None, regimes_scale=0.0):
    """(name, X_train, y_train, X_test, y_test, origin) for every set found."""
    out = []
    for tr, te in PAIRS:
        p, q = shared_file(tr), shared_file(te)
        if p is None or q is None:
            continue
        X, y = load_svmlight(p)
        Xt, yt = load_svmlight(q)
        d = max(X.shape[1], Xt.shape[1])
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))
        Xt = sp.csr_matrix((Xt.data, Xt.indices, Xt.indptr), shape=(Xt.shape[0], d))
        out.append((tr.replace(".bz2", ""), X, y, Xt, yt, "LIBSVM train/test"))
    for name in SINGLES:
        p = shared_file(name)
        if p is None:
            continue
        X, y = load_svmlight(p)
        origin = "LIBSVM, seeded 75/25 split"
        if name.startswith("covtype") and covtype_rows and X.shape[0] > covtype_rows * 4 // 3:
            idx = np.sort(np.random.default_rng(0).choice(X.shape[0], covtype_rows * 4 // 3,
                                                          replace=False))
            X, y = X[idx], y[idx]
            origin = f"LIBSVM, seeded {covtype_rows * 4 // 3:,}-row sample, 75/25 split"
        out.append((name.replace(".libsvm.binary.bz2", ""), *_split(X, y), origin))
    from sklearn import datasets as skd
    for name, loader in (("sklearn breast_cancer", skd.load_breast_cancer),
                         ("sklearn digits", skd.load_digits),
                         ("sklearn wine", skd.load_wine), ("sklearn iris", skd.load_iris)):
        X, y = loader(return_X_y=True)
        out.append((name, *_split(np.ascontiguousarray(X, dtype=np.float64), y),
                    "scikit-learn bundled, seeded 75/25 split"))
    out.extend(regime_sets(regimes_scale))
    if only:
        out = [s for s in out if any(o in s[0] for o in only)]
    return out


def regime_sets(scale):
    """The regime suite (primaldual.datasets.regimes) at ``scale`` of its sizes,
    when that module is present; ``scale = 0`` leaves it out."""
    if not scale:
        return []
    try:
        from primaldual.datasets import regimes
    except ImportError:
        return []
    out = []
    for name in regimes.REGIMES:
        X, y = regimes.make_regime(name, scale=scale, random_state=0)
        out.append((f"regime {name}", *_split(X, y), f"regime suite, scale {scale:g}"))
    return out


# --------------------------------------------------------------- methods
def _lam_of_C(C, n):
    return 1.0 / (C * n)


def methods(snapml):
    """name -> (make(), loss our certificate uses, lam(n) or None)."""
    from sklearn.linear_model import LogisticRegression, SGDClassifier
    from sklearn.svm import LinearSVC
    m = {}
    for loss in OURS:
        m[f"ours {loss}"] = (lambda loss=loss: primaldual.LinearClassifier(loss=loss),
                             loss, None)
    m["LinearSVC()"] = (lambda: LinearSVC(), "squared_hinge", lambda n: _lam_of_C(1.0, n))
    m['LinearSVC(loss="hinge")'] = (lambda: LinearSVC(loss="hinge"), "hinge",
                                    lambda n: _lam_of_C(1.0, n))
    m["LogisticRegression()"] = (lambda: LogisticRegression(), "logistic",
                                 lambda n: _lam_of_C(1.0, n))
    m["SGDClassifier()"] = (lambda: SGDClassifier(), "hinge", lambda n: 1e-4)
    if snapml is not None:
        m["snapml SVM()"] = (lambda: snapml.SupportVectorMachine(), "hinge",
                             lambda n: 1.0 / n)
        m["snapml LogReg()"] = (lambda: snapml.LogisticRegression(), "logistic",
                                lambda n: 1.0 / n)
    return m


def _fit(make, X, y):
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(X, y)
        return est, time.perf_counter() - t0


def _accuracy(est, Xt, yt):
    return float(np.mean(est.predict(Xt) == yt))


def peer_gap(est, X, y, loss, lam):
    """The certified relative gap of a binary peer model under our objective,
    the intercept as a constant feature of value 1."""
    classes = np.unique(y)
    if classes.size != 2:
        return None
    coef = np.asarray(est.coef_, dtype=np.float64).ravel()
    b = np.asarray(getattr(est, "intercept_", 0.0), dtype=np.float64).ravel()
    b = float(b[0]) if b.size else 0.0
    ypm = np.where(y == classes[1], 1.0, -1.0)
    if sp.issparse(X):
        Xa = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
    else:
        Xa = np.hstack([X, np.ones((X.shape[0], 1))])
    prob = Problem(Xa, ypm, loss=loss, lam=lam)
    return prob.primal_certificate(np.append(coef, b)).rel_gap


def our_gap(est):
    return float(np.max(np.atleast_1d(est.rel_gap_)))


def run_defaults(sets, repeats, snapml):
    rows = []
    table = methods(snapml)
    for name, X, y, Xt, yt, origin in sets:
        Xf = X.toarray() if sp.issparse(X) and name.startswith("sklearn") else X
        for mname, (make, _, _) in table.items():     # warm-up: compile, load
            try:
                _fit(make, Xf[:200], y[:200]) if len(np.unique(y[:200])) > 1 else None
            except Exception:                          # noqa: BLE001 (reported below)
                pass
        times = {m: [] for m in table}
        fitted = {}
        for _ in range(repeats):                        # interleaved repeats
            for mname, (make, _, _) in table.items():
                try:
                    est, t = _fit(make, Xf, y)
                except Exception as e:                 # noqa: BLE001
                    fitted[mname] = e
                    continue
                times[mname].append(t)
                fitted[mname] = est
        for mname, (make, loss, lam_of) in table.items():
            est = fitted.get(mname)
            if isinstance(est, Exception) or est is None:
                rows.append({"set": name, "method": mname, "error": str(est)[:80]})
                continue
            rec = {"set": name, "origin": origin, "n": X.shape[0], "d": X.shape[1],
                   "classes": int(np.unique(y).size), "method": mname,
                   "time": statistics.median(times[mname]),
                   "accuracy": _accuracy(est, Xt, yt)}
            if mname.startswith("ours"):
                rec["gap"] = our_gap(est)
                rec["converged"] = bool(np.all(est.converged_))
                rec["solver"] = est.solver_
            else:
                rec["gap"] = peer_gap(est, Xf, y, loss, lam_of(X.shape[0]))
            rows.append(rec)
            print(json.dumps(rec), flush=True)
    return rows


def run_tols(sets):
    rows = []
    for name, X, y, Xt, yt, origin in sets:
        for loss in OURS:
            for tol in (*TOLS, TOL_REF):
                est, t = _fit(lambda: primaldual.LinearClassifier(loss=loss, tol=tol), X, y)
                rec = {"set": name, "loss": loss, "tol": tol, "time": t,
                       "accuracy": _accuracy(est, Xt, yt), "gap": our_gap(est),
                       "converged": bool(np.all(est.converged_)),
                       "epochs": float(np.max(np.atleast_1d(est.n_iter_))),
                       "solver": est.solver_}
                rows.append(rec)
                print(json.dumps(rec), flush=True)
    return rows


def run_alphas(sets):
    """Our estimators at alpha = 1e-4 and at alpha = 1/n (C = 1), one fit each
    after a warm-up fit."""
    rows = []
    for name, X, y, Xt, yt, origin in sets:
        n = X.shape[0]
        for loss in OURS:
            for label, alpha in (("1e-4", 1e-4), ("1/n", 1.0 / n)):
                make = (lambda loss=loss, alpha=alpha:
                        primaldual.LinearClassifier(loss=loss, alpha=alpha))
                _fit(make, X, y)
                est, t = _fit(make, X, y)
                rec = {"set": name, "loss": loss, "alpha": label, "alpha_value": alpha,
                       "time": t, "accuracy": _accuracy(est, Xt, yt),
                       "converged": bool(np.all(est.converged_)), "solver": est.solver_}
                rows.append(rec)
                print(json.dumps(rec), flush=True)
    return rows


_FAMILY = {"hinge": ['LinearSVC(loss="hinge")'], "squared_hinge": ["LinearSVC()"],
           "logistic": ["LogisticRegression()"]}


def alpha_report(alphas, defaults):
    """The alpha study's lines for the report."""
    lines = ["", "## Choosing `alpha`", "",
             "Our estimators at `alpha = 1e-4` and at `alpha = 1/n` (`C = 1` in "
             "scikit-learn's and LIBLINEAR's scaling, `lam = 1/(C n)`). Each cell: fit "
             "time (one warm fit), test accuracy; `*` an unconverged fit. A cell is a "
             "miss when its accuracy is more than 0.5 points below the same loss "
             "family's scikit-learn default in the table above.", "",
             "| set | loss | alpha = 1e-4 | alpha = 1/n | scikit-learn default |",
             "|---|---|---|---|---|"]
    misses = {"1e-4": [], "1/n": []}
    times = {"1e-4": 0.0, "1/n": 0.0}
    wins = {"1e-4": 0, "1/n": 0}
    keys = list(dict.fromkeys((r["set"], r["loss"]) for r in alphas))
    for s, loss in keys:
        cell = {r["alpha"]: r for r in alphas if r["set"] == s and r["loss"] == loss}
        peer = next((q for q in defaults if q["set"] == s and q["method"] in _FAMILY[loss]
                     and "error" not in q), None)
        txt = []
        for a in ("1e-4", "1/n"):
            r = cell[a]
            times[a] += r["time"]
            txt.append(f"{r['time']:.3f} s, {100 * r['accuracy']:.2f}%"
                       + ("" if r["converged"] else "*"))
            if peer is not None and r["accuracy"] < peer["accuracy"] - 0.005:
                misses[a].append(f"{s} {loss}")
        if cell["1e-4"]["accuracy"] > cell["1/n"]["accuracy"]:
            wins["1e-4"] += 1
        elif cell["1/n"]["accuracy"] > cell["1e-4"]["accuracy"]:
            wins["1/n"] += 1
        ptxt = "" if peer is None else f"{100 * peer['accuracy']:.2f}% ({peer['method']})"
        lines.append(f"| {s} | {loss} | {txt[0]} | {txt[1]} | {ptxt} |")
    lines.append("")
    for a in ("1e-4", "1/n"):
        lines.append(f"- alpha = {a}: more accurate than the other choice in {wins[a]} of "
                     f"{len(keys)} cells; total fit time {times[a]:.2f} s; "
                     f"{len(misses[a])} misses"
                     + (": " + "; ".join(misses[a]) if misses[a] else ""))
    return lines


# ---------------------------------------------------------------- report
def _fmt_gap(g):
    if g is None:
        return "—"
    return f"{g:.1e}" if math.isfinite(g) else "inf"


def write_report(out, defaults, tols, alphas=()):
    lines = ["# Default against default", "",
             "Written by `python benchmarks/bench_defaults.py` (the two parts may come from "
             "separate runs: `--skip-tol`, `--skip-defaults`, `--tols-from`, "
             "`--defaults-from`). Times are wall seconds of `fit`, the median of "
             "the repeats, methods interleaved, after one warm-up fit; the machine was "
             "loaded by other work (2 shared cores), so read the times as ratios within a "
             "row, not as quiet absolute numbers.", "",
             "Each cell: time, test accuracy, certified relative gap under our objective "
             "for the problem that method solves (binary sets; — for multiclass). Ours "
             "also names the solver `auto` picked; `*` marks a fit that stopped before "
             "its `tol`.", ""]
    sets = list(dict.fromkeys(r["set"] for r in defaults))
    meths = list(dict.fromkeys(r["method"] for r in defaults))
    lines.append("| set (n x d) | " + " | ".join(meths) + " |")
    lines.append("|---" * (len(meths) + 1) + "|")
    for s in sets:
        cells = []
        shape = ""
        for m in meths:
            r = next((r for r in defaults if r["set"] == s and r["method"] == m), None)
            if r is None or "error" in r:
                cells.append("error" if r else "")
                continue
            shape = f"{r['n']:,} x {r['d']:,}" + (f", {r['classes']} classes"
                                                   if r["classes"] > 2 else "")
            extra = ""
            if m.startswith("ours"):
                extra = f" {r['solver']}" + ("" if r["converged"] else "*")
            cells.append(f"{r['time']:.3f} s, {100 * r['accuracy']:.2f}%, "
                         f"{_fmt_gap(r['gap'])}{extra}")
        lines.append(f"| {s} ({shape}) | " + " | ".join(cells) + " |")
    lines += ["", "## Targets", ""]
    family = {"ours hinge": ['LinearSVC(loss="hinge")'],
              "ours squared_hinge": ["LinearSVC()"],
              "ours logistic": ["LogisticRegression()"]}
    for ours, peers in family.items():
        for s in sets:
            r = next((r for r in defaults if r["set"] == s and r["method"] == ours), None)
            for p in peers:
                q = next((q for q in defaults if q["set"] == s and q["method"] == p), None)
                if r is None or q is None or "error" in r or "error" in q:
                    continue
                slow = r["time"] > q["time"]
                worse = r["accuracy"] < q["accuracy"] - 0.005
                if slow or worse:
                    lines.append(f"- {s}, {ours} against {p}: time {r['time']:.3f} s vs "
                                 f"{q['time']:.3f} s ({r['time'] / max(q['time'], 1e-9):.1f}x), "
                                 f"accuracy {100 * r['accuracy']:.2f}% vs "
                                 f"{100 * q['accuracy']:.2f}%")
    if tols:
        lines += ["", "## Choosing `tol`", "",
                  "Test accuracy of our estimators at each `tol`, as the number of (set, "
                  "loss) cells whose accuracy differs from that at 1e-8, the largest "
                  "difference, and the total fit time.", "",
                  "| tol | cells that differ | largest difference (points) | total time (s) |",
                  "|---|---|---|---|"]
        ref = {(r["set"], r["loss"]): r["accuracy"] for r in tols if r["tol"] == TOL_REF}
        for tol in (*TOLS, TOL_REF):
            rs = [r for r in tols if r["tol"] == tol]
            diffs = [abs(r["accuracy"] - ref[(r["set"], r["loss"])]) for r in rs]
            lines.append(f"| {tol:g} | {sum(d > 0 for d in diffs)} of {len(rs)} | "
                         f"{100 * max(diffs):.2f} | {sum(r['time'] for r in rs):.2f} |")
        lines.append("")
        for tol in (*TOLS,):
            bad = [r for r in tols if r["tol"] == tol
                   and r["accuracy"] != ref[(r["set"], r["loss"])]]
            if bad:
                lines.append(f"- tol {tol:g}: " + "; ".join(
                    f"{r['set']} {r['loss']} {100 * r['accuracy']:.2f}% vs "
                    f"{100 * ref[(r['set'], r['loss'])]:.2f}%" for r in bad[:8]))
    if alphas:
        lines += alpha_report(alphas, defaults)
    Path(out).write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--covtype-rows", type=int, default=100_000)
    ap.add_argument("--only", nargs="*", help="sets whose name contains one of these")
    ap.add_argument("--skip-tol", action="store_true")
    ap.add_argument("--skip-defaults", action="store_true")
    ap.add_argument("--tols-from", help="reuse the tol sweep of an earlier run's .json")
    ap.add_argument("--defaults-from",
                    help="reuse the default-against-default part of an earlier run's .json")
    ap.add_argument("--alpha-study", action="store_true",
                    help="also fit ours at alpha = 1e-4 and alpha = 1/n (part 3)")
    ap.add_argument("--alphas-from", help="reuse the alpha study of an earlier run's .json")
    ap.add_argument("--regimes-scale", type=float, default=0.0,
                    help="include the regime suite at this scale of its sizes (0: no)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "defaults.md"))
    args = ap.parse_args(argv)
    try:
        from primaldual.bench.peers import import_snapml
        snapml = import_snapml()
    except ImportError:
        snapml = None
    sets = data_sets(args.covtype_rows, args.only, args.regimes_scale)
    if args.defaults_from:
        defaults = json.loads(Path(args.defaults_from).read_text())["defaults"]
    else:
        defaults = [] if args.skip_defaults else run_defaults(sets, args.repeats, snapml)
    if args.tols_from:
        tols = json.loads(Path(args.tols_from).read_text())["tols"]
    else:
        tols = [] if args.skip_tol else run_tols(sets)
    if args.alphas_from:
        alphas = json.loads(Path(args.alphas_from).read_text()).get("alphas", [])
    else:
        alphas = run_alphas(sets) if args.alpha_study else []
    Path(args.out).with_suffix(".json").write_text(
        json.dumps({"defaults": defaults, "tols": tols, "alphas": alphas}, indent=1))
    write_report(args.out, defaults, tols, alphas)


if __name__ == "__main__":
    main()
