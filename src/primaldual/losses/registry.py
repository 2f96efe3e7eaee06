"""The registry of the scalar losses and the contract a loss module meets.

A loss is one module (``hinge.py``, ``logistic.py``, ...).  Its Python side:

``NAME``            the name ``make_loss`` and ``solve(loss=...)`` take
``PARAM``           ``None`` or ``(key, default, zero_allowed)``: its one real
                    parameter in ``loss_params`` (``gamma``, ``epsilon``)
``CLASSIFICATION``  labels are -1/+1
``BOX_DUAL``        the dual domain is a box SDCA's shrinking may hold a coordinate at
``BOX_QP_DUAL``     the dual is a quadratic over a bounded box (interior-point solver)
``QUADRATIC_DUAL``  ``-phi*`` is quadratic on its domain (exact summed steps)
``STEP_CACHE``      the SDCA step keeps one float per sample: the module then also
                    defines ``cached_dual_step`` (the step from the cached float)
``smoothness(p)``, ``lipschitz(p)``  constants of ``phi'`` and ``phi`` (None: none)

and its compiled scalar functions (``@scalar``, the parameter first), the
operations of :data:`primaldual.losses.dispatch.OPS`: ``value``, ``derivative``,
``second_derivative`` (a generalized one; 0 for the non-smooth losses),
``box`` (``(lo, hi, in_b)``: the closed dual domain, in ``b = alpha y`` when
``in_b``, else in ``alpha``), ``interior`` (the part of the box the solvers keep
iterates in), ``neg_conjugate`` (``-phi*(-alpha)`` inside the box),
``neg_conjugate_grad``, ``dual_step`` (the exact SDCA coordinate maximizer,
:mod:`primaldual.losses.dispatch`), ``dual_slopes``
(one-sided slopes for shrinking) and ``line_terms`` (slope and curvature of
the dual along a summed step).

This module imports nothing (the command line reads the names without
loading Numba); :mod:`primaldual.losses.dispatch` imports the modules
(``dispatch.BUILTIN``, in this order).  Adding a loss is a new module, its
name in :data:`BUILTIN_NAMES` and in dispatch's one import statement (an
import missing there is an error at import).  A module outside the package works too, given to
:class:`~primaldual.losses.Loss` directly: the kernels are then compiled for
it (:func:`primaldual.losses.dispatch.specialise`).  The multiclass losses,
with a vector dual per sample, are not scalar losses and are not listed here.
"""
from __future__ import annotations

#: the built-in scalar losses, each a module of this package named as the loss;
#: a loss's integer code is its position here
BUILTIN_NAMES = ("hinge", "smooth_hinge", "squared_hinge", "logistic", "squared",
                 "absolute", "epsilon_insensitive", "squared_epsilon_insensitive")

NAMES = BUILTIN_NAMES
CODES = {name: k for k, name in enumerate(BUILTIN_NAMES)}

#: the Python-side attributes every loss module defines
ATTRIBUTES = ("NAME", "PARAM", "CLASSIFICATION", "BOX_DUAL", "BOX_QP_DUAL",
              "QUADRATIC_DUAL", "STEP_CACHE", "smoothness", "lipschitz")
