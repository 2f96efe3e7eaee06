"""DSO (Matsushima, Yun, Zhang & Vishwanathan 2014): distributed stochastic
saddle-point optimization over the nonzeros.  The method in one package,
lowest layer first:

- :mod:`.kernels`: the compiled block updates, the layout sort and the SVRG
  full gradient (layer 0, numba);
- :mod:`.blocks`: the block layout, the schedule ``sigma``, a row partition, a
  column block of ``w`` and the update of one block, run by the serial solver
  and by the ring's actors (layer 1);
- :mod:`.saddle`: the dual box, the primal box radius, Theorem 1's saddle gap
  and the default steps (layer 1);
- :mod:`.ring`: the same rounds on the Dask ring (:class:`DSORingDriver`) and
  the actor of one partition on its worker (layer 3);
- :mod:`.options`: :class:`~.options.DSOOptions` and their documentation;
- :mod:`.restarts`: adaptive restarts, the primal weight and the fallback;
- :mod:`.solver`: :class:`DSOSolver` (the problem, the saddle function and the
  updates are in its docstring; layer 3).
"""
from .blocks import (BlockLayout, DSOParams, RowPartition, WBlock, build_layout,
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
