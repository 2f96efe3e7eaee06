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

from .interrupts import import_atomically

__all__ = ["lazy_attr", "lazy_module"]


def lazy_module(module: str):
    """Import and return the primaldual module named ``module`` (a literal string),
    all or nothing (a Ctrl-C during the import is raised once it has finished:
    :func:`primaldual._util.interrupts.import_atomically`)."""
    if module != "primaldual" and not module.startswith("primaldual."):
        raise ValueError(f"lazy_module imports primaldual modules only, not {module!r}")
    return import_atomically(module)


def lazy_attr(module: str, name: str):
    """``getattr(lazy_module(module), name)``: one name of a primaldual module."""
    return getattr(lazy_module(module), name)
