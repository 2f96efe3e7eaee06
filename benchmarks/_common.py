"""Helpers shared by the benchmark scripts: locating a LIBSVM file of the shared
data folder, loading it as a binary problem with unit-norm rows, and writing a
results file."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.preprocessing import normalize

from primaldual.datasets import load_svmlight, shared_data_dirs


def shared_file(fname):
    """The path of ``fname`` in the first shared/data folder holding it, or None."""
    return next((Path(d) / fname for d in shared_data_dirs()
                 if (Path(d) / fname).exists()), None)


def unit_rows_binary(path, rows=None):
    """(X, y): rows scaled to unit L2 norm, the larger label +1 and the other -1."""
    X, yr = load_svmlight(path)
    if rows:
        X, yr = X[:rows], yr[:rows]
    return normalize(X).tocsr(), np.where(yr == yr.max(), 1.0, -1.0)


def write_result(path, lines):
    """Write ``lines`` (a results file's Markdown) to ``path``, creating its folder."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")
