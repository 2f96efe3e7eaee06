"""DSO on the Dask ring: the driver half of :class:`~primaldual.solvers.dso.DSOSolver`.

The explicit state is the serial one; between inner iterations partition q's
worker holds its rows' part of it and the column block sigma_r(q) (see
:mod:`primaldual.distributed.ring`, whose actors run the blocks).
:meth:`DSORingDriver._ring_push` scatters the state, :meth:`_ring_pull`
gathers it; :meth:`_ring_round` runs one bulk-synchronous inner iteration.
"""
from __future__ import annotations

import numpy as np

from ..._util import rng_from_state
from ...blocks.dso import sigma
from ...distributed.ring import ring_engine
from ...kernels.dso import ColSide, RowSide, svrg_full_gradient

__all__ = ["DSORingDriver"]


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
                  "params": self.params}
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
            # distributed.ring's DSOPartitionActor in an ActorStateEngine
            self._ring = ring_engine(payloads, self.opts)
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
        holds block q): gather w (d floats), broadcast it, all-reduce v; returns
        the (w_snap, Fw) of each partition's held block."""
        ring = self._ring
        prob = self.problem
        L = self.layout
        held = ring.pset.call_all("held_w", 0, what="SVRG snapshot")
        wbar = np.concatenate(held)
        vs = ring.pset.call_all("svrg_local", wbar, what="SVRG snapshot")
        v = vs[0].copy()
        for vq in vs[1:]:
            v += vq
        Fw = np.zeros(prob.d)
        empty = np.zeros(0)
        svrg_full_gradient(RowSide(*(empty,) * 9),
                           ColSide(empty, L.col_cnt, empty, wbar, Fw), empty, v,
                           self.params.spec())
        self.feature_accesses += 2 * L.nnz
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
        sizes = self.layout.block_sizes()
        for q, (status, _, _, _) in enumerate(res):
            s = sigma(q, self.r, self.p)
            self._book_block(status, q, s, sizes[q, s])
        ring.time_compute += max(r[2] for r in res)
        ring.time_send += max(r[3] for r in res)
        self.r += 1
        if self.r == self.p:
            self.r = 0
            self.n_avg += 1
            self.t += 1
