"""Rounds of CoCoA+ over the Crammer-Singer dual on contiguous row partitions.

The dual of the Crammer-Singer SVM (docs/multiclass-models.md) is separable
over rows: ``alpha_i`` (K values, ``e_y - alpha_i`` on the simplex) is row
``i``'s block, and ``coef(alpha) = (1/(W lam)) sum_i c_i x_i^T alpha_i``.  A
CoCoA+ round (Ma et al., ICML 2015, eq. (10), adding with ``sigma'``; Smith
et al., JMLR 18 (2018)) gives partition ``k`` the local subproblem, in
LIBLINEAR's scaling ``beta_i = C_i alpha_i``, ``C_i = c_i / (W lam)``::

    min_{dbeta_[k]}  <coef, dcoef_k> + sigma'/2 ||dcoef_k||^2 - sum_{i in k} dbeta_{i, y_i}
    s.t.  beta_i + dbeta_i feasible,   dcoef_k = sum_{i in k} x_i^T dbeta_i

which is ``1/sigma'`` times the serial dual problem with ``lam / sigma'`` in
the variables ``beta'_i = sigma' beta_i`` (bounds ``C'_i = sigma' C_i``) and
``coef_local = coef + sigma' dcoef_k``.  So a partition runs the serial
kernel (:func:`~primaldual.kernels.multiclass.cs_epochs`: exact block steps,
Keerthi et al. 2008) with the bounds ``C'`` on ``beta' = C' alpha`` from a
copy of the global ``coef``, keeps ``alpha = beta' / C'`` and returns
``dcoef_k = (coef_local - coef) / sigma'``; ``coef + sum_k dcoef_k`` is
``coef`` of the joined ``alpha`` and the dual rises every round (sigma' = K).

A :class:`CSBlock` holds the rows and the ``alpha`` blocks of one or several
partitions (its blocks stay there between rounds) and answers per
partition; :class:`BlockCSData` adds the parts in partition order for a
driver in this process, and on Dask each actor holds the block of one
partition (:mod:`.cs_rounds`): the same numbers in process and on Dask.  A
sparse partition works on the columns its rows use (``d_k`` of ``d``).  In
process the partitions' calls run on ``n_threads`` threads
(:func:`~primaldual._util.threads.run_parts`): each returns its own part, so
the numbers are those of one thread.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from .._util.seeding import partition_stream
from .._util.threads import PartsOnThreads, part_threads
from ..kernels.multiclass import CSActive, CSAverage, CSRows, CSWork, cs_epochs
from ..kernels.status import STATUS_OK
from ..multiclass import crammer_singer_neg_conjugate, crammer_singer_value
from ..rows import as_rows
from .multinomial_block import add_in_order

__all__ = ["CSBlock", "BlockCSData", "cold_alpha", "DENSE_ROWS_DENSITY"]

#: dense rows with more than this share of nonzero entries are read as dense
#: by the kernel, else as CSR (the serial solver's rule)
DENSE_ROWS_DENSITY = 0.75
#: the first shrinking threshold (the serial method's), again after each check
_EPS = 1.0
#: in process on threads: every PACE_PROBE-th round runs on the mode (one
#: thread or n_threads) measured slower, so that its average follows the data
PACE_PROBE = 16


def cold_alpha(y, sqnorm, K):
    """The start ``alpha = 0``, but on rows of zeros, whose block is solved
    once: ``alpha_y = 1``, ``alpha_{y+1} = -1`` (as the serial solver)."""
    alpha = np.zeros((y.shape[0], K))
    zero = np.flatnonzero(sqnorm == 0.0)
    alpha[zero, y[zero]] = 1.0
    alpha[zero, (y[zero] + 1) % K] = -1.0
    return alpha


class _Part:
    """One partition's rows (on the columns ``cols`` it uses when sparse),
    labels, weights, its block of ``alpha`` and the kernel's work arrays."""

    def __init__(self, X, y, c, K):
        self.cols = None
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            used = np.unique(X.indices)
            if used.shape[0] < X.shape[1]:
                self.cols = used.astype(np.int64)
                X = sp.csr_matrix((X.data, np.searchsorted(used, X.indices), X.indptr),
                                  shape=(X.shape[0], used.shape[0]))
        elif X.size and np.count_nonzero(X) <= DENSE_ROWS_DENSITY * X.size:
            X = sp.csr_matrix(X)
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
        self.X = X
        self.rows = as_rows(X)
        self.y = np.ascontiguousarray(y, dtype=np.int64)
        self.c = np.ascontiguousarray(c, dtype=np.float64)
        n = self.y.shape[0]
        self.alpha = cold_alpha(self.y, self.rows.sqnorm, K)
        self.act = CSActive(np.arange(n, dtype=np.int64), np.full(n, K, dtype=np.int64),
                            np.tile(np.arange(K, dtype=np.int64), (n, 1)))
        #: the kernel's schedule: active rows, shrinking threshold, index order, revisit
        self.sched = np.zeros(4)
        self.reset()
        self.work = CSWork(*(np.empty(K) for _ in range(5)), np.zeros(n),
                           np.zeros(n, dtype=np.int64))

    def reset(self):
        """Every row and class back in the active set, in index order, and the
        first threshold: the state after a check depends on ``alpha`` only."""
        n, K = self.act.cls.shape
        self.act.rows[:] = np.arange(n)
        self.act.n_cls[:] = K
        self.act.cls[:] = np.arange(K)
        self.sched[0], self.sched[1] = n, _EPS

    def take(self, A):
        """The rows of a (d, K) array at this partition's columns (``A`` as
        given when it holds those rows already: an actor's call)."""
        if self.cols is None or A.shape[0] == self.cols.shape[0]:
            return A
        return A[self.cols]


class CSBlock(PartsOnThreads):
    """Rows ``part_ptr[0]..part_ptr[-1]`` of a Crammer-Singer problem split
    into partitions, with their blocks of ``alpha``.

    Parameters
    ----------
    X : CSR matrix or dense array (n_block, d)   the block's rows
    y : int array    class labels 0..K-1 of those rows
    c : array        their sample weights (> 0)
    part_ptr : int64 array (P+1,)   local partition boundaries, ``part_ptr[0] == 0``
    K : int          the number of classes
    first_part : int the index of the block's first partition among all of
                     them: partition ``k`` draws its orders from stream
                     ``first_part + k`` of each round's seed
    """

    def __init__(self, X, y, c, part_ptr, K, first_part=0):
        self.first_part = int(first_part)
        self.K = int(K)
        bounds = np.asarray(part_ptr, dtype=np.int64).tolist()
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        y = np.asarray(y, dtype=np.int64)
        c = np.asarray(c, dtype=np.float64)
        self.parts = [_Part(X[a:b], y[a:b], c[a:b], self.K)
                      for a, b in zip(bounds[:-1], bounds[1:])]
        #: the stored entries of the partitions (dense rows: n_k d each)
        self.nnz = sum(p.rows.data.size for p in self.parts)
        #: the entries the last round read (its active sets'; every stored
        #: entry after a check): the next round's work, as shrinking leaves it
        self.last_reads = self.nnz
        #: seconds per entry read of the recent rounds on one thread and on
        #: n_threads (a moving average each), and the rounds run
        self.pace = {}
        self.rounds = 0
        #: the rounds that ran on the threads
        self.threaded_rounds = 0

    def set_threads(self, n_jobs):
        """Run the partitions on up to ``n_jobs`` threads, as many as give each
        a million values of a call (``nnz K``).  Returns the number and why."""
        return self.set_part_threads(self.nnz * self.K, n_jobs, "values (nnz K)")

    def columns(self):
        """Per partition the columns its parts are on (None: all ``d``)."""
        return [p.cols for p in self.parts]

    # ------------------------------------------------------------ rounds
    def round(self, coef, lam, W, sigma, epochs, seed, sequential, revisit, shrinking):
        """One CoCoA+ round (module docstring) from the global ``coef =
        coef(alpha)``: per partition ``(status, dcoef_k, entries read)`` after
        ``epochs`` epochs of the serial kernel (``revisit``: its second visit
        to the hot rows; ``sequential``: passes in index order) with the
        bounds ``sigma' c_i / (W lam)``; the orders come from SplitMix64 seeded
        by the partition's stream of ``seed``.  With ``shrinking`` the
        kernel's active set and threshold carry over from round to round
        (LIBLINEAR's rule, on the local subproblem) until the next check,
        which returns every row and class (:meth:`dual_parts`); without, every
        round starts from all of them."""
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        sigma = float(sigma)
        epochs = int(epochs)

        def part_round(k, p):
            r = p.rows
            C = p.c * (sigma / (float(W) * float(lam)))
            view = CSRows(r.data, r.indices, r.indptr, r.iptr, r.sqnorm, p.y, C)
            beta = np.ascontiguousarray(p.alpha * C[:, None])
            start = np.ascontiguousarray(p.take(coef))
            local = start.copy()
            if not shrinking:
                p.reset()
            p.sched[2], p.sched[3] = float(bool(sequential)), float(revisit)
            state = partition_stream(int(seed), self.first_part + k).integers(
                0, 2 ** 63, size=1).astype(np.uint64)
            avg = CSAverage(np.empty((0, self.K)), np.zeros(epochs))
            status, _, reads = cs_epochs(view, p.act, p.sched, beta, local, p.work, epochs,
                                         state, bool(shrinking), avg)
            if int(status) == STATUS_OK:
                p.alpha = beta / C[:, None]
            return int(status), (local - start) / sigma, int(reads)

        threads = self._round_threads()
        t = time.perf_counter()
        out = self.each_part(part_round, threads)
        seconds = time.perf_counter() - t
        self.last_reads = sum(reads for _, _, reads in out)
        if self.last_reads > 0:
            pace = seconds / self.last_reads
            old = self.pace.get(threads)
            self.pace[threads] = pace if old is None else 0.5 * (old + pace)
        self.rounds += 1
        self.threaded_rounds += threads > 1
        return out

    def _round_threads(self) -> int:
        """The threads of the next round (the numbers are the same on any):
        one where its work (the last round's reads, as shrinking left them,
        times K) gives no thread a million values; else the faster of one
        thread and ``n_threads`` by their measured seconds per entry read
        (each round updates its mode's average; a mode not measured yet, or
        not for ``PACE_PROBE`` rounds, runs next).  Rounds of a few
        milliseconds (letter.scale's once shrinking has set in) measured no
        faster on two threads than on one: the wake-ups and the GIL's
        hand-overs cost what the second core gives."""
        k = part_threads(len(self.parts), self.last_reads * self.K, self.n_threads)
        if k <= 1:
            return 1
        for mode in (1, k):
            if mode not in self.pace:
                return mode
        if self.rounds % PACE_PROBE == 0:          # measure the slower one again
            return max((1, k), key=self.pace.get)
        return min((1, k), key=self.pace.get)

    # -------------------------------------------------------- certificate
    def dual_parts(self, lam, W):
        """Per partition ``(X_k^T (C_k alpha_k), alpha_k, sum_i c_i alpha_{i,
        y_i})`` (``C = c / (W lam)``): the parts of ``coef(alpha)`` and of the
        dual; the conjugate sum is -inf when a row of ``e_y - alpha`` is off
        the simplex.  Every row and class returns to the active set: a round
        depends on ``alpha``, ``coef`` and its seed only after a check (a
        resumed checkpoint goes on exactly)."""
        scale = 1.0 / (float(W) * float(lam))
        self.last_reads = self.nnz

        def part_dual(k, p):
            p.reset()
            R = p.alpha * (p.c * scale)[:, None]
            part = np.asarray(p.X.T @ R, dtype=np.float64)
            conj = float(p.c @ crammer_singer_neg_conjugate(p.alpha, p.y))
            return part, p.alpha.copy(), conj

        return self.each_part(part_dual, self._check_threads())

    def losses(self, coef):
        """Per partition ``sum_i c_i max_k (1[k != y_i] + z_ik - z_iy)`` at
        the scores ``Z = X_k coef``."""
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        return self.each_part(lambda k, p: float(p.c @ crammer_singer_value(
            np.asarray(p.X @ p.take(coef), dtype=np.float64), p.y)[0]), self._check_threads())

    def _check_threads(self) -> int:
        """The threads of a check's calls: :attr:`n_threads` on sparse rows;
        one on dense rows, whose products BLAS already runs on the cores (two
        threads' BLAS calls at once oversubscribe them: letter.scale's checks
        took 2-4x the time)."""
        return 1 if any(isinstance(p.X, np.ndarray) for p in self.parts) else self.n_threads

    def set_alpha(self, blocks):
        """Take the partitions' blocks of ``alpha`` (a warm start, a resumed
        state or a recovery), given as a list in partition order."""
        for p, a in zip(self.parts, blocks):
            a = np.array(a, dtype=np.float64)
            if a.shape != p.alpha.shape:
                raise ValueError(f"an alpha block of shape {a.shape} for a partition of "
                                 f"shape {p.alpha.shape}")
            p.alpha = a
        return True


class BlockCSData:
    """The partitions of a Crammer-Singer CoCoA+ driver in this process: one
    :class:`CSBlock`, whose parts are added in partition order.  It keeps the
    global ``coef`` (= coef(alpha) of the blocks)."""

    backend = "process"

    def __init__(self, problem, part_ptr):
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.block = CSBlock(problem.X, problem.y, problem.sample_weight, self.part_ptr,
                             problem.K)
        self.columns = self.block.columns()
        self.d, self.K = problem.d, problem.K
        self.coef = np.zeros((self.d, self.K))

    def set_threads(self, n_jobs):
        """The partitions' calls on up to ``n_jobs`` threads (:meth:`CSBlock.set_threads`)."""
        return self.block.set_threads(n_jobs)

    def threaded_rounds(self):
        """``(rounds on the threads, rounds)`` so far."""
        return self.block.threaded_rounds, self.block.rounds

    def _join(self, parts):
        return add_in_order(parts, self.columns, (self.d, self.K))

    def round(self, lam, W, sigma, epochs, seed, sequential, revisit, shrinking):
        """One round from ``self.coef``; returns ``(status, entries read)`` and
        adds the partitions' changes to ``self.coef`` in partition order."""
        return self._apply(self.block.round(self.coef, lam, W, sigma, epochs, seed,
                                            sequential, revisit, shrinking))

    def _apply(self, parts):
        for status, _, _ in parts:
            if status != STATUS_OK:
                return status, sum(r for _, _, r in parts)
        self.coef = self.coef + self._join([dc for _, dc, _ in parts])
        return STATUS_OK, sum(r for _, _, r in parts)

    def dual(self, lam, W):
        """``(alpha, sum_i c_i alpha_{i, y_i})``; ``self.coef`` becomes
        ``coef(alpha)`` joined from the partitions' parts (drift dropped)."""
        parts = self.block.dual_parts(lam, W)
        self.coef = self._join([part for part, _, _ in parts])
        return np.concatenate([a for _, a, _ in parts]), sum(cj for _, _, cj in parts)

    def loss(self):
        """``sum_i c_i phi_i`` at ``self.coef``."""
        return sum(self.block.losses(self.coef))

    def set_alpha(self, alpha, lam, W):
        """Start from ``alpha`` (n, K): the blocks take their rows of it and
        ``self.coef`` becomes ``coef(alpha)``."""
        self.block.set_alpha(np.split(np.asarray(alpha, dtype=np.float64),
                                      self.part_ptr[1:-1]))
        self.dual(lam, W)

    def info(self):
        return {}
