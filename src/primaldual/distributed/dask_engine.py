"""The Dask engine: CoCoA+'s rounds on the placed partitions
(:mod:`.partition_set`), recovery snapshots and worker-loss recovery.

Each partition's actor keeps ``alpha_[k]``, its stream and a copy of ``v``.

A round: the client sends each actor the last change of ``v`` (the new
values on the columns that changed) and the round parameters; each actor
runs the shared kernel on its block and returns its sparse ``Delta v_k``; the
client adds ``gamma Delta v_k`` partition by partition (the order the local
engine uses) and keeps the new values for the next round.

Fault handling: the state is ``(alpha, v, streams)``.  A snapshot of it is
taken at every certificate (``alpha`` is gathered then anyway) and every
``recovery_every`` rounds, in client memory or in ``recovery_dir``.  When an
actor call fails because its worker died, the engine waits for a live worker,
re-creates the lost actors there (reloading their part files, re-sending
their arrays or recomputing their Dask chunks), rolls every partition back to
the snapshot and replays the rounds since, each with the parameters it ran
with: the replay uses the same streams, so the state is again the one of the
round that was lost -- whichever call lost the worker (a round, a
certificate, a state fetch) -- and the fit ends exactly where an
uninterrupted fit would.  A part file that no longer holds the rows it held
(truncated, or rewritten with other values or labels, told by a digest of its
content taken when it is first read) is refused, naming the file.  A round that does
not finish within ``round_timeout`` seconds on live workers raises
:class:`RoundTimeoutError`; nothing waits forever.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from .._util import atomic_write
from ..validation import raise_nonfinite
from .block import LINE_SEARCH
from .engine import Engine, assemble_certificate
from .line_step import sum_terms, summed_step
from .partition_set import PartitionSet, WorkerLostError, _Lost, place_problem

__all__ = ["DaskEngine"]


class DaskEngine(Engine):
    """Partitions on Dask workers (see the module docstring)."""

    backend = "dask"

    def __init__(self, pset: PartitionSet, part_ptr, d, problem_consts, opts):
        self.pset = pset
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.n = int(self.part_ptr[-1])
        self.d = int(d)
        self.lam = float(problem_consts["lam"])
        self.W = float(problem_consts["W"])
        self.penalty = problem_consts["penalty"]
        self.recovery_every = opts.recovery_every
        self.recovery_dir = opts.recovery_dir
        self.max_recoveries = int(opts.max_recoveries)
        self.v = np.zeros(self.d)
        self.sync = None
        #: the last round's summed step, sent with the next call (line_search)
        self.step = None
        self._changed = np.zeros(self.d, dtype=bool)
        self.round = 0
        self.recoveries = 0
        self.time_rounds = 0.0
        self.time_compute = 0.0
        self.n_rounds_timed = 0
        self._snap = None
        self._snap_round = 0
        #: the parameters of every round since the snapshot, to replay them
        self._rounds_since_snap = []

    # ------------------------------------------------------ constructors
    @classmethod
    def from_problem(cls, problem, part_ptr, opts):
        """Place an in-memory :class:`~primaldual.problem.Problem` on the workers:
        each partition's rows are sent once, straight to its worker."""
        pset = place_problem(problem, part_ptr, opts.client, opts.round_timeout)
        consts = {"lam": problem.lam, "W": problem.W, "penalty": problem.penalty}
        return cls(pset, part_ptr, problem.d, consts, opts)

    @classmethod
    def from_partitioned(cls, pproblem, opts):
        pset = pproblem.pset
        pset.timeout = float(opts.round_timeout)
        consts = {"lam": pproblem.lam, "W": pproblem.W, "penalty": pproblem.penalty}
        return cls(pset, pproblem.part_ptr, pproblem.d, consts, opts)

    # ------------------------------------------------------------- state
    def set_curvature(self, beta):
        self.pset.set_curvature(beta)

    def set_threads(self, n_jobs):
        self.pset.set_threads(n_jobs)

    def _push_state(self, alpha_blocks, v, rng_states):
        futs = [self.pset.actors[k].set_state(alpha_blocks[k], v, rng_states[k])
                for k in range(self.K)]
        self.pset.wait(futs, "set_state")
        self.v = np.array(v, dtype=np.float64)
        self.sync = None
        self.step = None

    def set_state(self, alpha, v, rng_states):
        blocks = [np.array(alpha[a:b]) for a, b in zip(self.part_ptr[:-1], self.part_ptr[1:])]
        self._with_recovery(lambda: self._push_state(blocks, v, rng_states))
        self._take_snapshot(blocks, rng_states)

    def get_state(self):
        snap = self._current_state()
        return np.concatenate(snap["alpha"]), self.v.copy(), snap["rng"]

    def _current_state(self):
        def fetch():
            res = self.pset.call_all("get_state", self.step, what="get_state")
            self.step = None
            return res
        res = self._with_recovery(fetch)
        return {"alpha": [r[0] for r in res], "rng": [r[1] for r in res]}

    # --------------------------------------------------------- snapshots
    def _take_snapshot(self, alpha_blocks, rng_states):
        self._snap_round = self.round
        self._rounds_since_snap = []
        snap = {"round": self.round, "alpha": [np.array(a) for a in alpha_blocks],
                "rng": list(rng_states), "v": self.v.copy()}
        if self.recovery_dir is not None:
            path = Path(self.recovery_dir)
            with atomic_write(path / "recovery.npz") as fh:
                np.savez(fh, round=np.array(self.round), v=snap["v"],
                         rng=np.array(json.dumps(snap["rng"])),
                         **{f"alpha_{k}": a for k, a in enumerate(snap["alpha"])})
            self._snap = {"path": path / "recovery.npz"}
        else:
            self._snap = snap

    def _load_snapshot(self):
        if self._snap is None:
            raise WorkerLostError("a worker was lost before the first snapshot")
        if "path" not in self._snap:
            return self._snap
        with np.load(self._snap["path"], allow_pickle=False) as z:
            return {"round": int(z["round"]), "v": z["v"],
                    "rng": json.loads(str(z["rng"])),
                    "alpha": [z[f"alpha_{k}"] for k in range(self.K)]}

    def _recover(self, lost):
        self.recoveries += 1
        if self.recoveries > self.max_recoveries:
            raise WorkerLostError(f"lost the workers of partitions {lost.parts}; that is "
                                  f"recovery {self.recoveries}, more than "
                                  f"max_recoveries={self.max_recoveries}")
        self._free_survivors(lost.parts)
        self.pset.replace(lost.parts)
        snap = self._load_snapshot()
        self._push_state(snap["alpha"], snap["v"], snap["rng"])
        self.round = snap["round"]
        self._restore_extras()
        # replay the rounds since the snapshot with their own parameters (same
        # streams, same order): the state is again the one of the round that was
        # lost, whatever call (a round, a certificate, a state fetch) lost it
        for params in self._rounds_since_snap:
            self._one_round(*params, log=False)

    def _free_survivors(self, lost_parts):
        """Hook before the lost partitions are re-created (nothing to do here)."""

    def _restore_extras(self):
        """Hook after the snapshot's state is pushed, before the replay (nothing here)."""

    def _recover_until_done(self, lost):
        while True:
            try:
                self._recover(lost)
                return
            except _Lost as again:         # another loss while recovering
                lost = _Lost(sorted(set(lost.parts) | set(again.parts)))

    def _with_recovery(self, fn):
        while True:
            try:
                return fn()
            except _Lost as e:
                self._recover_until_done(e)

    # ------------------------------------------------------------ rounds
    def _one_round(self, mode, m, sigma_dot, gamma, log=True):
        t0 = time.perf_counter()
        futs = [a.round(self.sync, self.local_mode(mode), m, sigma_dot, gamma, self.step)
                for a in self.pset.actors]
        res = self.pset.wait(futs, f"round {self.round}")
        self.step = None
        for k, (cols, vals, a, st, bad, tc, _) in enumerate(res):
            if st != 0:
                raise_nonfinite(self.lam, int(self.part_ptr[k]) + bad)
        union = self._take_round(mode, gamma, res)
        if 2 * union.size >= self.d:
            # most columns changed: the whole v (8 bytes a column) is smaller
            # than its changed entries with their indices (16 bytes a column)
            self.sync = ("full", self.v.copy(), None)
        else:
            self.sync = ("cols", union, self.v[union].copy())
        self.round += 1
        if log:
            self._rounds_since_snap.append((mode, m, sigma_dot, gamma))
        self.time_rounds += time.perf_counter() - t0
        self.time_compute += max(r[5] for r in res)
        self.n_rounds_timed += 1
        return sum(int(r[2]) for r in res)

    def local_mode(self, mode):
        """The mode the partitions' rounds run with."""
        return mode

    def _take_round(self, mode, gamma, res):
        """Add the partitions' changes ``gamma Delta v_k`` to ``v`` in partition
        order (``gamma`` from the step on their sum with ``aggregation=
        "line_search"``); the columns of ``v`` that changed."""
        if mode & LINE_SEARCH:
            gamma = self._summed_step([(cols, vals) for cols, vals, *_ in res],
                                      [r[6] for r in res])
        changed = self._changed        # the union of the changed columns, in O(d)
        changed[:] = False
        for cols, vals, *_ in res:
            self.v[cols] += gamma * vals
            changed[cols] = True
        return np.flatnonzero(changed)

    def _summed_step(self, changes, terms0):
        """The step on the summed update (:mod:`.line_step`); the partitions take
        it with the next call (``self.step``); the caller adds ``theta Delta v_k``
        to ``v``.  The search's first evaluation, at ``theta = 0``, came with the
        round (``terms0``): a quadratic dual's step costs no further call."""
        def evaluate(thetas):
            if thetas == (0.0,) and all(t is not None for t in terms0):
                return [sum_terms([p for part in terms0 for p in part])]
            parts = self.pset.call_all("line_terms", thetas, what=f"round {self.round}")
            return [sum_terms([p for part in parts for p in part[j]])
                    for j in range(len(thetas))]
        theta, trials = summed_step(evaluate, self.v, changes, self.lam, self.W)
        self.step = float(theta)
        self.note_step(theta, trials)
        return theta

    def run(self, mode, m, sigma_dot, gamma, n_rounds):
        target = self.round + n_rounds
        acc = 0
        while self.round < target:
            try:
                acc += self._one_round(mode, m, sigma_dot, gamma)
            except _Lost as e:
                self._recover_until_done(e)    # back at the round that was lost
                continue
            if (self.recovery_every is not None and self._snap is not None
                    and self.round - self._snap_round >= self.recovery_every):
                snap = self._current_state()
                self._take_snapshot(snap["alpha"], snap["rng"])
        return acc

    # ------------------------------------------------------- certificate
    def certificate(self, w):
        def fetch():
            res = self.pset.call_all("certificate", self.sync, self.step, what="certificate")
            self.step = None
            return res
        res = self._with_recovery(fetch)
        parts = [(ls, cs, vs, mg) for ls, cs, vs, mg, _, _ in res]
        alpha_blocks = [r[4] for r in res]
        cert = assemble_certificate(parts, w, np.concatenate(alpha_blocks), self.penalty,
                                    self.W)
        self.v = cert.v.copy()
        self.sync = ("full", self.v.copy(), None)
        self._take_snapshot(alpha_blocks, [r[5] for r in res])
        return cert

    # ------------------------------------------------------- ESO passes
    def gram_matvec(self, z):
        res = self._with_recovery(lambda: self.pset.call_all("gram_matvec", z))
        out = np.zeros(self.d)
        for r in res:
            out += r
        return out

    def column_counts(self):
        res = self._with_recovery(lambda: self.pset.call_all("column_counts"))
        out = np.zeros(self.d)
        for r in res:
            out += r
        return out

    def omega_ratio(self, omega):
        return max(self._with_recovery(lambda: self.pset.call_all("omega_ratio", omega)))

    def info(self):
        out = {"recoveries": int(self.recoveries), **self.step_info()}
        if self.n_rounds_timed:
            out["round_ms"] = 1e3 * self.time_rounds / self.n_rounds_timed
            out["round_compute_ms"] = 1e3 * self.time_compute / self.n_rounds_timed
        return out
