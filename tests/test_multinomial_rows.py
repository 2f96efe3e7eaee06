"""Multinomial Newton steps solved in the space of the rows
(:mod:`primaldual.solvers.multinomial_rows`, docs/multiclass-models.md): the
step against the Hessian formed by hand and solved densely, the fit against
cvxpy's optimum with the certificate by hand, the switch of
``newton_system="auto"`` counted on standardized word counts (news20's
mechanism at ``C = 100``), the fallback when a row solve fails, a checkpoint
resumed and the combinations refused.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
from primaldual.solvers import multinomial as mn
from primaldual.solvers.multinomial_rows import ROWS_TOL, RowSpaceSystem

from test_multiclass import _cvxpy_optimum, by_hand
from test_multinomial_trust import _counts, assert_optimum_by_hand


def _standardized(X):
    var = np.asarray(X.multiply(X).mean(0)).ravel() - np.square(np.asarray(X.mean(0)).ravel())
    return sp.csr_matrix(X.multiply(1.0 / np.sqrt(var + 1e-300)))


def _softmax(Z):
    E = np.exp(Z - Z.max(1, keepdims=True))
    return E / E.sum(1, keepdims=True)


@pytest.mark.parametrize("sparse", [False, True])
def test_row_space_step_is_the_newton_step_of_the_hessian_by_hand(sparse):
    rng = np.random.default_rng(0)
    n, d, K, lam = 30, 50, 4, 1e-4
    X = rng.normal(size=(n, d)) * rng.lognormal(0, 1.5, size=(n, 1))
    X[rng.random(X.shape) < 0.7] = 0.0
    X = sp.csr_matrix(X) if sparse else X
    Xd = X.toarray() if sparse else X
    c = rng.integers(1, 4, n).astype(float)
    W = c.sum()
    # probabilities from saturated to uniform, as along a fit
    P = _softmax(rng.normal(size=(n, K)) * rng.lognormal(0, 2, size=(n, 1)))
    g = rng.normal(size=(d, K))
    H = lam * np.eye(d * K)
    for i in range(n):
        A = np.diag(P[i]) - np.outer(P[i], P[i])
        H += c[i] / W * np.kron(np.outer(Xd[i], Xd[i]), A)     # coef (d, K) row-major
    exact = np.linalg.solve(H, -g.ravel()).reshape(d, K)
    XT = X.T.tocsr() if sparse else X.T
    s, products, converged = RowSpaceSystem(X, XT, (Xd * Xd).sum(1), P, c, W, lam).solve(g, 10 * n * K)
    assert converged and products <= n * K
    np.testing.assert_allclose(s, exact, rtol=0, atol=1e-7 * np.abs(exact).max())
    assert np.linalg.norm(H @ s.ravel() + g.ravel()) <= 1e-8 * np.linalg.norm(g)
    # a capped solve reports that it did not converge
    _, products, converged = RowSpaceSystem(X, XT, (Xd * Xd).sum(1), P, c, W, lam).solve(g, 2)
    assert products == 2 and not converged
    assert ROWS_TOL <= 1e-10


def test_rows_reach_the_cvxpy_optimum_with_an_exact_certificate():
    X, y = _counts(n=40, d=120, K=3, seed=3, scale=50.0)
    X = _standardized(X)
    c = np.random.default_rng(4).integers(1, 4, 40).astype(float)
    lam = 1e-3
    ref = _cvxpy_optimum(X.toarray(), y, lam, c, "multinomial")
    res = primaldual.solve(X, y, loss="multinomial", lam=lam, sample_weight=c, tol=1e-10,
                           solver="multinomial_newton", newton_system="rows", start="zero")
    assert res.converged and res.trace[-1]["rows_steps"] == res.trace[-1]["newton_iter"] > 0
    assert_optimum_by_hand(X, y, res, lam, c, ref)


def test_auto_switches_to_rows_after_a_long_feature_step(monkeypatch):
    # news20 standardized at C = 100 in small: rare words of value ~sqrt(n),
    # rows fewer than features.  Here a feature step takes ~10 products, not
    # news20's hundreds, so the threshold is lowered to see the switch
    X, y = _counts(n=200, d=3000, K=10)
    X = _standardized(X)
    kw = dict(loss="multinomial", lam=1.0 / (100 * 200), solver="multinomial_newton",
              tol=1e-10, start="zero")
    feat = primaldual.solve(X, y, newton_system="features", **kw)
    same = primaldual.solve(X, y, **kw)
    assert "rows_steps" not in feat.trace[-1] and same.trace[-1]["rows_steps"] == 0
    np.testing.assert_array_equal(same.coef, feat.coef)      # below ROWS_TRY: unchanged
    monkeypatch.setattr(mn, "ROWS_TRY", 5)
    auto = primaldual.solve(X, y, **kw)
    assert auto.converged and feat.converged
    t = auto.trace[-1]
    # the first steps are in the features (at W = 0 every row is active), then
    # every step is in the rows: each solve converged
    assert 0 < t["rows_steps"] < t["newton_iter"]
    assert auto.primal == pytest.approx(feat.primal, rel=1e-9)
    P, D = by_hand(X, y, auto.coef, auto.dual_coef, kw["lam"], np.ones(200), "multinomial")
    assert P - D <= 1e-10 * P


def test_a_warm_started_leg_goes_on_in_the_rows(monkeypatch):
    """solver="auto"'s legs are warm starts from the last leg's SolveResult: the
    next leg keeps the row-space state it ended with (as it keeps the trust
    radius), so its first step is in the rows, not another long feature step."""
    X, y = _counts(n=200, d=3000, K=10)
    X = _standardized(X)
    kw = dict(loss="multinomial", lam=1.0 / (100 * 200), solver="multinomial_newton",
              start="zero", check_every=1)
    monkeypatch.setattr(mn, "ROWS_TRY", 5)
    leg = primaldual.solve(X, y, tol=1e-14, max_epochs=150, **kw)
    t = leg.trace[-1]
    assert leg.stop_reason == "max_epochs" and t["rows_on"] == 1 and t["rows_steps"] > 0
    monkeypatch.setattr(mn, "ROWS_TRY", 10**9)      # no feature step would reach them
    cold = primaldual.solve(X, y, tol=1e-10, max_epochs=2000, warm_start=leg.coef, **kw)
    warm = primaldual.solve(X, y, tol=1e-10, max_epochs=2000, warm_start=leg, **kw)
    assert cold.trace[-1]["rows_steps"] == 0           # a coef alone carries no state
    assert warm.trace[-1]["rows_steps"] == warm.trace[-1]["newton_iter"] > 0
    assert warm.converged and cold.converged
    assert warm.primal == pytest.approx(cold.primal, rel=1e-9)
    P, D = by_hand(X, y, warm.coef, warm.dual_coef, kw["lam"], np.ones(200), "multinomial")
    assert P == pytest.approx(warm.primal, rel=1e-12) and P - D <= 1e-10 * P


def test_a_row_solve_that_does_not_converge_falls_back_to_the_features(monkeypatch):
    X, y = _counts(n=60, d=400, K=4, seed=1, scale=80.0)
    X = _standardized(X)
    kw = dict(loss="multinomial", lam=1e-4, solver="multinomial_newton", tol=1e-9,
              start="zero")
    ref = primaldual.solve(X, y, newton_system="features", **kw)
    monkeypatch.setattr(mn, "ROWS_CAP", 1)
    res = primaldual.solve(X, y, newton_system="rows", **kw)
    # the first row solve stops at its cap: the step is taken in the features,
    # and rows are tried again only after a feature step of twice its products
    assert res.converged and res.trace[-1]["rows_steps"] < res.trace[-1]["newton_iter"]
    assert res.primal == pytest.approx(ref.primal, rel=1e-8)


def test_row_steps_resume_from_a_checkpoint(tmp_path):
    X, y = _counts(n=80, d=600, K=4, seed=2)
    X = _standardized(X)
    kw = dict(loss="multinomial", lam=1e-4, tol=1e-10, solver="multinomial_newton",
              newton_system="rows", start="zero", check_every=1)
    once = primaldual.solve(X, y, **kw)
    part = primaldual.solve(X, y, checkpoint=tmp_path, max_epochs=100, **kw)
    assert part.stop_reason == "max_epochs" and part.trace[-1]["rows_steps"] > 0
    full = primaldual.solve(X, y, resume=tmp_path, **kw)
    n = len(part.trace)
    assert [t["rows_steps"] for t in full.trace[:n]] == [t["rows_steps"] for t in part.trace]
    # the steps go on in the rows after the cut (their state is in the file)
    assert full.trace[n]["rows_steps"] == part.trace[-1]["rows_steps"] + 1
    assert full.converged and once.converged
    assert full.primal == pytest.approx(once.primal, rel=1e-10)
    # a budget that ends before a row solve could: a feature step uses the rest
    short = primaldual.solve(X, y, max_epochs=20, **kw)
    assert short.n_epochs <= 21 and short.trace[-1]["rows_steps"] == 0


def test_rows_are_refused_on_partitions_with_the_reason():
    X, y = _counts(n=40, d=100, K=3)
    with pytest.raises(ValueError, match="newton_system='rows'.*partition"):
        primaldual.solve(X, y, loss="multinomial", lam=1e-2, solver="multinomial_newton",
                         newton_system="rows", n_partitions=2)
