"""The step of a CoCoA+ round on a subspace of dual changes
(``aggregation="subspace"``).

Every partition solves the safe CoCoA+ subproblem (``sigma' = K``, Ma et al.
2015), so adding the ``K`` local changes is an ascent step.  The driver then
maximizes the dual over the span of those changes, each with its own
coefficient, and of the last ``m`` aggregated changes (a memory, as in
Anderson acceleration or nonlinear conjugate gradients):

    theta = argmax D(alpha + sum_k theta_k Dalpha_[k] + sum_j theta_{K+j} S_j)

from ``theta = (1, ..., 1, 0, ..., 0)`` (CoCoA+'s adding), by Newton steps
on the ``K + m`` coefficients, cut to 0.99 of the largest step that keeps
every ``alpha_i`` in its dual domain and halved until ``D`` rises, so ``D``
never falls below what adding gives.
Where the partitions' changes overlap along the directions their rows share,
the search shrinks those coefficients together; where the dual is flat along
a pair of changes that nearly cancel in ``w``, the memory carries the
progress of earlier rounds along it.

With ``z_j`` the images of the directions in ``v``, the quadratic part of
``D`` is ``-(1/(2 lam)) ||v + Z theta||^2``: ``Z^T Z`` and ``Z^T v`` are
computed here; the loss part is reduced from the partitions
(:func:`primaldual.kernels.subspace_step.subspace_terms`), a ``(1 + m)``-vector
and matrix per partition and call.  The certificate is unchanged: every
iterate is a feasible dual point and ``w = w(alpha)``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["subspace_step", "join_terms", "directions", "remember", "MAX_NEWTON",
           "MAX_HALVINGS"]

#: at most this many Newton steps on the coefficients in a round
MAX_NEWTON = 12
#: a Newton step is halved at most this many times (the halvings evaluated
#: in growing batches, each batch one reduction)
MAX_HALVINGS = 30
#: the search stops when the Newton decrement is below this share of the
#: round's gain so far: the step is an ascent step, not a certificate
_DECREMENT_TOL = 1e-8
#: a Newton step goes at most this share of the way to the domain's boundary
_TO_BOUNDARY = 0.99


def subspace_step(evaluate, max_step, v, Z, K, lam, W, batch=1):
    """``(theta, calls)`` for a round (module docstring).

    ``Z`` (P, d): the images in ``v`` of the ``K`` local changes, then of the
    ``P - K`` remembered steps.  ``evaluate(thetas)`` returns, for each
    coefficient vector of the list ``thetas``, the loss part's ``(e, g, H,
    feasible)``, summed over the partitions (``g`` (P,), ``H`` (P, P), as
    :func:`~primaldual.kernels.subspace_step.subspace_terms`);
    ``max_step(theta, step)`` the largest ``t`` keeping ``theta + t step``
    dual feasible (the least over the partitions).  Each is one reduction, a
    call.  The halvings of a Newton step are evaluated 1, 2, 4, ... at a
    time, at most ``batch`` (a call each: on Dask a call costs more than the
    terms, and the first trial is often taken); the step taken is the first
    halving that raises ``D`` whatever ``batch`` is."""
    P = Z.shape[0]
    G = Z @ Z.T
    b = Z @ v
    theta = np.zeros(P)
    theta[:K] = 1.0

    def value(th, e):
        return e / W - (b @ th + 0.5 * th @ G @ th) / lam

    (e, g, H, ok), = evaluate([theta])
    calls = 1
    if not ok:          # adding is dual feasible by construction; rounding aside
        return theta, calls
    f = value(theta, e)
    ridge = 1e-12 * max(float(np.trace(G)) / lam, 1e-300)
    for _ in range(MAX_NEWTON):
        grad = g / W - (b + G @ theta) / lam
        curv = H / W + G / lam + ridge * np.eye(P)
        try:
            step = np.linalg.solve(curv, grad)
        except np.linalg.LinAlgError:
            break
        decrement = float(grad @ step)
        if not decrement > _DECREMENT_TOL * max(abs(f), 1e-300):
            break
        s0 = min(1.0, _TO_BOUNDARY * max_step(theta, step))
        calls += 1
        moved, halvings, size = False, 0, 1
        while not moved and halvings < MAX_HALVINGS:
            trials = [theta + (s0 * 0.5 ** j) * step
                      for j in range(halvings, min(halvings + size, MAX_HALVINGS))]
            halvings += len(trials)
            size = min(2 * size, batch)
            calls += 1
            for trial, (e_t, g_t, H_t, ok) in zip(trials, evaluate(trials)):
                if ok:
                    f_t = value(trial, e_t)
                    if f_t > f:
                        theta, f, g, H, moved = trial, f_t, g_t, H_t, True
                        break
        if not moved:
            break
    return theta, calls


def join_terms(parts, K, P):
    """The loss part's ``(e, g, H, feasible)`` at ``P`` coefficients, from the
    partitions' terms in partition order (partition ``k``'s terms are on its
    own coefficient ``k`` and the remembered steps' ``K..P-1``)."""
    e, g, H, ok = 0.0, np.zeros(P), np.zeros((P, P)), True
    for k, (pe, pg, pH, pok) in enumerate(parts):
        idx = np.r_[k, np.arange(K, P)]
        e += pe
        g[idx] += pg
        H[np.ix_(idx, idx)] += pH
        ok = ok and pok
    return e, g, H, ok


def directions(changes, memory, d):
    """``Z`` (K + used, d): the images in ``v`` of the partitions' changes
    (``(cols, vals)`` each), then the remembered steps' (``memory``)."""
    K = len(changes)
    Z = np.zeros((K + memory.shape[0], d))
    for k, (cols, vals) in enumerate(changes):
        Z[k, cols] = vals
    Z[K:] = memory
    return Z


def remember(memory, step, m):
    """The memory of the last ``m`` steps' images, the newest ``step`` first."""
    if not m:
        return memory
    return np.vstack([step[None, :], memory])[:m]
