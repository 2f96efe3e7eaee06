"""Options and helpers shared by the solvers that run on the Dask ring of
:mod:`primaldual.distributed.ring` (dso and psgd)."""
from __future__ import annotations

from .._util.clients import client_workers
from ._options import RingOptions

__all__ = ["RingOptions", "n_dask_workers", "ring_workers"]


def n_dask_workers(client):
    return max(1, len(client_workers(client)))


def ring_workers(opts, in_process):
    """The number of parts: ``opts.n_workers`` when given, else ``in_process``
    without a client, else the client's workers."""
    if opts.n_workers is not None:
        return opts.n_workers
    return in_process if opts.client is None else n_dask_workers(opts.client)
