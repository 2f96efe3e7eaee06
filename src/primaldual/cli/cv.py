"""``primaldual cv``: k-fold cross-validation over one ``lam`` (or C), a list,
or a warm-started grid, as :class:`primaldual.LinearClassifierCV` runs it."""
from __future__ import annotations

import json
import time
import warnings

import numpy as np

from .._util.interrupts import sigint_as_flag
from ..estimators import LinearClassifier, LinearRegressor
from ..fitdata import combined_weights
from ..regpath import LinearClassifierCV, LinearRegressorCV
from .output import format_label, note
from .prepare import class_weight_for, classes_of, read_training_data


def cmd_cv(req) -> int:
    """k-fold cross-validation over one lam or a warm-started decreasing grid."""
    from sklearn.model_selection import KFold, StratifiedKFold

    data = read_training_data(req)                                   # read
    X, y = data.X, data.y_raw
    n = X.shape[0]
    if req.folds > n:                                                # check
        raise ValueError(f"--folds {req.folds} is larger than the {n} samples of "
                         f"{req.train}")
    common = dict(loss=req.loss.name, l1=req.l1, loss_params=req.solve_loss_params,
                  tol=req.tol, max_iter=req.max_epochs,
                  fit_intercept=req.bias is not None,
                  intercept_scaling=req.bias if req.bias is not None else 1.0,
                  random_state=req.seed, solver=req.solver,
                  solver_options=dict(req.options) or None)
    grid_kw = {k: v for k, v in common.items() if k != "tol"}
    if req.loss.classification:
        classes = classes_of(y, req.loss.name, req.train)
        cw = class_weight_for(req.class_weight, classes, req.train)
        counts = np.unique(y, return_counts=True)[1]
        if counts.min() < req.folds:
            cl = classes[int(np.argmin(counts))]
            raise ValueError(f"class {format_label(cl)} has {counts.min()} samples, fewer "
                             f"than --folds {req.folds}; lower --folds")
        base = LinearClassifier(class_weight=cw, n_jobs=req.jobs, **common)
        splitter = StratifiedKFold(req.folds, shuffle=True, random_state=req.seed)
        grid_est = LinearClassifierCV(class_weight=cw, n_alphas=req.n_lams,
                                      eps=req.lam_ratio, **grid_kw)
        c = combined_weights(y, classes, np.ones(n), cw)
        metric = "accuracy"

        def fold_weight(tr):           # W of a fold's training rows, weighted as its fit
            return float(np.sum(combined_weights(y[tr], classes, np.ones(tr.size), cw)))
    else:
        base = LinearRegressor(**common)
        splitter = KFold(req.folds, shuffle=True, random_state=req.seed)
        grid_est = LinearRegressorCV(n_alphas=req.n_lams, eps=req.lam_ratio, **grid_kw)
        c = np.ones(n)
        metric = "mse"

        def fold_weight(tr):
            return float(tr.size)
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
        unconverged = _cross_validate(req, splitter, X, y, fold_weight, base, lams, metric, score_w,
                                      scores, epochs, interrupt)
    elapsed = time.perf_counter() - t0
    mean, std = scores.mean(axis=0), scores.std(axis=0)
    best = int(np.argmax(mean)) if metric == "accuracy" else int(np.argmin(mean))
    if unconverged:
        note(req, f"{unconverged} of {req.folds * len(lams)} fits stopped before "
                  f"reaching tol {req.tol:g}; raise --max-epochs")
    Cs = list(req.Cs) if req.Cs is not None else [1.0 / (lam * W) for lam in lams]
    edge = _grid_edge(req, lams, Cs, best)                           # report
    out = {"metric": metric, "folds": req.folds, "n": int(n), "d": int(X.shape[1]),
           "loss": req.loss.name, "l1": float(req.l1), "bias": req.bias, "seed": req.seed,
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
    print(f"{req.folds}-fold cross-validation of {req.train}: n={n}, loss={req.loss.name}")
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
            pred = est.predict(X[te])
            w = None if score_w is None else score_w[te]
            if metric == "accuracy":
                scores[f, j] = float(np.average(pred == y[te], weights=w))
            else:
                scores[f, j] = float(np.average((pred - y[te]) ** 2, weights=w))
        note(req, f"fold {f + 1}/{req.folds}: {len(lams)} lam(s) in "
                  f"{time.perf_counter() - tf:.2f} s, {metric} at the last lam "
                  f"{scores[f, -1]:.4f}")
    return unconverged
