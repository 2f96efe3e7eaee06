"""``primaldual cv``: k-fold cross-validation over one ``lam`` or a warm-started
grid, as :class:`primaldual.LinearClassifierCV` runs it."""
from __future__ import annotations

import json
import math

import numpy as np

from ..estimators import LinearClassifier, LinearRegressor, combined_weights
from ..regpath import LinearClassifierCV, LinearRegressorCV
from .common import _class_weight_for, _classes_of, _note, _read_train_test, _run_options
from .files import _format_label
from .parser import _check_common
from .._util.interrupts import sigint_as_flag


def cmd_cv(args) -> int:
    """k-fold cross-validation over one lam or a warm-started decreasing grid."""
    import time
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import KFold, StratifiedKFold


    loss, loss_params, options = _check_common(args)
    if args.folds < 2:
        raise ValueError(f"--folds must be >= 2, got {args.folds}")
    given = [f for f, v in (("--lam", args.lam), ("--lams", args.lams)) if v is not None]
    if len(given) > 1:
        raise ValueError("give either --lam X (one value) or --lams X,Y,... (a list), "
                         "not both")
    if args.n_lams < 1:
        raise ValueError(f"--n-lams must be >= 1, got {args.n_lams}")
    if not (0 < args.lam_ratio < 1):
        raise ValueError(f"--lam-ratio must be in (0, 1), got {args.lam_ratio}")
    lams = None
    if args.lam is not None:
        lams = [args.lam]
    elif args.lams is not None:
        try:
            lams = [float(t) for t in args.lams.split(",") if t.strip()]
        except ValueError:
            raise ValueError(f"--lams expects numbers separated by commas, got "
                             f"{args.lams!r}") from None
    if lams is not None:
        if not lams or not all(math.isfinite(v) and v > 0 for v in lams):
            raise ValueError(f"every lam must be a finite number > 0, got "
                             f"{args.lam if args.lam is not None else args.lams}")
        if len(set(lams)) != len(lams):
            raise ValueError(f"--lams has repeated values: {args.lams}")

    X, y, _, _ = _read_train_test(args)
    n = X.shape[0]
    if args.folds > n:
        raise ValueError(f"--folds {args.folds} is larger than the {n} samples of "
                         f"{args.train}")
    options = _run_options(args, options)
    options["progress"] = False
    common = dict(loss=loss.name, l1=args.l1, loss_params=loss_params or None,
                  tol=args.tol, max_iter=args.max_epochs,
                  fit_intercept=args.bias is not None,
                  intercept_scaling=args.bias if args.bias is not None else 1.0,
                  random_state=args.seed, solver=args.solver,
                  solver_options=options or None)
    if loss.classification:
        classes = _classes_of(y, loss.name, args.train)
        cw = _class_weight_for(args.class_weight, classes, args.train)
        counts = np.unique(y, return_counts=True)[1]
        if counts.min() < args.folds:
            cl = classes[int(np.argmin(counts))]
            raise ValueError(f"class {_format_label(cl)} has {counts.min()} samples, fewer "
                             f"than --folds {args.folds}; lower --folds")
        base = LinearClassifier(class_weight=cw, n_jobs=args.jobs, **common)
        splitter = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed)
        grid_est = LinearClassifierCV(class_weight=cw, n_alphas=args.n_lams,
                                      eps=args.lam_ratio, **{k: v for k, v in common.items()
                                                             if k not in ("tol",)})
        c = combined_weights(y, classes, np.ones(n), cw)
        metric = "accuracy"
    else:
        base = LinearRegressor(**common)
        splitter = KFold(args.folds, shuffle=True, random_state=args.seed)
        grid_est = LinearRegressorCV(n_alphas=args.n_lams, eps=args.lam_ratio,
                                     **{k: v for k, v in common.items() if k != "tol"})
        c = np.ones(n)
        metric = "mse"
    if lams is None:
        lams = [float(v) for v in grid_est._alpha_grid(X, y, c)]
        _note(args, f"lam grid: {len(lams)} values from lam_max {lams[0]:.4g} down to "
                    f"{lams[-1]:.4g}")
    else:
        lams = sorted(lams, reverse=True)
    score_w = None if np.all(c == 1.0) else c

    scores = np.zeros((args.folds, len(lams)))
    epochs = np.zeros(len(lams))
    unconverged = 0
    t0 = time.perf_counter()
    with sigint_as_flag() as interrupt:
        unconverged_count = [0]
        _cross_validate(args, splitter, X, y, base, lams, metric, score_w, scores, epochs,
                        unconverged_count, interrupt)
    unconverged = unconverged_count[0]
    elapsed = time.perf_counter() - t0
    mean, std = scores.mean(axis=0), scores.std(axis=0)
    best = int(np.argmax(mean)) if metric == "accuracy" else int(np.argmin(mean))
    if unconverged:
        _note(args, f"{unconverged} of {args.folds * len(lams)} fits stopped before "
                    f"reaching tol {args.tol:g}; raise --max-epochs")
    out = {"metric": metric, "folds": args.folds, "n": int(n), "d": int(X.shape[1]),
           "loss": loss.name, "l1": float(args.l1), "bias": args.bias, "seed": args.seed,
           "lams": lams, "scores": scores.tolist(), "mean": mean.tolist(),
           "std": std.tolist(), "epochs": epochs.tolist(), "best_lam": lams[best],
           "best_score": float(mean[best]), "unconverged_fits": int(unconverged),
           "time_s": elapsed}
    if args.json:
        print(json.dumps(out))
        return 0
    label = "accuracy" if metric == "accuracy" else "MSE"
    print(f"{args.folds}-fold cross-validation of {args.train}: n={n}, loss={loss.name}")
    print(f"{'lam':>12} {'C = 1/(lam n)':>14} {label + ' mean':>14} {'std':>9} "
          f"{'epochs (all folds)':>19}")
    for j, lam in enumerate(lams):
        mark = "  <- best" if j == best else ""
        print(f"{lam:12.4g} {1.0 / (lam * n):14.4g} {mean[j]:14.6f} {std[j]:9.4f} "
              f"{epochs[j]:19g}{mark}")
    print(f"best      lam={lams[best]:g}: cross-validation {label} {mean[best]:.6f} "
          f"({elapsed:.2f} s)")
    return 0


def _cross_validate(args, splitter, X, y, base, lams, metric, score_w, scores, epochs,
                    unconverged, interrupt):
    """The folds and the lam grid; Ctrl-C stops the fit running (it shares
    ``interrupt``) and raises KeyboardInterrupt here, between fits."""
    import time
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    for f, (tr, te) in enumerate(splitter.split(X, y)):
        est = base.__class__(**base.get_params()).set_params(warm_start=True)
        tf = time.perf_counter()
        for j, lam in enumerate(lams):
            est.set_params(alpha=float(lam))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                est.fit(X[tr], y[tr])
            if interrupt.is_set():          # the fit stopped on Ctrl-C: stop here
                raise KeyboardInterrupt
            unconverged[0] += sum(issubclass(w.category, ConvergenceWarning) for w in caught)
            epochs[j] += float(np.sum(est.n_iter_))
            pred = est.predict(X[te])
            w = None if score_w is None else score_w[te]
            if metric == "accuracy":
                scores[f, j] = float(np.average(pred == y[te], weights=w))
            else:
                scores[f, j] = float(np.average((pred - y[te]) ** 2, weights=w))
        _note(args, f"fold {f + 1}/{args.folds}: {len(lams)} lam(s) in "
                    f"{time.perf_counter() - tf:.2f} s, {metric} at the last lam "
                    f"{scores[f, -1]:.4f}")
