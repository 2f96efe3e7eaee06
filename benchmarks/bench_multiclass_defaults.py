"""Every default multinomial and Crammer-Singer fit on the shared multiclass
sets (issue 33): ``primaldual.solve(X, y, loss=..., lam=1/(C n))`` with every
default (solver="auto", tol=1e-6), the features as given and standardized
(``StandardScaler(with_mean=False)``), C in {0.01, 1, 100}; labels encoded
0..K-1.  One markdown row per cell: set, scaling, loss, C, seconds, certified
gap, certified, the solver's path (Newton steps and preconditioner, or the
legs of ``auto``).  The lead's check (scratch/mc/check.py) with a table.

``--peers`` instead compares the usps.t cells that needed the class-block
preconditioner, the IPM or ``auto``'s legs with scikit-learn's
``LogisticRegression`` (lbfgs, ``tol=0``, 100/300/1000/3000 iterations until a
relative sub-optimality of 1e-6) and LIBLINEAR ``-s 4`` (``-e 0.1``,
``0.001``), one BLAS thread, in the same process; sub-optimality relative to
our certified dual bound.

    python benchmarks/bench_multiclass_defaults.py [--sets a,b] [--cells CELLS] [--peers CELLS]
        [--time-limit SECONDS]

(``CELLS``: ``g:multinomial:100,s:crammer_singer:1``, ``g`` as given, ``s``
standardized; ``--cells`` runs only those cells of the sets.)  Output goes to stdout; results in
benchmarks/results/multiclass-defaults-*.md.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.preprocessing import LabelEncoder, StandardScaler

from primaldual import solve
from primaldual.datasets import load

SETS = ("dna.scale", "usps.t", "letter.scale", "shuttle", "news20")


def _how(r, loss):
    if loss == "multinomial" and "newton_iter" in r.trace[-1]:
        tr = r.trace[-1]
        legs = len(r.extras.get("path", [])) or 1
        trust = (f", trust region ({tr['rejected_steps']} steps turned down)"
                 if "trust_radius" in tr else "")
        each = "; ".join(f"{leg['seconds']:.1f} s, {leg['epochs']:g} passes, gap "
                         f"{leg['gap']:.1e}" for leg in r.extras.get("path", []))
        return (f"multinomial_newton: {tr['newton_iter']} Newton steps, {tr['cg_iter']} CG, "
                f"{tr['explicit_steps']} explicit, {tr.get('block_steps', 0)} "
                f"block-preconditioned{trust} (the last leg's); {r.n_epochs:g} passes" +
                (f" in {legs} legs ({each})" if legs > 1 else ""))
    return " -> ".join(f"{leg['method']} ({leg['seconds']:.1f} s, {leg['epochs']:g} ep, "
                       f"gap {leg['gap']:.1e})" for leg in r.extras.get("path", [])) \
        or f"{r.solver} ({r.n_epochs:g} ep)"


def cells(names, only=None, time_limit=None):
    """Every cell of the sets ``names``, or only those of ``only`` (specs
    ``g:multinomial:100`` as for ``--peers``); ``time_limit`` (seconds) is
    passed to each fit (``auto``'s one option besides the defaults)."""
    want = None if only is None else {(sc, loss, float(C)) for sc, loss, C in
                                      (spec.split(":") for spec in only)}
    for name in names:
        X, y = load(name)
        y = LabelEncoder().fit_transform(y)
        n = X.shape[0]
        for scaling in ("as given", "standardized"):
            Xs = X if scaling == "as given" else StandardScaler(with_mean=False).fit_transform(X)
            for loss in ("multinomial", "crammer_singer"):
                for C in (0.01, 1.0, 100.0):
                    if want is not None and ("gs"[scaling != "as given"], loss, C) not in want:
                        continue
                    t = time.perf_counter()
                    extra = {} if time_limit is None else {"time_limit": time_limit}
                    r = solve(Xs, y, loss=loss, lam=1.0 / (C * n), **extra)
                    el = time.perf_counter() - t
                    print(f"| {name} | {scaling} | {loss} | {C:g} | {el:.2f} | {r.rel_gap:.1e} "
                          f"| {'yes' if r.converged else '**no**'} | {_how(r, loss)} |",
                          flush=True)


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _lbfgs(prob, Xs, y, C, dstar):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    out = []
    for it in (100, 300, 1000, 3000):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ps, lr = _timed(lambda: LogisticRegression(C=C, fit_intercept=False, tol=0,
                                                       max_iter=it).fit(Xs, y))
        sub = (prob.primal(lr.coef_.T) - dstar) / abs(dstar)
        out.append(f"lbfgs {it} it: {ps:.2f} s, {sub:.1e}")
        if sub <= 1e-6:
            break
    return out


def _liblinear(prob, Xs, y, C, dstar):
    from liblinear.liblinearutil import train
    d, K = Xs.shape[1], int(y.max()) + 1
    out = []
    for eps in (0.1, 1e-3):
        ps, m = _timed(lambda: train(y.astype(np.float64), Xs, f"-s 4 -c {C} -e {eps} -q"))
        W = np.zeros((d, K))
        w = np.asarray(m.w[:d * m.nr_class]).reshape(d, m.nr_class)
        for col, lab in enumerate(m.get_labels()):
            W[:, int(lab)] = w[:, col]
        out.append(f"-s 4 -e {eps:g}: {ps:.2f} s, {(prob.primal(W) - dstar) / abs(dstar):.1e}")
    return out


def peers(specs, name="usps.t"):
    from threadpoolctl import threadpool_limits

    from primaldual.multiclass import MulticlassProblem
    X, y = load(name)
    y = LabelEncoder().fit_transform(y)
    n = X.shape[0]
    Xst = StandardScaler(with_mean=False).fit_transform(X)
    with threadpool_limits(1):
        for spec in specs:
            sc, loss, C = spec.split(":")
            C = float(C)
            Xs = X if sc == "g" else Xst
            lam = 1.0 / (C * n)
            prob = MulticlassProblem(Xs, y, loss, lam)
            secs, r = _timed(lambda: solve(Xs, y, loss=loss, lam=lam))
            peer = (_lbfgs if loss == "multinomial" else _liblinear)(prob, Xs, y, C, r.dual)
            print(f"| {name} | {'as given' if sc == 'g' else 'standardized'} | {loss} | {C:g} "
                  f"| {secs:.2f} | {r.rel_gap:.1e} | {r.converged} (P {r.primal:.9e}, "
                  f"D {r.dual:.9e}) | {'; '.join(peer)} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--peers", default=None)
    ap.add_argument("--cells", default=None, help="only these cells (as --peers)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per fit (default: none)")
    a = ap.parse_args(argv)
    if a.peers:
        peers(a.peers.split(","))
    else:
        cells(a.sets.split(","), None if a.cells is None else a.cells.split(","),
              a.time_limit)


if __name__ == "__main__":
    main()
