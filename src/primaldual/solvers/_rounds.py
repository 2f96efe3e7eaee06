"""The solver side of partitioned (round-based) dual methods.

:class:`RoundsMixin` gives a :class:`~primaldual.solvers._base.Solver` the
state handling, rounds, certificate and engine selection that distributed
mini-batch SDCA and CoCoA+ share (and that DSO can reuse).  The solver
provides

``round_spec()``      ``(mode, m, sigma_dot, gamma)`` of one round
``steps_per_round``   elementary coordinate updates per round
``eso_beta()``        the ESO factor ``beta`` of ``v_i = beta ||x_i||^2``

and the mixin provides ``init_state``, ``advance``, ``certificate``,
``get_state`` and ``set_state`` for the engine path.  The explicit state is
``alpha``, the incremental ``v`` and the per-partition stream states; ``w``
is ``v / lam``.

The engine is :class:`~primaldual.distributed.engine.LocalEngine` in process
and :class:`~primaldual.distributed.dask_engine.DaskEngine` with a client or
partitioned input (:func:`make_engine`); the engines sit below the solvers
(kernels <- model <- engines <- solvers <- estimators/CLI; see
``tests/test_layers.py``), so the solvers import them directly.  Neither
engine imports Dask at module level.
"""
from __future__ import annotations

import math
import time

import numpy as np

from .._util import seed_entropy
from .._util.clients import check_client
from ..distributed.block import contiguous_partition
from ..distributed.dask_engine import DaskEngine
from ..distributed.engine import LocalEngine
from ..distributed.partitioned import PartitionedProblem
from ..distributed.subspace_rounds import SubspaceDaskEngine

__all__ = ["RoundsMixin", "make_engine", "next_check_target", "is_partitioned"]


def make_engine(problem, opts, distributed_input):
    """The engine of a round-based solver: :class:`DaskEngine` for partitioned
    input or with ``opts.client`` (:class:`SubspaceDaskEngine` with
    ``aggregation="subspace"``), otherwise :class:`LocalEngine`; the rows
    are split into ``opts.n_partitions`` contiguous partitions (``opts``: the
    solver's options, :class:`~primaldual.solvers._options.EngineOptions`)."""
    dask_engine = (SubspaceDaskEngine if getattr(opts, "aggregation", None) == "subspace"
                   else DaskEngine)
    if distributed_input:
        return dask_engine.from_partitioned(problem, opts)
    part_ptr = contiguous_partition(problem.n, int(opts.n_partitions))
    if opts.client is not None:
        return dask_engine.from_problem(problem, part_ptr, opts)
    return LocalEngine(problem, part_ptr)


def is_partitioned(problem) -> bool:
    """True for a problem whose rows live on the workers (:class:`PartitionedProblem`)."""
    return isinstance(problem, PartitionedProblem)


def next_check_target(done, unit, n, check_every, max_epochs):
    """The iteration (or round) count at which the next check falls.

    Checks sit on a fixed grid ``ceil(k * check_every * n / unit)``, capped by
    ``ceil(max_epochs * n / unit)``, so that a run split by ``max_epochs`` and
    resumed visits the same checks (which re-synchronize ``v``) as an
    uninterrupted one: resume == uninterrupted, bit for bit.
    """
    per = check_every * n / unit
    k = max(1, int(math.floor(done / per)))
    while math.ceil(k * per - 1e-9) <= done:
        k += 1
    target = min(math.ceil(k * per - 1e-9), math.ceil(max_epochs * n / unit - 1e-9))
    return max(int(target), done + 1)


class RoundsMixin:
    """See the module docstring."""

    engine = None

    # --------------------------------------------------------- helpers
    def _engine_client(self):
        """The client the partitions run on: the option, else the client of
        partitioned input, else None (in process)."""
        if self.opts.client is None and is_partitioned(self.problem):
            return self.problem.client
        return self.opts.client

    def _check_engine_options(self, K):
        """The checks of the engine options against the problem, ``K`` the
        number of partitions the solver will use (pure)."""
        if is_partitioned(self.problem):
            if self.warm_start is not None:
                raise ValueError("warm_start is not supported for partitioned input (the "
                                 "rows are on the workers)")
            if K != self.problem.n_parts:
                raise ValueError(f"n_partitions={K} but the partitioned input has "
                                 f"{self.problem.n_parts} partitions (one per part file "
                                 f"or chunk); set n_partitions={self.problem.n_parts}")
        client = self._engine_client()
        if client is not None:
            self._check_client(client)

    _check_client = staticmethod(check_client)

    def _setup_engine_options(self, K):
        """Resolve the engine's options: ``K`` partitions and the client (from
        partitioned input); the engine gets ``self.resolved_opts``."""
        self.distributed_input = is_partitioned(self.problem)
        self.n_partitions = int(K)
        self.resolved_opts = self.resolved_opts.replace(n_partitions=self.n_partitions,
                                                        client=self._engine_client())

    def _make_engine(self):
        return make_engine(self.problem, self.resolved_opts, self.distributed_input)

    # ----------------------------------------------------------- hooks
    def engine_init_state(self, alpha0):
        prob = self.problem
        self.engine = self._make_engine()
        self.engine.set_curvature(self.eso_beta())
        entropy = seed_entropy(self.random_state, self.rng)
        states = self.engine.init_streams(entropy)
        if alpha0 is None:
            alpha = np.zeros(prob.n)
            v = np.zeros(prob.d)
        else:
            alpha = alpha0
            v = prob.dual_image(alpha)
        self.engine.set_state(alpha, v, states)
        self.rounds = 0

    def engine_advance(self, n_epochs, deadline):
        prob = self.problem
        spr = self.steps_per_round
        total = next_check_target(self.rounds, spr, prob.n, self.check_every,
                                  self.max_epochs) - self.rounds
        mode, m, sigma_dot, gamma = self.round_spec()
        chunk = total if deadline is None else max(1, math.ceil(total / 10))
        done = 0
        while done < total:
            r = min(chunk, total - done)
            self.feature_accesses += self.engine.run(mode, m, sigma_dot, gamma, r)
            done += r
            self.rounds += r
            self.steps += r * spr
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def engine_certificate(self):
        v = self.engine.v
        w = v / self.problem.lam
        return self.engine.certificate(w)

    def engine_get_state(self):
        alpha, v, states = self.engine.get_state()
        meta = {"rounds": int(self.rounds), "stream_states": states,
                "backend": self.engine.backend}
        return meta, {"alpha": alpha, "v": v}

    def engine_set_state(self, meta, arrays):
        if self.engine is None:
            self.engine = self._make_engine()
            self.engine.set_curvature(self.eso_beta())
        states = meta["stream_states"]
        if len(states) != self.engine.K:
            raise ValueError(f"the checkpoint has {len(states)} partition streams but "
                             f"n_partitions={self.engine.K}; resume with the same "
                             f"n_partitions")
        self.engine.set_state(np.asarray(arrays["alpha"], dtype=np.float64),
                              np.asarray(arrays["v"], dtype=np.float64), states)
        self.rounds = int(meta["rounds"])

    def engine_trace_extras(self):
        out = {"rounds": int(self.rounds)}
        out.update(self.engine.info() if self.engine is not None else {})
        return out
