"""primaldual: certified stochastic primal-dual solvers for regularized linear models.

Public API (GUIDE §2-§3)::

    primaldual.solve(X, y, loss=..., lam=..., solver=...)  -> SolveResult
    primaldual.Problem(X, y, loss=..., lam=...)            objectives and gap
    primaldual.make_loss(name, params)                     Loss objects
"""
from .losses import LOSS_NAMES, Loss, make_loss
from .penalties import ElasticNet
from .problem import Problem
from .solvers import SOLVERS, SolveResult, SolverState, load_state, save_state, solve

__version__ = "0.1.0"

__all__ = ["solve", "Problem", "SolveResult", "SolverState", "Loss", "make_loss",
           "LOSS_NAMES", "ElasticNet", "SOLVERS", "load_state", "save_state",
           "__version__"]
