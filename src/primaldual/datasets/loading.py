"""Loading a registered set: find (or download) its files, parse them, map the labels."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._util import LabelError, atomic_write, encode_pm1
from .fetch import cache_dir, find
from .registry import resolve, subset_files
from .svmlight import DataFormatError, load_svmlight_files

__all__ = ["load"]


def _map_labels(ds, y_raw, path):
    """Binary sets: the raw labels as -1/+1. Multiclass sets: the raw labels, checked
    against the registered classes. Regression sets: the targets unchanged."""
    source = f"{path} (dataset {ds.name!r})"
    if ds.task == "regression":
        return np.asarray(y_raw, dtype=np.float64)
    if ds.task == "multiclass":
        y = np.asarray(y_raw, dtype=np.float64)
        uniq = np.unique(y)
        bad = uniq[~np.isin(uniq, ds.classes)]
        if bad.size:
            shown = ", ".join(f"{v:g}" for v in bad[:10]) + (", ..." if bad.size > 10 else "")
            raise DataFormatError(f"{source}: labels [{shown}] are not among the "
                                  f"registered classes {[f'{c:g}' for c in ds.classes]}",
                                  path=path)
        return y
    try:
        return encode_pm1(y_raw, ds.positive_label, ds.negative_label, source=source)
    except LabelError as exc:
        raise DataFormatError(str(exc), path=path) from exc


def _parsed_path(ds, subset, dtype, paths, data_home):
    """The .npz of a whole parse, keyed by the files' sizes and modification times."""
    stamp = "-".join(f"{p.stat().st_size}-{int(p.stat().st_mtime)}" for p in paths)
    return (cache_dir(data_home) / "parsed"
            / f"{ds.name}-{subset}-{np.dtype(dtype).name}-{stamp}.npz")


def _read_parsed(path):
    """The tuple :func:`load` returns, from a kept parse; None when there is none."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            out = []
            for k in range(int(z["parts"])):
                out.append(sp.csr_matrix((z[f"data{k}"], z[f"indices{k}"], z[f"indptr{k}"]),
                                         shape=tuple(z[f"shape{k}"])))
                out.append(z[f"y{k}"])
        return tuple(out)
    except (OSError, ValueError, KeyError):
        return None              # unreadable or of another layout: parse again


def _write_parsed(path, out):
    payload = {"parts": np.array(len(out) // 2)}
    for k, (X, y) in enumerate(zip(out[0::2], out[1::2])):
        payload.update({f"data{k}": X.data, f"indices{k}": X.indices,
                        f"indptr{k}": X.indptr, f"shape{k}": np.array(X.shape),
                        f"y{k}": y})
    try:
        with atomic_write(path, durable=False) as fh:
            np.savez(fh, **payload)
    except OSError:
        pass                     # a read-only cache only costs a parse next time


def load(name, *, subset="train", data_home=None, download=True, allow_unverified=False,
         dtype=np.float64, max_rows=None, parsed_cache=False):
    """Load a registered LIBSVM set (binary, multiclass or regression).

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
    parsed_cache : bool, default False
        Keep the parse of the whole files (``max_rows=None``) as ``.npz`` in
        ``<cache>/parsed/``, keyed by the files' sizes and modification times,
        and reuse it: a large text file is parsed once (the benchmarks do this).

    Returns
    -------
    (X, y) or (X, y, X_test, y_test)
        CSR matrices with ``n_features`` columns (the same for both splits). Binary
        sets: labels in {-1.0, +1.0} (the registry's positive raw label becomes +1);
        multiclass sets: the raw class labels (float); regression sets: the targets.

    Raises
    ------
    ValueError
        Unknown name or subset, or a subset the set does not have.
    FileNotFoundError
        A file is missing and ``download`` is False; the message lists where it looked.
    DataFormatError
        A file does not parse, or holds labels other than the registered ones.
    UnverifiedDownloadError, ChecksumError, DownloadError
        See :func:`download`.
    """
    ds = resolve(name)
    subset_files(ds, subset)
    found = find(name, subset=subset, data_home=data_home, download=download,
                 allow_unverified=allow_unverified)
    paths = list(found) if subset == "both" else [found]
    keep = parsed_cache and max_rows is None
    if keep:
        kept_path = _parsed_path(ds, subset, dtype, paths, data_home)
        kept = _read_parsed(kept_path)
        if kept is not None:
            return kept
    parts = load_svmlight_files(paths, n_features=ds.n_features, dtype=dtype,
                                zero_based=False, max_rows=max_rows)
    out = []
    for p, X, y in zip(paths, parts[0::2], parts[1::2]):
        out.extend([X, _map_labels(ds, y, p)])
    if keep:
        _write_parsed(kept_path, out)
    return tuple(out)
