"""One fit for every command that trains: binary, one-vs-rest, regression, cluster.

:func:`fit_model` turns a request and its data into :class:`Fitted`: one
problem for two labels (the larger is +1) or a regression, one problem per
class for more labels (one-vs-rest, as :class:`primaldual.LinearClassifier`
and LIBLINEAR's ``train`` do), each solved by :func:`solve_one`.  A request
with ``--scheduler`` is fitted on the cluster (:mod:`.cluster`) and comes
back as the same :class:`Fitted`.  ``fit``, ``train`` and ``cv`` all fit
through here; :mod:`.report` describes and saves the result.

``solve_one`` runs :func:`primaldual.solve`, except that ``--solver auto`` on
a small smooth L2 problem runs :mod:`primaldual.direct_newton` (no compiled kernels to load).
Class weights follow ``req.weight_rule``: ``sample`` (a sample keeps its class
weight in every problem, as the estimators do) or ``liblinear`` (a problem
weighs its positive class only, as ``-wi`` does).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._util.interrupts import sigint_as_flag
from .._util.labels import encode_pm1
from .._util.lazy import lazy_attr, lazy_module
from .._util.seeding import seed_entropy, spawn_seeds
from .. import direct_newton as direct
from .output import format_label, note
from .prepare import (check_test_labels, class_weights, classes_of,
                      first_occurrence_order, note_weights, split_bias, weight_of_class,
                      with_bias)


#: losses that train every class in one problem (labels 0..K-1, a (d, K) weight matrix)
MULTICLASS_LOSSES = ("crammer_singer", "multinomial")


@dataclass
class Fitted:
    """The outcome of a fit: one problem, or one per class (one-vs-rest)."""

    kind: str                        # "classifier" or "regressor"
    classes: Any                     # sorted label values, None for a regressor
    coef: np.ndarray                 # (K, d)
    intercept: np.ndarray            # (K,)
    results: list                    # one solve result per problem
    labels: list                     # the class of each problem (None: one problem)
    lams: list                       # the strength of each problem
    weight_totals: list              # W of each problem
    n: int
    d: int
    nnz: int
    time_s: float
    storage: str | None = None
    label_order: Any = None          # LIBLINEAR's order of the classes
    interrupted: bool = False
    index_base: int | None = None    # the cluster's part files (local fits: the data's)
    extra: dict = field(default_factory=dict)

    @property
    def one_vs_rest(self) -> bool:
        return len(self.results) > 1


@dataclass
class Problem:
    """One binary or regression problem of a fit."""

    label: Any                       # the positive class (one-vs-rest), else None
    y: np.ndarray
    weights: Any
    y_test: Any = None


def fit_model(req, data, *, quiet_labels=False, warm=None) -> Fitted:
    """Fit the request's problem(s) on ``data`` (:class:`.prepare.TrainingData`);
    ``warm``: a previous fit on the same rows, to start each problem from."""
    if getattr(req, "scheduler", None):
        return lazy_attr("primaldual.cli.cluster", "fit_on_cluster")(req)
    problems, classes = plan(req, data, quiet_labels)
    Xb = with_bias(data.X, req.bias)
    Xtb = with_bias(data.Xt, req.bias)
    seeds = ([req.seed] if len(problems) == 1
             else spawn_seeds(seed_entropy(req.seed), len(problems)))
    t0 = time.perf_counter()
    results, lams, totals = [], [], []
    with sigint_as_flag() as interrupt:      # one Ctrl-C stops every problem
        for k, (prob, seed) in enumerate(zip(problems, seeds)):
            W = float(data.X.shape[0] if prob.weights is None else np.sum(prob.weights))
            lam = req.lam_for(W)
            if k == 0 and req.C is not None and not quiet_labels:
                what = "n" if prob.weights is None else "the total sample weight"
                name = "l1" if req.penalty == "l1" else "lam"
                note(req, f"-c {req.C:g}: {name} = 1/(C W) = 1/({req.C:g} * {W:g}) = "
                          f"{lam:.6g} (W = {what})")
            eval_set = None if Xtb is None or prob.y_test is None else (Xtb, prob.y_test)
            w0 = None if warm is None else warm.results[k].coef
            results.append(solve_one(req, Xb, prob.y, prob.weights, lam, seed, eval_set,
                                     w0=w0))
            lams.append(lam)
            totals.append(W)
    if req.loss_name in MULTICLASS_LOSSES:          # one problem, one row per class
        full = np.asarray(results[0].coef, dtype=np.float64)
        full = full.T if full.shape[0] == Xb.shape[1] else full
        pairs = [split_bias(row, req.bias) for row in full]
    else:
        pairs = [split_bias(r.coef, req.bias) for r in results]
    kind = "classifier" if req.classification else "regressor"
    return Fitted(kind=kind, classes=classes,
                  coef=np.vstack([c for c, _ in pairs]),
                  intercept=np.array([b for _, b in pairs]), results=results,
                  labels=(list(classes) if req.loss_name in MULTICLASS_LOSSES
                          else [p.label for p in problems]),
                  lams=lams, weight_totals=totals,
                  n=int(data.X.shape[0]), d=int(data.X.shape[1]), nnz=data.nnz,
                  time_s=time.perf_counter() - t0, storage=data.storage,
                  label_order=(None if classes is None
                               else first_occurrence_order(data.y_raw, classes)),
                  interrupted=interrupt.is_set())


def plan(req, data, quiet_labels=False):
    """``(problems, classes)``: the binary, one-vs-rest or regression problems."""
    if not req.classification:
        return [Problem(None, data.y_raw, None, data.yt_raw)], None
    classes = classes_of(data.y_raw, req.loss_name, req.train)
    if data.Xt is not None:
        check_test_labels(req, classes, data.yt_raw)
    cw = class_weights(req, classes)
    per_class = None if not cw else weight_of_class(data.y_raw, classes, cw)
    if req.loss_name in MULTICLASS_LOSSES:        # y in 0..K-1, one problem
        y = np.searchsorted(classes, data.y_raw).astype(np.float64)
        return [Problem(None, y, per_class)], classes
    if classes.size == 2:
        if not quiet_labels:
            note(req, f"labels of {req.train}: {format_label(classes[0])} -> -1, "
                      f"{format_label(classes[1])} -> +1")
            note_weights(req, data.y_raw, classes, per_class)
        y = encode_pm1(data.y_raw, classes[1], classes[0], source=req.train)
        yt = None if data.Xt is None else encode_pm1(data.yt_raw, classes[1], classes[0],
                                                     source=req.test)
        return [Problem(None, y, per_class, yt)], classes
    if getattr(req, "checkpoint", None) or getattr(req, "resume", False):
        raise ValueError(f"--checkpoint/--resume hold one solver state, but {req.train} "
                         f"has {classes.size} classes (one-vs-rest trains {classes.size} "
                         f"problems); drop --checkpoint for multiclass data")
    if not quiet_labels:
        note(req, f"{classes.size} classes in {req.train} "
                  f"({', '.join(format_label(v) for v in classes[:10])}"
                  f"{', ...' if classes.size > 10 else ''}): one-vs-rest, one problem per "
                  f"class")
        note_weights(req, data.y_raw, classes, per_class)
    problems = []
    for c in classes:
        y = np.where(data.y_raw == c, 1.0, -1.0)
        if per_class is None:
            weights = None
        elif req.weight_rule == "liblinear":
            weights = np.where(data.y_raw == c, per_class, 1.0)
        else:
            weights = per_class
        problems.append(Problem(c, y, weights))
    return problems, classes


def solve_one(req, X, y, weights, lam, seed, eval_set=None, w0=None):
    """One problem: :mod:`primaldual.direct_newton` for ``--solver auto`` on a small smooth L2
    problem (warm-started from ``w0`` when given), else :func:`primaldual.solve`
    with exactly the request's options."""
    strength = dict(lam=0.0, l1=lam) if req.penalty == "l1" else dict(lam=lam, l1=req.l1)
    n, d = X.shape
    if req.max_epochs is None and direct.applies(
            req.loss_name, n, d, l1=strength["l1"], solver=req.solver,
            options=req.options, loss_params=req.solve_loss_params):
        res = direct.solve_direct(X, y, loss=req.loss_name, lam=strength["lam"],
                                  tol=req.tol, sample_weight=weights, w0=w0,
                                  param=direct.param_of(req.loss_name,
                                                        req.solve_loss_params))
        if res.converged:
            return res
    solve = lazy_module("primaldual").solve
    return solve(X, y, loss=req.loss_name, solver=req.solver, tol=req.tol,
                 max_epochs=req.max_epochs, random_state=seed, sample_weight=weights,
                 loss_params=req.solve_loss_params, eval_set=eval_set,
                 n_jobs=req.n_jobs, **strength, **req.options)


def predict_fitted(fitted, X):
    """The predictions of a fit on rows ``X`` (scaled as the training rows)."""
    scores = np.asarray(X @ fitted.coef.T, dtype=np.float64) + fitted.intercept
    if fitted.kind == "regressor":
        return scores[:, 0]
    if scores.shape[1] == 1:
        return np.where(scores[:, 0] > 0, fitted.classes[1], fitted.classes[0])
    return np.asarray(fitted.labels)[np.argmax(scores, axis=1)]
