"""Benchmark data: a registry of LIBSVM binary sets, verified downloads, synthetic twins.

Real data
---------
:data:`REGISTRY` maps a dataset name (``"a9a"``, ``"rcv1.binary"``, ``"heart_scale"``,
...) to a :class:`Dataset` record: its files, where they can be downloaded, their
sha256, the number of features and which raw label becomes ``+1``.
:func:`load` returns ``(X, y)`` as a CSR matrix and labels in ``{-1, +1}``.

Files are looked up, in this order, in

1. the directories listed in ``$PRIMALDUAL_DATA`` (``os.pathsep``-separated),
2. the project's ``shared/data`` folder, found by walking up from the current working
   directory and from this source file looking for a ``shared/data`` directory (the
   checkout lives beside it, e.g. ``/work/main`` and ``/work/shared/data``),
3. the cache directory (``data_home``, else ``$PRIMALDUAL_CACHE``, else
   ``~/.cache/primaldual``),

and, failing all of those, downloaded into the cache with :func:`download`, which
streams to a temporary file, checks the sha256 and only then renames the file into
place. A set whose hash is not known (``sha256=None`` in the registry) is downloaded
only when the caller passes ``allow_unverified=True``.

Every file is parsed by :func:`sklearn.datasets.load_svmlight_files`; its parse
errors are re-raised as :class:`DataFormatError`, naming the file and the line.

Synthetic data
--------------
:func:`make_synthetic` draws seeded sparse sets with the shape of the large text
sets of the papers (:data:`SYNTHETIC_SHAPES`): Zipf-distributed feature popularity,
a varying number of nonzeros per row, positive TF-IDF-like values, unit-norm rows
and labels from a planted linear model with a fraction of flipped labels.

Regimes
-------
:data:`REGIMES` names one seeded generator per kind of data users have (text with
a shared vocabulary or with orthogonal rows, very wide sparse, one-hot, unscaled
and mixed-scale dense, standardized ``d ~ n``, tiny, duplicated rows);
:func:`make_regime` draws one, :func:`shared_regimes` lists the real sets present
and :func:`regime_stats` reports a set's shape (benchmarks/bench_regimes.py).

Modules
-------
=========================================  ==========================================
:mod:`primaldual.datasets.registry`        names, shapes and provenance of the sets
:mod:`primaldual.datasets.fetch`           lookup order, cache and verified downloads
:mod:`primaldual.datasets.svmlight`        LIBSVM reading with line-numbered errors
:mod:`primaldual.datasets.loading`         :func:`load`: find, parse, map labels
:mod:`primaldual.datasets.synthetic`       :func:`make_synthetic`, :func:`make_planted_text`
:mod:`primaldual.datasets.regimes`         the regime suite: :data:`REGIMES`,
                                           :func:`make_regime`, :func:`regime_stats`
=========================================  ==========================================
"""

from .fetch import (ChecksumError, DownloadError, UnverifiedDownloadError, available,
                    available_real, cache_dir, download, find, search_path,
                    shared_data_dirs)
from .loading import load
from .regimes import (REGIMES, Regime, load_shared_regime, make_duplicated_rows,
                      make_mixed_scales, make_one_hot, make_orthogonal_text, make_regime,
                      make_shared_vocab_text, make_standardized_dense, make_tiny,
                      make_unscaled_dense, make_very_wide_sparse, regime_cosine, regime_stats,
                      shared_regimes)
from .registry import LIBSVM_BINARY_URL, REGISTRY, DataFile, Dataset, info
from .svmlight import DataFormatError, load_svmlight, load_svmlight_files
from .synthetic import (PLANTED_TEXT_SHAPES, SYNTHETIC_SHAPES, ZIPF_EXPONENT, SyntheticShape,
                        make_planted_text, make_synthetic)

__all__ = [
    "ChecksumError",
    "DataFile",
    "DataFormatError",
    "Dataset",
    "DownloadError",
    "LIBSVM_BINARY_URL",
    "PLANTED_TEXT_SHAPES",
    "REGIMES",
    "REGISTRY",
    "Regime",
    "SYNTHETIC_SHAPES",
    "SyntheticShape",
    "UnverifiedDownloadError",
    "ZIPF_EXPONENT",
    "available",
    "available_real",
    "cache_dir",
    "download",
    "find",
    "info",
    "load",
    "load_shared_regime",
    "load_svmlight",
    "load_svmlight_files",
    "make_duplicated_rows",
    "make_mixed_scales",
    "make_one_hot",
    "make_orthogonal_text",
    "make_planted_text",
    "make_regime",
    "make_shared_vocab_text",
    "make_standardized_dense",
    "make_synthetic",
    "make_tiny",
    "make_unscaled_dense",
    "make_very_wide_sparse",
    "regime_cosine",
    "regime_stats",
    "search_path",
    "shared_data_dirs",
    "shared_regimes",
]
