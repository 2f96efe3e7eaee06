"""Named benchmark presets, one module per preset, listed in :func:`_modules`.

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

Adding a preset is adding a module to this package and its line to
:func:`_modules` (the modules load when a preset is asked for; a module
missing from the list is an error).
"""
from __future__ import annotations

import pkgutil

from ..._util.lazy import lazy_module

__all__ = ["presets", "get_preset"]


def _modules():
    """Every preset module, imported now."""
    return [lazy_module("primaldual.bench.presets.dso_paper"),
            lazy_module("primaldual.bench.presets.minibatch_paper"),
            lazy_module("primaldual.bench.presets.sdca_paper"),
            lazy_module("primaldual.bench.presets.simba_paper"),
            lazy_module("primaldual.bench.presets.spdc_paper")]


def presets() -> dict:
    """{NAME: module} of every preset module in this package."""
    found = {}
    mods = _modules()
    listed = {m.__name__.rpartition(".")[2] for m in mods}
    unlisted = sorted(info.name for info in pkgutil.iter_modules(__path__)
                      if not info.name.startswith("_") and info.name not in listed)
    if unlisted:
        raise ValueError(f"preset modules {unlisted} are not listed in "
                         f"primaldual.bench.presets._modules")
    for mod in mods:
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
