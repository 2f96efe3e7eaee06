"""The engine shared by every distributed solver (mini-batch SDCA, CoCoA+, DSO).

Layers (see ``docs/distributed.md``):

* :mod:`.block`        a :class:`PartitionBlock`: rows, labels, alpha and the
                       per-partition random streams of one or more partitions,
                       and the compiled work done on them (rounds, certificate
                       pieces, ESO passes);
* :mod:`.engine`       the engine interface and :class:`LocalEngine` (all
                       partitions in this process);
* :mod:`.dask_engine`  :class:`DaskEngine`: one Dask actor per partition,
                       pinned on a worker, rounds, recovery snapshots, worker-loss
                       recovery and round timeouts;
* :mod:`.problem`      :class:`PartitionedProblem`: a problem whose rows live on
                       the workers only (LIBSVM part files or Dask arrays);
* :mod:`.rounds`       :class:`RoundsMixin`: the solver side (state, rounds,
                       certificate) used by ``minibatch_sdca`` and ``cocoa``.
"""
from .block import PartitionBlock, contiguous_partition, spawn_streams
from .engine import Engine, LocalEngine

__all__ = ["PartitionBlock", "contiguous_partition", "spawn_streams", "Engine",
           "LocalEngine", "DaskEngine", "PartitionedProblem", "RoundTimeoutError",
           "WorkerLostError"]


def __getattr__(name):
    if name in ("DaskEngine", "RoundTimeoutError", "WorkerLostError"):
        from . import dask_engine
        return getattr(dask_engine, name)
    if name == "PartitionedProblem":
        from .problem import PartitionedProblem
        return PartitionedProblem
    raise AttributeError(name)
