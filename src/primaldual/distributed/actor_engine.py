"""Actors with an explicit per-partition state on Dask: placement, snapshots,
recovery and replay for the solvers that keep their state on the workers
(DSO's ring, PSGD's parts).

:func:`actor_engine` places one actor of the solver's class per payload with
:class:`~.partition_set.PartitionSet` (partition ``q`` on the ``q mod
#workers``-th worker, pinned, its data sent once with
``client.scatter(..., workers=[addr], direct=True)``) and wraps them in an
:class:`ActorStateEngine`: recovery is :class:`~.dask_engine.DaskEngine`'s
(``_recover``: wait for a live worker, re-create the lost actors, push the last
snapshot to every partition, count against ``max_recoveries``), timeouts are
``PartitionSet.wait``'s (:class:`~.partition_set.RoundTimeoutError`).

An actor class (:class:`primaldual.solvers.dso.ring.DSOPartitionActor`,
:class:`primaldual.solvers.psgd.PSGDPartActor`) is built from its payload and
answers ``describe()``, ``ping()``, ``set_state(state, rng_state, next_actor,
timeout)`` and ``get_state(r)``.  Snapshots hold the solver's full explicit
state (the same arrays as the serial solver's ``get_state``), so after a
recovery the replay from the snapshot reproduces the uninterrupted iterates.
This module imports no solver: the solver passes its actor class in.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from .._util import atomic_write
from .dask_engine import DaskEngine
from .partition_set import PartitionSet, _Lost

__all__ = ["ActorStateEngine", "place", "actor_engine"]


# ------------------------------------------------------------------ actors
def _actor_set(actor_cls):
    class _Set(PartitionSet):
        def _create(self, k, address):
            self._actor_cls = actor_cls      # PartitionSet's placement, our actor
            return super()._create(k, address)
    return _Set


def place(client, actor_cls, payloads, timeout):
    """Place one ``actor_cls`` per payload with :class:`PartitionSet`; each
    payload is scattered straight to its worker (again on recovery)."""
    def source(k):
        def make(client, address):
            head, *rest = payloads[k]
            futs = client.scatter(list(rest), workers=[address], direct=True, hash=False)
            return (head, *futs)
        return make
    return _actor_set(actor_cls)(client, [source(k) for k in range(len(payloads))],
                                 timeout)


def actor_engine(actor_cls, payloads, opts):
    """Place one ``actor_cls(payload)`` per payload on ``opts.client`` and wrap
    them in an :class:`ActorStateEngine`."""
    pset = place(opts.client, actor_cls, payloads, opts.round_timeout)
    return ActorStateEngine(pset, opts)


# ------------------------------------------------------------------ engine
class ActorStateEngine(DaskEngine):
    """:class:`DaskEngine`'s recovery around actors whose state is a dict of
    arrays per partition plus the solver's counters.

    A snapshot is ``(round, per-partition state dicts, stream states, meta)``
    where ``meta`` holds the solver-side counters; after a recovery
    ``restored`` is that ``meta`` and the caller rolls its counters back to it
    and replays.  ``push`` wires every actor to its ring successor ``q - 1``.
    """

    def __init__(self, pset, opts):
        super().__init__(pset, np.arange(pset.K + 1), 0,
                         {"lam": 1.0, "W": 1.0, "penalty": None}, opts)
        self.restored = None
        self.generation = 0
        self.time_compute = 0.0
        self.time_send = 0.0

    # state ---------------------------------------------------------------
    def _push_state(self, states, meta, rng_states):
        a = self.pset.actors
        K = self.K
        # a new generation: what an actor sent before this push is dropped
        self.generation += 1
        futs = [a[k].set_state({**states[k], "generation": self.generation}, rng_states[k],
                               a[(k - 1) % K], self.pset.timeout)
                for k in range(K)]
        self.pset.wait(futs, "set_state")
        self.restored = meta

    def _free_survivors(self, lost_parts):
        """Before the lost actors are re-created: a surviving actor may still wait
        to deliver its block to a lost one (connecting to a dead worker retries
        for Dask's connect timeout) and would hold its worker's actor thread,
        so ``abort()`` (answered on the worker's event loop) frees it."""
        if not hasattr(self.pset._actor_cls, "abort"):
            return
        live = [k for k in range(self.K) if k not in lost_parts]
        self.pset.wait([self.pset.actors[k].abort() for k in live], "abort", parts=live)

    def lost_partner(self, k, what):
        """A call could not reach partition ``k``'s actor: raise the loss for the
        recovery (polling the scheduler briefly, which may not have seen the
        worker go yet), or a RuntimeError saying ``what`` when ``k`` is alive."""
        if self.pset._died(k):
            raise _Lost(sorted({k} | set(self.pset.dead_partitions())))
        raise RuntimeError(f"{what}, whose worker is alive; the Dask cluster's network "
                           f"is failing")

    def push(self, states, rng_states, meta, round_):
        self.round = round_
        self._with_recovery(lambda: self._push_state(states, meta, rng_states))
        self.snapshot(states, rng_states, meta)
        self.restored = None

    def drive(self, target, one_round, restore, meta_fn, deadline=None):
        """Run ``one_round()`` until ``self.round == target`` (or the deadline).

        On a lost worker: recover (:meth:`DaskEngine._recover`), ``restore(meta)``
        the solver counters of the snapshot and replay from there.  Every
        ``recovery_every`` rounds the state is pulled into a new snapshot.
        """
        while self.round < target:
            try:
                t0 = time.perf_counter()
                one_round()
                self.round += 1
                self.time_rounds += time.perf_counter() - t0
                self.n_rounds_timed += 1
                if (self.recovery_every is not None
                        and self.round - self._snap_round >= self.recovery_every):
                    states, rngs = self.pull()
                    self.snapshot(states, rngs, meta_fn())
            except _Lost as e:
                restore(self.recover(e))
                continue
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def fetch(self, one_round, restore, meta_fn):
        """The state of every partition now (replaying after a recovery), which
        also becomes the recovery snapshot."""
        target = self.round
        while True:
            try:
                states, rngs = self.pull()
                break
            except _Lost as e:
                restore(self.recover(e))
                self.drive(target, one_round, restore, meta_fn)
        self.snapshot(states, rngs, meta_fn())
        return states, rngs

    def pull(self):
        """Every partition's state at the start of round ``self.round``."""
        r = self.round % self.K
        res = self.pset.call_all("get_state", r, what="get_state")
        return [x[0] for x in res], [x[1] for x in res]

    def snapshot(self, states, rng_states, meta):
        self._snap_round = self.round
        snap = {"round": self.round, "alpha": states, "rng": list(rng_states), "v": meta}
        if self.recovery_dir is None:
            self._snap = snap
            return
        path = Path(self.recovery_dir)
        arrays = {f"p{k}_{name}": np.asarray(val) for k, st in enumerate(states)
                  for name, val in st.items()}
        with atomic_write(path / "recovery.npz") as fh:
            np.savez(fh, round=np.array(self.round),
                     meta=np.array(json.dumps({"meta": meta, "rng": snap["rng"],
                                               "keys": [sorted(st) for st in states]})),
                     **arrays)
        self._snap = {"path": path / "recovery.npz"}

    def _load_snapshot(self):
        if self._snap is None or "path" not in self._snap:
            return super()._load_snapshot()
        with np.load(self._snap["path"], allow_pickle=False) as z:
            info = json.loads(str(z["meta"]))
            states = [{name: z[f"p{k}_{name}"] for name in keys}
                      for k, keys in enumerate(info["keys"])]
            return {"round": int(z["round"]), "alpha": states, "rng": info["rng"],
                    "v": info["meta"]}

    def recover(self, lost):
        """Recover from ``lost`` (see :meth:`DaskEngine._recover`); returns the
        snapshot's meta (solver counters) to roll back to."""
        self._recover_until_done(lost)
        meta, self.restored = self.restored, None
        return meta

    def info(self):
        out = {"recoveries": int(self.recoveries)}
        if self.n_rounds_timed:
            n = self.n_rounds_timed
            out["round_ms"] = 1e3 * self.time_rounds / n
            out["round_compute_ms"] = 1e3 * self.time_compute / n
            if self.time_send > 0:
                out["round_send_ms"] = 1e3 * self.time_send / n
        return out

