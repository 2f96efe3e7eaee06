"""CoCoA+'s local solver as the serial SDCA kernel: one partition's round.

In a CoCoA+ round (Ma et al. 2015, Algorithm 1) partition ``k`` maximizes its
local subproblem ``G_k^{sigma'}`` (their eq. (10)) against the ``v`` of the
round.  With ``u = v + sigma' Delta v_k`` (the image the local steps see) a
coordinate step on ``G_k^{sigma'}`` is exactly the serial SDCA step on
``u`` with the weight ``1/W`` replaced by ``sigma'/W``:

* margin ``x_i . u / lam``, curvature ``s = sigma' c_i ||x_i||^2 / (lam W)``;
* ``u += (sigma'/W) c_i Delta x_i``, i.e. ``Delta v_k += (1/W) c_i Delta x_i``.

So :func:`local_sdca_round` runs :func:`~primaldual.kernels.sdca.sdca_epoch`
(prefetching, the logistic logit cache) on a private copy ``u`` of ``v`` with
``StepSpec(inv_W = sigma'/W)``, over random permutations of the partition's
rows (SDCA-Perm passes; ``H`` steps), and returns ``Delta v_k = (u - v) /
sigma'``.  The paper's LocalSDCA (Algorithm 2) draws ``i`` uniformly with
replacement; passes over permutations converge in fewer steps, as for serial
SDCA (Shalev-Shwartz & Zhang 2013, Section 6).  ``alpha`` of the partition's
rows becomes ``alpha + gamma Delta alpha``.

Threads inside a partition (``n_threads > 1``, e.g. a Dask worker with
several cores): each permutation pass of the local solver runs as the
threaded serial SDCA does (:mod:`primaldual.solvers.sdca`, "Threads"): the
pass is cut into chunks that the threads take in turn, each thread steps on
its own copy of ``u`` and adds its change to the shared ``u`` every
``sync_every`` updates, atomically.  The local solver is then asynchronous:
its result depends on how the threads interleave (a different local solver
quality ``Theta`` in the paper's analysis, not a different method), so a
round with threads is not bitwise repeatable.
"""
from __future__ import annotations

import itertools

import numpy as np

from .._util.threads import run_threads
from ..kernels.sdca import (STATUS_OK, Averaging, SDCAState, Shrinking, ThreadCopy,
                            sdca_epoch, sync_copy)
from ..kernels.views import ProxWork, StepSpec

__all__ = ["local_sdca_round", "permutation_passes", "MODE_COCOA_SDCA"]

#: the round mode of :meth:`PartitionBlock.run` for this local solver (0 and 1
#: are the kernels' MODE_MSDCA and MODE_COCOA, kernels/minibatch.py)
MODE_COCOA_SDCA = 2

_NO_SHRINK = Shrinking(False, np.inf, np.inf)


def permutation_passes(rng, lo, hi, H) -> np.ndarray:
    """``H`` row indices: random permutations of ``lo..hi-1`` one after another
    (the last one cut), drawn from ``rng``."""
    nk = hi - lo
    passes = -(-H // nk)
    order = np.concatenate([rng.permutation(nk) for _ in range(passes)])[:H]
    return (order + lo).astype(np.int64)


#: threads inside a partition: chunks of about this many rows per thread and pass
_CHUNKS_PER_THREAD = 8


def local_sdca_round(rows, spec, alpha, v, logit, lo, hi, H, sigma_prime, gamma, rng,
                     n_threads=1, sync_every=0):
    """One partition's CoCoA+ round with serial SDCA as the local solver.

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`) and ``spec``
    (:class:`StepSpec` of the problem) describe the block; the partition is
    rows ``lo..hi-1``.  ``alpha`` (the block's, updated in place on the
    partition's rows) and ``logit`` (the logistic cache, or empty) are shared
    with other partitions, which touch other rows; ``v`` is only read.
    ``n_threads > 1`` runs each pass on that many threads, each on its own
    copy of the local image synced every ``sync_every`` updates (see the
    module docstring).

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
        status, pos, acc = _threaded_passes(rows, local, state, order, hi - lo, no_avg,
                                            no_prox, int(n_threads), int(sync_every))
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


def _threaded_passes(rows, spec, state, order, nk, no_avg, no_prox, K, sync_every):
    """The local passes of ``order`` (permutations of ``nk`` rows one after
    another) on ``K`` threads, one pass at a time (a row is in one chunk of a
    pass, so each ``alpha_i`` has one writer).  Returns ``(status, pos, acc)``."""
    acc = 0
    H = order.shape[0]
    for start in range(0, H, nk):
        stop = min(H, start + nk)
        n_chunks = max(K, min(_CHUNKS_PER_THREAD * K, (stop - start) // 1024))
        chunks = np.linspace(start, stop, n_chunks + 1).round().astype(np.int64)
        next_chunk = itertools.count().__next__          # atomic under the GIL

        def task(k, stop_flag):
            mine = state.v.copy()
            copy = ThreadCopy(mine.copy(), state.v, np.zeros(1, np.int64), sync_every,
                              True)
            mine_state = state._replace(v=mine)
            status, pos, accesses = STATUS_OK, 0, 0
            while True:
                c = next_chunk()
                if c >= n_chunks:
                    break
                res = sdca_epoch(rows, spec, mine_state, order, chunks[c], chunks[c + 1],
                                 0, -1, _NO_SHRINK, no_avg, no_prox, True, copy)
                accesses += res.accesses
                if res.status != STATUS_OK:
                    status, pos = res.status, res.pos
                    break
            sync_copy(mine, copy)
            return status, pos, accesses

        results, _ = run_threads(task, K)
        for status, pos, a in results:
            acc += a
            if status != STATUS_OK:
                return status, pos, acc
    return STATUS_OK, 0, acc
