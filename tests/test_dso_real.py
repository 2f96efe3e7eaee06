"""DSO with its defaults on extracts of real LIBSVM sets (../shared/data; skipped
when the folder is absent): hinge and logistic reach a relative sub-optimality of
1e-3 within 200 epochs.

The reference optimum is certified twice: SDCA to a duality gap of 1e-10 (so
``P*`` is known to that accuracy), and LIBLINEAR (through scikit-learn) must agree
with it.  The extracts are the first rows of the files, as given (a9a: binary
Adult features, unnormalized rows of norm sqrt(14); phishing: unit-norm rows).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import primaldual
from primaldual.problem import Problem

from conftest import load_binary

#: (file, n_features, rows, lam * n)
EXTRACTS = [("a9a", 123, 3000, 5.0), ("phishing", 68, 3000, 1.0)]


def liblinear_primal(X, y, loss, lam):
    """P(w) of LIBLINEAR's solution (dual CD for hinge, liblinear for logistic)."""
    from sklearn.svm import LinearSVC
    from sklearn.linear_model import LogisticRegression
    C = 1.0 / (lam * X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if loss == "hinge":
            m = LinearSVC(loss="hinge", dual=True, C=C, fit_intercept=False, tol=1e-10,
                          max_iter=200_000).fit(X, y)
        else:
            m = LogisticRegression(C=C, solver="liblinear", fit_intercept=False, tol=1e-10,
                                   max_iter=10_000).fit(X, y)
    return Problem(X, y, loss=loss, lam=lam).primal(m.coef_.ravel())


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
@pytest.mark.parametrize("name,d,rows,lam_n", EXTRACTS)
def test_defaults_reach_1e_3_within_200_epochs(name, d, rows, lam_n, loss):
    X, y = load_binary(name, n_features=d, max_rows=rows)
    lam = lam_n / X.shape[0]
    ref = primaldual.solve(X, y, loss=loss, lam=lam, solver="sdca", tol=1e-10,
                           max_epochs=5000)
    assert ref.rel_gap <= 1e-10
    p_star = ref.primal
    assert liblinear_primal(X, y, loss, lam) == pytest.approx(p_star, rel=1e-6)
    res = primaldual.solve(X, y, loss=loss, lam=lam, solver="dso", tol=0.0,
                           max_epochs=200, check_every=50, random_state=0)
    assert res.n_epochs <= 200
    sub = (res.primal - p_star) / p_star
    assert -1e-9 <= sub <= 1e-3, f"{name} {loss}: relative sub-optimality {sub:.2e}"
    assert res.dual <= p_star * (1 + 1e-9)                  # a certified lower bound
    assert res.primal == pytest.approx(Problem(X, y, loss=loss, lam=lam).primal(res.coef),
                                       rel=1e-12)
