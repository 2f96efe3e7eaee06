"""Loading a registered set: find (or download) its files, parse them, map the labels."""

from __future__ import annotations

import numpy as np

from .._util import LabelError, encode_pm1
from .fetch import find
from .registry import resolve, subset_files
from .svmlight import DataFormatError, load_svmlight_files

__all__ = ["load"]


def _map_labels(ds, y_raw, path):
    try:
        return encode_pm1(y_raw, ds.positive_label, ds.negative_label,
                          source=f"{path} (dataset {ds.name!r})")
    except LabelError as exc:
        raise DataFormatError(str(exc), path=path) from exc


def load(name, *, subset="train", data_home=None, download=True, allow_unverified=False,
         dtype=np.float64, max_rows=None):
    """Load a registered LIBSVM binary classification set.

    Parameters
    ----------
    name : str
        Registry name, e.g. ``"a9a"``, ``"heart_scale"``, ``"rcv1.binary"``.
    subset : {"train", "test", "both"}, default "train"
        Which split to return.
    data_home : str or path-like, optional
        Cache directory override (see :func:`cache_dir`).
    download : bool, default True
        Download files missing from every local directory.
    allow_unverified : bool, default False
        Permit downloads of files with no sha256 in the registry.
    dtype : numpy dtype, default float64
        Dtype of the matrix values.
    max_rows : int or None
        Read only the first ``max_rows`` samples of each file (of both files with
        ``subset="both"``).

    Returns
    -------
    (X, y) or (X, y, X_test, y_test)
        CSR matrices with ``n_features`` columns (the same for both splits) and labels
        in {-1.0, +1.0} (the registry's positive raw label becomes +1).

    Raises
    ------
    ValueError
        Unknown name or subset, or a subset the set does not have.
    FileNotFoundError
        A file is missing and ``download`` is False; the message lists where it looked.
    DataFormatError
        A file does not parse or holds labels other than the registered two.
    UnverifiedDownloadError, ChecksumError, DownloadError
        See :func:`download`.
    """
    ds = resolve(name)
    subset_files(ds, subset)
    found = find(name, subset=subset, data_home=data_home, download=download,
                 allow_unverified=allow_unverified)
    paths = list(found) if subset == "both" else [found]
    parts = load_svmlight_files(paths, n_features=ds.n_features, dtype=dtype,
                                zero_based=False, max_rows=max_rows)
    out = []
    for p, X, y in zip(paths, parts[0::2], parts[1::2]):
        out.extend([X, _map_labels(ds, y, p)])
    return tuple(out)
