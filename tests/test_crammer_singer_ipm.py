"""The Crammer-Singer interior-point method (solvers/crammer_singer_ipm.py):
its optimum against cvxpy with Clarabel, its certificate by hand, its Newton
direction against the linearized KKT conditions, unscaled features, and
``solver="auto"``'s hand-over rule (docs/multiclass-models.md)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import primaldual
from primaldual.kernels.cs_ipm import CSIPoint, CSIStep, cs_ipm_back, cs_ipm_point, cs_ipm_rhs
from primaldual.multiclass import MulticlassProblem
from primaldual.solvers._multiclass import _time_to
from primaldual.solvers.crammer_singer_ipm import CrammerSingerIPM

from test_multiclass import _cvxpy_optimum, blobs, by_hand


def scaled_blobs(n=60, seed=3):
    """Overlapping classes whose columns span six orders of magnitude (as
    shuttle's unscaled integer features)."""
    X, y = blobs(n, 5, 4, seed=seed)
    return X * np.array([1.0, 1e3, 1e-3, 3e2, 1.0]), y


@pytest.mark.parametrize("sparse", [False, True])
def test_optimum_matches_cvxpy_and_gap_by_hand(sparse):
    X, y = blobs(60, 5, 3, seed=7, sparse=sparse)
    c = np.random.default_rng(8).integers(1, 4, 60).astype(float)
    lam = 0.02
    ref = _cvxpy_optimum(X.toarray() if sparse else X, y, lam, c, "crammer_singer")
    res = primaldual.solve(X, y, loss="crammer_singer", lam=lam, sample_weight=c,
                           solver="crammer_singer_ipm", tol=1e-9)
    assert res.converged and res.solver == "crammer_singer_ipm"
    assert abs(res.primal - ref) <= 1e-6 * abs(ref)
    assert res.dual <= ref + 1e-9 * abs(ref)
    P, D = by_hand(X, y, res.coef, res.dual_coef, lam, c, "crammer_singer")
    assert res.primal == pytest.approx(P, rel=1e-12)
    assert res.dual == pytest.approx(D, rel=1e-10, abs=1e-14)
    assert res.gap == pytest.approx(P - D, abs=1e-12) and res.gap >= 0
    # the dual point is on the simplex: e_y - alpha >= 0, rows sum to 0
    p = -res.dual_coef
    p[np.arange(60), y] += 1.0
    assert p.min() >= 0 and np.allclose(p.sum(1), 1.0, atol=1e-12)


def test_badly_scaled_features_certify_where_the_dual_method_stalls():
    X, y = scaled_blobs()
    lam = 1.0 / X.shape[0]
    ref = _cvxpy_optimum(X, y, lam, np.ones(X.shape[0]), "crammer_singer")
    res = primaldual.solve(X, y, loss="crammer_singer", lam=lam,
                           solver="crammer_singer_ipm", tol=1e-8)
    assert res.converged and res.n_epochs < 150
    assert abs(res.primal - ref) <= 1e-6 * abs(ref)
    P, D = by_hand(X, y, res.coef, res.dual_coef, lam, np.ones(X.shape[0]),
                   "crammer_singer")
    assert P - D == pytest.approx(res.gap, rel=1e-6, abs=1e-14)
    # the dual method, given as many passes as the IPM's total work in passes
    # several times over, is still far from that gap
    dual = primaldual.solve(X, y, loss="crammer_singer", lam=lam,
                            solver="crammer_singer_dual", tol=1e-8, max_epochs=2000)
    assert dual.rel_gap > 1e3 * res.rel_gap


def test_newton_direction_solves_the_linearized_kkt_conditions():
    """One direction of the reduced system (row kernels, pivoted Schur blocks,
    refinement) against the four linearized equations written out in numpy."""
    X, y = scaled_blobs(40, seed=5)
    prob = MulticlassProblem(X, y, "crammer_singer", 0.05)
    S = CrammerSingerIPM(prob, tol=1e-9, max_epochs=100, random_state=0)
    S.init_state(None)
    for _ in range(6):                         # an interior point off the start
        S._iterate()
    coef, xi, s, mu = S.coef, S.xi, S.s, S.mu
    n, K = mu.shape
    idx = np.arange(n)
    dz_of = (lambda C: (X @ C) - (X @ C)[idx, y][:, None])
    M = mu.copy()
    M[idx, y] -= mu.sum(1)
    r_w = prob.lam * coef + X.T @ M
    r_xi = mu.sum(1) - S.u
    r_s = s - xi[:, None] + S.E + dz_of(coef)
    r_c = s * mu - 0.1 * np.mean(s * mu)
    p = CSIPoint(y, s, mu, S.u, np.empty((n, K)), np.empty(n), np.empty(n, dtype=np.int64))
    cs_ipm_point(p, X @ coef, xi, np.empty((n, K)), np.empty(n), np.empty((n, K)))
    H, scale = S._matrix(p)
    # the two ways of forming the matrix (the rows' outer products times their
    # Schur blocks; K^2 class products and the rank-one rows) agree
    X2, S.X2 = S.X2, None
    H2, scale2 = S._matrix(p)
    S.X2 = X2
    assert X2 is not None
    np.testing.assert_allclose(scale2, scale, rtol=1e-10)
    np.testing.assert_allclose(H2, H, rtol=1e-9, atol=1e-9)
    R = np.empty((n, K))
    cs_ipm_rhs(p, r_s, r_c, r_xi, R)
    rhs = (-r_w - X.T @ R).ravel()
    dcoef = (scale * np.linalg.solve(H, scale * rhs)).reshape(coef.shape)
    out = CSIStep(np.empty(n), np.empty((n, K)), np.empty((n, K)))
    cs_ipm_back(p, X @ dcoef, r_s, r_c, r_xi, out)
    dM = out.dmu.copy()
    dM[idx, y] -= out.dmu.sum(1)
    scale_w = np.abs(r_w).max() + np.abs(X.T @ dM).max()
    assert np.abs(prob.lam * dcoef + X.T @ dM + r_w).max() <= 1e-8 * scale_w
    assert np.abs(out.dmu.sum(1) + r_xi).max() <= 1e-10 * S.u.max()
    e3 = out.ds - out.dxi[:, None] + dz_of(dcoef) + r_s
    assert np.abs(e3).max() <= 1e-8 * (1 + np.abs(r_s).max() + np.abs(dz_of(dcoef)).max())
    assert np.abs(mu * out.ds + s * out.dmu + r_c).max() <= 1e-10 * np.abs(r_c).max()


def test_warm_start_resume_and_errors(tmp_path):
    X, y = blobs(80, 6, 4, seed=9)
    kw = dict(loss="crammer_singer", solver="crammer_singer_ipm", tol=1e-8)
    res = primaldual.solve(X, y, lam=0.01, **kw)
    part = primaldual.solve(X, y, lam=0.01, max_epochs=5, checkpoint=tmp_path,
                            check_every=1, **kw)
    assert part.stop_reason == "max_epochs"
    full = primaldual.solve(X, y, lam=0.01, resume=tmp_path, check_every=1, **kw)
    assert full.converged and full.n_epochs == res.n_epochs
    np.testing.assert_allclose(full.coef, res.coef, rtol=1e-12, atol=1e-14)
    warm = primaldual.solve(X, y, lam=0.012, warm_start=res, **kw)
    cold = primaldual.solve(X, y, lam=0.012, **kw)
    assert warm.converged and warm.primal == pytest.approx(cold.primal, rel=1e-7)
    with pytest.raises(ValueError, match="shape"):
        primaldual.solve(X, y, lam=0.01, warm_start=np.zeros((3, 4)), **kw)
    wide = sp.random(20, 1200, density=0.01, format="csr", random_state=0)
    with pytest.raises(ValueError, match="d K <= 3,200"):
        primaldual.solve(wide, np.arange(20) % 3, lam=0.1, **kw)
    with pytest.raises(ValueError, match="does not fit loss='multinomial'"):
        primaldual.solve(X, y, loss="multinomial", lam=0.01, solver="crammer_singer_ipm")


def test_auto_certifies_unscaled_features_and_its_rate_rule():
    X, y = scaled_blobs()
    res = primaldual.solve(X, y, loss="crammer_singer", lam=1.0 / X.shape[0], tol=1e-6)
    assert res.converged and res.extras["path"][-1]["method"] == res.solver
    # the rate over the second half of the checks (1e-2 -> 1e-3 in 1 s) takes
    # 1e-3 to 1e-6 in 3 s more; no progress predicts forever
    trace = [{"time": t, "rel_gap": g} for t, g in
             [(0.0, 1.0), (1.0, 1e-1), (2.0, 1e-2), (3.0, 1e-3)]]
    assert _time_to(trace, 1e-6) == pytest.approx(3.0)
    flat = [{"time": t, "rel_gap": 0.9} for t in range(4)]
    assert _time_to(flat, 1e-6) == math.inf


def test_auto_hands_over_when_the_dual_method_reaches_its_epoch_cap(monkeypatch):
    """The dual method stopped by its epoch cap, before the IPM's predicted
    time (a fast machine), is not the answer: auto hands over to the IPM."""
    from primaldual.solvers.crammer_singer import CrammerSingerDual
    monkeypatch.setattr(CrammerSingerDual, "default_max_epochs", 3)
    X, y = scaled_blobs()
    res = primaldual.solve(X, y, loss="crammer_singer", lam=1.0 / X.shape[0], tol=1e-6)
    legs = res.extras["path"]
    assert legs[0]["method"] == "crammer_singer_dual" and legs[0]["epochs"] == 3
    assert legs[-1]["method"] == "crammer_singer_ipm" == res.solver
    assert res.converged and res.rel_gap <= 1e-6


def test_auto_goes_on_from_the_dual_point_where_the_ipm_does_not_fit(monkeypatch):
    """usps.t (d K = 2,560, then beyond the IPM) stopped at the dual method's
    default epoch cap, uncertified: auto now goes on from the point reached,
    a leg of the same budget at a time, and certifies the same optimum."""
    from primaldual.solvers import _multiclass
    from primaldual.solvers.crammer_singer import CrammerSingerDual
    X, y = blobs(200, 8, 4, seed=0)
    lam = 1e-3
    ref = primaldual.solve(X, y, loss="crammer_singer", lam=lam, tol=1e-10,
                           solver="crammer_singer_dual")
    monkeypatch.setattr(_multiclass, "ipm_fits", lambda problem: False)
    monkeypatch.setattr(CrammerSingerDual, "default_max_epochs", 100)
    res = primaldual.solve(X, y, loss="crammer_singer", lam=lam, tol=1e-6)
    legs = res.extras["path"]
    assert res.converged and res.rel_gap <= 1e-6 and len(legs) >= 2
    assert all(leg["method"] == "crammer_singer_dual" for leg in legs)
    assert res.n_epochs == sum(leg["epochs"] for leg in legs) > 100
    assert ref.dual - 1e-9 <= res.primal <= ref.primal * (1 + 1e-6) + 1e-12
    # a max_epochs the caller gives is a cap: one leg, uncertified
    capped = primaldual.solve(X, y, loss="crammer_singer", lam=lam, tol=1e-6, max_epochs=100)
    assert not capped.converged and len(capped.extras["path"]) == 1


def test_auto_goes_on_with_the_dual_method_when_its_rate_beats_the_ipm(monkeypatch):
    """At its default epoch cap the dual method's rate decides: a fit it
    finishes before the IPM's predicted time goes on with it (usps.t as given,
    C = 1: 2.6e-6 after 10,000 epochs)."""
    from primaldual.solvers.crammer_singer import CrammerSingerDual
    X, y = blobs(200, 8, 4, seed=0)
    monkeypatch.setattr(CrammerSingerDual, "default_max_epochs", 200)   # 311 to 1e-6
    res = primaldual.solve(X, y, loss="crammer_singer", lam=1e-3, tol=1e-6)
    legs = res.extras["path"]
    assert res.converged and [leg["method"] for leg in legs] == ["crammer_singer_dual"] * 2


def test_the_ipm_takes_the_usps_shape():
    from primaldual.solvers.crammer_singer_ipm import ipm_fits
    rng = np.random.default_rng(0)
    prob = MulticlassProblem(rng.normal(size=(2007, 256)), rng.integers(0, 10, 2007),
                             "crammer_singer", 1.0 / 2007)
    assert ipm_fits(prob)


def test_matrix_block_by_block_equals_the_outer_products(monkeypatch):
    """Without the rows' outer products (n d^2 > OUTER_MAX_ENTRIES: usps.t) the
    Newton matrix is formed block by block: the same matrix, the same fit."""
    import primaldual.solvers.crammer_singer_ipm as ci
    X, y = scaled_blobs(80, seed=5)
    prob = MulticlassProblem(X, y, "crammer_singer", 0.01)
    s = CrammerSingerIPM(prob, tol=1e-8, max_epochs=4, random_state=0)
    res = s.run()
    n, K = prob.n, prob.K
    p = CSIPoint(prob.y, s.s, s.mu, s.u, np.empty((n, K)), np.empty(n),
                 np.empty(n, dtype=np.int64))
    cs_ipm_point(p, s.X @ s.coef, s.xi, np.empty((n, K)), np.empty(n), np.empty((n, K)))
    assert s.X2 is not None
    H1, S1 = s._matrix(p)
    s.X2 = None
    H2, S2 = s._matrix(p)
    np.testing.assert_allclose(S2, S1, rtol=1e-12)
    np.testing.assert_allclose(H2, H1, rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(ci, "OUTER_MAX_ENTRIES", 0)
    full = primaldual.solve(X, y, loss="crammer_singer", lam=0.01, tol=1e-8,
                            solver="crammer_singer_ipm")
    ref = primaldual.solve(X, y, loss="crammer_singer", lam=0.01, tol=1e-8,
                           solver="crammer_singer_ipm")
    assert res.n_epochs == 4 and full.converged
    assert full.primal == pytest.approx(ref.primal, rel=1e-8)
