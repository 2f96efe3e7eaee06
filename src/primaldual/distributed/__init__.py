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
* :mod:`.rounds`       :func:`~.rounds.make_engine`: the engine of a round-based
                       solver (the solver side, ``RoundsMixin``, is
                       :mod:`primaldual.solvers._rounds`);
* :mod:`.ring`         DSO's ring and PSGD's parts on Dask actors.

Import direction: this package sits above :mod:`primaldual.solvers` (it
imports them, never the reverse).  The solvers get their engines from here
through :func:`primaldual.solvers._rounds.provide_engines`, called below when
this package is imported (``import primaldual`` imports it).  The per-block
maths that both sides run is in :mod:`primaldual.blocks`.
"""
from ..solvers._rounds import provide_engines
from .block import PartitionBlock, contiguous_partition, spawn_streams
from .dask_engine import DaskEngine, RoundTimeoutError, WorkerLostError
from .engine import Engine, LocalEngine
from .newton_rounds import newton_engine
from .partitioned import PartitionedProblem
from .ring import ring_engine
from .rounds import make_engine

__all__ = ["PartitionBlock", "contiguous_partition", "spawn_streams", "Engine",
           "LocalEngine", "DaskEngine", "PartitionedProblem", "RoundTimeoutError",
           "WorkerLostError"]


# the solvers' engines (see primaldual.solvers._rounds)
provide_engines(rounds_engine=make_engine, ring_engine=ring_engine,
                partitioned_type=PartitionedProblem, newton_engine=newton_engine)
