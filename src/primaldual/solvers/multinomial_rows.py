"""The multinomial Newton system solved in the space of the rows.

:class:`~primaldual.solvers.multinomial.MultinomialNewton` solves ``H s =
-g`` with, at the current probabilities ``P`` (n x K), row weights ``c`` and
total weight ``W``::

    H = lam I + (1/W) sum_i c_i (x_i x_i^T) kron A_i,   A_i = diag(p_i) - p_i p_i^T.

With ``L_i`` the symmetric square root of ``A_i`` (``A_i`` is positive
semi-definite: its null vector is the ones), ``H = lam I + B B^T`` where
``B`` (dK x nK) has the columns ``sqrt(c_i / W) x_i kron L_i``.  By the
Sherman-Morrison-Woodbury identity::

    s = -H^{-1} g = -(g - B u) / lam,   (lam I + B^T B) u = B^T g,

an ``nK x nK`` system in the rows, which conjugate gradients solves with the
block Jacobi preconditioner ``lam I + (c_i / W) ||x_i||^2 A_i`` (exact per
row: ``A_i``'s eigenvectors diagonalize it).  A product with ``lam I + B^T
B`` is one pass (a product with ``X^T`` and one with ``X``), as a Hessian
product is.

Where the rows are fewer than the features and most rows are fitted with
confidence (``A_i`` near zero: weakly regularized fits on text, news20 at
``C = 100``), the block Jacobi preconditioner takes the rows' own scales out
and the rows' coupling ``x_i . x_j`` is weak: CG solves this system to
``1e-12`` in a few hundred products where CG on ``H`` itself, preconditioned
by its diagonal, leaves a residual of 0.2 after 1,000
(``benchmarks/results/multinomial-news20-rows.md``).  Near the start (``P``
uniform, every row active) it is the reverse, so the solver switches to it
only when a step in the features has cost more than it is likely to here.

``s`` is recovered by a subtraction divided by ``lam``: the solve must be
accurate (relative residual ``ROWS_TOL``), and its result is checked by one
Hessian product in the features before it is used.
"""
from __future__ import annotations

import numpy as np

from .._util.cg import flat_dot, pcg
from ._base import SolveResult

__all__ = ["RowSpaceSystem", "ROWS_TOL", "ROWS_CHECK", "ROWS_MAX_ENTRIES"]

#: CG in the rows stops at ||r|| <= ROWS_TOL ||B^T g|| (the subtraction that
#: recovers s loses what lam loses against ||B u||)
ROWS_TOL = 1e-12
#: a row-space step is used when its Newton residual in the features,
#: ||H s + g|| / ||g||, is at most this
ROWS_CHECK = 0.1
#: the square roots of the A_i (n K^2 values) are formed only up to this many
ROWS_MAX_ENTRIES = 5e7


class RowSpaceSystem:
    """``H s = -g`` by CG on ``(lam I + B^T B) u = B^T g`` (module docstring)
    at the probabilities ``P``, with ``sqnorm`` the rows' ``||x_i||^2``; one
    instance per Newton step."""

    def __init__(self, X, XT, sqnorm, P, c, W, lam):
        n, K = P.shape
        A = -P[:, :, None] * P[:, None, :]
        idx = np.arange(K)
        A[:, idx, idx] += P
        ev, V = np.linalg.eigh(A)
        ev = np.maximum(ev, 0.0)
        scale = np.sqrt(np.asarray(c, dtype=np.float64) / W)
        # L_i scaled by sqrt(c_i / W): B's column blocks are x_i kron L_i
        self.L = np.matmul(V * np.sqrt(ev)[:, None, :], V.transpose(0, 2, 1)) \
            * scale[:, None, None]
        self.V = V
        self.inv = 1.0 / (lam + (np.asarray(sqnorm) * scale ** 2)[:, None] * ev)
        self.X, self.XT, self.lam = X, XT, lam

    def _l(self, U):
        return np.matmul(self.L, U[:, :, None])[:, :, 0]

    def b_rows(self, U):
        """``B u`` (d x K) of a row vector ``u`` (n x K)."""
        return np.asarray(self.XT @ self._l(U))

    def bt(self, D):
        """``B^T D`` (n x K) of ``D`` (d x K)."""
        return self._l(np.asarray(self.X @ D))

    def _precondition(self, R):
        t = np.matmul(self.V.transpose(0, 2, 1), R[:, :, None])[:, :, 0] * self.inv
        return np.matmul(self.V, t[:, :, None])[:, :, 0]

    def solve(self, g, max_products, late=None):
        """``(s, products, converged)``: ``s = -(g - B u) / lam`` from CG on
        the rows to ``ROWS_TOL`` or ``max_products`` products (each one pass;
        ``B^T g`` and ``B u`` are half a pass each, not counted here), or
        until ``late()``."""
        b = self.bt(g)
        u, r, it = pcg(lambda p: self.lam * p + self.bt(self.b_rows(p)), self._precondition,
                       b, ROWS_TOL, max_products, flat_dot, late=late)
        converged = np.sqrt(flat_dot(r, r)) <= ROWS_TOL * np.sqrt(flat_dot(b, b))
        return -(g - self.b_rows(u)) / self.lam, it, bool(converged)


def kept_rows(ws):
    """The row-space steps' state a warm start's run ended with, ``(in use, the
    feature-step products that try them again, the last solve's products)``
    (None: none kept), so that a warm-started leg of ``solver="auto"`` goes on
    in the rows where the last leg was, as it goes on with its trust radius."""
    last = ws.trace[-1] if isinstance(ws, SolveResult) and ws.trace else None
    if last is None or "rows_next" not in last:
        return None
    return bool(last["rows_on"]), int(last["rows_next"]), int(last["rows_last"])
