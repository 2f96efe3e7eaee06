"""The L1 / elastic-net proximal Newton method on Dask: the partitions' passes.

The rows are split into ``K`` contiguous partitions, each held by a
:class:`~primaldual.distributed.worker.PartitionActor` on one worker as a
:class:`~primaldual.distributed.l1_block.L1Block` (built from the actor's
rows on first use), and the driver
(:class:`~primaldual.solvers.sparse.partitioned.L1NewtonSolver`) runs on the
client.  A Newton step makes four calls: the loss sum and ``v = -X^T gu`` at
the new point (``d_k`` numbers per partition), the conjugate sum and
``alpha_k`` of the certificate (which makes the new point current), the working set's Gram matrix (its upper
triangle, at most ``|ws| (|ws| + 1) / 2`` numbers per partition) and the loss sums at several trial steps
(one call for eight halvings).  The client adds the parts in partition
order, so the run equals the in-process run with ``n_partitions=K``.

Recovery: a worker's state is its rows plus the margins of the current point
and of a pending trial, and the last direction ``X_ws d``.  When a call fails
because a worker died, the lost partitions' actors are re-created on live
workers, their margins recomputed from the client's ``w`` (equal to the kept
ones up to rounding) and the pending direction sent again; then the call is
made again on every partition (every call is idempotent).
"""
from __future__ import annotations

import numpy as np

from .partition_set import PartitionSet
from .l1_block import add_grams, add_scalars, add_vectors
from .recovering_calls import RecoveringCalls

__all__ = ["DaskL1Data"]


def _nbytes(obj) -> int:
    """The bytes of the arrays in ``obj`` (nested tuples and lists), 8 a scalar."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    return 8


class DaskL1Data(RecoveringCalls):
    """The rows of the L1 driver whose partitions are Dask actors (see the
    module docstring).  Same methods as
    :class:`~primaldual.distributed.l1_block.BlockL1Data`."""

    backend = "dask"
    group = "l1"

    def __init__(self, pset: PartitionSet, part_ptr, d, max_recoveries):
        super().__init__(pset, max_recoveries)
        #: bytes sent to the workers and returned to the client by the calls
        self.sent = self.received = 0
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.d = int(d)
        #: each partition's columns (None: all), read once
        self.columns = [cols for cols, in self._call("columns")]
        #: the point each slot holds on the workers (sparse: columns, values),
        #: the current slot and the pending direction (to rebuild a lost partition)
        self._points = [None, None]
        self._current = 0
        self._direction = None

    def _call(self, method, *args, args_of=None):
        out = super()._call(method, *args, args_of=args_of)
        self.sent += _nbytes(args) * len(out)
        self.received += _nbytes(out)
        return out

    def info(self):
        return {**super().info(), "bytes_sent": int(self.sent),
                "bytes_received": int(self.received)}

    def _rebuild(self, parts):
        actors = {k: self.pset.actors[k] for k in parts}
        for slot, point in enumerate(self._points):
            if point is not None:
                self.pset.wait([a.l1("evaluate", *point, slot) for a in actors.values()],
                               "l1 recovery", parts)
        self.pset.wait([a.l1("use", self._current) for a in actors.values()],
                       "l1 recovery", parts)
        if self._direction is not None:
            self.pset.wait([a.l1("direction", *self._direction) for a in actors.values()],
                           "l1 recovery", parts)

    def _vec(self, res):
        return (add_scalars([ls for (ls, _), in res]),
                add_vectors([v for (_, v), in res], self.columns, self.d))

    # ---------------------------------------------------------- methods
    def column_stats(self):
        res = self._call("column_stats")
        return (add_vectors([c for (c, _), in res], self.columns, self.d),
                add_vectors([s for (_, s), in res], self.columns, self.d))

    def evaluate(self, idx, vals, slot):
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        vals = np.ascontiguousarray(vals, dtype=np.float64)
        self._points[slot] = (idx, vals)
        return self._vec(self._call("evaluate", idx, vals, int(slot)))

    def step(self, t, slot, point=None):
        """The trial ``w + t d`` into ``slot``; ``point`` its sparse form
        ``(columns, values)``, kept to rebuild a lost partition."""
        self._points[slot] = point
        return self._vec(self._call("step", float(t), int(slot)))

    def dual(self, scale, slot):
        """The certificate's sums at ``slot``, which becomes the current point."""
        self._current = int(slot)
        self._direction = None
        res = self._call("dual", float(scale), int(slot))
        return (add_scalars([c for (c, _), in res]),
                np.concatenate([a for (_, a), in res]))

    def gram(self, ws):
        ws = np.ascontiguousarray(ws, dtype=np.int64)
        return add_grams([part for part, in self._call("gram", ws)], ws.shape[0])

    def line_losses(self, ws, delta, ts):
        self._direction = (np.ascontiguousarray(ws, dtype=np.int64),
                           np.ascontiguousarray(delta, dtype=np.float64))
        total = np.zeros(len(ts))
        for part, in self._call("line_losses", *self._direction,
                                np.asarray(ts, dtype=np.float64)):
            total += part
        return total

    def margins(self):
        """Not gathered: the margins stay on the workers."""
        return None
