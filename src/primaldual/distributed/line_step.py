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
  (bracketing the zero of the slope with one reduction at ``theta = 1/2, 1,
  2``, then by doubling or halving, then Newton steps kept in the bracket;
  each call one reduction, of scalars); the step taken is the last Newton
  iterate or the best trial, so ``D`` never decreases.

Both engines call :func:`summed_step` with the partitions' terms summed in
partition order, so they take the same step.
"""
from __future__ import annotations

import math

import numpy as np


__all__ = ["summed_step", "sum_changes", "sum_terms", "MAX_TRIALS"]

#: at most this many reductions (calls) of the 1-D search (logistic, epsilon-insensitive)
MAX_TRIALS = 30
#: the search stops when a Newton step moves theta by less than this (relative):
#: the step is an ascent step, not a certificate, so seven digits are plenty
_THETA_TOL = 1e-7


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

    ``evaluate(thetas)`` returns, for each ``theta`` of the tuple ``thetas``,
    the summed ``(e, g, h, tmax, quadratic)`` (:func:`sum_terms`): one call is
    one reduction over the partitions, whatever the number of points.  ``v`` is
    the dual image before the round.  Returns ``(theta, calls)``."""
    dv = sum_changes(changes, v.shape[0])
    # elementwise products, not BLAS dot: no thread pool woken for one round
    vdv = float((v * dv).sum())
    dvdv = float((dv * dv).sum())
    (_, g0, h0, tmax, quadratic), = evaluate((0.0,))
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
    """Maximize the concave ``f(theta)`` on ``[0, tmax]`` from its slopes
    (decreasing in ``theta``): bracket the zero of the slope within a factor 2
    with one call at ``theta = 1/2, 1, 2`` (then doubling or halving, a
    point a call: the logistic curvature is unbounded near the box, where a
    Newton step says nothing), then Newton steps kept inside the bracket, from
    its end with the smaller slope, a point a call."""
    def at(thetas):
        out = []
        for theta, (e, g, h, _, _) in zip(thetas, evaluate(tuple(thetas))):
            out.append((theta, e / W - (theta * vdv + 0.5 * theta * theta * dvdv) / lam,
                        g / W - (vdv + theta * dvdv) / lam, h / W + dvdv / lam))
        return out

    lo, hi, best, calls = None, None, (0.0, 0.0), 1
    points = sorted({min(t, tmax) for t in (0.5, 1.0, 2.0)})
    while calls <= MAX_TRIALS:
        trials = at(points)
        calls += 1
        for p in trials:
            if p[1] > best[1]:
                best = (p[0], p[1])
            if p[2] > 0.0:
                lo = p if lo is None or p[0] > lo[0] else lo
            elif hi is None or p[0] < hi[0]:
                hi = p
        if hi is not None and hi[2] == 0.0:
            return float(hi[0]), calls
        if hi is not None and lo is not None:
            break
        if hi is None:                         # slope still positive: double
            if lo[0] >= tmax:
                return float(best[0]), calls
            points = [min(2.0 * lo[0], tmax)]
        else:                                  # slope negative already: halve
            points = [0.5 * hi[0]]
    if lo is None or hi is None:
        return float(best[0]), calls
    last = lo if abs(lo[2]) <= abs(hi[2]) else hi
    while calls <= MAX_TRIALS:
        theta, _, slope, curv = last
        new = theta + slope / curv if curv > 0.0 else math.nan
        if not lo[0] < new < hi[0]:
            new = 0.5 * (lo[0] + hi[0])
        if abs(new - theta) <= _THETA_TOL * new or hi[0] - lo[0] <= _THETA_TOL * hi[0]:
            break
        last, = at([new])
        calls += 1
        if last[1] > best[1]:
            best = (last[0], last[1])
        if last[2] == 0.0:
            break
        if last[2] > 0.0:
            lo = last
        else:
            hi = last
    # the last Newton iterate, when it increases D: near the maximum the trials'
    # values of D differ by rounding only, so picking the largest would let
    # rounding choose between points 1e-9 apart
    return (float(last[0]) if last[1] > 0.0 else float(best[0])), calls
