"""Sparse models: L1 and elastic-net problems with ``lam >= 0`` (docs/sparse-models.md).

- :mod:`.solver`: :class:`SparseCDSolver` (``solver="l1cd"``), working-set
  proximal Newton / coordinate descent with Gap Safe screening;
- :mod:`.screening`: the Gap Safe rule shared by the solver and the L1 path;
- the compiled steps are in :mod:`primaldual.kernels.l1cd`.
"""
from .screening import gap_safe_mask, gap_safe_radius, l1_dual_scale
from .solver import SparseCDOptions, SparseCDSolver, csc_columns

__all__ = ["SparseCDSolver", "SparseCDOptions", "csc_columns", "gap_safe_mask",
           "gap_safe_radius", "l1_dual_scale"]
