"""What the multiclass solvers share: the problem they accept and, for the two
dual methods, their check cost, their returned pair and their box bounds."""
from __future__ import annotations

import numpy as np

from ..distributed.partitioned import PartitionedMulticlassProblem
from ..multiclass import MulticlassProblem
from ._base import Solver, SolveResult


class MulticlassSolver(Solver):
    """A solver of a :class:`~primaldual.multiclass.MulticlassProblem` whose
    loss is one of ``loss_names``; any other problem is refused by name."""

    loss_names = ()
    #: whether it takes a problem whose rows are on Dask workers
    supports_partitioned = False

    def __init__(self, problem, **kwargs):
        if not isinstance(problem, (MulticlassProblem, PartitionedMulticlassProblem)) or \
                problem.loss.name not in self.loss_names:
            raise ValueError(f"solver={self.name!r} fits loss={self.loss_names[0]!r} only")
        if isinstance(problem, PartitionedMulticlassProblem) and not self.supports_partitioned:
            raise ValueError(f"solver={self.name!r} runs in one process; rows on Dask "
                             f"workers need multinomial_newton or crammer_singer_cocoa")
        super().__init__(problem, **kwargs)

    def _warm_alpha(self, ws):
        """The dual start of ``warm_start`` (a SolveResult or alpha of shape
        (n, K)), checked for shape and dual feasibility; None without one."""
        if ws is None:
            return None
        prob = self.problem
        arr = ws.dual_coef if isinstance(ws, SolveResult) else ws
        alpha = np.array(arr, dtype=np.float64)
        if alpha.shape != (prob.n, prob.K):
            raise ValueError(f"warm_start for {self.name} must be a SolveResult or a dual "
                             f"point alpha of shape (n, K) = ({prob.n}, {prob.K}), got "
                             f"shape {alpha.shape}")
        if not np.isfinite(alpha).all() or not prob.in_dual_domain(alpha).all():
            raise ValueError("warm_start alpha is not dual feasible: every row of "
                             "e_y - alpha must lie on the simplex")
        return alpha


class MulticlassDualSolver(MulticlassSolver):
    """A dual coordinate method on ``alpha`` of shape (n, K)."""

    #: a dual method returns its own iterate, coef = w(dual_coef) (GUIDE §1)
    mixes_best_pair = False
    adaptive_checks = True

    @property
    def check_passes(self):
        """A check multiplies X and X^T by K columns each."""
        return 2.0 * self.problem.K

    def row_bounds(self):
        """``C_i = s_i / (W lam)``: row ``i``'s dual scale (sample weight
        ``s_i``, total weight ``W``)."""
        prob = self.problem
        return prob.sample_weight / (prob.W * prob.lam)
