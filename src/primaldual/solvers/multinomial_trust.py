"""The trust-region step of multinomial Newton-CG: CG truncated at the region's
boundary (Steihaug 1983, Toint 1981) and TRON's rules for the radius (Lin &
More 1999; Lin, Weng & Keerthi, JMLR 9 (2008), Algorithm 2 and eq. (14)).

Far from the optimum at a small ``lam`` (news20's raw term counts at
``C = 100``), the Newton direction of the softmax loss is thousands of times
too long: on rows whose probabilities are saturated the Hessian sees almost
no curvature, yet a long step moves their scores by hundreds and the loss
grows linearly.  A line search then cuts the direction to ``2^-14`` of its
length after CG has spent hundreds of products solving for it; a trust region
stops CG at the radius instead, after a few products, and lets the radius
grow by four at each step that the quadratic model predicts well.
"""
from __future__ import annotations

import math

import numpy as np

from .._util.cg import flat_dot, steihaug
from ._base import SolveResult
# TRON's constants (Lin, Weng & Keerthi 2008), those of the binary Newton
# method: a step is taken when the actual decrease is at least ETA0 times the
# predicted one; the radius shrinks below ETA1, grows above ETA2 (by SIGMA3 at
# the boundary); and how finely f resolves a decrease (f_resolution, re-exported)
from .newton import ETA0, ETA1, ETA2, SIGMA1, SIGMA2, SIGMA3, f_resolution

__all__ = ["trust_step", "steihaug_cg", "new_radius", "kept_radius", "f_resolution", "forcing",
           "metric_floor", "ETA0", "ETA1", "ETA2", "SIGMA1", "SIGMA2", "SIGMA3"]


def metric_floor(prob, floor):
    """The least the trust region's metric takes on coordinate ``(j, k)``:
    ``floor (X^T C X)_jj / W + lam`` (d,), the diagonal of ``H`` were every
    row's curvature ``p (1 - p)`` at least ``floor``; None for ``floor = 0``.

    ``H``'s diagonal alone lets the region move far the scores of rows whose
    probabilities are saturated (``p (1 - p)`` ~ 0 on their features, however
    long the row), where the loss is exponential, not quadratic: on news20
    standardized at ``C = 100`` (rare words take values ~100) half the steps
    were turned down and the radius stayed near 1e-4
    (benchmarks/results/multinomial-news20-precond.md)."""
    if floor == 0.0:
        return None
    X, c = prob.X, prob.sample_weight
    sq = X.multiply(X).T @ c if hasattr(X, "multiply") else np.square(X).T @ c
    return floor * np.asarray(sq, dtype=np.float64).ravel() / prob.W + prob.lam


def steihaug_cg(hv, g, precond, m, delta, stop, max_it, deadline=None):
    """Preconditioned CG on ``H s = -g`` inside ``||s||_M <= delta``
    (``||s||_M^2 = sum m s^2``, ``m`` the diagonal of the metric, positive):
    :func:`primaldual._util.cg.steihaug` with this module's inner product.
    Returns ``(s, r, iterations, on_boundary)`` with ``r = -g - H s`` (so the
    model's decrease is ``-(g.s - s.r) / 2``)."""
    return steihaug(hv, g, precond, m, delta, stop, max_it, flat_dot, deadline)


def new_radius(delta, snorm, gs, actred, prered, on_boundary):
    """TRON's radius after a step ``s`` of M-norm ``snorm`` with ``g.s =
    gs``: the predicted and actual decreases ``prered``, ``actred``; ``alpha``
    the minimizer of the quadratic through ``f``, ``g.s`` and the new value
    (at least SIGMA1), as in LIBLINEAR's ``tron.cpp``."""
    curv = -actred - gs                        # f_new - f - g.s
    alpha = SIGMA3 if curv <= 0.0 else max(SIGMA1, -0.5 * gs / curv)
    if actred < ETA0 * prered:
        return min(alpha * snorm, SIGMA2 * delta)
    if actred < ETA1 * prered:
        return max(SIGMA1 * delta, min(alpha * snorm, SIGMA2 * delta))
    if actred < ETA2 * prered:
        return max(SIGMA1 * delta, min(alpha * snorm, SIGMA3 * delta))
    if on_boundary:
        return SIGMA3 * delta
    return max(delta, min(alpha * snorm, SIGMA3 * delta))


def kept_radius(ws):
    """The trust radius a warm start's run ended with (None: none kept)."""
    if isinstance(ws, SolveResult) and ws.trace and ws.trace[-1].get("trust_radius", 0) > 0:
        return float(ws.trace[-1]["trust_radius"])
    return None


def forcing(gnorm, g_prev, eta, cap):
    """The trust region's forcing term: Eisenstat & Walker's (SIAM J. Sci.
    Comput. 17 (1996), choice 2, gamma = 0.9) ``0.9 (||g|| / ||g_prev||)^2``
    (``g_prev``: the gradient before the last step taken; None: ``eta``), at
    least ``0.9 eta^2`` where that exceeds 0.1, at most ``cap``.  It follows
    how well the last step's model predicted the gradient: on news20 at ``C =
    100`` a step whose CG solved to 3% of ``||g||`` cut ``||g||`` by only 2.8
    (2,840 passes to a gap of 5.7e-4 with it, 3,486 to 3.9e-3 with ``sqrt(||g||
    / ||g_0||)``)."""
    if g_prev is None:
        return eta
    new = 0.9 * (gnorm / g_prev) ** 2
    if 0.9 * eta ** 2 > 0.1:
        new = max(new, 0.9 * eta ** 2)
    return min(cap, new)


def trust_step(solver, eta):
    """One step of ``solver``, a
    :class:`~primaldual.solvers.multinomial.MultinomialNewton`, in the trust
    region ``||s||_M <= delta`` (``M`` the diagonal of H): CG to ``eta
    ||g||`` or the boundary, then the point moves by ``s`` when the loss falls
    by at least ETA0 of the model's prediction, and the radius follows TRON's
    rules (X s: half a pass; X^T at the new point: another half)."""
    prob, data = solver.problem, solver.data
    m = solver._diag() if solver.floor is None else np.maximum(solver._diag(), solver.floor[:, None])
    if solver.delta is None:                # TRON: ||g||_{M^-1}, then the first step
        solver.delta = -math.sqrt(flat_dot(solver.g, solver.g / m))
    stop, max_it = solver._cg_limits(eta)
    s, r, it, edge = steihaug_cg(solver._hv, solver.g, solver._preconditioner(m), m,
                                 abs(solver.delta), stop, max_it, solver._deadline)
    solver.cg_iter += it
    solver.last_cg = it
    gs = flat_dot(solver.g, s)
    prered = -0.5 * (gs - flat_dot(s, r))
    if not (gs < 0.0 and prered > 0.0):
        solver.finished = True              # no decrease the model can see
        return
    data.direction(s)
    coef_t = solver.coef + s
    actred = solver.f - (data.line_loss(1.0) / prob.W
                       + 0.5 * prob.lam * flat_dot(coef_t, coef_t))
    trial, gnorm = 1 - solver.slot, math.sqrt(flat_dot(solver.g, solver.g))
    fg = None
    if prered <= f_resolution(solver.f, prob.n):
        # f no longer resolves the decrease: judge the step by ||grad f||
        fg = data.evaluate_step(1.0, trial, coef_t)
        g_t = fg[1] / prob.W + prob.lam * coef_t
        actred = prered if flat_dot(g_t, g_t) < gnorm * gnorm else -math.inf
    snorm = math.sqrt(flat_dot(s * m, s))
    delta = min(-solver.delta, snorm) if solver.delta < 0.0 else solver.delta
    solver.delta = new_radius(delta, snorm, gs, actred, prered, edge)
    if actred > ETA0 * prered:
        solver.g_prev = gnorm
        solver._take(coef_t, *(fg or data.evaluate_step(1.0, trial, coef_t)))
        data.use(trial)
        solver.slot = trial
        solver.n_iter += 1
        return
    solver.n_rejected += 1
    solver.passes += 0.5 if fg is None else 1.0
    if solver.delta <= 1e-14 * math.sqrt(flat_dot(solver.coef * m, solver.coef)):
        solver.finished = True              # a step below rounding
