"""``primaldual cv``: k-fold cross-validation over one ``lam`` (or C), a list,
or a warm-started grid, as :class:`primaldual.LinearClassifierCV` runs it.

The folds are scikit-learn's (``StratifiedKFold`` for classification, ``KFold``
for regression, shuffled with ``--seed``).  Given values (``--lam``, ``--lams``,
``-c``, ``--Cs``) of a problem small enough for ``direct-newton`` are fitted
through the one fit core (:func:`.core.fit_model`) on the same folds, computed
here (:func:`stratified_folds`, :func:`kfolds`), without importing
scikit-learn; everything else fits with the estimators.
"""
from __future__ import annotations

import dataclasses
import json
import time
import warnings

import numpy as np

from .._util.interrupts import sigint_as_flag
from .._util.lazy import lazy_attr
from .. import direct_newton as direct
from .core import fit_model, predict_fitted
from .output import format_label, note
from .prepare import (TrainingData, class_weights, classes_of, read_training_data,
                      weight_of_class)


def _setup(req, X, y):
    """``(base, splitter, grid_est, c, metric, fold_weight)``: the estimator of
    every fit, the folds, the grid's estimator, the sample weights, the score,
    and the training weight W of a fold (as its fit weighs it)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    LinearClassifier = lazy_attr("primaldual.estimators", "LinearClassifier")
    LinearRegressor = lazy_attr("primaldual.estimators", "LinearRegressor")
    combined_weights = lazy_attr("primaldual.fitdata", "combined_weights")
    LinearClassifierCV = lazy_attr("primaldual.estimators_cv", "LinearClassifierCV")
    LinearRegressorCV = lazy_attr("primaldual.estimators_cv", "LinearRegressorCV")
    n = X.shape[0]
    common = dict(loss=req.loss_name, l1=req.l1, loss_params=req.solve_loss_params,
                  tol=req.tol, max_iter=req.max_epochs,
                  fit_intercept=req.bias is not None,
                  intercept_scaling=req.bias if req.bias is not None else 1.0,
                  random_state=req.seed, solver=req.solver,
                  solver_options=dict(req.options) or None)
    grid_kw = {k: v for k, v in common.items() if k != "tol"}
    if not req.classification:
        return (LinearRegressor(**common), KFold(req.folds, shuffle=True,
                                                 random_state=req.seed),
                LinearRegressorCV(n_alphas=req.n_lams, eps=req.lam_ratio, **grid_kw),
                np.ones(n), "mse", lambda tr: float(tr.size))
    classes = classes_of(y, req.loss_name, req.train)
    cw = class_weights(req, classes)
    counts = np.unique(y, return_counts=True)[1]
    if counts.min() < req.folds:
        cl = classes[int(np.argmin(counts))]
        raise ValueError(f"class {format_label(cl)} has {counts.min()} samples, fewer "
                         f"than --folds {req.folds}; lower --folds")

    def fold_weight(tr):           # W of a fold's training rows, weighted as its fit
        return float(np.sum(combined_weights(y[tr], classes, np.ones(tr.size), cw)))

    return (LinearClassifier(class_weight=cw, n_jobs=req.jobs, **common),
            StratifiedKFold(req.folds, shuffle=True, random_state=req.seed),
            LinearClassifierCV(class_weight=cw, n_alphas=req.n_lams, eps=req.lam_ratio,
                               **grid_kw),
            combined_weights(y, classes, np.ones(n), cw), "accuracy", fold_weight)


def cmd_cv(req) -> int:
    """k-fold cross-validation over one lam or a warm-started decreasing grid."""
    data = read_training_data(req)                                   # read
    X, y = data.X, data.y_raw
    n = X.shape[0]
    if req.folds > n:                                                # check
        raise ValueError(f"--folds {req.folds} is larger than the {n} samples of "
                         f"{req.train}")
    if _direct(req, X):
        c, metric, fold_weight, splits = _direct_setup(req, X, y)
    else:
        base, splitter, grid_est, c, metric, fold_weight = _setup(req, X, y)
    W = float(np.sum(c))
    if req.Cs is not None:           # LIBLINEAR's C: each fold's lam is 1/(C W_fold)
        lams = [1.0 / (C * W) for C in req.Cs]
    elif req.lams is not None:
        lams = list(req.lams)
    else:
        lams = [float(v) for v in grid_est._alpha_grid(X, y, c)]
        note(req, f"lam grid: {len(lams)} values from lam_max {lams[0]:.4g} down to "
                  f"{lams[-1]:.4g}")
    score_w = None if np.all(c == 1.0) else c

    scores = np.zeros((req.folds, len(lams)))                        # train
    epochs = np.zeros(len(lams))
    t0 = time.perf_counter()
    with sigint_as_flag() as interrupt:
        if _direct(req, X):
            unconverged = _cross_validate_core(req, data, splits, fold_weight, lams,
                                               metric, score_w, scores, epochs)
        else:
            unconverged = _cross_validate(req, splitter, X, y, fold_weight, base, lams,
                                          metric, score_w, scores, epochs, interrupt)
    elapsed = time.perf_counter() - t0
    mean, std = scores.mean(axis=0), scores.std(axis=0)
    best = int(np.argmax(mean)) if metric == "accuracy" else int(np.argmin(mean))
    if unconverged:
        note(req, f"{unconverged} of {req.folds * len(lams)} fits stopped before "
                  f"reaching tol {req.tol:g}; raise --max-epochs")
    Cs = list(req.Cs) if req.Cs is not None else [1.0 / (lam * W) for lam in lams]
    edge = _grid_edge(req, lams, Cs, best)                           # report
    out = {"metric": metric, "folds": req.folds, "n": int(n), "d": int(X.shape[1]),
           "loss": req.loss_name, "l1": float(req.l1), "bias": req.bias, "seed": req.seed,
           "grid": "C" if req.Cs is not None else "lam", "lams": lams, "Cs": Cs,
           "weight_total": W, "scores": scores.tolist(), "mean": mean.tolist(),
           "std": std.tolist(), "epochs": epochs.tolist(), "best_lam": lams[best],
           "best_C": Cs[best], "best_score": float(mean[best]),
           "best_at_edge": edge, "unconverged_fits": int(unconverged),
           "time_s": elapsed}
    if req.json:
        print(json.dumps(out))
        return 0
    label = "accuracy" if metric == "accuracy" else "MSE"
    print(f"{req.folds}-fold cross-validation of {req.train}: n={n}, loss={req.loss_name}")
    print(f"{'lam':>12} {'C = 1/(lam W)':>14} {label + ' mean':>14} {'std':>9} "
          f"{'epochs (all folds)':>19}")
    for j, lam in enumerate(lams):
        mark = "  <- best" if j == best else ""
        print(f"{lam:12.4g} {Cs[j]:14.4g} {mean[j]:14.6f} {std[j]:9.4f} "
              f"{epochs[j]:19g}{mark}")
    print(f"best      lam={lams[best]:g} (C={Cs[best]:g}): cross-validation {label} "
          f"{mean[best]:.6f} ({elapsed:.2f} s)")
    return 0


def _grid_edge(req, lams, Cs, best):
    """``"largest_lam"`` or ``"smallest_lam"`` when the best of a grid of more
    than one value is at its edge (stderr says so and how to extend the grid),
    else None."""
    if len(lams) < 2 or 0 < best < len(lams) - 1:
        return None
    smallest = best == len(lams) - 1
    if req.Cs is not None:
        side = "largest" if smallest else "smallest"
        hint = f"give --Cs with {'larger' if smallest else 'smaller'} values"
        note(req, f"warning: the best C {Cs[best]:g} is the {side} of the grid (its "
                  f"edge): a {'larger' if smallest else 'smaller'} C may score better; "
                  f"{hint}")
    else:
        side = "smallest" if smallest else "largest"
        if smallest and req.lams is None:
            hint = (f"extend the grid down with --lam-ratio {req.lam_ratio / 10:g} "
                    f"(or --lams with smaller values)")
        else:
            hint = f"give --lams with {'smaller' if smallest else 'larger'} values"
        note(req, f"warning: the best lam {lams[best]:g} is the {side} of the grid (its "
                  f"edge): a {'smaller' if smallest else 'larger'} lam may score better; "
                  f"{hint}")
    return "smallest_lam" if smallest else "largest_lam"


def _cross_validate(req, splitter, X, y, fold_weight, base, lams, metric, score_w, scores, epochs,
                    interrupt):
    """The folds and the lam grid; returns the number of fits that stopped
    before tol.  With -c/--Cs each fold fits lam = 1/(C W_fold), W_fold the
    weight of its training rows, as LIBLINEAR's -v with -c does; otherwise the
    lams as given.  Ctrl-C stops the fit running (it shares ``interrupt``) and
    raises KeyboardInterrupt here, between fits."""
    from sklearn.exceptions import ConvergenceWarning

    unconverged = 0
    for f, (tr, te) in enumerate(splitter.split(X, y)):
        est = base.__class__(**base.get_params()).set_params(warm_start=True)
        fold_lams = lams if req.Cs is None else [1.0 / (C * fold_weight(tr))
                                                  for C in req.Cs]
        tf = time.perf_counter()
        for j, lam in enumerate(fold_lams):
            est.set_params(alpha=float(lam))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                est.fit(X[tr], y[tr])
            if interrupt.is_set():          # the fit stopped on Ctrl-C: stop here
                raise KeyboardInterrupt
            unconverged += sum(issubclass(w.category, ConvergenceWarning) for w in caught)
            epochs[j] += float(np.sum(est.n_iter_))
            scores[f, j] = _fold_score(metric, est.predict(X[te]), y[te], score_w, te)
        _note_fold(req, f, len(lams), tf, metric, scores[f, -1])
    return unconverged


def _fold_score(metric, pred, y_test, score_w, te) -> float:
    """Accuracy or mean squared error of one fold's predictions, weighted by
    ``score_w[te]`` when scores are weighted."""
    w = None if score_w is None else score_w[te]
    if metric == "accuracy":
        return float(np.average(pred == y_test, weights=w))
    return float(np.average((pred - y_test) ** 2, weights=w))


def _note_fold(req, f, n_values, started, metric, last_score):
    note(req, f"fold {f + 1}/{req.folds}: {n_values} lam(s) in "
              f"{time.perf_counter() - started:.2f} s, {metric} at the last lam "
              f"{last_score:.4f}")


# ------------------------------------------------- given values, small problems
def _direct(req, X):
    """Whether the values given are fitted through the fit core (direct-newton)."""
    return ((req.lams is not None or req.Cs is not None) and req.max_epochs is None
            and direct.applies(req.loss_name, X.shape[0], X.shape[1], l1=req.l1,
                               solver=req.solver, options=req.options,
                               loss_params=req.solve_loss_params))


def stratified_folds(y, k, seed):
    """The test rows of scikit-learn's ``StratifiedKFold(k, shuffle=True,
    random_state=seed)``, computed as it computes them."""
    rng = np.random.RandomState(seed)
    _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
    _, class_perm = np.unique(first, return_inverse=True)
    encoded = class_perm[inverse]
    n_classes = first.size
    order = np.sort(encoded)
    allocation = np.asarray([np.bincount(order[i::k], minlength=n_classes)
                             for i in range(k)])
    test_folds = np.empty(y.shape[0], dtype="i")
    for c in range(n_classes):
        folds_for_class = np.arange(k).repeat(allocation[:, c])
        rng.shuffle(folds_for_class)
        test_folds[encoded == c] = folds_for_class
    return [np.flatnonzero(test_folds == i) for i in range(k)]


def kfolds(n, k, seed):
    """The test rows of scikit-learn's ``KFold(k, shuffle=True, random_state=seed)``."""
    indices = np.arange(n)
    np.random.RandomState(seed).shuffle(indices)
    sizes = np.full(k, n // k, dtype=int)
    sizes[: n % k] += 1
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return [np.sort(indices[bounds[i]:bounds[i + 1]]) for i in range(k)]


def _direct_setup(req, X, y):
    """``(c, metric, fold_weight, splits)`` of the fit-core path."""
    n = X.shape[0]
    if not req.classification:
        return (np.ones(n), "mse", lambda tr: float(tr.size),
                kfolds(n, req.folds, req.seed))
    classes = classes_of(y, req.loss_name, req.train)
    cw = class_weights(req, classes)
    counts = np.unique(y, return_counts=True)[1]
    if counts.min() < req.folds:
        cl = classes[int(np.argmin(counts))]
        raise ValueError(f"class {format_label(cl)} has {counts.min()} samples, fewer "
                         f"than --folds {req.folds}; lower --folds")
    c = np.ones(n) if not cw else weight_of_class(y, classes, cw)

    def fold_weight(tr):
        return float(tr.size) if not cw else float(np.sum(weight_of_class(y[tr], classes,
                                                                          cw)))
    return c, "accuracy", fold_weight, stratified_folds(y, req.folds, req.seed)


def _cross_validate_core(req, data, splits, fold_weight, lams, metric, score_w, scores,
                         epochs):
    """Every fold and value through :func:`.core.fit_model`; the number of fits
    that stopped before tol."""
    X, y = data.X, data.y_raw
    n = X.shape[0]
    unconverged = 0
    for f, te in enumerate(splits):
        keep = np.ones(n, dtype=bool)
        keep[te] = False
        tr = np.flatnonzero(keep)
        sub = TrainingData(X[tr], y[tr], None, None, data.index_base, data.nnz)
        tf = time.perf_counter()
        for j, lam in enumerate(lams):
            value = (dict(C=req.Cs[j], lam=None) if req.Cs is not None
                     else dict(C=None, lam=float(lam)))
            fitted = fit_model(dataclasses.replace(req, **value), sub, quiet_labels=True)
            unconverged += sum(not r.converged for r in fitted.results)
            epochs[j] += float(sum(r.n_epochs for r in fitted.results))
            scores[f, j] = _fold_score(metric, predict_fitted(fitted, X[te]), y[te],
                                       score_w, te)
        _note_fold(req, f, len(lams), tf, metric, scores[f, -1])
    return unconverged
