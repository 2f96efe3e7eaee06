"""Options and helpers shared by the solvers that run on the Dask ring of
:mod:`primaldual.distributed.ring` (dso and psgd)."""
from __future__ import annotations

from dataclasses import fields

from .._util.clients import client_workers
from ._options import RingOptions

__all__ = ["RING_OPTIONS", "RingOptions", "n_dask_workers", "ring_workers"]

#: Dask options of dso and psgd (see docs/distributed.md) and their defaults:
#: the fields of :class:`~primaldual.solvers._options.RingOptions`, the engine's
#: minus ``n_partitions`` (``n_workers`` is the number of partitions); the
#: values are checked when the solver's options object is built
RING_OPTIONS = {f.name: f.default for f in fields(RingOptions)}


def n_dask_workers(client):
    return max(1, len(client_workers(client)))


def ring_workers(opts, in_process):
    """The number of parts: ``opts.n_workers`` when given, else ``in_process``
    without a client, else the client's workers."""
    if opts.n_workers is not None:
        return opts.n_workers
    return in_process if opts.client is None else n_dask_workers(opts.client)
