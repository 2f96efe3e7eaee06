"""The engines of round-based solvers (mini-batch SDCA with distributed
sampling, CoCoA+).

The solver side, :class:`~primaldual.solvers._rounds.RoundsMixin` (state,
rounds, certificate), lives with the solvers, below this layer; it asks for
its engine through the hook ``rounds_engine``, which is
:func:`make_engine` here (registered by :mod:`primaldual.distributed` on
import).
"""
from __future__ import annotations

from .block import contiguous_partition
from .dask_engine import DaskEngine
from .engine import LocalEngine

__all__ = ["make_engine"]


def make_engine(problem, opts, distributed_input):
    """The engine of a round-based solver: :class:`DaskEngine` for partitioned
    input or with ``opts.client``, otherwise :class:`LocalEngine`; the rows
    are split into ``opts.n_partitions`` contiguous partitions (``opts``: the
    solver's options, :class:`~primaldual.solvers._options.EngineOptions`)."""
    if distributed_input:
        return DaskEngine.from_partitioned(problem, opts)
    part_ptr = contiguous_partition(problem.n, int(opts.n_partitions))
    if opts.client is not None:
        return DaskEngine.from_problem(problem, part_ptr, opts)
    return LocalEngine(problem, part_ptr)
