"""LIBSVM files for the command line, read at the speed of the parser alone.

Every file is parsed by scikit-learn's compiled svmlight parser
(``sklearn.datasets._svmlight_format_fast``), loaded on its own: importing it
through ``sklearn.datasets`` costs 0.7 s of scikit-learn, SciPy and pandas
imports, the parse of a small file 1 ms.  A file the fast parser refuses is
read again by :func:`primaldual.datasets.load_svmlight_files`, whose error
names the file and the line.

:func:`read_files` returns :class:`Rows`: labels and the CSR triple
(``data``, ``indices``, ``indptr``) with 0-based columns, explicit zeros
dropped.  ``Rows.matrix()`` gives a dense array (density >= 0.5, no SciPy
import) or a CSR matrix.  ``n_features`` cuts columns at the model's width:
features a training file never had are ignored, as LIBLINEAR's ``predict``
ignores them.  Messages number features as the file does (1-based).
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._util.compression import open_decompressed
from .._util.lazy import lazy_attr

#: a file whose stored values fill at least this share of its n x d matrix is
#: read into a dense array (solvers run several times faster on dense rows, and
#: at this density the array takes at most 4/3 of the CSR memory)
DENSE_MIN_DENSITY = 0.5


@dataclass
class Rows:
    """One parsed LIBSVM file: labels and CSR arrays over ``n_features`` columns."""

    path: str
    y: np.ndarray
    data: np.ndarray
    indices: np.ndarray           # 0-based columns
    indptr: np.ndarray
    n_features: int
    base: int                     # the index base of the file (0 or 1)
    dropped: int = 0              # stored values beyond n_features, ignored

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.data.shape[0])

    @property
    def density(self) -> float:
        cells = self.n * self.n_features
        return self.nnz / cells if cells else 0.0

    def row_of_entry(self) -> np.ndarray:
        """The row of every stored value."""
        return np.repeat(np.arange(self.n), np.diff(self.indptr))

    def matrix(self, dense="auto"):
        """A dense float64 array (``dense`` True, or "auto" and density >= 0.5)
        or a :class:`scipy.sparse.csr_matrix`."""
        if dense is True or (dense == "auto" and self.density >= DENSE_MIN_DENSITY):
            X = np.zeros((self.n, self.n_features))
            X[self.row_of_entry(), self.indices] = self.data
            return X
        import scipy.sparse as sp
        return sp.csr_matrix((self.data, self.indices, self.indptr),
                             shape=(self.n, self.n_features))

    def scores(self, coef):
        """``X @ coef.T`` for ``coef`` (K, n_features) without building ``X``."""
        rows = self.row_of_entry()
        out = np.empty((self.n, coef.shape[0]))
        for k in range(coef.shape[0]):
            out[:, k] = np.bincount(rows, weights=self.data * coef[k, self.indices],
                                    minlength=self.n)
        return out


_PARSER = None


def _parser():
    """scikit-learn's compiled ``_load_svmlight_file``, without importing the
    ``sklearn`` package (whose ``__init__`` imports SciPy and more): the two
    extension modules are loaded from their files under their own names."""
    global _PARSER
    if _PARSER is not None:
        return _PARSER
    name = "sklearn.datasets._svmlight_format_fast"
    if name in sys.modules:
        _PARSER = sys.modules[name]._load_svmlight_file
        return _PARSER
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("scikit-learn is required to read LIBSVM files")
    root = spec.submodule_search_locations[0]
    placeholder = "sklearn" not in sys.modules
    if placeholder:        # the parent the extensions' import machinery looks up
        pkg = types.ModuleType("sklearn")
        pkg.__path__ = [root]
        sys.modules["sklearn"] = pkg
    try:
        if "sklearn._cyutility" not in sys.modules:
            _load_extension("sklearn._cyutility", root)
        module = _load_extension(name, os.path.join(root, "datasets"))
    finally:
        if placeholder:
            sys.modules.pop("sklearn", None)
    _PARSER = module._load_svmlight_file
    return _PARSER


def _load_extension(name, directory):
    stem = name.rsplit(".", 1)[1]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(directory, stem + suffix)
        if os.path.exists(path):
            break
    else:
        raise ModuleNotFoundError(f"no compiled {name} in {directory}")
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _parse(path):
    """``(y, data, indices, indptr)`` as written in ``path`` (indices unshifted)."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"{p} is a directory, not a data file; give the path "
                                f"of a LIBSVM file")
    if not p.exists():
        raise FileNotFoundError(f"data file not found: {p}")
    try:
        with open_decompressed(p) as fh:
            _, data, ind, indptr, labels, _ = _parser()(fh, np.float64, False, True,
                                                        False, 0, -1)
    except Exception:       # noqa: BLE001 -- re-raised below if the full reader passes
        # a parse error, or a damaged compressed file (EOFError, BadZipFile,
        # LZMAError, zlib.error, ...): the full reader names the file (and the
        # line) of the error as a DataFormatError
        lazy_attr("primaldual.datasets", "load_svmlight_files")([p])
        raise
    return (np.frombuffer(labels, np.float64), np.frombuffer(data, np.float64),
            np.frombuffer(ind, np.longlong).astype(np.int64), np.frombuffer(indptr, np.longlong))


def _check(path, y, data, indptr):
    if y.shape[0] == 0:
        raise ValueError(f"{path}: the file has no samples (empty input); give a LIBSVM "
                         f"file with at least one 'label index:value ...' line")
    if not np.isfinite(y).all():
        i = int(np.flatnonzero(~np.isfinite(y))[0])
        raise ValueError(f"{path}: the label of sample {i + 1} is {float(y[i])!r}; labels "
                         f"must be finite numbers, fix that line of the file")
    if not np.isfinite(data).all():
        k = int(np.flatnonzero(~np.isfinite(data))[0])
        i = int(np.searchsorted(indptr, k, side="right") - 1)
        return k, i
    return None


def read_files(paths, *, base=None, n_features=None):
    """Parse LIBSVM files into :class:`Rows` sharing one column count.

    ``base`` 0 or 1 fixes the index base; None uses scikit-learn's rule (1
    unless some file uses index 0).  ``n_features`` None: the largest column
    over all files; else every file is cut to that width (entries beyond it
    are dropped and counted in ``Rows.dropped``).
    """
    raw = []
    for path in paths:
        y, data, ind, indptr = _parse(path)
        bad = _check(path, y, data, indptr)
        if bad is not None:
            k, i = bad
            raise ValueError(f"{path}: sample {i + 1} has the value {float(data[k])!r} at "
                             f"feature {int(ind[k])}; feature values must be finite, fix "
                             f"or remove that entry")
        raw.append((path, y, data, ind, indptr))
    if base is None:
        base = 0 if any(r[3].size and r[3].min() == 0 for r in raw) else 1
    if base == 1:
        for path, y, data, ind, indptr in raw:
            if ind.size and ind.min() == 0:
                k = int(np.argmin(ind))
                i = int(np.searchsorted(indptr, k, side="right") - 1)
                raise ValueError(f"{path}: sample {i + 1} uses feature index 0, but the "
                                 f"features are numbered from 1 (as in the training "
                                 f"file); renumber the file from 1")
    width = max((int(r[3].max()) + 1 - base for r in raw if r[3].size), default=0)
    d = width if n_features is None else int(n_features)
    return [_rows(path, y, data, ind - base, indptr, d, base)
            for path, y, data, ind, indptr in raw]


def _rows(path, y, data, indices, indptr, d, base):
    keep = (data != 0) & (indices < d)
    dropped = int(np.count_nonzero((indices >= d) & (data != 0)))
    if not keep.all():
        kept = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
        indptr = kept[indptr]
        data, indices = data[keep], indices[keep]
    return Rows(str(path), np.asarray(y, dtype=np.float64), np.ascontiguousarray(data),
                np.ascontiguousarray(indices, dtype=np.int64),
                np.asarray(indptr, dtype=np.int64), d, base, dropped)
