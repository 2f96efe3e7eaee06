"""SVM-SIMBA kernels (Hazan, Koren & Srebro, "Beating SGD: Learning SVMs in
Sublinear Time", NIPS 2011, Algorithm 1 with the extensions of Sections 4 and 6).

Both kernels run iterations ``t = t0+1, t0+2, ...`` of Algorithm 1 on the
nu-formulation (3) with the labels folded into the rows (``x_i <- y_i x_i``)::

    p_t      = q_t / ||q_t||_1                                       (line 13 / Def. 4.1)
    i_t      ~ p_t                                                   (line 4)
    u_t      = u_{t-1} + c_t y_{i_t} x_{i_t}                         (line 5)
    xi_t     = argmax_{xi in Xi_nu} p_t . xi   (2 on the largest p_t(i) until mass nu n)
    b_t      = sign(p_t . y)                  (bias extension, Section 4; else 0)
    w_t      = u_t / max(1, ||u_t||)                                 (line 6)
    j_t      ~ w_t(j)^2 / ||w_t||^2                                  (line 7, l2-sampling)
    v~_t(i)  = y_i x_i(j_t) ||w_t||^2 / w_t(j_t) + xi_t(i) + y_i b_t (line 9)
    v_t(i)   = clip(v~_t(i), 1/eta_t)                                (line 10)
    q_{t+1}(i) = q_t(i) (1 - eta_t v_t(i) + eta_t^2 v_t(i)^2)        (line 11, Variance MW)

and accumulate ``sum_t w_t``, ``sum_t xi_t`` and ``sum_t b_t`` for the averaged
output (line 15).  Steps: ``SCHED_CONSTANT`` (Algorithm 1, ``eta = sqrt(log(n)/T)``,
``c = 1/sqrt(2T)``), ``SCHED_ADAPTIVE`` (Section 6 as printed, ``eta_t = sqrt(log n)/t``)
and ``SCHED_ADAPTIVE_SQRT`` (``eta_t = sqrt(log(n)/t)``); both adaptive ones take
``c_t = 1/sqrt(2t)``.  Ties among equal ``p_t(i)`` go to the smaller index.

:func:`simba_dense_run` is Algorithm 1 as written, O(n + d) per iteration.
:func:`simba_sparse_run` is Section 4's sparse form: sum trees over points and
coordinates, a lazy average of ``w``, four group multipliers (slack x label) for
the points outside column ``j_t``, and the slack set kept by swaps; an iteration
costs ``O((nnz(x_{i_t}) + nnz(column j_t) + swaps) log n)`` and reads
``nnz(x_{i_t})`` plus column ``j_t``'s entries.  The driver supplies the
uniforms (``uniforms[pos, 0]`` draws ``i_t``, ``uniforms[pos, 1]`` draws ``j_t``).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .sampling_trees import (min_tree_argmin, min_tree_update, sum_tree_sample,
                             sum_tree_update)

# STATUS_OK: the feature-access budget or the iteration limit was reached;
# STATUS_NEED_UNIFORMS: the uniform buffer is exhausted, refill and call again
from .status import STATUS_NEED_UNIFORMS, STATUS_NONFINITE, STATUS_OK  # noqa: F401

SCHED_CONSTANT = 0
SCHED_ADAPTIVE = 1
SCHED_ADAPTIVE_SQRT = 2


class ColumnsView(NamedTuple):
    """The columns in the four-array layout of the rows (column ``j`` is
    ``data[indptr[j]:indptr[j+1]]`` with row indices at ``+ iptr[j] - indptr[j]``)."""
    data: object
    indices: object
    indptr: object
    iptr: object


class SimbaSpec(NamedTuple):
    """The run's constants: the horizon ``T`` (``SCHED_CONSTANT`` only), the step
    schedule code, ``log n``, ``nu n`` and whether to use the bias extension."""
    T: float
    schedule: int
    logn: float
    nu_n: float
    bias: bool


class DenseState(NamedTuple):
    """State of :func:`simba_dense_run` (updated in place): ``logq`` (log q_t,
    max 0), ``u``, ``wsum = sum_t w_t``, ``xisum = sum_t xi_t``,
    ``scal[0] = sum_t b_t``."""
    logq: object
    u: object
    wsum: object
    xisum: object
    scal: object


class DenseWork(NamedTuple):
    """Scratch of :func:`simba_dense_run`: ``idx`` (n, int), ``xi`` (n), ``buf`` (n)."""
    idx: object
    xi: object
    buf: object


class SparseState(NamedTuple):
    """State of :func:`simba_sparse_run` (updated in place; see its docstring)."""
    logbase: object
    group: object
    cnt: object
    L: object
    ref: object
    SUM: object
    KEY: object
    CT: object
    u: object
    acc: object
    lastS: object
    xi_acc: object
    enter: object
    scal: object


class SimbaRun(NamedTuple):
    """One call's cursor and limits: the uniform buffer and the position in it,
    the iteration counter ``t`` to start from, the feature-access budget, the
    iteration limit ``max_t`` and the draw records ``rec_i``/``rec_j`` (the
    first ``len(rec_i)`` iterations' ``i_t``/``j_t``; may be empty)."""
    uniforms: object
    upos: int
    t: int
    access_budget: int
    max_t: int
    rec_i: object
    rec_j: object


class SimbaResult(NamedTuple):
    """What a run kernel returns: a status code (:mod:`.status`), the new
    position in the uniforms, the new ``t``, the feature accesses made and
    the slack swaps (always 0 for the dense kernel)."""
    status: int
    upos: int
    t: int
    accesses: int
    swaps: int


@njit(cache=True, nogil=True)
def step_sizes(schedule, t, T, logn):
    """(eta_t, c_t): the MW rate and the primal step of iteration ``t``."""
    if schedule == SCHED_CONSTANT:
        return math.sqrt(logn / T), 1.0 / math.sqrt(2.0 * T)
    if schedule == SCHED_ADAPTIVE:
        return math.sqrt(logn) / t, 1.0 / math.sqrt(2.0 * t)
    return math.sqrt(logn / t), 1.0 / math.sqrt(2.0 * t)


@njit(cache=True, nogil=True)
def mw_log_factor(vt, eta):
    """log(1 - eta v + eta^2 v^2) with v = clip(vt, 1/eta) (lines 10-11)."""
    c = 1.0 / eta
    v = vt
    if v > c:
        v = c
    elif v < -c:
        v = -c
    ev = eta * v
    return math.log(1.0 - ev + ev * ev)


@njit(cache=True, nogil=True)
def dual_estimate(cdata, cindices, cindptr, ciptr, y, xi, b, j, coef, out):
    """``out[i] = y_i x_i(j) coef + xi[i] + y_i b`` (line 9, with the bias term).

    ``coef = ||w||^2 / w(j)``; ``j < 0`` means ``w = 0`` (the estimate of
    ``X w`` is then exactly 0).  Returns the number of column entries read.
    """
    n = out.shape[0]
    for i in range(n):
        out[i] = xi[i] + y[i] * b
    if j < 0:
        return 0
    s = cindptr[j]
    e = cindptr[j + 1]
    off = ciptr[j] - s
    for k in range(s, e):
        i = cindices[k + off]
        out[i] += y[i] * cdata[k] * coef
    return e - s


@njit(cache=True, nogil=True)
def _before(a, b, key):
    """Canonical order of the dual weights: larger key first, then smaller index."""
    ka = key[a]
    kb = key[b]
    return ka > kb or (ka == kb and a < b)


@njit(cache=True, nogil=True)
def select_top(idx, key, kk):
    """Rearrange ``idx`` so that ``idx[kk]`` is the (kk+1)-th element in the
    canonical order and every ``idx[:kk]`` precedes it (Wirth's selection,
    expected O(n); no sorting)."""
    lo = 0
    hi = idx.shape[0] - 1
    while lo < hi:
        x = idx[kk]
        i = lo
        j = hi
        while True:
            while _before(idx[i], x, key):
                i += 1
            while _before(x, idx[j], key):
                j -= 1
            if i <= j:
                tmp = idx[i]
                idx[i] = idx[j]
                idx[j] = tmp
                i += 1
                j -= 1
            if i > j:
                break
        if j < kk:
            lo = i
        if kk < i:
            hi = j


@njit(cache=True, nogil=True)
def pst_slacks(logq, nu_n, idx, xi):
    """The PST step: ``xi = argmax_{xi in Xi_nu} p . xi`` (line 5).

    Puts 2 on the ``k = floor(nu n / 2)`` largest entries of ``p`` (canonical
    tie-break) and the remainder ``nu n - 2k`` on the next one, 0 elsewhere.
    ``idx`` is scratch of length n.  Returns the boundary index (or -1).
    """
    n = logq.shape[0]
    k = int(math.floor(nu_n / 2.0))
    if k > n:
        k = n
    r = nu_n - 2.0 * k
    for i in range(n):
        xi[i] = 0.0
        idx[i] = i
    boundary = -1
    if r > 0.0 and k < n:
        select_top(idx, logq, k)
        boundary = idx[k]
        xi[boundary] = r
    elif k > 0:
        select_top(idx, logq, k - 1)
    for m in range(k):
        xi[idx[m]] = 2.0
    return boundary


@njit(cache=True, nogil=True)
def simba_dense_run(rows, cols, spec, state, work, run):
    """Algorithm 1 as written, O(n + d) per iteration (see the module docstring).

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`; reads ``data``,
    ``indices``, ``indptr``, ``iptr`` and ``y``), ``cols`` (:class:`ColumnsView`),
    ``spec`` (:class:`SimbaSpec`), ``state`` (:class:`DenseState`: ``logq``
    (log q_t, max 0), ``u``, ``wsum = sum_t w_t``, ``xisum = sum_t xi_t``,
    ``scal[0] = sum_t b_t``, updated in place), ``work`` (:class:`DenseWork`:
    ``idx`` (n, int), ``xi`` (n), ``buf`` (n)), ``run`` (:class:`SimbaRun`).
    Runs from ``run.t`` until ``accesses >= run.access_budget`` or
    ``t == run.max_t`` or the uniforms run out.  Returns a :class:`SimbaResult`
    (``swaps = 0``).
    """
    data, indices, indptr, iptr, y = rows.data, rows.indices, rows.indptr, rows.iptr, rows.y
    cdata, cindices, cindptr, ciptr = cols.data, cols.indices, cols.indptr, cols.iptr
    T, schedule, logn, nu_n, bias = spec.T, spec.schedule, spec.logn, spec.nu_n, spec.bias
    logq, u, wsum, xisum, scal = state.logq, state.u, state.wsum, state.xisum, state.scal
    idx, xi, buf = work.idx, work.xi, work.buf
    uniforms, upos, t = run.uniforms, run.upos, run.t
    access_budget, max_t, rec_i, rec_j = run.access_budget, run.max_t, run.rec_i, run.rec_j
    n = logq.shape[0]
    d = u.shape[0]
    accesses = 0
    nrec = rec_i.shape[0]
    while accesses < access_budget and t < max_t:
        if upos >= uniforms.shape[0]:
            return SimbaResult(STATUS_NEED_UNIFORMS, upos, t, accesses, 0)
        t += 1
        eta, c = step_sizes(schedule, t, T, logn)
        # p_t = q_t / ||q_t||_1  (logq is shifted so that its maximum is 0)
        mx = -np.inf
        for i in range(n):
            if logq[i] > mx:
                mx = logq[i]
        tot = 0.0
        for i in range(n):
            logq[i] -= mx
            buf[i] = math.exp(logq[i])
            tot += buf[i]
        # xi_t (PST step) and b_t = sign(p_t . y)
        pst_slacks(logq, nu_n, idx, xi)
        b = 0.0
        if bias:
            py = 0.0
            for i in range(n):
                py += buf[i] * y[i]
            b = 1.0 if py > 0.0 else (-1.0 if py < 0.0 else 0.0)
        # i_t ~ p_t (inverse CDF)
        target = uniforms[upos, 0] * tot
        it = -1
        acc = 0.0
        for i in range(n):
            if buf[i] > 0.0:
                it = i
                acc += buf[i]
                if target < acc:
                    break
        # u_t = u_{t-1} + c y_i x_i ; w_t = u_t / max(1, ||u_t||)
        s0 = indptr[it]
        e0 = indptr[it + 1]
        off = iptr[it] - s0
        yi = y[it]
        for k in range(s0, e0):
            u[indices[k + off]] += c * yi * data[k]
        accesses += e0 - s0
        un2 = 0.0
        for jj in range(d):
            un2 += u[jj] * u[jj]
        unorm = math.sqrt(un2)
        sc = 1.0 / unorm if unorm > 1.0 else 1.0
        for jj in range(d):
            wsum[jj] += sc * u[jj]
        # j_t ~ w_t(j)^2 / ||w_t||^2
        jt = -1
        coef = 0.0
        if un2 > 0.0:
            target = uniforms[upos, 1] * un2
            acc = 0.0
            for jj in range(d):
                sq = u[jj] * u[jj]
                if sq > 0.0:
                    jt = jj
                    acc += sq
                    if target < acc:
                        break
            coef = sc * un2 / u[jt]       # ||w||^2 / w(j) with w = sc u
        upos += 1
        # v~_t, clip, Variance MW
        accesses += dual_estimate(cdata, cindices, cindptr, ciptr, y, xi, b, jt, coef, buf)
        for i in range(n):
            logq[i] += mw_log_factor(buf[i], eta)
            xisum[i] += xi[i]
        scal[0] += b
        if not math.isfinite(coef) or not math.isfinite(unorm):
            return SimbaResult(STATUS_NONFINITE, upos, t, accesses, 0)
        if t - 1 < nrec:
            rec_i[t - 1] = it
            rec_j[t - 1] = jt
    return SimbaResult(STATUS_OK, upos, t, accesses, 0)


# ------------------------------------------------------------ sparse version
@njit(cache=True, nogil=True)
def _set_leaf(SUM, KEY, ref, logbase, i, g):
    lb = logbase[i]
    sum_tree_update(SUM[g], i, math.exp(lb - ref[g]))
    min_tree_update(KEY[g], i, lb if g >= 2 else -lb)


@njit(cache=True, nogil=True)
def _clear_leaf(SUM, KEY, i, g):
    sum_tree_update(SUM[g], i, 0.0)
    min_tree_update(KEY[g], i, np.inf)


@njit(cache=True, nogil=True)
def _rebase(SUM, KEY, ref, logbase, group, g):
    """Re-reference group ``g``'s sum tree at its largest member (O(n))."""
    n = logbase.shape[0]
    best = -np.inf
    for i in range(n):
        if group[i] == g and logbase[i] > best:
            best = logbase[i]
    if best == -np.inf:
        return
    ref[g] = best
    tree = SUM[g]
    size = tree.shape[0] // 2
    for i in range(n):
        tree[size + i] = math.exp(logbase[i] - best) if group[i] == g else 0.0
    for k in range(size - 1, 0, -1):
        tree[k] = tree[2 * k] + tree[2 * k + 1]


@njit(cache=True, nogil=True)
def _move(SUM, KEY, ref, L, logbase, group, cnt, i, g_new):
    g = group[i]
    lq = logbase[i] + L[g]
    _clear_leaf(SUM, KEY, i, g)
    cnt[g] -= 1
    group[i] = g_new
    cnt[g_new] += 1
    logbase[i] = lq - L[g_new]
    if logbase[i] - ref[g_new] > 500.0:
        _rebase(SUM, KEY, ref, logbase, group, g_new)
    _set_leaf(SUM, KEY, ref, logbase, i, g_new)


@njit(cache=True, nogil=True)
def _r_best(KEY, L, cnt):
    """(index, log q) of the canonically largest point without full slack."""
    bi = -1
    bv = -np.inf
    for g in range(2):
        if cnt[g] > 0:
            v = -KEY[g][1] + L[g]
            i = min_tree_argmin(KEY[g], False)
            if bi < 0 or v > bv or (v == bv and i < bi):
                bi = i
                bv = v
    return bi, bv


@njit(cache=True, nogil=True)
def _t_worst(KEY, L, cnt):
    """(index, log q) of the canonically smallest point with slack 2."""
    wi = -1
    wv = np.inf
    for g in range(2, 4):
        if cnt[g] > 0:
            v = KEY[g][1] + L[g]
            i = min_tree_argmin(KEY[g], True)
            if wi < 0 or v < wv or (v == wv and i > wi):
                wi = i
                wv = v
    return wi, wv


@njit(cache=True, nogil=True, inline="always")
def _restore_slack(state, t, cap):
    """PST step: swap points until every slack-2 point precedes every other point
    (at most ``cap + 1`` swaps); returns the number of swaps."""
    SUM, KEY, ref, L = state.SUM, state.KEY, state.ref, state.L
    logbase, group, cnt = state.logbase, state.group, state.cnt
    xi_acc, enter = state.xi_acc, state.enter
    swaps = 0
    for _sw in range(cap + 1):
        wi, wv = _t_worst(KEY, L, cnt)
        bi, bv = _r_best(KEY, L, cnt)
        if wi < 0 or bi < 0:
            break
        if not (bv > wv or (bv == wv and bi < wi)):
            break
        xi_acc[wi] += 2.0 * (t - enter[wi])
        _move(SUM, KEY, ref, L, logbase, group, cnt, wi, group[wi] - 2)
        enter[bi] = t
        _move(SUM, KEY, ref, L, logbase, group, cnt, bi, group[bi] + 2)
        swaps += 1
    return swaps


@njit(cache=True, nogil=True, inline="always")
def _draw_row(state, lf, bias, u0):
    """The group masses (into ``lf``), ``b_t`` and ``i_t ~ p_t`` drawn with the
    uniform ``u0``; returns ``(i_t, b_t)``."""
    SUM, L, ref, cnt = state.SUM, state.L, state.ref, state.cnt
    mxl = -np.inf
    for g in range(4):
        if cnt[g] > 0 and SUM[g][1] > 0.0:
            lm = L[g] + ref[g] + math.log(SUM[g][1])
            lf[g] = lm
            if lm > mxl:
                mxl = lm
        else:
            lf[g] = -np.inf
    tot = 0.0
    for g in range(4):
        lf[g] = math.exp(lf[g] - mxl) if lf[g] > -np.inf else 0.0
        tot += lf[g]
    b = 0.0
    if bias:
        py = (lf[1] + lf[3]) - (lf[0] + lf[2])
        b = 1.0 if py > 0.0 else (-1.0 if py < 0.0 else 0.0)
    target = u0 * tot
    gs = -1
    cum = 0.0
    for g in range(4):
        if lf[g] > 0.0:
            gs = g
            if target < cum + lf[g]:
                break
            cum += lf[g]
    frac = (target - cum) / lf[gs]
    if frac < 0.0:
        frac = 0.0
    if frac >= 1.0:
        frac = 0.9999999999999999
    return sum_tree_sample(SUM[gs], frac), b


@njit(cache=True, nogil=True, inline="always")
def _primal_step(rows, state, it, c, u1):
    """The primal step on row ``i_t`` with the lazy average of ``w``, then
    ``j_t ~ w_t(j)^2 / ||w_t||^2`` drawn with the uniform ``u1``; returns
    ``(accesses, ||u_t||, j_t, coef)`` (``j_t = -1`` when ``u_t = 0``)."""
    data, indices, indptr, iptr, y = rows.data, rows.indices, rows.indptr, rows.iptr, rows.y
    u, acc, lastS, CT, scal = state.u, state.acc, state.lastS, state.CT, state.scal
    S = scal[0]
    s0 = indptr[it]
    e0 = indptr[it + 1]
    off = iptr[it] - s0
    yi = y[it]
    for k in range(s0, e0):
        j = indices[k + off]
        acc[j] += u[j] * (S - lastS[j])
        lastS[j] = S
        u[j] += c * yi * data[k]
        sum_tree_update(CT, j, u[j] * u[j])
    un2 = CT[1]
    unorm = math.sqrt(un2)
    sc = 1.0 / unorm if unorm > 1.0 else 1.0
    scal[0] = S + sc
    jt = -1
    coef = 0.0
    if un2 > 0.0:
        jt = sum_tree_sample(CT, u1)
        coef = sc * un2 / u[jt]
    return e0 - s0, unorm, jt, coef


@njit(cache=True, nogil=True, inline="always")
def _reweight(y, cols, state, lf, jt, coef, b, eta, boundary, r):
    """The MW step: the group factors of the points outside column ``j_t`` (into
    ``lf``), then each point of column ``j_t`` and the boundary point on its
    own; returns the feature accesses."""
    cdata, cindices, cindptr, ciptr = cols.data, cols.indices, cols.indptr, cols.iptr
    SUM, KEY, ref, logbase, group = state.SUM, state.KEY, state.ref, state.logbase, state.group
    for g in range(4):
        xg = 2.0 if g >= 2 else 0.0
        yg = 1.0 if (g & 1) == 1 else -1.0
        lf[g] = mw_log_factor(xg + yg * b, eta)
    accesses = 0
    boundary_done = False
    if jt >= 0:
        cs = cindptr[jt]
        ce = cindptr[jt + 1]
        coff = ciptr[jt] - cs
        for k in range(cs, ce):
            i = cindices[k + coff]
            g = group[i]
            xi_i = 2.0 if g >= 2 else (r if i == boundary else 0.0)
            if i == boundary:
                boundary_done = True
            vt = y[i] * cdata[k] * coef + xi_i + y[i] * b
            logbase[i] += mw_log_factor(vt, eta) - lf[group[i]]
            _set_leaf(SUM, KEY, ref, logbase, i, g)
        accesses += ce - cs
    if boundary >= 0:
        state.xi_acc[boundary] += r
        if not boundary_done:
            g = group[boundary]
            logbase[boundary] += mw_log_factor(r + y[boundary] * b, eta) - lf[g]
            _set_leaf(SUM, KEY, ref, logbase, boundary, g)
    return accesses


@njit(cache=True, nogil=True)
def simba_sparse_run(rows, cols, spec, state, run):
    """Sparse SIMBA with sampling trees (see the module docstring).

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`; reads ``data``,
    ``indices``, ``indptr``, ``iptr`` and ``y``), ``cols`` (:class:`ColumnsView`),
    ``spec`` (:class:`SimbaSpec`), ``state`` (:class:`SparseState`, below, updated
    in place), ``run`` (:class:`SimbaRun`: uniforms, cursor, limits, records).

    State:
      ``log q_t(i) = logbase[i] + L[group[i]]``, groups ``2 * (slack 2) + (y > 0)``;
      ``SUM[g]`` sum tree of ``exp(logbase - ref[g])`` over group g,
      ``KEY[g]`` min tree of ``logbase`` (slack groups) or ``-logbase`` (others),
      ``cnt[g]`` group sizes;
      ``CT`` sum tree of ``u(j)^2`` (its root is ``||u||^2``);
      ``w_t = s_t u_t`` with ``s_t = 1/max(1, ||u_t||)``; the average is lazy:
      ``acc[j] + u[j] (S - lastS[j]) = sum_{tau<=t} s_tau u_tau(j)`` with
      ``S = scal[0] = sum_tau s_tau``;
      ``xi_acc[i] + 2 (t + 1 - enter[i])`` (slack members) ``= sum_tau xi_tau(i)``;
      ``scal[1] = sum_t b_t``.
    Returns a :class:`SimbaResult`.
    """
    T, schedule, logn, nu_n, bias = spec.T, spec.schedule, spec.logn, spec.nu_n, spec.bias
    SUM, L, ref, cnt, scal = state.SUM, state.L, state.ref, state.cnt, state.scal
    uniforms, upos, t = run.uniforms, run.upos, run.t
    access_budget, max_t, rec_i, rec_j = run.access_budget, run.max_t, run.rec_i, run.rec_j
    n = state.logbase.shape[0]
    k_slack = int(math.floor(nu_n / 2.0))
    r = nu_n - 2.0 * k_slack
    # at most min(k, n - k) swaps restore the order (the cap stops a ping-pong
    # between two points whose log-weights differ only by rounding)
    cap = k_slack if k_slack < n - k_slack else n - k_slack
    accesses = 0
    swaps = 0
    nrec = rec_i.shape[0]
    lf = np.empty(4)  # tiny, once per call
    while accesses < access_budget and t < max_t:
        if upos >= uniforms.shape[0]:
            return SimbaResult(STATUS_NEED_UNIFORMS, upos, t, accesses, swaps)
        t += 1
        eta, c = step_sizes(schedule, t, T, logn)
        swaps += _restore_slack(state, t, cap)
        boundary = -1
        if r > 0.0:
            boundary, bv = _r_best(state.KEY, L, cnt)
        it, b = _draw_row(state, lf, bias, uniforms[upos, 0])
        acc_i, unorm, jt, coef = _primal_step(rows, state, it, c, uniforms[upos, 1])
        accesses += acc_i
        upos += 1
        accesses += _reweight(rows.y, cols, state, lf, jt, coef, b, eta, boundary, r)
        for g in range(4):
            L[g] += lf[g]
            if cnt[g] > 0:
                root = SUM[g][1]
                if root > 1e250 or root < 1e-250:
                    _rebase(SUM, state.KEY, ref, state.logbase, state.group, g)
        scal[1] += b
        if not math.isfinite(coef) or not math.isfinite(unorm):
            return SimbaResult(STATUS_NONFINITE, upos, t, accesses, swaps)
        if t - 1 < nrec:
            rec_i[t - 1] = it
            rec_j[t - 1] = jt
    return SimbaResult(STATUS_OK, upos, t, accesses, swaps)
