"""Distributed truncated Newton-CG on Dask: the partitions' passes.

MPI-LIBLINEAR's scheme (Zhuang, Chin, Juan & Lin, "Distributed Newton methods
for regularized logistic regression", PAKDD 2015): the rows are split into
``K`` instance-wise partitions, each on one worker, and the driver
(:class:`~primaldual.solvers.newton.NewtonSolver`, the serial solver's own
trust-region / line-search logic) runs on the client.  Per Newton iteration
every worker evaluates its part of ``f``, ``grad f`` and the curvatures
``D_k`` at the trial point (one reduction of a ``d``-vector and a scalar);
per CG step it returns ``X_k^T D_k X_k v`` (one reduction of a
``d``-vector); a line-search evaluation is one reduction of two scalars; a
certificate gathers ``alpha_k = -phi'(X_k w)`` and one scalar per worker.
The work on a partition is :class:`~primaldual.distributed.newton_block.NewtonBlock`,
the very code of the in-process run, and the client adds the parts in
partition order, so Dask and in-process runs with the same partitions give
the same iterates.

Recovery: a worker's state is its rows plus the margins and curvatures at
the current point and at the pending trial point, both functions of ``w``
that the client holds.  When a call fails because a worker died, the lost
partitions' actors are re-created on live workers (re-reading their part
files or re-sending their rows, as the CoCoA+ engine does), they recompute
both slots from the client's ``w``s, and the call is made again on every
partition.  Every call is idempotent, so the fit continues exactly as an
uninterrupted one.
"""
from __future__ import annotations

import time

import numpy as np

from .newton_block import (add_pairs, add_parts, average_directions, join_duals,
                           join_local_sdca, weighted_mean)
from .block import contiguous_partition
from .partition_set import PartitionSet, _Lost, place_problem
from .recovering_calls import RecoveringCalls

__all__ = ["DaskNewtonData", "newton_engine"]


class DaskNewtonData(RecoveringCalls):
    """The data of a Newton driver whose partitions are Dask actors (see the
    module docstring).  Same methods as
    :class:`~primaldual.distributed.newton_block.BlockNewtonData`."""

    backend = "dask"
    group = "newton"

    def __init__(self, pset: PartitionSet, part_ptr, d, max_recoveries):
        super().__init__(pset, max_recoveries)
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.K = self.part_ptr.shape[0] - 1
        self.d = int(d)
        self.reductions = 0
        #: the point each slot holds on the workers (to rebuild a lost partition)
        self._points = [None, None]
        self._current = 0
        #: partition 0's rows on the client (a NewtonBlock) for DiSCO's
        #: preconditioner, when the rows are in this process; the point its
        #: curvatures are at, and the passes over them (the driver's work)
        self.driver_block = None
        self._driver_point = None
        self.driver_passes = 0

    # ------------------------------------------------------------ calls
    def _rebuild(self, parts):
        for slot, w in enumerate(self._points):
            if w is not None:
                self.pset.wait([self.pset.actors[k].newton("evaluate", w, slot)
                                for k in parts], "newton recovery", parts)
        self.pset.wait([self.pset.actors[k].newton("use", self._current) for k in parts],
                       "newton recovery", parts)

    # ---------------------------------------------------------- methods
    def evaluate(self, w, slot):
        w = np.array(w, dtype=np.float64)
        self._points[slot] = w
        res = self._call("evaluate", w, slot)
        self.reductions += 1
        loss_sum = 0.0
        for (ls, _), in res:
            loss_sum += ls
        return loss_sum, add_parts([g for (_, g), in res])

    def use(self, slot):
        self._current = int(slot)
        self._call("use", int(slot))

    def hess_vec(self, v):
        res = self._call("hess_vec", np.ascontiguousarray(v, dtype=np.float64))
        self.reductions += 1
        return add_parts([hv for hv, in res])

    def hessian(self):
        res = self._call("hessian")
        self.reductions += 1
        return add_parts([H for H, in res])

    def precondition(self, r, lam_mu, sweeps, coarse, first_only):
        """The local preconditioner of every partition averaged (one round), or
        partition 0's alone: computed here when the client holds partition 0's
        rows (:attr:`driver_block`, DiSCO's master: no round), else by its
        worker (one round trip)."""
        r = np.ascontiguousarray(r, dtype=np.float64)
        args = (r, float(lam_mu), int(sweeps), int(coarse))
        if not first_only:
            res = self._call("precondition", *args)
            self.reductions += 1
            return weighted_mean([part for part, in res])
        if self.driver_block is not None:
            w = self._points[self._current]
            if self._driver_point is not w:          # the point moved: its curvatures
                self.driver_block.evaluate(w, 0)
                self.driver_block.use(0)
                self._driver_point = w
                self.driver_passes += 1
            return weighted_mean(self.driver_block.precondition(*args))
        t = time.perf_counter()
        while True:
            try:
                (part,), = self.pset.wait([self.pset.actors[0].newton("precondition", *args)],
                                         "newton precondition")
                break
            except _Lost as lost:
                self._recover(lost)
        self.calls += 1
        self.call_seconds += time.perf_counter() - t
        return weighted_mean([part])

    def local_newton(self, g, lam, sweeps, coarse, tol, max_iter, solver="cg", seed=0):
        """GIANT's averaged local Newton direction: every partition's local
        solve at once (one round)."""
        res = self._call("local_newton", np.ascontiguousarray(g, dtype=np.float64),
                         float(lam), int(sweeps), int(coarse), float(tol), int(max_iter),
                         str(solver), int(seed))
        self.reductions += 1
        return average_directions([part for part, in res])

    def local_sdca(self, lam, epochs, seed):
        """CoCoA+'s first round: every partition's local SDCA at once (one round)."""
        res = self._call("local_sdca", float(lam), int(epochs), int(seed))
        self.reductions += 1
        return join_local_sdca([part for part, in res], self.part_ptr)

    def line_derivatives(self, t):
        return add_pairs([pair for pair, in self._call("line_derivatives", float(t))])

    def dual(self):
        return join_duals([part for part, in self._call("dual")])

    def margins(self):
        """Not gathered: the margins stay on the workers."""
        return None


def newton_engine(problem, opts, distributed_input):
    """The Dask data of a distributed Newton run: the actors of partitioned
    input, or ``opts.n_partitions`` contiguous blocks of an in-memory problem
    placed on ``opts.client``'s workers."""
    if distributed_input:
        pset = problem.pset
        pset.timeout = float(opts.round_timeout)
        return DaskNewtonData(pset, problem.part_ptr, problem.d, opts.max_recoveries)
    part_ptr = contiguous_partition(problem.n, int(opts.n_partitions))
    pset = place_problem(problem, part_ptr, opts.client, opts.round_timeout)
    return DaskNewtonData(pset, part_ptr, problem.d, opts.max_recoveries)
