"""The multiclass losses in :class:`primaldual.LinearClassifier`
(``loss="multinomial"`` or ``"crammer_singer"``; docs/multiclass-models.md).

One problem with a (d, K) weight matrix replaces one-vs-rest: ``coef_`` has
shape (K, d) and ``intercept_`` (K,) as in scikit-learn, for two classes too;
``dual_coef_`` is (K, n) (row k: the dual variables of class k, 0 on rows of
weight 0); ``gap_``, ``rel_gap_``, ``converged_``, ``primal_`` and ``dual_``
are scalars.  The intercept is a constant feature of value
``intercept_scaling`` with a regularized weight per class, as for the other
losses.  Sample and class weights multiply (``c_i``); ``warm_start=True``
starts from the previous ``dual_coef_`` (feasible for any strength and
weights, as in the binary case) or, for the multinomial loss, from it mapped
to its primal point.
"""
from __future__ import annotations

import math

import numpy as np

from .multiclass import softmax
from .solvers import solve

__all__ = ["fit_multiclass", "multinomial_proba", "store_result"]


def _previous_dual(est, K, n, keep):
    if not (est.warm_start and hasattr(est, "dual_coef_")):
        return None
    prev = np.asarray(est.dual_coef_)
    if prev.shape != (K, n):
        raise ValueError(f"warm_start=True needs the same training rows and classes as the "
                         f"previous fit: dual_coef_ has shape {prev.shape} but this fit has "
                         f"{n} samples and {K} classes; set warm_start=False or refit on "
                         f"the same data")
    return np.ascontiguousarray(prev[:, keep].T)


def fit_multiclass(est, X, Xa, yk, ck, keep, n):
    """Fit ``est`` (a LinearClassifier with a multiclass loss) on the kept rows:
    ``Xa`` (intercept column appended, rows of weight 0 removed), their labels
    ``yk`` and combined weights ``ck``; ``keep`` marks them among the ``n``
    rows of ``X``.  Returns ``est``."""
    opts = est._validate_params_values()
    classes = est.classes_
    K = classes.size
    y_idx = np.searchsorted(classes, yk)
    warm = _previous_dual(est, K, n, keep)
    if warm is not None:
        opts = dict(opts, warm_start=warm)
    lam = est._strength(float(ck.sum()))
    res = solve(Xa, y_idx, loss=est.loss, lam=lam, solver=est.solver, tol=float(est.tol),
                max_epochs=None if est.max_iter is None else float(est.max_iter),
                random_state=est.random_state,
                sample_weight=None if np.all(ck == 1.0) else ck, l1=float(est.l1),
                loss_params={"n_classes": K}, **opts)
    dual = np.zeros((K, n))
    dual[:, keep] = res.dual_coef.T
    store_result(est, res, K, dual)
    est._warn_convergence([res], [None], X)
    return est


def store_result(est, res, K, dual_coef):
    """Set ``est``'s fitted attributes from the multiclass result ``res`` of
    ``K`` classes: ``coef_`` (K, d), ``intercept_`` (K,), ``dual_coef_`` (K,
    n, given), the scalars of the certificate, ``trace_`` and ``solver_``."""
    coef, intercept = est._split(res.coef)
    est.coef_ = np.ascontiguousarray(coef.T)
    est.intercept_ = (np.zeros(K) if np.isscalar(intercept)
                      else np.asarray(intercept, dtype=np.float64))
    est.dual_coef_ = dual_coef
    est.n_iter_ = np.array([int(math.ceil(res.n_epochs - 1e-9))], dtype=np.int64)
    est.primal_, est.dual_ = float(res.primal), float(res.dual)
    est.gap_ = max(float(res.gap), 0.0)
    est.rel_gap_ = max(float(res.rel_gap), 0.0)
    est.converged_ = bool(res.converged)
    est.trace_ = [res.trace]
    est.solver_ = res.solver


def multinomial_proba(scores):
    """Softmax of the decision function (n, K)."""
    return softmax(np.asarray(scores, dtype=np.float64))
