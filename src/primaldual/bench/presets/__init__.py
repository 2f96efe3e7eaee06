"""Named benchmark presets, one module per preset, found automatically.

A preset module defines

``NAME``          the name used on the command line (``--preset NAME``)
``DESCRIPTION``   one line shown by ``primaldual bench --list``
``build(quick: bool) -> BenchConfig``   the experiments (:mod:`..config`):
                  each a grid datasets x losses x lams x solvers (x seeds)
                  with its stopping rule and the standard plots it wants;
                  ``quick=True`` gives a reduced version for CI and tests

and optionally

``figures(result, out_dir) -> list of paths``   figures of its own (e.g. a
                  paper's figure layout), drawn from the finished
                  :class:`~primaldual.bench.harness.BenchResult`.

Adding a preset is adding a module to this package; nothing else changes.
"""
from __future__ import annotations

import importlib
import pkgutil

__all__ = ["presets", "get_preset"]


def presets() -> dict:
    """{NAME: module} of every preset module in this package."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        name = getattr(mod, "NAME", None)
        if not isinstance(name, str) or not callable(getattr(mod, "build", None)):
            raise ValueError(f"preset module {mod.__name__} must define NAME (str) and "
                             f"build(quick) -> BenchConfig")
        if name in found:
            raise ValueError(f"two preset modules use NAME={name!r}: "
                             f"{found[name].__name__} and {mod.__name__}")
        found[name] = mod
    return found


def get_preset(name):
    """The preset module called ``name`` (a ValueError lists the known ones)."""
    found = presets()
    if name not in found:
        raise ValueError(f"unknown preset {name!r}; available: {', '.join(sorted(found))}")
    return found[name]
