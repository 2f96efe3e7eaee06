"""Row loops of the Crammer-Singer interior-point method
(:mod:`primaldual.solvers.crammer_singer_ipm`), one pass each over the (n, K)
arrays instead of a numpy temporary per operation.

Per row ``i`` (label ``y``), with ``D = mu / s``, ``delta = 1^T D`` and the
pivot ``j`` (the largest ``D_k``), the row's Schur block ``Q = D - D D^T /
delta`` is applied as ``Q v = D w - D (D . w) / delta`` with ``w = v - v_j 1``
(``Q 1 = 0``): the large ``D_j`` of an active constraint meets no
cancellation (``w_j = 0``).

``cs_ipm_point``   the residuals ``r_s``, ``r_xi``, ``D``, the pivots and ``M``
                   (for ``r_w = lam coef + X^T M``), from the raw scores
``cs_ipm_rhs``     ``R = Q h - (D - delta e_y) r_xi / delta``, ``h = r_s - r_c / mu``
``cs_ipm_back``    ``dxi, dmu, ds`` from ``dz = X dcoef``, and the longest step
``cs_ipm_qapply``  ``Q_i (z_i - z_{i y_i} 1)`` for raw scores ``z`` (refinement)
``cs_ipm_blocks``  each row's ``Q_i`` (K x K), for one product with the rows'
                   outer products ``x_i x_i^T``
``cs_ipm_center``  Gondzio's target: the products ``(s + a ds)(mu + a dmu)``
                   pushed into ``[lo, hi]``, as a complementarity residual
"""
from __future__ import annotations

from typing import NamedTuple

from numba import njit

__all__ = ["CSIPoint", "CSIStep", "cs_ipm_point", "cs_ipm_rhs", "cs_ipm_back",
           "cs_ipm_qapply", "cs_ipm_center", "longest_pair", "cs_ipm_blocks"]


class CSIPoint(NamedTuple):
    """The iterate's row arrays: labels (int64), slacks ``s`` and multipliers
    ``mu`` (n, K), and the row weights ``u`` (n,); ``D`` (n, K), ``delta`` and
    ``piv`` (n,) are filled by :func:`cs_ipm_point`."""
    y: object
    s: object
    mu: object
    u: object
    D: object
    delta: object
    piv: object


class CSIStep(NamedTuple):
    """A direction's row parts (outputs): ``dxi`` (n,), ``dmu``, ``ds`` (n, K)."""
    dxi: object
    dmu: object
    ds: object


@njit(cache=True, nogil=True)
def cs_ipm_point(p, Z, xi, r_s, r_xi, M):
    """``r_s = s - xi 1 + e + z - z_y 1``, ``r_xi = 1^T mu - u``, ``M_i = mu_i -
    (1^T mu_i) e_y``, and ``D``, ``delta``, ``piv`` in ``p``; returns ``sum s mu``."""
    n, K = Z.shape
    comp = 0.0
    for i in range(n):
        yi = p.y[i]
        zy = Z[i, yi]
        tot, dsum, best, jb = 0.0, 0.0, -1.0, 0
        for k in range(K):
            e = 0.0 if k == yi else 1.0
            r_s[i, k] = p.s[i, k] - xi[i] + e + (Z[i, k] - zy)
            m = p.mu[i, k]
            tot += m
            comp += p.s[i, k] * m
            dk = m / p.s[i, k]
            p.D[i, k] = dk
            dsum += dk
            M[i, k] = m
            if dk > best:
                best, jb = dk, k
        M[i, yi] -= tot
        r_xi[i] = tot - p.u[i]
        p.delta[i] = dsum
        p.piv[i] = jb
    return comp


@njit(cache=True, nogil=True)
def cs_ipm_rhs(p, r_s, r_c, r_xi, R):
    """``R_i = Q_i h_i - (D_i - delta_i e_y) r_xi_i / delta_i``, ``h = r_s - r_c / mu``."""
    n, K = R.shape
    for i in range(n):
        j = p.piv[i]
        hj = r_s[i, j] - r_c[i, j] / p.mu[i, j]
        q = 0.0
        for k in range(K):
            w = (r_s[i, k] - r_c[i, k] / p.mu[i, k]) - hj
            R[i, k] = w
            q += p.D[i, k] * w
        q /= p.delta[i]
        rx = r_xi[i] / p.delta[i]
        for k in range(K):
            R[i, k] = p.D[i, k] * (R[i, k] - q) - p.D[i, k] * rx
        R[i, p.y[i]] += r_xi[i]


@njit(cache=True, nogil=True)
def _bound(x, dx, best):
    if dx < 0.0:
        r = -x / dx
        if r < best:
            return r
    return best


@njit(cache=True, nogil=True)
def cs_ipm_back(p, dz, r_s, r_c, r_xi, out):
    """With ``v = dz - dz_y 1 + h``, ``w = v - v_j 1``, ``t = (D . w + r_xi) /
    delta``: ``dxi = v_j + t``, ``dmu = D (w - t)``, ``ds = (-r_c - s dmu) / mu``;
    returns the largest step in (0, 1] keeping ``s`` and ``mu`` nonnegative."""
    n, K = dz.shape
    a = 1.0
    for i in range(n):
        yi, j = p.y[i], p.piv[i]
        vj = (dz[i, j] - dz[i, yi]) + (r_s[i, j] - r_c[i, j] / p.mu[i, j])
        t = r_xi[i]
        for k in range(K):
            w = (dz[i, k] - dz[i, yi]) + (r_s[i, k] - r_c[i, k] / p.mu[i, k]) - vj
            out.dmu[i, k] = w
            t += p.D[i, k] * w
        t /= p.delta[i]
        out.dxi[i] = vj + t
        for k in range(K):
            dm = p.D[i, k] * (out.dmu[i, k] - t)
            out.dmu[i, k] = dm
            ds = (-r_c[i, k] - p.s[i, k] * dm) / p.mu[i, k]
            out.ds[i, k] = ds
            a = _bound(p.mu[i, k], dm, _bound(p.s[i, k], ds, a))
    return a


@njit(cache=True, nogil=True)
def cs_ipm_qapply(p, Z, out):
    """``out_i = Q_i (z_i - z_{i y} 1) = Q_i w``, ``w = z_i - z_{ij} 1``."""
    n, K = Z.shape
    for i in range(n):
        zj = Z[i, p.piv[i]]
        q = 0.0
        for k in range(K):
            q += p.D[i, k] * (Z[i, k] - zj)
        q /= p.delta[i]
        for k in range(K):
            out[i, k] = p.D[i, k] * ((Z[i, k] - zj) - q)


@njit(cache=True, nogil=True)
def cs_ipm_center(p, step, a, lo, hi, r_c):
    """Gondzio's corrector residual ``r_c = -t``: ``t`` moves the trial products
    ``v = (s + a ds)(mu + a dmu)`` into ``[lo, hi]`` (``t = lo - v`` below,
    ``max(hi - v, -hi)`` above, 0 inside)."""
    n, K = r_c.shape
    for i in range(n):
        for k in range(K):
            v = (p.s[i, k] + a * step.ds[i, k]) * (p.mu[i, k] + a * step.dmu[i, k])
            if v < lo:
                r_c[i, k] = v - lo
            elif v > hi:
                r_c[i, k] = -max(hi - v, -hi)
            else:
                r_c[i, k] = 0.0


@njit(cache=True, nogil=True)
def longest_pair(s, ds, mu, dmu):
    """The largest step in (0, 1] keeping ``s + a ds`` and ``mu + a dmu`` >= 0."""
    n, K = s.shape
    a = 1.0
    for i in range(n):
        for k in range(K):
            a = _bound(mu[i, k], dmu[i, k], _bound(s[i, k], ds[i, k], a))
    return a



@njit(cache=True, nogil=True)
def cs_ipm_blocks(p, Qf):
    """Each row's Schur block ``Q_i`` (K x K) into ``Qf[i]`` (K * K), without
    cancellation: ``Q_kl = D_k 1[k = l] - D_k D_l / delta`` off the pivot ``j``,
    ``Q_jl = -D_j D_l / delta`` and ``Q_jj = D_j (delta - D_j) / delta`` with
    ``delta - D_j`` summed from the other entries."""
    n, K = p.D.shape
    for i in range(n):
        j, dl = p.piv[i], p.delta[i]
        rest = 0.0
        for k in range(K):
            if k != j:
                rest += p.D[i, k]
        for k in range(K):
            dk = p.D[i, k]
            for m in range(K):
                Qf[i, k * K + m] = -dk * p.D[i, m] / dl
            if k != j:
                Qf[i, k * K + k] += dk
        Qf[i, j * K + j] = p.D[i, j] * rest / dl
