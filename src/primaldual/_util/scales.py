"""The spread of the features' scales: what makes SDCA's rate hopeless on
unscaled data (docs/estimators.md), reported, never corrected silently."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: a spread (largest over smallest column scale) above this is reported
SCALE_SPREAD_LIMIT = 100.0


def column_scales(X) -> np.ndarray:
    """max_i |x_ij| of every column (0 for an all-zero column)."""
    if sp.issparse(X):
        return np.asarray(abs(X).max(axis=0).todense()).ravel().astype(np.float64)
    X = np.asarray(X)
    if X.shape[0] == 0:
        return np.zeros(X.shape[1])
    return np.abs(X).max(axis=0).astype(np.float64)


def scale_spread_note(X, limit=SCALE_SPREAD_LIMIT):
    """A sentence naming the spread of column scales and its remedy when the
    largest nonzero column scale exceeds ``limit`` times the smallest; else ''."""
    s = column_scales(X)
    nz = np.flatnonzero(s > 0)
    if nz.size < 2:
        return ""
    hi, lo = nz[np.argmax(s[nz])], nz[np.argmin(s[nz])]
    spread = float(s[hi] / s[lo])
    if not spread > limit:
        return ""
    return (f"the features' scales differ by a factor of {spread:.3g} (column {int(hi)} "
            f"reaches {float(s[hi]):.4g}, column {int(lo)} only {float(s[lo]):.4g}), which "
            f"slows every solver: scale the columns (sklearn.preprocessing.StandardScaler, "
            f"or per-feature min-max scaling as LIBSVM's svm-scale does) or the rows "
            f"(--normalize on the command line); primaldual never rescales silently")
