"""Solvers and the :func:`solve` entry point (GUIDE §2)."""
from __future__ import annotations

import importlib
import pkgutil

from ..problem import Problem
from ._base import SOLVERS, SolveResult, Solver, SolverState, load_state, save_state

# Every module of this package registers its solvers with @register on import;
# importing them all here keeps the registry complete without a hand-kept list.
for _mod in pkgutil.iter_modules(__path__):
    if not _mod.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = ["solve", "SOLVERS", "SolveResult", "SolverState", "Solver", "resolve_solver",
           "load_state", "save_state"]

#: every solver name of the GUIDE, registered or not yet
KNOWN_SOLVERS = ("sdca", "sgd", "minibatch_sdca", "cocoa", "spdc", "afg", "lbfgs", "sag",
                 "asdca", "dso", "psgd", "bmrm", "simba", "newton", "auto")


def resolve_solver(solver: str, problem: Problem) -> str:
    """The concrete solver for ``solver="auto"``.

    SDCA, the certified default for every loss, except smooth losses with the
    L2 penalty in the ill-conditioned regime ``R^2 / (lam gamma) > 1000 n``
    (R the largest row norm, gamma = 1 / smoothness), where SPDC's accelerated
    rate pays for its costlier passes.  The threshold is measured: on 2,000
    unit-norm Covtype rows at lam = 1e-7 (ratio ~5000 n) SPDC reached 1e-6 in
    ~700 passes where SDCA did not in 1000; on the rcv1-shaped set at lam = 1e-7
    (ratio ~120 n) SDCA needed 30 passes and SPDC 92 (docs/reproducing-spdc.md).
    """
    if solver != "auto":
        return solver
    if "spdc" in SOLVERS and problem.loss.smooth and problem.l1 == 0:
        R2 = float(problem.rows.sqnorm.max(initial=0.0))
        gamma = 1.0 / problem.loss.smoothness
        if R2 / (problem.lam * gamma) > 1000.0 * problem.n:
            return "spdc"
    return "sdca"


def solve(X, y, loss="hinge", lam=1e-4, solver="sdca", tol=1e-6, max_epochs=100,
          random_state=0, sample_weight=None, l1=0.0, loss_params=None, callback=None,
          eval_set=None, client=None, **solver_options) -> SolveResult:
    """Fit a regularized linear model and return a certified result.

    Minimizes ``P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2 +
    l1 ||w||_1`` (GUIDE §1) and returns the primal point ``coef``, the dual
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
        L2 and L1 strengths.
    solver : str
        See ``primaldual.SOLVERS`` and the README's solver table.
    tol : float
        Stop when ``(P - D) / max(|P|, 1e-12) <= tol``.
    max_epochs : float
        Passes over the data.
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
    **solver_options
        Options of the solver (see its docstring) and the common options
        ``time_limit``, ``check_every``, ``warm_start``, ``resume``,
        ``checkpoint``, ``checkpoint_every``, ``progress``.  Unknown options
        are an error.
    """
    if not isinstance(solver, str) or (solver not in KNOWN_SOLVERS
                                       and solver not in SOLVERS):
        raise ValueError(f"unknown solver {solver!r}; choose one of "
                         f"{', '.join(sorted(set(SOLVERS) | {'auto'}))}")
    problem = Problem(X, y, loss=loss, lam=lam, l1=l1, sample_weight=sample_weight,
                      loss_params=loss_params)
    name = resolve_solver(solver, problem)
    if name not in SOLVERS:
        raise ValueError(f"solver {name!r} is not available in this version of primaldual; "
                         f"available: {', '.join(sorted(SOLVERS))}")
    cls = SOLVERS[name]
    if client is not None:
        if not getattr(cls, "supports_client", False):
            raise ValueError(f"solver={name!r} does not run on a Dask client; "
                             f"distributed solvers: "
                             f"{', '.join(k for k, c in SOLVERS.items() if getattr(c, 'supports_client', False)) or 'none yet'}")
        solver_options["client"] = client
    runner = cls(problem, tol=tol, max_epochs=max_epochs, random_state=random_state,
                 callback=callback, eval_set=eval_set, **solver_options)
    return runner.run()
