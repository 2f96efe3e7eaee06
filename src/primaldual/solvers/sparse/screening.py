"""Gap Safe screening of features (Fercoq, Gramfort & Salmon 2015; Ndiaye,
Fercoq, Gramfort & Salmon 2017, JMLR 18, Section 3).

For a loss with an ``L``-Lipschitz derivative, ``-phi*`` is ``1/L``-strongly
concave, so the dual of docs/conventions.md §1 satisfies
``D(alpha*) - D(alpha) >= sum_i cw_i (alpha_i - alpha*_i)^2 / (2 L)``
(``cw_i = c_i / W``).  With ``D(alpha*) <= P(w)`` every dual-feasible
``alpha`` gives

    sum_i cw_i (alpha_i - alpha*_i)^2 <= 2 L (P(w) - D(alpha)),

and by Cauchy-Schwarz in the weighted norm, for every feature ``j``

    |v_j(alpha*) - v_j(alpha)| <= r ||x_j||_cw,  r = sqrt(2 L gap),
    ||x_j||_cw = sqrt(sum_i cw_i x_ij^2).

The optimality condition ``v_j(alpha*) = l1 sign(w*_j) + lam w*_j`` makes
``w*_j = 0`` whenever ``|v_j(alpha*)| < l1``; so ``|v_j(alpha)| + r ||x_j||_cw < l1``
proves ``w*_j = 0``: the feature can be removed, for ``lam = 0`` and ``lam > 0``
alike.  Applied at every check of a fit it is dynamic screening; applied to
the previous solution of a path at the next ``l1`` (whose first certificate is
that point's gap at the new ``l1``) it is sequential screening.
"""
from __future__ import annotations

import math

import numpy as np

from ...kernels.l1bounds import SLACK as _SLACK

__all__ = ["gap_safe_radius", "gap_safe_mask", "l1_dual_scale"]


def gap_safe_radius(gap, smoothness) -> float:
    """``sqrt(2 L gap)``, the radius of the safe sphere in the weighted norm."""
    return math.sqrt(2.0 * float(smoothness) * max(float(gap), 0.0))


def gap_safe_mask(v, colnorm, gap, smoothness, l1):
    """Boolean mask of the features proved zero at the optimum by a dual-feasible
    point with image ``v`` and duality gap ``gap`` (module docstring)."""
    if not l1 > 0:
        return np.zeros(np.shape(v), dtype=bool)
    r = gap_safe_radius(gap, smoothness) * (1.0 + _SLACK)
    return np.abs(v) + r * colnorm < l1 * (1.0 - _SLACK)


def l1_dual_scale(vmax, l1) -> float:
    """``max(1, vmax / l1)``: dividing a dual point by it puts its image in the
    ball ``||v||_inf <= l1``, the domain of ``g*`` for pure L1."""
    return max(1.0, float(vmax) / float(l1))
