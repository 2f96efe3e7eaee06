"""Options and helpers shared by the solvers that run on the Dask ring of
:mod:`primaldual.distributed.ring` (dso and psgd)."""
from __future__ import annotations

from .._util.clients import client_workers
from ._base import _positive

__all__ = ["RING_OPTIONS", "check_ring_options", "n_dask_workers"]

#: Dask options of dso and psgd (see docs/distributed.md); the engine's, minus
#: ``n_partitions`` (``n_workers`` is the number of partitions)
RING_OPTIONS = {"client": None, "round_timeout": 120.0, "recovery_every": None,
                "recovery_dir": None, "max_recoveries": 3}


def check_ring_options(o):
    _positive("round_timeout", o["round_timeout"])
    if o["recovery_every"] is not None:
        _positive("recovery_every", o["recovery_every"], integer=True)
    _positive("max_recoveries", o["max_recoveries"], integer=True, allow_zero=True)


def n_dask_workers(client):
    return max(1, len(client_workers(client)))
