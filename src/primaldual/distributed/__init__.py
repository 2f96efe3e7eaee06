"""The engines below the solvers: rounds over data partitions, in process or on
Dask, and DSO's ring and PSGD's parts on Dask actors.

* :mod:`.block`        a :class:`PartitionBlock`: rows, labels, alpha and the
                       per-partition random streams of one or more partitions,
                       and the compiled work done on them (rounds, certificate
                       pieces, ESO passes), and the round modes that are not
                       the kernel's (:data:`~.block.MODE_COCOA_SDCA`, the flag
                       :data:`~.block.LINE_SEARCH`);
* :mod:`.local_sdca`   CoCoA+'s local solver as the serial SDCA kernel;
* :mod:`.line_step`    the step on the summed update of a CoCoA+ round;
* :mod:`.engine`       the engine interface and :class:`LocalEngine` (all
                       partitions in this process);
* :mod:`.dask_engine`  :class:`DaskEngine`: one Dask actor per partition,
                       pinned on a worker, rounds, recovery snapshots, worker-loss
                       recovery and round timeouts;
* :mod:`.worker`       the actor of one partition on its worker;
* :mod:`.partitioned`  :class:`PartitionedProblem`: a problem whose rows live on
                       the workers only (LIBSVM part files or Dask arrays);
* :mod:`.actor_engine`  actors that hold a solver's explicit state per
                       partition (DSO's ring, PSGD's parts):
                       :func:`~.actor_engine.actor_engine`;
* :mod:`.newton_block`  the passes of Newton-CG on row partitions
                       (:class:`~.newton_block.NewtonBlock`), run in process
                       by the serial solver and on each actor;
* :mod:`.newton_rounds`  the distributed Newton-CG's passes on Dask actors
                       (:func:`~.newton_rounds.newton_engine`);
* :mod:`.cs_block`, :mod:`.cs_rounds`  CoCoA+ over the Crammer-Singer dual on
                       row partitions, in process and on Dask actors.

This package sits below :mod:`primaldual.solvers` and imports nothing from it
(``tests/test_layers.py``); no module here imports Dask at module level.
"""
from .block import PartitionBlock, contiguous_partition, spawn_streams
from .dask_engine import DaskEngine
from .partition_set import RoundTimeoutError, WorkerLostError
from .engine import Engine, LocalEngine
from .partitioned import PartitionedProblem

__all__ = ["PartitionBlock", "contiguous_partition", "spawn_streams", "Engine",
           "LocalEngine", "DaskEngine", "PartitionedProblem", "RoundTimeoutError",
           "WorkerLostError"]
