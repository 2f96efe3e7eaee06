"""Seeded synthetic data with the shape of the papers' large text sets.

:func:`make_synthetic` draws sparse sets with the shape of the large text sets of the
papers (:data:`SYNTHETIC_SHAPES`): Zipf-distributed feature popularity, a varying
number of nonzeros per row, positive TF-IDF-like values, unit-norm rows and labels
from a planted linear model with a fraction of flipped labels.
:func:`make_planted_text` plants a sparse, learnable model on mid-frequency features
of the same background matrix.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._util import make_rng

__all__ = ["PLANTED_TEXT_SHAPES", "SYNTHETIC_SHAPES", "SyntheticShape", "ZIPF_EXPONENT",
           "make_planted_text", "make_synthetic"]


class SyntheticShape(NamedTuple):
    """Shape of a synthetic preset: rows, columns and fraction of nonzero entries."""

    n: int
    d: int
    density: float


#: Presets of :func:`make_synthetic`: the papers' large sets (n, d, density).
SYNTHETIC_SHAPES: dict[str, SyntheticShape] = {
    "rcv1": SyntheticShape(20242, 47236, 0.0016),
    "news20": SyntheticShape(19996, 1355191, 0.0003),
    "real-sim": SyntheticShape(72309, 20958, 0.0024),
    "astro-ph": SyntheticShape(29882, 99757, 0.0008),
    "CCAT": SyntheticShape(781265, 47236, 0.0016),
    "webspam": SyntheticShape(350000, 254, 85.0 / 254.0),
}

#: Zipf exponent of the column popularity (p_rank ~ rank**-s).
ZIPF_EXPONENT = 1.1
# lognormal spread of the per-row nonzero count; webspam rows vary less
_ROW_SIGMA = {"webspam": 0.35}
_DEFAULT_ROW_SIGMA = 0.6
_SUPPORT_FRACTION = 0.2        # fraction of features in the planted model's support
_BLOCK_DRAWS = 1 << 22         # candidate draws per block (bounds memory)


def _resolve_shape(shape):
    if isinstance(shape, str):
        for key, val in SYNTHETIC_SHAPES.items():
            if key.lower() == shape.lower():
                return key, val
        raise ValueError(f"unknown synthetic shape {shape!r}; presets: "
                         f"{', '.join(SYNTHETIC_SHAPES)}, or pass (n, d, density)")
    try:
        n, d, density = shape
    except (TypeError, ValueError):
        raise ValueError(f"shape must be a preset name or an (n, d, density) tuple, "
                         f"got {shape!r}") from None
    return None, SyntheticShape(int(n), int(d), float(density))


class _DistinctCalibration:
    """Expected number of distinct columns after m i.i.d. draws, and its inverse."""

    def __init__(self, p, k_max):
        head = p[:4096]
        tail = p[4096:]
        nodes, weights = [head], [np.ones(head.size)]
        if tail.size:
            # geometric bins over the tail ranks; p varies slowly inside each bin
            edges = np.unique(np.round(np.geomspace(1, tail.size + 1, 1025)).astype(np.int64)) - 1
            edges = edges[edges < tail.size]
            counts = np.diff(np.append(edges, tail.size))
            nodes.append(np.add.reduceat(tail, edges) / counts)
            weights.append(counts.astype(float))
        self._lq = np.log1p(-np.concatenate(nodes))
        self._w = np.concatenate(weights)
        m_hi = max(4.0, 4.0 * k_max)
        while self.expected(np.array([m_hi]))[0] < k_max + 0.5 and m_hi < 1e12:
            m_hi *= 2.0
        self._m = np.geomspace(1.0, m_hi, 512)
        self._D = self.expected(self._m)

    def expected(self, m):
        out = np.empty(m.size)
        for s in range(0, m.size, 64):
            mm = m[s:s + 64]
            out[s:s + 64] = (-np.expm1(np.outer(mm, self._lq)) * self._w).sum(axis=1)
        return out

    def draws_for(self, k):
        """Draws whose expected distinct count is k (vectorized)."""
        return np.interp(k, self._D, self._m)


def _first_k_distinct(rows, ranks, pos, k, d):
    """Per row, keep the first k[row] distinct ranks in draw order (by ``pos``).

    Returns the kept ``(rows, ranks)`` and the kept count per row. Drawing with
    replacement and keeping the first k distinct values is exactly weighted sampling
    without replacement.
    """
    nb = k.size
    if rows.size == 0:
        return rows, ranks, np.zeros(nb, dtype=np.int64)
    M = int(pos.max()) + 1
    if float(nb) * d * M < 2.0**62:
        key = (rows * d + ranks) * M + pos
        key.sort()
        pair, p = np.divmod(key, M)
    else:
        order = np.lexsort((pos, ranks, rows))
        pair = rows[order] * d + ranks[order]
        p = pos[order]
    first = np.empty(pair.size, dtype=bool)
    first[0] = True
    np.not_equal(pair[1:], pair[:-1], out=first[1:])
    pair, p = pair[first], p[first]
    r, c = np.divmod(pair, d)
    order = np.argsort(r * M + p)
    r, c = r[order], c[order]
    starts = np.searchsorted(r, np.arange(nb))
    rank_in_row = np.arange(r.size) - starts[r]
    keep = rank_in_row < k[r]
    r, c = r[keep], c[keep]
    return r, c, np.bincount(r, minlength=nb)


def _row_offsets(counts):
    """For per-row counts, the within-row position 0..count-1 of each repeated entry."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total, dtype=np.int64) - starts


def _sample_columns(rng, k, cdf, d, calib, m0, perm):
    """Sample k[i] distinct Zipf-distributed columns for every row.

    Returns the column indices in CSR order (rows in order, columns sorted within each
    row) and the popularity rank of each one.
    """
    invperm = np.empty(d, dtype=np.int64)
    invperm[perm] = np.arange(d)
    n = k.size
    cum = np.cumsum(m0)
    # block boundaries so that each block draws about _BLOCK_DRAWS candidates
    cuts = np.searchsorted(cum, np.arange(_BLOCK_DRAWS, cum[-1], _BLOCK_DRAWS), side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [n]]))
    pieces = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        kb = k[a:b]
        mb = m0[a:b]
        nb = b - a
        rows = np.repeat(np.arange(nb, dtype=np.int64), mb)
        pos = _row_offsets(mb)
        ranks = np.minimum(np.searchsorted(cdf, rng.random(rows.size), side="right"), d - 1)
        r, c, cnt = _first_k_distinct(rows, ranks.astype(np.int64), pos, kb, d)
        for _ in range(10_000):
            deficient = cnt < kb
            if not deficient.any():
                break
            idx = np.flatnonzero(deficient)
            sel = deficient[r]
            o = np.argsort(r[sel], kind="stable")
            r_old, c_old = r[sel][o], c[sel][o]
            pos_old = _row_offsets(cnt[idx])
            extra = (np.ceil(1.5 * (calib.draws_for(kb[idx]) - calib.draws_for(cnt[idx])))
                     .astype(np.int64))
            extra = np.maximum(extra, 2 * (kb[idx] - cnt[idx])) + 4
            r_new = np.repeat(idx, extra)
            pos_new = np.repeat(cnt[idx], extra) + _row_offsets(extra)
            c_new = np.minimum(
                np.searchsorted(cdf, rng.random(r_new.size), side="right"), d - 1)
            r2, c2, cnt2 = _first_k_distinct(
                np.concatenate([r_old, r_new]), np.concatenate([c_old, c_new.astype(np.int64)]),
                np.concatenate([pos_old, pos_new]), kb, d)
            r = np.concatenate([r[~sel], r2])
            c = np.concatenate([c[~sel], c2])
            cnt[idx] = cnt2[idx]
        else:  # pragma: no cover - needs k close to d with a vanishing tail probability
            raise RuntimeError("synthetic sampler did not reach the requested row sizes")
        key = r * d + perm[c]
        key.sort()
        pieces.append(key % d)
    cols = np.concatenate(pieces)
    return cols, invperm[cols]


def _sample_columns_dense(rng, k, p, d, perm):
    """Dense-regime twin of :func:`_sample_columns` (rows hold a large share of d).

    Every column of a row gets an exponential arrival time with rate ``p[rank]``; the
    ``k[i]`` earliest arrive are kept, which is the same weighted sampling without
    replacement, at a cost of ``n * d`` instead of the many repeated draws of the head.
    """
    invperm = np.empty(d, dtype=np.int64)
    invperm[perm] = np.arange(d)
    n = k.size
    step = max(1, _BLOCK_DRAWS // d)
    pieces = []
    for a in range(0, n, step):
        kb = k[a:a + step]
        nb = kb.size
        arrival = rng.standard_exponential((nb, d)) / p
        order = np.argsort(arrival, axis=1)
        keep = np.arange(d) < kb[:, None]
        ranks = order[keep].astype(np.int64)
        rows = np.repeat(np.arange(nb, dtype=np.int64), kb)
        key = rows * d + perm[ranks]
        key.sort()
        pieces.append(key % d)
    cols = np.concatenate(pieces)
    return cols, invperm[cols]


def make_synthetic(shape, n_samples=None, random_state=0, noise=0.05, dtype=np.float64):
    """Seeded sparse binary classification data shaped like a large text set.

    Generation, fully vectorized:

    1. Column popularity follows Zipf's law, ``p(rank) ~ rank**-1.1``
       (:data:`ZIPF_EXPONENT`), with ranks assigned to columns by a random
       permutation.
    2. Row ``i`` gets ``k_i`` nonzeros, ``k_i`` lognormal around ``density * d``
       (sigma 0.6; 0.35 for webspam), rescaled so that the mean is exactly
       ``density * d``, clipped to ``[1, 0.75 d]``.
    3. The ``k_i`` columns are drawn from the Zipf law without replacement (i.i.d.
       draws, keeping the first ``k_i`` distinct ones; for dense rows such as
       webspam's, the equivalent race of exponential arrival times over all columns).
    4. Values are TF-IDF-like: ``(1 + log tf) * idf_j`` with ``tf`` geometric on
       {1, 2, ...} and ``idf_j = 1 + log(1 / P(column j in a row))``; each row is then
       scaled to unit L2 norm.
    5. A planted model ``w_true`` has Gaussian weights on a random 20% of the columns,
       made orthogonal to the mean row (so that the classes are roughly balanced) and
       scaled to unit norm. ``y = sign(X w_true)`` (ties broken at random), then a
       fraction ``noise`` of the labels, chosen at random, is flipped.

    Parameters
    ----------
    shape : str or (n, d, density)
        A key of :data:`SYNTHETIC_SHAPES` (case-insensitive: ``"rcv1"``, ``"news20"``,
        ``"real-sim"``, ``"astro-ph"``, ``"CCAT"``, ``"webspam"``) or a custom tuple.
    n_samples : int, optional
        Number of rows, overriding the preset's ``n``; ``d`` and the per-row number of
        nonzeros (hence the density) are kept.
    random_state : int, numpy Generator, RandomState or None, default 0
        Seed (see :func:`primaldual._util.make_rng`); the same int seed gives
        identical output. A Generator contributes one draw.
    noise : float in [0, 1], default 0.05
        Fraction of labels flipped after labelling by the planted model.
    dtype : numpy floating dtype, default float64
        Dtype of the matrix values.

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n, d)
        Sorted indices without duplicates, positive values, unit-norm rows.
    y : ndarray of float64, shape (n,)
        Labels in {-1, +1}.
    w_true : ndarray of float64, shape (d,)
        The planted model.
    """
    args = _synthetic_args(shape, n_samples, noise, dtype)
    return _draw_synthetic(make_rng(random_state), *args)


def _synthetic_args(shape, n_samples, noise, dtype):
    """Checked ``(key, n, d, density, noise, dtype)`` of :func:`make_synthetic`."""
    key, (n, d, density) = _resolve_shape(shape)
    if n_samples is not None:
        n = int(n_samples)
    if n < 1 or d < 1:
        raise ValueError(f"need n >= 1 and d >= 1, got n={n}, d={d}")
    if not 0.0 < density <= 1.0:
        raise ValueError(f"density must be in (0, 1], got {density}")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be in [0, 1], got {noise}")
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating type, got {dtype}")
    return key, n, d, density, noise, dtype


def _draw_synthetic(rng, key, n, d, density, noise, dtype):
    """:func:`make_synthetic`'s draw from the generator ``rng`` (which it advances)."""
    sigma = _ROW_SIGMA.get(key, _DEFAULT_ROW_SIGMA)

    # column popularity by rank, and a random rank -> column assignment
    p = np.arange(1, d + 1, dtype=np.float64) ** -ZIPF_EXPONENT
    p /= p.sum()
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    perm = rng.permutation(d)

    # nonzeros per row
    mean_k = density * d
    k_max = max(1, int(0.75 * d)) if d > 1 else 1
    k_raw = rng.lognormal(-0.5 * sigma**2, sigma, size=n) * mean_k
    for _ in range(3):   # rescale so the clipped mean stays at density * d
        kc = np.clip(k_raw, 1.0, k_max)
        k_raw *= mean_k / kc.mean()
    k = np.floor(np.clip(k_raw, 1.0, k_max) + rng.random(n)).astype(np.int64)
    k = np.clip(k, 1, min(k_max, d))

    calib = _DistinctCalibration(p, float(k.max()))
    m0 = np.ceil(1.05 * calib.draws_for(k)).astype(np.int64) + 2
    m0 = np.maximum(m0, k)
    if m0.mean() >= 0.5 * d:     # dense rows: racing all d columns is cheaper
        cols, ranks = _sample_columns_dense(rng, k, p, d, perm)
    else:
        cols, ranks = _sample_columns(rng, k, cdf, d, calib, m0, perm)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(k, out=indptr[1:])

    # TF-IDF-like values, then unit-norm rows
    m_mean = float(calib.draws_for(np.array([mean_k]))[0])
    appear = -np.expm1(m_mean * np.log1p(-p))          # P(column of this rank in a row)
    idf = 1.0 + np.log(1.0 / np.maximum(appear, 1e-300))
    tf = rng.geometric(0.6, size=cols.size)
    vals = (1.0 + np.log(tf)) * idf[ranks]
    norms = np.sqrt(np.add.reduceat(vals * vals, indptr[:-1]))
    vals /= np.repeat(norms, k)

    index_dtype = np.int32 if max(d, cols.size) < 2**31 else np.int64
    X = sp.csr_matrix((vals.astype(dtype), cols.astype(index_dtype),
                       indptr.astype(index_dtype)), shape=(n, d))
    X.has_sorted_indices = True

    w_true = _planted_model(rng, np.bincount(cols, weights=vals, minlength=d) / n)
    return X, _planted_labels(X, w_true, noise, rng), w_true


def _planted_model(rng, col_mean, support_fraction=_SUPPORT_FRACTION):
    """Gaussian weights on a random ``support_fraction`` of the columns, made
    orthogonal to the mean row ``col_mean`` (so ``sign(X w)`` splits the rows about
    evenly) and scaled to unit norm."""
    d = col_mean.size
    s_w = max(1, int(round(support_fraction * d)))
    support = rng.choice(d, size=s_w, replace=False)
    wv = rng.standard_normal(s_w)
    cm = col_mean[support]
    mm = float(cm @ cm)
    if mm > 0.0:
        wv -= (float(wv @ cm) / mm) * cm
    w_true = np.zeros(d)
    w_true[support] = wv
    nrm = np.linalg.norm(w_true)
    if nrm > 0:
        w_true /= nrm
    return w_true


def _planted_labels(X, w_true, noise, rng):
    """sign(X w_true), ties broken at random, then a ``noise`` share of labels flipped."""
    n = X.shape[0]
    margin = np.asarray(X @ w_true, dtype=np.float64)
    y = np.where(margin > 0, 1.0, -1.0)
    ties = margin == 0
    if ties.any():
        y[ties] = rng.choice([-1.0, 1.0], size=int(ties.sum()))
    n_flip = int(round(noise * n))
    if n_flip:
        y[rng.choice(n, size=n_flip, replace=False)] *= -1.0
    return y


#: Presets of :func:`make_planted_text`: (shape, support size, document-frequency range).
PLANTED_TEXT_SHAPES = {
    "news20": ("news20", 1000, (0.005, 0.05)),
    "real-sim": ("real-sim", 300, (0.005, 0.05)),
}


def _planted_text_params(shape, support_size, df_range, noise, topic_words):
    """``(shape, support_size, df_range)`` of :func:`make_planted_text` after its
    preset, checked."""
    preset = None
    if isinstance(shape, str):
        for key, val in PLANTED_TEXT_SHAPES.items():
            if key.lower() == shape.lower():
                preset = val
    if preset is not None:
        shape = preset[0]
        support_size = preset[1] if support_size is None else support_size
        df_range = preset[2] if df_range is None else df_range
    support_size = 1000 if support_size is None else int(support_size)
    df_range = (0.005, 0.05) if df_range is None else tuple(float(v) for v in df_range)
    if support_size < 2:
        raise ValueError(f"support_size must be >= 2, got {support_size}")
    if len(df_range) != 2 or not 0.0 <= df_range[0] < df_range[1] <= 1.0:
        raise ValueError(f"df_range must be (lo, hi) with 0 <= lo < hi <= 1, got {df_range}")
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be in [0, 1], got {noise}")
    if not topic_words >= 1.0:
        raise ValueError(f"topic_words must be >= 1, got {topic_words}")
    return shape, support_size, df_range


def _add_topic_words(X, rng, pos, neg, topic_words):
    """Step 2 of :func:`make_planted_text`: every row draws a class and
    ``1 + Poisson(topic_words - 1)`` topic words from ``pos`` or ``neg``, each
    with the row's largest value; rows are then scaled to unit L2 norm."""
    n, d = X.shape
    cls = rng.choice([-1.0, 1.0], size=n)
    m = 1 + rng.poisson(topic_words - 1.0, size=n)
    rows = np.repeat(np.arange(n), m)
    u = rng.random(rows.size)
    cpos = cls[rows] > 0
    cols = np.where(cpos, pos[(u * pos.size).astype(np.int64)],
                    neg[(u * neg.size).astype(np.int64)])
    rowmax = np.maximum.reduceat(X.data, X.indptr[:-1]) if X.nnz else np.ones(n)
    rowmax = np.where(np.diff(X.indptr) > 0, rowmax, 1.0)
    T = sp.csr_matrix((rowmax[rows], (rows, cols)), shape=(n, d))
    X = (X + T).tocsr()
    X.sum_duplicates()
    X.sort_indices()
    norms = np.sqrt(np.add.reduceat(X.data * X.data, X.indptr[:-1]))
    X.data /= np.repeat(norms, np.diff(X.indptr))
    return X


def make_planted_text(shape, n_samples=None, random_state=0, noise=0.01,
                      support_size=None, df_range=None, topic_words=4.0, dtype=np.float64):
    """Seeded sparse text-like data whose labels a linear model can learn from few rows.

    The background matrix is :func:`make_synthetic`'s (Zipf column popularity,
    lognormal row lengths, TF-IDF-like values; same ``shape``, ``n_samples`` and
    seed).  The labels come from a sparse planted model on *mid-frequency*
    features, as topic words work in real text:

    1. ``support_size`` features are drawn uniformly from those whose document
       frequency ``df_j`` (fraction of rows containing ``j``) lies in
       ``df_range``, and split at random into two halves ``S+`` and ``S-``;
       ``w_true = (1_{S+} - 1_{S-}) / sqrt(support_size)``;
    2. every row draws a class ``c_i = +-1`` (fair coin) and ``1 + Poisson(topic_words - 1)``
       topic words uniformly from ``S_{c_i}``, each with the value of the row's
       largest entry (added to the entry if the word is already present);
       rows are then scaled to unit L2 norm;
    3. ``y = sign(X w_true)`` (ties at random), then a fraction ``noise`` of the
       labels, chosen at random, is flipped.

    So the Bayes error is about ``noise``, and a few thousand rows see each
    support feature many times: the set can be learned from the training sizes
    of the SIMBA paper (8,000 rows for news20, 20,000 for real-sim).
    :func:`make_synthetic`'s dense planted model on 20% of all columns cannot be
    learned from 8,000 rows of a million-column set.

    Parameters
    ----------
    shape : str or (n, d, density)
        ``"news20"`` or ``"real-sim"`` (:data:`PLANTED_TEXT_SHAPES`, which also set
        ``support_size`` and ``df_range``), or any :func:`make_synthetic` shape.
    n_samples : int, optional
        Number of rows (default: the shape's ``n``).
    random_state : int, numpy Generator, RandomState or None, default 0
        As in :func:`make_synthetic`.
    noise : float in [0, 1], default 0.01
        Fraction of labels flipped at random.
    support_size : int, optional
        Number of features in the planted model (preset value, else 1000); at least 2.
    df_range : (float, float), optional
        Document-frequency range of the support in the background matrix
        (preset value, else (0.005, 0.05)).
    topic_words : float >= 1, default 4.0
        Mean number of topic words added per row.
    dtype : numpy floating dtype, default float64

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n, d)   unit-norm rows, sorted indices
    y : ndarray of float64, shape (n,)          labels in {-1, +1}
    w_true : ndarray of float64, shape (d,)     the planted model (unit norm)
    """
    shape, support_size, df_range = _planted_text_params(shape, support_size, df_range,
                                                         noise, topic_words)
    rng = make_rng(random_state)
    # the background matrix and the planted model come from one stream
    X, _, _ = _draw_synthetic(rng, *_synthetic_args(shape, n_samples, 0.0, np.float64))
    n, d = X.shape
    df = np.bincount(X.indices, minlength=d) / n
    mid = np.flatnonzero((df >= df_range[0]) & (df <= df_range[1]))
    if mid.size < support_size:
        raise ValueError(f"only {mid.size} features have a document frequency in "
                         f"{df_range} on this {n} x {d} set, fewer than support_size="
                         f"{support_size}; widen df_range or lower support_size")
    support = rng.choice(mid, size=support_size, replace=False)
    half = support_size // 2
    pos, neg = support[:half], support[half:]
    w_true = np.zeros(d)
    w_true[pos] = 1.0
    w_true[neg] = -1.0
    w_true /= np.sqrt(support_size)

    X = _add_topic_words(X, rng, pos, neg, topic_words)
    X = X.astype(np.dtype(dtype))

    return X, _planted_labels(X, w_true, noise, rng), w_true
