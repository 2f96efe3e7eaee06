"""One partition's preconditioner for the distributed Newton-CG (DiSCO).

``z ~ (A_k + lam' I)^{-1} r`` with ``A_k = sum_{i in k} a_i x_i x_i^T``,
``a_i = D_i / W_k`` (the partition's estimate of the Hessian's data part),
``lam' = lam + mu``, by a symmetric two-level iteration (multiplicative
Schwarz; Saad, *Iterative Methods for Sparse Linear Systems*, 2nd ed., §14.3):

1. a coarse solve on the ``coarse`` columns of largest ``sum_i x_ij^2`` (the
   frequent words that every row shares, which make the few large
   eigenvalues): ``z1 = V E^{-1} V^T r``, ``E = V^T (A_k + lam' I) V``;
2. ``sweeps`` symmetric Gauss-Seidel sweeps on the dual of the residual system
   (:func:`primaldual.kernels.precond.sgs_solve`);
3. the coarse solve again on the new residual.

Each step is a fixed symmetric map and steps 1 and 3 are the same
``B``-orthogonal projection, so ``r -> z`` is linear, symmetric and positive
definite: preconditioned CG keeps its guarantees.  Without coarse columns the
map is the Gauss-Seidel sweeps alone, which leave the shared directions
almost uncorrected (measured: one eigenvalue of the preconditioned Hessian at
67 on 3,000 rows of the shared-vocabulary text, growing with ``n``).
:meth:`LocalSolve.solve` runs conjugate gradient preconditioned by this map
on the partition's own system (GIANT's local Newton direction);
:func:`dual_cd_solve` solves that system by dual coordinate ascent instead
(:func:`primaldual.kernels.precond.dual_cd`), an epoch a pass.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .._util.cg import pcg
from ..kernels.newton import hess_vec
from ..kernels.objective import weighted_sum
from ..kernels.precond import DualCDState, LocalQuad, dual_cd, sgs_solve
from ..kernels.status import STATUS_OK

__all__ = ["LocalSolve", "dual_cd_solve"]


#: epochs of permutations drawn at a time for :func:`dual_cd_solve`
CHUNK_EPOCHS = 4


def dual_cd_solve(rows, a, g, lam, tol, max_epochs, rng):
    """``p ~ -(A_k + lam I)^{-1} g``, ``A_k = sum_i a_i x_i x_i^T`` over the
    partition's rows ``rows`` (a :class:`~primaldual.kernels.views.RowsView`),
    by dual coordinate ascent from ``beta = 0`` (``p = -g / lam``), each
    epoch over a new random permutation of the rows (drawn from the Generator
    ``rng``), until the
    epoch's summed duality gap is at most ``tol`` times ``-D(beta)`` or
    ``max_epochs`` epochs (:func:`~primaldual.kernels.precond.dual_cd`).
    Returns ``(p, epochs, passes)``: an epoch reads each row once."""
    n_k = a.shape[0]
    g = np.ascontiguousarray(g, dtype=np.float64)
    beta, p = np.zeros(n_k), -g / float(lam)
    a = np.ascontiguousarray(a, dtype=np.float64)
    epochs = 0
    while epochs < max_epochs:
        E = min(CHUNK_EPOCHS, max_epochs - epochs)
        order = np.concatenate([rng.permutation(n_k) for _ in range(E)]).astype(np.int64)
        status, ep, gap, dual, done = dual_cd(
            rows, LocalQuad(a, g, float(lam), float(tol), E), DualCDState(beta, p, order))
        epochs += int(ep)
        if status != STATUS_OK:
            raise FloatingPointError(f"the local dual coordinate ascent of GIANT's Newton "
                                     f"system met a non-finite value (gap {gap}, dual "
                                     f"{dual}) after {epochs} epochs: scale the features")
        if done or n_k == 0:
            break
    return p, epochs, float(epochs)


class LocalSolve:
    """The fixed parts (coarse columns) of one partition's preconditioner.

    X_k : the partition's rows (CSR matrix or 2-D array); view : its
    ``(data, indices, indptr, iptr)`` kernel view; sqnorm : ``||x_i||^2``.
    """

    def __init__(self, X_k, view, sqnorm, coarse):
        self.X = X_k
        self.view = view
        self.sqnorm = sqnorm
        d = X_k.shape[1]
        if sp.issparse(X_k):
            col = np.bincount(X_k.indices, weights=np.square(X_k.data, dtype=np.float64),
                              minlength=d)
        else:
            col = np.einsum("ij,ij->j", X_k, X_k, dtype=np.float64)
        order = np.argsort(-col, kind="stable")[:int(coarse)]
        self.top = np.sort(order[col[order] > 0.0])
        self.Xt = X_k[:, self.top]
        if sp.issparse(self.Xt):
            self.Xt = self.Xt.tocsr()
        self._key = None
        self._E = None

    def _coarse(self, a, lam_mu, key):
        """The Cholesky factor of ``E = V^T (A_k + lam' I) V`` (cached per point)."""
        if key != self._key:
            Xt = self.Xt
            if sp.issparse(Xt):
                E = (Xt.T @ sp.diags(a) @ Xt).toarray()
            else:
                E = Xt.T @ (a[:, None] * Xt)
            E[np.diag_indices_from(E)] += lam_mu
            self._E = scipy.linalg.cho_factor(E, check_finite=False)
            self._key = key
        return self._E

    def apply(self, r, a, lam_mu, sweeps, key):
        """``z`` for the right-hand side ``r``, curvatures ``a`` (``D_i / W_k``)
        and ``lam_mu``; ``key`` names the point ``a`` belongs to."""
        top = self.top
        if top.size == 0:
            z = r / lam_mu
            sgs_solve(*self.view, a, self.sqnorm, float(lam_mu), int(sweeps), z,
                      np.zeros(a.shape[0]))
            return z
        E = self._coarse(a, lam_mu, key)
        X = self.X
        z = np.zeros_like(r)
        z[top] = scipy.linalg.cho_solve(E, r[top], check_finite=False)
        Bz = X.T @ (a * (self.Xt @ z[top])) + lam_mu * z
        e = (r - Bz) / lam_mu
        sgs_solve(*self.view, a, self.sqnorm, float(lam_mu), int(sweeps), e,
                  np.zeros(a.shape[0]))
        z += e
        res_top = r[top] - self.Xt.T @ (a * (X @ z)) - lam_mu * z[top]
        z[top] += scipy.linalg.cho_solve(E, res_top, check_finite=False)
        return z

    def solve(self, rhs, a, lam, sweeps, key, tol, max_iter):
        """``s ~ (A_k + lam I)^{-1} rhs`` by conjugate gradient preconditioned
        by :meth:`apply` (at ``lam_mu = lam``), from zero, to ``||res|| <= tol
        ||rhs||`` or ``max_iter`` steps.  Returns ``(s, steps, passes)``:
        ``passes`` counts the reads of the partition's rows (one a product,
        ``2 sweeps + 2`` a preconditioner application)."""
        per_apply = 2.0 * sweeps + (2.0 if self.top.size else 0.0)
        Ap = np.empty_like(rhs)
        passes = [0.0]

        def product(p):
            out = Ap
            hess_vec(*self.view, a, p, out)
            out += lam * p
            passes[0] += 1.0
            return out

        def precondition(res):
            passes[0] += per_apply
            return self.apply(res, a, lam, sweeps, key)

        s, _, it = pcg(product, precondition, rhs, tol, max_iter, weighted_sum)
        return s, it, passes[0]
