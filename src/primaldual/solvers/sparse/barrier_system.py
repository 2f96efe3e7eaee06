"""The Newton system of ``l1_ipm`` (:mod:`.barrier`, :mod:`.barrier_qp`)::

    (X_S^T diag(h) X_S + diag(e)) x = b,      h >= 0,  e > 0,

on the working set's columns ``X_S`` (``n x m``), solved in the cheaper of two
forms:

* **by columns:** the ``m x m`` matrix, scaled to a unit diagonal and factored
  by Cholesky;
* **by rows** (when the rows cost less, as where ``n < m``): the ``n x n``
  matrix of the Sherman-Morrison-Woodbury identity, with ``p = b / e``::

      (I + H^1/2 X_S E^-1 X_S^T H^1/2) t = H^1/2 X_S p,
      x = p - E^-1 X_S^T H^1/2 t,

  whose eigenvalues are at least 1.  The identity subtracts two large terms
  where ``e_j`` is small (a coefficient away from zero in a pure L1 model, as
  the interior point nears the optimum), so each solve is followed by
  ``REFINE_STEPS`` steps of iterative refinement against the system itself
  (two products with ``X_S`` and a solve each).

The matrices are formed by BLAS on dense columns and, on sparse ones, by the
compiled pairs kernel :func:`~primaldual.kernels.l1cd.form_gram` (``sum_i
nnz_i^2 / 2`` products by columns, ``sum_j nnz_j^2 / 2`` by rows), never by a
sparse-times-sparse product whose output is dense.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ...kernels.l1cd import WsGram, form_gram
from ..ipm import equilibrate, scaled_solve, spd_factor

__all__ = ["CGNewtonSystem", "NewtonSystem", "REFINE_STEPS", "dense_flops"]

#: a CG solve stops at this relative residual, or after CG_MAX_ITER products.
#: On news20 (class 0 against the rest, C = 100, from zero, 57,087 features)
#: the squared hinge's QP takes 31 / 36 / 37 / 45 iterations with a cap of
#: 300 / 100 / 50 / 20 products (66 / 51 / 39 / 29 s) and stalls at 10; the
#: logistic barrier 63 iterations (110 s) at 300 and 62 (38 s) at 50
CG_RTOL = 1e-8
CG_MAX_ITER = 50
#: the preconditioner factors exactly the features whose curvature ``sum_i h_i
#: x_ij^2`` exceeds CG_BLOCK_RATIO times their ``e_j``, at most CG_BLOCK of
#: them (the largest ratios); with 1,000 the QP above stalls at 2.6e-2, with
#: 3,000 it takes 44 iterations for 45 (at a cap of 20) in twice the time
CG_BLOCK = 2000
CG_BLOCK_RATIO = 1.0

#: steps of iterative refinement after a solve by rows (each gains 3-4 digits:
#: a forward error of 2e-5, 9e-10, 3e-13 with 0, 1, 2 steps where ``e`` spans
#: 1e-12 to 1e12, tests/test_l1_ipm.py)
REFINE_STEPS = 2


def _pairs(indptr) -> float:
    """The products of the pairs kernel: ``sum_k nnz_k (nnz_k + 1) / 2``."""
    c = np.diff(np.asarray(indptr)).astype(np.float64)
    return float(c @ (c + 1.0)) / 2.0


def _spd_solve(M):
    """The solve of the symmetric positive definite ``M`` (scaled to a unit
    diagonal, then Cholesky, in place), or None when ``M`` is not finite or
    does not factor."""
    if not np.isfinite(M).all():
        return None
    M, scale = equilibrate(M, 0.0)
    try:
        cf = spd_factor(M)
    except np.linalg.LinAlgError:
        return None
    return lambda b: scaled_solve(cf, scale, b)


def _apply(cols, h, e, x):
    """``(X^T diag(h) X + diag(e)) x`` on the columns ``cols``."""
    return np.asarray(cols.T @ (h * np.asarray(cols @ x).ravel())).ravel() + e * x


def dense_flops(n, m) -> float:
    """The products of forming and factoring the system on dense ``n x m``
    columns, in the cheaper form: ``min(n m^2 + m^3 / 3, n^2 m + n^3 / 3)``."""
    n, m = float(n), float(m)
    return min(n * m * m + m ** 3 / 3.0, n * n * m + n ** 3 / 3.0)


class NewtonSystem:
    """The system on the columns ``cols`` (dense Fortran ``n x m``, or CSC with
    sorted indices), in the form of fewer predicted flops (attribute
    ``by_rows``); :meth:`factor` returns the solve."""

    #: a direct solve makes no CG iterations (:class:`CGNewtonSystem` counts them)
    cg_iterations = 0

    def __init__(self, cols):
        self.cols = cols
        n, m = cols.shape
        self.sparse = sp.issparse(cols)
        self._rows = None
        if self.sparse:
            self._rows = cols.tocsr()
            by_cols = _pairs(self._rows.indptr) + m ** 3 / 3.0
            by_rows = _pairs(cols.indptr) + n ** 3 / 3.0
        else:
            by_cols = float(n) * m * m + m ** 3 / 3.0
            by_rows = float(n) * n * m + n ** 3 / 3.0
        self.by_rows = by_rows < by_cols
        #: the predicted products of forming and factoring the matrix
        self.flops = min(by_rows, by_cols)
        if self.by_rows:
            self._rows = None
        self._gram = None               # the pairs kernel's view (WsGram), made once

    @property
    def size(self) -> int:
        """The factored matrix's dimension."""
        n, m = self.cols.shape
        return n if self.by_rows else m

    def _gram_view(self):
        """The pairs kernel's view: the columns by rows (local column indices)
        for the ``m x m`` matrix, or as they are (CSC, row indices) for the
        ``n x n`` one; ``H`` allocated once."""
        if self._gram is None:
            c = self.cols if self.by_rows else self._rows
            c.sort_indices()
            k = self.size
            self._gram = WsGram(c.data, c.indices, c.indptr, np.empty((k, k)),
                                np.empty(0))
        return self._gram

    def _weighted_gram(self, weight):
        """``X^T diag(weight) X`` (by columns) or ``X diag(weight) X^T`` (by rows),
        a new dense array."""
        if self.sparse:
            g = self._gram_view()
            form_gram(g, np.ascontiguousarray(weight, dtype=np.float64))
            return g.H.copy()
        X = self.cols
        if self.by_rows:
            Xs = X * np.sqrt(weight)[None, :]
            return Xs @ Xs.T
        return X.T @ (weight[:, None] * X)

    def apply(self, h, e, x):
        """``(X^T diag(h) X + diag(e)) x``."""
        return _apply(self.cols, h, e, x)

    def factor(self, h, e):
        """The solve ``b -> x`` of the system at ``(h, e)``, or None when its
        matrix is not finite or does not factor."""
        if self.by_rows:
            return self._factor_rows(h, e)
        M = self._weighted_gram(h)
        M.flat[::M.shape[0] + 1] += e
        return _spd_solve(M)

    def _factor_rows(self, h, e):
        X = self.cols
        root = np.sqrt(h)
        K = self._weighted_gram(1.0 / e)
        K *= root[:, None]
        K *= root[None, :]
        K.flat[::K.shape[0] + 1] += 1.0
        inner = _spd_solve(K)
        if inner is None:
            return None

        def woodbury(b):
            p = b / e
            t = inner(root * np.asarray(X @ p).ravel())
            return p - np.asarray(X.T @ (root * t)).ravel() / e

        def solve(b):
            x = woodbury(b)
            for _ in range(REFINE_STEPS):
                x = x + woodbury(b - self.apply(h, e, x))
            return x
        return solve


class CGNewtonSystem:
    """The system solved by preconditioned conjugate gradients
    (:func:`scipy.sparse.linalg.cg`), for a working set too large for either
    matrix: each product is one pass over ``X_S`` and one over ``X_S^T``, and
    no ``m x m`` or ``n x n`` matrix is formed (the truncated Newton
    interior-point method of Koh, Kim & Boyd 2007, Section 3.3).

    Preconditioner: block diagonal, the system itself (factored by
    :class:`NewtonSystem`) on the features whose curvature ``sum_i h_i
    x_ij^2`` exceeds ``CG_BLOCK_RATIO`` times ``e_j`` (at most ``CG_BLOCK``, the
    largest ratios: near a pure L1 optimum, the nonzero coefficients), and its
    diagonal ``sum_i h_i x_ij^2 + e_j`` on the others.  Each solve stops at
    a relative residual of ``CG_RTOL`` or after ``CG_MAX_ITER`` products, and
    returns its last iterate (the certificate is computed exactly whatever
    the direction's accuracy)."""

    by_rows = False

    def __init__(self, cols):
        self.cols = cols
        self.sparse = sp.issparse(cols)
        self._sq = cols.multiply(cols).tocsc() if self.sparse else cols * cols
        #: the CG iterations of every solve so far
        self.cg_iterations = 0
        #: the features the last factor's preconditioner factors exactly
        self.block_size = 0

    @property
    def size(self) -> int:
        return self.cols.shape[1]

    def apply(self, h, e, x):
        """``(X^T diag(h) X + diag(e)) x``."""
        return _apply(self.cols, h, e, x)

    def factor(self, h, e):
        """The solve ``b -> x`` of the system at ``(h, e)`` by preconditioned
        CG, or None when ``h`` or ``e`` is not finite."""
        if not (np.isfinite(h).all() and np.isfinite(e).all()):
            return None
        m = self.size
        data = np.asarray(self._sq.T @ h).ravel()
        inv_diag = 1.0 / (data + e)
        ratio = data / e
        F = np.flatnonzero(ratio > CG_BLOCK_RATIO)
        if F.size > CG_BLOCK:
            F = np.sort(F[np.argsort(-ratio[F], kind="stable")[:CG_BLOCK]])
        block = NewtonSystem(self.cols[:, F]).factor(h, e[F]) if F.size else None
        self.block_size = int(F.size)

        def precondition(r):
            x = inv_diag * r
            if block is not None:
                x[F] = block(r[F])
            return x
        A = spla.LinearOperator((m, m), matvec=lambda x: self.apply(h, e, x), dtype=np.float64)
        M = spla.LinearOperator((m, m), matvec=precondition, dtype=np.float64)

        def solve(b):
            count = [0]

            def tick(_):
                count[0] += 1
            x, _ = spla.cg(A, b, rtol=CG_RTOL, atol=0.0, maxiter=CG_MAX_ITER, M=M,
                           callback=tick)
            self.cg_iterations += count[0]
            return x
        return solve
