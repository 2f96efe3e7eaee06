"""Kernels of the sparse-model solver (:mod:`primaldual.solvers.sparse`).

The problem is ``min_w sum_i cw_i phi(x_i . w; y_i) + lam/2 ||w||^2 + l1 ||w||_1``
with ``cw_i = c_i / W``, read by columns (CSC: ``data[indptr[j]:indptr[j+1]]`` are
the entries of feature ``j`` in the rows ``indices[...]``).

On a working set ``ws`` of features the solver takes proximal Newton steps
(Yuan, Ho & Lin 2012, newGLMNET; Lee, Sun & Saunders 2014): the loss is
replaced by its second-order model at the current margins, the model plus the
penalty is minimized approximately by cyclic coordinate descent
(:func:`newton_direction`), and an Armijo line search on the true objective
(:func:`line_search`) sets the step.  For the squared loss the model is exact
and the method is coordinate descent.  :func:`ws_solve` alternates these with
the restricted duality gap of the working set, which decides when to stop.

Every kernel returns a status (:mod:`primaldual.kernels.status`) or counts; no
allocation happens inside the loops (the driver passes the work arrays).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..losses import dispatch as L
from ..losses.registry import CODES
from .status import STATUS_NONFINITE, STATUS_OK

LOGISTIC = CODES["logistic"]
SQUARED_HINGE = CODES["squared_hinge"]
SQUARED = CODES["squared"]
SQUARED_EPS = CODES["squared_epsilon_insensitive"]
SMOOTH_HINGE = CODES["smooth_hinge"]

__all__ = ["ColsView", "L1Spec", "NewtonWork", "loss_terms", "correlations",
           "margins_of", "column_norms", "ws_solve", "newton_direction",
           "line_search", "dual_sum", "WsGram", "form_gram", "gram_direction",
           "CgWork", "cg_refine", "csr_columns", "clip_to_domain"]

#: Armijo's sufficient-decrease constant and the most halvings of the step
_SIGMA = 0.01
_MAX_HALVINGS = 30
#: a direction refined by conjugate gradients is kept only if a step of at least
#: 2^-_CG_HALVINGS of it passes Armijo's test (else the plain direction is used)
_CG_HALVINGS = 1
#: the loosest relative residual :func:`ws_solve`'s adaptive rule gives conjugate
#: gradients
_CG_LOOSEST = 0.5
#: the rounding of a sum of n losses, relative to it
_ROUND = 4e-16
#: curvature added to every coordinate of the model (a zero column of the
#: generalized Hessian of the squared hinge), as LIBLINEAR's nu
_NU = 1e-12
#: the model of the squared hinge (and of the squared epsilon-insensitive loss
#: and the smoothed hinge) takes at least this share of ``2 sum_i cw_i x_ij^2``
#: along each coordinate (its generalized Hessian vanishes on the rows past the
#: margin, or inside the tube, and the smoothed hinge's on every row at ``w =
#: 0``; a vanishing curvature would make the step along a coordinate unbounded
#: and the line search fail)
_FLOOR = 1e-3
#: the model's constants and the losses whose curvature has the floor, as the
#: distributed proximal Newton (solvers/sparse/partitioned.py) uses them too
ARMIJO_SIGMA, SUM_ROUNDING, MODEL_NU, CURVATURE_FLOOR = _SIGMA, _ROUND, _NU, _FLOOR
FLOORED_CODES = (SQUARED_HINGE, SQUARED_EPS, SMOOTH_HINGE)
#: a zero coordinate whose model slope is below this fraction of l1 is shrunk
_SHRINK = 0.9
#: conjugate gradients restart at most this many times in a direction (each
#: restart follows a coordinate leaving the free set at zero)
_CG_RESTARTS = 20
#: a direction by columns that takes this many coordinate-descent passes makes
#: the working set's later directions come from the dense Hessian (when it has one)
_GRAM_PASSES = 8


class ColsView(NamedTuple):
    """The data by columns, the labels and the weights ``cw_i = c_i / W``."""
    data: object
    indices: object
    indptr: object
    y: object
    cw: object


class L1Spec(NamedTuple):
    """Loss code and parameter, ``lam``, ``l1``."""
    kind: int
    param: float
    lam: float
    l1: float


class NewtonWork(NamedTuple):
    """Work arrays: ``gu``, ``hu``, ``xdelta`` (n); ``grad``, ``hdiag``, ``delta``,
    ``skip``, ``extra``, ``order`` (|ws|): ``hdiag`` includes ``extra``, the
    curvature added to the model along each coordinate (``_FLOOR``); ``order``
    the coordinates' order in a pass; ``rng`` (1, uint64) the state of the
    generator that shuffles it (nonzero)."""
    gu: object
    hu: object
    xdelta: object
    grad: object
    hdiag: object
    delta: object
    skip: object
    extra: object
    order: object
    rng: object


@njit(cache=True, nogil=True)
def shuffle(order, state):
    """A uniformly random permutation of ``order`` in place (Fisher-Yates), drawn
    from the xorshift64 generator whose state is ``state[0]`` (nonzero; updated).
    Coordinate descent in a random order each pass (as LIBLINEAR's) converges
    far faster than in a fixed order on ill-conditioned models."""
    x = state[0]
    for i in range(order.shape[0] - 1, 0, -1):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        j = np.int64(x % np.uint64(i + 1))
        t = order[i]
        order[i] = order[j]
        order[j] = t
    state[0] = x


@njit(cache=True, nogil=True, inline="always")
def _terms(spec, a, y):
    """``(phi(a), phi'(a), phi''(a))``; the logistic loss with one exponential."""
    if spec.kind == LOGISTIC:
        z = -y * a
        e = math.exp(-abs(z))
        sig = 1.0 / (1.0 + e) if z >= 0.0 else e / (1.0 + e)      # sigmoid(z)
        return max(z, 0.0) + math.log1p(e), -y * sig, sig * (1.0 - sig)
    return (L.value(spec.kind, spec.param, a, y),
            L.derivative(spec.kind, spec.param, a, y),
            L.second_derivative(spec.kind, spec.param, a, y))


@njit(cache=True, nogil=True)
def loss_terms(spec, cols, margins, gu, hu):
    """``sum_i cw_i phi(a_i)``; fills ``gu_i = cw_i phi'(a_i)``, ``hu_i = cw_i phi''(a_i)``."""
    total = 0.0
    for i in range(margins.shape[0]):
        c = cols.cw[i]
        v, g, h = _terms(spec, margins[i], cols.y[i])
        total += c * v
        gu[i] = c * g
        hu[i] = c * h
    return total


@njit(cache=True, nogil=True)
def dual_sum(spec, cols, gu, scale):
    """``sum_i cw_i (-phi*(-alpha_i))`` for ``alpha_i = -phi'(a_i) / scale``
    (``gu_i = cw_i phi'(a_i)``); -inf outside the dual domain."""
    total = 0.0
    for i in range(gu.shape[0]):
        c = cols.cw[i]
        if c == 0.0:
            continue
        total += c * L.neg_conjugate(spec.kind, spec.param, -gu[i] / (c * scale), cols.y[i])
    return total


@njit(cache=True, nogil=True)
def clip_to_domain(spec, cols, g):
    """Puts the dual point ``alpha_i = -g_i / cw_i`` into the loss's dual domain
    in place: ``alpha_i y_i`` (or ``alpha_i``, by the loss's ``box``) clipped
    to ``[lo, hi]`` (``alpha_i y_i`` in ``[0, 1]`` for the logistic loss,
    ``>= 0`` for the squared hinge); rows with ``cw_i = 0`` get ``g_i = 0``.
    Dividing the result by any ``s >= 1`` keeps it there (every box holds 0)."""
    lo, hi, in_b = L.box(spec.kind, spec.param)
    for i in range(g.shape[0]):
        c = cols.cw[i]
        if c == 0.0:
            g[i] = 0.0
            continue
        a = -g[i] / c
        b = a * cols.y[i] if in_b else a
        if b < lo or b > hi:
            b = min(max(b, lo), hi)
            g[i] = -(b * cols.y[i] if in_b else b) * c


@njit(cache=True, nogil=True)
def correlations(cols, gu, feats, out):
    """``out[j] = -sum_i x_ij gu_i`` (= v_j) for ``j`` in ``feats``; returns the
    entries read."""
    acc = 0
    for k in range(feats.shape[0]):
        j = feats[k]
        s = 0.0
        for p in range(cols.indptr[j], cols.indptr[j + 1]):
            s += cols.data[p] * gu[cols.indices[p]]
        out[j] = -s
        acc += cols.indptr[j + 1] - cols.indptr[j]
    return acc


@njit(cache=True, nogil=True)
def margins_of(cols, w, out):
    """``out = X @ w`` from the columns with ``w_j != 0``; returns the entries read."""
    out[:] = 0.0
    acc = 0
    for j in range(w.shape[0]):
        wj = w[j]
        if wj != 0.0:
            for p in range(cols.indptr[j], cols.indptr[j + 1]):
                out[cols.indices[p]] += wj * cols.data[p]
            acc += cols.indptr[j + 1] - cols.indptr[j]
    return acc


@njit(cache=True, nogil=True)
def column_norms(cols, out):
    """``out[j] = sqrt(sum_i cw_i x_ij^2)``, the weighted column norms."""
    for j in range(out.shape[0]):
        s = 0.0
        for p in range(cols.indptr[j], cols.indptr[j + 1]):
            x = cols.data[p]
            s += cols.cw[cols.indices[p]] * x * x
        out[j] = math.sqrt(s)


@njit(cache=True, nogil=True)
def csr_columns(data, indices, indptr, cw, out_data, out_idx, out_ptr, out_norm):
    """The CSR rows (``data``, ``indices``, ``indptr``) by columns: ``out_*`` as
    CSC with each column's rows increasing (what ``scipy.sparse``'s ``tocsc``
    gives), and ``out_norm`` the weighted column norms of :func:`column_norms`
    (summed in the same order, so equal bit for bit), in one pass over the
    rows.  Returns the entries read."""
    n = indptr.shape[0] - 1
    d = out_ptr.shape[0] - 1
    out_ptr[:] = 0
    out_norm[:] = 0.0
    for p in range(indptr[0], indptr[n]):
        out_ptr[indices[p] + 1] += 1
    for j in range(d):
        out_ptr[j + 1] += out_ptr[j]
    for i in range(n):
        c = cw[i]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            q = out_ptr[j]
            x = data[p]
            out_data[q] = x
            out_idx[q] = i
            out_ptr[j] = q + 1
            out_norm[j] += c * x * x
    for j in range(d, 0, -1):
        out_ptr[j] = out_ptr[j - 1]
        out_norm[j - 1] = math.sqrt(out_norm[j - 1])
    out_ptr[0] = 0
    return indptr[n] - indptr[0]


@njit(cache=True, nogil=True, inline="always")
def _soft(u, t):
    if u > t:
        return u - t
    if u < -t:
        return u + t
    return 0.0


@njit(cache=True, nogil=True)
def newton_direction(spec, cols, ws, w, work, max_passes, eta):
    """Coordinate descent on the model ``grad . d + d' H d / 2 + lam/2 ||w + d||^2
    + l1 ||w + d||_1`` over the working set (``H = X' diag(hu) X``), from
    ``d = 0``; ``work.xdelta`` ends as ``X d``.  Passes stop once the largest
    ``H_jj |step_j|`` of a pass is at most ``eta`` times that of the first.
    A coordinate at zero whose slope is well inside ``[-l1, l1]`` (below
    ``_SHRINK l1``) is left out of the later passes (LIBLINEAR's shrinking).
    The coordinates are visited in a new random order each pass (:func:`shuffle`).
    Returns (passes, entries read)."""
    work.xdelta[:] = 0.0
    work.delta[:] = 0.0
    work.skip[:] = False
    first = -1.0
    acc = 0
    passes = 0
    for _ in range(max_passes):
        passes += 1
        big = 0.0
        shuffle(work.order, work.rng)
        for kk in range(ws.shape[0]):
            k = work.order[kk]
            if work.skip[k]:
                continue
            j = ws[k]
            h = work.hdiag[k] + spec.lam
            s = 0.0
            for p in range(cols.indptr[j], cols.indptr[j + 1]):
                i = cols.indices[p]
                s += cols.data[p] * work.hu[i] * work.xdelta[i]
            acc += cols.indptr[j + 1] - cols.indptr[j]
            z = w[j] + work.delta[k]
            g = work.grad[k] + s + work.extra[k] * work.delta[k] + spec.lam * z
            znew = _soft(z * h - g, spec.l1) / h       # its exact minimizer along j
            step = znew - z
            if z == 0.0 and step == 0.0 and abs(g) < _SHRINK * spec.l1:
                work.skip[k] = True
            if step != 0.0:
                work.delta[k] += step
                for p in range(cols.indptr[j], cols.indptr[j + 1]):
                    work.xdelta[cols.indices[p]] += step * cols.data[p]
                acc += cols.indptr[j + 1] - cols.indptr[j]
                big = max(big, h * abs(step))
        if first < 0.0:
            first = big
        if big <= eta * first or big == 0.0:
            break
    return passes, acc


class WsGram(NamedTuple):
    """The working set by rows (CSR, column indices local to ``ws``) and the
    dense model Hessian ``H = X_ws' diag(hu) X_ws`` with ``hd = H d``; ``H``
    of shape (0, 0): the directions come from :func:`newton_direction`;
    ``indptr`` of length 1: the rows are not built yet (:func:`ws_solve`)."""
    data: object
    indices: object
    indptr: object
    H: object
    hd: object


@njit(cache=True, nogil=True)
def form_gram(rows, hu):
    """``rows.H = X_ws' diag(hu) X_ws`` from the rows (local indices increasing
    along each row, as :func:`~primaldual.kernels.l1bounds.cols_to_rows` makes
    them); returns the products made."""
    H = rows.H
    H[:, :] = 0.0
    acc = 0
    for i in range(hu.shape[0]):
        h = hu[i]
        if h == 0.0:
            continue
        a, b = rows.indptr[i], rows.indptr[i + 1]
        for p in range(a, b):          # a row's local indices increase
            hp = h * rows.data[p]
            Hp = H[rows.indices[p]]
            for q in range(p, b):
                Hp[rows.indices[q]] += hp * rows.data[q]
        acc += (b - a) * (b - a + 1) // 2
    m = H.shape[0]
    for a in range(m):                  # the upper triangle was summed
        for b in range(a + 1, m):
            H[b, a] = H[a, b]
    return acc


@njit(cache=True, nogil=True)
def gram_direction(spec, cols, ws, w, work, rows, max_passes, eta):
    """:func:`newton_direction` with the dense model Hessian ``rows.H``: a step
    costs ``O(|ws|)`` instead of a column's entries; ``work.xdelta = X d`` is
    formed once at the end.  Returns (passes, entries read)."""
    H, hd = rows.H, rows.hd
    hd[:] = 0.0
    work.delta[:] = 0.0
    first = -1.0
    passes = 0
    m = ws.shape[0]
    for _ in range(max_passes):
        passes += 1
        big = 0.0
        shuffle(work.order, work.rng)
        for kk in range(m):
            k = work.order[kk]
            h = H[k, k] + _NU + work.extra[k] + spec.lam
            z = w[ws[k]] + work.delta[k]
            g = work.grad[k] + hd[k] + work.extra[k] * work.delta[k] + spec.lam * z
            step = _soft(z * h - g, spec.l1) / h - z
            if step != 0.0:
                work.delta[k] += step
                for a in range(m):
                    hd[a] += step * H[a, k]
                big = max(big, h * abs(step))
        if first < 0.0:
            first = big
        if big <= eta * first or big == 0.0:
            break
    work.xdelta[:] = 0.0
    acc = 0
    for k in range(m):
        dk = work.delta[k]
        if dk != 0.0:
            j = ws[k]
            for p in range(cols.indptr[j], cols.indptr[j + 1]):
                work.xdelta[cols.indices[p]] += dk * cols.data[p]
            acc += cols.indptr[j + 1] - cols.indptr[j]
    return passes, acc


class CgWork(NamedTuple):
    """Work arrays of :func:`cg_refine`: ``free``, ``r``, ``p``, ``q``, ``sign``,
    ``d0`` (|ws|); ``xp``, ``xd0`` (n)."""
    free: object
    r: object
    p: object
    q: object
    sign: object
    d0: object
    xp: object
    xd0: object


@njit(cache=True, nogil=True)
def _cg_matvec(cols, ws, work, cg, m):
    """``cg.q = H_FF cg.p`` over the free set (``H`` of :func:`newton_direction`
    without the ``lam + _NU`` diagonal); ``cg.xp = X_F p``.  Returns ``p'q``."""
    cg.xp[:] = 0.0
    for a in range(m):
        j = ws[cg.free[a]]
        pa = cg.p[a]
        for p in range(cols.indptr[j], cols.indptr[j + 1]):
            cg.xp[cols.indices[p]] += pa * cols.data[p]
    pq = 0.0
    for a in range(m):
        j = ws[cg.free[a]]
        s = 0.0
        for p in range(cols.indptr[j], cols.indptr[j + 1]):
            i = cols.indices[p]
            s += cols.data[p] * work.hu[i] * cg.xp[i]
        cg.q[a] = s
        pq += cg.p[a] * s
    return pq


@njit(cache=True, nogil=True)
def _cg_residual(spec, cols, ws, w, work, cg, m):
    """``cg.r = -(model gradient)`` over the free set and ``cg.p = cg.r / diag``
    (the Jacobi-preconditioned residual); returns ``(r' p, entries read)``."""
    rr = 0.0
    acc = 0
    for a in range(m):
        k = cg.free[a]
        j = ws[k]
        s = 0.0
        for p in range(cols.indptr[j], cols.indptr[j + 1]):
            i = cols.indices[p]
            s += cols.data[p] * work.hu[i] * work.xdelta[i]
        acc += cols.indptr[j + 1] - cols.indptr[j]
        z = w[j] + work.delta[k]
        r = -(work.grad[k] + s + (_NU + work.extra[k]) * work.delta[k] + spec.lam * z
              + spec.l1 * cg.sign[a])
        cg.r[a] = r
        cg.p[a] = r / (work.hdiag[k] + spec.lam)
        rr += r * cg.p[a]
    return rr, acc


@njit(cache=True, nogil=True)
def cg_refine(spec, cols, ws, w, work, cg, max_iter, rtol):
    """Conjugate gradients on the quadratic model of :func:`newton_direction`
    restricted to the orthant of ``w + d`` (``d`` the direction coordinate
    descent found): on the free set ``F = {k : w_j + d_k != 0}`` with the signs
    of ``w + d`` held, the model is smooth, ``(H_FF + lam + _NU) d_F =
    -(grad + l1 sign)_F - ...``.  A step that would take a coordinate across
    zero is cut where the first one reaches it, that coordinate leaves ``F``
    and CG restarts (at most ``_CG_RESTARTS`` times): projected CG as in
    active-set methods (Nocedal & Wright 2006, Section 16.6).  On an
    ill-conditioned ``H`` (the squared hinge's generalized Hessian on a support
    about as large as its active rows) the unconstrained minimizer lies far
    outside the orthant; cut steps keep every iterate in it, and every step
    lowers the model, so the result is never worse than ``d``.  Nothing is
    done unless ``w + d`` and ``w`` have the same support (the Newton-CG phase
    once the support is found: refining a direction that moves it measured
    slower, rcv1 shape logistic at ``l1_max/100`` 377 passes against 196).
    Stops at ``rtol`` times the first residual norm or ``max_iter`` products.
    Preconditioned by the Hessian's diagonal.  Updates ``work.delta``,
    ``work.xdelta``; returns the entries read."""
    m = 0
    for k in range(ws.shape[0]):
        z = w[ws[k]] + work.delta[k]
        if (z != 0.0) != (w[ws[k]] != 0.0):
            return 0                     # the support moves: the plain direction
        if z != 0.0:
            cg.free[m] = k
            cg.sign[m] = 1.0 if z > 0.0 else -1.0
            m += 1
    if m == 0:
        return 0
    rr, acc = _cg_residual(spec, cols, ws, w, work, cg, m)
    stop = rtol * rtol * rr
    it = 0
    nrest = 0
    while it < max_iter and m > 0 and rr > stop and rr > 0.0:
        it += 1
        pq = _cg_matvec(cols, ws, work, cg, m)
        nnz_f = 0
        for a in range(m):
            j = ws[cg.free[a]]
            nnz_f += cols.indptr[j + 1] - cols.indptr[j]
            e = spec.lam + _NU + work.extra[cg.free[a]]
            cg.q[a] += e * cg.p[a]
            pq += e * cg.p[a] * cg.p[a]
        acc += 2 * nnz_f
        if not pq > 0.0:
            break
        step = rr / pq
        hit = -1                          # the first coordinate the step takes to zero
        for a in range(m):
            z = w[ws[cg.free[a]]] + work.delta[cg.free[a]]
            if z * cg.p[a] < 0.0 and -z / cg.p[a] < step:
                step = -z / cg.p[a]
                hit = a
        rr_new = 0.0
        for a in range(m):
            k = cg.free[a]
            work.delta[k] += step * cg.p[a]
            cg.r[a] -= step * cg.q[a]
            rr_new += cg.r[a] * cg.r[a] / (work.hdiag[k] + spec.lam)
        for i in range(cg.xp.shape[0]):
            work.xdelta[i] += step * cg.xp[i]
        if hit >= 0:                      # at the boundary: leave F, restart
            acc += _cg_drop(cols, ws, w, work, cg, m, hit)
            m = _cg_compact(ws, w, work, cg, m)
            nrest += 1
            if nrest > _CG_RESTARTS:
                break
            rr, a = _cg_residual(spec, cols, ws, w, work, cg, m)
            acc += a
            continue
        beta = rr_new / rr
        rr = rr_new
        for a in range(m):
            cg.p[a] = cg.r[a] / (work.hdiag[cg.free[a]] + spec.lam) + beta * cg.p[a]
    return acc


@njit(cache=True, nogil=True)
def _cg_drop(cols, ws, w, work, cg, m, hit):
    """Puts the free coordinate ``hit`` (which the cut step took to zero up to
    rounding) and any at or past zero exactly at zero, ``xdelta`` kept equal to
    ``X d``; returns the entries read."""
    acc = 0
    for a in range(m):
        k = cg.free[a]
        j = ws[k]
        z = w[j] + work.delta[k]
        if a == hit or z * cg.sign[a] <= 0.0:
            work.delta[k] = -w[j]
            for p in range(cols.indptr[j], cols.indptr[j + 1]):
                work.xdelta[cols.indices[p]] -= z * cols.data[p]
            acc += cols.indptr[j + 1] - cols.indptr[j]
    return acc


@njit(cache=True, nogil=True)
def _cg_compact(ws, w, work, cg, m):
    """Removes the coordinates at zero from the free set; returns its new size."""
    out = 0
    for a in range(m):
        k = cg.free[a]
        if w[ws[k]] + work.delta[k] != 0.0:
            cg.free[out] = k
            cg.sign[out] = cg.sign[a]
            out += 1
    return out


@njit(cache=True, nogil=True)
def line_search(spec, cols, ws, w, margins, work, f0, halvings):
    """Armijo backtracking on ``F(w + t d)`` (``F`` restricted to the working
    set, ``f0 = F(w)``), at most ``halvings`` halvings; on success applies ``w += t d``, ``margins += t X d``,
    leaves ``work.gu``, ``work.hu`` at the new margins and returns (t, its loss
    sum); t = 0 when no step decreases ``F`` (``gu``, ``hu`` are then stale)."""
    lam, l1 = spec.lam, spec.l1
    gd = 0.0
    for k in range(ws.shape[0]):
        wj = w[ws[k]]
        dj = work.delta[k]
        gd += work.grad[k] * dj + lam * wj * dj + l1 * (abs(wj + dj) - abs(wj))
    if not gd < 0.0:
        return 0.0, f0
    t = 1.0
    for _ in range(halvings + 1):
        f = 0.0            # the trial's loss; gu, hu are its terms (kept if accepted)
        for i in range(margins.shape[0]):
            c = cols.cw[i]
            v, g, h = _terms(spec, margins[i] + t * work.xdelta[i], cols.y[i])
            f += c * v
            work.gu[i] = c * g
            work.hu[i] = c * h
        f_loss = f
        for k in range(ws.shape[0]):
            z = w[ws[k]] + t * work.delta[k]
            f += 0.5 * lam * z * z + l1 * abs(z)
        # the squared loss's model is exact: coordinate descent on it descends, and
        # F's rounding (about 1e-16 |F|) must not stop it; otherwise Armijo, with
        # that rounding allowed for
        if spec.kind == SQUARED or f - f0 <= _SIGMA * t * gd + _ROUND * abs(f0):
            for k in range(ws.shape[0]):
                w[ws[k]] += t * work.delta[k]
            for i in range(margins.shape[0]):
                margins[i] += t * work.xdelta[i]
            return t, f_loss
        t *= 0.5
    return 0.0, f0


@njit(cache=True, nogil=True)
def _ws_gradient(spec, cols, ws, w, work):
    """``work.grad``, ``work.hdiag`` and ``work.extra`` over the working set at
    ``work.gu``, ``work.hu``; returns (penalty of ``w`` on it, ``max |grad|``,
    ``sum (|grad| - l1)_+^2``, entries read).  The floor of the model's
    curvature (``_FLOOR``: the squared hinge, the squared epsilon-insensitive
    loss and the smoothed hinge) reads the weights too."""
    floor = spec.kind == SQUARED_HINGE or spec.kind == SQUARED_EPS or spec.kind == SMOOTH_HINGE
    pen = 0.0
    vmax = 0.0
    excess = 0.0
    acc = 0
    for k in range(ws.shape[0]):
        j = ws[k]
        g = 0.0
        h = 0.0
        hx = 0.0
        a, b = cols.indptr[j], cols.indptr[j + 1]
        if floor:
            for p in range(a, b):
                i = cols.indices[p]
                x = cols.data[p]
                g += x * work.gu[i]
                h += x * x * work.hu[i]
                hx += x * x * cols.cw[i]
        else:
            for p in range(a, b):
                i = cols.indices[p]
                x = cols.data[p]
                g += x * work.gu[i]
                h += x * x * work.hu[i]
        acc += b - a
        work.grad[k] = g
        work.extra[k] = max(0.0, 2.0 * _FLOOR * hx - h) if floor else 0.0
        work.hdiag[k] = h + _NU + work.extra[k]
        vmax = max(vmax, abs(g))
        if abs(g) > spec.l1:
            excess += (abs(g) - spec.l1) ** 2
        pen += 0.5 * spec.lam * w[j] * w[j] + spec.l1 * abs(w[j])
    return pen, vmax, excess, acc


@njit(cache=True, nogil=True)
def ws_solve(spec, cols, ws, w, margins, work, rows, cg, max_newton, stop_gap, max_passes,
             eta, refresh, max_acc, cg_iters, cg_rtol, gram_first, cg_adapt=0.0,
             gap0=math.inf, f_loss0=math.nan):
    """Proximal Newton on the working set ``ws`` (``w_j = 0`` outside it) until
    its restricted duality gap is at most ``stop_gap`` or ``max_newton``
    steps; the directions from the dense Hessian when ``rows.H`` has one
    (:func:`gram_direction`), else by columns (:func:`newton_direction`): the
    directions are by columns until one takes ``_GRAM_PASSES`` passes (or from
    the first step when ``gram_first``), then from the dense Hessian.  The
    dense Hessian is formed at the first ``refresh`` steps and then kept (a
    proximal quasi-Newton model: the line search keeps every step a descent).
    No new step (after the first) starts once ``max_acc`` entries have been read
    (the epoch budget).  Without the dense Hessian and with ``cg_iters > 0`` each
    direction is refined by :func:`cg_refine` (the plain one is used when a step
    of at least ``2^-_CG_HALVINGS`` of the refined one does not pass Armijo's test).  Returns (status, Newton steps taken,
    entries read, last restricted gap, 1 if the dense Hessian was in use, else
    0); 2 when the directions are to come from the dense Hessian but its rows
    are not built (``rows.indptr`` of length 1): the caller builds them and
    calls again, with the dense Hessian from the first step.  The restricted gap
    is not computed at the first step, where nothing stops (with ``max_newton
    > 0``): ``gap0`` stands for it there (the caller's full gap at ``w``).

    ``cg_adapt > 0`` loosens the conjugate gradients to the decrease that the
    restricted gap ``g`` still needs: relative residual ``max(cg_rtol,
    min(_CG_LOOSEST, cg_adapt sqrt(stop_gap / g)))`` (an inexact Newton step of
    relative residual ``rho`` leaves a gap of about ``rho^2 g`` plus Newton's
    quadratic term; Dembo, Eisenstat & Steihaug 1982).

    ``f_loss0``: the loss sum at ``margins`` when ``work.gu`` and ``work.hu``
    already hold its terms (:func:`loss_terms` at these margins: the caller's
    check); NaN: computed here."""
    acc = 0
    moved = 0
    gap = math.inf
    use_gram = gram_first and rows.H.shape[0] == ws.shape[0]
    f_loss = f_loss0
    if math.isnan(f_loss):
        f_loss = loss_terms(spec, cols, margins, work.gu, work.hu)
    for it in range(max_newton + 1):
        pen, vmax, excess, a = _ws_gradient(spec, cols, ws, w, work)
        acc += a
        f0 = f_loss + pen
        if not math.isfinite(f0):
            return STATUS_NONFINITE, it, acc, gap, 1 if use_gram else 0
        if it == 0 and max_newton > 0:
            gap = gap0                   # no stop at the first step: not computed
        elif spec.lam == 0.0:
            gap = f0 - dual_sum(spec, cols, work.gu, max(1.0, vmax / spec.l1))
        else:
            gap = f0 - (dual_sum(spec, cols, work.gu, 1.0) - excess / (2.0 * spec.lam))
        if ((gap <= stop_gap or acc >= max_acc) and it > 0) or it == max_newton:
            return STATUS_OK, moved, acc, gap, 1 if use_gram else 0
        a_cols = not use_gram
        if use_gram:
            if it < refresh:
                acc += form_gram(rows, work.hu)
            _, a = gram_direction(spec, cols, ws, w, work, rows, 50 * max_passes,
                                  eta * 1e-2)
        else:
            passes, a = newton_direction(spec, cols, ws, w, work, max_passes, eta)
            # a slow direction by columns: the dense Hessian from the next step on
            use_gram = rows.H.shape[0] == ws.shape[0] and passes >= _GRAM_PASSES
            if cg_iters > 0:
                cg.d0[:] = work.delta
                cg.xd0[:] = work.xdelta
                rtol = cg_rtol
                if cg_adapt > 0.0 and gap > 0.0:
                    rtol = max(cg_rtol, min(_CG_LOOSEST,
                                            cg_adapt * math.sqrt(max(stop_gap, 0.0) / gap)))
                a += cg_refine(spec, cols, ws, w, work, cg, cg_iters, rtol)
        acc += a
        refined = cg_iters > 0 and a_cols
        t, f_loss = line_search(spec, cols, ws, w, margins, work, f0,
                                _CG_HALVINGS if refined else _MAX_HALVINGS)
        if t == 0.0 and refined:
            work.delta[:] = cg.d0        # the refined direction failed: the plain one
            work.xdelta[:] = cg.xd0
            t, f_loss = line_search(spec, cols, ws, w, margins, work, f0, _MAX_HALVINGS)
        if t == 0.0:
            return STATUS_OK, moved, acc, gap, 1 if use_gram else 0
        moved += 1
        if use_gram and rows.indptr.shape[0] == 1:
            return STATUS_OK, moved, acc, gap, 2       # the rows are wanted now
    return STATUS_OK, moved, acc, gap, 1 if use_gram else 0
