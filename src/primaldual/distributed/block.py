"""One or more contiguous data partitions and the work done on them.

A :class:`PartitionBlock` owns rows, labels, weights, the dual block
``alpha`` and a copy of the dual image ``v`` for one or several contiguous
partitions, plus one random stream per partition.  It is the unit of work of
both engines:

* :class:`~primaldual.distributed.engine.LocalEngine` holds one block with
  all ``K`` partitions (simulated distribution on one machine);
* :class:`~primaldual.distributed.dask_engine.DaskEngine` holds one block
  per partition inside a Dask actor on a worker.

Both call the same compiled kernels in the same order, so with the same
partitioning and streams they produce the same numbers.
"""
from __future__ import annotations

import numpy as np

from .._util import seed_entropy, spawn_streams
from ..rows import Rows, as_rows
from ..validation import check_X
from ..losses.dispatch import BUILTIN
from ..kernels.minibatch import DualState, RoundOut, RoundSpec, RoundWork, partition_rounds
from ..kernels.objective import certificate_pass
from ..kernels.subspace_step import (apply_subspace_step, subspace_max_step,
                                     subspace_terms)
from ..kernels.summed_step import apply_summed_step, line_terms
from ..kernels.views import RowsView, StepSpec
from .._util.threads import part_threads, run_parts, run_threads
from ..blocks.sdca_threads import auto_sync_every
from .local_sdca import local_deflated_round, local_sdca_round

__all__ = ["PartitionBlock", "contiguous_partition", "partition_coefficients", "spawn_streams",
           "stream_entropy", "MODE_COCOA_SDCA", "LINE_SEARCH", "SUBSPACE"]

#: the round mode of CoCoA+ with the serial SDCA kernel as local solver
#: (:mod:`.local_sdca`; 0 and 1 are the kernel's MODE_MSDCA and MODE_COCOA,
#: kernels/minibatch.py)
MODE_COCOA_SDCA = 2

#: a flag on a round mode: the driver picks the step on the summed update
#: between rounds (CoCoA+ ``aggregation="line_search"``, :mod:`.line_step`)
LINE_SEARCH = 16

#: a flag on a round mode: the driver picks the step on the span of the
#: partitions' changes and the last aggregated ones (CoCoA+
#: ``aggregation="subspace"``, :mod:`.subspace_step`)
SUBSPACE = 32


def contiguous_partition(n: int, n_parts: int) -> np.ndarray:
    """Boundaries ``part_ptr`` (K+1,) of ``n`` rows split into ``n_parts``
    contiguous blocks whose sizes differ by at most one (``numpy.array_split``)."""
    if not isinstance(n_parts, (int, np.integer)) or isinstance(n_parts, bool) or n_parts < 1:
        raise ValueError(f"n_partitions must be a positive integer, got {n_parts!r}")
    if n_parts > n:
        raise ValueError(f"n_partitions={n_parts} is larger than the number of samples "
                         f"n={n}; use at most n partitions")
    sizes = np.array([len(a) for a in np.array_split(np.arange(n), n_parts)], np.int64)
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def partition_coefficients(theta, k, K) -> np.ndarray:
    """Partition ``k``'s coefficients of the step on a subspace
    (``aggregation="subspace"``, ``theta`` of length ``K + used``): its own
    change's ``theta[k]``, then the remembered steps' ``theta[K:]``."""
    theta = np.asarray(theta, dtype=np.float64)
    return np.concatenate((theta[k:k + 1], theta[K:]))


def stream_entropy(random_state, rng) -> int:
    """The root entropy of the partition streams: ``random_state`` itself
    when it is an int, otherwise one draw from the solver's generator."""
    return seed_entropy(random_state, rng)


def next_sig_rest(sig_rest, theta, sig_top):
    """The deflated coupling's factor on the rest after a round whose summed
    update took the step ``theta`` (:meth:`PartitionBlock.apply_step`)."""
    if theta < 0.9:
        sig_rest = sig_rest / max(theta, 1e-3)
    elif theta > 1.1:
        sig_rest = 0.9 * sig_rest
    return min(max(sig_rest, 1.0), max(sig_top, 1.0))


class PartitionBlock:
    """Rows ``part_ptr[0]..part_ptr[-1]`` split into partitions ``part_ptr``.

    Parameters
    ----------
    rows : Rows
        Row view of this block's data (local row numbering from 0).
    y, cw : arrays (n_local,)
        Labels and sample weights.
    part_ptr : int64 array (K+1,)
        Local partition boundaries, ``part_ptr[0] == 0``.
    loss_code, loss_param, lam, W : the problem constants (``W`` global).
    """

    def __init__(self, rows: Rows, y, cw, part_ptr, loss_code, loss_param, lam, W):
        self.rows = rows
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.cw = np.ascontiguousarray(cw, dtype=np.float64)
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.K = self.part_ptr.shape[0] - 1
        self.n = rows.n
        self.d = rows.d
        self.kind = int(loss_code)
        self.param = float(loss_param)
        self.lam = float(lam)
        self.W = float(W)
        self.sqnorm = rows.sqnorm
        self.curv = self.sqnorm.copy()
        self.alpha = np.zeros(self.n)
        self.v = np.zeros(self.d)
        self.rngs = [np.random.Generator(np.random.PCG64(0)) for _ in range(self.K)]
        # scratch (allocated once; the kernels never allocate)
        self.dalpha = np.zeros(self.n)
        self.dv = np.zeros(self.d)
        self.colmark = np.zeros(self.d, dtype=np.uint8)
        self.rowmark = np.zeros(self.n, dtype=np.uint8)
        self.perm = np.arange(self.n, dtype=np.int64)
        self.out_ptr = np.zeros(self.K + 1, dtype=np.int64)
        self._cap_m = -1
        self.row_nnz = rows.row_nnz
        self.part_nnz = np.array([int(self.rows.indptr[self.part_ptr[k + 1]]
                                      - self.rows.indptr[self.part_ptr[k]])
                                  for k in range(self.K)], dtype=np.int64)
        self.part_maxrow = np.array([int(self.row_nnz[a:b].max(initial=0)) for a, b in
                                     zip(self.part_ptr[:-1], self.part_ptr[1:])], np.int64)
        # CoCoA+ with the serial SDCA kernel as local solver (local_sdca.py)
        self.rows_view = RowsView(rows.data, rows.indices, rows.indptr, rows.iptr,
                                  self.sqnorm, self.y, self.cw)
        self.spec = StepSpec(self.kind, self.param, self.lam, 0.0, 1.0 / self.W)
        self.logit = np.full(self.n if BUILTIN[self.kind].STEP_CACHE else 0, np.nan)
        self.n_jobs = 1
        self._sync_every = None
        self._changes = None
        # aggregation="line_search": the last round's Delta alpha, not yet applied
        self.step_dalpha = np.zeros(self.n)
        # aggregation="subspace": row 0 is step_dalpha, rows 1..used the last
        # aggregated changes, the newest first (set_subspace_memory)
        self.sub_U = None
        self.sub_used = 0
        # coupling="deflated": B = X U, its squared row norms, the factors
        self.shared = None
        self.sig_top = float(self.K)
        self.sig_rest = 1.0

    # ------------------------------------------------------------ setup
    @classmethod
    def from_arrays(cls, X, y, cw, part_ptr, loss_code, loss_param, lam, W):
        return cls(as_rows(check_X(X)), y, cw, part_ptr, loss_code, loss_param, lam, W)

    def set_curvature(self, beta: float):
        """ESO weights ``v_i = beta ||x_i||^2`` (every distributed formula of Section 4.3)."""
        self.curv = float(beta) * self.sqnorm

    def set_shared_directions(self, U, sig_top, sig_rest=1.0):
        """The deflated coupling (:mod:`~primaldual.kernels.deflated`): the
        shared directions ``U`` (d, r) orthonormal, the factor ``sig_top`` on
        their span and the starting factor ``sig_rest`` on the rest, adapted
        by :meth:`apply_step`."""
        B = np.ascontiguousarray(np.asarray(self.rows.X @ U, dtype=np.float64))
        self.shared = (B, np.ascontiguousarray((B * B).sum(axis=1)))
        self.sig_top = float(sig_top)
        self.sig_rest = float(sig_rest)

    def set_subspace_memory(self, m):
        """``aggregation="subspace"``: remember the last ``m`` aggregated
        changes (none remembered yet)."""
        self.sub_U = np.zeros((1 + int(m), self.n))
        self.step_dalpha = self.sub_U[0]
        self.sub_used = 0

    def subspace_memory(self):
        """The remembered changes (used, n), the newest first."""
        if self.sub_U is None:
            return np.zeros((0, self.n))
        return self.sub_U[1:1 + self.sub_used].copy()

    def set_subspace_memory_rows(self, rows):
        """Restore :meth:`subspace_memory` (a checkpoint's)."""
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, self.n)
        used = min(rows.shape[0], self.sub_U.shape[0] - 1)
        self.sub_U[1:1 + used] = rows[:used]
        self.sub_used = used

    def subspace_terms(self, theta):
        """Per partition ``(e, g, H, feasible)`` of the loss part at the
        coefficients ``theta`` (K + used,): partition ``k`` moves along its
        own change with ``theta[k]`` and along the remembered ones with
        ``theta[K:]`` (:func:`~primaldual.kernels.subspace_step.subspace_terms`)."""
        U = self.sub_U[:1 + self.sub_used]
        p = U.shape[0]
        out = []
        for k, a, b in self._parts():
            g, H = np.zeros(p), np.zeros((p, p))
            e, ok = subspace_terms(self.kind, self.param, self.y, self.cw, self.alpha, U,
                                   a, b, self._part_coef(theta, k, p), g, H)
            out.append((float(e), g, H, bool(ok)))
        return out

    def subspace_terms_at(self, thetas):
        """:meth:`subspace_terms` at each coefficient vector of ``thetas``."""
        return [self.subspace_terms(theta) for theta in thetas]

    def _parts(self):
        """``(k, first row, end)`` of every partition of the block."""
        return [(k, int(self.part_ptr[k]), int(self.part_ptr[k + 1])) for k in range(self.K)]

    def _part_coef(self, theta, k, p):
        """Partition ``k``'s ``p`` coefficients of ``theta`` (:func:`partition_coefficients`)."""
        return partition_coefficients(theta, k, self.K)[:p]

    def subspace_max_step(self, theta, step):
        """Per partition, the largest ``t`` keeping ``alpha`` at ``theta + t
        step`` dual feasible (as :meth:`subspace_terms`)."""
        U = self.sub_U[:1 + self.sub_used]
        p = U.shape[0]
        return [float(subspace_max_step(self.kind, self.param, self.y, self.alpha, U, a, b,
                                        self._part_coef(theta, k, p),
                                        self._part_coef(step, k, p)))
                for k, a, b in self._parts()]

    def apply_subspace(self, theta):
        """Move ``alpha`` to the coefficients ``theta`` (as :meth:`subspace_terms`)
        and remember the change made, dropping the oldest beyond the memory."""
        U = self.sub_U[:1 + self.sub_used]
        p = U.shape[0]
        change = np.zeros(self.n)
        for k, a, b in self._parts():
            apply_subspace_step(self.kind, self.param, self.y, self.alpha, U, a, b,
                                self._part_coef(theta, k, p), change)
        m = self.sub_U.shape[0] - 1
        if m:
            self.sub_U[2:] = self.sub_U[1:m].copy()
            self.sub_U[1] = change
            self.sub_used = min(self.sub_used + 1, m)
        self.sub_U[0] = 0.0

    def set_state(self, alpha, v, rng_states):
        self.step_dalpha[:] = 0.0
        self.sub_used = 0
        self.alpha[:] = alpha
        self.v[:] = v
        self.logit[:] = np.nan
        for g, st in zip(self.rngs, rng_states):
            g.bit_generator.state = st

    def rng_states(self) -> list:
        return [g.bit_generator.state for g in self.rngs]

    def _ensure_capacity(self, m):
        if m == self._cap_m:
            return
        cap = int(sum(min(self.d, int(nnz), int(m) * int(mr))
                      for nnz, mr in zip(self.part_nnz, self.part_maxrow)))
        self.out_cols = np.zeros(max(cap, 1), dtype=np.int64)
        self.out_vals = np.zeros(max(cap, 1))
        sizes = np.diff(self.part_ptr)
        self.swaps = np.zeros(max(int(m), 1), dtype=np.int64)
        self.rows_buf = np.zeros(max(int(min(m, sizes.max(initial=1))), 1), dtype=np.int64)
        self._cap_m = m

    # ------------------------------------------------------------ rounds
    def run(self, mode, m, sigma_dot, gamma, n_rounds, apply_v):
        """``n_rounds`` rounds (see :func:`partition_rounds`); the uniforms of
        partition k come from its own stream, ``m`` per round.

        ``mode == MODE_COCOA_SDCA``: CoCoA+ rounds whose local solver is the
        serial SDCA kernel (:mod:`primaldual.distributed.local_sdca`); the
        partitions run on up to ``n_jobs`` threads, each with a million stored
        entries (:meth:`part_threads`; each partition's result does not depend
        on them).

        ``mode & LINE_SEARCH`` (``aggregation="line_search"``, one round): the
        round of ``mode & ~LINE_SEARCH`` with ``gamma = 1`` whose ``Delta alpha``
        is kept in ``step_dalpha`` and not applied; ``alpha`` and ``v`` stay
        as they were until :meth:`apply_step` (the driver picks the step from
        :meth:`line_terms` first).

        Returns ``(status, rounds_done, feature_accesses, bad_local_row)``.
        """
        if mode & LINE_SEARCH:
            return self._run_for_line_search(mode & ~LINE_SEARCH, m, sigma_dot, n_rounds)
        if mode == MODE_COCOA_SDCA:
            return self._run_local_sdca(int(m), float(sigma_dot), float(gamma),
                                        int(n_rounds), bool(apply_v))
        self._changes = None
        self._ensure_capacity(m)
        u = np.empty((self.K, n_rounds * m))
        for k, g in enumerate(self.rngs):
            u[k] = g.random(n_rounds * m)
        return partition_rounds(
            self.rows_view, self.spec,
            RoundSpec(self.part_ptr, self.curv, int(mode), int(m), float(sigma_dot),
                      float(gamma), bool(apply_v)),
            DualState(self.alpha, self.v), u, int(n_rounds),
            RoundWork(self.dalpha, self.dv, self.colmark, self.rowmark, self.perm,
                      self.swaps, self.rows_buf),
            RoundOut(self.out_cols, self.out_vals, self.out_ptr))

    def _run_for_line_search(self, mode, m, sigma_dot, n_rounds):
        if n_rounds != 1:
            raise ValueError("a line-search round runs alone (the step is picked "
                             "between rounds)")
        old = self.alpha.copy()
        out = self.run(mode, m, sigma_dot, 1.0, 1, False)
        np.subtract(self.alpha, old, out=self.step_dalpha)
        self.alpha[:] = old
        self.logit[:] = np.nan              # the cache held the local values
        return out

    def line_terms(self, thetas):
        """For each ``theta`` of ``thetas``, per partition: ``(e, g, h, tmax,
        quadratic)`` of the dual along ``alpha + theta step_dalpha``
        (:func:`~primaldual.kernels.summed_step.line_terms`)."""
        quadratic = BUILTIN[self.kind].QUADRATIC_DUAL
        out = []
        for theta in thetas:
            parts = []
            for k in range(self.K):
                a, b = int(self.part_ptr[k]), int(self.part_ptr[k + 1])
                e, g, h, t = line_terms(self.kind, self.param, self.y, self.cw, self.alpha,
                                        self.step_dalpha, a, b, float(theta))
                parts.append((float(e), float(g), float(h), float(t), quadratic))
            out.append(parts)
        return out

    def apply_step(self, theta):
        """``alpha += theta step_dalpha`` (kept dual feasible); ``v`` is the
        caller's.  With the deflated coupling the factor on the rest follows
        the step: ``theta < 0.9`` (the partitions overshot together) divides
        ``sig_rest`` by ``theta``, ``theta > 1.1`` (they were too cautious)
        multiplies it by 0.9, kept in ``[1, sig_top]``."""
        apply_summed_step(self.kind, self.param, self.y, self.alpha, self.step_dalpha, float(theta))
        if self.shared is not None:
            self.sig_rest = next_sig_rest(self.sig_rest, float(theta), self.sig_top)

    def _run_local_sdca(self, H, sigma_prime, gamma, n_rounds, apply_v):
        acc = 0
        # one partition and several threads (a Dask worker with n_jobs cores):
        # the threads run inside its local solver; several partitions: one
        # partition per thread
        inner = self.n_jobs if self.K == 1 and self.n_jobs > 1 else 1
        if inner > 1 and self._sync_every is None:
            self._sync_every = auto_sync_every(self.rows)
        for r in range(n_rounds):
            def task(k, stop):
                a, b = int(self.part_ptr[k]), int(self.part_ptr[k + 1])
                if b == a:
                    return 0, -1, 0, np.zeros(0, np.int64), np.zeros(0)
                if self.shared is not None:
                    return local_deflated_round(self.rows_view, self.spec, *self.shared,
                                                self.alpha, self.v, a, b, H, self.sig_top,
                                                self.sig_rest, self.rngs[k])
                return local_sdca_round(self.rows_view, self.spec, self.alpha, self.v,
                                        self.logit, a, b, H, sigma_prime, gamma,
                                        self.rngs[k], inner, self._sync_every or 0)

            threads = self.part_threads()
            if threads > 1:         # a round ends whole: an interrupt waits for the check
                results, _ = run_threads(task, self.K, n_threads=threads)
            else:
                results = [task(k, None) for k in range(self.K)]
            for status, bad, a, _, _ in results:
                acc += a
                if status != 0:
                    return status, r, acc, bad
            self._changes = [(cols, vals) for _, _, _, cols, vals in results]
            if apply_v:
                for cols, vals in self._changes:
                    self.v[cols] += gamma * vals
        return 0, n_rounds, acc, -1

    def last_changes(self) -> list:
        """Sparse ``Delta v_k`` of the last round: one (cols, vals) per partition."""
        if self._changes is not None:
            return [(c.copy(), v.copy()) for c, v in self._changes]
        return [(self.out_cols[a:b].copy(), self.out_vals[a:b].copy())
                for a, b in zip(self.out_ptr[:-1], self.out_ptr[1:])]

    # -------------------------------------------------------- certificate
    def certificate_parts(self, w):
        """Per partition: ``(loss_sum, conj_sum, sum_i c_i alpha_i x_i, X_k w)``.
        The partitions' passes are independent, so with ``n_jobs > 1`` they run
        on up to ``n_jobs`` threads, as the rounds do, and the parts are the
        same numbers."""
        r = self.rows

        def task(k, stop):
            a, b = int(self.part_ptr[k]), int(self.part_ptr[k + 1])
            vs = np.empty(self.d)
            margins = np.empty(b - a)
            ls, cs = certificate_pass(r.data, r.indices, r.indptr[a:b + 1], r.iptr[a:b + 1],
                                      self.y[a:b], self.cw[a:b], self.alpha[a:b], w,
                                      self.kind, self.param, vs, margins)
            return float(ls), float(cs), vs, margins

        return run_parts(lambda k: task(k, None), self.K, self.part_threads())

    def part_threads(self) -> int:
        """The threads the partitions run on, one each: at most ``n_jobs`` and
        ``K``, each with a million stored entries
        (:func:`~primaldual._util.threads.part_threads`)."""
        return part_threads(self.K, self.rows.nnz, self.n_jobs) if self.n_jobs > 1 else 1

    # ------------------------------------------------------- ESO support
    def gram_matvec(self, z):
        return self.rows.gram_matvec(z)

    def column_counts(self):
        return self.rows.column_counts()

    def omega_ratio(self, omega):
        return self.rows.omega_ratio(omega)

    def stats(self) -> dict:
        return {"n": int(self.n), "nnz": int(self.rows.nnz), "W": float(self.cw.sum()),
                "sqnorm_max": float(self.sqnorm.max(initial=0.0))}

