"""DSO's saddle-point maths outside the kernels: the dual box, the primal box
radius R, Theorem 1's saddle gap and the default step sizes (see
:mod:`primaldual.solvers.dso.solver` for the problem and the notation)."""
from __future__ import annotations

import math

import numpy as np

from .kernels import column_abs_max, scaled_row_sqnorms

__all__ = ["LOGISTIC_MARGIN", "dual_bounds", "box_radius", "box_min_linear", "saddle_gap",
           "default_eta0", "adagrad_w_scale", "adagrad_a_scale", "HINGE_A_SCALE",
           "adagrad_col_factor", "spdc_primal_weight", "column_units"]

#: logistic dual kept in (1e-14, 1 - 1e-14) (Appendix A)
LOGISTIC_MARGIN = 1e-14


# --------------------------------------------------------------- maths
def dual_bounds(loss, y):
    """Per-sample bounds ``[a_lo, a_hi]`` of alpha (Appendix A projections): the
    loss's dual domain (:meth:`~primaldual.losses.Loss.dual_bounds`), pulled
    ``LOGISTIC_MARGIN`` inside its ends for the logistic loss (finite log terms)."""
    lo, hi = loss.dual_bounds(np.asarray(y, dtype=np.float64))
    if loss.name == "logistic":
        lo, hi = lo + LOGISTIC_MARGIN, hi - LOGISTIC_MARGIN      # width-1 interval
    return lo, hi


def box_radius(problem):
    """R with ``|w*_j| <= R`` for every minimizer (see the module docstring)."""
    p0 = problem.primal(np.zeros(problem.d))
    bounds = []
    if problem.lam > 0:
        bounds.append(math.sqrt(p0 / problem.lam))
    if problem.l1 > 0:
        bounds.append(p0 / problem.l1)
    return max(min(bounds), 1e-300)


def box_min_linear(v, lam, l1, R):
    """sum_j min_{|u|<=R} lam/2 u^2 + l1|u| - v_j u (closed form)."""
    v = np.asarray(v, dtype=np.float64)
    if lam == 0.0:
        return float(-R * np.maximum(np.abs(v) - l1, 0.0).sum())
    u = np.clip(np.sign(v) * np.maximum(np.abs(v) - l1, 0.0) / lam, -R, R)
    return float((0.5 * lam * u * u + l1 * np.abs(u) - v * u).sum())


def saddle_gap(problem, w, alpha, R):
    """Theorem 1's eps(w, alpha) = max_{alpha' in A} f(w, alpha') - min_{w' in B} f(w', alpha)."""
    primal = problem.primal(w)
    conj = problem.loss.neg_conjugate(alpha, problem.y)
    hbar = float(problem.sample_weight @ conj) / problem.W
    return primal - hbar - box_min_linear(problem.dual_image(alpha), problem.lam,
                                          problem.l1, R)


def default_eta0(step, problem, layout):
    """Default ``eta0``: 0.5 for AdaGrad; for "sqrt"/"constant"
    ``min(1/lam, W / (2 sqrt(max_j |Omega-bar_j|) max |x_ij|))``.

    With a scalar step, one epoch moves ``w_j`` by a random walk of
    ``|Omega-bar_j|`` steps of size up to ``eta c_i |x_ij| / W``; the default keeps
    that walk at O(1) for the densest column, and Theorem 1's ``eta < 1/lam``
    (L2 case).  The scalar step is sensitive to this choice (see
    docs/reproducing-dso.md); AdaGrad is the robust default.

    With the default AdaGrad ``eta0`` each ``w_j``'s side is scaled further by
    :func:`adagrad_col_factor`; a given ``eta0`` is used as it is, on both sides.
    """
    if step == "adagrad":
        return 0.5
    xmax = float(np.abs(layout.vals).max())
    eta = problem.W / (2.0 * math.sqrt(float(layout.col_cnt.max())) * xmax)
    return eta if problem.lam == 0 else min(eta, 1.0 / problem.lam)


def adagrad_w_scale(problem):
    """The row rule for AdaGrad's ``w`` steps: ``1 / max_i ||x_i||`` (row norms from
    ``problem.rows.sqnorm``); the default, :func:`adagrad_col_factor`, is this rule
    in column units and equals it where every column has the same scale.

    Diagonal AdaGrad (the paper's Appendix A; Duchi, Hazan & Singer 2011,
    ``eta_k = eta0 / sqrt(sum of squared past g_k)``) moves each coordinate by
    about ``eta0`` per step whatever the size of its gradients, so ``eta0`` is a
    length in the coordinate's own units (AdaGrad's regret bound takes it of the
    order of the domain's diameter).  ``alpha_i y_i`` lives in an interval of
    width 1 whatever the data (Appendix A's projections), hence ``eta0 = 0.5``.
    ``w`` does not: scaling the rows by ``s`` maps the problem at ``lam`` to the
    unscaled one at ``lam / s^2`` with ``w -> w / s`` (``x_i . w`` and the dual
    are unchanged), so ``w``'s step should shrink by ``s`` too.  On unit-norm
    rows the factor is 1 and nothing changes; otherwise it puts the rows' scale
    into the ``w`` side, and the default run on ``c X`` at ``lam`` takes the
    steps of the run on ``X`` at ``lam / c^2`` (tested).  Measured effect on
    binary unnormalized w8a-shaped rows (norms up to ~12):
    docs/reproducing-dso.md, section 6b.  The largest row is the conservative
    choice (it bounds ``|x_i . w|`` changes); one very long row makes every
    ``w`` step small.
    """
    smax = math.sqrt(float(problem.rows.sqnorm.max(initial=0.0)))
    return 1.0 / smax if smax > 0 else 1.0


def adagrad_col_factor(problem):
    """Per-column factor on AdaGrad's ``w`` steps with the default ``eta0``:
    ``1 / (s_j max_i ||z_i||)``, ``s_j = max_i |x_ij|`` the scale of column ``j`` and
    ``z_i = x_i / s`` the rows in column units (1 for empty columns).

    :func:`adagrad_w_scale`'s rule applied to the column-scaled data and mapped
    back: diagonal AdaGrad moves ``w_j`` by about its length per step, and ``w_j``'s
    unit is the inverse of column ``j``'s.  Where every column has the same scale
    it is :func:`adagrad_w_scale` (binary rows: exactly); where columns differ
    (unscaled features: covtype's elevations in the thousands next to 0/1
    indicators) each ``w_j`` gets a length in its own unit instead of the largest
    row's.  The rule is equivariant under a scaling of the rows (as the scalar
    rule) and of any single column."""
    s, z2 = column_units(problem)
    zmax = math.sqrt(float(z2.max(initial=0.0)))
    return 1.0 / (s * zmax) if zmax > 0 else np.ones(problem.d)


def column_units(problem):
    """``(s, z2)``: the column scales ``s_j = max_i |x_ij|`` (1 for empty columns) and
    the squared row norms ``||x_i / s||^2`` in those units."""
    r = problem.rows
    s = np.zeros(problem.d)
    column_abs_max(r.data, r.indices, r.indptr, r.iptr, s)
    s[s == 0.0] = 1.0
    z2 = np.zeros(problem.n)
    scaled_row_sqnorms(r.data, r.indices, r.indptr, r.iptr, s, z2)
    return s, z2


def spdc_primal_weight(problem):
    """Primal weight ``omega`` of ``primal_weight="lam_n"`` (``w`` lengths divided by
    it, ``alpha`` lengths multiplied by it): ``min(1, sqrt(lam n / gamma))`` with
    ``gamma = 1 / smoothness`` of the loss (logistic: 4), ``n`` the number of
    samples; 1 for losses without a Lipschitz derivative (hinge, absolute) and
    for ``lam = 0`` (pure L1: no primal curvature to set a ratio by).

    SPDC's steps (Zhang & Xiao, "Stochastic primal-dual coordinate method for
    regularized empirical risk minimization", 2015, Theorem 1: ``tau = sqrt(gamma /
    (n lam)) / R``, ``sigma = sqrt(n lam / gamma) / R`` for ``(1/gamma)``-smooth
    losses) put the ratio of the dual to the primal step at ``n lam / gamma``,
    whatever the rows' norm ``R``: the smaller ``lam n``, the longer the primal
    steps relative to the dual ones; ``omega`` is the square root of that ratio.
    A non-smooth loss has ``gamma = 0`` (no dual curvature) and the ratio has no
    finite value; those keep the measured lengths (``omega = 1``, hinge's
    ``alpha`` steps x 8, :func:`adagrad_a_scale`).  The weight is capped at 1: the
    lengths of :func:`adagrad_col_factor` and ``eta0 = 0.5`` were measured on sets
    with ``lam n >= gamma``.  Measured (docs/reproducing-dso.md section 6d): it
    helps reuters (unit rows) at every ``lam`` and hurts a9a (binary rows of norm
    3.7) at lam 1e-5, so it is an option, not the default."""
    smooth = problem.loss.smoothness
    if not smooth or problem.lam <= 0.0:      # no dual curvature, or no L2 term (pure L1)
        return 1.0
    return min(1.0, math.sqrt(problem.lam * problem.n * smooth))


#: AdaGrad's alpha-step factor for the hinge loss with the default ``eta0``
HINGE_A_SCALE = 8.0


def adagrad_a_scale(problem):
    """Factor on AdaGrad's ``alpha`` steps with the default ``eta0``: 8 for the
    hinge loss, 1 otherwise.

    The hinge loss's ``H_i(a) = y_i a`` is linear: the saddle function has no
    curvature in ``alpha``, so ``alpha_i`` moves only through the coupling term
    ``-(c_i/W) alpha_i w_j x_ij``, and a free ``alpha_i`` (a support vector,
    ``0 < alpha_i y_i < 1``) has nothing pulling it to its optimal value but
    ``w``'s margin.  With the same AdaGrad length on both sides ``alpha`` reacts
    too slowly to ``w`` and the pair circles the saddle point (the last iterate
    oscillates, docs/reproducing-dso.md section 6c).  A longer ``alpha`` step
    (the ratio of the two step sizes is the primal weight of primal-dual
    methods) fixes that; the projection onto ``alpha_i y_i in [0, 1]`` keeps the
    longer steps in the box.  8 was chosen on three binary w8a-shaped sets
    (factors 1, 2, 4, 8, 16 tried; 16 oscillates again).  Losses with a curved
    ``H`` (logistic: ``-H'' >= 4``) keep 1: there a longer step overshoots
    (factor 4: logistic 3e-4 instead of 4e-6 after 200 epochs on a binary
    w8a-shaped set).  On real sets the factor is not what limits hinge: on a9a
    at lam = 1e-5 factors 1 to 32 end between 3.2e-3 and 9.7e-4 after 200
    epochs (docs/reproducing-dso.md, section 6d).
    """
    return HINGE_A_SCALE if problem.loss.name == "hinge" else 1.0
