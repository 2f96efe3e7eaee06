"""DSO (Matsushima, Yun, Zhang & Vishwanathan 2014): distributed stochastic
saddle-point optimization over the nonzeros.

- :mod:`.solver`: :class:`DSOSolver`, the serial run of the distributed block
  schedule (the problem, the saddle function and the updates are in its docstring);
- :mod:`.ring`: the same rounds on the Dask ring (:class:`DSORingDriver`);
- :mod:`.saddle`: the dual box, the primal box radius, Theorem 1's saddle gap and
  the default steps;
- the per-block maths shared with the ring's workers lives one layer down, in
  :mod:`primaldual.blocks.dso`, and the compiled updates in :mod:`primaldual.kernels.dso`.
"""
from ...blocks.dso import (BlockLayout, DSOParams, RowPartition, WBlock, build_layout,
                           col_bounds, dso_block, partition_streams, row_bounds, sigma)
from .ring import DSORingDriver
from .saddle import (LOGISTIC_MARGIN, adagrad_a_scale, adagrad_col_factor, adagrad_w_scale,
                     box_min_linear, box_radius, default_eta0, spdc_primal_weight,
                     dual_bounds, saddle_gap)
from .solver import DSOSolver

__all__ = ["DSOSolver", "DSORingDriver", "BlockLayout", "RowPartition", "WBlock",
           "DSOParams", "build_layout", "sigma", "dso_block", "partition_streams",
           "row_bounds", "col_bounds", "dual_bounds", "box_radius", "box_min_linear",
           "saddle_gap", "default_eta0", "adagrad_w_scale", "adagrad_a_scale",
           "adagrad_col_factor", "spdc_primal_weight", "LOGISTIC_MARGIN"]
