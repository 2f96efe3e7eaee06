"""Dask client helpers used on both sides of the solver/engine boundary.

Nothing here imports Dask at module level: ``check_client`` imports
``distributed`` when it is called (an optional extra, see ``_extras.py``),
and ``client_workers`` only calls methods of the client it is given.
:class:`WorkerLostError` lives here, below the engines that raise it, so that
a client whose cluster or connection was closed raises it too
(:class:`ClientClosedError`), wherever a solver first touches the client.
"""
from __future__ import annotations

import inspect

__all__ = ["ClientClosedError", "WorkerLostError", "check_client", "client_workers",
           "ring_workers"]


class WorkerLostError(RuntimeError):
    """Workers were lost more often than ``max_recoveries`` allows, or none is left."""


class ClientClosedError(WorkerLostError):
    """The Dask client (or the cluster it was connected to) is closed: no worker
    can be reached.  A :class:`WorkerLostError`, as docs/distributed.md promises."""


def _check_open(client, info=None):
    """Raise :class:`ClientClosedError` when ``client`` cannot reach a scheduler."""
    status = getattr(client, "status", "running")
    if status in ("closing", "closed") or (info is not None and "workers" not in info):
        where = getattr(client, "scheduler", None)
        where = getattr(where, "address", None) or "its scheduler"
        raise ClientClosedError(
            f"the Dask client {client!r} is {status if status != 'running' else 'not connected'}"
            f" (its cluster or connection to {where} was closed), so no worker can run "
            f"this fit; create a new Client (and cluster) and pass it as client=")


def check_client(client):
    """Raise ValueError unless ``client`` is a ``dask.distributed.Client``."""
    try:
        from distributed import Client       # optional extra: stays lazy
    except ImportError:                       # pragma: no cover - dask is a dependency
        raise ValueError("client= needs dask.distributed installed") from None
    if not isinstance(client, Client):
        raise ValueError(f"client must be a dask.distributed.Client, got "
                         f"{type(client).__name__}")
    _check_open(client)


def client_workers(client):
    """The sorted addresses of the client's workers (all of them, also with
    schedulers that page ``scheduler_info``); :class:`ClientClosedError` when the
    client or its cluster is closed."""
    _check_open(client)
    info = _identity(client)
    _check_open(client, info)
    return sorted(info["workers"])


def _identity(client):
    """The scheduler's identity with every worker, fetched for this call.

    Not ``client.scheduler_info()``'s return: that is the client's shared
    cached copy, which the client's own periodic refresh (``n_workers=0``, no
    per-worker entries) can overwrite between the fetch and the read, so that
    on a loaded machine every worker seemed gone."""
    if _takes_n(client) and not getattr(client, "asynchronous", False):
        identity = getattr(getattr(client, "scheduler", None), "identity", None)
        if identity is not None:
            try:
                return dict(client.sync(identity, n_workers=-1))
            except OSError:          # the connection is gone: named by _check_open
                pass
        return client.scheduler_info(n_workers=-1)
    return client.scheduler_info()


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
