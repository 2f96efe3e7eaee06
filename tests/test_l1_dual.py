"""``l1cd``'s dual points (docs/sparse-models.md, "Dual points"): the best point
so far and celer's dual extrapolation, each an exact certificate recomputed
here in numpy."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual.datasets import make_synthetic
from primaldual.kernels.l1cd import L1Spec, clip_to_domain
from primaldual.problem import Problem
from primaldual.regpath import lam_max
from primaldual.solvers import SOLVERS, solve
from primaldual.solvers.sparse import solver as sparse_solver


def _problem(loss, div):
    X, y, _ = make_synthetic((300, 200, 0.05), random_state=0)
    X = sp.csr_matrix(X)
    return Problem(X, y, loss=loss, lam=0.0, l1=lam_max(X, y, loss, penalty="l1") / div)


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge", "squared"])
def test_clip_to_domain_matches_numpy(loss):
    """``alpha = -g / cw`` is clipped into the loss's dual domain: ``alpha y``
    in [0, 1] (logistic), ``>= 0`` (squared hinge), unchanged (squared)."""
    rng = np.random.default_rng(0)
    n = 50
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    cw = rng.random(n) + 0.1
    cw[3] = 0.0
    g = rng.standard_normal(n) * 2.0
    prob = Problem(sp.csr_matrix(np.ones((n, 1))), y, loss=loss, lam=0.0, l1=1.0)
    cols = sparse_solver.columns_and_norms(prob)[0]._replace(cw=cw)
    got = g.copy()
    clip_to_domain(L1Spec(int(prob.loss.code), float(prob.loss.param), 0.0, 1.0), cols, got)
    alpha = -g / np.where(cw > 0, cw, 1.0)
    if loss == "logistic":
        alpha = np.clip(alpha * y, 0.0, 1.0) * y
    elif loss == "squared_hinge":
        alpha = np.maximum(alpha * y, 0.0) * y
    want = np.where(cw > 0, -alpha * cw, 0.0)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0.0)
    assert np.isfinite(prob.loss.neg_conjugate(-got[cw > 0] / cw[cw > 0], y[cw > 0])).all()


@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_extrapolated_points_are_exact_and_used(monkeypatch, loss):
    """Every extrapolated point is recomputed from the ring of loss derivatives
    (``z = (U U')^{-1} 1``, ``c = z / sum z``, clipped, rescaled): in the dual
    domain, ``|v_j| <= l1`` on the features it was read on, its dual objective
    exact; at least one check keeps it; the returned certificate is exact
    and feasible on every feature."""
    prob = _problem(loss, 1000)
    real = sparse_solver.SparseCDSolver._extrapolated
    seen = []

    def recorded(self, feats):
        ring = [r.copy() for r in self._gring]
        p = real(self, feats)
        if p is not None:
            seen.append((ring, feats.copy(), p))
        return p

    monkeypatch.setattr(sparse_solver.SparseCDSolver, "_extrapolated", recorded)
    kept = []
    real_check = sparse_solver.SparseCDSolver._check

    def check(self, full=True):
        cert = real_check(self, full)
        kept.append(any(self._top is p for _, _, p in seen))
        return cert

    monkeypatch.setattr(sparse_solver.SparseCDSolver, "_check", check)
    # one Newton step a working set: many checks
    s = SOLVERS["l1cd"].create(prob, tol=1e-12, max_epochs=3000, random_state=0,
                               max_newton=1)
    res = s.run()
    assert seen and any(kept)
    cw = prob.sample_weight / prob.W
    for ring, feats, p in seen:
        R = np.stack(ring)
        U = np.diff(R, axis=0)
        z = np.linalg.solve(U @ U.T, np.ones(U.shape[0]))
        alpha = -((z / z.sum()) @ R[:-1]) / cw
        b = alpha * prob.y
        b = np.clip(b, 0.0, 1.0) if loss == "logistic" else np.maximum(b, 0.0)
        alpha = b * prob.y
        np.testing.assert_allclose(-p.g / cw, alpha, rtol=1e-9, atol=1e-12)
        alpha = -p.g / (cw * p.s)
        v = prob.X.T @ (prob.sample_weight * alpha) / prob.W
        assert np.abs(v[feats]).max() <= prob.l1 * (1 + 1e-12)
        dual = float(np.sum(cw * prob.loss.neg_conjugate(alpha, prob.y)))
        assert p.dual == pytest.approx(dual, rel=1e-12, abs=1e-15)
    c = s.certificate()
    assert np.abs(prob.X.T @ (prob.sample_weight * c.alpha) / prob.W).max() \
        <= prob.l1 * (1 + 1e-12)
    assert res.primal == pytest.approx(prob.primal(res.coef), rel=1e-12)
    assert c.dual == pytest.approx(prob.dual(c.alpha), rel=1e-12, abs=1e-15)


def test_full_checks_never_lower_the_dual():
    """Without screening every check is full: the certificate keeps the best dual
    point so far, so its dual never falls from one check to the next (the
    plain point of each ``w`` alone does: checked to happen here), and each
    certificate is exact for its pair."""
    prob = _problem("squared_hinge", 1000)
    s = SOLVERS["l1cd"].create(prob, tol=1e-12, max_epochs=3000, random_state=0,
                               screening=False, max_newton=1)
    s.init_state(None)
    duals, plains = [], []
    for _ in range(40):
        if s.done:
            break
        s.advance(1e-9, None)             # one working set, then a check
        c = s.certificate()
        duals.append(c.dual)
        plains.append(s._plain.dual)
        assert c.dual == pytest.approx(prob.dual(c.alpha), rel=1e-12, abs=1e-15)
    assert len(duals) > 5
    assert all(b >= a for a, b in zip(duals, duals[1:]))
    assert any(b < a for a, b in zip(plains, plains[1:]))


def _one_hot_standardized(seed, n=300, groups=8, levels=4):
    """Standardized one-hot columns (``StandardScaler(with_mean=False)`` on
    categorical data: each group's columns sum to a constant, so ``X`` has a
    null space) and six nearly colinear copies of columns."""
    rng = np.random.default_rng(seed)
    X = np.hstack([np.eye(levels)[rng.integers(0, levels, n)] for _ in range(groups)])
    dup = X[:, :6].copy()
    dup[rng.integers(0, n, 6), np.arange(6)] = 1 - dup[rng.integers(0, n, 6), np.arange(6)]
    X = np.hstack([X, dup])
    X = X / X.std(axis=0)
    w = rng.standard_normal(X.shape[1])
    y = np.where(X @ w + 2 * rng.standard_normal(n) > np.median(X @ w), 1.0, -1.0)
    return sp.csr_matrix(X), y


def test_standardized_one_hot_tiny_l1_certifies_with_the_defaults():
    """The defect of a1a standardized at C = 100 on a problem of 300 x 38:
    ``l1cd``'s proximal Newton stalls there (a primal stall along X's null
    space); ``auto`` hands it over to ``l1_ipm`` (tests/test_l1_ipm.py)."""
    X, y = _one_hot_standardized(3)
    n = X.shape[0]
    res = solve(X, y, loss="squared_hinge", lam=0.0, l1=1.0 / (100.0 * n), tol=1e-6,
                   random_state=0)
    assert res.converged and res.rel_gap <= 1e-6


def test_a_checkpoint_keeps_the_dual_points(tmp_path):
    """The best dual point and the extrapolation's ring are part of the state:
    a run resumed from a checkpoint taken after them ends bitwise where the
    uninterrupted run ends (screening reads the kept point, so a resumed run
    that forgot it would screen, and then step, otherwise)."""
    X, y = _one_hot_standardized(3)
    kw = dict(loss="squared_hinge", lam=0.0, l1=1.0 / (100.0 * X.shape[0]), tol=0.0,
              solver="l1cd", random_state=0, max_newton=1)     # a check a Newton step
    full = solve(X, y, max_epochs=1200, **kw)
    first = solve(X, y, max_epochs=600, checkpoint=str(tmp_path / "ck"), **kw)
    assert len(first.state.arrays["dual_ring"]) == sparse_solver.SparseCDSolver.EXTRAPOLATE
    for resumed in (solve(X, y, max_epochs=1200, resume=str(tmp_path / "ck"), **kw),
                    solve(X, y, max_epochs=1200, resume=first, **kw)):
        np.testing.assert_array_equal(resumed.coef, full.coef)
        np.testing.assert_array_equal(resumed.dual_coef, full.dual_coef)
        assert (resumed.primal, resumed.dual, resumed.n_epochs) == \
            (full.primal, full.dual, full.n_epochs)
