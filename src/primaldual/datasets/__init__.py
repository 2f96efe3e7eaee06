"""Data: a registry of LIBSVM sets, verified downloads, synthetic twins, regimes.

:data:`REGISTRY` maps a dataset name (``"a9a"``, ``"rcv1.binary"``, ...) to a
:class:`Dataset` record (files, download addresses, sha256, shape, task, label
mapping); :func:`load` returns ``(X, y)``.  Files are looked up in
``$PRIMALDUAL_DATA``, then the project's ``shared/data`` folder (found by walking
up from the working directory and from this file), then the cache
(``data_home``, ``$PRIMALDUAL_CACHE`` or ``~/.cache/primaldual``); failing those
they are downloaded into the cache with :func:`download`, which checks the
sha256 before the file appears (an unknown hash needs ``allow_unverified=True``).
Parse errors of :func:`sklearn.datasets.load_svmlight_files` are re-raised as
:class:`DataFormatError` naming the file and the line (docs/datasets.md).

=========================================  ==========================================
:mod:`primaldual.datasets.catalog`         the records: files, shapes, provenance
:mod:`primaldual.datasets.registry`        lookup by name, :func:`info`
:mod:`primaldual.datasets.fetch`           lookup order, cache and verified downloads
:mod:`primaldual.datasets.svmlight`        LIBSVM reading with line-numbered errors
:mod:`primaldual.datasets.loading`         :func:`load`: find, parse, map labels
:mod:`primaldual.datasets.synthetic`       :func:`make_synthetic` (the papers' large
                                           text sets' shapes), :func:`make_planted_text`
:mod:`primaldual.datasets.regimes`         one seeded generator per kind of data users
                                           have: :data:`REGIMES`, :func:`make_regime`,
                                           :func:`regime_stats`
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
