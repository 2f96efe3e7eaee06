"""Sparse models: L1 and elastic-net problems with ``lam >= 0`` (docs/sparse-models.md).

- :mod:`.solver`: :class:`SparseCDSolver` (``solver="l1cd"``), working-set
  proximal Newton / coordinate descent with Gap Safe screening;
- :mod:`.screening`: the Gap Safe rule shared by the solver and the L1 path;
- :mod:`.partitioned`: :class:`L1NewtonSolver` (``solver="l1_newton"``), the
  proximal Newton step on working sets with its sums over rows on row
  partitions, in process or on Dask workers;
- :mod:`.path`: :func:`sparse_path`, an L1 path with its set-up shared by every
  point and screened columns bounded instead of read;
- :mod:`.barrier`: :class:`L1BarrierSolver` (``solver="l1_ipm"``), a primal
  log-barrier interior-point method on a working set, for the weakly penalized
  models on which coordinate descent crawls;
- the compiled steps are in :mod:`primaldual.kernels.l1cd`.
"""
from .screening import gap_safe_mask, gap_safe_radius, l1_dual_scale
from .solver import SparseCDOptions, SparseCDSolver, csc_columns
from .path import PathSparseCD, sparse_path
from .partitioned import L1NewtonOptions, L1NewtonSolver
from .barrier import L1BarrierOptions, L1BarrierSolver

__all__ = ["SparseCDSolver", "SparseCDOptions", "csc_columns", "gap_safe_mask",
           "gap_safe_radius", "l1_dual_scale", "PathSparseCD", "sparse_path",
           "L1NewtonSolver", "L1NewtonOptions", "L1BarrierSolver", "L1BarrierOptions"]
