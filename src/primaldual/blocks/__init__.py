"""Per-block maths shared by a solver and its distributed execution.

The serial solvers (:mod:`primaldual.solvers`) and the Dask actors
(:mod:`primaldual.distributed`) run the very same per-partition / per-block
updates; those live here, below both layers, so neither has to import the
other for them:

* :mod:`.dso`   DSO's block layout, schedule ``sigma``, :class:`~.dso.RowPartition`,
                :class:`~.dso.WBlock`, :class:`~.dso.DSOParams` and :func:`~.dso.dso_block`;
* :mod:`.psgd`  PSGD's local pass of one part (:func:`~.psgd.psgd_local_pass`).
* :mod:`.sdca_threads`  SDCA's threaded pass (:func:`~.sdca_threads.threaded_pass`)
                and its cost model (:func:`~.sdca_threads.thread_plan`,
                :func:`~.sdca_threads.auto_sync_every`), run by the threaded serial
                SDCA and by CoCoA+'s local solver on a worker.

Modules here import only :mod:`primaldual.kernels` and the model layer
(``_util``, ``rows``, ``validation``, ``problem``, ``losses``, ``penalties``); see
``tests/test_layers.py``.
"""
