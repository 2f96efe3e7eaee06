"""The partition count of a solver whose sums over rows run on row partitions:
in this process (``n_partitions``), on a client's workers (``client``), or on
rows that live only on the workers (a
:class:`~primaldual.distributed.partitioned.PartitionedProblem`)."""
from __future__ import annotations

from .._util.clients import check_client, client_workers
from .._util.threads import resolve_n_jobs
from ..distributed.partitioned import PartitionedProblem

__all__ = ["PartitionCount"]


class PartitionCount:
    """Mixin of a :class:`~primaldual.solvers._base.Solver` whose options are
    :class:`~primaldual.solvers._options.PartitionOptions`."""

    #: K when neither ``n_partitions``, rows on the workers nor a client give
    #: one (None: the serial solver)
    default_partitions = None
    #: ``n_jobs`` runs the partitions of an in-process fit on threads and is
    #: refused on Dask (:meth:`check_threads_in_process`); ``solver="auto"``
    #: with a client, which takes ``n_jobs`` as a permission, does not pass it
    threads_in_process_only = False

    @property
    def partitioned(self):
        """Whether the rows are on Dask workers (part files or Dask arrays)."""
        return isinstance(self.problem, PartitionedProblem)

    def _partitions(self):
        """K: the option; else the parts of rows on Dask workers, or the workers
        of a client; else :attr:`default_partitions`."""
        o = self.opts
        if o.n_partitions is not None:
            return int(o.n_partitions)
        if self.partitioned:
            return self.problem.n_parts
        if o.client is not None:
            return max(1, len(client_workers(o.client)))
        return self.default_partitions

    def check_partitions(self, warm_start_on_workers=True):
        """Refuse a closed or foreign client, a count that does not match the
        rows' parts, is below 1 or above ``n`` and, unless
        ``warm_start_on_workers``, a warm start for rows on the workers;
        returns K (None: the serial solver)."""
        o = self.opts
        if o.client is not None:
            check_client(o.client)
        K = self._partitions()
        if self.partitioned and not warm_start_on_workers and self.warm_start is not None:
            raise ValueError("warm starts are not supported for rows on Dask workers; "
                             "fit without warm_start")
        if K is None:
            return None
        if self.partitioned and K != self.problem.n_parts:
            P = self.problem.n_parts
            raise ValueError(f"n_partitions={K} but the rows are in {P} parts (one per "
                             f"part file or chunk); set n_partitions={P}")
        if K < 1:
            raise ValueError(f"n_partitions must be a positive integer, got {K}")
        if K > self.problem.n:
            raise ValueError(f"n_partitions={K} is larger than n={self.problem.n}")
        return K

    def check_threads_in_process(self):
        """Refuse ``n_jobs > 1`` with a client or rows on the workers: the
        option runs the partitions of an in-process fit on threads, and on
        Dask each partition is an actor on a worker."""
        o = self.opts
        if resolve_n_jobs(o.n_jobs) > 1 and (o.client is not None or self.partitioned):
            raise ValueError(
                f"n_jobs={o.n_jobs} runs the partitions of an in-process {self.name} fit "
                f"on threads; on Dask each partition is an actor on a worker: leave "
                f"n_jobs at 1 with client=")
