"""PSGD's local pass of one part (Zinkevich et al. 2010, Algorithm 3; see
:mod:`primaldual.solvers.psgd` for the method), run by the serial solver and by
the Dask part actor (:mod:`primaldual.distributed.ring`).  Imports only kernels."""
from __future__ import annotations

from ..kernels.sgd import SGDOptions, SGDState, sgd_run
from ..kernels.views import RowsView, StepSpec

__all__ = ["psgd_local_pass"]


def psgd_local_pass(rows, y, grad_w, idx, rng, sampling, U, scale, unorm2, kind, loss_param,
                    lam, t, project):
    """One local pass of a part: ``|I_q|`` SGD steps on the rows ``idx`` of ``rows``
    (:func:`~primaldual.kernels.sgd.sgd_run`), sampled from ``rng`` uniformly with
    replacement or as a permutation.  Shared by the serial solver (global rows,
    ``idx = I_q``) and the Dask part actor (its own rows, ``idx = 0..|I_q|-1``):
    the draws are positions in ``idx``, so both see the same sample sequence.
    Returns ``(steps_done, |I_q|, feature_accesses)``."""
    n = idx.shape[0]
    if sampling == "uniform":
        order = idx[rng.integers(0, n, size=n)]
    else:
        order = rng.permutation(idx)
    res = sgd_run(RowsView(rows.data, rows.indices, rows.indptr, rows.iptr, rows.sqnorm,
                           y, grad_w),
                  StepSpec(kind, loss_param, lam, 0.0, 1.0), SGDOptions(grad_w, bool(project)),
                  SGDState(U, scale, unorm2), order, 0, n, int(t))
    return int(res.pos), int(n), int(res.accesses)
