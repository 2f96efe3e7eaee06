"""The regime suite: seeded data sets of the kinds users have, one per regime,
beyond the shapes the speed targets were first measured on (text like CCAT and
rcv1, covtype).

Every generator is seeded and returns ``(X, y)`` with ``y`` in ``{-1, +1}``
from a planted linear model (no intercept) with a share ``noise`` flipped.
:data:`REGIMES` maps a name to its generator, default rows and a description;
:func:`make_regime` draws one at a ``scale`` of its default size,
:func:`shared_regimes` lists the real sets present in ``shared/data`` and
:func:`regime_stats` reports a set's shape (``n``, ``d``, nonzeros, value range,
positive share, mean row cosine).

=========================  ==================================================================
regime                     default size and why it is in the suite
=========================  ==================================================================
``shared_vocab_text``      300,000 x 100,000, about 57 nonzeros a row (17M): raw term counts
                           of Zipf words, unit rows, mean row cosine about 0.5
``orthogonal_text``        250,000 x 200,000, about 62 nonzeros a row (15M): TF-IDF rows of a
                           flat vocabulary, mean row cosine below 0.001
``very_wide_sparse``       19,996 x 1,355,191 (8M), news20-like: ``d >> n``
``one_hot``                300,000 rows, 26 categorical fields, one 1 per field (7.8M), a
                           long tail of rare categories (criteo-like)
``tall_narrow_unscaled``   245,057 x 3 dense, integers 0-255 (skin-like)
``dense_mixed_scales``     59,535 x 8 dense, column scales from 1e-2 to 1e3 (cod-rna-like)
``standardized_dense``     2,000 x 500 dense, standardized columns, 20 informative
                           (madelon-like)
``tiny``                   500 x 20 dense
``duplicated_rows``        100,000 rows of text, each of 20,000 distinct rows about 5 times
=========================  ==================================================================
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import scipy.sparse as sp

from .._util import make_rng
from .fetch import available_real
from .loading import load
from .registry import REGISTRY
from .synthetic import _planted_labels, _planted_model, make_planted_text

__all__ = ["REGIMES", "Regime", "make_duplicated_rows", "make_mixed_scales",
           "make_one_hot", "make_orthogonal_text", "make_regime", "make_shared_vocab_text",
           "make_standardized_dense", "make_tiny", "make_unscaled_dense",
           "make_very_wide_sparse", "load_shared_regime", "regime_cosine", "regime_stats",
           "shared_regimes"]

_BLOCK_TOKENS = 1 << 22          # token draws per block (bounds memory)


# ------------------------------------------------------------------ helpers
def _check(n_samples, noise, **positive):
    if int(n_samples) < 2:
        raise ValueError(f"n_samples must be >= 2, got {n_samples}")
    if not 0.0 <= noise <= 0.5:
        raise ValueError(f"noise must be in [0, 0.5], got {noise}")
    for name, value in positive.items():
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}")
    return int(n_samples)


def _zipf_cdf(d, exponent):
    p = np.arange(1, d + 1, dtype=np.float64) ** -float(exponent)
    p /= p.sum()
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    return p, cdf


def _token_counts(rng, n, d, tokens_per_row, exponent, sigma=0.5):
    """A CSR matrix of raw term counts: row ``i`` draws ``L_i`` words i.i.d. from
    a Zipf law over ``d`` words (``p(rank) ~ rank**-exponent``, ranks assigned to
    columns by a random permutation), ``L_i`` lognormal around ``tokens_per_row``
    (at least 1); entry ``(i, j)`` counts the draws of word ``j``."""
    _, cdf = _zipf_cdf(d, exponent)
    perm = rng.permutation(d)
    L = rng.lognormal(np.log(tokens_per_row) - 0.5 * sigma**2, sigma, size=n)
    L = np.maximum(1, np.round(L)).astype(np.int64)
    cum = np.cumsum(L)
    cuts = np.searchsorted(cum, np.arange(_BLOCK_TOKENS, cum[-1], _BLOCK_TOKENS), side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [n]]))
    keys, counts = [], []
    for a, b in zip(bounds[:-1], bounds[1:]):
        rows = np.repeat(np.arange(a, b, dtype=np.int64), L[a:b])
        ranks = np.minimum(np.searchsorted(cdf, rng.random(rows.size), side="right"), d - 1)
        k, c = np.unique(rows * d + perm[ranks], return_counts=True)
        keys.append(k)
        counts.append(c)
    key = np.concatenate(keys)
    r, cols = np.divmod(key, d)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    X = sp.csr_matrix((np.concatenate(counts).astype(np.float64), cols.astype(np.int32),
                       indptr.astype(np.int32 if key.size < 2**31 else np.int64)),
                      shape=(n, d))
    X.has_sorted_indices = True
    return X


def _unit_rows(X):
    """Scale every row of the CSR ``X`` (no empty rows) to unit L2 norm, in place."""
    norms = np.sqrt(np.add.reduceat(X.data * X.data, X.indptr[:-1]))
    X.data /= np.repeat(norms, np.diff(X.indptr))


def _col_mean(X):
    return np.asarray(X.mean(axis=0), dtype=np.float64).ravel()


def _planted(rng, X, noise, support_fraction=0.2, frequent=None):
    """Labels of a planted unit-norm model on a random share of the columns (of the
    ``frequent`` columns held by the most rows, when given), orthogonal to the mean
    row, with a share ``noise`` of them flipped."""
    col_mean = _col_mean(X)
    if frequent is None:
        w = _planted_model(rng, col_mean, support_fraction)
    else:
        df = np.bincount(X.indices, minlength=X.shape[1])
        top = np.sort(np.argsort(-df, kind="stable")[:int(frequent)])
        w = np.zeros(X.shape[1])
        w[top] = _planted_model(rng, col_mean[top], support_fraction)
    return _planted_labels(X, w, noise, rng)


def _standardize(X):
    sd = X.std(axis=0)
    return np.ascontiguousarray((X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0))


# --------------------------------------------------------------- generators
def make_shared_vocab_text(n_samples=300_000, n_features=100_000, tokens_per_row=75.0,
                           zipf_exponent=1.05, unit_rows=True, noise=0.05, random_state=0):
    """Wide sparse text whose rows share a vocabulary: raw term counts.

    Row ``i`` draws about ``tokens_per_row`` words (lognormal, sigma 0.5) i.i.d.
    from a Zipf law over ``n_features`` words (``p(rank) ~ rank**-1.05``); the
    values are the raw counts (no TF-IDF), as a user's ``CountVectorizer`` gives,
    each row scaled to unit L2 norm (``unit_rows=False``: the counts as they are).
    The frequent words are in almost every row with large counts, so the mean row
    cosine is about 0.5 (at the defaults: about 57 distinct words a row, 17M
    nonzeros).  Labels: a planted model on 20% of the columns, orthogonal to the
    mean row, ``noise`` of them flipped.
    """
    n = _check(n_samples, noise, n_features=n_features, tokens_per_row=tokens_per_row,
               zipf_exponent=zipf_exponent)
    rng = make_rng(random_state)
    X = _token_counts(rng, n, int(n_features), float(tokens_per_row), zipf_exponent)
    if unit_rows:
        _unit_rows(X)
    return X, _planted(rng, X, noise)


def make_orthogonal_text(n_samples=250_000, n_features=200_000, tokens_per_row=62.0,
                         zipf_exponent=0.5, planted_words=2000, noise=0.05, random_state=0):
    """Wide sparse text with nearly orthogonal rows: TF-IDF over a flat vocabulary.

    Word counts as in :func:`make_shared_vocab_text` but from a flat Zipf law
    (``p(rank) ~ rank**-0.5``), then TF-IDF values ``(1 + log tf) * log(n / df)``
    and unit-norm rows: two rows rarely share a word, and a shared word weighs
    little, so the mean row cosine is below 0.001 (at the defaults: about 62
    nonzeros a row, 15M nonzeros).  Labels: a planted model on half of the
    ``planted_words`` most frequent words (topic words that a few thousand rows
    see often enough to learn), orthogonal to the mean row, ``noise`` flipped.
    """
    n = _check(n_samples, noise, n_features=n_features, tokens_per_row=tokens_per_row,
               zipf_exponent=zipf_exponent)
    rng = make_rng(random_state)
    X = _token_counts(rng, n, int(n_features), float(tokens_per_row), zipf_exponent)
    df = np.bincount(X.indices, minlength=X.shape[1])
    idf = np.log(n / np.maximum(df, 1)) + 1.0
    X.data = (1.0 + np.log(X.data)) * idf[X.indices]
    _unit_rows(X)
    return X, _planted(rng, X, noise, support_fraction=0.5, frequent=planted_words)


def make_very_wide_sparse(n_samples=19_996, noise=0.01, random_state=0):
    """Very wide sparse text, ``d >> n``: the news20 shape (1,355,191 columns,
    about 450 nonzeros a row, unit-norm TF-IDF-like rows) with a sparse planted
    model on mid-frequency words (:func:`make_planted_text`), learnable from this
    many rows."""
    n = _check(n_samples, noise)
    X, y, _ = make_planted_text("news20", n_samples=n, random_state=random_state,
                                noise=noise)
    return X, y


def _field_sizes(n_fields, smallest, largest):
    return np.round(np.geomspace(smallest, largest, n_fields)).astype(np.int64)


def make_one_hot(n_samples=300_000, n_fields=26, smallest_field=4, largest_field=300_000,
                 zipf_exponent=1.1, noise=0.1, random_state=0):
    """One-hot categorical data (criteo-like): many rows, one 1 per field.

    ``n_fields`` categorical fields with cardinalities geometric from
    ``smallest_field`` to ``largest_field``; a row takes one category of each
    field, drawn from a Zipf law over the field's categories (in a random order),
    so the wide fields have a long tail of categories seen once or never.  Every
    row has exactly ``n_fields`` ones; the columns are the fields' categories side
    by side.  Labels: a planted model on 50% of the columns, orthogonal to the
    mean row, ``noise`` of them flipped.
    """
    n = _check(n_samples, noise, n_fields=n_fields, smallest_field=smallest_field,
               zipf_exponent=zipf_exponent)
    if largest_field < smallest_field:
        raise ValueError(f"largest_field ({largest_field}) < smallest_field ({smallest_field})")
    rng = make_rng(random_state)
    sizes = _field_sizes(int(n_fields), smallest_field, largest_field)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    cols = np.empty((n, sizes.size), dtype=np.int64)
    for f, (m, off) in enumerate(zip(sizes, offsets)):
        _, cdf = _zipf_cdf(int(m), zipf_exponent)
        perm = rng.permutation(int(m))
        ranks = np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), m - 1)
        cols[:, f] = off + perm[ranks]
    d = int(sizes.sum())
    indptr = np.arange(0, n * sizes.size + 1, sizes.size, dtype=np.int64)
    X = sp.csr_matrix((np.ones(cols.size), cols.ravel().astype(np.int32),
                       indptr.astype(np.int32 if cols.size < 2**31 else np.int64)),
                      shape=(n, d))
    X.has_sorted_indices = True               # fields are side by side, in order
    return X, _planted(rng, X, noise, support_fraction=0.5)


def make_unscaled_dense(n_samples=245_057, n_features=3, n_clusters=8, noise=0.05,
                        random_state=0):
    """Tall, narrow, dense, unscaled (skin-like): integers 0-255.

    Rows come from ``n_clusters`` Gaussian clusters (centres uniform in 0-255,
    spread 20-70 per feature), rounded and clipped to 0-255, as pixel colour
    values.  No scaling: row norms reach ``255 sqrt(d)``.  Labels: a planted
    model on every column, orthogonal to the mean row, ``noise`` of them flipped.
    """
    n = _check(n_samples, noise, n_features=n_features, n_clusters=n_clusters)
    rng = make_rng(random_state)
    d = int(n_features)
    centres = rng.uniform(0.0, 255.0, size=(int(n_clusters), d))
    spread = rng.uniform(20.0, 70.0, size=(int(n_clusters), d))
    c = rng.integers(0, int(n_clusters), size=n)
    X = np.clip(np.round(centres[c] + spread[c] * rng.standard_normal((n, d))), 0.0, 255.0)
    X = np.ascontiguousarray(X)
    return X, _planted(rng, X, noise, support_fraction=1.0)


def make_mixed_scales(n_samples=59_535, n_features=8, smallest_scale=1e-2, largest_scale=1e3,
                      noise=0.05, random_state=0):
    """Dense data whose columns live on mixed scales (cod-rna-like).

    Correlated Gaussian features, then column ``j`` multiplied by a scale from
    ``smallest_scale`` to ``largest_scale`` (geometric, in a random order) and
    shifted by an offset of its own size, as raw measurements.  No scaling.
    Labels: a planted model on the *standardized* columns (so that every column
    matters, whatever its scale), mapped back to the raw ones, ``noise`` flipped.
    """
    n = _check(n_samples, noise, n_features=n_features, smallest_scale=smallest_scale,
               largest_scale=largest_scale)
    rng = make_rng(random_state)
    d = int(n_features)
    A = rng.standard_normal((d, d)) / np.sqrt(d)
    Z = rng.standard_normal((n, d)) @ (np.eye(d) + A)
    scales = rng.permutation(np.geomspace(smallest_scale, largest_scale, d))
    offsets = scales * rng.uniform(-2.0, 2.0, size=d)
    X = np.ascontiguousarray(Z * scales + offsets)
    w_std = _planted_model(rng, _col_mean(_standardize(X)), 1.0)
    w = w_std / X.std(axis=0)
    w -= (float(w @ _col_mean(X)) / float(_col_mean(X) @ _col_mean(X))) * _col_mean(X)
    return X, _planted_labels(X, w, noise, rng)


def make_standardized_dense(n_samples=2_000, n_features=500, n_informative=20, noise=0.1,
                            random_state=0):
    """Standardized dense data with ``d`` close to ``n`` (madelon-like).

    ``n_informative`` Gaussian columns carry a planted model; as many more are
    random mixtures of them (redundant), the rest are independent noise; every
    column is then standardized (mean 0, standard deviation 1), in a random
    order.  Labels: the planted model, ``noise`` of them flipped.
    """
    n = _check(n_samples, noise, n_features=n_features, n_informative=n_informative)
    d, k = int(n_features), int(n_informative)
    if k > d:
        raise ValueError(f"n_informative ({k}) > n_features ({d})")
    rng = make_rng(random_state)
    inf = rng.standard_normal((n, k))
    red = inf @ rng.standard_normal((k, min(k, d - k)))
    rest = rng.standard_normal((n, d - k - red.shape[1]))
    X = _standardize(np.hstack([inf, red, rest]))
    w = np.zeros(d)
    w[:k] = rng.standard_normal(k)
    order = rng.permutation(d)
    X, w = np.ascontiguousarray(X[:, order]), w[order]
    return X, _planted_labels(X, w / np.linalg.norm(w), noise, rng)


def make_tiny(n_samples=500, n_features=20, noise=0.05, random_state=0):
    """A tiny dense set (``n < 1000``): Gaussian columns, a planted model on all of
    them, ``noise`` of the labels flipped."""
    n = _check(n_samples, noise, n_features=n_features)
    rng = make_rng(random_state)
    X = rng.standard_normal((n, int(n_features)))
    return X, _planted(rng, X, noise, support_fraction=1.0)


def make_duplicated_rows(n_samples=100_000, mean_copies=5.0, n_features=50_000,
                         tokens_per_row=60.0, noise=0.05, random_state=0):
    """Text with duplicated rows: ``m = n_samples / mean_copies`` distinct rows
    (TF-IDF text as :func:`make_orthogonal_text`, Zipf exponent 1.0); the
    ``n_samples`` rows are every distinct row once and ``n_samples - m`` more
    copies of rows drawn uniformly, with their labels, in a random order.  The
    copies are identical (values and label), as in a log with repeated events."""
    n = _check(n_samples, noise, mean_copies=mean_copies, n_features=n_features)
    if mean_copies < 1:
        raise ValueError(f"mean_copies must be >= 1, got {mean_copies}")
    rng = make_rng(random_state)
    m = max(2, int(round(n / mean_copies)))
    base, y_base = make_orthogonal_text(m, n_features, tokens_per_row, 1.0,
                                        noise=noise, random_state=rng)
    src = rng.permutation(np.concatenate([np.arange(m), rng.integers(0, m, size=n - m)]))
    return base[src], y_base[src]


# ----------------------------------------------------------------- registry
class Regime(NamedTuple):
    """A regime of the suite: ``make(n_samples=..., random_state=...) -> (X, y)``."""

    name: str
    make: Callable
    n_samples: int
    description: str


REGIMES: dict[str, Regime] = {r.name: r for r in (
    Regime("shared_vocab_text", make_shared_vocab_text, 300_000,
           "wide sparse text, shared Zipf vocabulary, raw counts in unit rows (300k x 100k, "
           "17M nnz, row cosine ~0.5)"),
    Regime("orthogonal_text", make_orthogonal_text, 250_000,
           "wide sparse TF-IDF text, flat vocabulary, nearly orthogonal rows (250k x 200k, "
           "15M nnz)"),
    Regime("very_wide_sparse", make_very_wide_sparse, 19_996,
           "d >> n, news20-like (20k x 1.36M, 8M nnz)"),
    Regime("one_hot", make_one_hot, 300_000,
           "one-hot categorical, 26 fields, long tail of rare columns (criteo-like)"),
    Regime("tall_narrow_unscaled", make_unscaled_dense, 245_057,
           "dense 245k x 3, integers 0-255, unscaled (skin-like)"),
    Regime("dense_mixed_scales", make_mixed_scales, 59_535,
           "dense 60k x 8, column scales 1e-2 to 1e3 (cod-rna-like)"),
    Regime("standardized_dense", make_standardized_dense, 2_000,
           "dense 2,000 x 500 standardized, d close to n (madelon-like)"),
    Regime("tiny", make_tiny, 500, "dense 500 x 20"),
    Regime("duplicated_rows", make_duplicated_rows, 100_000,
           "sparse text, 20k distinct rows each repeated ~5 times (100k rows)"),
)}


def make_regime(name, scale=1.0, random_state=0):
    """Draw regime ``name`` with ``round(scale * default rows)`` rows (at least 50;
    the columns and the per-row shape are kept).  Returns ``(X, y)``."""
    if name not in REGIMES:
        raise ValueError(f"unknown regime {name!r}; regimes: {', '.join(REGIMES)}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    reg = REGIMES[name]
    n = max(50, int(round(scale * reg.n_samples)))
    return reg.make(n_samples=n, random_state=random_state)


def shared_regimes(data_home=None):
    """Names of the registered real binary sets of the ``shared/data`` folder whose
    files are present (an empty list when the folder is absent)."""
    present = set(available_real(data_home))
    return [name for name, ds in REGISTRY.items()
            if ds.shared and ds.task == "binary" and name in present]


def load_shared_regime(name, data_home=None):
    """The train split of a real set, as given (no scaling), labels in ``{-1, +1}``;
    never downloads."""
    X, y = load(name, subset="train", data_home=data_home, download=False,
                parsed_cache=True)
    return X, y


# -------------------------------------------------------------------- stats
def regime_cosine(X, sample=20_000):
    """The mean cosine ``x_i . x_j / (||x_i|| ||x_j||)`` over pairs ``i != j`` of
    non-zero rows, over at most ``sample`` evenly spaced rows (exact when
    ``n <= sample``): ``(||s||^2 - m) / (m (m - 1))`` with ``s`` the sum of the
    ``m`` normalized rows.  The statistic the threaded SDCA reads
    (``primaldual.blocks.sdca_threads.mean_row_cosine``)."""
    n = X.shape[0]
    idx = np.unique(np.linspace(0, n - 1, min(n, sample)).astype(np.int64))
    Xs = X[idx]
    if sp.issparse(Xs):
        sq = np.asarray(Xs.multiply(Xs).sum(axis=1), dtype=np.float64).ravel()
    else:
        sq = np.einsum("ij,ij->i", Xs, Xs)
    keep = sq > 0
    m = int(keep.sum())
    if m < 2:
        return 0.0
    s = np.asarray(Xs[keep].T @ (1.0 / np.sqrt(sq[keep])), dtype=np.float64).ravel()
    return max(float(s @ s) - m, 0.0) / (m * (m - 1.0))


def regime_stats(X, y):
    """A set's shape: ``n``, ``d``, ``nnz`` (stored nonzeros; all entries of a
    dense array that are not 0), ``nnz_per_row``, ``density``, ``sparse``,
    ``min`` and ``max`` value, ``mean_row_norm``, ``positive`` (share of +1
    labels) and ``cosine`` (:func:`regime_cosine`)."""
    n, d = X.shape
    if sp.issparse(X):
        nnz = int(X.count_nonzero())
        vals = X.data
        sq = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    else:
        nnz = int(np.count_nonzero(X))
        vals = np.asarray(X).ravel()
        sq = np.einsum("ij,ij->i", X, X)
    lo = float(vals.min()) if vals.size else 0.0
    hi = float(vals.max()) if vals.size else 0.0
    if sp.issparse(X) and X.nnz < n * d:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    return {"n": int(n), "d": int(d), "nnz": nnz, "nnz_per_row": nnz / max(n, 1),
            "density": nnz / max(n * d, 1), "sparse": bool(sp.issparse(X)),
            "min": lo, "max": hi, "mean_row_norm": float(np.mean(np.sqrt(sq))),
            "positive": float(np.mean(np.asarray(y) > 0)), "cosine": regime_cosine(X)}
