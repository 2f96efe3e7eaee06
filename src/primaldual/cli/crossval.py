"""``train -v K`` and ``train -C``: LIBLINEAR's cross-validation and C search.

The rows are shuffled once (seeded) and cut into K contiguous folds, as
LIBLINEAR's ``cross_validation`` does; every fold is fitted by the one fit
core (:func:`.core.fit_model`) and predicts its held-out rows.  ``-v`` prints
``Cross Validation Accuracy = %g%%`` (or, for regression, the mean squared
error and the squared correlation coefficient).  ``-C`` doubles C from
LIBLINEAR's start value (``2^floor(log2(1/(l max ||x||^2)))``, halved for the
L2-loss SVC) up to 1024, each fold warm-started from its fit at the previous
C, and stops once no fold's ``w`` moves any more; it prints LIBLINEAR's lines
(``log2c= ... rate= ...``, ``Best C = ...  CV accuracy = ...%``).  For -s 11
the search runs for each ``p`` of LIBLINEAR's grid (20ths of ``max |y|``, from
``-p`` down when given) with C up to 2^20 and ranks by the mean squared error
(``Best C = ... Best p = ...  CV MSE = ...``).
"""
from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType

import numpy as np

from .core import fit_model, predict_fitted
from .prepare import TrainingData, read_training_data, with_bias

MAX_C = 1024.0
#: -s 11: the largest C and the number of steps of p (LIBLINEAR's find_parameters)
MAX_C_SVR = 1048576.0
P_STEPS = 20
#: a fold's w counts as unchanged from one C to the next below this relative move
UNCHANGED = 1e-6


def folds_of(n, k, seed):
    """The held-out rows of each of ``k`` folds of a seeded shuffle of ``n`` rows."""
    perm = np.random.default_rng(seed).permutation(n)
    starts = [i * n // k for i in range(k + 1)]
    return [perm[starts[i]:starts[i + 1]] for i in range(k)]


def _subset(data, rows):
    return TrainingData(data.X[rows], data.y_raw[rows], None, None, data.index_base,
                        data.nnz)


def _cross_predict(req, data, folds, warm=None):
    """Held-out predictions of every row, and each fold's fit."""
    n = data.X.shape[0]
    target = np.zeros(n)
    fits = []
    for f, held in enumerate(folds):
        keep = np.ones(n, dtype=bool)
        keep[held] = False
        fitted = fit_model(req, _subset(data, np.flatnonzero(keep)), quiet_labels=True,
                           warm=None if warm is None else warm[f])
        target[held] = predict_fitted(fitted, data.X[held])
        fits.append(fitted)
    return target, fits


def _folds(req, n):
    k = req.folds
    if k > n:
        print("WARNING: # folds > # data. Will use # folds = # data instead (i.e., "
              "leave-one-out cross validation)")
        k = n
    return folds_of(n, k, req.seed)


def liblinear_cv(req) -> int:
    """``train -v K``."""
    data = read_training_data(req)
    y = data.y_raw
    target, _ = _cross_predict(req, data, _folds(req, y.shape[0]))
    if req.classification:
        print(f"Cross Validation Accuracy = {100.0 * np.mean(target == y):g}%")
        return 0
    n = y.shape[0]
    sv, sy = float(target.sum()), float(y.sum())
    svv, syy, svy = float(target @ target), float(y @ y), float(target @ y)
    den = (n * svv - sv * sv) * (n * syy - sy * sy)
    print(f"Cross Validation Mean squared error = {float(np.mean((target - y) ** 2)):g}")
    print(f"Cross Validation Squared correlation coefficient = "
          f"{((n * svy - sv * sy) ** 2) / den if den else float('nan'):g}")
    return 0


def _max_xtx(req, data):
    Xb = with_bias(data.X, req.bias)
    sq = Xb.multiply(Xb).sum(axis=1) if hasattr(Xb, "multiply") and not isinstance(
        Xb, np.ndarray) else (Xb * Xb).sum(axis=1)
    return float(np.max(np.asarray(sq)))


def start_c(req, data, p=None):
    """LIBLINEAR's first C of the search (its ``calc_start_C``); ``p`` for -s 11."""
    max_xtx = _max_xtx(req, data)
    n = data.X.shape[0]
    if p is not None:
        ya = np.abs(data.y_raw)
        loss = float(np.sum(np.maximum(ya - p, 0.0) ** 2))
        if loss <= 0 or max_xtx <= 0:
            return math.inf
        min_c = 0.01 * loss / (8.0 * float(ya.sum()) ** 2 * max_xtx)
    elif req.loss_name == "logistic":
        min_c = 1.0 / (n * max_xtx)
    else:
        min_c = 1.0 / (2 * n * max_xtx)
    return 2.0 ** math.floor(math.log2(min_c))


def find_c(req) -> int:
    """``train -C``: LIBLINEAR's warm-started search of C by cross-validation
    (of C and the epsilon ``p`` for -s 11)."""
    data = read_training_data(req)
    folds = _folds(req, data.y_raw.shape[0])
    print(f"Doing parameter search with {len(folds)}-fold cross validation.")
    if not req.classification:
        return _find_c_p(req, data, folds)
    C = min(req.C if req.C_given else start_c(req, data), MAX_C)
    best_c, best_rate = _search_c(req, data, folds, C, MAX_C)
    print(f"Best C = {best_c:g}  CV accuracy = {100.0 * best_rate:g}%")
    return 0


def _find_c_p(req, data, folds) -> int:
    """-s 11: for p from the largest below ``max |y|`` (or from ``-p``) down to 0
    in 20ths of ``max |y|``, the search of C; the least mean squared error wins."""
    max_p = float(np.max(np.abs(data.y_raw)))
    step = max_p / P_STEPS
    top = P_STEPS - 1
    if req.p_given and req.loss_params["epsilon"] > 0 and step > 0:
        top = min(int(req.loss_params["epsilon"] / step), top)
    best = (req.C, 0.0, math.inf)
    for i in range(top, -1, -1):
        p = i * step
        sub = dataclasses.replace(req, loss_params=MappingProxyType({"epsilon": p}))
        C = min(req.C if req.C_given else start_c(req, data, p), MAX_C_SVR)
        c, mse = _search_c(sub, data, folds, C, MAX_C_SVR)
        if mse < best[2]:
            best = (c, p, mse)
    print(f"Best C = {best[0]:g} Best p = {best[1]:g}  CV MSE = {best[2]:g}")
    return 0


def _search_c(req, data, folds, C, max_c):
    """LIBLINEAR's ``find_parameter_C``: C doubles from ``C`` up to ``max_c``,
    each fold warm-started from its fit at the previous C, until no fold's ``w``
    moved five times; ``(best C, its accuracy or mean squared error)``."""
    y = data.y_raw
    regression = not req.classification
    best_c, best, warm, unchanged = C, (math.inf if regression else 0.0), None, 0
    while C <= max_c:
        target, fits = _cross_predict(dataclasses.replace(req, C=C), data, folds, warm)
        if regression:
            score = float(np.mean((target - y) ** 2))
            line = (f"p={req.loss_params['epsilon']:7.2f}\t"
                    f"Mean squared error={score:g}")
        else:
            score = float(np.mean(target == y))
            line = f"rate={100.0 * score:g}"
        if (score < best) if regression else (score > best):
            best_c, best = C, score
        if not req.quiet:
            print(f"log2c={math.log2(C):7.2f}\t{line}")
        unchanged = unchanged + 1 if warm is not None and _still(warm, fits) else 0
        warm = fits
        if unchanged == 5:
            break
        C *= 2.0
    if C > max_c and not req.quiet:
        print("WARNING: maximum C reached.")
    return best_c, best


def _still(before, after):
    """Whether no fold's coefficients moved (relative change <= UNCHANGED)."""
    for a, b in zip(before, after):
        for ra, rb in zip(a.results, b.results):
            scale = max(float(np.linalg.norm(rb.coef)), 1e-12)
            if float(np.linalg.norm(rb.coef - ra.coef)) > UNCHANGED * scale:
                return False
    return True
