"""The squared hinge's L1 problem as a QP, solved by a primal-dual
interior-point step (Mehrotra's predictor-corrector), for ``l1_ipm``
(:mod:`.barrier`).

With ``cw_i = c_i / W``, ``a_i = 1 - y_i x_i . w`` and the working set's
columns ``X`` (``n x m``), the problem is the QP::

    min  sum_i cw_i xi_i^2 + lam/2 ||w||^2 + l1 sum_j u_j
    s.t. s1 = u - w >= 0  (multiplier l1m),   s2 = u + w >= 0  (l2m),
         r  = xi - a >= 0 (nu),               xi free,

(``max(0, a)^2 = min xi^2`` over ``xi >= a``), with the residuals::

    r_w  = lam w + l1m - l2m - X^T (y nu),   r_u = l1 - l1m - l2m,
    r_xi = 2 cw xi - nu,                     l1m s1 = l2m s2 = nu r = target.

With ``D1 = l1m / s1``, ``D2 = l2m / s2``, ``Dn = nu / r``, ``E = 2 cw + Dn``
and ``G = 2 cw Dn / E``, the Newton step eliminates ``du``, ``dxi`` and the
multipliers and leaves the system (``m x m``, or solved through the rows'
``n x n`` one, :mod:`.barrier_system`)::

    (X^T diag(G) X + diag(lam + 4 D1 D2 / (D1 + D2))) dw = rhs,

the matrix of a weighted least-squares problem: every row contributes
curvature ``G_i > 0``, where the squared hinge's generalized Hessian has
none past the margin.  Nocedal & Wright, Numerical Optimization (2nd ed.),
Algorithm 16.4 (Mehrotra's predictor-corrector for QPs).

The dual point: ``nu_i = cw_i alpha_i y_i`` at the optimum, so ``alpha =
y nu / cw`` (``alpha_i y_i >= 0``, in the squared hinge's dual domain).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["QPPoint", "qp_start", "qp_step", "qp_mu", "STEP_FRACTION"]

#: the fraction of the step to the boundary taken (the primal and the dual
#: variables each their own: 10-11 iterations for 11-12 with one step on a1a
#: and a9a, squared hinge, C = 100)
STEP_FRACTION = 0.995
#: Mehrotra's centering ``sigma = (mu_aff / mu)^SIGMA_POWER``
SIGMA_POWER = 3.0


class QPPoint(NamedTuple):
    """The iterate: the working set's ``w``, ``u`` and multipliers ``l1m``,
    ``l2m`` (m), the rows' ``xi`` and ``nu`` (n)."""
    w: np.ndarray
    u: np.ndarray
    l1m: np.ndarray
    l2m: np.ndarray
    xi: np.ndarray
    nu: np.ndarray


def qp_start(w, z, y, cw, l1, slack=1.0) -> QPPoint:
    """An interior start at ``w`` (margins ``z``): ``xi = max(a, 0) + slack``,
    ``nu = 2 cw xi`` (``r_xi = 0``), ``l1m = l2m = l1 / 2`` (``r_u = 0``) and
    ``u - |w|`` such that the bounds' products equal the rows' mean ``nu (xi -
    a)`` (at least ``slack``).  A start with ``r_w = 0`` instead (``nu``
    scaled into the dual ball) was measured slower: 31-40 iterations for
    10-13 on a1a and a9a."""
    a = 1.0 - y * z
    m = w.shape[0]
    xi = np.maximum(a, 0.0) + slack
    nu = 2.0 * cw * xi
    mu = float(nu @ (xi - a)) / max(nu.shape[0], 1)
    gap = max(2.0 * mu / l1, slack)
    return QPPoint(w.copy(), np.abs(w) + gap, np.full(m, 0.5 * l1), np.full(m, 0.5 * l1),
                   xi, nu)


def qp_mu(p: QPPoint, z, y) -> float:
    """The mean complementarity product."""
    r = p.xi - (1.0 - y * z)
    total = float(p.l1m @ (p.u - p.w) + p.l2m @ (p.u + p.w) + p.nu @ r)
    return total / (2 * p.w.shape[0] + p.nu.shape[0])


def _longest(x, dx):
    """The largest step in (0, 1] keeping ``x + step dx > 0``, before the fraction."""
    neg = dx < 0
    return min(1.0, float(np.min(-x[neg] / dx[neg]))) if neg.any() else 1.0


def qp_step(p: QPPoint, z, cols, y, cw, lam, l1, factor):
    """One predictor-corrector step from ``p`` (margins ``z = X w``);
    ``factor(h, e)`` returns the solve of ``(X^T diag(h) X + diag(e)) x = b``
    (:class:`.barrier_system.NewtonSystem`), None when it does not factor.
    Returns ``(new point, new margins, the shorter of the primal and dual
    steps)``, or None when the matrix or the direction is not finite or does
    not factor."""
    w, u, l1m, l2m, xi, nu = p
    s1, s2, r = u - w, u + w, xi - (1.0 - y * z)
    yn = y * nu
    r_w = lam * w + l1m - l2m - np.asarray(cols.T @ yn).ravel()
    r_u = l1 - l1m - l2m
    r_x = 2.0 * cw * xi - nu
    n_terms = 2 * w.shape[0] + nu.shape[0]
    mu = float(l1m @ s1 + l2m @ s2 + nu @ r) / n_terms
    D1, D2, Dn = l1m / s1, l2m / s2, nu / r
    E = 2.0 * cw + Dn
    G = 2.0 * cw / (1.0 + 2.0 * cw * r / nu)          # 2 cw Dn / E, without inf / inf
    Dsum = D1 + D2
    solve = factor(G, lam + 4.0 / (s1 / l1m + s2 / l2m))
    if solve is None:
        return None

    def direction(t1, t2, tn):
        h = -r_x + tn / r - nu
        g0 = (tn / r - nu) - Dn * h / E
        c_u = t1 / s1 + t2 / s2 - l1m - l2m - r_u
        c_d = t1 / s1 - l1m - t2 / s2 + l2m
        rhs = -r_w - c_d + (D1 - D2) * c_u / Dsum + np.asarray(cols.T @ (y * g0)).ravel()
        dw = solve(rhs)
        xd = np.asarray(cols @ dw).ravel()
        du = (c_u + (D1 - D2) * dw) / Dsum
        dxi = (h - Dn * y * xd) / E
        dr = dxi + y * xd
        dnu = (tn / r - nu) - Dn * dr
        ds1, ds2 = du - dw, du + dw
        dl1, dl2 = (t1 / s1 - l1m) - D1 * ds1, (t2 / s2 - l2m) - D2 * ds2
        steps = (min(_longest(s1, ds1), _longest(s2, ds2), _longest(r, dr)),
                 min(_longest(l1m, dl1), _longest(l2m, dl2), _longest(nu, dnu)))
        return (dw, du, dl1, dl2, dxi, dnu, xd, ds1, ds2, dr), steps

    zero_m, zero_n = np.zeros_like(w), np.zeros_like(nu)
    aff, a = direction(zero_m, zero_m, zero_n)
    dw, du, dl1, dl2, dxi, dnu, xd, ds1, ds2, dr = aff
    ap, ad = a
    mu_aff = float((l1m + ad * dl1) @ (s1 + ap * ds1) + (l2m + ad * dl2) @ (s2 + ap * ds2)
                   + (nu + ad * dnu) @ (r + ap * dr)) / n_terms
    sigma = (mu_aff / mu) ** SIGMA_POWER if mu > 0 else 0.0
    target = sigma * mu
    d, a = direction(target - ds1 * dl1, target - ds2 * dl2, target - dr * dnu)
    if not all(np.isfinite(x).all() for x in d):
        return None
    dw, du, dl1, dl2, dxi, dnu, xd = d[:7]
    ap, ad = (min(1.0, STEP_FRACTION * x) for x in a)
    new = QPPoint(w + ap * dw, u + ap * du, np.maximum(l1m + ad * dl1, 1e-300),
                  np.maximum(l2m + ad * dl2, 1e-300), xi + ap * dxi,
                  np.maximum(nu + ad * dnu, 1e-300))
    return new, z + ap * xd, min(ap, ad)
