"""Losses: one module per scalar loss, a registry, and the :class:`Loss` object.

* ``hinge``, ``smooth_hinge``, ``squared_hinge``, ``logistic``, ``squared``,
  ``absolute``, ``epsilon_insensitive``: each module holds its value,
  derivative, conjugate, dual box, exact SDCA step, Hessian weight, constants
  and capability flags (docs/conventions.md §2 has the table);
* :mod:`.registry` lists them and states the contract a loss module meets;
* :mod:`.dispatch` is the one compiled point the kernels call them through;
* :mod:`.loss` holds :class:`Loss`, :func:`make_loss` and
  :func:`check_capabilities`.
"""
from .loss import LOSS_NAMES, Loss, check_capabilities, make_loss

__all__ = ["Loss", "make_loss", "LOSS_NAMES", "check_capabilities"]
