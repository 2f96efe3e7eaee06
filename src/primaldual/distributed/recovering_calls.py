"""A driver's calls on the partitions' Dask actors, made again after a lost
worker (the distributed Newton methods: :mod:`.newton_rounds`,
:mod:`.multinomial_rounds`; Crammer-Singer's CoCoA+ rounds: :mod:`.cs_rounds`)."""
from __future__ import annotations

import time
from abc import ABC, abstractmethod

from .partition_set import WorkerLostError, _Lost

__all__ = ["RecoveringCalls"]


class RecoveringCalls(ABC):
    """A driver's calls of one actor method group (:attr:`group`, e.g.
    ``"newton"``) on every partition.  A call that loses a worker re-creates
    the lost partitions' actors on live workers, lets :meth:`_rebuild` restore
    their state from what the client holds, and is made again (every call is
    idempotent), at most ``max_recoveries`` times in a fit."""

    group = None

    def __init__(self, pset, max_recoveries):
        self.pset = pset
        self.max_recoveries = int(max_recoveries)
        self.recoveries = 0
        self.calls = 0
        self.call_seconds = 0.0

    def _call(self, method, *args, args_of=None):
        """``method`` on every partition with ``args``, or with ``args_of(k)``
        for partition ``k``; its answers in partition order."""
        t = time.perf_counter()
        what = f"{self.group} {method}"
        while True:
            try:
                if args_of is None:
                    out = self.pset.call_all(self.group, method, *args, what=what)
                else:
                    out = self.pset.wait([getattr(a, self.group)(method, *args_of(k))
                                          for k, a in enumerate(self.pset.actors)], what)
                break
            except _Lost as lost:
                self._recover(lost)
        self.calls += 1
        self.call_seconds += time.perf_counter() - t
        return out

    def _recover(self, lost):
        parts = list(lost.parts)
        while True:
            self.recoveries += 1
            if self.recoveries > self.max_recoveries:
                raise WorkerLostError(f"lost the workers of partitions {parts}; that is "
                                      f"recovery {self.recoveries}, more than "
                                      f"max_recoveries={self.max_recoveries}")
            try:
                self.pset.replace(parts)
                self._rebuild(parts)
                return
            except _Lost as again:        # another loss while recovering
                parts = sorted(set(parts) | set(again.parts))

    @abstractmethod
    def _rebuild(self, parts):
        """Restore the state of the re-created actors of ``parts``."""

    def info(self):
        out = {"recoveries": int(self.recoveries), "calls": int(self.calls)}
        if self.calls:
            out["call_ms"] = 1e3 * self.call_seconds / self.calls
        return out
