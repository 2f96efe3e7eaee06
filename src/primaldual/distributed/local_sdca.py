"""CoCoA+'s local solver as the serial SDCA kernel: one partition's round.

In a CoCoA+ round (Ma et al. 2015, Algorithm 1) partition ``k`` maximizes its
local subproblem ``G_k^{sigma'}`` (their eq. (10)) against the ``v`` of the
round.  With ``u = v + sigma' Delta v_k`` (the image the local steps see) a
coordinate step on ``G_k^{sigma'}`` is exactly the serial SDCA step on
``u`` with the weight ``1/W`` replaced by ``sigma'/W``:

* margin ``x_i . u / lam``, curvature ``s = sigma' c_i ||x_i||^2 / (lam W)``;
* ``u += (sigma'/W) c_i Delta x_i``, i.e. ``Delta v_k += (1/W) c_i Delta x_i``.

So :func:`local_sdca_round` runs :func:`~primaldual.kernels.sdca.sdca_epoch`
on a private copy ``u`` of ``v`` with ``StepSpec(inv_W = sigma'/W)``, over
random permutations of the partition's rows (SDCA-Perm passes, which converge
in fewer steps than the paper's draws with replacement; ``H`` steps), and
returns ``Delta v_k = (u - v) / sigma'``; ``alpha`` of the partition's rows
becomes ``alpha + gamma Delta alpha``.

Threads inside a partition (``n_threads > 1``, e.g. a Dask worker with
several cores): each pass runs as the threaded serial SDCA's does
(:func:`~primaldual.blocks.sdca_threads.threaded_pass`; docs/solvers.md,
"Threads"), with the sync period
:func:`~primaldual.blocks.sdca_threads.auto_sync_every` picks on the worker.
The local solver is then asynchronous: a round with threads is not bitwise
repeatable (a different local quality ``Theta``, not a different method).
"""
from __future__ import annotations

import numpy as np

from ..kernels.deflated import LowRank, deflated_pass
from ..kernels.sdca import STATUS_OK, Averaging, SDCAState, Shrinking, sdca_epoch
from ..kernels.views import ProxWork, StepSpec
from ..blocks.sdca_threads import ThreadWork, threaded_pass

__all__ = ["local_sdca_round", "local_deflated_round", "permutation_passes"]

_NO_SHRINK = Shrinking(False, np.inf, np.inf)


def permutation_passes(rng, lo, hi, H) -> np.ndarray:
    """``H`` row indices: random permutations of ``lo..hi-1`` one after another
    (the last one cut), drawn from ``rng``."""
    nk = hi - lo
    passes = -(-H // nk)
    order = np.concatenate([rng.permutation(nk) for _ in range(passes)])[:H]
    return (order + lo).astype(np.int64)


def local_sdca_round(rows, spec, alpha, v, logit, lo, hi, H, sigma_prime, gamma, rng,
                     n_threads=1, sync_every=0):
    """One partition's CoCoA+ round with serial SDCA as the local solver.

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`) and ``spec``
    (:class:`StepSpec` of the problem) describe the block; the partition is
    rows ``lo..hi-1``.  ``alpha`` (the block's, updated in place on the
    partition's rows) and ``logit`` (the logistic cache, or empty) are shared
    with other partitions, which touch other rows; ``v`` is only read.
    ``n_threads > 1`` runs each pass on that many threads, each buffering its
    changes of the local image and flushing them every ``sync_every`` updates
    (see the module docstring).

    Returns ``(status, bad_row, feature_accesses, cols, vals)`` with
    ``Delta v_k = (1/W) sum_{i in P_k} c_i Delta alpha_i x_i`` as the sparse
    ``(cols, vals)`` (not scaled by ``gamma``).
    """
    order = permutation_passes(rng, lo, hi, H)
    u = v.copy()
    old = alpha[lo:hi].copy() if gamma != 1.0 else None
    local = StepSpec(spec.kind, spec.param, spec.lam, 0.0, spec.inv_W * sigma_prime)
    state = SDCAState(alpha, u, logit, np.zeros(0, np.uint8))
    empty, empty_i = np.zeros(0), np.zeros(0, np.int64)
    no_avg = Averaging(False, empty, empty_i, 0)
    no_prox = ProxWork(empty, empty, empty, empty_i)
    if n_threads > 1 and sync_every > 0 and hi - lo >= 2 * n_threads:
        status, pos, acc = _threaded_passes(rows, local, state, order, hi - lo, no_prox,
                                            int(n_threads), int(sync_every))
    else:
        status, pos, _, acc, _, _ = sdca_epoch(rows, local, state, order, 0, H, 0, -1,
                                               _NO_SHRINK, no_avg, no_prox)
    if status != STATUS_OK:
        return status, int(order[pos]), int(acc), None, None
    if old is not None:
        alpha[lo:hi] = old + gamma * (alpha[lo:hi] - old)
        if logit.shape[0]:
            logit[lo:hi] = np.nan            # the cache held the local values
    dv = (u - v) / sigma_prime
    cols = np.flatnonzero(dv)
    return STATUS_OK, -1, int(acc), cols, dv[cols]


def local_deflated_round(rows, spec, B, bsq, alpha, v, lo, hi, H, sig_top, sig_rest, rng):
    """One partition's round on the deflated coupling (:mod:`~primaldual.kernels.deflated`):
    ``H`` steps over permutation passes of rows ``lo..hi-1`` with the factor
    ``sig_top`` on the span of the shared directions (``B = X U``, ``bsq`` its
    squared row norms) and ``sig_rest`` on the rest; ``alpha`` is updated in
    place on the partition's rows, ``v`` only read.  Returns what
    :func:`local_sdca_round` returns."""
    order = permutation_passes(rng, lo, hi, H)
    u = v.copy()
    low = LowRank(B, bsq, np.zeros(B.shape[1]))
    status, pos, acc = deflated_pass(rows, spec, low, alpha, u, order, 0, H,
                                     float(sig_rest), float(sig_top) - float(sig_rest))
    if status != STATUS_OK:
        return status, int(order[pos]), int(acc), None, None
    dv = (u - v) / sig_rest
    cols = np.flatnonzero(dv)
    return STATUS_OK, -1, int(acc), cols, dv[cols]


def _threaded_passes(rows, spec, state, order, nk, no_prox, K, sync_every):
    """The local passes of ``order`` (permutations of ``nk`` rows one after
    another) on ``K`` threads, one pass at a time (a row is in one chunk of a
    pass, so each ``alpha_i`` has one writer), by the threaded solver's
    :func:`~primaldual.blocks.sdca_threads.threaded_pass`.  Returns ``(status, pos,
    acc)``."""
    acc = 0
    H = order.shape[0]
    per_row = rows.indptr[-1] / max(rows.indptr.shape[0] - 1, 1)
    max_row = int((rows.indptr[1:] - rows.indptr[:-1]).max(initial=1))
    work = ThreadWork(state.v.shape[0], K, sync_every, True, max_row)
    for start in range(0, H, nk):
        stop = min(H, start + nk)
        results, _ = threaded_pass(rows, spec, state, order, start, stop, work,
                                   (stop - start) * per_row, _NO_SHRINK, [no_prox] * K)
        for status, pos, _, a, _, _ in results:
            acc += a
            if status != STATUS_OK:
                return status, pos, acc
    return STATUS_OK, 0, acc
