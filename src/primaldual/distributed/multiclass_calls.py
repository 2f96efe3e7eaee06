"""What the Dask drivers of the multiclass models share: placing an in-memory
multiclass problem's partitions, and the calls of a driver whose partitions
work on the columns their rows use (each is sent, and returns, only those
rows of the ``d x K`` matrices; the client adds the parts in partition order)."""
from __future__ import annotations

import numpy as np

from .partition_set import PartitionSet, array_sources
from .multinomial_block import add_in_order
from .recovering_calls import RecoveringCalls

__all__ = ["place_classes", "ClassColumnsCalls"]


def place_classes(problem, part_ptr, client, timeout, method, *config) -> PartitionSet:
    """The actors of an in-memory multiclass problem split at ``part_ptr``:
    each partition's rows, class indices and weights are sent once, straight
    to its worker, and configured by the actor's ``method(d, classes,
    *config)``."""
    pset = PartitionSet(client, array_sources(problem.X, problem.y, problem.sample_weight,
                                              part_ptr), timeout)
    pset.configure(problem.d, np.arange(problem.K, dtype=np.float64), *config,
                   method=method)
    return pset


class ClassColumnsCalls(RecoveringCalls):
    """:class:`RecoveringCalls` of a multiclass driver: ``d`` features, ``K``
    classes and each partition's columns (None: all), read once."""

    def __init__(self, pset: PartitionSet, part_ptr, d, K, max_recoveries):
        super().__init__(pset, max_recoveries)
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.d, self.K = int(d), int(K)
        self.columns = [cols for cols, in self._call("columns")]

    def _rows(self, A, k):
        """The rows of the (d, K) array ``A`` that partition ``k`` uses."""
        cols = self.columns[k]
        return A if cols is None else np.ascontiguousarray(A[cols])

    def _join(self, parts):
        """The partitions' (d_k, K) parts added in partition order into (d, K)."""
        return add_in_order(parts, self.columns, (self.d, self.K))
