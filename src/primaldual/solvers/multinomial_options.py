"""The options of multinomial Newton-CG
(:class:`~primaldual.solvers.multinomial.MultinomialNewton`)."""
from __future__ import annotations

from dataclasses import dataclass

from ._options import CommonOptions, PartitionOptions, choice, number

__all__ = ["MultinomialNewtonOptions"]


@dataclass(frozen=True)
class MultinomialNewtonOptions(PartitionOptions, CommonOptions):
    """The options of :class:`MultinomialNewton`."""

    solver_name = "multinomial_newton"
    cg_tol: float = number(0.5, low=0.0, high=1.0, high_strict=True,
                           doc="largest forcing term: CG stops at ||r|| <= eta ||g||, "
                               "eta = min(cg_tol, sqrt(||g|| / ||g_0||))")
    max_cg_iter: int | None = number(None, integer=True, low=0.0, also=(None,),
                                     doc="cap on CG iterations per Newton step "
                                         "(None: max(50, 2 d K))")
    hessian: str = choice("auto", "auto", "explicit", "matvec",
                          doc="form the dK x dK Hessian and solve by Cholesky "
                              "(explicit) or run CG on Hessian-vector products "
                              "(matvec); auto: CG, switching to explicit (dK <= "
                              "2000) once a step's CG iterations cost more")
    preconditioner: str = choice("auto", "auto", "diagonal", "blocks",
                                 doc="CG's preconditioner: the diagonal of H, or its K "
                                     "class blocks d x d (Cholesky); auto: the diagonal, "
                                     "where the Hessian is never formed switching to the "
                                     "blocks once a step's CG iterations cost more than "
                                     "forming them")
    globalization: str = choice("auto", "auto", "line_search", "trust_region",
                                doc="step control of the CG steps: a backtracking line "
                                    "search along the CG solution, or a trust region "
                                    "(in the norm of H's diagonal) at whose boundary CG "
                                    "stops (TRON's radius rules); auto: the trust region "
                                    "on sparse rows whose Hessian is never formed "
                                    "(text), else the line search")
    trust_floor: float = number(0.01, low=0.0, strict=False,
                                doc="the trust region's metric (and CG's preconditioner "
                                    "there) on each coordinate (j, k) is at least "
                                    "trust_floor (X^T C X)_jj / W + lam, as if every row's "
                                    "curvature p (1 - p) were at least trust_floor (0: H's "
                                    "diagonal; so too where the rows live only on Dask "
                                    "workers)")
    newton_system: str = choice("auto", "auto", "features", "rows",
                                doc="how a Newton step solves H s = -g: CG on H (features), "
                                    "or CG on the n K x n K system of the rows by the "
                                    "Woodbury identity (rows; in process only); auto: the "
                                    "rows where they are fewer than the features, once a "
                                    "step in the features took 200 products (ROWS_TRY), for as "
                                    "long as their solves converge")
    start: str = choice("auto", "auto", "zero", "dual_cd",
                        doc="the first point: zero, or start_epochs epochs of "
                            "multinomial_dual_cd from alpha = 0 (auto: dual_cd "
                            "unless the Hessian is formed at once or rows hold "
                            "fewer than K entries)")
    start_epochs: int | None = number(None, integer=True, low=0.0, also=(None,),
                                      doc="epochs of dual coordinate descent for "
                                          "start='dual_cd' (None: 40 on sparse input "
                                          "whose Hessian is not formed, else 3; on K "
                                          "partitions min(K + 1, 5) times that)")
