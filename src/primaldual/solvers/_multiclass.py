"""The multiclass models' solvers and the part of :func:`primaldual.solve` that
runs them (``loss="multinomial"`` or ``"crammer_singer"``; docs/multiclass-models.md).

They are kept apart from :data:`~primaldual.solvers.SOLVERS`, whose solvers fit
the binary and regression losses of one coefficient vector: a multiclass
solver takes a :class:`~primaldual.multiclass.MulticlassProblem` and returns a
``coef`` of shape (d, K) and a ``dual_coef`` of shape (n, K).
"""
from __future__ import annotations

from ..multiclass import MULTICLASS_LOSSES, MulticlassProblem, is_multiclass_loss
from .._util.threads import resolve_n_jobs
from .crammer_singer import CrammerSingerDual
from .multinomial import MultinomialNewton
from .multinomial_dual import MultinomialDualCD

__all__ = ["MULTICLASS_SOLVERS", "DEFAULT_SOLVER", "solve_multiclass",
           "is_multiclass_loss", "multiclass_solver_for"]

#: name -> solver class
MULTICLASS_SOLVERS = {cls.name: cls for cls in (MultinomialNewton, MultinomialDualCD,
                                               CrammerSingerDual)}

#: the solver ``solver="auto"`` runs for each loss
DEFAULT_SOLVER = {"multinomial": MultinomialNewton.name,
                  "crammer_singer": CrammerSingerDual.name}

#: the binary solvers' names that mean the same method here
_ALIASES = {("multinomial", "newton"): MultinomialNewton.name,
            ("crammer_singer", "sdca"): CrammerSingerDual.name}


def multiclass_solver_for(loss_name, solver) -> str:
    """The concrete solver name for ``loss_name`` (``auto``, a name from
    :data:`MULTICLASS_SOLVERS`, or the alias ``newton`` / ``sdca``)."""
    if loss_name not in MULTICLASS_LOSSES:
        raise ValueError(f"{loss_name!r} is not a multiclass loss")
    if solver == "auto":
        return DEFAULT_SOLVER[loss_name]
    name = _ALIASES.get((loss_name, solver), solver)
    if name in MULTICLASS_SOLVERS and loss_name in MULTICLASS_SOLVERS[name].loss_names:
        return name
    ok = sorted({"auto"} | {k for k, c in MULTICLASS_SOLVERS.items()
                            if loss_name in c.loss_names}
                | {a for (lo, a) in _ALIASES if lo == loss_name})
    raise ValueError(f"solver={solver!r} does not fit loss={loss_name!r}; choose one of "
                     f"{', '.join(ok)}")


def solve_multiclass(X, y, loss, lam, solver, tol, max_epochs, random_state,
                     sample_weight, l1, loss_params, callback, eval_set, client, n_jobs,
                     **solver_options):
    """:func:`primaldual.solve` for a multiclass loss (same arguments)."""
    if n_jobs is not None and resolve_n_jobs(n_jobs) > 1 and solver != "auto":
        raise ValueError(f"solver={solver!r} runs on one thread; n_jobs={n_jobs!r} does "
                         f"not apply to multiclass losses")
    problem = MulticlassProblem(X, y, loss=loss, lam=lam, sample_weight=sample_weight,
                                loss_params=loss_params, l1=l1)
    name = multiclass_solver_for(problem.loss.name, solver)
    cls = MULTICLASS_SOLVERS[name]
    if client is not None or solver_options.get("n_partitions") is not None:
        if not getattr(cls, "supports_client", False):
            raise ValueError(f"solver={name!r} (loss={problem.loss.name!r}) runs in this "
                             f"process only; drop client / n_partitions"
                             + ("; multinomial_newton runs on partitions and Dask"
                                if problem.loss.name == "multinomial" else ""))
        if client is not None:
            solver_options["client"] = client
    runner = cls(problem, tol=tol, max_epochs=max_epochs, random_state=random_state,
                 callback=callback, eval_set=eval_set, **solver_options)
    res = runner.run()
    res.extras["n_classes"] = problem.K
    return res
