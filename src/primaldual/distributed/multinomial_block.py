"""The passes of multinomial Newton-CG on contiguous row partitions.

:class:`~primaldual.solvers.multinomial.MultinomialNewton` needs from the rows
only sums over them at a point ``coef`` (d x K), with ``Z = X coef`` the
scores, ``P`` their softmax, ``Y`` the one-hot labels and ``c`` the sample
weights::

    evaluate(coef, slot)   sum_i c_i (logsumexp(z_i) - z_{i, y_i}),  X^T (c * (P - Y))
    direction(s)           keeps X s (no sum)
    evaluate_step(t, slot) the same two sums at Z + t X s (no pass over X for Z)
    line_losses(t)         sum_i c_i (logsumexp - z_y) at Z + t X s
    hess_vec(D)            X^T (c * (P * XD - P * rowsum(P * XD)))
    diagonal()             (X o X)^T (c * P * (1 - P))
    hessian()              blockdiag_k X^T diag(c p_k) X - G^T G (G_i = sqrt(c_i) x_i kron p_i)
    class_blocks()         per class k, X^T diag(c p_k (1 - p_k)) X (the diagonal blocks)
    entropy()              sum_i c_i entropy(p_i)
    dual()                 alpha = Y - P
    dual_start(...)        a round of CoCoA+ on the dual (a first point for Newton)

Each sum splits over row partitions: partition ``k`` computes its part from
its own rows and the parts are added in partition order.  A sparse
partition keeps only the columns its rows use (``d_k`` of the ``d``): it
takes the rows of ``coef``, ``s`` and ``D`` at those columns and returns
``d_k x K`` parts, so on Dask a call moves ``d_k K`` numbers each way, not
``d K`` (with many partitions of text, ``d_k`` is a fraction of ``d``).  A
:class:`MultinomialBlock` holds the rows of one or several partitions and
returns one part per partition; :class:`BlockMultinomialData` adds them for
a driver in this process (the serial solver is one partition), and on Dask
each actor holds the block of one partition
(:class:`~primaldual.distributed.multinomial_rounds.DaskMultinomialData`), so
the same code runs on the same rows and the parts are added in the same
order: the same numbers in process and on Dask.

The block keeps two *slots* of scores and probabilities, the current point
and a trial point: ``evaluate`` fills one, ``use`` makes it current, and both
are idempotent, so a call repeated after a lost worker leaves every partition
in the same state.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg.blas
import scipy.sparse as sp

from .._util.seeding import partition_stream
from ..kernels.multinomial_dual import MNRows, MNWork, mn_epochs
from ..kernels.status import STATUS_OK
from ..multiclass import _entropy, logsumexp_rows
from ..rows import as_rows

__all__ = ["MultinomialBlock", "BlockMultinomialData", "add_class_blocks", "add_hessians",
           "add_in_order", "dense_rows_pay", "join_starts"]

#: sparse input at least this dense, and of at most DENSE_MAX_ENTRIES entries,
#: is multiplied as a dense array (BLAS beats CSR products with K columns)
DENSE_MIN_DENSITY = 0.3
DENSE_MAX_ENTRIES = 5e7


def dense_rows_pay(n, d, nnz, sparse) -> bool:
    """Multiply sparse rows as a dense array (decided once for all partitions,
    from the whole problem's shape)."""
    return bool(sparse and n * d <= DENSE_MAX_ENTRIES and nnz >= DENSE_MIN_DENSITY * n * d)


def join_starts(parts, columns, shape):
    """``(status, coef)``: the first failing partition's status, else the
    partitions' start coefficients added in order (:func:`add_in_order`)."""
    for status, _ in parts:
        if status != STATUS_OK:
            return status, None
    return STATUS_OK, add_in_order([coef for _, coef in parts], columns, shape)


def add_in_order(parts, columns, shape):
    """The sum of the partitions' parts (d_k x K each), added in partition
    order into a (d, K) array at each partition's ``columns`` (None: all)."""
    total = np.zeros(shape)
    for cols, part in zip(columns, parts):
        if cols is None:
            total += part
        else:
            total[cols] += part
    return total


def add_hessians(parts, columns, d, K):
    """The partitions' explicit Hessian parts ((d_k K) x (d_k K), upper
    triangle) added in order into the (dK) x (dK) Hessian."""
    total = np.zeros((d * K, d * K))
    for cols, H in zip(columns, parts):
        if cols is None:
            total += H
        else:
            idx = (cols[:, None] * K + np.arange(K)).ravel()
            total[np.ix_(idx, idx)] += H
    return total


def add_class_blocks(parts, columns, d, K):
    """The partitions' class blocks (K, d_k, d_k; upper triangles) added in
    order into (K, d, d)."""
    total = np.zeros((K, d, d))
    for cols, B in zip(columns, parts):
        if cols is None:
            total += B
        else:
            total[np.ix_(np.arange(K), cols, cols)] += B
    return total


class _Part:
    """One partition's rows (the multiplying form; a sparse partition on the
    columns it uses, ``cols``), labels and weights."""

    def __init__(self, X, y, c, K):
        self.cols = None
        if sp.issparse(X):
            used = np.unique(X.indices)
            if used.shape[0] < X.shape[1]:
                self.cols = used.astype(np.int64)
                X = sp.csr_matrix((X.data, np.searchsorted(used, X.indices), X.indptr),
                                  shape=(X.shape[0], used.shape[0]))
        self.X = X
        # X^T as CSR once: its products gather by row (no transpose per product)
        self.XT = X.T.tocsr() if sp.issparse(X) else X.T
        self.y = np.asarray(y, dtype=np.int64)
        self.c = np.ascontiguousarray(c, dtype=np.float64)
        n = X.shape[0]
        self.Y = np.zeros((n, K))
        self.Y[np.arange(n), self.y] = 1.0
        self.Xsq = None
        self.Xd = None
        self.rows = None
        self.Pdual = None
        self.Zs = None
        self.Z = [None, None]
        self.P = [None, None]

    def take(self, A):
        """The rows of a (d, K) array at this partition's columns (``A`` as
        given when it holds those rows already: an actor's call)."""
        if self.cols is None or A.shape[0] == self.cols.shape[0]:
            return A
        return A[self.cols]

    def scores(self, coef):
        return np.asarray(self.X @ self.take(coef), dtype=np.float64)

    def rmat(self, R):
        return np.asarray(self.XT @ R, dtype=np.float64)

    def loss_sum(self, Z):
        lse, P = logsumexp_rows(Z)
        return float(self.c @ (lse - Z[np.arange(Z.shape[0]), self.y])), P


class MultinomialBlock:
    """Rows ``part_ptr[0]..part_ptr[-1]`` of a multinomial problem split into
    partitions.

    Parameters
    ----------
    X : CSR matrix or dense array (n_block, d)   the block's rows
    y : int array    class labels 0..K-1 of those rows
    c : array        their sample weights
    part_ptr : int64 array (P+1,)   local partition boundaries, ``part_ptr[0] == 0``
    K : int          the number of classes
    dense : bool     multiply the rows as a dense array (:func:`dense_rows_pay`)
    first_part : int the index of the block's first partition among all of them:
                     partition ``k`` of the block draws from stream
                     ``first_part + k`` of the seed it is given
    """

    def __init__(self, X, y, c, part_ptr, K, dense=False, first_part=0):
        self.first_part = int(first_part)
        part_ptr = np.asarray(part_ptr, dtype=np.int64)
        if dense and sp.issparse(X):
            X = X.toarray()
        elif sp.issparse(X):
            X = sp.csr_matrix(X)
        self.K = int(K)
        self.parts = [_Part(X[a:b], y[a:b], c[a:b], self.K)
                      for a, b in zip(part_ptr[:-1].tolist(), part_ptr[1:].tolist())]
        self.current = 0

    def columns(self):
        """Per partition the columns its parts are on (None: all ``d``)."""
        return [p.cols for p in self.parts]

    # ------------------------------------------------------------ points
    def evaluate(self, coef, slot):
        """One pass at ``coef`` into ``slot``: per partition ``(loss sum,
        X^T (c * (P - Y)))`` (on its columns)."""
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        return [self._fill(p, p.scores(coef), slot) for p in self.parts]

    def evaluate_step(self, t, slot):
        """:meth:`evaluate` at ``coef + t s`` from the current scores and the
        kept ``X s`` (:meth:`direction`): a pass over ``X^T`` only."""
        t = float(t)
        return [self._fill(p, p.Z[self.current] + t * p.Zs, slot) for p in self.parts]

    def _fill(self, p, Z, slot):
        ls, P = p.loss_sum(Z)
        p.Z[slot], p.P[slot] = Z, P
        return ls, p.rmat((P - p.Y) * p.c[:, None])

    def use(self, slot):
        """Make ``slot`` the current point (the Hessian's and the certificate's)."""
        self.current = int(slot)
        return True

    def direction(self, s):
        """Keep ``X s`` for the line search (one pass)."""
        s = np.ascontiguousarray(s, dtype=np.float64)
        for p in self.parts:
            p.Zs = p.scores(s)
        return True

    def line_losses(self, t):
        """Per partition the loss sum at ``Z + t X s`` (no pass)."""
        t = float(t)
        return [p.loss_sum(p.Z[self.current] + t * p.Zs)[0] for p in self.parts]

    # ---------------------------------------------------------- curvature
    def hess_vec(self, D):
        """Per partition the loss part of the Hessian times ``D`` (one pass)."""
        D = np.ascontiguousarray(D, dtype=np.float64)
        out = []
        for p in self.parts:
            P = p.P[self.current]
            T = P * p.scores(D)
            T -= P * T.sum(axis=1)[:, None]
            T *= p.c[:, None]
            out.append(p.rmat(T))
        return out

    def diagonal(self):
        """Per partition the diagonal of the loss part of the Hessian (d, K)."""
        out = []
        for p in self.parts:
            if p.Xsq is None:
                p.Xsq = (p.X.multiply(p.X).T.tocsr() if sp.issparse(p.X)
                         else np.square(p.X, dtype=np.float64).T)
            P = p.P[self.current]
            out.append(np.asarray(p.Xsq @ (P * (1.0 - P) * p.c[:, None]), dtype=np.float64))
        return out

    def hessian(self):
        """Per partition the loss part of the explicit Hessian (dK x dK, upper
        triangle, coef flattened row-major): ``blockdiag_k X^T diag(c p_k) X -
        G^T G``, ``G_i = sqrt(c_i) (x_i kron p_i)``."""
        out = []
        for p in self.parts:
            if p.Xd is None:
                p.Xd = p.X.toarray() if sp.issparse(p.X) else p.X
            X, P, c, K = p.Xd, p.P[self.current], p.c, self.K    # on p's columns
            n, d = X.shape
            G = (X[:, :, None] * P[:, None, :]).reshape(n, d * K)
            G *= np.sqrt(c)[:, None]
            # -G^T G into the upper triangle (BLAS syrk), which Cholesky reads
            H = scipy.linalg.blas.dsyrk(-1.0, G.T, trans=0, lower=0)   # G.T: Fortran order
            H4 = H.reshape(d, K, d, K)
            CP = P * c[:, None]
            for k in range(K):
                H4[:, k, :, k] += (X * CP[:, k:k + 1]).T @ X
            out.append(H)
        return out

    def class_blocks(self):
        """Per partition the diagonal blocks of the loss part of the Hessian
        (K, d_k, d_k; upper triangles): ``X^T diag(c p_k (1 - p_k)) X``."""
        out = []
        for p in self.parts:
            if p.Xd is None:
                p.Xd = p.X.toarray() if sp.issparse(p.X) else p.X
            X, P = p.Xd, p.P[self.current]
            S = np.sqrt(P * (1.0 - P) * p.c[:, None])
            B = np.empty((self.K, X.shape[1], X.shape[1]))
            for k in range(self.K):
                # BLAS syrk on (s_k x)^T: Fortran order, no copy of the transpose
                B[k] = scipy.linalg.blas.dsyrk(1.0, (X * S[:, k:k + 1]).T, trans=0, lower=0)
            out.append(B)
        return out

    # -------------------------------------------------------- certificate
    def entropy(self):
        """Per partition ``sum_i c_i entropy(p_i)`` at the current point."""
        return [float(p.c @ _entropy(p.P[self.current])) for p in self.parts]

    def dual(self):
        """Per partition ``alpha = Y - P`` at the current point."""
        return [p.Y - p.P[self.current] for p in self.parts]

    def scores(self):
        """The current scores of the block's rows (n_block, K)."""
        return np.concatenate([p.Z[self.current] for p in self.parts])

    # -------------------------------------------------------------- start
    def dual_start(self, coef, lam, W, epochs, sigma, seed):
        """One CoCoA+ round (Ma et al. 2015, adding with ``sigma'``) on the
        multinomial dual, from the global point ``coef = coef(alpha)``: per
        partition ``(status, dcoef_k)``, after ``epochs`` epochs of exact dual
        coordinate descent (:func:`~primaldual.kernels.multinomial_dual.mn_epochs`,
        orders from the partition's stream of ``seed``) on its block of
        ``alpha`` (kept here between rounds; ``alpha = 0`` at the first) with
        its local copy of ``coef`` moving ``sigma'`` times as fast (the
        kernel's bounds ``sigma' c_i / (W lam)``).  ``coef + sum_k dcoef_k`` is
        ``coef`` of the joined ``alpha``."""
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        sigma = float(sigma)
        out = []
        for k, p in enumerate(self.parts):
            if p.rows is None:
                p.rows = as_rows(p.X)
                p.Pdual = p.Y.copy()
            r = p.rows
            C = p.c * (sigma / (float(W) * float(lam)))
            view = MNRows(r.data, r.indices, r.indptr, r.iptr, r.sqnorm, p.y, C)
            work = MNWork(*(np.empty(self.K) for _ in range(6)))
            order = np.flatnonzero(C > 0.0).astype(np.int64)
            uniforms = partition_stream(int(seed), self.first_part + k).random(
                (int(epochs), order.shape[0]))
            start = np.ascontiguousarray(p.take(coef))
            local = start.copy()
            status, _, _ = mn_epochs(view, order, p.Pdual, local, work, uniforms)
            out.append((int(status), (local - start) / sigma))
        return out


class BlockMultinomialData:
    """The rows of a multinomial driver in this process: one
    :class:`MultinomialBlock` of ``P`` partitions, whose parts are added in
    partition order (the serial solver is one partition)."""

    backend = "process"

    def __init__(self, problem, part_ptr, dense):
        self.part_ptr = np.asarray(part_ptr, dtype=np.int64)
        self.block = MultinomialBlock(problem.X, problem.y, problem.sample_weight,
                                      self.part_ptr, problem.K, dense)
        self.columns = self.block.columns()
        self.d, self.K = problem.d, problem.K

    def _join(self, parts):
        return add_in_order(parts, self.columns, (self.d, self.K))

    def evaluate(self, coef, slot):
        parts = self.block.evaluate(coef, slot)
        return sum(ls for ls, _ in parts), self._join([g for _, g in parts])

    def evaluate_step(self, t, slot, coef):
        """The trial point ``coef`` (the current one plus ``t`` times the
        direction), from the kept scores."""
        parts = self.block.evaluate_step(t, slot)
        return sum(ls for ls, _ in parts), self._join([g for _, g in parts])

    def use(self, slot):
        self.block.use(slot)

    def direction(self, s):
        self.block.direction(s)

    def line_loss(self, t):
        return sum(self.block.line_losses(t))

    def hess_vec(self, D):
        return self._join(self.block.hess_vec(D))

    def diagonal(self):
        return self._join(self.block.diagonal())

    def hessian(self):
        return add_hessians(self.block.hessian(), self.columns, self.d, self.K)

    def class_blocks(self):
        return add_class_blocks(self.block.class_blocks(), self.columns, self.d, self.K)

    def entropy(self):
        return sum(self.block.entropy())

    def dual(self):
        return np.concatenate(self.block.dual())

    def scores(self):
        return self.block.scores()

    def dual_start(self, coef, lam, W, epochs, sigma, seed):
        return join_starts(self.block.dual_start(coef, lam, W, epochs, sigma, seed),
                           self.columns, (self.d, self.K))

    def info(self):
        return {}
