"""Solvers and the :func:`solve` entry point (docs/conventions.md §4).

The registry (:data:`SOLVERS`, filled by each solver module's ``@register``),
:func:`solve`, and the names the front ends use.  ``solver="auto"`` is the
supervised portfolio of :mod:`primaldual.solvers.supervisor`, whose prior
(candidate order, cost model) is :mod:`primaldual.solvers.auto`.
"""
from __future__ import annotations

from ..problem import Problem
from .._util.threads import resolve_n_jobs
from ._base import (SOLVERS, SolveResult, Solver, SolverState, load_state,
                    save_state)
# every solver module registers its solvers with @register when imported
from . import (asdca, bmrm, box_newton, cocoa, disco, dso, full_gradient, ipm, minibatch,  # noqa: F401
               newton, psgd, sag, sdca, sgd, simba, sparse, spdc)
from .auto import (AUTO_CANDIDATES, conditioning_ratio, ipm_pays, option_classes,
                   resolve_distributed_solver, resolve_solver, row_norm_ratio,
                   threaded_solvers)
from .supervisor import solver_path, supervise
from ._multiclass import MULTICLASS_SOLVERS, is_multiclass_loss, solve_multiclass

__all__ = ["solve", "SOLVERS", "SolveResult", "SolverState", "Solver", "resolve_solver",
           "check_solver_name", "load_state", "save_state", "threaded_solvers",
           "AUTO_CANDIDATES", "option_classes", "row_norm_ratio", "ipm_pays",
           "conditioning_ratio", "resolve_distributed_solver", "solver_path"]


def check_solver_name(solver, binary_loss=None) -> str:
    """``solver`` if it names a registered solver (binary or multiclass) or
    ``"auto"``; else a ValueError listing the choices (the registries are the
    only lists of solvers).  With ``binary_loss`` (a loss that is not
    multiclass), a multiclass solver is an error naming the loss it fits."""
    if not isinstance(solver, str) or not (
            solver == "auto" or solver in SOLVERS or solver in MULTICLASS_SOLVERS):
        known = set(SOLVERS) | set(MULTICLASS_SOLVERS) | {"auto"}
        raise ValueError(f"unknown solver {solver!r}; choose one of "
                         f"{', '.join(sorted(known))}")
    if binary_loss is not None and solver in MULTICLASS_SOLVERS:
        raise ValueError(f"solver={solver!r} fits loss="
                         f"{' or '.join(sorted(MULTICLASS_SOLVERS[solver].loss_names))} "
                         f"only, not loss={getattr(binary_loss, 'name', binary_loss)!r}")
    return solver


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
        epsilon_insensitive, squared_epsilon_insensitive.
    lam, l1 : float
        L2 and L1 strengths (``lam = 1 / (C n)`` for LIBLINEAR's and
        scikit-learn's ``C``; ``solve`` refuses ``C``, ``alpha`` and ``max_iter``
        with a pointer to ``lam`` and ``max_epochs``).
    solver : str
        See ``primaldual.SOLVERS`` and the README's solver table.  ``"auto"``
        runs the supervised portfolio of :mod:`primaldual.solvers.supervisor`:
        the candidates in the order of :mod:`primaldual.solvers.auto`, each
        handing over warm to the next when its certified gap stalls;
        ``res.extras["path"]`` lists the legs.
    tol : float
        Stop when ``(P - D) / max(|P|, 1e-12) <= tol``.
    max_epochs : float or None
        Passes; None: the solver's default (1000 for sdca, newton and ipm, 100
        for the others; ``"auto"``: a hand-over leaves the next leg its own).
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
        (``newton``) may still run, when it is predicted faster than SDCA on
        ``k`` threads; a threaded leg is compared with one thread on this
        data, and the faster continues.  ``n_jobs > 1`` with another solver
        named explicitly is an error.
    **solver_options
        Options of the solver (see its docstring) and the common options
        ``time_limit``, ``check_every``, ``warm_start``, ``resume``,
        ``checkpoint``, ``checkpoint_every``, ``progress``.  Unknown options
        are an error.
    """
    _refuse_estimator_names(solver_options)
    if is_multiclass_loss(loss):      # coef (d, K): primaldual.solvers._multiclass
        return solve_multiclass(X, y, loss, lam, solver, tol, max_epochs, random_state,
                                sample_weight, l1, loss_params, callback, eval_set,
                                client, n_jobs, **solver_options)
    check_solver_name(solver, binary_loss=loss)
    threads = resolve_n_jobs(n_jobs)
    problem = Problem(X, y, loss=loss, lam=lam, l1=l1, sample_weight=sample_weight,
                      loss_params=loss_params, n_threads=threads)
    reason, name = None, solver
    if solver == "auto":
        if client is not None or solver_options.get("n_partitions") is not None:
            name, reason = resolve_distributed_solver(problem, solver_options, client)
        elif solver_options.get("resume") is not None:
            name = _resumed_solver(solver_options["resume"])
        else:
            return supervise(problem, tol=tol, max_epochs=max_epochs,
                             random_state=random_state, callback=callback,
                             eval_set=eval_set, n_jobs=n_jobs, **solver_options)
    return _run_named(problem, name, solver, reason, client, n_jobs, threads,
                      dict(tol=tol, max_epochs=max_epochs, random_state=random_state,
                           callback=callback, eval_set=eval_set), solver_options)


def _run_named(problem, name, asked, reason, client, n_jobs, threads, common, options):
    """Run the registered solver ``name`` (``asked``: what the caller named)."""
    if name not in SOLVERS:
        raise ValueError(f"solver {name!r} is not available in this version of primaldual; "
                         f"available: {', '.join(sorted(SOLVERS))}")
    cls = SOLVERS[name]
    # auto with a client takes n_jobs as a permission: a solver whose threads
    # run only in process (its partitions on Dask are actors) does not get it
    permission = asked == "auto" and client is not None and getattr(
        cls, "threads_in_process_only", False)
    if n_jobs is not None and not permission:
        if "n_jobs" in cls.options_class.names():
            options["n_jobs"] = n_jobs
        elif threads > 1 and asked != "auto":
            raise ValueError(f"solver={name!r} runs on one thread; n_jobs={n_jobs!r} "
                             f"applies to {', '.join(threaded_solvers())}")
    if client is not None:
        if not getattr(cls, "supports_client", False):
            raise ValueError(f"solver={name!r} does not run on a Dask client; "
                             f"distributed solvers: "
                             f"{', '.join(k for k, c in SOLVERS.items() if getattr(c, 'supports_client', False)) or 'none yet'}")
        options["client"] = client
    res = cls.create(problem, **common, **options).run()
    if reason is not None:
        res.extras["solver_reason"] = reason
    return res


def _resumed_solver(resume) -> str:
    """The solver that wrote ``resume`` (a state, a result or a checkpoint path):
    ``solver="auto"`` continues the leg the checkpoint was written by."""
    if isinstance(resume, SolveResult):
        resume = resume.state
    if not isinstance(resume, SolverState):
        try:
            resume = load_state(resume)
        except (TypeError, ValueError, OSError):
            return "sdca"           # the solver's own resume reports the problem
    return resume.solver
