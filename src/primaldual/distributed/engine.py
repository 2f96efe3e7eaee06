"""The engine interface shared by every partitioned (distributed) solver, and
its in-process implementation.

A solver that works in rounds over ``K`` data partitions (distributed
mini-batch SDCA, CoCoA+) talks to an engine only:

``set_curvature(beta)``           ESO weights ``v_i = beta ||x_i||^2``
``set_state(alpha, v, rng_states)`` / ``get_state()``   the explicit state
``run(mode, m, sigma_dot, gamma, n_rounds)``   rounds; returns feature accesses
``certificate(w)``                exact primal/dual pieces, summed over partitions
``gram_matvec(z)``, ``column_counts()``, ``omega_ratio(omega)``   ESO quantities

:class:`LocalEngine` runs all partitions in this process (one
:class:`~primaldual.distributed.block.PartitionBlock`);
:class:`~primaldual.distributed.dask_engine.DaskEngine` runs one block per
partition on Dask workers.  They call the same kernels in the same order, so
for the same partitioning and seed they give the same iterates.
"""
from __future__ import annotations

import numpy as np

from ..problem import Certificate
from ..validation import raise_nonfinite
from .block import LINE_SEARCH, SUBSPACE, PartitionBlock, spawn_streams
from .line_step import sum_terms, summed_step
from .subspace_step import directions, join_terms, remember, subspace_step

__all__ = ["Engine", "LocalEngine", "assemble_certificate"]


def assemble_certificate(parts, w, alpha, penalty, W) -> Certificate:
    """Sum per-partition pieces (in partition order) into an exact certificate.

    ``parts`` is a list of ``(loss_sum, conj_sum, sum_i c_i alpha_i x_i, margins)``.
    """
    loss_sum = 0.0
    conj_sum = 0.0
    vsum = np.zeros_like(parts[0][2])
    for ls, cs, vs, _ in parts:
        loss_sum += ls
        conj_sum += cs
        vsum += vs
    v = vsum / W
    margins = np.concatenate([m for *_, m in parts])
    primal = loss_sum / W + penalty.value(w)
    dual = conj_sum / W - penalty.conjugate(v) if np.isfinite(conj_sum) else -np.inf
    return Certificate(w=w, alpha=alpha, primal=float(primal), dual=float(dual), v=v,
                       margins=margins)


class Engine:
    """Interface (see the module docstring)."""

    part_ptr: np.ndarray
    n: int
    d: int

    @property
    def K(self) -> int:
        return self.part_ptr.shape[0] - 1

    def init_streams(self, entropy: int):
        """Per-partition streams spawned from ``entropy`` (``SeedSequence.spawn``)."""
        return [g.bit_generator.state for g in spawn_streams(entropy, self.K)]

    steps_taken = 0
    step_sum = 0.0
    step_trials = 0

    def note_step(self, theta, trials):
        """Record a step on the summed update (``aggregation="line_search"``)."""
        self.steps_taken += 1
        self.step_sum += float(theta)
        self.step_trials += int(trials)

    def step_info(self) -> dict:
        if not self.steps_taken:
            return {}
        return {"mean_step": self.step_sum / self.steps_taken,
                "step_reductions": self.step_trials / self.steps_taken}

    def close(self):
        pass

    def info(self) -> dict:
        return self.step_info()


class LocalEngine(Engine):
    """All partitions in this process: the reference the Dask engine must match.

    Parameters
    ----------
    problem : Problem
    part_ptr : int64 array (K+1,)   contiguous partition boundaries
    """

    backend = "local"

    def __init__(self, problem, part_ptr):
        self.problem = problem
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.n, self.d = problem.n, problem.d
        self.block = PartitionBlock(problem.rows, problem.y, problem.sample_weight,
                                    self.part_ptr, problem.loss.code, problem.loss.param,
                                    problem.lam, problem.W)

    def set_curvature(self, beta):
        self.block.set_curvature(beta)

    def set_threads(self, n_jobs):
        """Threads for the block's rounds: one partition per thread, or, with
        one partition, threads inside its local solver."""
        self.block.n_jobs = int(n_jobs)

    def set_state(self, alpha, v, rng_states):
        self.block.set_state(alpha, v, rng_states)

    def get_state(self):
        b = self.block
        return b.alpha.copy(), b.v.copy(), b.rng_states()

    @property
    def v(self):
        return self.block.v

    def set_subspace_memory(self, m):
        """``aggregation="subspace"``: remember the last ``m`` steps (their
        dual changes on the block, their images in ``v`` here)."""
        self.block.set_subspace_memory(m)
        self.sub_m = int(m)
        self.sub_dv = np.zeros((0, self.d))

    def subspace_memory(self):
        """``(dual changes (used, n), their images (used, d))``, the newest first."""
        return self.block.subspace_memory(), self.sub_dv.copy()

    def set_subspace_memory_rows(self, dalpha, dv):
        self.block.set_subspace_memory_rows(dalpha)
        self.sub_dv = np.asarray(dv, dtype=np.float64).reshape(-1, self.d)[:self.sub_m].copy()

    def run(self, mode, m, sigma_dot, gamma, n_rounds):
        if mode & SUBSPACE:
            return self._run_subspace((mode & ~SUBSPACE) | LINE_SEARCH, m, sigma_dot,
                                      n_rounds)
        if mode & LINE_SEARCH:
            return self._run_line_search(mode, m, sigma_dot, n_rounds)
        st, done, acc, bad = self.block.run(mode, m, sigma_dot, gamma, n_rounds, True)
        if st != 0:
            raise_nonfinite(self.problem.lam, bad)
        return int(acc)

    def _driver_rounds(self, mode, m, sigma_dot, n_rounds, take_step):
        """Rounds whose local changes are not applied by the block: after each,
        ``take_step(changes)`` (the partitions' sparse ``Delta v_k``) moves
        ``alpha`` and ``v``, as the Dask engine does."""
        b = self.block
        acc = 0
        for _ in range(n_rounds):
            st, _, a, bad = b.run(mode, m, sigma_dot, 1.0, 1, False)
            if st != 0:
                raise_nonfinite(self.problem.lam, bad)
            acc += int(a)
            take_step(b.last_changes())
        return acc

    def _run_line_search(self, mode, m, sigma_dot, n_rounds):
        """Rounds with the step on the summed update
        (:mod:`~primaldual.distributed.line_step`)."""
        b = self.block

        def take_step(changes):
            theta, trials = summed_step(lambda ts: [sum_terms(p) for p in b.line_terms(ts)],
                                        b.v, changes, self.problem.lam, self.problem.W)
            b.apply_step(theta)
            for cols, vals in changes:
                b.v[cols] += theta * vals
            self.note_step(theta, trials)
        return self._driver_rounds(mode, m, sigma_dot, n_rounds, take_step)

    def _run_subspace(self, mode, m, sigma_dot, n_rounds):
        """Rounds with the step on the span of the partitions' changes and the
        remembered steps (:mod:`~primaldual.distributed.subspace_step`)."""
        b, K = self.block, self.K

        def evaluate(thetas):
            return [join_terms(b.subspace_terms(theta), K, theta.shape[0]) for theta in thetas]

        def take_step(changes):
            Z = directions(changes, self.sub_dv, self.d)
            theta, calls = subspace_step(evaluate,
                                         lambda th, st: min(b.subspace_max_step(th, st)),
                                         b.v, Z, K, self.problem.lam, self.problem.W)
            b.apply_subspace(theta)
            step = theta @ Z
            b.v += step
            self.sub_dv = remember(self.sub_dv, step, self.sub_m)
            self.note_step(float(np.mean(theta[:K])), calls)
        return self._driver_rounds(mode, m, sigma_dot, n_rounds, take_step)

    def certificate(self, w):
        parts = self.block.certificate_parts(w)
        cert = assemble_certificate(parts, w, self.block.alpha.copy(),
                                    self.problem.penalty, self.problem.W)
        self.block.v[:] = cert.v          # re-synchronize the incremental v
        return cert

    def gram_matvec(self, z):
        return self.block.gram_matvec(z)

    def column_counts(self):
        return self.block.column_counts()

    def omega_ratio(self, omega):
        return self.block.omega_ratio(omega)
