"""The sequential dual method for the Crammer-Singer multiclass SVM (Keerthi,
Sundararajan, Chang, Hsieh & Lin, KDD 2008; LIBLINEAR ``-s 4``).

In LIBLINEAR's scaling the dual is::

    min_beta  1/2 ||coef||_F^2 - sum_i beta_{i, y_i},   coef = sum_i x_i^T beta_i
    s.t.      sum_m beta_im = 0,   beta_im <= C_i 1[m = y_i]

with ``C_i = c_i / (W lam)`` (docs/multiclass-models.md).  One step takes a
row ``i`` and minimizes exactly over ``beta_i`` (K values), the others fixed:
with ``A = ||x_i||^2`` and ``B_m = x_i . coef_m + 1[m != y_i] - A beta_im``
the minimizer is ``beta_im = min(C_i 1[m = y_i], (theta - B_m) / A)`` where
``theta`` solves ``sum_m max(0, D_m - theta) = A C_i`` with ``D = B + A C_i
e_{y_i}``: the water level over the sorted ``D`` (Keerthi et al., Sec. 3).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .status import STATUS_NONFINITE, STATUS_OK

__all__ = ["CSRows", "CSWork", "CSActive", "CSAverage", "cs_epoch", "cs_subproblem",
           "cs_certificate"]


class CSRows(NamedTuple):
    """The rows as :mod:`primaldual.rows` presents them, ``||x_i||^2``, the
    labels (int64) and the bounds ``C_i``."""
    data: object
    indices: object
    indptr: object
    iptr: object
    sqnorm: object
    y: object
    C: object


class CSWork(NamedTuple):
    """Work arrays of length K: scores, B, the sorted D, the new beta_i and the
    per-row class bound; of length n: each row's violation at its last visit
    (float64) and the rows visited again (int64, :func:`cs_epochs`)."""
    z: object
    B: object
    D: object
    new: object
    cap: object
    viol: object
    hot: object


class CSActive(NamedTuple):
    """The active set (LIBLINEAR's shrinking): ``rows[:m]`` are the active rows
    (``m`` is passed to the kernel), row ``i`` has its active classes in
    ``cls[i, :n_cls[i]]``."""
    rows: object
    n_cls: object
    cls: object


class CSAverage(NamedTuple):
    """The average of the iterates at the ends of the last epochs of a call:
    ``beta`` (n, K; holds the iterate before the first of them, and the
    kernel adds each change ``delta`` times the epoch's weight), and ``wt``
    (one weight per epoch of the call: 0 before the window, then ``(M - t +
    1) / M`` for its ``t``-th of ``M`` epochs, so that ``beta`` ends as the
    mean of the ``M`` end-of-epoch iterates)."""
    beta: object
    wt: object


@njit(cache=True, nogil=True, inline="always")
def cs_subproblem(A, k, total, B, D, new, cap):
    """The exact minimizer of ``A/2 ||b||^2 + B . b`` over ``sum_m b_m = total``,
    ``b_m <= cap_m`` into ``new[:k]`` (``cap`` is 0 except ``C`` at the label;
    ``total`` is 0 unless the label's class is shrunk).  With ``D = B + A cap``
    the solution is ``b_m = min(cap_m, (theta - B_m) / A)`` with the water
    level ``sum_m max(0, D_m - theta) = A (sum_m cap_m - total)``, found over
    the sorted ``D`` (module docstring)."""
    excess = -total
    for m in range(k):
        D[m] = B[m] + A * cap[m]
        excess += cap[m]
    for m in range(1, k):                       # insertion sort, descending (k is small)
        v = D[m]
        t = m - 1
        while t >= 0 and D[t] < v:
            D[t + 1] = D[t]
            t -= 1
        D[t + 1] = v
    theta = D[0] - A * excess
    r = 1
    while r < k and theta < r * D[r]:
        theta += D[r]
        r += 1
    theta /= r
    for m in range(k):
        v = (theta - B[m]) / A
        new[m] = v if v < cap[m] else cap[m]


@njit(cache=True, nogil=True, inline="always")
def _active_scores(rows, coef, i, cls, k, z):
    """z[t] = x_i . coef[:, cls[i, t]] for the k active classes, four classes
    per pass over the row (their sums stay in registers)."""
    start = rows.indptr[i]
    end = rows.indptr[i + 1]
    off = rows.iptr[i] - start
    for t0 in range(0, k, 4):
        c0 = cls[i, t0]
        c1 = cls[i, t0 + 1] if t0 + 1 < k else c0
        c2 = cls[i, t0 + 2] if t0 + 2 < k else c0
        c3 = cls[i, t0 + 3] if t0 + 3 < k else c0
        a0 = a1 = a2 = a3 = 0.0
        for p in range(start, end):
            x = rows.data[p]
            j = rows.indices[p + off]
            a0 += x * coef[j, c0]
            a1 += x * coef[j, c1]
            a2 += x * coef[j, c2]
            a3 += x * coef[j, c3]
        z[t0] = a0
        if t0 + 1 < k:
            z[t0 + 1] = a1
        if t0 + 2 < k:
            z[t0 + 2] = a2
        if t0 + 3 < k:
            z[t0 + 3] = a3


@njit(cache=True, nogil=True, inline="always")
def _violation(beta, i, cls, k, yi, C, G, cap):
    """Fills ``cap`` for the k active classes; returns (maxG - minG, minG): the
    optimality violation of row i's block (minG over the classes below their
    bound, maxG over all)."""
    minG = np.inf
    maxG = -np.inf
    for t in range(k):
        m = cls[i, t]
        cap[t] = C if m == yi else 0.0
        if beta[i, m] < cap[t] and G[t] < minG:
            minG = G[t]
        if G[t] > maxG:
            maxG = G[t]
    return maxG - minG, minG


@njit(cache=True, nogil=True, inline="always")
def _shrink_classes(beta, i, cls, k, minG, G, cap):
    """Drop the classes at their bound whose gradient is below every free
    one's (LIBLINEAR's be_shrunk); returns the new k.  ``G``, ``cap`` and
    ``cls[i]`` are permuted alike."""
    t = 0
    while t < k:
        m = cls[i, t]
        if beta[i, m] == cap[t] and G[t] < minG:
            k -= 1
            cls[i, t], cls[i, k] = cls[i, k], cls[i, t]
            G[t], G[k] = G[k], G[t]
            cap[t], cap[k] = cap[k], cap[t]
        else:
            t += 1
    return k


@njit(cache=True, nogil=True, inline="always")
def _update_coef(rows, coef, i, moved, delta, cls):
    """coef[j, cls[t]] += delta[t] x_ij for the row's entries, four classes per
    pass over the row (a missing fourth adds 0 to the first's column)."""
    start = rows.indptr[i]
    end = rows.indptr[i + 1]
    off = rows.iptr[i] - start
    for t0 in range(0, moved, 4):
        c0 = int(cls[t0])
        d0 = delta[t0]
        c1, d1 = (int(cls[t0 + 1]), delta[t0 + 1]) if t0 + 1 < moved else (c0, 0.0)
        c2, d2 = (int(cls[t0 + 2]), delta[t0 + 2]) if t0 + 2 < moved else (c0, 0.0)
        c3, d3 = (int(cls[t0 + 3]), delta[t0 + 3]) if t0 + 3 < moved else (c0, 0.0)
        for p in range(start, end):
            x = rows.data[p]
            j = rows.indices[p + off]
            coef[j, c0] += d0 * x
            coef[j, c1] += d1 * x
            coef[j, c2] += d2 * x
            coef[j, c3] += d3 * x


@njit(cache=True, nogil=True)
def cs_epoch(rows, act, m_act, beta, coef, work, shrinking, bavg, wt):
    """One pass of exact block steps over the active rows ``act.rows[:m_act]``
    (in that order); updates ``beta`` (n, K), ``coef`` (d, K) and the active
    set in place, and with ``wt > 0`` adds ``wt`` times each change of
    ``beta`` to ``bavg`` (:class:`CSAverage`); each visited row's violation
    goes to ``work.viol``.  Rows with ``||x_i|| = 0``
    are skipped (the driver solves them once).  Returns ``(status, m_act,
    max violation, entries read)`` (an entry counted once per row visit)."""
    z, B, D, new, cap = work.z, work.B, work.D, work.new, work.cap
    stopping = 0.0
    reads = 0
    s = 0
    while s < m_act:
        i = act.rows[s]
        A = rows.sqnorm[i]
        k = act.n_cls[i]
        if A == 0.0:
            s += 1
            continue
        yi = rows.y[i]
        _active_scores(rows, coef, i, act.cls, k, z)
        reads += rows.indptr[i + 1] - rows.indptr[i]
        for t in range(k):
            z[t] += 0.0 if act.cls[i, t] == yi else 1.0          # G, the dual gradient
        viol, minG = _violation(beta, i, act.cls, k, yi, rows.C[i], z, cap)
        if shrinking:
            k = _shrink_classes(beta, i, act.cls, k, minG, z, cap)
            act.n_cls[i] = k
            if k <= 1:
                m_act -= 1
                act.rows[s], act.rows[m_act] = act.rows[m_act], act.rows[s]
                continue
        s += 1
        work.viol[i] = viol
        if viol <= 1e-12:
            continue
        if viol > stopping:
            stopping = viol
        total = 0.0
        for t in range(k):
            B[t] = z[t] - A * beta[i, act.cls[i, t]]
            total += beta[i, act.cls[i, t]]
        cs_subproblem(A, k, total, B, D, new, cap)
        moved = 0                       # the changed classes and their changes, in front
        for t in range(k):
            m = act.cls[i, t]
            delta = new[t] - beta[i, m]
            beta[i, m] = new[t]
            if delta != 0.0:
                B[moved] = delta
                D[moved] = m
                moved += 1
        if moved:
            _update_coef(rows, coef, i, moved, B, D)
            if wt > 0.0:
                for t in range(moved):
                    bavg[i, int(D[t])] += wt * B[t]
            reads += rows.indptr[i + 1] - rows.indptr[i]
        if not np.isfinite(beta[i, yi]):
            return STATUS_NONFINITE, m_act, stopping, reads
    return STATUS_OK, m_act, stopping, reads


#: the shrinking threshold never falls below this
EPS_FLOOR = 1e-12


@njit(cache=True, nogil=True, inline="always")
def _uniform(state):
    """The next value in [0, 1) of SplitMix64 (Steele, Lea & Flood 2014) from
    the one-word ``state`` (uint64), advanced in place."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def cs_epochs(rows, act, sched, beta, coef, work, n_epochs, state, shrinking, avg):
    """``n_epochs`` epochs of :func:`cs_epoch` (epoch ``e`` adding its changes
    to the average ``avg`` with weight ``avg.wt[e]``), each over the active rows
    shuffled (Fisher-Yates, uniforms from SplitMix64 started at ``state``,
    which the driver seeds from ``random_state``), then a second visit to the
    rows whose violation in the pass exceeded ``sched[3]`` times the pass's
    largest (:func:`_revisit`), then LIBLINEAR's rule:
    when the largest violation of a pass falls below the threshold, every row
    and class returns and the threshold halves.  With ``sched[2] > 0`` a pass
    over every row (after such a return, and the first) goes in index order:
    where the iterates outgrow the cache its memory reads then stream instead
    of jumping.  ``sched`` (float64): ``[active rows, threshold, index-order
    full passes, revisited share]``, the first two updated in place.  Returns
    ``(status, epochs done, entries read)``."""
    reads = 0
    n = beta.shape[0]
    K = beta.shape[1]
    seq = sched[2] > 0.0
    for e in range(n_epochs):
        m = int(sched[0])
        for t in range(m - 1 if m < n or not seq else 0, 0, -1):
            r = int(_uniform(state) * (t + 1))
            act.rows[t], act.rows[r] = act.rows[r], act.rows[t]
        status, m, stopping, rd = cs_epoch(rows, act, m, beta, coef, work, shrinking,
                                           avg.beta, avg.wt[e])
        reads += rd
        sched[0] = m
        if status == STATUS_OK and sched[3] > 0.0 and stopping > 0.0:
            status, rd = _revisit(rows, act, m, sched[3] * stopping, beta, coef, work,
                                  state, avg.beta, avg.wt[e])
            reads += rd
        if status != STATUS_OK:
            return status, e, reads
        if shrinking and stopping < sched[1]:
            sched[1] = max(0.5 * sched[1], EPS_FLOOR)
            sched[0] = n
            for i in range(n):
                act.n_cls[i] = K
                if seq:
                    act.rows[i] = i
    return STATUS_OK, n_epochs, reads


@njit(cache=True, nogil=True, inline="always")
def _revisit(rows, act, m, floor, beta, coef, work, state, bavg, wt):
    """A second pass, in a random order and without shrinking, over the
    active rows ``act.rows[:m]`` whose violation in the pass just made
    exceeded ``floor``: the rows that carry most of the remaining gap get a
    step after the others have moved ``coef``.  Returns ``(status, entries
    read)``."""
    h = 0
    for s in range(m):
        i = act.rows[s]
        if work.viol[i] > floor:
            work.hot[h] = i
            h += 1
    for t in range(h - 1, 0, -1):
        r = int(_uniform(state) * (t + 1))
        work.hot[t], work.hot[r] = work.hot[r], work.hot[t]
    status, _, _, reads = cs_epoch(rows, CSActive(work.hot, act.n_cls, act.cls), h, beta,
                                   coef, work, False, bavg, wt)
    return status, reads


@njit(cache=True, nogil=True, inline="always")
def _rmat(rows, beta, coef):
    """``coef = sum_i x_i^T beta_i`` (overwritten), a row read once per class
    with ``beta_ik != 0`` (skipping the zero products leaves every sum bit
    for bit as the full product)."""
    coef[:] = 0.0
    for i in range(beta.shape[0]):
        start = rows.indptr[i]
        off = rows.iptr[i] - start
        for k in range(beta.shape[1]):
            b = beta[i, k]
            if b == 0.0:
                continue
            for p in range(start, rows.indptr[i + 1]):
                coef[rows.indices[p + off], k] += rows.data[p] * b


@njit(cache=True, nogil=True)
def cs_certificate(rows, beta, sw, coef, z, alpha, feas_tol, act, sched, back, avg, cavg,
                   Z):
    """The exact check of a dual point in two passes over the rows.  The
    iterate's ``coef = sum_i x_i^T beta_i`` is recomputed (overwritten, its
    rounding drift dropped); the point checked is the average ``avg`` (n, K)
    with ``cavg = sum_i x_i^T avg_i`` (written), or with an empty ``avg``
    the iterate itself.  ``alpha = point * (1 / C)`` (written), then per row the
    scores ``z = x_i coef_point`` and the loss ``max(0, max_{k != y_i} 1 +
    z_k - z_{y_i})``.  With a non-empty ``Z`` (n, K) the caller has written
    ``coef``, ``cavg`` and the scores ``Z`` (dense rows: BLAS) and neither
    product is made here.  Returns ``(sum_i sw_i loss_i, sum_i sw_i
    alpha_{i, y_i}, rows off the simplex)`` (``e_y - alpha_i`` on the simplex
    to ``feas_tol``; rows of weight 0 count for nothing).  When the point's
    coef is 0 the scores are 0 and the second pass reads no entries.  With a
    non-empty ``back`` (n, bool work array) the rows whose violation over all
    K classes (the iterate's bounds, the point's scores) exceeds the
    shrinking threshold ``sched[1]`` return to the active set ``act`` with
    every class (:func:`_bring_back`)."""
    K = coef.shape[1]
    scored = Z.shape[0] == beta.shape[0]
    if not scored:
        _rmat(rows, beta, coef)
    point, cp = beta, coef
    if avg.shape[0] == beta.shape[0]:
        if not scored:
            _rmat(rows, avg, cavg)
        point, cp = avg, cavg
    back[:] = False
    zero = True                 # coef = 0 (a cold start): every score is 0, none is read
    for j in range(cp.shape[0]):
        for k in range(K):
            if cp[j, k] != 0.0:
                zero = False
    loss = 0.0
    conj = 0.0
    bad = 0
    for i in range(beta.shape[0]):
        inv = 1.0 / rows.C[i]
        for k in range(K):
            alpha[i, k] = point[i, k] * inv
        if sw[i] == 0.0:
            continue
        if scored:
            zi = Z[i]
        else:
            zi = z
            _row_scores(rows, cp, i, zero, zi)
        worst, a_y, b = _check_row(alpha, i, rows.y[i], zi, feas_tol)
        if back.size:
            back[i] = _violated(beta, i, rows.y[i], rows.C[i], zi, sched[1])
        bad += b
        loss += sw[i] * worst
        conj += sw[i] * a_y
    if back.size:
        _bring_back(act, sched, back, K)
    return loss, conj, bad


@njit(cache=True, nogil=True, inline="always")
def _row_scores(rows, cp, i, zero, z):
    """z = x_i cp (K-wide), or 0 without reading the row when ``zero``."""
    for k in range(cp.shape[1]):
        z[k] = 0.0
    start = rows.indptr[i]
    off = rows.iptr[i] - start
    for p in range(start, rows.indptr[i + 1] if not zero else start):
        x = rows.data[p]
        r = cp[rows.indices[p + off]]
        for k in range(cp.shape[1]):
            z[k] += x * r[k]


@njit(cache=True, nogil=True, inline="always")
def _check_row(alpha, i, yi, z, feas_tol):
    """Row i's loss ``max(0, max_{k != y} 1 + z_k - z_y)`` at scores ``z``,
    its ``alpha_{i, y}`` and the number of its feasibility failures
    (``e_y - alpha_i`` off the simplex by more than ``feas_tol``)."""
    worst = 0.0
    total = 0.0
    bad = 0
    for k in range(alpha.shape[1]):
        a = alpha[i, k]
        total += a
        if k == yi:
            if 1.0 - a < -feas_tol:
                bad += 1
            continue
        if -a < -feas_tol:
            bad += 1
        v = 1.0 + z[k] - z[yi]
        if v > worst:
            worst = v
    if abs(total) > feas_tol:
        bad += 1
    return worst, alpha[i, yi], bad


@njit(cache=True, nogil=True, inline="always")
def _violated(beta, i, yi, C, z, threshold):
    """Whether row i's violation over all K classes (scores ``z``) exceeds the
    shrinking threshold."""
    minG = np.inf
    maxG = -np.inf
    for k in range(beta.shape[1]):
        G = z[k] + (0.0 if k == yi else 1.0)
        if beta[i, k] < (C if k == yi else 0.0) and G < minG:
            minG = G
        if G > maxG:
            maxG = G
    return maxG - minG > threshold


@njit(cache=True, nogil=True)
def _bring_back(act, sched, back, K):
    """Return the rows flagged in ``back`` (:func:`_violated`) to the active
    set with every class: a shrunk row joins ``act.rows[:m]``, an active row
    with shrunk classes gets them back."""
    m = int(sched[0])
    for s in range(back.shape[0]):
        i = act.rows[s]
        if back[i]:
            act.n_cls[i] = K
            if s >= m:
                act.rows[s], act.rows[m] = act.rows[m], act.rows[s]
                m += 1
    sched[0] = m
