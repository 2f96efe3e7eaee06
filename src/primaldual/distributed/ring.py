"""DSO's ring of w blocks and PSGD's independent parts on Dask, on the shared
placement and fault layer of :mod:`.dask_engine`.

Placement is :class:`~.dask_engine.PartitionSet`'s (partition ``q`` on the
``q mod #workers``-th worker, pinned, its data sent once with
``client.scatter(..., workers=[addr], direct=True)``), recovery is
:class:`~.dask_engine.DaskEngine`'s (``_recover``: wait for a live worker,
re-create the lost actors, push the last snapshot to every partition, count
against ``max_recoveries``), timeouts are ``PartitionSet.wait``'s
(:class:`~.dask_engine.RoundTimeoutError`).  Only the actor classes and the
shape of the state differ:

:class:`DSOPartitionActor`
    partition ``q`` of DSO (Matsushima et al. 2014, Algorithm 1): its rows'
    nonzeros grouped by column block, its ``alpha`` (never leaves the worker
    except in snapshots) and its random stream.  It holds one column block
    ``w^(sigma_r(q))`` at a time.  ``step(r, eta)`` runs
    :func:`primaldual.blocks.dso.dso_block` on it and then **pushes the block
    to its next owner** ``q - 1 mod p`` (who needs it in inner iteration
    ``r + 1``: ``sigma_{r+1}(q - 1) = sigma_r(q)``) with an actor call
    ``next.receive(block)``.  That call goes worker to worker (the sender's
    worker opens a connection to the receiver's worker; neither the client
    nor the scheduler carries the data); ``receive`` is a coroutine, so it runs
    on the receiver's event loop even while the receiver's actor thread is
    computing, and it only files the block in an inbox keyed by block id.
    ``step`` returns when the block has been delivered, so the client's
    barrier (all ``step`` futures done) is the bulk-synchronous barrier of
    Algorithm 1, communication included.
:class:`PSGDPartActor`
    part ``q`` of PSGD (Zinkevich et al. 2010): its rows, its local model and
    stream; local SGD epochs, no communication until the client averages.

Snapshots hold the solver's full explicit state (the same arrays as the
serial solver's ``get_state``), so after a recovery the replay from the
snapshot reproduces the uninterrupted iterates.
"""
from __future__ import annotations

import inspect
import json
import time
from pathlib import Path

import numpy as np

from .._util import atomic_write, rng_from_state
from ..blocks.dso import WBlock, dso_block, sigma
from ..blocks.psgd import psgd_local_pass
from ..rows import as_rows
from ..validation import check_X
from ..kernels.dso import ColSide, RowSide, svrg_full_gradient
from .dask_engine import DaskEngine, PartitionSet, _Lost  # noqa: F401  (re-exported)

__all__ = ["DSOPartitionActor", "PSGDPartActor", "ActorStateEngine", "place",
           "restore_rng", "ring_engine"]


restore_rng = rng_from_state


# ------------------------------------------------------------------ actors
class DSOPartitionActor:
    """Partition ``q`` of DSO on its worker (see the module docstring).

    ``source = ("dso", part, params, col_bounds, col_cnt)``: a
    :class:`~primaldual.blocks.dso.RowPartition` with its static arrays (the
    state arrays are set by :meth:`set_state`), the
    :class:`~primaldual.blocks.dso.DSOParams`, the column block bounds and
    ``|Omega-bar_j|`` (so only ``w`` and its companions travel).
    """

    def __init__(self, source):
        _, self.part, self.params, self.col_bounds, self.col_cnt = source
        self.p = self.part.p
        self.q = self.part.q
        self.inbox = {}
        self.next = None
        self.rng = None
        self.w_sum = None
        self.timeout = 60.0

    def describe(self):
        return {"n": int(self.part.y.shape[0]), "nnz": int(self.part.vals.shape[0])}

    async def ping(self):
        """Answered by the worker's event loop, so a partition busy computing
        is seen alive (a slow round then gives RoundTimeoutError, not a recovery)."""
        return True

    def _wblock(self, s, w, Gw, w_snap, Fw):
        j0, j1 = int(self.col_bounds[s]), int(self.col_bounds[s + 1])
        return WBlock(r=s, col_start=j0, w=w, col_cnt=self.col_cnt[j0:j1], Gw=Gw,
                      w_snap=w_snap, Fw=Fw)

    def set_state(self, st, rng_state, next_actor, timeout):
        """Partition arrays, the held block ``st['block']`` and ``w_sum`` of block
        ``q - 1 mod p`` (the block this partition holds at the end of an epoch)."""
        part = self.part
        if "params" in st:          # DSO's step weights change at its restarts
            self.params = st["params"]
        for k in ("alpha", "Ga", "a_snap", "Fa"):
            setattr(part, k, np.array(st[k], dtype=np.float64))
        self.a_sum = np.array(st["a_sum"], dtype=np.float64)
        self.w_sum = np.array(st["w_sum"], dtype=np.float64)
        s = int(st["block"])
        self.inbox = {s: self._wblock(s, *(np.array(st[k], dtype=np.float64)
                                            for k in ("w", "Gw", "w_snap", "Fw")))}
        self.rng = restore_rng(rng_state)
        self.next = next_actor
        self.timeout = float(timeout)
        return True

    def get_state(self, r):
        """State at the start of inner iteration ``r`` (block ``sigma_r(q)`` held)."""
        s = sigma(self.q, r, self.p)
        blk = self.inbox[s]
        part = self.part
        return ({"alpha": part.alpha.copy(), "Ga": part.Ga.copy(), "a_snap": part.a_snap.copy(),
                 "Fa": part.Fa.copy(), "a_sum": self.a_sum.copy(), "w_sum": self.w_sum.copy(),
                 "block": s, "w": blk.w.copy(), "Gw": blk.Gw.copy(),
                 "w_snap": blk.w_snap.copy(), "Fw": blk.Fw.copy()},
                self.rng.bit_generator.state)

    def held_w(self, r):
        """The ``w`` of the block held at the start of inner iteration ``r``."""
        return self.inbox[sigma(self.q, r, self.p)].w.copy()

    async def receive(self, s, w, Gw, w_snap, Fw):
        """Called by the previous owner: file block ``s`` for the next inner iteration."""
        self.inbox[int(s)] = self._wblock(int(s), w, Gw, w_snap, Fw)
        return True

    # -------------------------------------------------------- SVRG snapshot
    def svrg_local(self, wbar):
        """Snapshot ``abar = alpha``, ``margins = X_q wbar``, ``Fa``; returns
        ``v_q = sum_{i in I_q} (c_i/W) abar_i x_i`` (length d)."""
        part = self.part
        part.a_snap[:] = part.alpha
        nq = part.y.shape[0]
        margins = np.zeros(nq)
        v = np.zeros(int(self.col_bounds[-1]))
        for s in range(self.p):
            lo, hi = int(part.block_ptr[s]), int(part.block_ptr[s + 1])
            j0, j1 = int(self.col_bounds[s]), int(self.col_bounds[s + 1])
            rows, cols, vals = part.rows[lo:hi], part.cols[lo:hi], part.vals[lo:hi]
            margins += np.bincount(rows, weights=vals * wbar[j0 + cols], minlength=nq)
            v[j0:j1] += np.bincount(cols, weights=vals * (part.cw * part.a_snap)[rows],
                                    minlength=j1 - j0)
        empty = np.zeros(0)
        svrg_full_gradient(
            RowSide(part.alpha, part.a_lo, part.a_hi, part.y, part.cw, part.row_cnt, part.Ga,
                    part.a_snap, part.Fa),
            ColSide(empty, empty, empty, empty, empty), margins, empty, self.params.spec())
        return v

    # ------------------------------------------------------------ the ring
    def step(self, r, eta, snap=None, end_of_epoch=False):
        """Inner iteration ``r``: block ``(q, sigma_r(q))``, then pass the block on.

        ``snap = (w_snap, Fw)`` of the held block at the start of an SVRG epoch.
        Returns ``(status, n_updates, compute_seconds, send_seconds)``.
        """
        s = sigma(self.q, r, self.p)
        blk = self.inbox.pop(s)
        if snap is not None:
            blk.w_snap[:] = snap[0]
            blk.Fw[:] = snap[1]
        t0 = time.perf_counter()
        status, pos = dso_block(self.q, r, self.part, blk, self.rng, self.params, eta)
        if end_of_epoch:
            self.a_sum += self.part.alpha
            self.w_sum += blk.w
        tc = time.perf_counter() - t0
        t1 = time.perf_counter()
        if self.p == 1:
            self.inbox[s] = blk
        else:
            call = self.next.receive(s, blk.w, blk.Gw, blk.w_snap, blk.Fw)
            if inspect.iscoroutine(call):
                # next owner on this worker: Dask hands back the coroutine itself
                # (no transfer); it never suspends, so run it to completion here
                try:
                    call.send(None)
                except StopIteration:
                    pass
            else:
                call.result(timeout=self.timeout)
        return int(status), int(pos), tc, time.perf_counter() - t1


class PSGDPartActor:
    """Part ``q`` of PSGD on its worker: ``source = ("psgd", X_q, y_q, grad_w_q,
    loss_code, loss_param, lam, project, sampling)`` with the part's rows in
    increasing global order."""

    def __init__(self, source):
        _, X, y, gw, self.kind, self.lp, self.lam, self.project, self.sampling = source
        self.rows = as_rows(check_X(X))
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.grad_w = np.ascontiguousarray(gw, dtype=np.float64)
        self.idx = np.arange(self.rows.n, dtype=np.int64)

    def describe(self):
        return {"n": int(self.rows.n), "nnz": int(self.rows.nnz)}

    async def ping(self):
        return True

    def set_state(self, st, rng_state, next_actor, timeout):
        self.U = np.array(st["U"], dtype=np.float64)
        self.scale = np.array(st["scale"], dtype=np.float64)
        self.unorm2 = np.array(st["unorm2"], dtype=np.float64)
        self.t = int(st["t"])
        self.rng = restore_rng(rng_state)
        return True

    def get_state(self, r=0):
        return ({"U": self.U.copy(), "scale": self.scale.copy(),
                 "unorm2": self.unorm2.copy(), "t": self.t},
                self.rng.bit_generator.state)

    def epoch(self):
        """One local pass (|I_q| SGD steps); returns ``(pos, n, accesses, seconds)``."""
        t0 = time.perf_counter()
        pos, n, acc = psgd_local_pass(self.rows, self.y, self.grad_w, self.idx, self.rng,
                                      self.sampling, self.U, self.scale, self.unorm2,
                                      self.kind, self.lp, self.lam, self.t, self.project)
        self.t += pos
        return pos, n, acc, time.perf_counter() - t0


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


def ring_engine(payloads, opts):
    """The solvers' hook ``ring_engine`` (registered by :mod:`primaldual.distributed`):
    place one actor per payload on ``opts.client`` -- :class:`DSOPartitionActor`
    for ``("dso", ...)`` payloads, :class:`PSGDPartActor` for ``("psgd", ...)`` --
    and wrap them in an :class:`ActorStateEngine`."""
    actor_cls = {"dso": DSOPartitionActor, "psgd": PSGDPartActor}[payloads[0][0]]
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
        self.time_compute = 0.0
        self.time_send = 0.0

    # state ---------------------------------------------------------------
    def _push_state(self, states, meta, rng_states):
        a = self.pset.actors
        K = self.K
        futs = [a[k].set_state(states[k], rng_states[k], a[(k - 1) % K], self.pset.timeout)
                for k in range(K)]
        self.pset.wait(futs, "set_state")
        self.restored = meta

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

