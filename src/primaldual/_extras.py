"""Optional dependencies: which extra installs each one, and a clear error when
it is missing.

The library itself (``solve``, ``Problem``, the estimators, model files, data
sets, the command line's ``fit``, ``predict``, ``cv`` and ``info``) needs only
numpy, scipy, numba, scikit-learn and joblib.  Dask, matplotlib and tqdm are
installed by the extras ``dask``, ``plot`` and ``progress``
(docs/conventions.md §8); a feature that needs one of them imports it through
:func:`require`, which names the extra when the package is missing.
"""
from __future__ import annotations

import importlib

__all__ = ["EXTRAS", "MissingExtraError", "require", "have", "NullBar"]

#: top-level module -> (extra, the distribution that extra installs)
EXTRAS = {
    "dask": ("dask", "dask[distributed]"),
    "distributed": ("dask", "dask[distributed]"),
    "matplotlib": ("plot", "matplotlib"),
    "tqdm": ("progress", "tqdm"),
}


class MissingExtraError(ImportError):
    """An optional package is not installed; the message names the extra."""


def require(module: str, feature: str):
    """Import and return ``module``; a :class:`MissingExtraError` naming the extra
    that installs it when it is missing.

    ``feature`` says what needs it (``"--plot"``, ``"progress=True"``, ...).
    An ImportError raised for another module (a broken installation of the
    optional package itself) propagates unchanged.
    """
    top = module.partition(".")[0]
    if top not in EXTRAS:
        raise KeyError(f"{top!r} is not an optional dependency of primaldual")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing != top:
            raise
        extra, dist = EXTRAS[top]
        raise MissingExtraError(
            f"{feature} needs {dist}, which is not installed; install it with "
            f"pip install 'primaldual[{extra}]'") from exc


def have(module: str) -> bool:
    """True when the optional ``module`` imports (used where a feature is chosen
    automatically, e.g. a progress bar shown only on a terminal)."""
    try:
        require(module, module)
    except MissingExtraError:
        return False
    return True


class NullBar:
    """Stands in for a disabled tqdm bar when tqdm is not installed."""

    def update(self, n=1):
        pass

    def set_postfix_str(self, s="", refresh=True):
        pass

    def set_postfix(self, *args, **kwargs):
        pass

    def close(self):
        pass
