"""The direct leg of ``solver="auto"``: a small dense smooth problem by
Newton's method in numpy (:mod:`primaldual.direct_newton`), before the
portfolio and instead of it when it certifies.

Problem: ``min_w P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2``
with ``phi`` the squared hinge, logistic, squared or squared
epsilon-insensitive loss, ``l1 = 0``, dense
rows (or sparse ones of at most ``MAX_CELLS`` cells, densified), at most
``MAX_FEATURES`` columns.  It is Newton's method with the explicit Hessian,
solved by Cholesky (Lin, Weng & Keerthi 2008 with ``hessian="explicit"``),
without the solver machinery around it: checks, callbacks, checkpoints.  So
it runs only when the call asks for none of them (no callback, eval_set,
max_epochs, time_limit or solver option; a warm start is taken), and when
its predicted time (:func:`direct_seconds`) is below the portfolio's first
candidate's plus :data:`PORTFOLIO_S`, the portfolio's fixed cost.

The point returned, and every point whose numpy gap reaches ``tol``, is
certified by the :class:`~primaldual.problem.Problem`'s own exact certificate
(``alpha_i = -phi'(x_i . w)``, docs/conventions.md §1).
A converged run is the result (``solver="newton"``, one leg in
``extras["path"]``, ``extras["direct"] = True``, and a Newton state, built
when read, from which ``solver="newton"`` resumes); otherwise the portfolio
starts warm from its point (:func:`primaldual.solvers.supervisor.supervise`).
"""
from __future__ import annotations

import numpy as np

from ..direct_newton import LOSSES, MAX_CELLS, MAX_FEATURES, solve_direct
from ._base import COMMON_OPTIONS, SOLVERS, SolveResult
from ._results import deferred_state
from .auto import FLOP_S, predicted_seconds

__all__ = ["direct_applies", "direct_seconds", "run_direct", "PORTFOLIO_S"]

#: the portfolio's fixed cost in seconds (supervisor, solver set-up, checks,
#: state), measured at 2-10 ms on a few-hundred-row problem
PORTFOLIO_S = 2e-3
#: Newton iterations a direct fit is predicted to take (measured 4-22), and
#: the seconds of Python per iteration
DIRECT_ITERS = 15
ITER_OVERHEAD_S = 5e-5


def direct_seconds(problem) -> float:
    """Predicted seconds of a direct fit: :data:`DIRECT_ITERS` iterations, each
    forming and factoring the Hessian (``n d^2 + d^3 / 3`` flops) and making
    about 5 passes (``n d`` flops each)."""
    n, d = float(problem.n), float(problem.d)
    flops = n * d * d + d ** 3 / 3.0 + 5.0 * n * d
    return DIRECT_ITERS * (FLOP_S * flops + ITER_OVERHEAD_S)


def _warm_coef(problem, warm):
    """The starting point a warm start gives (None: cold), or False when it is
    not a coefficient vector (the portfolio reads it)."""
    if warm is None:
        return None
    w = warm.coef if isinstance(warm, SolveResult) else warm
    try:
        w = np.asarray(w, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return False
    return w if w.shape == (problem.d,) and np.isfinite(w).all() else False


def _is_default(key, value) -> bool:
    """``value`` is the default of the common option ``key``."""
    if key not in COMMON_OPTIONS:
        return False
    default = COMMON_OPTIONS[key]
    return value is default or (isinstance(value, (str, int, float, bool))
                                and type(value) is type(default) and value == default)


def direct_applies(problem, options, *, first, callback, eval_set, max_epochs) -> bool:
    """The direct leg runs for this call (module docstring); ``first`` is the
    portfolio's first candidate."""
    loss = problem.loss
    if not (loss.name in LOSSES and loss.builtin and problem.l1 == 0
            and problem.lam > 0 and callback is None and eval_set is None
            and max_epochs is None and problem.d <= MAX_FEATURES
            and problem.n * problem.d <= MAX_CELLS):
        return False
    if any(key != "warm_start" and not _is_default(key, value)
           for key, value in options.items()):
        return False
    if _warm_coef(problem, options.get("warm_start")) is False:
        return False
    return direct_seconds(problem) <= predicted_seconds(first, problem) + PORTFOLIO_S


def run_direct(problem, tol, warm, random_state, n_jobs) -> SolveResult:
    """The direct fit of ``problem`` from ``warm``: a :class:`SolveResult`,
    converged or not (its ``coef`` is then the best point it reached)."""
    def certify(w, margins, alpha):
        cert = problem.certificate(w, alpha, margins=margins)
        return cert.primal, cert.dual

    X = problem.rows.X
    if not isinstance(X, np.ndarray):
        X = X.toarray()
    res = solve_direct(X, problem.y, loss=problem.loss.name, lam=problem.lam, tol=tol,
                       param=problem.loss.param,
                       sample_weight=problem.sample_weight, w0=_warm_coef(problem, warm),
                       certify=certify)
    accesses = int(res.n_epochs * problem.nnz)
    for rec in res.trace:
        rec["feature_accesses"] = int(rec["epoch"] * problem.nnz)
    leg = {"method": "newton", "threads": 1, "n_jobs": 1 if n_jobs is None else n_jobs,
           "seconds": res.time, "epochs": res.n_epochs, "gap": res.rel_gap,
           "best_gap": res.rel_gap, "direct": True,
           "reason": "converged" if res.converged else f"direct: {res.stop_reason}"}
    out = SolveResult(
        coef=res.coef, dual_coef=res.dual_coef, primal=res.primal, dual=res.dual,
        gap=res.gap, solver="newton", options=_newton_options(), converged=res.converged,
        n_epochs=res.n_epochs, time=res.time, trace=res.trace, loss=problem.loss.name,
        lam=problem.lam, l1=problem.l1, tol=tol, feature_accesses=accesses,
        stop_reason="converged" if res.converged else res.stop_reason,
        extras={"path": [leg], "direct": True, "newton_iter": res.n_iter})
    out.state = deferred_state(lambda: _newton_state(problem, res, tol, random_state))
    return out


_OPTIONS = {}


def _newton_options() -> dict:
    """The options of ``solver="newton"`` (its default ``hessian="auto"`` forms
    the Hessian explicitly on problems this small)."""
    if not _OPTIONS:
        _OPTIONS.update(SOLVERS["newton"].options_class.create().to_dict())
    return dict(_OPTIONS)


def _newton_state(problem, res, tol, random_state):
    """A state of ``solver="newton"`` at the direct fit's point."""
    runner = SOLVERS["newton"].create(problem, tol=tol, max_epochs=None,
                                      random_state=random_state)
    runner.w = np.array(res.coef)
    runner.passes, runner.n_iter, runner.cg_iter = int(res.n_epochs), res.n_iter, 0
    runner.delta, runner.stall = np.inf, ""
    runner.steps, runner.feature_accesses = res.n_iter, int(res.n_epochs * problem.nnz)
    return runner.export_state(res.trace, res.time)
