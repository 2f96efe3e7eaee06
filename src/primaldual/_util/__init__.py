"""Small helpers with one home each, at the bottom of the layering: nothing
here imports another part of :mod:`primaldual`, so every layer may use it.

============================  ============================================================
:mod:`.atomic`                :func:`atomic_write`: temporary file in the same directory,
                              fsync, ``os.replace``; nothing partial is ever visible
:mod:`.seeding`               :func:`make_rng`, :func:`seed_entropy`, :func:`spawn_streams`,
                              :func:`partition_stream`, :func:`spawn_seeds`, :func:`rng_from_state`: every random
                              choice from ``random_state``
:mod:`.labels`                :func:`encode_pm1`: raw labels to -1/+1, naming bad labels
:mod:`.compression`           :func:`detect_compression`, :func:`open_decompressed`:
                              gzip, bzip2, xz and zip recognised by their magic bytes
:mod:`.threads`               :func:`resolve_n_jobs` (what ``n_jobs`` means),
                              :func:`run_threads` (tasks on a kept pool of OS threads,
                              stopped cleanly by KeyboardInterrupt)
:mod:`.interrupts`            :func:`~.interrupts.sigint_as_flag`, :class:`~.interrupts.Deadline`:
                              Ctrl-C during a fit sets a flag that the driver polls
                              between kernel calls, instead of raising inside one
:mod:`.clients`               :func:`~.clients.check_client`,
                              :func:`~.clients.client_workers`, :func:`~.clients.ring_workers`:
                              Dask client checks shared by the solvers and the engines
                              (Dask itself stays lazy); :class:`~.clients.WorkerLostError`
                              and :class:`~.clients.ClientClosedError` (a closed client)
:mod:`.lazy`                  :func:`~.lazy.lazy_module`, :func:`~.lazy.lazy_attr`: the one
                              way a primaldual module imports another one lazily
:mod:`.blas`                  :func:`~.blas.serial_blas`: BLAS on one thread while a serial
                              solver's dense linear algebra runs (threadpoolctl, lazily)
============================  ============================================================

Importing this package loads no numpy (:mod:`.seeding` and :mod:`.labels` load
on first use), so ``import primaldual`` and ``--help`` stay cheap.
"""

from .atomic import atomic_write
from .compression import (COMPRESSION_MAGIC, UnsupportedCompressionError, detect_compression,
                          open_decompressed)
from .lazy import lazy_attr
from .threads import resolve_n_jobs, run_threads

_SEEDING = ("make_rng", "partition_stream", "rng_from_state", "seed_entropy", "spawn_seeds",
            "spawn_streams")
_LABELS = ("LabelError", "encode_pm1")


def __getattr__(name):
    if name in _SEEDING:
        value = lazy_attr("primaldual._util.seeding", name)
    elif name in _LABELS:
        value = lazy_attr("primaldual._util.labels", name)
    else:
        raise AttributeError(f"module 'primaldual._util' has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = ["COMPRESSION_MAGIC", "LabelError", "UnsupportedCompressionError", "atomic_write",
           "detect_compression", "encode_pm1", "make_rng", "open_decompressed",
           "partition_stream", "resolve_n_jobs", "rng_from_state", "run_threads",
           "seed_entropy", "spawn_seeds", "spawn_streams"]
