"""Solvers and the :func:`solve` entry point (docs/conventions.md §4)."""
from __future__ import annotations

import importlib
import math
import pkgutil

from ..problem import Problem
from ._base import (SOLVERS, SolveResult, Solver, SolverState, load_state,
                    save_state)
from .._util.clients import client_workers
from .._util.threads import resolve_n_jobs
from ._distributed_auto import distributed_choice
from ..kernels.newton import row_nnz_squares
from .ipm import densifies
from .newton import explicit_hessian_pays
from ..blocks.sdca_threads import thread_plan

# Every module of this package registers its solvers with @register on import;
# importing them all here keeps the registry complete without a hand-kept list.
for _mod in pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = ["solve", "SOLVERS", "SolveResult", "SolverState", "Solver", "resolve_solver",
           "check_solver_name", "load_state", "save_state", "threaded_solvers",
           "AUTO_CANDIDATES", "option_classes", "row_norm_ratio", "ipm_pays",
           "resolve_distributed_solver"]

#: the solvers ``solver="auto"`` picks from (:func:`resolve_solver`), SDCA first
AUTO_CANDIDATES = ("sdca", "newton", "ipm", "l1cd")



def check_solver_name(solver) -> str:
    """``solver`` if it names a registered solver or ``"auto"``; else a ValueError
    listing the choices (the registry is the only list of solvers)."""
    if not isinstance(solver, str) or (solver != "auto" and solver not in SOLVERS):
        raise ValueError(f"unknown solver {solver!r}; choose one of "
                         f"{', '.join(sorted(set(SOLVERS) | {'auto'}))}")
    return solver


#: auto picks Newton when the row-norm ratio mean_i ||x_i||^2 / (lam gamma n)
#: reaches this value on dense data whose Hessian is formed through BLAS (d <= 300),
NEWTON_RATIO_DENSE = 0.03
#: this value on sparse data whose Hessian is formed explicitly (sum nnz_i^2 small),
NEWTON_RATIO_EXPLICIT = 0.5
#: or this value when Newton runs on Hessian-vector products (large d)
NEWTON_RATIO_MATVEC = 30.0


def conditioning_ratio(problem: Problem) -> float:
    """``(sum_i c_i ||x_i||^2 / W) / (lam gamma n)``, gamma = 1 / smoothness.

    SDCA's epochs to a fixed accuracy grow like ``1 + R^2 / (lam gamma n)``
    (Shalev-Shwartz & Zhang 2013, Theorem 1 with the row norms of the data);
    this is that ratio with the weighted mean squared row norm for ``R^2``.
    Unit-norm rows give ``1 / (lam gamma n)``; standardized columns give rows
    of squared norm about ``d``, ``d`` times more."""
    r = problem.rows
    mean_sq = float(problem.sample_weight @ r.sqnorm) / problem.W
    return mean_sq * problem.loss.smoothness / (problem.lam * problem.n)


#: auto picks the interior-point method for the hinge when the row-norm ratio
#: mean_i ||x_i||^2 / (lam n) reaches this value on dense data,
IPM_RATIO_DENSE = 10.0
#: this value on sparse (CSR) data, where SDCA's epochs are cheap,
IPM_RATIO_SPARSE = 50.0
#: and one iteration costs at most this many passes' worth of flops
#: (min(n, d) on dense data, sum_i nnz_i^2 / nnz on sparse data) ...
IPM_MAX_COST = 1000.0
#: ... with the linear systems at most this size (min(n, d))
IPM_MAX_SIZE = 2000


def row_norm_ratio(problem: Problem) -> float:
    """``(sum_i c_i ||x_i||^2 / W) / (lam n)``: :func:`conditioning_ratio` without
    the loss's smoothness, the ``R^2 / (lam n)`` that SDCA's epochs grow with
    on a Lipschitz loss (Shalev-Shwartz & Zhang 2013, Theorem 2)."""
    mean_sq = float(problem.sample_weight @ problem.rows.sqnorm) / problem.W
    return mean_sq / (problem.lam * problem.n)


def ipm_pays(problem: Problem) -> bool:
    """An interior-point iteration is affordable: ``min(n, d) <= IPM_MAX_SIZE``
    and its cost is at most ``IPM_MAX_COST`` passes' worth of flops."""
    n, d = problem.n, problem.d
    m = min(n, d)
    if m > IPM_MAX_SIZE or problem.nnz == 0:
        return False
    if problem.rows.is_sparse and not densifies(problem) and d <= n:
        cost = float(row_nnz_squares(problem.rows.indptr)) / problem.nnz
    else:
        cost = float(m)
    return cost <= IPM_MAX_COST


def resolve_solver(solver: str, problem: Problem, options=None, n_jobs=1) -> str:
    """The concrete solver for ``solver="auto"``.

    ``options`` are the solver options the caller gave: when the rule below
    picks a solver that does not take them and SDCA does (``shrinking``,
    ``sampling``, ...), SDCA is used, so that ``solve(..., shrinking=False)``
    means SDCA without shrinking, as it always has.

    ``newton`` (truncated Newton-CG, :mod:`primaldual.solvers.newton`) for a
    loss with a (generalized) Hessian (logistic, squared_hinge, squared,
    smooth_hinge), ``l1 = 0``, and a problem ill-conditioned for SDCA, i.e.
    :func:`conditioning_ratio` at least

    * 0.03 on dense data whose Hessian is formed explicitly (``d <= 300``),
    * 0.5 on sparse data whose Hessian is formed explicitly
      (``sum_i nnz_i^2 <= 300 nnz`` and ``d <= 2000``),
    * 30 when Newton runs on Hessian-vector products (larger ``d``);

    ``ipm`` (the interior-point method on the box dual,
    :mod:`primaldual.solvers.ipm`) for the ``hinge`` with ``l1 = 0`` when
    :func:`row_norm_ratio` is at least 10 on dense data (50 on sparse data)
    and an iteration is affordable (:func:`ipm_pays`: ``min(n, d) <= 2000``,
    at most 1000 passes' worth of flops).  SDCA on the hinge needs about
    ``R^2 / (lam n eps)`` epochs; measured (docs/solvers.md) on standardized
    Covtype (ratio 11) the IPM certifies 1e-6 2.6x faster, on standardized a9a
    (38) 3x faster while SDCA does not reach it in 1,000 epochs, on a
    standardized 2,000 x 500 set (2,500) in 15 iterations where SDCA stalls
    at 0.5; on sparse mushrooms (26) SDCA is 3x faster.

    ``l1cd`` (:mod:`primaldual.solvers.sparse`) for ``l1 > 0`` with a smooth
    loss, ``lam = 0`` included; ``spdc`` for ``lam = 0`` with a non-smooth loss.

    ``sdca`` in every other case.

    The thresholds are measured (benchmarks/bench_auto.py,
    benchmarks/results/auto.md, docs/solvers.md): on standardized data
    (digits, Covtype, a 2,000-row synthetic set: ratio 2.6 to 10^5) SDCA does
    not reach a relative gap of 1e-6 in 500 epochs while Newton certifies it
    in 13-21 passes; on unit-norm Covtype (dense, d = 54) Newton was faster
    in every cell, down to ratio 0.05 (1.5-2x); on unit-norm a9a (sparse,
    explicit Hessian) from ratio 0.6-0.8; on unit-norm reuters (d = 8,315, Hessian-vector products) SDCA
    is faster or level up to ratio 26 and Newton 2-5x faster from ratio 32.
    Newton also beats SPDC in every measured cell where the former rule
    (``R^2 / (lam gamma) > 1000 n``) picked SPDC, so that branch is gone.

    With ``n_jobs = k > 1`` threads SDCA may run faster and Newton and the
    IPM do not (they run on one core), so each threshold is multiplied by SDCA's
    predicted speed-up (:func:`primaldual.blocks.sdca_threads.thread_plan`; 1 where
    it runs serially): SDCA's epochs grow linearly in the ratio, so the ratio
    at which the two take the same time moves up by SDCA's speed-up.
    """
    if solver != "auto":
        return solver
    loss = problem.loss
    if problem.l1 > 0 and loss.smooth and _accepts_options("l1cd", options):
        return "l1cd"           # sparse models, lam >= 0 (docs/sparse-models.md)
    if problem.lam == 0:
        return "spdc"           # pure L1 with a non-smooth loss
    if "newton" in SOLVERS and loss.generalized_hessian and problem.l1 == 0 \
            and problem.lam > 0:
        ratio = conditioning_ratio(problem)
        limit = _newton_limit(problem)
        if ratio >= limit * _sdca_speedup(problem, n_jobs) \
                and _accepts_options("newton", options):
            return "newton"
    if "ipm" in SOLVERS and loss.name == "hinge" and problem.l1 == 0 and problem.lam > 0:
        limit = IPM_RATIO_SPARSE if problem.rows.is_sparse else IPM_RATIO_DENSE
        ratio = row_norm_ratio(problem)
        # an overflowing row norm (ratio inf) stays with SDCA, which warns and
        # reports non-finite steps; the interior-point systems cannot be formed
        if math.isfinite(ratio) and ratio >= limit * _sdca_speedup(problem, n_jobs) \
                and ipm_pays(problem) and _accepts_options("ipm", options):
            return "ipm"
    return "sdca"


def _newton_limit(problem) -> float:
    """The conditioning ratio from which Newton beats serial SDCA, by how
    Newton forms its Hessian on this problem."""
    if not explicit_hessian_pays(problem):
        return NEWTON_RATIO_MATVEC
    if problem.rows.is_sparse:
        return NEWTON_RATIO_EXPLICIT
    return NEWTON_RATIO_DENSE


def resolve_distributed_solver(problem: Problem, options=None, client=None):
    """``(solver, reason)`` for ``solver="auto"`` on partitions (with ``client``,
    or ``n_partitions`` in ``options``): the distributed ``newton`` or
    ``cocoa``.

    ``newton`` needs a loss with a (generalized) Hessian and ``l1 = 0``; then
    the local rule of :func:`resolve_solver` decides, with its threshold moved
    by the two methods' speed-ups on the partitions, per-round communication
    included (:mod:`primaldual.solvers._distributed_auto`).  Options that
    only one of the two takes (``local_iters``, ``aggregation``; ``cg_tol``,
    ``hessian``) pick that one."""
    options = dict(options or {})
    K = options.get("n_partitions")
    if K is None:
        K = max(1, len(client_workers(client))) if client is not None else 1
    loss = problem.loss
    if not (loss.generalized_hessian and problem.l1 == 0 and problem.lam > 0):
        return "cocoa", (f"loss={loss.name!r}" + (" with l1 > 0" if problem.l1 else "")
                         + ": Newton needs a smooth loss and l1 = 0; CoCoA+")
    # a bad K is refused by the solver that runs; the cost model takes at least 1
    K = max(1, int(K)) if isinstance(K, (int, float)) and not isinstance(K, bool) else 1
    pick, reason = distributed_choice(problem, conditioning_ratio(problem),
                                      _newton_limit(problem), K, client is not None)
    other = "cocoa" if pick == "newton" else "newton"
    if not _accepts_options(pick, options) and _accepts_options(other, options):
        return other, f"the options {sorted(options)} are {other}'s ({reason})"
    return pick, reason


def _sdca_speedup(problem, n_jobs) -> float:
    """SDCA's predicted speed-up on ``n_jobs`` threads (1 when it would run
    serially)."""
    if int(n_jobs) <= 1:
        return 1.0
    plan = thread_plan(problem.rows, n_jobs)
    return plan.speedup if plan.threads > 1 else 1.0


def threaded_solvers() -> list:
    """The solvers that take ``n_jobs`` (run on several threads)."""
    return sorted(k for k, c in SOLVERS.items() if "n_jobs" in c.options_class.names())


def option_classes(solver) -> list:
    """The options classes that may apply to ``solver``: its own, or for
    ``"auto"`` those of :data:`AUTO_CANDIDATES` (an option is read by the
    first that has it)."""
    names = AUTO_CANDIDATES if solver == "auto" else (solver,)
    return [SOLVERS[n].options_class for n in names if n in SOLVERS]


#: names from scikit-learn / LIBLINEAR that solve() spells differently
_OTHER_NAMES = {
    "C": "solve() takes lam, the L2 strength, not C: lam = 1 / (C n) for n unit-weight "
         "samples (LIBLINEAR's and LinearSVC's C)",
    "alpha": "solve() takes lam, the L2 strength (the estimators' alpha is the same number)",
    "max_iter": "solve() takes max_epochs, the passes over the data (the estimators' "
                "max_iter is the same number)",
}


def _refuse_estimator_names(options):
    for name, message in _OTHER_NAMES.items():
        if name in options:
            raise ValueError(f"{message}; got {name}={options[name]!r}")


def _accepts_options(name, options):
    extra = set(options or ()) - {"client"}
    return extra <= set(SOLVERS[name].options_class.names())


def solve(X, y, loss="hinge", lam=1e-4, solver="auto", tol=1e-6, max_epochs=None,
          random_state=0, sample_weight=None, l1=0.0, loss_params=None, callback=None,
          eval_set=None, client=None, n_jobs=None, **solver_options) -> SolveResult:
    """Fit a regularized linear model and return a certified result.

    Minimizes ``P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2 +
    l1 ||w||_1`` (docs/conventions.md §1) and returns the primal point ``coef``, the dual
    certificate ``dual_coef`` and the exact ``primal``, ``dual`` and ``gap``
    for that pair.

    Parameters
    ----------
    X : array (n, d) or sparse matrix
    y : array (n,)   labels -1/+1 for classification losses
    loss : str or Loss
        hinge, smooth_hinge, squared_hinge, logistic, squared, absolute,
        epsilon_insensitive.
    lam, l1 : float
        L2 and L1 strengths (``lam = 1 / (C n)`` for LIBLINEAR's and
        scikit-learn's ``C``; ``solve`` refuses ``C``, ``alpha`` and ``max_iter``
        with a pointer to ``lam`` and ``max_epochs``).
    solver : str
        See ``primaldual.SOLVERS`` and the README's solver table.
    tol : float
        Stop when ``(P - D) / max(|P|, 1e-12) <= tol``.
    max_epochs : float or None
        Passes over the data; None: the solver's default (1000 for sdca,
        newton and ipm, 100 for the others).
    random_state : int, Generator, RandomState or None
        Seeds every random choice.
    sample_weight : array (n,), optional
    loss_params : dict, optional
    callback : callable, optional
        ``callback(snapshot) -> bool`` after each check; True stops the fit.
        ``snapshot`` is the trace record plus ``coef`` and ``dual_coef``
        (read-only views).
    eval_set : (X_test, y_test), optional
        Adds ``test_error`` or ``test_rmse`` to the trace.
    client : dask.distributed.Client, optional
        Distributed solvers run on it.
    n_jobs : int or None
        Threads for the solvers that run on several (``sdca``,
        ``minibatch_sdca``): None or 1 one thread, ``-1`` all cores, ``-2`` all
        but one.  With ``solver="auto"`` a solver that runs on one thread
        (``newton``) may still be picked, when it is faster than SDCA on ``k``
        threads would be; ``n_jobs > 1`` with another solver named explicitly
        is an error.
    **solver_options
        Options of the solver (see its docstring) and the common options
        ``time_limit``, ``check_every``, ``warm_start``, ``resume``,
        ``checkpoint``, ``checkpoint_every``, ``progress``.  Unknown options
        are an error.
    """
    check_solver_name(solver)
    _refuse_estimator_names(solver_options)
    threads = resolve_n_jobs(n_jobs)
    problem = Problem(X, y, loss=loss, lam=lam, l1=l1, sample_weight=sample_weight,
                      loss_params=loss_params)
    reason = None
    if solver == "auto" and (client is not None
                             or solver_options.get("n_partitions") is not None):
        name, reason = resolve_distributed_solver(problem, solver_options, client)
    else:
        name = resolve_solver(solver, problem, solver_options, n_jobs=threads)
    if name not in SOLVERS:
        raise ValueError(f"solver {name!r} is not available in this version of primaldual; "
                         f"available: {', '.join(sorted(SOLVERS))}")
    cls = SOLVERS[name]
    if n_jobs is not None:
        if "n_jobs" in cls.options_class.names():
            solver_options["n_jobs"] = n_jobs
        elif threads > 1 and solver != "auto":
            raise ValueError(f"solver={name!r} runs on one thread; n_jobs={n_jobs!r} "
                             f"applies to {', '.join(threaded_solvers())}")
    if client is not None:
        if not getattr(cls, "supports_client", False):
            raise ValueError(f"solver={name!r} does not run on a Dask client; "
                             f"distributed solvers: "
                             f"{', '.join(k for k, c in SOLVERS.items() if getattr(c, 'supports_client', False)) or 'none yet'}")
        solver_options["client"] = client
    runner = cls.create(problem, tol=tol, max_epochs=max_epochs, random_state=random_state,
                        callback=callback, eval_set=eval_set, **solver_options)
    res = runner.run()
    if reason is not None:
        res.extras["solver_reason"] = reason
    return res
