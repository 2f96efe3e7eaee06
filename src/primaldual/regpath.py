"""Regularization paths and cross-validated estimators.

``lam_max``
    Where a path starts.  Let ``alpha0_i = -phi'(0; y_i)`` be the dual point
    of ``w = 0`` (docs/conventions.md §1: a primal method's certificate at the origin) and

        g = v(alpha0) = (1/W) sum_i c_i alpha0_i x_i.

    * ``penalty="l1"``: ``lam_max = ||g||_inf``.  This is exact: ``w = 0`` is
      optimal for ``l1 >= ||g||_inf`` whatever the L2 strength, since then
      ``g*(g) = 0`` and ``D(alpha0) = (1/W) sum_i c_i phi(0; y_i) = P(0)``.
    * ``penalty="l2"`` (the path over ``lam``): the L2 solution is never
      exactly 0; for large ``lam`` it is ``w = g / lam + O(1/lam^2)`` (the
      primal point of ``alpha0``).  We define

          lam_max = max_i |x_i . g| / s,   s = 1 (classification), max_i |y_i| (regression),

      the smallest ``lam`` at which that first-order model has every margin
      ``|x_i . w| <= 1`` (classification) or every prediction no larger than
      the largest target (regression): no sample is yet fitted beyond the
      loss's unit scale.  For the hinge loss this is exact in the same sense
      as the L1 breakpoint: for every ``lam >= lam_max`` the optimum *is*
      ``w = g / lam`` with every ``alpha_i`` at its bound (Fenchel-Young holds
      with equality because ``y_i x_i . w <= 1``); it is the L2 analogue of
      LIBLINEAR's ``C_min`` (Chu et al., KDD 2015) computed from the data
      instead of the bound ``max_i ||x_i||^2``.

``path``
    Fits on the geometric grid ``lam_max * eps**(k/(n_lams-1))``, ``k = 0..n_lams-1``
    (largest first), each fit warm-started from the previous ``dual_coef``.  The
    dual point is reused as it is: its constraint ``-alpha_i in dom phi*`` does
    not depend on ``lam`` (see :mod:`primaldual.estimators`).

``l1_path``
    The same for the L1 strength, on the sparse solver with screening.

The cross-validated estimators that run these paths on every fold,
``LinearClassifierCV`` and ``LinearRegressorCV``, are in
:mod:`primaldual.estimators_cv`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .estimators import _check_number
from .fitdata import add_intercept_column
from .problem import Problem
from .solvers import solve
from .solvers.sparse import sparse_path

__all__ = ["lam_max", "lam_grid", "path", "l1_path", "PathResult"]


def lam_max(X, y, loss="hinge", *, penalty="l2", sample_weight=None, loss_params=None,
            fit_intercept=False, intercept_scaling=1.0):
    """Largest useful regularization strength (module docstring gives the definition).

    Parameters
    ----------
    X, y : training data; ``y`` in {-1, +1} for classification losses
    loss : str or Loss
    penalty : {"l2", "l1"}
        "l2": start of a path over ``lam``; "l1": the exact ``l1`` above which ``w = 0``.
    sample_weight : array (n,), optional, > 0
    loss_params : dict, optional
    fit_intercept, intercept_scaling
        Include the constant column the estimators append.

    Returns
    -------
    float > 0
    """
    if penalty not in ("l2", "l1"):
        raise ValueError(f"penalty must be 'l2' or 'l1', got {penalty!r}")
    if fit_intercept:
        _check_number("intercept_scaling", intercept_scaling)
        X = add_intercept_column(X, float(intercept_scaling)) if hasattr(X, "shape") \
            else add_intercept_column(np.asarray(X, dtype=np.float64), float(intercept_scaling))
    prob = Problem(X, y, loss=loss, lam=1.0, sample_weight=sample_weight,
                   loss_params=loss_params)
    alpha0 = prob.dual_from_primal(np.zeros(prob.d))
    g = prob.dual_image(alpha0)
    if penalty == "l1":
        value = float(np.abs(g).max())
    else:
        scale = 1.0 if prob.loss.classification else float(np.abs(prob.y).max())
        value = float(np.abs(prob.rows.matvec(g)).max()) / scale if scale > 0 else 0.0
    if not value > 0:
        raise ValueError(
            f"lam_max is 0 for this data and loss={prob.loss.name!r}: w = 0 is already "
            f"optimal (the loss gradient at w = 0, X^T (c * phi'(0)), vanishes, e.g. y is "
            f"all zeros or inside the epsilon tube); there is no path to compute")
    return value


def lam_grid(lmax, n_lams=20, eps=1e-3):
    """``n_lams`` values from ``lmax`` down to ``eps * lmax``, geometric, decreasing."""
    _check_number("n_lams", n_lams, integer=True)
    _check_number("eps", eps)
    if eps >= 1:
        raise ValueError(f"eps must be in (0, 1), got {eps!r}")
    if int(n_lams) == 1:
        return np.array([float(lmax)])
    return float(lmax) * np.geomspace(1.0, float(eps), int(n_lams))


@dataclass
class PathResult:
    """The fits along a path, in the order of ``lams``.

    ``coefs`` (n_lams, d), ``intercepts`` (n_lams,), ``dual_coefs``
    (n_lams, n) and per point ``primal``, ``dual``, ``gap``, ``rel_gap``,
    ``epochs``, ``converged``, ``time``; ``results`` keeps every
    :class:`~primaldual.SolveResult` (without its solver state).
    """

    lams: np.ndarray
    coefs: np.ndarray
    intercepts: np.ndarray
    dual_coefs: np.ndarray
    primal: np.ndarray
    dual: np.ndarray
    gap: np.ndarray
    rel_gap: np.ndarray
    epochs: np.ndarray
    converged: np.ndarray
    time: np.ndarray
    warm_start: bool
    results: list = field(default_factory=list, repr=False)
    #: the ``l1`` of each point for :func:`l1_path` (``lams`` is then the fixed L2 strength)
    l1s: np.ndarray | None = None

    @property
    def total_epochs(self) -> float:
        return float(self.epochs.sum())


def path(X, y, lams=None, n_lams=20, eps=1e-3, *, loss="hinge", l1=0.0, loss_params=None,
         sample_weight=None, fit_intercept=False, intercept_scaling=1.0, solver="auto",
         tol=1e-6, max_epochs=100, random_state=0, warm_start=True, **solver_options):
    """Solve the problem of docs/conventions.md §1 for a decreasing sequence of ``lam``.

    Parameters
    ----------
    X, y : training data (``y`` in {-1, +1} for classification losses)
    lams : array, optional
        The values of ``lam``, used in the given order (decreasing is what
        warm starts are made for).  Default: :func:`lam_grid` from
        :func:`lam_max` with ``n_lams`` and ``eps``.
    n_lams : int, default 20
    eps : float, default 1e-3
        ``lams[-1] = eps * lam_max``.
    loss, l1, loss_params, sample_weight, solver, tol, max_epochs, random_state,
    **solver_options
        As in :func:`primaldual.solve` (every point uses the same ``random_state``).
    fit_intercept, intercept_scaling
        Append the constant column (regularized intercept) the estimators use.
    warm_start : bool, default True
        Start each fit from the previous point's ``dual_coef``; False solves every
        point from ``alpha = 0`` (for comparison).

    Returns
    -------
    PathResult
    """
    if "warm_start" in solver_options or "resume" in solver_options:
        raise ValueError("path() manages warm starts itself; pass warm_start=True/False "
                         "and no 'resume'")
    if fit_intercept:
        _check_number("intercept_scaling", intercept_scaling)
        X = add_intercept_column(X if hasattr(X, "tocsr") else
                                 np.asarray(X, dtype=np.float64), float(intercept_scaling))
    if lams is None:
        lams = lam_grid(lam_max(X, y, loss, sample_weight=sample_weight,
                                loss_params=loss_params), n_lams, eps)
    else:
        lams = np.asarray(lams, dtype=np.float64).ravel()
        if lams.size == 0 or not np.all(np.isfinite(lams)) or np.any(lams <= 0):
            raise ValueError(f"lams must be a non-empty array of finite values > 0, "
                             f"got {lams!r}")
    results = []
    prev = None
    for lam in lams:
        opts = dict(solver_options)
        if warm_start and prev is not None:
            opts["warm_start"] = prev.dual_coef
        res = solve(X, y, loss=loss, lam=float(lam), solver=solver, tol=tol,
                    max_epochs=max_epochs, random_state=random_state,
                    sample_weight=sample_weight, l1=l1, loss_params=loss_params, **opts)
        res.state = None
        results.append(res)
        prev = res
    return _path_result(results, lams, fit_intercept, intercept_scaling, warm_start)


def l1_path(X, y, l1s=None, n_l1s=100, eps=1e-3, *, loss="logistic", lam=0.0,
            loss_params=None, sample_weight=None, fit_intercept=False,
            intercept_scaling=1.0, solver="l1cd", tol=1e-6, max_epochs=1000,
            warm_start=True, share_setup=True, **solver_options):
    """Solve the sparse problem of docs/sparse-models.md for a decreasing sequence of ``l1``.

    Each point starts from the previous point's ``coef``: its first certificate
    is the previous optimum's duality gap at the new ``l1``, with which the
    solver's Gap Safe rule removes features before any work (sequential
    screening, Ndiaye et al. 2017, Section 4), and again at every check
    (dynamic screening); ``screening=False`` turns both off.  With
    ``solver="l1cd"`` (and ``share_setup``) one solver runs the whole path
    (:func:`primaldual.solvers.sparse.sparse_path`): the data are validated
    and laid out once, the first certificate of a point is the previous
    point's last one re-read, and screened columns are bounded, not read.

    Parameters
    ----------
    l1s : array, optional
        The values of ``l1``; default ``lam_max(penalty="l1") * eps**(k/(n_l1s-1))``.
    n_l1s : int, default 100
    eps : float, default 1e-3
    lam : float, default 0
        The fixed L2 strength (0: pure L1).
    loss, loss_params, sample_weight, fit_intercept, intercept_scaling, solver, tol,
    max_epochs, **solver_options
        As in :func:`path`.
    warm_start : bool, default True
    share_setup : bool, default True
        ``solver="l1cd"`` only: one solver for the whole path (above); False runs
        :func:`primaldual.solve` point by point (for comparison).

    Returns
    -------
    PathResult with ``l1s`` set.
    """
    if "warm_start" in solver_options or "resume" in solver_options:
        raise ValueError("l1_path() manages warm starts itself; pass warm_start=True/False")
    if fit_intercept:
        _check_number("intercept_scaling", intercept_scaling)
        X = add_intercept_column(X if hasattr(X, "tocsr") else
                                 np.asarray(X, dtype=np.float64), float(intercept_scaling))
    if l1s is not None:
        l1s = np.asarray(l1s, dtype=np.float64).ravel()
        if l1s.size == 0 or not np.all(np.isfinite(l1s)) or np.any(l1s <= 0):
            raise ValueError(f"l1s must be a non-empty array of finite values > 0, "
                             f"got {l1s!r}")
    if solver == "l1cd" and share_setup:
        _check_number("n_l1s", n_l1s, integer=True)
        if l1s is None:
            lam_grid(1.0, n_l1s, eps)                   # checks n_l1s and eps
        prob = Problem(X, y, loss=loss, lam=float(lam), l1=1.0, sample_weight=sample_weight,
                       loss_params=loss_params)
        l1s, results = sparse_path(prob, l1s, n_l1s, eps, tol=tol, max_epochs=max_epochs,
                                   warm_start=warm_start, **solver_options)
        out = _path_result(results, np.full(l1s.size, float(lam)), fit_intercept,
                           intercept_scaling, warm_start)
        out.l1s = l1s
        return out
    if l1s is None:
        l1s = lam_grid(lam_max(X, y, loss, penalty="l1", sample_weight=sample_weight,
                               loss_params=loss_params), n_l1s, eps)
    results, prev = [], None
    for l1 in l1s:
        opts = dict(solver_options)
        if warm_start and prev is not None:
            opts["warm_start"] = prev.coef
        res = solve(X, y, loss=loss, lam=float(lam), l1=float(l1), solver=solver, tol=tol,
                    max_epochs=max_epochs, sample_weight=sample_weight,
                    loss_params=loss_params, **opts)
        res.state = None
        results.append(res)
        prev = res
    out = _path_result(results, np.full(l1s.size, float(lam)), fit_intercept,
                       intercept_scaling, warm_start)
    out.l1s = l1s
    return out


def _path_result(results, lams, fit_intercept, intercept_scaling, warm_start):
    coefs = np.vstack([r.coef for r in results])
    if fit_intercept:
        intercepts = float(intercept_scaling) * coefs[:, -1]
        coefs = coefs[:, :-1]
    else:
        intercepts = np.zeros(len(results))

    def arr(attr, dtype=np.float64):
        return np.array([getattr(r, attr) for r in results], dtype=dtype)

    return PathResult(lams=lams, coefs=coefs, intercepts=intercepts,
                      dual_coefs=np.vstack([r.dual_coef for r in results]),
                      primal=arr("primal"), dual=arr("dual"), gap=arr("gap"),
                      rel_gap=np.array([r.rel_gap for r in results]),
                      epochs=arr("n_epochs"), converged=arr("converged", bool),
                      time=arr("time"), warm_start=bool(warm_start), results=results)
