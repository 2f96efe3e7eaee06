"""What the multiclass solvers share: the problem they accept and, for the two
dual methods, their check cost, their returned pair and their box bounds."""
from __future__ import annotations

from ..multiclass import MulticlassProblem
from ._base import Solver


class MulticlassSolver(Solver):
    """A solver of a :class:`~primaldual.multiclass.MulticlassProblem` whose
    loss is one of ``loss_names``; any other problem is refused by name."""

    loss_names = ()

    def __init__(self, problem, **kwargs):
        if not isinstance(problem, MulticlassProblem) or \
                problem.loss.name not in self.loss_names:
            raise ValueError(f"solver={self.name!r} fits loss={self.loss_names[0]!r} only")
        super().__init__(problem, **kwargs)


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
