"""The one way a primaldual module imports another primaldual module lazily.

A module that must not pay for an import at load time (the command line's
``--help``, ``import primaldual``) names what it needs by string here. The
strings are literal, so ``tests/test_layers.py`` reads every call with ``ast``
and checks it against the import layers exactly like a module-level import.

    from primaldual._util.lazy import lazy_attr, lazy_module
    solve = lazy_attr("primaldual.solvers", "solve")   # imported on this call

Only primaldual modules go through here; optional third-party packages go
through :func:`primaldual._extras.require`.
"""
from __future__ import annotations

import importlib
import sys
import threading

from .interrupts import forget_new_modules, sigint_held

__all__ = ["lazy_attr", "lazy_module"]

_IMPORT_LOCK = threading.RLock()


def lazy_module(module: str):
    """Import and return the primaldual module named ``module`` (a literal string),
    all or nothing: in the main thread a Ctrl-C during the import is held back
    and raised as KeyboardInterrupt once the import has finished, and an import
    that fails takes every Python module it added out of ``sys.modules`` again
    (:mod:`primaldual._util.interrupts`), so that a Ctrl-C while Numba loads
    leaves no half-initialized module behind."""
    if module != "primaldual" and not module.startswith("primaldual."):
        raise ValueError(f"lazy_module imports primaldual modules only, not {module!r}")
    if module in sys.modules:
        return sys.modules[module]
    with _IMPORT_LOCK:
        before = set(sys.modules)
        try:
            with sigint_held() as held:
                loaded = importlib.import_module(module)
        except BaseException:
            forget_new_modules(before)
            raise
        if held.is_set():
            raise KeyboardInterrupt
        return loaded


def lazy_attr(module: str, name: str):
    """``getattr(lazy_module(module), name)``: one name of a primaldual module."""
    return getattr(lazy_module(module), name)
