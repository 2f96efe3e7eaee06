"""The passes of the L1 / elastic-net proximal Newton method on row partitions.

:class:`~primaldual.solvers.sparse.partitioned.L1NewtonSolver` needs from the
rows only sums over them (``cw_i = c_i / W``, ``gu_i = cw_i phi'(x_i . w)``,
``hu_i = cw_i phi''(x_i . w)``)::

    evaluate(w, slot)     sum_i cw_i phi(x_i . w),  v = -X^T gu   (w sent sparse)
    dual(s, slot)         makes ``slot`` current; sum_i cw_i (-phi*(-alpha_i)),
                          alpha_i = -gu_i / (cw_i s)
    gram(ws)              X_ws^T diag(hu) X_ws  (|ws| x |ws|, its upper triangle)
    line_losses(ws, d, ts)  sum_i cw_i phi(x_i . w + t (X_ws d)_i) for each t
    step(t, slot)         evaluate at w + t d from the kept X_ws d (no pass for X w)

Each sum splits over row partitions: partition ``k`` computes its part from
its own rows with the kernels of the serial solver
(:mod:`primaldual.kernels.l1cd`: ``margins_of``, ``loss_terms``,
``correlations``, ``dual_sum``, ``form_gram``), and the parts are added in
partition order (:func:`add_vectors`, :func:`add_grams`).  A partition keeps
its rows by columns (CSC) on the columns its rows use (``d_k`` of the
``d``): its ``v`` part has ``d_k`` entries and its Gram part only the working
set's columns it holds, so on Dask a call moves ``d_k`` numbers, not ``d``.
An :class:`L1Block` holds one or several partitions and returns one part per
partition; :class:`BlockL1Data` adds them for a driver in this process, and on
Dask each actor holds the block of one partition
(:mod:`primaldual.distributed.l1_rounds`): the same numbers in process and on
Dask.  In process the partitions' calls run on ``n_threads`` threads
(:func:`~primaldual._util.threads.run_parts`; each returns its own part, so
the numbers are those of one thread).

The block keeps two *slots* of margins and loss terms (the current point and
a trial) and the last direction ``X_ws d``; every call is idempotent, so a
call repeated after a lost worker leaves every partition in the same state.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._util.threads import PartsOnThreads
from ..kernels.l1bounds import cols_to_rows
from ..kernels.l1cd import (ColsView, L1Spec, WsGram, column_norms, correlations,
                            dual_sum, form_gram, loss_terms, margins_of)
from .multinomial_block import add_in_order

__all__ = ["L1Block", "BlockL1Data", "add_vectors", "add_grams", "add_scalars"]


def add_scalars(parts):
    """``parts[0] + parts[1] + ...`` from 0.0, in partition order."""
    total = 0.0
    for p in parts:
        total += p
    return total


def add_vectors(parts, columns, d):
    """The partitions' ``d_k``-vectors added in partition order into a
    d-vector at each partition's ``columns`` (None: all)."""
    return add_in_order(parts, columns, (d,))


def add_grams(parts, k):
    """The partitions' ``(sel, upper)`` (``sel`` the positions in the working
    set of the columns partition ``k`` holds, ``upper`` the upper triangle of
    its Gram matrix by rows) added in order into the symmetric ``k x k``."""
    H = np.zeros((k, k))
    for sel, upper in parts:
        m = sel.shape[0]
        if m == 0:
            continue
        Hp = np.zeros((m, m))
        Hp[np.triu_indices(m)] = upper
        if m == k:
            H += Hp
        else:
            H[np.ix_(sel, sel)] += Hp
    # the lower triangle from the upper one (the diagonal once)
    return np.triu(H) + np.triu(H, 1).T


class _Part:
    """One partition's rows by columns (on the columns it uses), its labels
    and weights ``cw``, and its slots."""

    def __init__(self, X, y, cw, spec):
        C = X.tocsc() if sp.issparse(X) else sp.csc_matrix(np.asarray(X))
        C = C.astype(np.float64, copy=False)
        C.sort_indices()
        used = np.flatnonzero(np.diff(C.indptr)).astype(np.int64)
        self.cols = None
        if used.shape[0] < C.shape[1]:
            self.cols = used
            C = C[:, used]
            C.sort_indices()
        self.d = C.shape[1]
        n = C.shape[0]
        self.view = ColsView(C.data, C.indices.astype(np.int32, copy=False),
                             C.indptr.astype(np.int64, copy=False),
                             np.ascontiguousarray(y, dtype=np.float64),
                             np.ascontiguousarray(cw, dtype=np.float64))
        self.spec = spec
        self.all = np.arange(self.d, dtype=np.int64)
        self.m = [np.zeros(n), np.zeros(n)]
        self.gu = [np.zeros(n), np.zeros(n)]
        self.hu = [np.zeros(n), np.zeros(n)]
        self.xd = np.zeros(n)
        self.tmp = (np.empty(n), np.empty(n), np.empty(n))

    def local(self, idx):
        """``(positions in idx, local columns)`` of the global columns ``idx``
        (sorted) that this partition holds."""
        if self.cols is None:
            return np.arange(idx.shape[0], dtype=np.int64), idx
        pos = np.minimum(np.searchsorted(self.cols, idx), max(self.d - 1, 0))
        held = (self.cols[pos] == idx) if self.d else np.zeros(idx.shape[0], bool)
        return np.flatnonzero(held).astype(np.int64), pos[held].astype(np.int64)

    def dense(self, idx, vals):
        """A local d_k-vector with ``vals`` at the global columns ``idx``."""
        out = np.zeros(self.d)
        sel, loc = self.local(idx)
        out[loc] = vals[sel]
        return out

    def fill(self, slot):
        """Loss sum and ``v`` part at the margins of ``slot``."""
        ls = loss_terms(self.spec, self.view, self.m[slot], self.gu[slot], self.hu[slot])
        v = np.empty(self.d)
        correlations(self.view, self.gu[slot], self.all, v)
        return float(ls), v


class L1Block(PartsOnThreads):
    """Rows ``part_ptr[0]..part_ptr[-1]`` of an L1 problem split into partitions.

    Parameters
    ----------
    X : CSR matrix or dense array (n_block, d)   the block's rows
    y : array    labels of those rows
    cw : array   their weights over the global weight sum, ``c_i / W``
    part_ptr : int64 array (P+1,)   local partition boundaries, ``part_ptr[0] == 0``
    kind, param : the loss's kernel code and parameter
    """

    def __init__(self, X, y, cw, part_ptr, kind, param):
        part_ptr = np.asarray(part_ptr, dtype=np.int64)
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        spec = L1Spec(int(kind), float(param), 0.0, 0.0)
        self.parts = [_Part(X[a:b], y[a:b], cw[a:b], spec)
                      for a, b in zip(part_ptr[:-1].tolist(), part_ptr[1:].tolist())]
        self.current = 0

    def set_threads(self, n_jobs):
        """Run the partitions on up to ``n_jobs`` threads, as many as give each
        a million stored entries.  Returns the number and why."""
        return self.set_part_threads(sum(p.view.data.shape[0] for p in self.parts), n_jobs)

    def columns(self):
        """Per partition the columns it holds (None: all ``d``)."""
        return [p.cols for p in self.parts]

    def column_stats(self):
        """Per partition ``(entries, sum_i cw_i x_ij^2)`` of each column it holds."""
        def part_stats(_, p):
            norms = np.empty(p.d)
            column_norms(p.view, norms)
            return np.diff(p.view.indptr).astype(np.float64), norms * norms

        return self.each_part(part_stats)

    # ------------------------------------------------------------ points
    def evaluate(self, idx, vals, slot):
        """One pass at the point with ``vals`` at the columns ``idx`` (sorted,
        zero elsewhere) into ``slot``: per partition ``(loss sum, v part)``."""
        idx = np.asarray(idx, dtype=np.int64)
        vals = np.asarray(vals, dtype=np.float64)
        def part_evaluate(_, p):
            margins_of(p.view, p.dense(idx, vals), p.m[slot])
            return p.fill(slot)

        return self.each_part(part_evaluate)

    def use(self, slot):
        """Make ``slot`` the current point."""
        self.current = int(slot)
        return True

    def dual(self, scale, slot):
        """:meth:`use` ``slot``, then per partition ``(sum_i cw_i
        (-phi*(-alpha_i)), alpha_k)`` with ``alpha_i = -phi'(x_i . w) / scale``
        at that point."""
        self.use(slot)

        def part_dual(_, p):
            gu = p.gu[self.current]
            conj = dual_sum(p.spec, p.view, gu, float(scale))
            return float(conj), -gu / (p.view.cw * float(scale))

        return self.each_part(part_dual)

    def margins(self):
        return np.concatenate([p.m[self.current] for p in self.parts])

    # ---------------------------------------------------------- curvature
    def gram(self, ws):
        """Per partition ``(sel, upper)`` at the current point: the upper
        triangle (by rows) of ``X_ws'^T diag(hu) X_ws'``, ``ws'`` the columns of
        the working set ``ws`` (sorted) it holds and ``sel`` their positions in
        ``ws``."""
        ws = np.asarray(ws, dtype=np.int64)

        def part_gram(_, p):
            sel, loc = p.local(ws)
            k = loc.shape[0]
            n = p.view.y.shape[0]
            nnz = int(np.sum(p.view.indptr[loc + 1] - p.view.indptr[loc]))
            rows = WsGram(np.empty(nnz), np.empty(nnz, np.int32), np.empty(n + 1, np.int64),
                          np.empty((k, k)), np.empty(k))
            cols_to_rows(p.view, loc, n, rows.data, rows.indices, rows.indptr)
            form_gram(rows, p.hu[self.current])
            return sel, rows.H[np.triu_indices(k)]

        return self.each_part(part_gram)

    # -------------------------------------------------------- line search
    def direction(self, ws, delta):
        """Keep ``X_ws delta`` (``delta`` on the sorted working set ``ws``)."""
        ws = np.asarray(ws, dtype=np.int64)
        delta = np.asarray(delta, dtype=np.float64)
        self.each_part(lambda _, p: margins_of(p.view, p.dense(ws, delta), p.xd))
        return True

    def line_losses(self, ws, delta, ts):
        """:meth:`direction`, then per partition the loss sums at ``w + t
        delta`` for each ``t`` of ``ts`` (an array)."""
        self.direction(ws, delta)
        ts = np.asarray(ts, dtype=np.float64)

        def part_losses(_, p):
            m, g, h = p.tmp
            sums = np.empty(ts.shape[0])
            for r, t in enumerate(ts.tolist()):
                np.add(p.m[self.current], t * p.xd, out=m)
                sums[r] = loss_terms(p.spec, p.view, m, g, h)
            return sums

        return self.each_part(part_losses)

    def step(self, t, slot):
        """:meth:`evaluate` at ``w + t delta`` into ``slot`` from the current
        margins and the kept direction."""
        def part_step(_, p):
            np.add(p.m[self.current], float(t) * p.xd, out=p.m[slot])
            return p.fill(slot)

        return self.each_part(part_step)


class BlockL1Data:
    """The rows of the L1 driver in this process: one :class:`L1Block` of
    ``P`` partitions whose parts are added in partition order."""

    backend = "process"

    def __init__(self, problem, part_ptr):
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        loss = problem.loss
        self.block = L1Block(problem.X, problem.y, problem.sample_weight / problem.W,
                             self.part_ptr, loss.code, loss.param)
        self.columns = self.block.columns()
        self.d = problem.d
        self.calls = 0

    def set_threads(self, n_jobs):
        """The partitions' calls on up to ``n_jobs`` threads (:meth:`L1Block.set_threads`)."""
        return self.block.set_threads(n_jobs)

    def _vec(self, parts):
        self.calls += 1
        return (add_scalars([ls for ls, _ in parts]),
                add_vectors([v for _, v in parts], self.columns, self.d))

    def column_stats(self):
        parts = self.block.column_stats()
        return (add_vectors([c for c, _ in parts], self.columns, self.d),
                add_vectors([s for _, s in parts], self.columns, self.d))

    def evaluate(self, idx, vals, slot):
        return self._vec(self.block.evaluate(idx, vals, slot))

    def step(self, t, slot, point=None):
        return self._vec(self.block.step(t, slot))

    def dual(self, scale, slot):
        self.calls += 1
        parts = self.block.dual(scale, slot)
        return add_scalars([c for c, _ in parts]), np.concatenate([a for _, a in parts])

    def gram(self, ws):
        self.calls += 1
        return add_grams(self.block.gram(ws), len(ws))

    def line_losses(self, ws, delta, ts):
        self.calls += 1
        total = np.zeros(len(ts))
        for part in self.block.line_losses(ws, delta, ts):
            total += part
        return total

    def margins(self):
        return self.block.margins()

    def info(self):
        return {"calls": int(self.calls)}
