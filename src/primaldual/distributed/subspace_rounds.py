"""CoCoA+'s step on a subspace (``aggregation="subspace"``) on Dask.

The rounds are those of :meth:`~primaldual.distributed.engine.LocalEngine._run_subspace`
with the partitions on their workers:

1. each actor applies the last round's coefficients (sent with this call,
   its own ``theta[k]`` and the remembered steps' ``theta[K:]``), takes the
   new ``v`` and runs its safe ``sigma' = K`` local subproblem, keeping its
   change ``Delta alpha_[k]`` unapplied; it returns the change's image
   ``Delta v_k`` (sparse);
2. the client forms ``Z`` (the ``K`` images and the last ``m`` steps' images,
   :func:`~.subspace_step.directions`) and runs the Newton search of
   :func:`~.subspace_step.subspace_step`: each evaluation is one call to every
   actor for its loss terms at its coefficients, added in partition order
   (:func:`~.subspace_step.join_terms`), each largest feasible step one call;
3. ``v += theta Z`` on the client, which the actors take with their next call.

Each actor keeps the dual changes of the remembered steps on its own rows
(``(1 + m) n_k`` numbers); the client keeps their images in ``v`` (``m d``).
So the Dask run equals the in-process run with the same partitions.  A
round costs one call for the local passes plus ``1 + 2 s`` calls for ``s``
Newton steps on the coefficients (at most 12, usually 2-4).

Recovery: a snapshot also holds every partition's remembered changes and the
client's images, restored before the rounds since the snapshot are replayed.
"""
from __future__ import annotations

import numpy as np

from .block import LINE_SEARCH, SUBSPACE, partition_coefficients
from .dask_engine import DaskEngine
from .subspace_step import directions, join_terms, remember, subspace_step

__all__ = ["SubspaceDaskEngine", "HALVINGS_A_CALL"]

#: at most this many halvings of a Newton step on the coefficients are
#: evaluated in one call (1, 2, 4, ... until one raises the dual; the terms
#: cost ``O(n_k (1 + memory)^2)`` each on a worker, less than a call)
HALVINGS_A_CALL = 8


class SubspaceDaskEngine(DaskEngine):
    """:class:`~.dask_engine.DaskEngine` whose rounds can take the step on a
    subspace (module docstring); other modes run as in the base engine."""

    def __init__(self, pset, part_ptr, d, problem_consts, opts):
        super().__init__(pset, part_ptr, d, problem_consts, opts)
        self.sub_m = 0
        self.sub_dv = np.zeros((0, self.d))
        self._sub_snap = None

    # ------------------------------------------------------------ memory
    def set_subspace_memory(self, m):
        """Remember the last ``m`` steps (on the actors: their dual changes;
        here: their images in ``v``); none remembered yet."""
        self.sub_m = int(m)
        self.sub_dv = np.zeros((0, self.d))
        self._with_recovery(lambda: self.pset.call_all(
            "subspace", "set_subspace_memory", self.sub_m, what="set_subspace_memory"))
        self._sub_snap = self._memory_snapshot()

    def subspace_memory(self):
        """``(dual changes (used, n), their images (used, d))``, the newest first."""
        rows = self._with_recovery(self._fetch_memory)
        return np.hstack(rows), self.sub_dv.copy()

    def set_subspace_memory_rows(self, dalpha, dv):
        """Restore :meth:`subspace_memory` (a checkpoint's)."""
        dalpha = np.asarray(dalpha, dtype=np.float64).reshape(-1, self.n)
        blocks = [dalpha[:, a:b] for a, b in zip(self.part_ptr[:-1], self.part_ptr[1:])]
        self._with_recovery(lambda: self._push_memory(blocks))
        self.sub_dv = np.asarray(dv, dtype=np.float64).reshape(-1, self.d)[:self.sub_m].copy()
        self._sub_snap = self._memory_snapshot()

    def _fetch_memory(self):
        self._send_step()
        return self.pset.call_all("subspace", "subspace_memory", what="subspace memory")

    def _push_memory(self, blocks):
        futs = [self.pset.call(k, "subspace", "set_subspace_memory_rows", blocks[k])
                for k in range(self.K)]
        self.pset.wait(futs, "set subspace memory")

    def _send_step(self):
        """Let the actors take the last round's coefficients now."""
        if self.step is not None:
            self.pset.call_all("get_state", self.step, what="subspace step")
            self.step = None

    # --------------------------------------------------------- snapshots
    def _memory_snapshot(self):
        if not self.sub_m:
            return None
        rows = self._with_recovery(self._fetch_memory)
        return {"rows": rows, "dv": self.sub_dv.copy()}

    def _take_snapshot(self, alpha_blocks, rng_states):
        # the memory first: a worker lost while it is fetched is recovered
        # from the previous snapshot, both halves of which are still in place
        memory = self._memory_snapshot()
        super()._take_snapshot(alpha_blocks, rng_states)
        if memory is not None:
            self._sub_snap = memory

    def _restore_extras(self):
        """The snapshot's memory on every actor (re-created ones included) and here."""
        if not self.sub_m:
            return
        self.pset.wait([a.subspace("set_subspace_memory", self.sub_m)
                        for a in self.pset.actors], "set_subspace_memory")
        self._push_memory(self._sub_snap["rows"])
        self.sub_dv = self._sub_snap["dv"].copy()

    # ------------------------------------------------------------ rounds
    def local_mode(self, mode):
        """A subspace round's partitions keep their changes unapplied, as a
        line-search round's do."""
        return (mode & ~SUBSPACE) | LINE_SEARCH if mode & SUBSPACE else mode

    def _take_round(self, mode, gamma, res):
        if not mode & SUBSPACE:
            return super()._take_round(mode, gamma, res)
        K = self.K
        Z = directions([(cols, vals) for cols, vals, *_ in res], self.sub_dv, self.d)
        theta, calls = subspace_step(self._terms, self._max_step, self.v, Z, K,
                                     self.lam, self.W, batch=HALVINGS_A_CALL)
        step = theta @ Z
        self.v += step
        self.sub_dv = remember(self.sub_dv, step, self.sub_m)
        self.step = ("subspace", K, theta)
        self.note_step(float(np.mean(theta[:K])), calls)
        return np.flatnonzero(step)

    def _terms(self, thetas):
        K = self.K
        futs = [self.pset.call(k, "subspace", "subspace_terms_at",
                               [partition_coefficients(t, k, K) for t in thetas])
                for k in range(K)]
        parts = self.pset.wait(futs, f"round {self.round}")
        return [join_terms([p[j][0] for p in parts], K, theta.shape[0])
                for j, theta in enumerate(thetas)]

    def _max_step(self, theta, step):
        K = self.K
        futs = [self.pset.call(k, "subspace", "subspace_max_step",
                               partition_coefficients(theta, k, K),
                               partition_coefficients(step, k, K)) for k in range(K)]
        return min(p[0] for p in self.pset.wait(futs, f"round {self.round}"))
