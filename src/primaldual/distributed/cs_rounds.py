"""CoCoA+ over the Crammer-Singer dual on Dask: the partitions' rounds.

The rows are split into ``K`` contiguous partitions, each held by a
:class:`~primaldual.distributed.worker.PartitionActor` on one worker as a
:class:`~primaldual.distributed.cs_block.CSBlock` with its block of
``alpha``, which stays on the worker between rounds (the data and the dual
pinned to the workers, as the Dask trainers of XGBoost and LightGBM do).
The driver (:class:`~primaldual.solvers.crammer_singer_cocoa.CrammerSingerCoCoA`)
runs on the client: per round every worker gets the global ``coef`` (on its
columns) and returns its change ``dcoef_k``; a check gathers the parts of
``coef(alpha)``, the ``alpha`` blocks and one scalar, then one loss sum per
partition at the joined ``coef``.  The client adds the parts in partition
order, so the run equals the in-process run with ``n_partitions=K``.

Recovery: the client keeps the ``alpha`` of the last check.  When a call
fails because a worker died, the lost partitions' actors are re-created on
live workers with that ``alpha``, ``coef`` is joined again from every
partition's ``X_k^T C_k alpha_k`` (the surviving blocks may have moved in
the failed round), and the call is made again from it: ``coef = coef(alpha)``
holds and the certificate stays exact (the lost partitions' progress since
the last check is redone).
"""
from __future__ import annotations

import numpy as np

from ..kernels.status import STATUS_OK
from .partition_set import PartitionSet
from .multiclass_calls import ClassColumnsCalls, place_classes

__all__ = ["DaskCSData", "place_crammer_singer"]


def place_crammer_singer(problem, part_ptr, client, timeout) -> PartitionSet:
    """The actors of an in-memory Crammer-Singer problem split at ``part_ptr``
    (:func:`~.multiclass_calls.place_classes`)."""
    return place_classes(problem, part_ptr, client, timeout, "configure_cs", None)


class DaskCSData(ClassColumnsCalls):
    """The partitions of a Crammer-Singer CoCoA+ driver as Dask actors (see
    the module docstring).  Same methods as
    :class:`~primaldual.distributed.cs_block.BlockCSData`."""

    backend = "dask"
    group = "crammer_singer"

    def __init__(self, pset: PartitionSet, part_ptr, d, K, max_recoveries):
        super().__init__(pset, part_ptr, d, K, max_recoveries)
        self.coef = np.zeros((self.d, self.K))
        #: the alpha blocks of the last check (None: the workers' cold start)
        self._alpha = None
        #: lam and W of the fit (known once a round or check is made)
        self._consts = None

    def _blocks(self, alpha):
        return np.split(np.asarray(alpha, dtype=np.float64), self.part_ptr[1:-1])

    def _rebuild(self, parts):
        actors = {k: self.pset.actors[k] for k in parts}
        if self._alpha is not None:
            self.pset.wait([a.crammer_singer("set_alpha", [self._alpha[k]])
                            for k, a in actors.items()], "crammer_singer recovery", parts)
        if self._consts is not None:
            res = self.pset.wait([a.crammer_singer("dual_parts", *self._consts)
                                  for a in self.pset.actors], "crammer_singer recovery")
            self.coef = self._join([part for (part, _, _), in res])

    # ---------------------------------------------------------- methods
    def round(self, lam, W, sigma, epochs, seed, sequential, revisit, shrinking):
        self._consts = (float(lam), float(W))
        res = self._call("round", args_of=lambda k: (
            self._rows(self.coef, k), float(lam), float(W), float(sigma), int(epochs),
            int(seed), bool(sequential), float(revisit), bool(shrinking)))
        parts = [part for part, in res]
        reads = sum(r for _, _, r in parts)
        for status, _, _ in parts:
            if status != STATUS_OK:
                return status, reads
        self.coef = self.coef + self._join([dc for _, dc, _ in parts])
        return STATUS_OK, reads

    def dual(self, lam, W):
        self._consts = (float(lam), float(W))
        parts = [part for part, in self._call("dual_parts", float(lam), float(W))]
        self.coef = self._join([part for part, _, _ in parts])
        self._alpha = [a for _, a, _ in parts]
        return np.concatenate(self._alpha), sum(cj for _, _, cj in parts)

    def loss(self):
        return sum(v for v, in self._call(
            "losses", args_of=lambda k: (self._rows(self.coef, k),)))

    def set_alpha(self, alpha, lam, W):
        self._alpha = self._blocks(alpha)
        self._call("set_alpha", args_of=lambda k: ([self._alpha[k]],))
        self.dual(lam, W)
