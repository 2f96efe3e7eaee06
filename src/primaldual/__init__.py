"""primaldual: certified stochastic primal-dual solvers for regularized linear models.

Public API (docs/conventions.md §4-§5)::

    primaldual.solve(X, y, loss=..., lam=..., solver=...)  -> SolveResult
    primaldual.Problem(X, y, loss=..., lam=...)            objectives and gap
    primaldual.LinearClassifier / LinearRegressor          scikit-learn estimators
    primaldual.path(X, y, ...)                             regularization path
    primaldual.save_model / load_model                     .npz model files
    primaldual.datasets                                    LIBSVM registry, synthetic sets
"""
from ._util import lazy as _lazy

__version__ = "0.1.0"


def _solvers(name):
    return _lazy.lazy_attr("primaldual.solvers", name)


def _losses(name):
    return _lazy.lazy_attr("primaldual.losses", name)


def _estimators(name):
    return _lazy.lazy_attr("primaldual.estimators", name)


def _regpath(name):
    return _lazy.lazy_attr("primaldual.regpath", name)


def _estimators_cv(name):
    return _lazy.lazy_attr("primaldual.estimators_cv", name)


def _model_io(name):
    return _lazy.lazy_attr("primaldual.model_io", name)


# Every public name is loaded on first use, so that ``import primaldual`` costs
# next to nothing (numpy, scipy, numba and the compiled kernels load with the
# first name that needs them; scikit-learn only with the estimators).
_LAZY = {
    "solve": _solvers,
    "SOLVERS": _solvers,
    "SolveResult": _solvers,
    "SolverState": _solvers,
    "load_state": _solvers,
    "save_state": _solvers,
    "Problem": lambda name: _lazy.lazy_attr("primaldual.problem", name),
    "Loss": _losses,
    "make_loss": _losses,
    "LOSS_NAMES": _losses,
    "ElasticNet": lambda name: _lazy.lazy_attr("primaldual.penalties", name),
    "LinearClassifier": _estimators,
    "LinearRegressor": _estimators,
    "LinearClassifierCV": _estimators_cv,
    "LinearRegressorCV": _estimators_cv,
    "path": _regpath,
    "lam_max": _regpath,
    "save_model": _model_io,
    "load_model": _model_io,
    "datasets": lambda name: _lazy.lazy_module("primaldual.datasets"),
}


def __getattr__(name):
    if name in _LAZY:
        value = _LAZY[name](name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'primaldual' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["__version__", *_LAZY]
