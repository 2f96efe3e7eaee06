"""make_planted_text: the learnable text-like sets of the SIMBA comparison."""
from __future__ import annotations

import numpy as np
import pytest

import primaldual
from primaldual.datasets import make_planted_text

SHAPE = (3000, 5000, 0.01)


def test_structure_and_labels():
    X, y, w = make_planted_text(SHAPE, random_state=3, support_size=60,
                                df_range=(0.005, 0.1), noise=0.02)
    assert X.shape == (3000, 5000) and X.has_sorted_indices
    np.testing.assert_allclose(np.sqrt(X.multiply(X).sum(axis=1)).A.ravel(), 1.0,
                               rtol=1e-12)
    assert set(np.unique(y)) == {-1.0, 1.0}
    support = np.flatnonzero(w)
    assert support.size == 60
    np.testing.assert_allclose(np.abs(w[support]), 1 / np.sqrt(60))
    assert np.sum(w > 0) == 30
    # labels are sign(X w) except the 2% flipped (ties are absent: every row has
    # at least one topic word, so a tie needs an exact cancellation)
    agree = y == np.where(X @ w > 0, 1.0, -1.0)
    assert abs((~agree).mean() - 0.02) <= 0.002
    # every row holds a topic word
    assert np.all((X[:, support] != 0).sum(axis=1).A.ravel() >= 1)
    # same seed, same data
    X2, y2, w2 = make_planted_text(SHAPE, random_state=3, support_size=60,
                                   df_range=(0.005, 0.1), noise=0.02)
    assert (X != X2).nnz == 0 and np.array_equal(y, y2) and np.array_equal(w, w2)


def test_learnable_from_few_rows():
    X, y, _ = make_planted_text(SHAPE, random_state=0, support_size=60,
                                df_range=(0.005, 0.1), noise=0.01)
    res = primaldual.solve(X[:2000], y[:2000], loss="hinge", lam=1e-4, solver="sdca",
                           tol=1e-4)
    err = np.mean(np.where(X[2000:] @ res.coef > 0, 1.0, -1.0) != y[2000:])
    assert err <= 0.05, err


def test_bad_arguments():
    with pytest.raises(ValueError, match="support_size"):
        make_planted_text(SHAPE, support_size=1)
    with pytest.raises(ValueError, match="df_range"):
        make_planted_text(SHAPE, df_range=(0.2, 0.1))
    with pytest.raises(ValueError, match="fewer than support_size"):
        make_planted_text(SHAPE, support_size=4000, df_range=(0.05, 0.06))
    with pytest.raises(ValueError, match="noise"):
        make_planted_text(SHAPE, noise=2.0)
