"""DSO on the Dask ring: the driver half of :class:`~primaldual.solvers.dso.DSOSolver`
and the actor of one row partition on its worker.

The explicit state is the serial one; between inner iterations partition q's
worker holds its rows' part of it and the column block sigma_r(q).
:meth:`DSORingDriver._ring_push` scatters the state, :meth:`_ring_pull`
gathers it; :meth:`_ring_round` runs one bulk-synchronous inner iteration.

:class:`DSOPartitionActor` is partition ``q`` (Matsushima et al. 2014,
Algorithm 1): its rows' nonzeros grouped by column block, its ``alpha`` (which
leaves the worker only in snapshots) and its random stream.  It holds one
column block ``w^(sigma_r(q))`` at a time.  ``step(r, eta)`` runs
:func:`~.blocks.dso_block` on it and then pushes the block to its next owner
``q - 1 mod p`` (``sigma_{r+1}(q - 1) = sigma_r(q)``) with the actor call
``next.receive(block)``, worker to worker.  ``receive`` is a coroutine, so it
runs on the receiver's event loop while the receiver's actor thread computes;
``step`` returns when the block is delivered, so the client's barrier is
Algorithm 1's bulk-synchronous barrier, communication included.  Placement,
snapshots and recovery are :mod:`primaldual.distributed.actor_engine`'s.
"""
from __future__ import annotations

import dataclasses
import inspect
import time

import numpy as np

from ..._util import rng_from_state
from ...distributed.actor_engine import actor_engine
from .blocks import WBlock, dso_block, sigma, snapshot_partials
from .kernels import ColSide, RowSide, svrg_full_gradient

__all__ = ["DSORingDriver", "DSOPartitionActor"]

SENT, NOT_SENT = 1, 0       # whether a step delivered its block to the next owner


class DSORingDriver:
    """Mixin of :class:`~primaldual.solvers.dso.DSOSolver`: its rounds on the ring."""

    _ring = None

    def _ring_meta(self):
        return {"updates": int(self.updates), "t": int(self.t), "r": int(self.r),
                "n_avg": int(self.n_avg), "snap_epoch": int(self.snap_epoch),
                "feature_accesses": int(self.feature_accesses)}

    def _ring_restore(self, meta):
        for k in ("updates", "t", "r", "n_avg", "snap_epoch", "feature_accesses"):
            setattr(self, k, int(meta[k]))

    def _ring_states(self):
        L = self.layout
        states = []
        for q in range(self.p):
            ri = slice(int(L.row_bounds[q]), int(L.row_bounds[q + 1]))
            s = sigma(q, self.r, self.p)
            cs = slice(int(L.col_bounds[s]), int(L.col_bounds[s + 1]))
            u = (q - 1) % self.p
            cu = slice(int(L.col_bounds[u]), int(L.col_bounds[u + 1]))
            st = {"block": s, "a_sum": self.a_sum[ri].copy(), "alpha": self.alpha[ri].copy(),
                  "w": self.w[cs].copy(), "w_sum": self.w_sum[cu].copy(),
                  "step_scales": np.array([self.params.w_scale, self.params.a_scale])}
            for k, sl in (("Ga", ri), ("a_snap", ri), ("Fa", ri), ("Gw", cs), ("w_snap", cs),
                          ("Fw", cs)):
                arr = getattr(self, k)
                st[k] = arr[sl].copy() if arr.size else arr.copy()
            states.append(st)
        return states

    def _ring_push(self):
        if self._ring is None:
            L = self.layout
            payloads = [("dso", part, self.params, L.col_bounds, L.col_cnt)
                        for part in self.partitions()]
            self._ring = actor_engine(DSOPartitionActor, payloads, self.opts)
        self._ring.push(self._ring_states(), [g.bit_generator.state for g in self.streams],
                        self._ring_meta(), (self.t - 1) * self.p + self.r)

    def _ring_pull(self):
        states, rngs = self._ring.fetch(self._ring_round, self._ring_restore, self._ring_meta)
        L = self.layout
        for q, st in enumerate(states):
            ri = slice(int(L.row_bounds[q]), int(L.row_bounds[q + 1]))
            s = int(st["block"])
            cs = slice(int(L.col_bounds[s]), int(L.col_bounds[s + 1]))
            u = (q - 1) % self.p
            cu = slice(int(L.col_bounds[u]), int(L.col_bounds[u + 1]))
            self.alpha[ri] = st["alpha"]
            self.a_sum[ri] = st["a_sum"]
            self.w[cs] = st["w"]
            self.w_sum[cu] = st["w_sum"]
            for k, sl in (("Ga", ri), ("a_snap", ri), ("Fa", ri), ("Gw", cs), ("w_snap", cs),
                          ("Fw", cs)):
                arr = getattr(self, k)
                if arr.size:
                    arr[sl] = st[k]
        self.streams = [rng_from_state(g) for g in rngs]

    def _ring_svrg(self):
        """SVRG snapshot on the ring at the start of epoch t (r = 0, partition q
        holds block q); returns the (w_snap, Fw) of each partition's held block.

        The snapshot's ``X wbar`` and ``v(abar)`` are the serial solver's: the
        restart test's pass when it ran at this update count (the client then
        holds the ring's state and sends each partition its margins), else each
        partition's :func:`~.blocks.snapshot_partials` at the gathered ``wbar``,
        the ``v`` parts added in partition order."""
        ring = self._ring
        prob = self.problem
        L = self.layout
        cached = self._cached_iterate()
        if cached is not None and cached[2] is not None:   # the restart test's pass
            margins, v = cached[1], cached[2]
            wbar = self.w.copy()
            futs = [a.svrg_local(wbar, margins[int(L.row_bounds[q]):int(L.row_bounds[q + 1])])
                    for q, a in enumerate(ring.pset.actors)]
            ring.pset.wait(futs, "SVRG snapshot")
        else:
            held = ring.pset.call_all("held_w", 0, what="SVRG snapshot")
            wbar = np.concatenate(held)
            vs = ring.pset.call_all("svrg_local", wbar, None, what="SVRG snapshot")
            v = vs[0].copy()
            for vq in vs[1:]:
                v += vq
            self.feature_accesses += 2 * L.nnz
        Fw = np.zeros(prob.d)
        empty = np.zeros(0)
        svrg_full_gradient(RowSide(*(empty,) * 9),
                           ColSide(empty, L.col_cnt, empty, wbar, Fw), empty, v,
                           self.params.spec())
        self.snap_epoch = self.t
        return [(wbar[int(L.col_bounds[q]):int(L.col_bounds[q + 1])],
                 Fw[int(L.col_bounds[q]):int(L.col_bounds[q + 1])]) for q in range(self.p)]

    def _ring_round(self):
        """Inner iteration r of epoch t on the ring (bulk-synchronous)."""
        ring = self._ring
        snaps = None
        if self.r == 0 and self.params.svrg and self.snap_epoch != self.t:
            snaps = self._ring_svrg()
        eta = self.step_size()
        end = self.r == self.p - 1
        futs = [a.step(self.r, eta, None if snaps is None else snaps[q], end)
                for q, a in enumerate(ring.pset.actors)]
        res = ring.pset.wait(futs, f"DSO epoch {self.t} inner iteration {self.r}")
        for q, r in enumerate(res):
            if r[4] != SENT:        # the next owner's worker is gone, or will be seen gone
                ring.lost_partner((q - 1) % self.p, f"partition {q} could not pass its "
                                  f"block to partition {(q - 1) % self.p}")
        sizes = self.layout.block_sizes()
        for q, (status, *_) in enumerate(res):
            s = sigma(q, self.r, self.p)
            self._book_block(status, q, s, sizes[q, s])
        ring.time_compute += max(r[2] for r in res)
        ring.time_send += max(r[3] for r in res)
        self.r += 1
        if self.r == self.p:
            self.r = 0
            self.n_avg += 1
            self.t += 1


class DSOPartitionActor:
    """Partition ``q`` of DSO on its worker (see the module docstring).

    ``source = ("dso", part, params, col_bounds, col_cnt)``: a
    :class:`~primaldual.solvers.dso.blocks.RowPartition` with its static arrays (the
    state arrays are set by :meth:`set_state`), the
    :class:`~primaldual.solvers.dso.blocks.DSOParams`, the column block bounds and
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
        self.generation = 0         # of the last set_state: a block sent before it is stale
        self.aborted = False        # set by abort(): stop waiting for a block's delivery

    def describe(self):
        return {"n": int(self.part.y.shape[0]), "nnz": int(self.part.vals.shape[0])}

    async def ping(self):
        """Answered by the worker's event loop, so a partition busy computing
        is seen alive (a slow round then gives RoundTimeoutError, not a recovery)."""
        return True

    async def abort(self):
        """Run on the worker's event loop while a step may be waiting to deliver its
        block to a lost worker: that step gives up (a recovery follows)."""
        self.aborted = True
        return True

    def _wblock(self, s, w, Gw, w_snap, Fw):
        j0, j1 = int(self.col_bounds[s]), int(self.col_bounds[s + 1])
        return WBlock(r=s, col_start=j0, w=w, col_cnt=self.col_cnt[j0:j1], Gw=Gw,
                      w_snap=w_snap, Fw=Fw)

    def set_state(self, st, rng_state, next_actor, timeout):
        """Partition arrays, the held block ``st['block']`` and ``w_sum`` of block
        ``q - 1 mod p`` (the block this partition holds at the end of an epoch)."""
        part = self.part
        # the primal weight (the step scales) moves at restarts: part of the state
        w_scale, a_scale = (float(x) for x in st["step_scales"])
        self.params = dataclasses.replace(self.params, w_scale=w_scale, a_scale=a_scale)
        for k in ("alpha", "Ga", "a_snap", "Fa"):
            setattr(part, k, np.array(st[k], dtype=np.float64))
        self.a_sum = np.array(st["a_sum"], dtype=np.float64)
        self.w_sum = np.array(st["w_sum"], dtype=np.float64)
        s = int(st["block"])
        self.inbox = {s: self._wblock(s, *(np.array(st[k], dtype=np.float64)
                                            for k in ("w", "Gw", "w_snap", "Fw")))}
        self.rng = rng_from_state(rng_state)
        self.next = next_actor
        self.timeout = float(timeout)
        self.generation = int(st.get("generation", 0))
        self.aborted = False
        return True

    def get_state(self, r):
        """State at the start of inner iteration ``r`` (block ``sigma_r(q)`` held)."""
        s = sigma(self.q, r, self.p)
        blk = self.inbox[s]
        part = self.part
        return ({"alpha": part.alpha.copy(), "Ga": part.Ga.copy(), "a_snap": part.a_snap.copy(),
                 "Fa": part.Fa.copy(), "a_sum": self.a_sum.copy(), "w_sum": self.w_sum.copy(),
                 "block": s, "w": blk.w.copy(), "Gw": blk.Gw.copy(),
                 "w_snap": blk.w_snap.copy(), "Fw": blk.Fw.copy(),
                "step_scales": np.array([self.params.w_scale, self.params.a_scale])},
                self.rng.bit_generator.state)

    def held_w(self, r):
        """The ``w`` of the block held at the start of inner iteration ``r``."""
        return self.inbox[sigma(self.q, r, self.p)].w.copy()

    async def receive(self, generation, s, w, Gw, w_snap, Fw):
        """Called by the previous owner: file block ``s`` for the next inner
        iteration; a block sent before the last :meth:`set_state` (a step that
        finished while a recovery began) is dropped."""
        if int(generation) != self.generation:
            return False
        self.inbox[int(s)] = self._wblock(int(s), w, Gw, w_snap, Fw)
        return True

    # -------------------------------------------------------- SVRG snapshot
    def svrg_local(self, wbar, margins=None):
        """Snapshot ``abar = alpha`` and ``Fa`` at ``margins = X_q wbar`` (computed
        here by :func:`~.blocks.snapshot_partials` when not given); returns
        ``v_q = sum_{i in I_q} (c_i/W) abar_i x_i`` (length d), or None when the
        margins were given (the client has ``v`` then)."""
        part = self.part
        part.a_snap[:] = part.alpha
        v = None
        if margins is None:
            margins, v = snapshot_partials(part, self.col_bounds, wbar)
        empty = np.zeros(0)
        svrg_full_gradient(
            RowSide(part.alpha, part.a_lo, part.a_hi, part.y, part.cw, part.row_cnt, part.Ga,
                    part.a_snap, part.Fa),
            ColSide(empty, empty, empty, empty, empty), np.asarray(margins), empty,
            self.params.spec())
        return v

    # ------------------------------------------------------------ the ring
    def step(self, r, eta, snap=None, end_of_epoch=False):
        """Inner iteration ``r``: block ``(q, sigma_r(q))``, then pass the block on.

        ``snap = (w_snap, Fw)`` of the held block at the start of an SVRG epoch.
        Returns ``(status, n_updates, compute_seconds, send_seconds, sent)``.
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
        sent = SENT
        if self.p == 1:
            self.inbox[s] = blk
        else:
            call = self.next.receive(self.generation, s, blk.w, blk.Gw, blk.w_snap, blk.Fw)
            if inspect.iscoroutine(call):
                # next owner on this worker: Dask hands back the coroutine itself
                # (no transfer); it never suspends, so run it to completion here
                try:
                    call.send(None)
                except StopIteration:
                    pass
            else:
                sent = self._delivered(call)
        return int(status), int(pos), tc, time.perf_counter() - t1, sent

    def _delivered(self, call):
        """Wait for the block's delivery: SENT, or NOT_SENT when the next owner's
        worker cannot be reached (connecting to a dead worker retries for
        Dask's connect timeout) or :meth:`abort` was called, or when
        ``timeout`` passed; the client then checks for a lost worker."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                call.result(timeout=0.1)
                return SENT
            except TimeoutError:
                if self.aborted or time.monotonic() > deadline:
                    return NOT_SENT
            except OSError:
                return NOT_SENT
