"""``train -v K`` and ``train -C``: LIBLINEAR's cross-validation and C search.

The rows are shuffled once (seeded) and cut into K contiguous folds, as
LIBLINEAR's ``cross_validation`` does; every fold is fitted by the one fit
core (:func:`.core.fit_model`) and predicts its held-out rows.  ``-v`` prints
``Cross Validation Accuracy = %g%%`` (or, for regression, the mean squared
error and the squared correlation coefficient).  ``-C`` doubles C from
LIBLINEAR's start value (``2^floor(log2(1/(l max ||x||^2)))``, halved for the
L2-loss SVC) up to 1024, each fold warm-started from its fit at the previous
C, and stops once no fold's ``w`` moves any more; it prints LIBLINEAR's lines
(``log2c= ... rate= ...``, ``Best C = ...  CV accuracy = ...%``).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .core import fit_model, predict_fitted
from .prepare import TrainingData, read_training_data, with_bias

MAX_C = 1024.0
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


def start_c(req, data):
    """LIBLINEAR's first C of the search (its ``calc_start_C``)."""
    Xb = with_bias(data.X, req.bias)
    sq = Xb.multiply(Xb).sum(axis=1) if hasattr(Xb, "multiply") and not isinstance(
        Xb, np.ndarray) else (Xb * Xb).sum(axis=1)
    max_xtx = float(np.max(np.asarray(sq)))
    n = data.X.shape[0]
    min_c = 1.0 / (n * max_xtx) if req.loss_name == "logistic" else \
        1.0 / (2 * n * max_xtx)
    return 2.0 ** math.floor(math.log2(min_c))


def find_c(req) -> int:
    """``train -C``: LIBLINEAR's warm-started search of C by cross-validation."""
    data = read_training_data(req)
    y = data.y_raw
    folds = _folds(req, y.shape[0])
    print(f"Doing parameter search with {len(folds)}-fold cross validation.")
    C = min(req.C if req.C_given else start_c(req, data), MAX_C)
    best_c, best_rate, warm, unchanged = C, -1.0, None, 0
    while C <= MAX_C:
        sub = dataclasses.replace(req, C=C)
        target, fits = _cross_predict(sub, data, folds, warm)
        rate = float(np.mean(target == y))
        if rate > best_rate:
            best_c, best_rate = C, rate
        if not req.quiet:
            print(f"log2c={math.log2(C):7.2f}\trate={100.0 * rate:g}")
        unchanged = unchanged + 1 if warm is not None and _still(warm, fits) else 0
        warm = fits
        if unchanged == 5:
            break
        C *= 2.0
    if C > MAX_C and not req.quiet:
        print("WARNING: maximum C reached.")
    print(f"Best C = {best_c:g}  CV accuracy = {100.0 * best_rate:g}%")
    return 0


def _still(before, after):
    """Whether no fold's coefficients moved (relative change <= UNCHANGED)."""
    for a, b in zip(before, after):
        for ra, rb in zip(a.results, b.results):
            scale = max(float(np.linalg.norm(rb.coef)), 1e-12)
            if float(np.linalg.norm(rb.coef - ra.coef)) > UNCHANGED * scale:
                return False
    return True
