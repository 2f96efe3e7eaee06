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

__version__ = "0.1.0"

# Every public name is loaded on first use, so that ``import primaldual`` costs
# next to nothing (numpy, scipy, numba and the compiled kernels load with the
# first name that needs them; scikit-learn only with the estimators).
_LAZY = {
    "solve": "primaldual.solvers",
    "SOLVERS": "primaldual.solvers",
    "SolveResult": "primaldual.solvers",
    "SolverState": "primaldual.solvers",
    "load_state": "primaldual.solvers",
    "save_state": "primaldual.solvers",
    "Problem": "primaldual.problem",
    "Loss": "primaldual.losses",
    "make_loss": "primaldual.losses",
    "LOSS_NAMES": "primaldual.losses",
    "ElasticNet": "primaldual.penalties",
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
        # all or nothing: a Ctrl-C while Numba loads leaves no half-imported module
        # (primaldual._util.interrupts.import_atomically; by name, so that
        # ``import primaldual`` itself loads nothing, numpy included)
        atomic = importlib.import_module("primaldual._util.interrupts").import_atomically
        mod = atomic(_LAZY[name])
        value = mod if mod.__name__.endswith("." + name) else getattr(mod, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'primaldual' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["__version__", *_LAZY]
