"""SPDC kernels (Zhang & Xiao, ICML 2015): Algorithms 1 and 2 with the lazy
sparse updates of Section 4.

Variables (paper -> ours).  The paper's saddle function (4) is written for
``psi_i = rho_i phi_i`` with ``rho_i = n c_i / W`` (so that the weighted
objective of docs/conventions.md §1, ``(1/W) sum_i c_i phi_i`` equals the paper's ``(1/n) sum_i psi_i``);
the paper's dual variable of ``psi_i`` is ``rho_i ytilde_i`` and
``ytilde_i = -alpha_i`` (our SDCA-convention dual, docs/conventions.md §1).  The paper's
``u = (1/n) sum_i y_i a_i = sum_i (c_i/W) ytilde_i a_i = -v``.  ``x`` is our
``w``.  With unit weights ``rho_i = 1`` and everything is the paper verbatim.

Dual step (5) / (12).  With ``A = <a_k, xbar>`` and ``beta = -alpha_new``::

    argmax_b { b A - phi*(b) - (rho_k / (2 sigma_k)) (b - ytilde_k)^2 }
  = -argmax_beta { -phi*(-beta) - A beta - (s/2) (beta - alpha_k)^2 },

``s = rho_k / sigma`` (Algorithm 1) or ``s = rho_k p_k n / sigma``
(Algorithm 2).  Up to the constant ``A alpha_k`` this is exactly the SDCA
coordinate objective of :func:`primaldual.losses.dispatch.dual_step`, whose closed forms
(hinge, smoothed hinge, squared hinge, squared, absolute,
epsilon-insensitive) and safeguarded logit-space Newton (logistic) therefore
give (5) for every loss.  For the squared loss, for example,
``beta = (y - A + s alpha)/(1 + s)``.  The delta-perturbation of Section 3.1
adds ``delta rho_k b^2 / 2`` to ``phi*``; completing the square,
``-(delta_k/2) beta^2 - (s/2)(beta - alpha)^2 = -((s + delta_k)/2)(beta - s
alpha/(s + delta_k))^2 + const``, so the step is ``dual_step`` with curvature
``s + delta_k`` centred at ``s alpha / (s + delta_k)`` (a convex combination
of ``alpha`` and 0, hence inside the dual domain).

Primal step (6) / (13) for ``g(x) = l1 ||x||_1 + (l2/2) ||x||^2`` is
coordinate-wise (Section 4.2, eq. (16))::

    x_j <- F(x_j; z_j) = S(x_j - tau z_j, tau l1) / (1 + tau l2),
    z = u + Delta u,   S(a, t) = sign(a) max(|a| - t, 0),

``Delta u = (1/m) sum_{k in K} rho_k (ytilde_k' - ytilde_k) a_k`` (Algorithm 1)
or ``rho_k (ytilde_k' - ytilde_k) a_k / (p_k n)`` (Algorithm 2).

Lazy updates (Section 4).  A coordinate ``j`` outside the sampled rows sees
``Delta u_j = 0`` and a constant ``u_j``, so between touches it follows the
autonomous recursion ``x <- F(x; u_j)``.  :func:`prox_recursion` applies ``k``
steps of it in O(1):

* ``l1 = 0`` (after (15)): ``F`` is affine with fixed point ``x* = -u/l2`` and
  ``F^k(x) = x* + c^k (x - x*)``, ``c = 1/(1 + tau l2)``; we evaluate it as
  ``x + expm1(k log c) (x - x*)`` (no cancellation when ``|x*| >> |x|``).
* ``l1 > 0`` (our derivation; the paper's Appendix C is not in our copy).
  With ``b+ = tau (u + l1)`` and ``b- = tau (u - l1)`` (``b- < b+``)::

      F(x) = c (x - b+)  if x > b+,    0  if b- <= x <= b+,    c (x - b-)  if x < b-.

  ``F`` is continuous, nondecreasing and a contraction (factor ``c < 1``).  On
  the right branch it is affine with fixed point ``x+ = -(u + l1)/l2``, on the
  left branch with ``x- = -(u - l1)/l2``.  Exactly one of three cases holds:
  ``|u| <= l1`` (fixed point 0, ``b- <= 0 <= b+``), ``u < -l1`` (fixed point
  ``x+ > 0 > b+``) or ``u > l1`` (fixed point ``x- < 0 < b-``).  Starting in a
  branch, the iterates follow that branch's affine map
  ``x_i = x_branch + c^i (x - x_branch)`` monotonically towards its fixed point;
  if that fixed point lies inside the branch they never leave it, otherwise
  they leave it at the first ``i`` with ``c^i <= r``, where
  ``r = (b+ - x+)/(x - x+)`` (right branch) or ``r = (x- - b-)/(x- - x)``
  (left branch), i.e. ``i = ceil(log r / log c)``.  A point in the middle
  zone maps to 0, and 0 stays at 0 when ``|u| <= l1``.  Since an image of the
  right branch is positive and an image of the left branch is negative, a
  trajectory visits at most three phases (left branch, at most one middle
  step, right branch - or the mirror image, or a branch followed by the
  zero fixed point), so the loop below runs at most four times: O(1).
  ``F`` is continuous, so an off-by-one ``i`` caused by rounding at a branch
  boundary changes the result only by rounding error.

The kernel stores, per coordinate, ``x_j`` and ``x_prev_j`` at time
``last_j`` (``x^{(last)}`` and ``x^{(last-1)}``).  Catching up to iteration
``t`` computes ``x^{(t-1)} = F^{t-1-last}(x^{(last)})`` and
``x^{(t)} = F(x^{(t-1)})``, which gives ``xbar^{(t)} = x^{(t)} + theta (x^{(t)} -
x^{(t-1)})`` (8) for the inner product in (5).  Each iteration therefore
costs O(nnz of the sampled rows).

Sampling.  The driver draws uniforms from its numpy Generator; the kernel
turns them into indices: Algorithm 1 draws the subset ``K`` (size ``m``,
uniformly among subsets, so ``P(i in K) = m/n``) with Floyd's algorithm;
Algorithm 2 draws ``k`` from an alias table (Walker/Vose) with one uniform.

:func:`spdc_run` takes a few structured arguments (NamedTuples, compiled by
Numba into structs): the rows (:class:`~primaldual.kernels.views.RowsView`),
the constants (:class:`SPDCSpec`), the sampling (:class:`SPDCSampling`), the
iterates it updates in place (:class:`SPDCState`) and its work arrays
(:class:`SPDCWork`); it returns an :class:`SPDCResult`.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit

from ..losses import dispatch as L
from .prefetch import prefetch, prefetch_row

from .status import STATUS_NONFINITE, STATUS_OK  # noqa: F401

#: with m = 1, how many iterations ahead the sampled row's values and indices
#: (PF_ROW) and its per-row scalars / alias-table entry (PF_SCALAR) are
#: prefetched; the per-coordinate state of the next row's columns is
#: prefetched one iteration ahead (see kernels/prefetch.py)
PF_ROW = 3
PF_SCALAR = 6


class SPDCSpec(NamedTuple):
    """The constants: loss code and parameter, the steps ``tau``, ``sigma``, the
    extrapolation ``theta``, ``l1``, the strong convexity ``l2`` of the primal
    step and the dual perturbation ``delta_dual`` (0: none)."""
    kind: int
    param: float
    tau: float
    sigma: float
    theta: float
    l1: float
    l2: float
    delta_dual: float


class SPDCSampling(NamedTuple):
    """How rows are drawn and scaled: ``weighted`` selects Algorithm 2 (alias
    table ``alias_prob``/``alias_idx``, ``pn[k] = p_k n``) over Algorithm 1
    (Floyd subsets; the alias arrays and ``pn`` may be empty); ``rho`` (n) the
    per-row dual scale."""
    weighted: bool
    alias_prob: object
    alias_idx: object
    pn: object
    rho: object


class SPDCState(NamedTuple):
    """The iterates, updated in place: ``alpha`` (n) and ``st`` (d, 4), per
    coordinate ``x^{(last)}, x^{(last-1)}, u, last``."""
    alpha: object
    st: object


class SPDCWork(NamedTuple):
    """Work arrays: ``du`` (d, all zeros on entry and exit), ``mark`` (n, stamps
    ``< t0 + 1``), ``batch`` (m, int) and ``em1``, a table of
    ``expm1(k log c)`` (:func:`expm1_table`; may be empty)."""
    du: object
    mark: object
    batch: object
    em1: object


class SPDCResult(NamedTuple):
    """Status code (:mod:`.status`), iterations done, feature accesses."""
    status: int
    iterations: int
    accesses: int


@njit(cache=True, nogil=True)
def prox_step(x, z, tau, l1, c):
    """One primal step F(x; z) = S(x - tau z, tau l1) * c, c = 1/(1 + tau l2)."""
    a = x - tau * z
    if l1 == 0.0:          # (14): no branch on the sign of a
        return a * c
    t = tau * l1
    if a > t:
        return (a - t) * c
    if a < -t:
        return (a + t) * c
    return 0.0


@njit(cache=True, nogil=True)
def expm1_table(size, logc, out):
    """out[k] = expm1(k log c) for k < size (exact per entry, no accumulation)."""
    for k in range(size):
        out[k] = math.expm1(k * logc)


@njit(cache=True, nogil=True)
def prox_recursion(x, k, u, tau, l1, l2, c, logc):
    """Apply ``x <- F(x; u)`` ``k`` times in O(1) (see the module docstring).

    ``c = 1/(1 + tau l2)`` and ``logc = log c`` (precomputed); ``l2 > 0``.
    Scalars only (array arguments to helpers cost reference counting in the
    hot loop).
    """
    if k <= 0:
        return x
    if l1 == 0.0:
        xs = -u / l2
        return x + math.expm1(k * logc) * (x - xs)
    bp = tau * (u + l1)
    bm = tau * (u - l1)
    zero_fixed = bm <= 0.0 and bp >= 0.0
    for _ in range(8):
        if k <= 0:
            return x
        if x > bp:
            xs = -(u + l1) / l2
            if xs > bp or x - xs <= 0.0:
                return x + math.expm1(k * logc) * (x - xs)
            r = (bp - xs) / (x - xs)
            if r <= 0.0:
                return x + math.expm1(k * logc) * (x - xs)
            i = math.ceil(math.log(r) / logc)
            if i < 1.0:
                i = 1.0
            if i >= k:
                return x + math.expm1(k * logc) * (x - xs)
            x = x + math.expm1(i * logc) * (x - xs)
            k -= int(i)
        elif x < bm:
            xs = -(u - l1) / l2
            if xs < bm or xs - x <= 0.0:
                return x + math.expm1(k * logc) * (x - xs)
            r = (xs - bm) / (xs - x)
            if r <= 0.0:
                return x + math.expm1(k * logc) * (x - xs)
            i = math.ceil(math.log(r) / logc)
            if i < 1.0:
                i = 1.0
            if i >= k:
                return x + math.expm1(k * logc) * (x - xs)
            x = x + math.expm1(i * logc) * (x - xs)
            k -= int(i)
        else:
            x = 0.0
            k -= 1
            if zero_fixed:
                return 0.0
    # not reached for valid inputs (at most four phases); finish step by step
    while k > 0:
        x = prox_step(x, u, tau, l1, c)
        k -= 1
    return x


@njit(cache=True, nogil=True)
def build_alias(prob, alias_prob, alias_idx, small, large):
    """Vose's alias method: O(n) table for O(1) draws from ``prob`` (sums to 1).

    ``small`` and ``large`` are int64 work arrays of length n.
    """
    n = prob.shape[0]
    ns = 0
    nl = 0
    for i in range(n):
        alias_prob[i] = prob[i] * n
        alias_idx[i] = i
        if alias_prob[i] < 1.0:
            small[ns] = i
            ns += 1
        else:
            large[nl] = i
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        s = small[ns]
        g = large[nl - 1]
        alias_idx[s] = g
        alias_prob[g] = (alias_prob[g] + alias_prob[s]) - 1.0
        if alias_prob[g] < 1.0:
            nl -= 1
            small[ns] = g
            ns += 1
    for q in range(nl):
        alias_prob[large[q]] = 1.0
    for q in range(ns):
        alias_prob[small[q]] = 1.0


@njit(cache=True, nogil=True)
def alias_draw(uval, alias_prob, alias_idx):
    """Index drawn from the alias table with one uniform ``uval`` in [0, 1)."""
    n = alias_prob.shape[0]
    z = uval * n
    i = int(z)
    if i >= n:
        i = n - 1
    if z - i < alias_prob[i]:
        return i
    return alias_idx[i]


@njit(cache=True, nogil=True, inline="always")
def single_draw(uval, weighted, alias_prob, alias_idx, n):
    """The row sampled by an m = 1 iteration from its uniform ``uval``.

    Algorithm 2: the alias table.  Algorithm 1: Floyd's algorithm with m = 1
    reduces to ``r = floor(u n)`` (clamped), the same index the general
    branch of :func:`spdc_run` computes.
    """
    if weighted:
        return alias_draw(uval, alias_prob, alias_idx)
    r = int(uval * n)
    if r > n - 1:
        r = n - 1
    return r


#: columns of the per-coordinate state array ``st`` (d, 4): one cache line
#: holds everything a catch-up reads and writes
X_COL, XPREV_COL, U_COL, LAST_COL = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def catch_up_all(t, st, tau, l1, l2, c, logc, x_out):
    """x_out = x^{(t)} for every coordinate, without touching the state."""
    for j in range(st.shape[0]):
        k = t - int(st[j, 3])
        if k <= 0:
            x_out[j] = st[j, 0]
        else:
            x_out[j] = prox_recursion(st[j, 0], k, st[j, 2], tau, l1, l2, c, logc)


@njit(cache=True, nogil=True, inline="always")
def _prefetch_ahead(rows, sampling, alpha, stf, ncol, uniforms, it, n_iter, csr_rows):
    """m = 1: rows come in random order, so each iteration would start with cache
    misses on the row, its scalars and its columns' state.  The uniforms are
    drawn in advance, so the coming rows are known: ask for them early (hints
    only; results do not change)."""
    data, indices, indptr, iptr, y = rows.data, rows.indices, rows.indptr, rows.iptr, rows.y
    weighted, alias_prob, alias_idx = sampling.weighted, sampling.alias_prob, sampling.alias_idx
    pn, rho = sampling.pn, sampling.rho
    n = indptr.shape[0] - 1
    if it + PF_SCALAR < n_iter:
        zf = int(uniforms[it + PF_SCALAR, 0] * n)
        if zf > n - 1:
            zf = n - 1
        if weighted:
            prefetch(alias_prob, zf)
            prefetch(alias_idx, zf)
        else:
            prefetch(indptr, zf)
            prefetch(alpha, zf)
            prefetch(y, zf)
            prefetch(rho, zf)
    if it + PF_ROW < n_iter:
        kf = single_draw(uniforms[it + PF_ROW, 0], weighted, alias_prob, alias_idx, n)
        if weighted:
            prefetch(alpha, kf)
            prefetch(y, kf)
            prefetch(rho, kf)
            prefetch(pn, kf)
        prefetch_row(data, indices, indptr, iptr, kf)
    if csr_rows and it + 1 < n_iter:
        k1 = single_draw(uniforms[it + 1, 0], weighted, alias_prob, alias_idx, n)
        off1 = iptr[k1]
        for kk in range(off1, off1 + indptr[k1 + 1] - indptr[k1]):
            prefetch(stf, indices[kk] * ncol)


@njit(cache=True, nogil=True, inline="always")
def _draw_batch(sampling, mark, batch, uniforms, it, t, n):
    """The sample K of iteration ``t`` into ``batch`` (``m = batch.shape[0]``):
    one alias draw (Algorithm 2), one uniform row, or Floyd's subset of size m;
    returns the factor of (7)'s update of ``u``."""
    m = uniforms.shape[1]
    if sampling.weighted:
        batch[0] = alias_draw(uniforms[it, 0], sampling.alias_prob, sampling.alias_idx)
        return sampling.pn[batch[0]] / n      # p_k: (7) adds (1/n) rho dy a_k = p_k du
    if m == 1:
        batch[0] = single_draw(uniforms[it, 0], False, sampling.alias_prob,
                               sampling.alias_idx, n)
        return 1.0 / n
    stamp = t + 1
    cnt = 0
    for jj in range(n - m, n):
        r = int(uniforms[it, jj - (n - m)] * (jj + 1))
        if r > jj:
            r = jj
        if mark[r] == stamp:
            r = jj
        mark[r] = stamp
        batch[cnt] = r
        cnt += 1
    return m / n


@njit(cache=True, nogil=True, inline="always")
def _margin_at_xbar(data, indices, st, em1, rs, re, off, t, spec, consts):
    """``A = <a_k, xbar^{(t)}>`` over the stored entries ``rs..re`` of row k,
    bringing each column's lazy state up to iteration ``t`` first."""
    tau, l1, l2, theta = spec.tau, spec.l1, spec.l2, spec.theta
    c, logc, inv_l2 = consts
    nem = em1.shape[0]
    A = 0.0
    for kk in range(rs, re):
        j = indices[kk + off]
        gap = t - int(st[j, 3])
        if gap > 0:
            # catch up: x^{(t-1)} = F^{gap-1}(x^{(last)}), x^{(t)} = F(x^{(t-1)})
            uj = st[j, 2]
            xj = st[j, 0]
            if gap > 1:
                if l1 == 0.0:     # after (15): x* + c^k (x - x*), x* = -u/l2
                    g = gap - 1
                    em = em1[g] if g < nem else math.expm1(g * logc)
                    xj = xj + em * (xj + uj * inv_l2)
                else:
                    xj = prox_recursion(xj, gap - 1, uj, tau, l1, l2, c, logc)
            st[j, 1] = xj
            st[j, 0] = prox_step(xj, uj, tau, l1, c)
            st[j, 3] = t
        xt = st[j, 0]
        A += data[kk] * (xt + theta * (xt - st[j, 1]))
    return A


@njit(cache=True, nogil=True, inline="always")
def _primal_batch(rows, st, du, batch, t, tau, l1, c, ufac_w):
    """Primal step (6)/(13) on the columns of the batch's rows, then (7);
    ``du`` is left all zeros."""
    indices, indptr, iptr = rows.indices, rows.indptr, rows.iptr
    for q in range(batch.shape[0]):
        k = batch[q]
        rs = indptr[k]
        re = indptr[k + 1]
        off = iptr[k] - rs
        for kk in range(rs, re):
            j = indices[kk + off]
            if st[j, 3] == t:
                xj = st[j, 0]
                st[j, 1] = xj
                st[j, 0] = prox_step(xj, st[j, 2] + du[j], tau, l1, c)
                st[j, 2] += ufac_w * du[j]
                du[j] = 0.0
                st[j, 3] = t + 1


@njit(cache=True, nogil=True)
def spdc_run(rows, spec, sampling, state, work, uniforms, t0, n_iter):
    """Run ``n_iter`` SPDC iterations starting at iteration counter ``t0``.

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`; reads ``data``,
    ``indices``, ``indptr``, ``iptr`` and ``y``), ``spec`` (:class:`SPDCSpec`),
    ``sampling`` (:class:`SPDCSampling`: ``weighted`` selects Algorithm 2
    (m = 1, ``pn[k] = p_k n``, alias table) over Algorithm 1 (Floyd subset of
    size m); ``rho``), ``state`` (:class:`SPDCState`: ``alpha`` and ``st`` (d, 4)
    holding per coordinate ``x^{(last)}, x^{(last-1)}, u, last``; updated in
    place), ``work`` (:class:`SPDCWork`: ``du`` (d) must be all zeros on entry
    and is left all zeros; ``mark`` (n) holds stamps ``< t0 + 1``; ``batch``
    (m); ``em1``, a table of ``expm1(k log c)`` that saves the transcendental
    call of most catch-ups).  ``uniforms`` has shape (n_iter, m): row ``it``
    drives the sample of iteration ``t0 + it``.  Returns an
    :class:`SPDCResult` ``(status, iterations, accesses)``.  With ``m = 1``
    the primal step (6) is fused into the second sweep over the sampled row
    (``Delta u`` is a multiple of ``x_k``).
    """
    data, indices, indptr, iptr, y = rows.data, rows.indices, rows.indptr, rows.iptr, rows.y
    kind, param, tau, sigma = spec.kind, spec.param, spec.tau, spec.sigma
    l1, l2, delta_dual = spec.l1, spec.l2, spec.delta_dual
    weighted, pn, rho = sampling.weighted, sampling.pn, sampling.rho
    alpha, st = state.alpha, state.st
    du, mark, batch, em1 = work.du, work.mark, work.batch, work.em1
    n = indptr.shape[0] - 1
    m = uniforms.shape[1]
    c = 1.0 / (1.0 + tau * l2)
    consts = (c, -math.log1p(tau * l2), 1.0 / l2)     # c, log c, 1/l2
    accesses = 0
    stf = st.reshape(st.shape[0] * st.shape[1])   # flat view, for prefetching
    ncol = st.shape[1]
    # CSR rows (indices as long as data): prefetch the state of the next row's
    # columns; dense rows read the state sequentially, which the hardware handles
    csr_rows = indices.shape[0] == data.shape[0]
    for it in range(n_iter):
        t = t0 + it
        if m == 1:
            _prefetch_ahead(rows, sampling, alpha, stf, ncol, uniforms, it, n_iter, csr_rows)
        ufac_w = _draw_batch(sampling, mark, batch, uniforms, it, t, n)
        # ---- dual steps (5)/(12), at xbar^{(t)}
        for q in range(m):
            k = batch[q]
            rs = indptr[k]
            re = indptr[k + 1]
            off = iptr[k] - rs
            A = _margin_at_xbar(data, indices, st, em1, rs, re, off, t, spec, consts)
            accesses += re - rs
            ak = alpha[k]
            if weighted:
                s = rho[k] * pn[k] / sigma
                coef_primal = rho[k] / pn[k]
            else:
                s = rho[k] / sigma
                coef_primal = rho[k] / m
            if delta_dual > 0.0:
                sd = s + delta_dual * rho[k]
                new = L.dual_step(kind, param, s * ak / sd, y[k], A, sd)
            else:
                new = L.dual_step(kind, param, ak, y[k], A, s)
            if not (math.isfinite(new) and math.isfinite(A)):
                return SPDCResult(STATUS_NONFINITE, it, accesses)
            dy = -(new - ak)            # change of ytilde_k
            alpha[k] = new
            if m == 1:
                # fused (6)-(7): Delta u = coef_primal dy x_k on the row only
                cf = coef_primal * dy
                for kk in range(rs, re):
                    j = indices[kk + off]
                    dj = cf * data[kk]
                    xj = st[j, 0]
                    uj = st[j, 2]
                    st[j, 1] = xj
                    st[j, 0] = prox_step(xj, uj + dj, tau, l1, c)
                    st[j, 2] = uj + ufac_w * dj
                    st[j, 3] = t + 1
                continue
            if dy != 0.0:
                cf = coef_primal * dy
                for kk in range(rs, re):
                    du[indices[kk + off]] += cf * data[kk]
        # ---- primal step (6)/(13) on J, then (7)
        if m > 1:
            _primal_batch(rows, st, du, batch, t, tau, l1, c, ufac_w)
    return SPDCResult(STATUS_OK, n_iter, accesses)
