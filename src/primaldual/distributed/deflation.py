"""The shared directions of the rows for CoCoA+'s deflated coupling.

:func:`shared_directions` returns an orthonormal ``U`` (d, r): the mean row
and the top right singular vectors of ``X`` (Halko, Martinsson & Tropp 2011,
scikit-learn's ``randomized_svd`` with ``n_iter`` power iterations).  On
these directions the rows of every partition overlap, so CoCoA+'s local
subproblems take the safe factor ``K`` there and an adapted factor on the
rest (:mod:`primaldual.kernels.deflated`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["shared_directions", "SVD_PASSES"]

#: power iterations of the randomized SVD
N_ITER = 3
#: passes over the data that :func:`shared_directions` makes (mean row, the
#: range finder's 2 N_ITER + 2, the final projection)
SVD_PASSES = 2 * N_ITER + 4


def shared_directions(X, r, random_state):
    """``U`` (d, min(r, d)) with orthonormal columns spanning the mean row of
    ``X`` and its top ``r - 1`` right singular vectors (directions whose
    columns are numerically dependent are dropped)."""
    from sklearn.utils.extmath import randomized_svd

    n, d = X.shape
    r = int(min(r, d))
    cols = [np.asarray(X.sum(axis=0), dtype=np.float64).ravel() / n]
    if r > 1 and min(n, d) > 1:
        k = min(r - 1, min(n, d) - 1)
        _, _, Vt = randomized_svd(X, k, n_iter=N_ITER, random_state=random_state)
        cols.extend(np.asarray(Vt, dtype=np.float64))
    A = np.array(cols).T
    Q, R = np.linalg.qr(A)
    diag = np.abs(np.diag(R))
    keep = diag > 1e-10 * max(float(diag.max(initial=0.0)), 1e-300)
    return np.ascontiguousarray(Q[:, keep][:, :r])
