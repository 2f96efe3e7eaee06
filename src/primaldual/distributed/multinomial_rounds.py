"""Multinomial Newton-CG on Dask: the partitions' passes.

The rows are split into ``K`` contiguous partitions, each held by a
:class:`~primaldual.distributed.worker.PartitionActor` on one worker as a
:class:`~primaldual.distributed.multinomial_block.MultinomialBlock`, and the
driver (:class:`~primaldual.solvers.multinomial.MultinomialNewton`) runs on
the client.  Per Newton step every worker returns its part of ``f`` and of
``grad f`` (a d x K matrix and a scalar), per CG step its part of a
Hessian-vector product (d x K), per line-search trial one scalar; a
certificate gathers ``alpha_k = Y_k - P_k`` and one scalar.  The client adds
the parts in partition order, so the run equals the in-process run with
``n_partitions=K``.  A sparse partition works on the columns its rows use
and is sent and returns only their rows of the ``d x K`` matrices.

Recovery: a worker's state is its rows plus the scores of the current point
and of a pending trial point.  When a call fails because a worker died, the
lost partitions' actors are re-created on live workers, their scores are
recomputed from the client's ``coef`` (``X coef``: equal to the kept scores
up to rounding) and the pending line-search direction is sent again; then
the call is made again on every partition (every call is idempotent).
"""
from __future__ import annotations

import numpy as np

from .partition_set import PartitionSet
from .multiclass_calls import ClassColumnsCalls, place_classes
from .multinomial_block import add_hessians, join_starts

__all__ = ["DaskMultinomialData", "place_multiclass"]


def place_multiclass(problem, part_ptr, client, timeout, dense) -> PartitionSet:
    """The actors of an in-memory multinomial problem split at ``part_ptr``
    (:func:`~.multiclass_calls.place_classes`); ``dense``: the partitions
    multiply sparse rows as dense arrays."""
    return place_classes(problem, part_ptr, client, timeout, "configure_classes",
                         bool(dense))


class DaskMultinomialData(ClassColumnsCalls):
    """The rows of a multinomial driver whose partitions are Dask actors (see
    the module docstring).  Same methods as
    :class:`~primaldual.distributed.multinomial_block.BlockMultinomialData`."""

    backend = "dask"
    group = "multinomial"

    def __init__(self, pset: PartitionSet, part_ptr, d, K, max_recoveries):
        super().__init__(pset, part_ptr, d, K, max_recoveries)
        #: the coef each slot holds on the workers, the current slot and the
        #: pending line-search direction (to rebuild a lost partition)
        self._coef = [None, None]
        self._current = 0
        self._direction = None

    def _rebuild(self, parts):
        actors = {k: self.pset.actors[k] for k in parts}
        for slot, coef in enumerate(self._coef):
            if coef is not None:
                self.pset.wait([a.multinomial("evaluate", self._rows(coef, k), slot)
                                for k, a in actors.items()], "multinomial recovery", parts)
        self.pset.wait([a.multinomial("use", self._current) for a in actors.values()],
                       "multinomial recovery", parts)
        if self._direction is not None:
            self.pset.wait([a.multinomial("direction", self._rows(self._direction, k))
                            for k, a in actors.items()], "multinomial recovery", parts)

    def _joined(self, res):
        return sum(ls for (ls, _), in res), self._join([g for (_, g), in res])

    # ---------------------------------------------------------- methods
    def evaluate(self, coef, slot):
        coef = np.array(coef, dtype=np.float64)
        self._coef[slot] = coef
        return self._joined(self._call(
            "evaluate", args_of=lambda k: (self._rows(coef, k), int(slot))))

    def evaluate_step(self, t, slot, coef):
        """The trial point ``coef`` (= the current one plus ``t`` times the
        direction), from the kept scores."""
        self._coef[slot] = np.array(coef, dtype=np.float64)
        return self._joined(self._call("evaluate_step", float(t), int(slot)))

    def use(self, slot):
        self._current = int(slot)
        self._direction = None
        self._call("use", int(slot))

    def direction(self, s):
        self._direction = np.ascontiguousarray(s, dtype=np.float64)
        self._call("direction", args_of=lambda k: (self._rows(self._direction, k),))

    def line_loss(self, t):
        return sum(part for part, in self._call("line_losses", float(t)))

    def hess_vec(self, D):
        D = np.ascontiguousarray(D, dtype=np.float64)
        return self._join([hv for hv, in self._call(
            "hess_vec", args_of=lambda k: (self._rows(D, k),))])

    def diagonal(self):
        return self._join([m for m, in self._call("diagonal")])

    def hessian(self):
        return add_hessians([H for H, in self._call("hessian")], self.columns, self.d,
                            self.K)

    def entropy(self):
        return sum(e for e, in self._call("entropy"))

    def dual(self):
        return np.concatenate([a for a, in self._call("dual")])

    def dual_start(self, coef, lam, W, epochs, sigma, seed):
        """A CoCoA+ round of every partition at once (one call)."""
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        return join_starts([part for part, in self._call(
            "dual_start", args_of=lambda k: (self._rows(coef, k), float(lam), float(W),
                                             int(epochs), float(sigma), int(seed)))],
            self.columns, (self.d, self.K))

    def scores(self):
        """Not gathered: the scores stay on the workers."""
        return None
