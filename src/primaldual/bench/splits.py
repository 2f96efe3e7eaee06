"""Cutting and scaling the benchmark data sets (:class:`~.config.DatasetSpec`).

Every file is read by :mod:`primaldual.datasets` (its lookup order, parser,
errors and label mapping); this module only cuts, holds out and scales:

- registry sets come from :func:`primaldual.datasets.load`; with
  ``subsample="head"`` only the first ``n`` samples of the file are parsed
  (``max_rows``), so a subset of a large file costs little; otherwise the whole
  file is read with ``parsed_cache=True`` (the loader keeps its parse as ``.npz``
  in ``<cache>/parsed/``, keyed by the file's size and modification time), then
  ``n`` rows are drawn with ``seed``;
- ``file:PATH`` is parsed by :func:`primaldual.datasets.load_svmlight`; its
  larger label becomes +1;
- synthetic sets are generated with :func:`primaldual.datasets.make_synthetic`
  (``synthetic:SHAPE``) or :func:`primaldual.datasets.make_planted_text`
  (``planted:SHAPE``) as ``n + n_test`` rows from one planted model, the first
  ``n`` for training;
- ``sklearn:NAME`` reads a set bundled inside scikit-learn (no download);
  multi-class sets become "first class vs rest";
- when a set has no test split, ``test_fraction`` (or ``n_test`` rows) is held
  out at random with ``seed``.

Scaling is fitted on the training rows only and applied to both splits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .. import datasets
from .._util import encode_pm1, make_rng
from .config import DatasetSpec

__all__ = ["BenchData", "load_data", "clear_memory_cache"]


@dataclass
class BenchData:
    """A training set, an optional test set, and a note on how they were made."""

    spec: DatasetSpec
    X: sp.csr_matrix
    y: np.ndarray
    X_test: sp.csr_matrix | None
    y_test: np.ndarray | None
    note: str

    @property
    def eval_set(self):
        return None if self.X_test is None else (self.X_test, self.y_test)

    def describe(self) -> dict:
        return {"dataset": self.spec.display, "n": int(self.X.shape[0]),
                "d": int(self.X.shape[1]), "nnz": int(self.X.nnz),
                "n_test": None if self.X_test is None else int(self.X_test.shape[0]),
                "note": self.note}


_MEMORY: dict = {}


def clear_memory_cache():
    """Forget data sets loaded in this process."""
    _MEMORY.clear()


def load_data(spec: DatasetSpec) -> BenchData:
    """Load (or reuse) the data of ``spec``; see the module docstring."""
    key = spec.key()
    if key not in _MEMORY:
        _MEMORY[key] = _load(spec)
    return _MEMORY[key]


# ------------------------------------------------------------------ helpers
def _csr(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


def _load_full_registry(name):
    """The whole registered set; :func:`primaldual.datasets.load` keeps its parse
    as .npz (``parsed_cache=True``), so a large file is parsed once."""
    ds = datasets.REGISTRY[name]
    subset = "both" if ds.test is not None else "train"
    out = datasets.load(name, subset=subset, download=False, parsed_cache=True)
    X, y = _csr(out[0]), np.asarray(out[1], dtype=np.float64)
    Xt, yt = (_csr(out[2]), np.asarray(out[3], dtype=np.float64)) if subset == "both" \
        else (None, None)
    return X, y, Xt, yt


def _subsample(X, y, n, rng):
    if n is None or n >= X.shape[0]:
        return X, y
    idx = np.sort(rng.choice(X.shape[0], size=n, replace=False))
    return X[idx], y[idx]


def _holdout(X, y, spec, rng):
    """Split off a test part when the set has none."""
    n_total = X.shape[0]
    if spec.n_test is not None:
        n_test = min(spec.n_test, n_total - 1)
    elif spec.test_fraction is not None:
        n_test = int(round(spec.test_fraction * n_total))
    else:
        return X, y, None, None
    if n_test <= 0:
        return X, y, None, None
    perm = rng.permutation(n_total)
    te, tr = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return X[tr], y[tr], X[te], y[te]


def _load_registry(spec, rng):
    ds = datasets.REGISTRY.get(spec.name)
    if ds is None:
        datasets.info(spec.name)           # raises a ValueError listing the names
    notes = []
    if spec.subsample == "head" and spec.n is not None:
        n_read = spec.n
        if ds.test is None and spec.test_fraction is not None:
            n_read = int(math.ceil(spec.n / (1.0 - spec.test_fraction)))
        elif ds.test is None and spec.n_test is not None:
            n_read = spec.n + spec.n_test
        X, y = datasets.load(spec.name, subset="train", download=False, max_rows=n_read)
        notes.append(f"first {X.shape[0]} rows of {ds.train.filename}")
        Xt = yt = None
        if ds.test is not None:
            Xt, yt = datasets.load(spec.name, subset="test", download=False,
                                   max_rows=spec.n_test)
            notes.append(f"test: {'first ' if spec.n_test else ''}{Xt.shape[0]} rows of "
                         f"{ds.test.filename}")
        X = _csr(X)
        Xt = None if Xt is None else _csr(Xt)
    else:
        X, y, Xt, yt = _load_full_registry(spec.name)
        if ds.test is not None and spec.n_test is not None:
            Xt, yt = _subsample(Xt, yt, spec.n_test, rng)
        if ds.test is None:
            X, y, Xt, yt = _holdout(X, y, spec, rng)
            if Xt is not None:
                notes.append(f"{Xt.shape[0]} rows held out at random (seed {spec.seed}) "
                             f"as the test set")
        if spec.n is not None and spec.n < X.shape[0]:
            notes.append(f"{spec.n} of {X.shape[0]} training rows drawn at random "
                         f"(seed {spec.seed})")
        X, y = _subsample(X, y, spec.n, rng)
        return X, y, Xt, yt, notes
    if Xt is None:
        X, y, Xt, yt = _holdout(X, y, spec, rng)
        if Xt is not None:
            notes.append(f"{Xt.shape[0]} of those rows held out at random as the test set")
    return X, y, Xt, yt, notes


def _load_synthetic(spec):
    """``synthetic:SHAPE`` (make_synthetic) or ``planted:SHAPE`` (make_planted_text):
    ``n + n_test`` rows of one draw, the first ``n`` for training."""
    if spec.source == "planted":
        shape = datasets.SYNTHETIC_SHAPES[datasets.PLANTED_TEXT_SHAPES[spec.name][0]]
        make, what = datasets.make_planted_text, "planted-text"
    else:
        shape = datasets.SYNTHETIC_SHAPES[spec.name]
        make, what = datasets.make_synthetic, "synthetic"
    n = spec.n or shape.n
    n_test = spec.n_test or 0
    X, y, _ = make(spec.name, n_samples=n + n_test, random_state=spec.seed)
    X = _csr(X)
    note = (f"{what} {spec.name} shape (seed {spec.seed}): {n} training rows"
            + (f" + {n_test} test rows from the same planted model" if n_test else ""))
    if n_test:
        return X[:n], y[:n], X[n:], y[n:], [note]
    return X, y, None, None, [note]


def _load_sklearn(spec, rng):
    import sklearn.datasets as skd
    X, y = getattr(skd, f"load_{spec.name}")(return_X_y=True)
    first = np.unique(y)[-1] if spec.name == "breast_cancer" else np.unique(y)[0]
    y = encode_pm1(y, first)
    note = (f"scikit-learn's bundled {spec.name} ({'benign' if spec.name == 'breast_cancer' else f'class {first}'}"
            f" = +1)")
    X = _csr(X)
    if spec.n_test is None and spec.test_fraction is None:
        spec_h = DatasetSpec(name=spec.name, source="sklearn", test_fraction=0.25,
                             seed=spec.seed)
    else:
        spec_h = spec
    X, y, Xt, yt = _holdout(X, y, spec_h, rng)
    X, y = _subsample(X, y, spec.n, rng)
    return X, y, Xt, yt, [note, f"{Xt.shape[0]} rows held out at random (seed {spec.seed})"]


def _load_file(spec, rng):
    path = Path(spec.name)
    X, y = datasets.load_svmlight(path)
    labels = np.unique(y)
    if labels.size != 2:
        raise ValueError(f"{path} has {labels.size} distinct labels; the benchmark needs "
                         f"a binary set")
    y = encode_pm1(y, labels[1], labels[0], source=str(path))
    X = _csr(X)
    X, y, Xt, yt = _holdout(X, y, spec, rng)
    X, y = _subsample(X, y, spec.n, rng)
    return X, y, Xt, yt, [f"{path.name} (label {labels[1]:g} = +1)"]


def _scale(X, Xt, how):
    from sklearn.preprocessing import MaxAbsScaler, normalize
    if how == "none":
        return X, Xt, "no scaling"
    note = "rows scaled to unit L2 norm"
    if how == "maxabs+unit":
        sc = MaxAbsScaler().fit(X)
        X = sc.transform(X)
        Xt = None if Xt is None else sc.transform(Xt)
        note = "features divided by their largest absolute training value, then " + note
    X = _csr(normalize(X))
    Xt = None if Xt is None else _csr(normalize(Xt))
    return X, Xt, note


def _load(spec: DatasetSpec) -> BenchData:
    rng = make_rng(spec.seed)
    if spec.source == "registry":
        X, y, Xt, yt, notes = _load_registry(spec, rng)
    elif spec.source in ("synthetic", "planted"):
        X, y, Xt, yt, notes = _load_synthetic(spec)
    elif spec.source == "sklearn":
        X, y, Xt, yt, notes = _load_sklearn(spec, rng)
    else:
        X, y, Xt, yt, notes = _load_file(spec, rng)
    X, Xt, scale_note = _scale(_csr(X), None if Xt is None else _csr(Xt), spec.scale)
    if np.unique(y).size < 2:
        raise ValueError(f"data set {spec.display} has a single class in its training "
                         f"rows; take more rows (n) or subsample='random'")
    return BenchData(spec=spec, X=X, y=np.ascontiguousarray(y, dtype=np.float64), X_test=Xt,
                     y_test=None if yt is None else np.ascontiguousarray(yt, np.float64),
                     note="; ".join(notes + [scale_note]))
