"""SDCA's kernels, one module per concern:

* :mod:`.epoch`   the coordinate steps over a slice of a pass (:func:`sdca_epoch`),
  Modified-SGD's first epoch and the output average;
* :mod:`.passes`  the pass planner (:func:`next_pass`, its named state
  :class:`PassPlan`) and the serial in-kernel loop of passes (:func:`sdca_passes`);
* :mod:`.copies`  a thread's copy of the dual image and its sync (threaded passes);
* :mod:`.prox`    the exact elastic-net (prox-SDCA) coordinate step.

The names below are re-exported for the drivers (solvers/sdca.py, CoCoA+'s
local solver, ASDCA, DSO's SDCA warm start) and the threaded block
(blocks/sdca_threads.py).  The losses come in through
:mod:`primaldual.losses.dispatch`; the spin barriers and atomics are shared
with mini-batch SDCA (:mod:`primaldual.kernels.threadsync`).
"""
from .copies import (CLOCK_STRIDE, DENSE_REFRESH, ThreadCopy, others_synced,  # noqa: F401
                     renumber, start_copy, sync_copy, sync_hot)
from .epoch import (PF_ROW, PF_SCALAR, STATUS_NEED_UNIFORMS, STATUS_NONFINITE,  # noqa: F401
                    STATUS_OK, STATUS_SNAPSHOT, Averaging, EpochResult, ProxWork, RowsView,
                    SDCAState, Shrinking, StepSpec, flush_average,
                    modified_sgd_epoch, sdca_epoch)
from .passes import (ORDER_CYCLIC, ORDER_PERMUTATION, ORDER_UNIFORM,  # noqa: F401
                     Passes, PassPlan, new_plan, next_pass, plan_from_floats,
                     record_violations, sdca_passes)
from .prox import prox_dual_step, prox_work_arrays  # noqa: F401
