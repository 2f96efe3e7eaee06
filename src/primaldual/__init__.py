"""primaldual: certified stochastic primal-dual solvers for regularized linear models.

Public API (docs/conventions.md §4-§5)::

    primaldual.solve(X, y, loss=..., lam=..., solver=...)  -> SolveResult
    primaldual.Problem(X, y, loss=..., lam=...)            objectives and gap
    primaldual.LinearClassifier / LinearRegressor          scikit-learn estimators
    primaldual.path(X, y, ...)                             regularization path
    primaldual.save_model / load_model                     .npz model files
    primaldual.datasets                                    LIBSVM registry, synthetic sets
"""
import importlib

from .losses import LOSS_NAMES, Loss, make_loss
from .penalties import ElasticNet
from .problem import Problem
from .solvers import SOLVERS, SolveResult, SolverState, load_state, save_state, solve
# the solvers' engines: primaldual.distributed hands them over on import
# (solvers <- distributed; see primaldual.solvers._rounds)
from . import distributed  # noqa: E402,F401

__version__ = "0.1.0"

# Names served from modules that import heavier dependencies, loaded on first use.
_LAZY = {
    "LinearClassifier": "primaldual.estimators",
    "LinearRegressor": "primaldual.estimators",
    "LinearClassifierCV": "primaldual.regpath",
    "LinearRegressorCV": "primaldual.regpath",
    "path": "primaldual.regpath",
    "lam_max": "primaldual.regpath",
    "save_model": "primaldual.model_io",
    "load_model": "primaldual.model_io",
    "datasets": "primaldual.datasets",
}


def __getattr__(name):
    if name in _LAZY:
        mod = importlib.import_module(_LAZY[name])
        value = mod if mod.__name__.endswith("." + name) else getattr(mod, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'primaldual' has no attribute {name!r}")


__all__ = ["solve", "Problem", "SolveResult", "SolverState", "Loss", "make_loss",
           "LOSS_NAMES", "ElasticNet", "SOLVERS", "load_state", "save_state",
           "__version__", *_LAZY]
