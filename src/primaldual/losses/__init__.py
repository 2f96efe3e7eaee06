"""Losses: one module per scalar loss, a registry, and the :class:`Loss` object.

* ``hinge``, ``smooth_hinge``, ``squared_hinge``, ``logistic``, ``squared``,
  ``absolute``, ``epsilon_insensitive``, ``squared_epsilon_insensitive``:
  each module holds its value,
  derivative, conjugate, dual box, exact SDCA step, Hessian weight, constants
  and capability flags (docs/conventions.md §2 has the table);
* :mod:`.registry` lists them and states the contract a loss module meets;
* :mod:`.dispatch` is the one compiled point the kernels call them through;
* :mod:`.loss` holds :class:`Loss`, :func:`make_loss` and
  :func:`check_capabilities`.

Importing the package loads nothing else: :mod:`.registry` (the names) stays
free of Numba for the command line, and the names below load :mod:`.loss` on
first use.
"""
from .._util.lazy import lazy_module

__all__ = ["Loss", "make_loss", "LOSS_NAMES", "check_capabilities"]


def __getattr__(name):
    if name in __all__:
        return getattr(lazy_module("primaldual.losses.loss"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
