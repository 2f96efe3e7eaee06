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
* logistic, epsilon-insensitive: a safeguarded 1-D search over ``[0, tmax]``
  from ``theta = 1`` (bracketing the zero of the slope by doubling or
  halving, then Newton steps kept in the bracket; each trial one scalar
  reduction); the step taken is the best trial, so ``D`` never decreases.

Both engines call :func:`summed_step` with the partitions' terms summed in
partition order, so they take the same step.
"""
from __future__ import annotations

import math

import numpy as np


__all__ = ["summed_step", "sum_changes", "sum_terms", "MAX_TRIALS"]

#: at most this many trials of the 1-D search (logistic, epsilon-insensitive)
MAX_TRIALS = 30
#: the search stops when a Newton step moves theta by less than this (relative)
_THETA_TOL = 1e-12


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
    # elementwise products, not BLAS dot: no thread pool woken for one round
    vdv = float((v * dv).sum())
    dvdv = float((dv * dv).sum())
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
    return _search(evaluate, vdv, dvdv, lam, W, tmax, slope0)


def _search(evaluate, vdv, dvdv, lam, W, tmax, slope0):
    """Maximize the concave ``f(theta)`` on ``[0, tmax]`` from its slopes
    (decreasing in ``theta``): bracket the zero of the slope within a factor 2
    from ``theta = 1`` by doubling or halving (the logistic curvature is
    unbounded near the box, where a Newton step says nothing), then Newton
    steps kept inside the bracket."""
    def trial(theta):
        e, g, h, _, _ = evaluate(theta)
        f = e / W - (theta * vdv + 0.5 * theta * theta * dvdv) / lam
        return f, g / W - (vdv + theta * dvdv) / lam, h / W + dvdv / lam

    lo, best, best_f = 0.0, 0.0, 0.0
    theta = min(1.0, tmax)
    trials = 1
    hi = None
    while trials <= MAX_TRIALS:
        # bracket the zero of the slope within a factor 2: double while the
        # slope is positive, halve while it is negative
        f, slope, curv = trial(theta)
        trials += 1
        if f > best_f:
            best, best_f = theta, f
        if slope > 0.0:
            lo = theta
            if hi is not None:
                break
            if theta >= tmax:
                return float(best), trials
            theta = min(2.0 * theta, tmax)
        else:
            hi = theta
            if lo > 0.0 or slope == 0.0:
                break
            theta = 0.5 * theta
    if hi is None or lo == 0.0 or slope == 0.0:
        return float(best), trials
    # Newton steps from the last trial, kept inside the bracket (bisection
    # when a step leaves it); the curvature is finite inside the bracket
    last, last_f = theta, f
    while trials <= MAX_TRIALS:
        new = theta + slope / curv if curv > 0.0 else math.nan
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if abs(new - theta) <= _THETA_TOL * new or hi - lo <= _THETA_TOL * hi:
            break
        theta = new
        f, slope, curv = trial(theta)
        trials += 1
        last, last_f = theta, f
        if f > best_f:
            best, best_f = theta, f
        if slope == 0.0:
            break
        if slope > 0.0:
            lo = theta
        else:
            hi = theta
    # the last Newton iterate, when it increases D: near the maximum the trials'
    # values of D differ by rounding only, so picking the largest would let
    # rounding choose between points 1e-9 apart
    return (float(last) if last_f > 0.0 else float(best)), trials
