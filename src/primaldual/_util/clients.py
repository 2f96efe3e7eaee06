"""Dask client helpers used on both sides of the solver/engine boundary.

Nothing here imports Dask at module level: ``check_client`` imports
``distributed`` when it is called (an optional extra, see ``_extras.py``),
and ``client_workers`` only calls methods of the client it is given.
"""
from __future__ import annotations

import inspect

__all__ = ["check_client", "client_workers", "ring_workers"]


def check_client(client):
    """Raise ValueError unless ``client`` is a ``dask.distributed.Client``."""
    try:
        from distributed import Client       # optional extra: stays lazy
    except ImportError:                       # pragma: no cover - dask is a dependency
        raise ValueError("client= needs dask.distributed installed") from None
    if not isinstance(client, Client):
        raise ValueError(f"client must be a dask.distributed.Client, got "
                         f"{type(client).__name__}")


def client_workers(client):
    """The sorted addresses of the client's workers (all of them, also with
    schedulers that page ``scheduler_info``)."""
    return sorted(client.scheduler_info(n_workers=-1)["workers"]) if _takes_n(client) \
        else sorted(client.scheduler_info()["workers"])


def ring_workers(opts, in_process):
    """The number of parts of a solver with ring options (DSO, PSGD):
    ``opts.n_workers`` when given, else ``in_process`` without a client, else
    the number of the client's workers."""
    if opts.n_workers is not None:
        return opts.n_workers
    return in_process if opts.client is None else max(1, len(client_workers(opts.client)))


def _takes_n(client):
    try:
        return "n_workers" in inspect.signature(client.scheduler_info).parameters
    except (TypeError, ValueError):
        return False
