"""The step on the summed update of a CoCoA+ round (``aggregation="line_search"``).

Lee & Roth, "Distributed Box-Constrained Quadratic Optimization for Dual
Linear SVM" (ICML 2015), and Lee & Chang, "Distributed block-diagonal
approximation methods for regularized empirical risk minimization" (Machine
Learning 2020): every partition solves its local subproblem as if alone
(``sigma' = 1``); the driver, which holds every ``Delta v_k``, picks

    theta = argmax_{0 <= theta <= tmax} D(alpha + theta Delta alpha)

where ``Delta alpha`` stacks the partitions' changes and ``tmax`` keeps
``alpha`` dual feasible.  ``D`` along the line is
``D(0) + E(theta)/W - (theta v.Dv + theta^2 ||Dv||^2 / 2) / lam`` with the
loss part ``E`` reduced from the partitions as scalars
(:func:`primaldual.kernels.summed_step.line_terms`); ``v . Dv`` and
``||Dv||^2`` are computed here from the changes the driver already has.

* hinge, smoothed hinge, squared hinge, squared, absolute: ``D`` is a concave
  quadratic on ``[0, tmax]``, so ``theta`` is its clipped maximizer, in closed
  form, from one reduction at ``theta = 0``;
* logistic, epsilon-insensitive: a safeguarded 1-D Newton search on
  ``[0, tmax]`` from ``theta = 1`` (each trial one scalar reduction); the
  step taken is the best trial, so ``D`` never decreases.

Both engines call :func:`summed_step` with the partitions' terms summed in
partition order, so they take the same step.
"""
from __future__ import annotations

import math

import numpy as np

from ..kernels.summed_step import QUADRATIC_DUALS

__all__ = ["summed_step", "sum_changes", "sum_terms", "MAX_TRIALS"]

#: at most this many trials of the 1-D search (logistic, epsilon-insensitive)
MAX_TRIALS = 8
#: the search stops when a Newton step moves theta by less than this (relative)
_THETA_TOL = 1e-6


def sum_changes(changes, d):
    """``Delta v = sum_k Delta v_k`` (dense) from the sparse ``(cols, vals)``."""
    dv = np.zeros(d)
    for cols, vals in changes:
        dv[cols] += vals
    return dv


def sum_terms(parts):
    """Add per-partition ``(e, g, h, tmax, quadratic)`` in partition order."""
    e = g = h = 0.0
    tmax = math.inf
    quadratic = True
    for pe, pg, ph, pt, pq in parts:
        e += pe
        g += pg
        h += ph
        tmax = min(tmax, pt)
        quadratic = quadratic and bool(pq)
    return e, g, h, tmax, quadratic


def summed_step(evaluate, v, changes, lam, W):
    """``theta`` for the round whose changes are ``changes`` (module docstring).

    ``evaluate(theta)`` returns the summed ``(e, g, h, tmax, quadratic)``
    (:func:`sum_terms`); ``v`` is the dual image before the round.  Returns
    ``(theta, trials)``."""
    dv = sum_changes(changes, v.shape[0])
    vdv = float(v @ dv)
    dvdv = float(dv @ dv)
    _, g0, h0, tmax, quadratic = evaluate(0.0)
    slope0 = g0 / W - vdv / lam
    if not slope0 > 0.0:
        return 0.0, 1            # no ascent along the sum (at the optimum, to rounding)
    if quadratic:
        curv = h0 / W + dvdv / lam
        theta = slope0 / curv if curv > 0.0 else math.inf
        theta = min(theta, tmax)
        if not math.isfinite(theta):
            theta = 1.0          # D linear and unbounded along the line: never with lam > 0
        return float(theta), 1
    return _search(evaluate, vdv, dvdv, lam, W, tmax)


def _search(evaluate, vdv, dvdv, lam, W, tmax):
    lo, hi = 0.0, tmax
    best, best_f = 0.0, 0.0
    theta = min(1.0, tmax)
    trials = 1
    for _ in range(MAX_TRIALS):
        e, g, h, _, _ = evaluate(theta)
        trials += 1
        f = e / W - (theta * vdv + 0.5 * theta * theta * dvdv) / lam
        slope = g / W - (vdv + theta * dvdv) / lam
        curv = h / W + dvdv / lam
        if f > best_f:
            best, best_f = theta, f
        if slope > 0.0:
            lo = theta
        else:
            hi = theta
        if slope == 0.0 or hi - lo <= _THETA_TOL * hi:
            break
        new = theta + slope / curv if curv > 0.0 else math.nan
        if not lo < new < hi:
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * theta
        if abs(new - theta) <= _THETA_TOL * theta:
            break
        theta = new
    return float(best), trials
